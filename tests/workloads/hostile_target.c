/*
 * hostile_target: a process that lays traps for the profiler in the files
 * it controls, then burns CPU so that the profiler looks at them. It
 * prints "ready" once the trap is set.
 *
 *   hostile_target burn
 *       spins in its own code (run a copy of it made stripped, with a
 *       debuglink, or with a huge sparse .symtab)
 *   hostile_target jit CANARY
 *       mounts a private tmpfs over /tmp, makes /tmp/perf-<pid>.map a
 *       symlink to CANARY, and spins in anonymous executable memory,
 *       printing its address first as "jit 0x..."
 *   hostile_target cover FILE CANARY
 *       maps FILE executable, mounts a tmpfs over FILE's directory and
 *       puts a symlink to CANARY where FILE was: the maps path now leads
 *       elsewhere, though the mapping is unchanged
 *
 * jit and cover mount, so they run in a user and mount namespace of
 * their own (unshare -Urm), as any unprivileged user can.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile unsigned long sink;

static void hostile_spin(void)
{
	for (unsigned long i = 0;; i++)
		sink += i * 2654435761ul;
}

static int fail(const char *what)
{
	perror(what);
	return 1;
}

/* A jump to itself: a frame in anonymous memory that never leaves. */
static int spin_in_anonymous_memory(const char *canary)
{
#if defined(__x86_64__)
	static const unsigned char loop[] = { 0xeb, 0xfe };
#elif defined(__aarch64__)
	static const unsigned char loop[] = { 0x00, 0x00, 0x00, 0x14 };
#else
#error "no spin loop for this architecture"
#endif
	char perfmap[64];
	void (*jit)(void);
	void *code;

	if (mount("none", "/tmp", "tmpfs", 0, NULL))
		return fail("mount /tmp");
	snprintf(perfmap, sizeof(perfmap), "/tmp/perf-%d.map", (int)getpid());
	if (symlink(canary, perfmap))
		return fail("symlink");
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return fail("mmap");
	memcpy(code, loop, sizeof(loop));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return fail("mprotect");
	printf("jit %p\nready\n", code);
	fflush(stdout);
	memcpy(&jit, &code, sizeof(jit));
	jit();
	return 0;
}

static int cover(const char *file, const char *canary)
{
	char *copy = strdup(file), *dir, *base;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	void *map;

	if (fd < 0 || !copy)
		return fail(file);
	map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return fail("mmap");
	close(fd);
	dir = dirname(copy);
	if (mount("none", dir, "tmpfs", 0, NULL))
		return fail("mount");
	base = strrchr(file, '/');
	base = base ? base + 1 : (char *)file;
	if (chdir(dir) || symlink(canary, base))
		return fail("symlink");
	printf("ready\n");
	fflush(stdout);
	hostile_spin();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "burn")) {
		printf("ready\n");
		fflush(stdout);
		hostile_spin();
	}
	if (argc == 3 && !strcmp(argv[1], "jit"))
		return spin_in_anonymous_memory(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "cover"))
		return cover(argv[2], argv[3]);
	fprintf(stderr, "usage: hostile_target burn | jit CANARY | cover FILE CANARY\n");
	return 2;
}
