/*
 * procfs: reading a process's files under a proc root (contract in
 * procfs.h).
 */
#include "symbolizer/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* stat and status are a few hundred bytes to a couple of KiB. */
#define SMALL_FILE_MAX 8192

long procfs__read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (long)len;
}

static int proc_path(char *buf, size_t size, const char *proc_root, uint32_t tgid, const char *leaf)
{
	int n = snprintf(buf, size, "%s/%u/%s", proc_root, tgid, leaf);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int procfs__parse_start_time(const char *stat, uint64_t *start_time)
{
	/* Field 2 is "(comm)"; comm may hold anything, so count from its last ')'. */
	const char *p = strrchr(stat, ')');
	int field;

	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field <= 22; field++) {
		if (*p != ' ')
			return -EINVAL;
		p++;
		if (field == 22) {
			char *end;
			unsigned long long v;

			if (*p < '0' || *p > '9')
				return -EINVAL;
			errno = 0;
			v = strtoull(p, &end, 10);
			if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
				return -EINVAL;
			*start_time = v;
			return 0;
		}
		p += strcspn(p, " ");
	}
	return -EINVAL;
}

int procfs__start_time(const char *proc_root, uint32_t tgid, uint64_t *start_time)
{
	char path[PATH_MAX], buf[SMALL_FILE_MAX];
	long n;

	if (proc_path(path, sizeof(path), proc_root, tgid, "stat"))
		return -ENAMETOOLONG;
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return -ESRCH;
	if (n < 0)
		return (int)n;
	return procfs__parse_start_time(buf, start_time);
}

int procfs__comm(const char *proc_root, uint32_t tgid, char *buf, size_t size)
{
	char path[PATH_MAX];
	long n;

	if (proc_path(path, sizeof(path), proc_root, tgid, "comm"))
		return -ENAMETOOLONG;
	n = procfs__read_small(path, buf, size);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

uint32_t procfs__nspid(const char *proc_root, uint32_t tgid)
{
	char path[PATH_MAX], buf[SMALL_FILE_MAX];
	const char *line;
	uint32_t nspid = tgid;

	if (proc_path(path, sizeof(path), proc_root, tgid, "status") ||
	    procfs__read_small(path, buf, sizeof(buf)) < 0)
		return tgid;
	line = strstr(buf, "\nNSpid:");
	if (!line)
		return tgid;
	line += strlen("\nNSpid:");
	/* One number per pid namespace, outermost first: the last is the process's own. */
	for (;;) {
		char *end;
		unsigned long v;

		line += strspn(line, " \t");
		if (*line < '0' || *line > '9')
			break;
		errno = 0;
		v = strtoul(line, &end, 10);
		if (errno || v == 0 || v > UINT32_MAX)
			return tgid;
		nspid = (uint32_t)v;
		line = end;
	}
	return nspid;
}

int procfs__regular_or_close(int fd)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int procfs__open_in_root(const char *proc_root, uint32_t tgid, const char *path)
{
	char root[PATH_MAX], full[PATH_MAX];
	struct open_how how = {
		.flags = PROCFS_OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT,
	};
	int dirfd, fd, n;

	if (path[0] != '/' || proc_path(root, sizeof(root), proc_root, tgid, "root"))
		return -EINVAL;
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = (int)syscall(SYS_openat2, dirfd, path + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		/* Before Linux 5.6: plain resolution, absolute symlinks escape the root. */
		close(dirfd);
		n = snprintf(full, sizeof(full), "%s%s", root, path);
		if (n < 0 || (size_t)n >= sizeof(full))
			return -ENAMETOOLONG;
		fd = open(full, PROCFS_OPEN_FLAGS);
		return procfs__regular_or_close(fd < 0 ? -errno : fd);
	}
	if (fd < 0)
		fd = -errno;
	close(dirfd);
	return procfs__regular_or_close(fd);
}

int procfs__open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end)
{
	char path[PATH_MAX];
	int n, fd;

	n = snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", proc_root, tgid,
		     (unsigned long long)start, (unsigned long long)end);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, PROCFS_OPEN_FLAGS);
	return procfs__regular_or_close(fd < 0 ? -errno : fd);
}
