/*
 * proc: reading a process's and its threads' files under a proc root
 * (contract in proc.h).
 *
 * The status parsers look for a key only at the start of a line, within
 * len bytes: a comm ("Name:" line) of "x\nNSpid: 1" cannot exist (the
 * kernel escapes the newline), but a key in the middle of a line must not
 * count either. Numbers are plain decimal with a digit bound, so no
 * strtoul quirk (sign, leading blanks, overflow to ULONG_MAX) gets in.
 */
#include "symbolizer/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer/procmaps.h"

#include "symbolizer/lines.h"

/* A stack file line: "[<0>] " and "+0x.../0x...\n" around a name. */

/* ---- reading, bounded ---- */

/* Reads at most size bytes of fd; the count, or a negative errno. */
static long read_upto(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = read(fd, buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (long)len;
}

/* /proc files are regular files; a fixture tree's must be too. */
static int open_small(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, PROC_OPEN_FLAGS | O_NOFOLLOW);

	return proc__regular_or_close(fd < 0 ? -errno : fd);
}

long proc__read_small_at(int dirfd, const char *name, char *buf, size_t size)
{
	long len;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open_small(dirfd, name);
	if (fd < 0)
		return fd;
	len = read_upto(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return len;
	buf[len] = '\0';
	return len;
}

long proc__read_small(const char *path, char *buf, size_t size)
{
	return proc__read_small_at(AT_FDCWD, path, buf, size);
}

long proc__read_alloc_at(int dirfd, const char *name, size_t max, char **out)
{
	char *buf;
	long len;
	int fd;

	*out = NULL;
	if (max >= LONG_MAX)
		return -EINVAL;
	fd = open_small(dirfd, name);
	if (fd < 0)
		return fd;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	len = read_upto(fd, buf, max);
	close(fd);
	if (len < 0) {
		free(buf);
		return len;
	}
	buf[len] = '\0';
	*out = buf;
	return len;
}

static int process_path(char *buf, size_t size, const char *proc_root, uint32_t tgid, const char *leaf)
{
	int n = snprintf(buf, size, "%s/%u/%s", proc_root, tgid, leaf);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int thread_path(char *buf, size_t size, const char *proc_root, uint32_t tgid, uint32_t tid, const char *leaf)
{
	int n = snprintf(buf, size, "%s/%u/task/%u/%s", proc_root, tgid, tid, leaf);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

long proc__read_process_file(const char *proc_root, uint32_t tgid, const char *leaf, char *buf, size_t size)
{
	char path[PATH_MAX];

	if (process_path(path, sizeof(path), proc_root, tgid, leaf))
		return -ENAMETOOLONG;
	return proc__read_small(path, buf, size);
}

long proc__read_thread_file(const char *proc_root, uint32_t tgid, uint32_t tid, const char *leaf, char *buf,
			    size_t size)
{
	char path[PATH_MAX];

	if (thread_path(path, sizeof(path), proc_root, tgid, tid, leaf))
		return -ENAMETOOLONG;
	return proc__read_small(path, buf, size);
}

/* ---- parsers (pure) ---- */

int proc__parse_start_time(const char *stat, uint64_t *start_time)
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

char proc__parse_state(const char *stat)
{
	/* The name in parentheses is the thread's to choose: the state follows the last ')'. */
	const char *close = strrchr(stat, ')');

	return close && close[1] == ' ' ? close[2] : 0;
}

/* Finds the line starting with key; returns what follows key, with *eol its end. */
static const char *find_line(const char *text, size_t len, const char *key, const char **eol)
{
	size_t klen = strlen(key);
	const char *p = text, *stop = text + len;

	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *end = nl ? nl : stop;

		if ((size_t)(end - p) >= klen && !memcmp(p, key, klen)) {
			*eol = end;
			return p + klen;
		}
		p = nl ? nl + 1 : stop;
	}
	return NULL;
}

/*
 * Parses the blank-separated decimal numbers in [p, end) into v. Returns
 * how many (0 to max), or -1 for anything else or more than max.
 */
static int parse_numbers(const char *p, const char *end, unsigned long long *v, int max)
{
	int n = 0;

	for (;;) {
		unsigned long long x = 0;
		int digits = 0;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			return n;
		if (n == max)
			return -1;
		for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits == 19)
				return -1;
			x = x * 10 + (unsigned long long)(*p - '0');
		}
		if (!digits || (p < end && *p != ' ' && *p != '\t'))
			return -1;
		v[n++] = x;
	}
}

int proc__parse_nspid(const char *status, size_t len, uint32_t *nspid)
{
	unsigned long long ns[PROC_NSPID_MAX];
	const char *p, *eol;
	int n;

	p = find_line(status, len, "NSpid:", &eol);
	if (!p)
		return -ENOENT;
	n = parse_numbers(p, eol, ns, PROC_NSPID_MAX);
	if (n < 1)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (ns[i] == 0 || ns[i] > INT_MAX)
			return -EINVAL;
	*nspid = (uint32_t)ns[n - 1];
	return 0;
}

int proc__parse_tgid(const char *status, size_t len, uint32_t *tgid)
{
	unsigned long long v;
	const char *p, *eol;

	p = find_line(status, len, "Tgid:", &eol);
	if (!p || parse_numbers(p, eol, &v, 1) != 1 || v == 0 || v > INT_MAX)
		return -EINVAL;
	*tgid = (uint32_t)v;
	return 0;
}

int proc__parse_ids(const char *status, size_t len, uint32_t *euid, uint32_t *egid)
{
	unsigned long long u[4], g[4];
	const char *p, *eol;

	p = find_line(status, len, "Uid:", &eol);
	if (!p || parse_numbers(p, eol, u, 4) != 4 || u[1] >= UINT32_MAX)
		return -EINVAL;
	p = find_line(status, len, "Gid:", &eol);
	if (!p || parse_numbers(p, eol, g, 4) != 4 || g[1] >= UINT32_MAX)
		return -EINVAL;
	*euid = (uint32_t)u[1];
	*egid = (uint32_t)g[1];
	return 0;
}

int proc__parse_mask(const char *status, size_t len, const char *key, uint64_t *mask)
{
	const char *p, *eol, *q;
	char hex[24];
	size_t n;

	p = find_line(status, len, key, &eol);
	if (!p)
		return -EINVAL;
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	/* lines__parse_hex wants a NUL after the digits; the line must hold nothing else. */
	n = (size_t)(eol - p);
	if (n == 0 || n >= sizeof(hex))
		return -EINVAL;
	memcpy(hex, p, n);
	hex[n] = '\0';
	q = hex;
	if (lines__parse_hex(&q, 16, mask) || *q)
		return -EINVAL;
	return 0;
}

const char *proc__env_value(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *p = env, *stop = env + len;

	while (p < stop) {
		const char *nul = memchr(p, '\0', (size_t)(stop - p));
		const char *end = nul ? nul : stop;

		if ((size_t)(end - p) > nlen && !memcmp(p, name, nlen) && p[nlen] == '=') {
			*vlen = (size_t)(end - p - nlen - 1);
			return p + nlen + 1;
		}
		p = nul ? nul + 1 : stop;
	}
	return NULL;
}

uint32_t proc__parse_id(const char *name)
{
	unsigned long v = 0;
	const char *p = name;

	if (*p < '1' || *p > '9')
		return 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (uint32_t)v;
}

/* ---- a process and its threads ---- */

int proc__start_time(const char *proc_root, uint32_t tgid, uint64_t *start_time)
{
	char buf[PROC_SMALL_MAX];
	long n = proc__read_process_file(proc_root, tgid, "stat", buf, sizeof(buf));

	if (n == -ENOENT)
		return -ESRCH;
	if (n < 0)
		return (int)n;
	return proc__parse_start_time(buf, start_time);
}

static int comm_result(long n, char *buf, size_t size)
{
	if (n < 0) {
		if (size)
			buf[0] = '\0';
		return (int)n;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int proc__comm(const char *proc_root, uint32_t tgid, char *buf, size_t size)
{
	return comm_result(proc__read_process_file(proc_root, tgid, "comm", buf, size), buf, size);
}

char proc__thread_state(const char *proc_root, uint32_t tgid, uint32_t tid)
{
	char buf[PROC_SMALL_MAX];

	if (proc__read_thread_file(proc_root, tgid, tid, "stat", buf, sizeof(buf)) < 0)
		return 0;
	return proc__parse_state(buf);
}

uint32_t proc__nspid(const char *proc_root, uint32_t tgid)
{
	char buf[PROC_SMALL_MAX];
	uint32_t nspid = tgid;
	long n = proc__read_process_file(proc_root, tgid, "status", buf, sizeof(buf));

	if (n < 0 || proc__parse_nspid(buf, (size_t)n, &nspid))
		return tgid;
	return nspid;
}

static int open_ids(struct proc_ids *ids, const char *path)
{
	ids->dir = opendir(path);
	return ids->dir ? 0 : -errno;
}

int proc__open_processes(struct proc_ids *ids, const char *proc_root)
{
	return open_ids(ids, proc_root);
}

int proc__open_threads(struct proc_ids *ids, const char *proc_root, uint32_t tgid)
{
	char path[PATH_MAX];

	ids->dir = NULL;
	if (process_path(path, sizeof(path), proc_root, tgid, "task"))
		return -ENAMETOOLONG;
	return open_ids(ids, path);
}

uint32_t proc__next_id(struct proc_ids *ids)
{
	struct dirent *d;

	if (!ids->dir)
		return 0;
	while ((d = readdir(ids->dir))) {
		uint32_t id = proc__parse_id(d->d_name);

		if (id)
			return id;
	}
	return 0;
}

void proc__close_ids(struct proc_ids *ids)
{
	if (ids && ids->dir) {
		closedir(ids->dir);
		ids->dir = NULL;
	}
}

/* ---- files of a process ---- */

int proc__check_expect(int fd, const struct proc_expect *expect)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (!expect)
		return 0;
	if (expect->check_owner && st.st_uid != expect->uid && !(st.st_uid == 0 && (st.st_mode & S_IROTH)))
		return -EPERM;
	if (expect->check_identity && ((uint64_t)st.st_dev != expect->dev || (uint64_t)st.st_ino != expect->ino))
		return -ESTALE;
	return 0;
}

/*
 * Checks fd (or passes a negative errno through) and, when it is an O_PATH
 * fd, reopens the very inode checked read-only through /proc/self/fd/N,
 * whatever its name points to by now. fd is consumed.
 */
static int checked_or_close(int fd, const struct proc_expect *expect)
{
	char self[64];
	int err, flags, reopened;

	if (fd < 0)
		return fd;
	err = proc__check_expect(fd, expect);
	if (err) {
		close(fd);
		return err;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || !(flags & O_PATH))
		return fd;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	reopened = open(self, PROC_OPEN_FLAGS);
	if (reopened < 0)
		reopened = -errno;
	close(fd);
	return reopened;
}

int proc__regular_or_close(int fd)
{
	int err = checked_or_close(fd, NULL);

	return err == -ELOOP ? -EINVAL : err;
}

int proc__open_regular(const char *path)
{
	int fd = open(path, O_PATH | O_CLOEXEC);

	return proc__regular_or_close(fd < 0 ? -errno : fd);
}

static uint64_t resolve_flags(const struct proc_expect *expect)
{
	uint64_t resolve = RESOLVE_NO_MAGICLINKS;

	if (expect->follow == PROC_FOLLOW_NONE)
		resolve |= RESOLVE_NO_SYMLINKS;
	return resolve;
}

/* Before Linux 5.6 there is no openat2: plain resolution, only the last component kept from symlinks. */
static int open_without_openat2(const char *root, const char *path, const struct proc_expect *expect)
{
	char full[PATH_MAX];
	int fd, n = snprintf(full, sizeof(full), "%s%s", root, path);

	if (n < 0 || (size_t)n >= sizeof(full))
		return -ENAMETOOLONG;
	fd = open(full, O_PATH | O_CLOEXEC | (expect->follow == PROC_FOLLOW_ALL ? 0 : O_NOFOLLOW));
	return checked_or_close(fd < 0 ? -errno : fd, expect);
}

int proc__open_target(const char *proc_root, uint32_t tgid, const char *path, const struct proc_expect *expect)
{
	static const struct proc_expect none;
	char root[PATH_MAX];
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };
	int dirfd, fd;

	if (!expect)
		expect = &none;
	if (path[0] != '/')
		return -EINVAL;
	if (tgid) {
		if (process_path(root, sizeof(root), proc_root, tgid, "root"))
			return -EINVAL;
	} else {
		strcpy(root, "/");
	}
	if (expect->follow != PROC_FOLLOW_ALL)
		how.flags |= O_NOFOLLOW;
	how.resolve = resolve_flags(expect) | (tgid ? RESOLVE_IN_ROOT : 0);
	dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT && tgid ? -ESRCH : -errno;
	fd = (int)syscall(SYS_openat2, dirfd, path + 1, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		close(dirfd);
		return open_without_openat2(tgid ? root : "", path, expect);
	}
	if (fd < 0)
		fd = -errno;
	close(dirfd);
	/* O_PATH | O_NOFOLLOW opens a symlink itself; the check refuses it. */
	return checked_or_close(fd, expect);
}

int proc__open_in_root(const char *proc_root, uint32_t tgid, const char *path)
{
	struct proc_expect follow = { .follow = PROC_FOLLOW_ALL };
	int fd;

	if (!tgid)
		return -EINVAL;
	fd = proc__open_target(proc_root, tgid, path, &follow);
	return fd == -ELOOP ? -EINVAL : fd;
}

int proc__uid(const char *proc_root, uint32_t tgid, uint32_t *uid)
{
	char buf[PROC_SMALL_MAX];
	uint32_t gid;
	long n = proc__read_process_file(proc_root, tgid, "status", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return proc__parse_ids(buf, (size_t)n, uid, &gid);
}

static int map_file_name(char *buf, size_t size, uint64_t start, uint64_t end)
{
	int n = snprintf(buf, size, "map_files/%llx-%llx", (unsigned long long)start, (unsigned long long)end);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int proc__open_map_file_at(int pid_dirfd, uint64_t start, uint64_t end)
{
	char name[64];
	int fd;

	if (map_file_name(name, sizeof(name), start, end))
		return -ENAMETOOLONG;
	/* A magic link, on purpose: it leads to the mapped file itself. */
	fd = openat(pid_dirfd, name, O_PATH | O_CLOEXEC);
	return proc__regular_or_close(fd < 0 ? -errno : fd);
}

int proc__open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end)
{
	char path[PATH_MAX];
	int dirfd, fd;

	if (process_path(path, sizeof(path), proc_root, tgid, ""))
		return -ENAMETOOLONG;
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	fd = proc__open_map_file_at(dirfd, start, end);
	close(dirfd);
	return fd;
}

int proc__open_mapping(const char *proc_root, uint32_t tgid, const struct proc_mapping *m)
{
	int fd = proc__open_map_file(proc_root, tgid, m->start, m->end);

	if (fd < 0 && !m->deleted) {
		struct proc_expect same = {
			.follow = PROC_FOLLOW_NONE,
			.check_identity = 1,
			.dev = m->dev,
			.ino = m->ino,
		};

		fd = proc__open_target(proc_root, tgid, m->path, &same);
	}
	return fd;
}

int proc__open_maps_entry(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e)
{
	struct proc_mapping m = {
		.start = e->start,
		.end = e->end,
		.path = e->path,
		.deleted = e->deleted,
		.dev = (uint64_t)makedev(e->dev_major, e->dev_minor),
		.ino = e->inode,
	};

	return proc__open_mapping(proc_root, tgid, &m);
}
