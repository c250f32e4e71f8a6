/*
 * Helpers shared by the symbolizer unit tests: paths to the fixture ELF
 * files built by tests/fixtures/fixtures.mk, scratch directories, and fake
 * proc trees (<root>/<pid>/{maps,stat,comm,status,root,map_files}) that a
 * symbolizer is pointed at through symbolizer_config.proc_root.
 *
 * Everything is static inline so that each test program includes only
 * what it uses without unused-function warnings.
 */
#ifndef JBPF_TEST_SYMBOLIZER_FIXTURE_H
#define JBPF_TEST_SYMBOLIZER_FIXTURE_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer/procmaps.h"

/* Aborts the test program: a fixture that cannot be set up is a broken test. */
#define FIXTURE_CHECK(cond)                                                                    \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: fixture setup failed: %s (%s)\n", __FILE__,   \
				__LINE__, #cond, strerror(errno));                             \
			abort();                                                               \
		}                                                                              \
	} while (0)

/* Absolute path of a file in $FIXTURE_DIR (default build/fixtures). */
static inline const char *fixture_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("FIXTURE_DIR");
	char abs[PATH_MAX];

	if (!dir)
		dir = "build/fixtures";
	FIXTURE_CHECK(realpath(dir, abs) != NULL);
	FIXTURE_CHECK((size_t)snprintf(buf, size, "%s/%s", abs, name) < size);
	return buf;
}

static inline void fixture_write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	FIXTURE_CHECK(fd >= 0);
	FIXTURE_CHECK(write(fd, data, len) == (ssize_t)len);
	FIXTURE_CHECK(close(fd) == 0);
}

static inline void fixture_write_str(const char *path, const char *text)
{
	fixture_write(path, text, strlen(text));
}

/* Reads a whole (small) file into a malloc'd buffer. */
/* A fresh file /tmp/<prefix>-XXXXXX holding text; its path goes to buf. */
static inline void fixture_temp_file(char *buf, size_t size, const char *prefix, const char *text)
{
	int fd;

	snprintf(buf, size, "/tmp/%s-XXXXXX", prefix);
	fd = mkstemp(buf);
	FIXTURE_CHECK(fd >= 0);
	close(fd);
	fixture_write_str(buf, text);
}

static inline char *fixture_read(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	FIXTURE_CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	FIXTURE_CHECK(buf != NULL);
	FIXTURE_CHECK(read(fd, buf, (size_t)st.st_size) == st.st_size);
	buf[st.st_size] = '\0';
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static inline void fixture_mkdirs(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	FIXTURE_CHECK(strlen(path) < sizeof(buf));
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		FIXTURE_CHECK(mkdir(buf, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	FIXTURE_CHECK(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* A new empty scratch directory, path written into buf. */
static inline void fixture_tmpdir(char *buf, size_t size)
{
	const char *tmp = getenv("TMPDIR");

	FIXTURE_CHECK((size_t)snprintf(buf, size, "%s/jbpf-sym-XXXXXX", tmp ? tmp : "/tmp") < size);
	FIXTURE_CHECK(mkdtemp(buf) != NULL);
}

static inline int fixture_rm_entry(const char *path, const struct stat *st, int flag,
				   struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static inline void fixture_rmtree(const char *path)
{
	nftw(path, fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Creates <tree>/<pid>/ with comm, stat (start_time as field 22), status
 * (NSpid: pid nspid), maps, and root: a symlink to root_target, or a real
 * directory when root_target is NULL.
 */
static inline void fake_process(const char *tree, uint32_t pid, const char *comm,
				uint64_t start_time, uint32_t nspid, const char *maps,
				const char *root_target)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], text[512];

	FIXTURE_CHECK((size_t)snprintf(dir, sizeof(dir), "%s/%u", tree, pid) < sizeof(dir));
	fixture_mkdirs(dir);
	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/comm", dir) < sizeof(path));
	FIXTURE_CHECK((size_t)snprintf(text, sizeof(text), "%s\n", comm) < sizeof(text));
	fixture_write_str(path, text);
	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/stat", dir) < sizeof(path));
	FIXTURE_CHECK((size_t)snprintf(text, sizeof(text),
		 "%u (%s) S 1 %u %u 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %llu 0 0\n", pid, comm,
		 pid, pid, (unsigned long long)start_time) < sizeof(text));
	fixture_write_str(path, text);
	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/status", dir) < sizeof(path));
	/* The fake process is the test's own user, who owns the files it made. */
	FIXTURE_CHECK((size_t)snprintf(text, sizeof(text),
				       "Name:\t%s\nTgid:\t%u\nNSpid:\t%u\t%u\nPPid:\t1\nUid:\t%u\t%u\t%u\t%u\n"
				       "Gid:\t%u\t%u\t%u\t%u\n",
				       comm, pid, pid, nspid, getuid(), geteuid(), geteuid(), geteuid(), getgid(),
				       getegid(), getegid(), getegid()) < sizeof(text));
	fixture_write_str(path, text);
	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/maps", dir) < sizeof(path));
	fixture_write_str(path, maps);
	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/root", dir) < sizeof(path));
	if (root_target)
		FIXTURE_CHECK(symlink(root_target, path) == 0 || errno == EEXIST);
	else
		fixture_mkdirs(path);
}

/* Rewrites one file of a fake process. */
static inline void fake_process_file(const char *tree, uint32_t pid, const char *leaf,
				     const char *content)
{
	char path[PATH_MAX + 64];

	FIXTURE_CHECK((size_t)snprintf(path, sizeof(path), "%s/%u/%s", tree, pid, leaf) < sizeof(path));
	fixture_write_str(path, content);
}

/* The inode of a file, for the maps lines of fake processes. */
static inline unsigned long long fixture_inode(const char *path)
{
	struct stat st;

	FIXTURE_CHECK(stat(path, &st) == 0);
	return (unsigned long long)st.st_ino;
}

/* The device of a file as maps writes it, "MAJOR:MINOR" in hex, into buf. */
static inline const char *fixture_dev(const char *path, char *buf, size_t size)
{
	struct stat st;

	FIXTURE_CHECK(stat(path, &st) == 0);
	snprintf(buf, size, "%02x:%02x", major(st.st_dev), minor(st.st_dev));
	return buf;
}

/* A fixture library loaded into this process. */
static inline void *fixture_dlopen(const char *name)
{
	char path[PATH_MAX];
	void *handle = dlopen(fixture_path(name, path, sizeof(path)), RTLD_NOW | RTLD_LOCAL);

	if (!handle)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	FIXTURE_CHECK(handle != NULL);
	return handle;
}

/*
 * The runtime address a fixture's getter returns (the address of a static
 * function the dynamic symbol table does not name).
 */
static inline uint64_t fixture_call_getter(void *handle, const char *getter)
{
	void *(*get)(void);
	void *fn = dlsym(handle, getter);

	FIXTURE_CHECK(fn != NULL);
	memcpy(&get, &fn, sizeof(get));
	return (uint64_t)(uintptr_t)get();
}

/* This process's mapping that holds addr, its path dropped. */
static inline struct procmaps_entry fixture_own_mapping(uint64_t addr)
{
	struct procmaps_entry *entries, found = { 0 };
	size_t i, nr;

	FIXTURE_CHECK(procmaps__read("/proc/self/maps", 1, &entries, &nr) == 0);
	for (i = 0; i < nr; i++) {
		if (addr >= entries[i].start && addr < entries[i].end) {
			found = entries[i];
			entries[i].path = NULL;
		}
	}
	procmaps__free(entries, nr);
	FIXTURE_CHECK(found.end > 0);
	return found;
}

#endif /* JBPF_TEST_SYMBOLIZER_FIXTURE_H */
