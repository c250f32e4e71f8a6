/*
 * process_roots: the frame each process's stacks begin with, named from a
 * fake /proc tree (command line, cgroup, executable link) for each
 * grouping; kept per process until it runs exec or its tgid is another
 * process's.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "user/record/process_roots.h"
#include "symbolizer_fixture.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct fixture {
	char tree[PATH_MAX];
	struct symbolizer *sym;
	struct profile *profile;
};

/* A fake process with this command line (NUL-separated, len bytes) and, if given, cgroup and executable. */
static void process(struct fixture *f, uint32_t pid, const char *comm, uint64_t start, const char *cmdline,
		    size_t len, const char *cgroup, const char *exe)
{
	char path[PATH_MAX + 64];

	fake_process(f->tree, pid, comm, start, pid, "", NULL);
	snprintf(path, sizeof(path), "%s/%u/cmdline", f->tree, pid);
	fixture_write(path, cmdline, len);
	if (cgroup)
		fake_process_file(f->tree, pid, "cgroup", cgroup);
	if (exe) {
		snprintf(path, sizeof(path), "%s/%u/exe", f->tree, pid);
		unlink(path);
		assert_int_equal(symlink(exe, path), 0);
	}
}

#define CMD(s) s, sizeof(s) - 1

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct symbolizer_config config = { 0 };

	assert_non_null(f);
	fixture_tmpdir(f->tree, sizeof(f->tree));
	config.proc_root = f->tree;
	process(f, 100, "java", 1000, CMD("/usr/bin/java\0-cp\0lib/*\0com.example.Main\0--port\0008080"),
		"0::/system.slice/docker-" ID64 ".scope\n", "/usr/lib/jvm/bin/java");
	process(f, 101, "java", 1001, CMD("java\0-Xmx1g\0-jar\0/srv/billing.jar"), "0::/\n", NULL);
	process(f, 102, "python3", 1002, CMD("/usr/bin/python3\0-u\0/srv/app.py"), NULL, "/usr/bin/python3.11");
	process(f, 103, "a-very-long-nam", 1003, CMD("./a-very-long-name-server\0--fast"), NULL,
		"/opt/bin/a-very-long-name-server");
	process(f, 104, "sh", 1004, CMD("/bin/sh\0-c\0while :; do :; done"), NULL, "/usr/bin/dash");
	f->sym = symbolizer__new(&config);
	f->profile = profile__new(NULL);
	assert_non_null(f->sym);
	assert_non_null(f->profile);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	symbolizer__free(f->sym);
	profile__free(f->profile);
	fixture_rmtree(f->tree);
	free(f);
	return 0;
}

/* The name of process pid's root frame under roots. */
static const char *root(struct fixture *f, struct process_roots *roots, uint32_t pid, const char *comm)
{
	int64_t frame = process_roots__frame(roots, f->profile, f->sym, pid, comm);

	assert_true(frame >= 0);
	assert_int_equal(profile__frame_kind(f->profile, (uint32_t)frame), FRAME_KIND_PROCESS);
	return profile__frame_name(f->profile, (uint32_t)frame);
}

static void each_process_named_for_what_it_runs(void **state)
{
	struct fixture *f = *state;
	struct process_roots *roots = process_roots__new(VIEW_ROOT_PROCESS);
	struct process_parts parts;
	int64_t frame;

	assert_non_null(roots);
	assert_string_equal(root(f, roots, 100, "x"), "com.example.Main (java, pid 100, container 0123456789ab)");
	assert_string_equal(root(f, roots, 101, "x"), "billing.jar (java, pid 101)");
	assert_string_equal(root(f, roots, 102, "x"), "app.py (python3, pid 102)");
	/* comm holds 15 bytes: the executable is named in full. */
	assert_string_equal(root(f, roots, 103, "x"), "a-very-long-name-server (a-very-long-nam, pid 103)");
	/* Code on the command line names no script: the shell by its own name. */
	assert_string_equal(root(f, roots, 104, "x"), "sh (pid 104)");
	/* Gone before it was named: the sample's comm. */
	assert_string_equal(root(f, roots, 999, "gone"), "gone (pid 999)");
	/* The parts stay with the frame, the container's id whole. */
	frame = process_roots__frame(roots, f->profile, f->sym, 100, "x");
	profile__process_parts(f->profile, (uint32_t)frame, &parts);
	assert_string_equal(parts.name, "java");
	assert_string_equal(parts.program, "com.example.Main");
	assert_string_equal(parts.container, ID64);
	assert_int_equal(parts.pid, 100);
	process_roots__free(roots);
}

static void services_and_executables_merge_instances(void **state)
{
	struct fixture *f = *state;
	struct process_roots *service = process_roots__new(VIEW_ROOT_SERVICE);
	struct process_roots *executable = process_roots__new(VIEW_ROOT_EXECUTABLE);

	assert_non_null(service);
	assert_non_null(executable);
	process(f, 105, "java", 1005, CMD("java\0com.example.Main"), NULL, NULL);
	assert_string_equal(root(f, service, 100, "x"), "com.example.Main (java)");
	assert_true(process_roots__frame(service, f->profile, f->sym, 100, "x") ==
		    process_roots__frame(service, f->profile, f->sym, 105, "x"));
	assert_string_equal(root(f, service, 101, "x"), "billing.jar (java)");
	assert_string_equal(root(f, executable, 100, "x"), "java");
	assert_true(process_roots__frame(executable, f->profile, f->sym, 100, "x") ==
		    process_roots__frame(executable, f->profile, f->sym, 101, "x"));
	assert_string_equal(root(f, executable, 102, "x"), "python3");
	process_roots__free(service);
	process_roots__free(executable);
}

/* Named once: a later change of its command line shows only after exec, or as another process. */
static void named_again_after_exec_or_reuse(void **state)
{
	struct fixture *f = *state;
	struct process_roots *roots = process_roots__new(VIEW_ROOT_PROCESS);

	assert_non_null(roots);
	assert_string_equal(root(f, roots, 101, "x"), "billing.jar (java, pid 101)");
	process(f, 101, "java", 1001, CMD("java\0com.example.Other"), NULL, NULL);
	assert_string_equal(root(f, roots, 101, "x"), "billing.jar (java, pid 101)");
	process_roots__forget(roots, 101);
	assert_string_equal(root(f, roots, 101, "x"), "com.example.Other (java, pid 101)");
	/* Another process with the tgid, once the symbolizer knows it (another start time). */
	process(f, 101, "python3", 2001, CMD("python3\0job.py"), NULL, NULL);
	symbolizer__forget_process(f->sym, 101);
	assert_string_equal(root(f, roots, 101, "x"), "job.py (python3, pid 101)");
	/* A new profile: the frame is made in it. */
	profile__free(f->profile);
	f->profile = profile__new(NULL);
	assert_non_null(f->profile);
	process_roots__clear(roots);
	assert_string_equal(root(f, roots, 101, "x"), "job.py (python3, pid 101)");
	process_roots__free(roots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(each_process_named_for_what_it_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(services_and_executables_merge_instances, setup, teardown),
		cmocka_unit_test_setup_teardown(named_again_after_exec_or_reuse, setup, teardown),
	};

	return cmocka_run_group_tests_name("process roots", tests, NULL, NULL);
}
