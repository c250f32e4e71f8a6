/*
 * debuginfo: locating and validating separate debug files (search order
 * in debuginfo.h).
 *
 * Candidates come from names the target controls (its build-id, its
 * debuglink), so each is checked before use: the debuglink must be a bare
 * file name (elf.c rejects '/'), and the file found must carry the same
 * build-id or CRC. A wrong debug file would give wrong names silently,
 * which is worse than no names.
 */
#include "symbolizer/debuginfo.h"
#include "symbolizer/elf.h"
#include "symbolizer/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int debuginfo__crc32(int fd, uint32_t *crc)
{
	unsigned char buf[64 * 1024];
	uint64_t total = 0;
	uLong value = crc32(0L, Z_NULL, 0);

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)total);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		total += (uint64_t)n;
		if (total > DEBUGINFO_MAX_CRC_BYTES)
			return -EFBIG;
		value = crc32(value, buf, (uInt)n);
	}
	*crc = (uint32_t)value;
	return 0;
}

/*
 * Opens path inside the process root when asked and tgid is set, else on
 * the host; symlinks only where follow says (see debuginfo.h).
 */
static int open_candidate(const struct debuginfo_where *where, int in_root, int follow, const char *path)
{
	struct proc_expect expect = {
		.follow = follow ? PROC_FOLLOW_ALL : PROC_FOLLOW_NONE,
		.check_owner = 1,
		.uid = where->uid,
	};

	return proc__open_target(where->proc_root, in_root ? where->tgid : 0, path, &expect);
}

static int is_self(const struct debuginfo_where *where, int fd)
{
	struct stat st;

	if (!where->self || fstat(fd, &st))
		return 0;
	return st.st_dev == where->self->st_dev && st.st_ino == where->self->st_ino;
}

static int same_build_id(const struct elf_image *a, const struct elf_image *b)
{
	return a->build_id_len == b->build_id_len && !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/* Returns fd when the candidate at path is the debug file of img, else -ENOENT. */
static int try_build_id(const struct debuginfo_where *where, int in_root, const char *path,
			const struct elf_image *img)
{
	struct elf_image candidate;
	int fd = open_candidate(where, in_root, 1, path);

	if (fd < 0)
		return -ENOENT;
	if (is_self(where, fd) || elf__read_fd(fd, &candidate, NULL) || !same_build_id(img, &candidate)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int try_debuglink(const struct debuginfo_where *where, int in_root, int follow, const char *path,
			 const struct elf_image *img)
{
	struct elf_image candidate;
	uint32_t crc;
	int fd = open_candidate(where, in_root, follow, path);

	if (fd < 0)
		return -ENOENT;
	if (is_self(where, fd) || debuginfo__crc32(fd, &crc) || crc != img->debuglink_crc ||
	    elf__read_fd(fd, &candidate, NULL) ||
	    (img->build_id_len && candidate.build_id_len && !same_build_id(img, &candidate))) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int by_build_id(const struct debuginfo_where *where, const struct elf_image *img)
{
	char path[PATH_MAX], hex[2 * ELF_MAX_BUILD_ID + 1];
	size_t i;
	int in_root, n, fd;

	if (img->build_id_len < 2)
		return -ENOENT;
	for (i = 0; i < img->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);
	n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", where->debug_root, hex,
		     hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENOENT;
	for (in_root = 1; in_root >= 0; in_root--) {
		fd = try_build_id(where, in_root, path, img);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

static int by_debuglink(const struct debuginfo_where *where, const struct elf_image *img)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash;
	size_t dir_len;
	int fd, n, i;

	if (!img->debuglink[0] || !where->path || where->path[0] != '/')
		return -ENOENT;
	slash = strrchr(where->path, '/');
	dir_len = (size_t)(slash - where->path);
	if (dir_len >= sizeof(dir))
		return -ENOENT;
	memcpy(dir, where->path, dir_len);
	dir[dir_len] = '\0';

	/* i: 0 <dir>/<link>, 1 <dir>/.debug/<link>, 2 and 3 <debug_root><dir>/<link>. */
	for (i = 0; i < 4; i++) {
		if (i == 0)
			n = snprintf(path, sizeof(path), "%s/%s", dir, img->debuglink);
		else if (i == 1)
			n = snprintf(path, sizeof(path), "%s/.debug/%s", dir, img->debuglink);
		else
			n = snprintf(path, sizeof(path), "%s%s/%s", where->debug_root, dir,
				     img->debuglink);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		fd = try_debuglink(where, i != 3, i >= 2, path, img);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int debuginfo__open(const struct debuginfo_where *where, const struct elf_image *img)
{
	int fd = by_build_id(where, img);

	if (fd < 0)
		fd = by_debuglink(where, img);
	return fd;
}
