/*
 * disk: unwind tables kept on disk by build-id (contract in disk.h).
 *
 * A file, "<digest in hex>-<d|n>.unw" (d: built with a debug file; the
 * digest is unwind_digest__file's, of the file and its debug file):
 *
 *   struct disk_header   magic, format version, row size, builder,
 *                        build-id, digest, base, end, row count, FNV-1a
 *                        checksum of the header (checksum field zero) and
 *                        the rows
 *   rows                 nr_rows struct jbpf_unwind_row, as in memory
 *
 * Named by digest, not build-id: a file that claims a build-id it does
 * not have gets a name of its own, and cannot replace the real file's
 * table. Both are in the header and compared.
 *
 * Rows are stored as this build of jbpfprof made them. DISK_VERSION is the
 * layout of this file; the builder field says which code made the rows: a
 * hash of the sources that decide them (table.c, fde.c, rule.c, their
 * headers and bpf/unwind.h), which the Makefile passes as
 * UNWIND_BUILDER_HASH, mixed with the version of libdw that read the CFI.
 * A table made by any other builder is refused (and removed), so a
 * changed builder never reads old rows, with nothing to remember to bump.
 */
#include "unwind/disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "common/fdio.h"
#include "unwind/unwind.h"

#ifndef UNWIND_BUILDER_HASH
#error "UNWIND_BUILDER_HASH: the Makefile's hash of the table builder's sources"
#endif

#define DISK_MAGIC "JBPFUNW\n"
#define DISK_VERSION 2
#define DISK_SUFFIX ".unw"
/* Files the budget pass looks at; more than this is not ours to sort out. */
#define DISK_MAX_FILES 4096

struct disk_header {
	char magic[8];
	uint32_t version;
	uint32_t row_size;
	uint64_t builder;
	uint8_t build_id[20];
	uint8_t build_id_len;
	uint8_t with_debug;
	uint8_t pad[2];
	uint8_t digest[UNWIND_DIGEST_LEN];
	uint64_t base, end, nr_rows;
	uint64_t checksum;
};
/* No padding the compiler could leave unset: the checksum covers every byte. */
_Static_assert(sizeof(struct disk_header) == 112, "disk_header has no implicit padding");

struct unwind_disk {
	int dir_fd;
	size_t max_bytes;
	uint64_t builder;   /* what made the rows this run reads and writes */
};

/* Names are "<64 hex digits>-<d|n>.unw". */
#define NAME_SIZE 80

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t checksum(const struct disk_header *hdr, const struct jbpf_unwind_row *rows)
{
	struct disk_header h = *hdr;

	h.checksum = 0;
	return fnv1a(fnv1a(0xcbf29ce484222325ull, &h, sizeof(h)), rows, hdr->nr_rows * sizeof(rows[0]));
}

static int file_name(char *buf, size_t size, const uint8_t *build_id, size_t len, const uint8_t *digest,
		     int with_debug)
{
	size_t n = 0;

	if (!len || len > sizeof(((struct disk_header *)0)->build_id) ||
	    size < 2 * UNWIND_DIGEST_LEN + sizeof("-d" DISK_SUFFIX))
		return -EINVAL;
	for (size_t i = 0; i < UNWIND_DIGEST_LEN; i++)
		n += (size_t)snprintf(buf + n, size - n, "%02x", digest[i]);
	snprintf(buf + n, size - n, "-%c%s", with_debug ? 'd' : 'n', DISK_SUFFIX);
	return 0;
}

/* This build's table builder: the hash of its sources, and the libdw it reads the CFI with. */
static uint64_t builder_id(void)
{
	uint64_t h = UNWIND_BUILDER_HASH;
	const char *libdw = dwfl_version(NULL);

	return libdw ? fnv1a(h, libdw, strlen(libdw)) : h;
}

struct unwind_disk *unwind_disk__open(const char *dir, size_t max_bytes)
{
	struct unwind_disk *disk;
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return NULL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		close(fd);
		return NULL;
	}
	disk = calloc(1, sizeof(*disk));
	if (!disk) {
		close(fd);
		return NULL;
	}
	disk->dir_fd = fd;
	disk->max_bytes = max_bytes;
	disk->builder = builder_id();
	return disk;
}

void unwind_disk__close(struct unwind_disk *disk)
{
	if (!disk)
		return;
	close(disk->dir_fd);
	free(disk);
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EBADMSG;
		done += (size_t)n;
	}
	return 0;
}

/* The header's checks, everything but the checksum, which needs the rows. */
static int header_ok(const struct unwind_disk *disk, const struct disk_header *h, const struct stat *st,
		     const uint8_t *build_id, size_t len, const uint8_t *digest, int with_debug)
{
	if (memcmp(h->magic, DISK_MAGIC, sizeof(h->magic)) || h->version != DISK_VERSION ||
	    h->row_size != sizeof(struct jbpf_unwind_row) || h->builder != disk->builder)
		return 0;
	if (h->build_id_len != len || memcmp(h->build_id, build_id, len) || h->with_debug != !!with_debug ||
	    memcmp(h->digest, digest, UNWIND_DIGEST_LEN))
		return 0;
	if (!h->nr_rows || h->nr_rows > UNWIND_DISK_MAX_ROWS || h->end < h->base)
		return 0;
	return (uint64_t)st->st_size == sizeof(*h) + h->nr_rows * sizeof(struct jbpf_unwind_row);
}

static int load_fd(const struct unwind_disk *disk, int fd, const uint8_t *build_id, size_t len,
		   const uint8_t *digest, int with_debug, struct unwind_table **out)
{
	struct disk_header h;
	struct unwind_table *t;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 || (st.st_mode & 0777) != 0600)
		return -EPERM;
	if ((size_t)st.st_size < sizeof(h))
		return -EBADMSG;
	err = read_all(fd, &h, sizeof(h));
	if (err)
		return err;
	if (!header_ok(disk, &h, &st, build_id, len, digest, with_debug))
		return -EBADMSG;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->rows = malloc(h.nr_rows * sizeof(t->rows[0])))) {
		free(t);
		return -ENOMEM;
	}
	t->base = h.base;
	t->end = h.end;
	t->nr_rows = h.nr_rows;
	err = read_all(fd, t->rows, h.nr_rows * sizeof(t->rows[0]));
	if (!err && checksum(&h, t->rows) != h.checksum)
		err = -EBADMSG;
	if (err) {
		unwind_table__free(t);
		return err;
	}
	*out = t;
	return 0;
}

int unwind_disk__load(struct unwind_disk *disk, const uint8_t *build_id, size_t build_id_len, const uint8_t *digest,
		      int with_debug, struct unwind_table **out)
{
	char name[NAME_SIZE];
	int fd, err;

	*out = NULL;
	err = file_name(name, sizeof(name), build_id, build_id_len, digest, with_debug);
	if (err)
		return err;
	fd = openat(disk->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	err = load_fd(disk, fd, build_id, build_id_len, digest, with_debug, out);
	close(fd);
	if (err && err != -ENOMEM)
		unlinkat(disk->dir_fd, name, 0);
	return err;
}

struct kept {
	char name[NAME_SIZE];
	uint64_t bytes;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

/* Removes the oldest table files until adding `bytes` keeps the directory within its budget. */
static int make_room(struct unwind_disk *disk, uint64_t bytes)
{
	struct kept *files = calloc(DISK_MAX_FILES, sizeof(*files));
	size_t n = 0, suffix = strlen(DISK_SUFFIX);
	uint64_t total = 0;
	struct dirent *d;
	DIR *dir;
	int fd = dup(disk->dir_fd);

	if (!files || fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		free(files);
		return -ENOMEM;
	}
	rewinddir(dir);
	while ((d = readdir(dir)) && n < DISK_MAX_FILES) {
		size_t len = strlen(d->d_name);
		struct stat st;

		if (len <= suffix || len >= sizeof(files[0].name) || strcmp(d->d_name + len - suffix, DISK_SUFFIX) ||
		    fstatat(disk->dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		memcpy(files[n].name, d->d_name, len + 1);
		files[n].bytes = (uint64_t)st.st_size;
		files[n].mtime = st.st_mtim;
		total += files[n].bytes;
		n++;
	}
	closedir(dir);
	qsort(files, n, sizeof(files[0]), older_first);
	for (size_t i = 0; i < n && total + bytes > disk->max_bytes; i++) {
		if (!unlinkat(disk->dir_fd, files[i].name, 0))
			total -= files[i].bytes;
	}
	free(files);
	return total + bytes > disk->max_bytes ? -ENOSPC : 0;
}

int unwind_disk__store(struct unwind_disk *disk, const uint8_t *build_id, size_t build_id_len, const uint8_t *digest,
		       int with_debug, const struct unwind_table *table)
{
	struct disk_header h = { .version = DISK_VERSION, .row_size = sizeof(struct jbpf_unwind_row),
				 .builder = disk->builder };
	uint64_t bytes = sizeof(h) + table->nr_rows * sizeof(table->rows[0]);
	char name[NAME_SIZE], tmp[NAME_SIZE + 32];
	int fd, err;

	err = file_name(name, sizeof(name), build_id, build_id_len, digest, with_debug);
	if (err)
		return err;
	if (!table->nr_rows || table->nr_rows > UNWIND_DISK_MAX_ROWS || bytes > disk->max_bytes)
		return -EFBIG;
	err = make_room(disk, bytes);
	if (err)
		return err;
	memcpy(h.magic, DISK_MAGIC, sizeof(h.magic));
	memcpy(h.build_id, build_id, build_id_len);
	h.build_id_len = (uint8_t)build_id_len;
	memcpy(h.digest, digest, UNWIND_DIGEST_LEN);
	h.with_debug = !!with_debug;
	h.base = table->base;
	h.end = table->end;
	h.nr_rows = table->nr_rows;
	h.checksum = checksum(&h, table->rows);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", name, (int)getpid());
	fd = openat(disk->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = fdio__write_all(fd, &h, sizeof(h));
	if (!err)
		err = fdio__write_all(fd, table->rows, table->nr_rows * sizeof(table->rows[0]));
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(disk->dir_fd, tmp, disk->dir_fd, name))
		err = -errno;
	if (err)
		unlinkat(disk->dir_fd, tmp, 0);
	return err;
}
