/*
 * symbolizer: the public API end to end.
 *
 *   - this very process through the real /proc: a function of the test, a
 *     libc function, the vDSO
 *   - child processes (PIE and non-PIE fixture executables) through the
 *     real /proc, before and after they exit
 *   - fake proc trees, where the maps lines are this process's own mappings
 *     of fixture libraries moved to made-up addresses, so the expected name
 *     of every address comes from dlsym, not from the code under test:
 *     bias, debug files, C++ names, name formats, deleted files through
 *     map_files, container roots, pid reuse, re-reading maps, cache bounds,
 *     hostile files.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include "symbolizer/procmaps.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer_fixture.h"

#define FAKE_PID 4242
/* Where fake processes map things: far from anything in this process. */
#define FAKE_BASE 0x100000000ull

struct fixture {
	char tree[PATH_MAX];
	char debug_root[PATH_MAX];
	struct symbolizer *sym;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	fixture_tmpdir(f->tree, sizeof(f->tree));
	fixture_path("debugroot", f->debug_root, sizeof(f->debug_root));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	symbolizer__free(f->sym);
	fixture_rmtree(f->tree);
	free(f);
	return 0;
}

static struct symbolizer *new_symbolizer(struct fixture *f, size_t max_processes, size_t max_files)
{
	struct symbolizer_config config = {
		.proc_root = f->tree,
		.debug_root = f->debug_root,
		.max_processes = max_processes,
		.max_files = max_files,
	};

	symbolizer__free(f->sym);
	f->sym = symbolizer__new(&config);
	assert_non_null(f->sym);
	return f->sym;
}

static uint64_t fixture_sym(void *handle, const char *name)
{
	void *addr = dlsym(handle, name);

	assert_non_null(addr);
	return (uint64_t)(uintptr_t)addr;
}

/*
 * A fake maps line for the file mapping that holds addr in this process,
 * moved to fake_start (same length and offset; path as given or the real
 * one; device and inode of the real file, or of the file at identity plus
 * ino_delta).
 */
static void fake_line_of(char *buf, size_t size, uint64_t addr, uint64_t fake_start, const char *path,
			 const char *identity, unsigned long long ino_delta)
{
	struct procmaps_entry m = fixture_own_mapping(addr);
	char dev[32];

	snprintf(buf, size, "%llx-%llx r-xp %08llx %s %llu %s\n", (unsigned long long)fake_start,
		 (unsigned long long)(fake_start + (m.end - m.start)), (unsigned long long)m.pgoff,
		 fixture_dev(identity ? identity : m.path, dev, sizeof(dev)),
		 (identity ? fixture_inode(identity) : (unsigned long long)m.inode) + ino_delta, path ? path : m.path);
	free(m.path);
}

static void fake_line(char *buf, size_t size, uint64_t addr, uint64_t fake_start, const char *path)
{
	fake_line_of(buf, size, addr, fake_start, path, NULL, 0);
}

/* The fake address that corresponds to our addr when its mapping is moved to fake_start. */
static uint64_t moved(uint64_t addr, uint64_t fake_start)
{
	struct procmaps_entry m = fixture_own_mapping(addr);
	uint64_t result = addr - m.start + fake_start;

	free(m.path);
	return result;
}

static void assert_user(struct symbolizer *sym, uint32_t tgid, uint64_t addr,
			enum sym_status status, const char *expected)
{
	char buf[256];

	assert_int_equal(symbolizer__user(sym, tgid, addr, buf, sizeof(buf)), status);
	assert_string_equal(buf, expected);
}

/* square, from the fake process's libplain.so at FAKE_BASE, resolves only to the file and offset. */
static void assert_plain_offset_only(struct symbolizer *sym, uint64_t square, const struct procmaps_entry *m)
{
	char expected[128];

	snprintf(expected, sizeof(expected), "libplain.so+0x%llx", (unsigned long long)(square - m->start + m->pgoff));
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_OFFSET, expected);
}

__attribute__((noinline)) static int marker_function_of_the_test(int x)
{
	return x * 5 + 3;
}

/* --- this process, real /proc --------------------------------------------- */

static void resolves_own_function_and_libc(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	uint64_t fn = (uint64_t)(uintptr_t)marker_function_of_the_test;
	uint64_t getpid_addr = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
	char buf[128];

	assert_int_equal(marker_function_of_the_test(1), 8);
	assert_user(sym, (uint32_t)getpid(), fn, SYM_FOUND, "marker_function_of_the_test");
	assert_user(sym, (uint32_t)getpid(), fn + 1, SYM_FOUND, "marker_function_of_the_test");
	assert_true(getpid_addr != 0);
	/* glibc exports getpid as a weak alias of the global __getpid; the global name wins. */
	assert_int_equal(symbolizer__user(sym, (uint32_t)getpid(), getpid_addr, buf, sizeof(buf)),
			 SYM_FOUND);
	assert_true(!strcmp(buf, "__getpid") || !strcmp(buf, "getpid"));
	assert_string_equal(symbolizer__process_name(sym, (uint32_t)getpid()), "test_symbolizer");
	symbolizer__free(sym);
}

/*
 * An ELF symbol's answer lasts until the process is forgotten, which
 * changes the generation; reading a new process does not.
 */
static void elf_answers_last_until_the_process_is_forgotten(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	uint64_t fn = (uint64_t)(uintptr_t)marker_function_of_the_test, generation;
	bool lasting = false;
	char buf[128];

	(void)state;
	assert_non_null(sym);
	generation = symbolizer__generation(sym);
	assert_int_equal(symbolizer__user_lasting(sym, (uint32_t)getpid(), fn, buf, sizeof(buf), &lasting),
			 SYM_FOUND);
	assert_string_equal(buf, "marker_function_of_the_test");
	assert_true(lasting);
	assert_true(symbolizer__generation(sym) == generation);
	/* No process has this pid: unknown, and not an answer to keep. */
	assert_int_equal(symbolizer__user_lasting(sym, 0x7ffffff0, fn, buf, sizeof(buf), &lasting), SYM_UNKNOWN);
	assert_false(lasting);
	symbolizer__forget_process(sym, (uint32_t)getpid());
	assert_true(symbolizer__generation(sym) != generation);
	symbolizer__free(sym);
}

static void resolves_the_vdso(void **state)
{
#if defined(__x86_64__)
	const char *vdso_fn = "__vdso_clock_gettime";
#elif defined(__aarch64__)
	const char *vdso_fn = "__kernel_clock_gettime";
#else
	const char *vdso_fn = NULL;
#endif
	struct fixture *f = *state;
	void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	struct procmaps_entry m;
	uint64_t addr;
	char maps[256];
	struct symbolizer *sym;

	if (!vdso || !vdso_fn)
		skip();
	addr = fixture_sym(vdso, vdso_fn);
	sym = symbolizer__new(NULL);
	assert_user(sym, (uint32_t)getpid(), addr, SYM_FOUND, vdso_fn);
	symbolizer__free(sym);

	/* Another process's vDSO is the same image at another address. */
	m = fixture_own_mapping(addr);
	assert_int_equal(m.kind, PROCMAPS_VDSO);
	snprintf(maps, sizeof(maps), "%llx-%llx r-xp 00000000 00:00 0 [vdso]\n", FAKE_BASE,
		 FAKE_BASE + (unsigned long long)(m.end - m.start));
	fake_process(f->tree, FAKE_PID, "other", 1, FAKE_PID, maps, "/");
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, addr - m.start + FAKE_BASE, SYM_FOUND, vdso_fn);
	free(m.path);
	dlclose(vdso);
}

/* --- child processes, real /proc ------------------------------------------ */

struct child {
	pid_t pid;
	int stdin_fd;
	uint64_t global_fn, static_fn;
};

static struct child spawn(const char *name)
{
	char path[PATH_MAX];
	int in[2], out[2];
	struct child c = { 0 };
	FILE *f;
	int check;
	void *g, *s;

	fixture_path(name, path, sizeof(path));
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	c.pid = fork();
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c.stdin_fd = in[1];
	f = fdopen(out[0], "r");
	assert_int_equal(fscanf(f, "%p %p %d", &g, &s, &check), 3);
	/* prog_global_work(1) = (1 + 7) * 2: the child is the program we think it is. */
	assert_int_equal(check, 16);
	fclose(f);
	c.global_fn = (uint64_t)(uintptr_t)g;
	c.static_fn = (uint64_t)(uintptr_t)s;
	return c;
}

static void reap(struct child *c)
{
	int status;

	close(c->stdin_fd);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void child_resolves_while_alive_and_after_exit(const char *name, int pie)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct symbolizer_stats stats;
	struct child c = spawn(name);

	if (!pie)
		assert_true(c.global_fn >= 0x800000 && c.global_fn < 0x900000);
	assert_int_equal(symbolizer__add_process(sym, (uint32_t)c.pid), 0);
	assert_user(sym, (uint32_t)c.pid, c.global_fn, SYM_FOUND, "prog_global_work");
	reap(&c);
	/* Gone now: the file was held open, its static function still resolves. */
	assert_user(sym, (uint32_t)c.pid, c.static_fn, SYM_FOUND, "prog_static_work");
	assert_string_equal(symbolizer__process_name(sym, (uint32_t)c.pid), name);
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.files_loaded, 1);
	assert_int_equal(stats.unknown, 0);
	symbolizer__free(sym);
}

static void pie_child_resolves_after_exit(void **state)
{
	child_resolves_while_alive_and_after_exit("prog_pie", 1);
}

static void nopie_child_resolves_after_exit(void **state)
{
	child_resolves_while_alive_and_after_exit("prog_nopie", 0);
}

static void exited_unknown_process_is_unknown(void **state)
{
	struct symbolizer *sym = symbolizer__new(NULL);
	struct child c = spawn("prog_pie");
	uint32_t pid = (uint32_t)c.pid;

	reap(&c);
	assert_int_equal(symbolizer__add_process(sym, pid), -ESRCH);
	assert_user(sym, pid, c.global_fn, SYM_UNKNOWN, "[unknown]");
	assert_null(symbolizer__process_name(sym, pid));
	symbolizer__free(sym);
}

/* --- fake proc trees -------------------------------------------------------- */

static void bias_debug_files_and_cxx_names(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so"), *vaddr = fixture_dlopen("libvaddr.so");
	void *buildid = fixture_dlopen("libbuildid.so"), *debuglink = fixture_dlopen("libdebuglink.so");
	void *dotdebug = fixture_dlopen("libdotdebug.so"), *cpp = fixture_dlopen("libcpp.so");
	struct { void *h; uint64_t base; } libs[] = {
		{ plain, FAKE_BASE }, { vaddr, FAKE_BASE + 0x1000000 }, { buildid, FAKE_BASE + 0x2000000 },
		{ debuglink, FAKE_BASE + 0x3000000 }, { dotdebug, FAKE_BASE + 0x4000000 },
		{ cpp, FAKE_BASE + 0x5000000 },
	};
	static const char *const anchors[] = { "plain_square", "vaddr_square", "buildid_square",
					       "debuglink_square", "dotdebug_square",
					       "cpp_scale_address" };
	char maps[8192] = "", line[PATH_MAX + 128];
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	size_t i;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		fake_line(line, sizeof(line), fixture_sym(libs[i].h, anchors[i]), libs[i].base, NULL);
		strcat(maps, line);
	}
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, maps, "/");
	sym = new_symbolizer(f, 0, 0);

	assert_user(sym, FAKE_PID, moved(fixture_sym(plain, "plain_cube"), libs[0].base), SYM_FOUND,
		    "plain_cube");
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(plain, "plain_hidden_address"), libs[0].base),
		    SYM_FOUND, "plain_hidden_helper");
	assert_user(sym, FAKE_PID, moved(fixture_sym(vaddr, "vaddr_cube"), libs[1].base) + 2,
		    SYM_FOUND, "vaddr_cube");
	/* Stripped: static functions are named only by the debug files. */
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(buildid, "buildid_hidden_address"), libs[2].base),
		    SYM_FOUND, "buildid_hidden_helper");
	assert_user(sym, FAKE_PID, moved(fixture_sym(buildid, "buildid_cube"), libs[2].base),
		    SYM_FOUND, "buildid_cube");
	assert_user(sym, FAKE_PID,
		    moved(fixture_call_getter(debuglink, "debuglink_hidden_address"), libs[3].base),
		    SYM_FOUND, "debuglink_hidden_helper");
	assert_user(sym, FAKE_PID,
		    moved(fixture_call_getter(dotdebug, "dotdebug_hidden_address"), libs[4].base),
		    SYM_FOUND, "dotdebug_hidden_helper");
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(cpp, "cpp_scale_address"), libs[5].base),
		    SYM_FOUND, "fixture::scale(int, double)");
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(cpp, "cpp_sides_address"), libs[5].base),
		    SYM_FOUND, "fixture::Shape::sides(int)");
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(cpp, "cpp_twice_address"), libs[5].base),
		    SYM_FOUND, "long fixture::twice<long>(long)");
	/* Demangled once, stored: the second lookup gives the same. */
	assert_user(sym, FAKE_PID, moved(fixture_call_getter(cpp, "cpp_scale_address"), libs[5].base) + 1,
		    SYM_FOUND, "fixture::scale(int, double)");

	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.processes_loaded, 1);
	assert_int_equal(stats.files_loaded, 6);
	assert_int_equal(stats.files_failed, 0);
	assert_int_equal(stats.lookups, 11);
	assert_int_equal(stats.unknown, 0);
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		dlclose(libs[i].h);
}

static void name_formats_without_symbols(void **state)
{
	struct fixture *f = *state;
	void *badcrc = fixture_dlopen("libbadcrc.so");
	uint64_t hidden = fixture_call_getter(badcrc, "badcrc_hidden_address");
	struct procmaps_entry m = fixture_own_mapping(hidden);
	char maps[3 * PATH_MAX], line[PATH_MAX + 128], expected[128];
	struct symbolizer *sym;

	fake_line(line, sizeof(line), hidden, FAKE_BASE, NULL);
	snprintf(maps, sizeof(maps),
		 "%s"
		 "200000000-200001000 rwxp 00000000 00:00 0 \n"
		 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n",
		 line);
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, maps, "/");
	sym = new_symbolizer(f, 0, 0);

	/* The debug file was refused (bad CRC): file name and file offset. */
	snprintf(expected, sizeof(expected), "libbadcrc.so+0x%llx",
		 (unsigned long long)(hidden - m.start + m.pgoff));
	assert_user(sym, FAKE_PID, moved(hidden, FAKE_BASE), SYM_OFFSET, expected);
	assert_user(sym, FAKE_PID, 0x200000010ull, SYM_OFFSET, "[anon]");
	assert_user(sym, FAKE_PID, 0xffffffffff600010ull, SYM_OFFSET, "[vsyscall]+0x10");
	assert_user(sym, FAKE_PID, 0x300000000ull, SYM_UNKNOWN, "[unknown]");
	assert_user(sym, FAKE_PID + 1, 0x200000010ull, SYM_UNKNOWN, "[unknown]");
	assert_int_equal(symbolizer__add_process(sym, FAKE_PID + 1), -ESRCH);
	free(m.path);
	dlclose(badcrc);
}

static void output_is_truncated_and_terminated(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t cube = fixture_sym(plain, "plain_cube");
	char line[PATH_MAX + 128], buf[6];
	struct symbolizer *sym;

	fake_line(line, sizeof(line), cube, FAKE_BASE, NULL);
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, line, "/");
	sym = new_symbolizer(f, 0, 0);
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(symbolizer__user(sym, FAKE_PID, moved(cube, FAKE_BASE), buf, sizeof(buf)),
			 SYM_FOUND);
	assert_string_equal(buf, "plain");
	memset(buf, 'X', sizeof(buf));
	assert_int_equal(symbolizer__user(sym, FAKE_PID, 0x10, buf, 1), SYM_UNKNOWN);
	assert_int_equal(buf[0], '\0');
	assert_int_equal(buf[1], 'X');
	assert_int_equal(symbolizer__user(sym, FAKE_PID, 0x10, NULL, 0), SYM_UNKNOWN);
	dlclose(plain);
}

/* A deleted file: the path is gone, map_files still has it. */
static void deleted_file_resolves_through_map_files(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	struct procmaps_entry m = fixture_own_mapping(square);
	char line[PATH_MAX + 128], link[PATH_MAX + 128];
	struct symbolizer *sym;

	fake_line(line, sizeof(line), square, FAKE_BASE, "/gone/libplain.so (deleted)");
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, line, "/");
	snprintf(link, sizeof(link), "%s/%d/map_files", f->tree, FAKE_PID);
	fixture_mkdirs(link);
	snprintf(link, sizeof(link), "%s/%d/map_files/%llx-%llx", f->tree, FAKE_PID, FAKE_BASE,
		 (unsigned long long)(FAKE_BASE + m.end - m.start));
	assert_int_equal(symlink(m.path, link), 0);
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	free(m.path);
	dlclose(plain);
}

/*
 * A container: the file exists only inside the process root, at a path the
 * host does not have. A file of the same path but another inode is refused.
 */
static void container_root_and_inode_check(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	struct procmaps_entry m = fixture_own_mapping(square);
	char dir[PATH_MAX + 64], copy[PATH_MAX + 128], line[PATH_MAX + 128];
	char *content;
	size_t len;
	struct symbolizer *sym;
	struct symbolizer_stats stats;

	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, "", NULL);
	snprintf(dir, sizeof(dir), "%s/%d/root/opt/app", f->tree, FAKE_PID);
	fixture_mkdirs(dir);
	snprintf(copy, sizeof(copy), "%s/libplain.so", dir);
	content = fixture_read(m.path, &len);
	fixture_write(copy, content, len);
	free(content);

	fake_line_of(line, sizeof(line), square, FAKE_BASE, "/opt/app/libplain.so", copy, 0);
	fake_process_file(f->tree, FAKE_PID, "maps", line);
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");

	/* The maps inode does not match the file at that path, and no map_files. */
	fake_line_of(line, sizeof(line), square, FAKE_BASE, "/opt/app/libplain.so", copy, 1);
	fake_process_file(f->tree, FAKE_PID, "maps", line);
	sym = new_symbolizer(f, 0, 0);
	assert_plain_offset_only(sym, square, &m);
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.files_failed, 1);
	assert_int_equal(stats.unknown, 1);
	free(m.path);
	dlclose(plain);
}

/* Maps are re-read for an unknown address, at most once a second; a new start time is a new process. */
static void rereads_maps_and_detects_pid_reuse(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so"), *vaddr = fixture_dlopen("libvaddr.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	uint64_t vsquare = fixture_sym(vaddr, "vaddr_square");
	char maps[2 * PATH_MAX + 256], line[PATH_MAX + 128];
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	struct timespec second = { 1, 50 * 1000 * 1000 };

	fake_line(maps, sizeof(maps), square, FAKE_BASE, NULL);
	fake_process(f->tree, FAKE_PID, "before", 100, FAKE_PID, maps, "/");
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");

	/* A library loaded since: not seen until a second has passed. */
	fake_line(line, sizeof(line), vsquare, FAKE_BASE + 0x1000000, NULL);
	strcat(maps, line);
	fake_process_file(f->tree, FAKE_PID, "maps", maps);
	assert_user(sym, FAKE_PID, moved(vsquare, FAKE_BASE + 0x1000000), SYM_UNKNOWN, "[unknown]");
	nanosleep(&second, NULL);
	assert_user(sym, FAKE_PID, moved(vsquare, FAKE_BASE + 0x1000000), SYM_FOUND, "vaddr_square");
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.processes_loaded, 2);
	assert_string_equal(symbolizer__process_name(sym, FAKE_PID), "before");

	/* The pid is reused by another program: its maps and name replace the old ones. */
	nanosleep(&second, NULL);
	fake_process(f->tree, FAKE_PID, "after", 200, FAKE_PID, line, "/");
	assert_int_equal(symbolizer__add_process(sym, FAKE_PID), 0);
	assert_string_equal(symbolizer__process_name(sym, FAKE_PID), "after");
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_UNKNOWN, "[unknown]");
	assert_user(sym, FAKE_PID, moved(vsquare, FAKE_BASE + 0x1000000), SYM_FOUND, "vaddr_square");
	dlclose(plain);
	dlclose(vaddr);
}

static void caches_stay_within_bounds(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so"), *vaddr = fixture_dlopen("libvaddr.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	uint64_t vsquare = fixture_sym(vaddr, "vaddr_square");
	char maps[2 * PATH_MAX + 256], line[PATH_MAX + 128];
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	int round;

	fake_line(maps, sizeof(maps), square, FAKE_BASE, NULL);
	fake_line(line, sizeof(line), vsquare, FAKE_BASE + 0x1000000, NULL);
	strcat(maps, line);
	fake_process(f->tree, FAKE_PID, "one", 1, FAKE_PID, maps, "/");
	fake_process(f->tree, FAKE_PID + 1, "two", 1, FAKE_PID + 1, maps, "/");
	sym = new_symbolizer(f, 1, 1);
	for (round = 0; round < 2; round++) {
		assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
		assert_user(sym, FAKE_PID, moved(vsquare, FAKE_BASE + 0x1000000), SYM_FOUND,
			    "vaddr_square");
		assert_user(sym, FAKE_PID + 1, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	}
	symbolizer__stats(sym, &stats);
	assert_true(stats.files_evicted >= 3);
	assert_int_equal(stats.processes_evicted, 3);
	assert_int_equal(stats.unknown, 0);
	dlclose(plain);
	dlclose(vaddr);
}

/* Garbage maps lines around one good line; a mapped file that is not ELF, or is cut short. */
/*
 * A target can put a FIFO where a file is expected: its perf map, or a
 * mapped path renamed after mmap. Opening a FIFO for reading blocks until a
 * writer comes, so a profiler that opened it plainly would hang for good.
 * The alarm turns such a hang into a failed test.
 */
/*
 * The file at the maps path has the inode maps names, but on another
 * device (a mount over its directory since): it is not the mapped file.
 */
static void same_inode_on_another_device_is_refused(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	struct procmaps_entry m = fixture_own_mapping(square);
	char dir[PATH_MAX + 64], copy[PATH_MAX + 128], line[PATH_MAX + 128], *content;
	struct symbolizer_stats stats;
	struct symbolizer *sym;
	struct stat st;
	size_t len;

	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, "", NULL);
	snprintf(dir, sizeof(dir), "%s/%d/root/opt/app", f->tree, FAKE_PID);
	fixture_mkdirs(dir);
	snprintf(copy, sizeof(copy), "%s/libplain.so", dir);
	content = fixture_read(m.path, &len);
	fixture_write(copy, content, len);
	free(content);
	assert_int_equal(stat(copy, &st), 0);
	snprintf(line, sizeof(line), "%llx-%llx r-xp %08llx %02x:%02x %llu /opt/app/libplain.so\n", FAKE_BASE,
		 (unsigned long long)(FAKE_BASE + (m.end - m.start)), (unsigned long long)m.pgoff, major(st.st_dev),
		 minor(st.st_dev) + 1, (unsigned long long)st.st_ino);
	fake_process_file(f->tree, FAKE_PID, "maps", line);
	sym = new_symbolizer(f, 0, 0);
	assert_plain_offset_only(sym, square, &m);
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.files_failed, 1);
	free(m.path);
	dlclose(plain);
}

/* Tables past the memory budget are not kept, and the loss is counted. */
static void tables_past_the_budget_are_refused(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	struct procmaps_entry m = fixture_own_mapping(square);
	struct symbolizer_config config = { .proc_root = f->tree, .debug_root = f->debug_root, .max_bytes = 256 };
	char line[PATH_MAX + 128];
	struct symbolizer_stats stats;
	struct symbolizer *sym;

	fake_line(line, sizeof(line), square, FAKE_BASE, NULL);
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, line, "/");
	sym = symbolizer__new(&config);
	assert_non_null(sym);
	assert_plain_offset_only(sym, square, &m);
	symbolizer__stats(sym, &stats);
	assert_true(stats.tables_refused >= 1);
	assert_true(stats.bytes_held <= 256);
	symbolizer__free(sym);

	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.tables_refused, 0);
	assert_true(stats.bytes_held > 0);
	free(m.path);
	dlclose(plain);
}

/* A file no lookup used between two calls is dropped, and parsed again when a sample needs it. */
static void files_unused_for_an_interval_are_forgotten(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	char line[PATH_MAX + 128];
	struct symbolizer_stats stats;
	struct symbolizer *sym;

	fake_line(line, sizeof(line), square, FAKE_BASE, NULL);
	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, line, "/");
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	/* Used since the start: kept. */
	assert_int_equal(symbolizer__forget_unused_files(sym), 0);
	symbolizer__stats(sym, &stats);
	assert_true(stats.bytes_held > 0);
	assert_int_equal(stats.files_loaded, 1);
	/* Not used since: dropped with its symbols. */
	assert_int_equal(symbolizer__forget_unused_files(sym), 1);
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.files_forgotten, 1);
	assert_int_equal(stats.bytes_held, 0);
	/* Needed again: reopened through the process and parsed again. */
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.files_loaded, 2);
	assert_int_equal(symbolizer__forget_unused_files(sym), 0);
	dlclose(plain);
}

static void fifos_do_not_hang(void **state)
{
	struct fixture *f = *state;
	char dir[PATH_MAX + 64], perfmap[PATH_MAX + 128], pipe_so[PATH_MAX + 64], maps[512], dev[32];
	struct symbolizer *sym;

	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, "", NULL);
	snprintf(dir, sizeof(dir), "%s/%d/root/tmp", f->tree, FAKE_PID);
	fixture_mkdirs(dir);
	snprintf(perfmap, sizeof(perfmap), "%s/perf-%d.map", dir, FAKE_PID);
	assert_int_equal(mkfifo(perfmap, 0600), 0);
	snprintf(pipe_so, sizeof(pipe_so), "%s/%d/root/pipe.so", f->tree, FAKE_PID);
	assert_int_equal(mkfifo(pipe_so, 0600), 0);
	snprintf(maps, sizeof(maps),
		 "200000000-200001000 r-xp 00000000 00:00 0 \n"
		 "300000000-300001000 r-xp 00000000 %s %llu /pipe.so\n",
		 fixture_dev(pipe_so, dev, sizeof(dev)), fixture_inode(pipe_so));
	fake_process_file(f->tree, FAKE_PID, "maps", maps);
	sym = new_symbolizer(f, 0, 0);
	alarm(10);
	assert_user(sym, FAKE_PID, 0x200000010ull, SYM_OFFSET, "[anon]");
	assert_user(sym, FAKE_PID, 0x300000010ull, SYM_OFFSET, "pipe.so+0x10");
	alarm(0);
}

static void hostile_maps_and_files(void **state)
{
	struct fixture *f = *state;
	void *plain = fixture_dlopen("libplain.so");
	uint64_t square = fixture_sym(plain, "plain_square");
	struct procmaps_entry m = fixture_own_mapping(square);
	char maps[3 * PATH_MAX], good[PATH_MAX + 128], junk_path[PATH_MAX + 64], cut_path[PATH_MAX + 64];
	char copy_path[PATH_MAX + 64], dev[32], dev2[32];
	char expected[128], *content;
	size_t len;
	struct symbolizer *sym;

	fake_process(f->tree, FAKE_PID, "fake", 1, FAKE_PID, "", NULL);
	snprintf(junk_path, sizeof(junk_path), "%s/%d/root/junk.so", f->tree, FAKE_PID);
	fixture_write_str(junk_path, "#!/bin/sh\necho this is not ELF\n");
	snprintf(cut_path, sizeof(cut_path), "%s/%d/root/cut.so", f->tree, FAKE_PID);
	content = fixture_read(m.path, &len);
	fixture_write(cut_path, content, 200);
	snprintf(copy_path, sizeof(copy_path), "%s/%d/root/libplain.so", f->tree, FAKE_PID);
	fixture_write(copy_path, content, len);
	free(content);

	fake_line_of(good, sizeof(good), square, FAKE_BASE, "/libplain.so", copy_path, 0);
	snprintf(maps, sizeof(maps),
		 "ffffffffffffffff-0 r-xp 0 0:0 0 /x\n"
		 "%s"
		 "absolutely not a maps line\n"
		 "300000000-300001000 r-xp 00000000 %s %llu /junk.so\n"
		 "400000000-400001000 r-xp 00001000 %s %llu /cut.so\n"
		 "500000000-500001000 r-xp 00000000 08:01 1 /does/not/exist.so\n",
		 good, fixture_dev(junk_path, dev, sizeof(dev)), fixture_inode(junk_path),
		 fixture_dev(cut_path, dev2, sizeof(dev2)), fixture_inode(cut_path));
	fake_process_file(f->tree, FAKE_PID, "maps", maps);
	sym = new_symbolizer(f, 0, 0);
	assert_user(sym, FAKE_PID, moved(square, FAKE_BASE), SYM_FOUND, "plain_square");
	assert_user(sym, FAKE_PID, 0x300000010ull, SYM_OFFSET, "junk.so+0x10");
	assert_user(sym, FAKE_PID, 0x400000010ull, SYM_OFFSET, "cut.so+0x1010");
	assert_user(sym, FAKE_PID, 0x500000010ull, SYM_OFFSET, "exist.so+0x10");
	snprintf(expected, sizeof(expected), "[unknown]");
	assert_user(sym, FAKE_PID, 0x10, SYM_UNKNOWN, expected);
	free(m.path);
	dlclose(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resolves_own_function_and_libc),
		cmocka_unit_test(elf_answers_last_until_the_process_is_forgotten),
		cmocka_unit_test_setup_teardown(resolves_the_vdso, setup, teardown),
		cmocka_unit_test(pie_child_resolves_after_exit),
		cmocka_unit_test(nopie_child_resolves_after_exit),
		cmocka_unit_test(exited_unknown_process_is_unknown),
		cmocka_unit_test_setup_teardown(bias_debug_files_and_cxx_names, setup, teardown),
		cmocka_unit_test_setup_teardown(name_formats_without_symbols, setup, teardown),
		cmocka_unit_test_setup_teardown(output_is_truncated_and_terminated, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_file_resolves_through_map_files, setup, teardown),
		cmocka_unit_test_setup_teardown(container_root_and_inode_check, setup, teardown),
		cmocka_unit_test_setup_teardown(rereads_maps_and_detects_pid_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(caches_stay_within_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_maps_and_files, setup, teardown),
		cmocka_unit_test_setup_teardown(fifos_do_not_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(same_inode_on_another_device_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(tables_past_the_budget_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(files_unused_for_an_interval_are_forgotten, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
