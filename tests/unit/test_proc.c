/*
 * proc: start time and state (with hostile comms), NSpid, Tgid, ids and
 * masks of status, comm, kernel stacks, task lists, and opening files
 * inside a process root, where absolute symlinks must stay inside and
 * nothing but a regular file is ever opened.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "symbolizer/proc.h"
#include "symbolizer_fixture.h"

static void start_time_is_field_22_whatever_the_comm(void **state)
{
	uint64_t t = 0;

	assert_int_equal(proc__parse_start_time("42 (java) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0\n", &t), 0);
	assert_true(t == 123456);
	assert_int_equal(proc__parse_start_time("42 (a) b) c (d) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0\n", &t), 0);
	assert_true(t == 777);
	assert_int_equal(proc__parse_start_time("42 (x) S 1 2 3\n", &t), -EINVAL);
	assert_int_equal(proc__parse_start_time("no parenthesis", &t), -EINVAL);
	assert_int_equal(proc__parse_start_time("42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12z 0\n", &t), -EINVAL);
}

static void nspid_comm_and_root_of_a_fake_process(void **state)
{
	char tree[PATH_MAX], path[PATH_MAX + 64], comm[PROC_COMM_LEN], buf[64];
	uint64_t t;
	int fd;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 4242, "my prog", 99, 7, "", NULL);
	assert_int_equal(proc__nspid(tree, 4242), 7);
	assert_int_equal(proc__nspid(tree, 5555), 5555);
	assert_int_equal(proc__comm(tree, 4242, comm, sizeof(comm)), 0);
	assert_string_equal(comm, "my prog");
	assert_int_equal(proc__start_time(tree, 4242, &t), 0);
	assert_true(t == 99);
	assert_int_equal(proc__start_time(tree, 5555, &t), -ESRCH);

	/* An absolute symlink in the container resolves inside the container. */
	snprintf(path, sizeof(path), "%s/4242/root/etc", tree);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/4242/root/etc/hostname", tree);
	fixture_write_str(path, "inside\n");
	snprintf(path, sizeof(path), "%s/4242/root/link", tree);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	fd = proc__open_in_root(tree, 4242, "/link");
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "inside\n", 7);
	close(fd);
	assert_true(proc__open_in_root(tree, 4242, "/missing") < 0);
	assert_int_equal(proc__open_in_root(tree, 5555, "/etc/hostname"), -ESRCH);
	assert_int_equal(proc__open_in_root(tree, 4242, "relative"), -EINVAL);
	fixture_rmtree(tree);
}

static void status_without_nspid_falls_back_to_tgid(void **state)
{
	char tree[PATH_MAX];

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 100, "x", 1, 1, "", NULL);
	fake_process_file(tree, 100, "status", "Name:\tx\nNSpid:\tgarbage\n");
	assert_int_equal(proc__nspid(tree, 100), 100);
	fake_process_file(tree, 100, "status", "Name:\tx\n");
	assert_int_equal(proc__nspid(tree, 100), 100);
	fake_process_file(tree, 100, "status", "Name:\tx\nNSpid:\t100\t99999999999\n");
	assert_int_equal(proc__nspid(tree, 100), 100);
	fixture_rmtree(tree);
}

static void state_is_the_letter_after_the_last_parenthesis(void **state)
{
	assert_int_equal(proc__parse_state("42 (java) S 1 42 42 0\n"), 'S');
	assert_int_equal(proc__parse_state("42 (a) R (b) D 1 42\n"), 'D');
	assert_int_equal(proc__parse_state("42 (x)"), 0);
	assert_int_equal(proc__parse_state("42 (x)y Z"), 0);
	assert_int_equal(proc__parse_state("no parenthesis"), 0);
}

static void nspid_is_the_innermost_of_well_formed_numbers(void **state)
{
	static const char status[] = "Name:\tjava\nTgid:\t4242\nNSpid:\t4242\t17\t1\nPPid:\t1\n";
	char many[512];
	uint32_t ns = 77;
	size_t n;

	assert_int_equal(proc__parse_nspid(status, sizeof(status) - 1, &ns), 0);
	assert_int_equal(ns, 1);
	assert_int_equal(proc__parse_nspid("NSpid:\t5002 \t 8", 15, &ns), 0);
	assert_int_equal(ns, 8);
	/* No line: the kernel predates NSpid. A malformed one says nothing. */
	ns = 77;
	assert_int_equal(proc__parse_nspid("Name:\tx\n", 8, &ns), -ENOENT);
	assert_int_equal(proc__parse_nspid("Name:\tNSpid: 5\n", 15, &ns), -ENOENT);
	assert_int_equal(proc__parse_nspid("NSpid:\n", 7, &ns), -EINVAL);
	assert_int_equal(proc__parse_nspid("NSpid:\t5 x\n", 11, &ns), -EINVAL);
	assert_int_equal(proc__parse_nspid("NSpid:\t0\n", 9, &ns), -EINVAL);
	assert_int_equal(proc__parse_nspid("NSpid:\t-5\n", 10, &ns), -EINVAL);
	assert_int_equal(proc__parse_nspid("NSpid:\t2147483648\n", 18, &ns), -EINVAL);
	assert_int_equal(ns, 77);
	/* The line past len does not count. */
	assert_int_equal(proc__parse_nspid(status, (size_t)(strstr(status, "NSpid") - status), &ns), -ENOENT);
	/* 33 levels at most. */
	n = (size_t)snprintf(many, sizeof(many), "NSpid:");
	for (int i = 0; i < PROC_NSPID_MAX; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "\t%d", i + 1);
	assert_int_equal(proc__parse_nspid(many, n, &ns), 0);
	assert_int_equal(ns, PROC_NSPID_MAX);
	n += (size_t)snprintf(many + n, sizeof(many) - n, "\t1");
	assert_int_equal(proc__parse_nspid(many, n, &ns), -EINVAL);
}

static void tgid_ids_and_masks_of_status(void **state)
{
	static const char status[] = "Tgid:\t4242\nUid:\t1\t2\t3\t4\nGid:\t5\t6\t7\t8\n"
				     "SigCgt:\t0000000101005ccd\nCapEff:\t000001ffffffffff\n";
	uint32_t tgid = 0, uid = 0, gid = 0;
	uint64_t mask = 0;

	assert_int_equal(proc__parse_tgid(status, sizeof(status) - 1, &tgid), 0);
	assert_int_equal(tgid, 4242);
	assert_int_equal(proc__parse_tgid("Tgid:\t0\n", 8, &tgid), -EINVAL);
	assert_int_equal(proc__parse_tgid("Tgid:\t12a\n", 10, &tgid), -EINVAL);
	assert_int_equal(proc__parse_tgid("Pid:\t12\n", 8, &tgid), -EINVAL);
	assert_int_equal(proc__parse_ids(status, sizeof(status) - 1, &uid, &gid), 0);
	assert_int_equal(uid, 2);
	assert_int_equal(gid, 6);
	assert_int_equal(proc__parse_mask(status, sizeof(status) - 1, "SigCgt:", &mask), 0);
	assert_true(mask == 0x101005ccdull);
	assert_int_equal(proc__parse_mask(status, sizeof(status) - 1, "CapEff:", &mask), 0);
	assert_true(mask == 0x1ffffffffffull);
	assert_int_equal(proc__parse_mask(status, sizeof(status) - 1, "SigIgn:", &mask), -EINVAL);
	assert_int_equal(proc__parse_mask("CapEff:\t0x1\n", 12, "CapEff:", &mask), -EINVAL);
	assert_int_equal(proc__parse_mask("CapEff:\t00000000000000001\n", 26, "CapEff:", &mask), -EINVAL);
}

static void environment_values(void **state)
{
	static const char env[] = "A=1\0JAVA_TOOL_OPTIONS=-Xmx1g -Dx\0JAVA=no\0EMPTY=\0JAVA_TOOL_OPTIONS=second";
	const char *v;
	size_t vlen;

	v = proc__env_value(env, sizeof(env) - 1, "JAVA_TOOL_OPTIONS", &vlen);
	assert_non_null(v);
	assert_int_equal(vlen, 10);
	assert_memory_equal(v, "-Xmx1g -Dx", 10);
	v = proc__env_value(env, sizeof(env) - 1, "EMPTY", &vlen);
	assert_non_null(v);
	assert_int_equal(vlen, 0);
	assert_null(proc__env_value(env, sizeof(env) - 1, "JAV", &vlen));
	/* len bounds the search. */
	assert_non_null(proc__env_value(env, 3, "A", &vlen));
	assert_int_equal(vlen, 1);
	assert_null(proc__env_value(env, 1, "A", &vlen));
}

static void ids(void **state)
{
	assert_int_equal(proc__parse_id("4242"), 4242);
	assert_int_equal(proc__parse_id("2147483647"), 2147483647);
	assert_int_equal(proc__parse_id("2147483648"), 0);
	assert_int_equal(proc__parse_id("0"), 0);
	assert_int_equal(proc__parse_id("012"), 0);
	assert_int_equal(proc__parse_id("self"), 0);
	assert_int_equal(proc__parse_id("12x"), 0);
	assert_int_equal(proc__parse_id(""), 0);
	assert_int_equal(proc__parse_id("+12"), 0);
}

/* <tree>/<tgid>/task/<tid>/<leaf> with content. */
static void fake_thread_file(const char *tree, uint32_t tgid, uint32_t tid, const char *leaf, const char *content)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u/task/%u", tree, tgid, tid);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/%u/task/%u/%s", tree, tgid, tid, leaf);
	fixture_write_str(path, content);
}

static void threads_of_a_fake_process(void **state)
{
	char tree[PATH_MAX];
	struct proc_ids ids;
	uint32_t id, seen = 0;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 300, "main", 1, 300, "", NULL);
	fake_process(tree, 301, "other", 1, 301, "", NULL);
	fake_thread_file(tree, 300, 300, "stat", "300 (main) S 1 300\n");
	fake_thread_file(tree, 300, 302, "stat", "302 (a) R (b)) D 1 300\n");
	assert_int_equal(proc__thread_state(tree, 300, 300), 'S');
	assert_int_equal(proc__thread_state(tree, 300, 302), 'D');
	assert_int_equal(proc__thread_state(tree, 300, 303), 0);

	/* Task lists: numeric entries only. */
	fake_thread_file(tree, 300, 302, "status", "x");
	{
		char dir[PATH_MAX + 32];

		snprintf(dir, sizeof(dir), "%s/300/task/notanid", tree);
		fixture_mkdirs(dir);
	}
	assert_int_equal(proc__open_threads(&ids, tree, 300), 0);
	while ((id = proc__next_id(&ids)))
		seen |= id == 300 ? 1 : id == 302 ? 2 : 4;
	proc__close_ids(&ids);
	proc__close_ids(&ids);
	assert_int_equal(seen, 3);
	assert_int_equal(proc__open_threads(&ids, tree, 999), -ENOENT);
	assert_int_equal(proc__next_id(&ids), 0);
	proc__close_ids(&ids);
	seen = 0;
	assert_int_equal(proc__open_processes(&ids, tree), 0);
	while ((id = proc__next_id(&ids)))
		seen |= id == 300 ? 1 : id == 301 ? 2 : 4;
	proc__close_ids(&ids);
	assert_int_equal(seen, 3);
	fixture_rmtree(tree);
}

static void only_regular_files_are_opened(void **state)
{
	char tree[PATH_MAX], path[PATH_MAX + 64], target[PATH_MAX + 64];
	int fd;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 4242, "p", 1, 1, "", NULL);
	/* A FIFO would block a reader's open; it is refused without being opened. */
	snprintf(path, sizeof(path), "%s/4242/root/fifo", tree);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(proc__open_in_root(tree, 4242, "/fifo"), -EINVAL);
	assert_int_equal(proc__open_regular(path), -EINVAL);
	snprintf(path, sizeof(path), "%s/4242/root/dir", tree);
	fixture_mkdirs(path);
	assert_int_equal(proc__open_in_root(tree, 4242, "/dir"), -EINVAL);
	assert_int_equal(proc__open_in_root(tree, 4242, "/dev/null"), -ENOENT);
	assert_int_equal(proc__open_regular("/dev/null"), -EINVAL);

	/* map_files entries lead to the mapped file. */
	snprintf(target, sizeof(target), "%s/4242/root/lib.so", tree);
	fixture_write_str(target, "ELF");
	snprintf(path, sizeof(path), "%s/4242/map_files", tree);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/4242/map_files/1000-2000", tree);
	assert_int_equal(symlink(target, path), 0);
	fd = proc__open_map_file(tree, 4242, 0x1000, 0x2000);
	assert_true(fd >= 0);
	assert_true((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	close(fd);
	snprintf(path, sizeof(path), "%s/4242/map_files/3000-4000", tree);
	assert_int_equal(symlink("/dev/null", path), 0);
	assert_int_equal(proc__open_map_file(tree, 4242, 0x3000, 0x4000), -EINVAL);
	assert_int_equal(proc__open_map_file(tree, 4242, 0x5000, 0x6000), -ENOENT);
	fixture_rmtree(tree);
}

static void our_own_process(void **state)
{
	uint64_t t;
	char comm[PROC_COMM_LEN];

	assert_int_equal(proc__start_time("/proc", (uint32_t)getpid(), &t), 0);
	assert_true(t > 0);
	assert_int_equal(proc__comm("/proc", (uint32_t)getpid(), comm, sizeof(comm)), 0);
	assert_string_equal(comm, "test_proc");
	assert_int_equal(proc__nspid("/proc", (uint32_t)getpid()), (uint32_t)getpid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_time_is_field_22_whatever_the_comm),
		cmocka_unit_test(nspid_comm_and_root_of_a_fake_process),
		cmocka_unit_test(status_without_nspid_falls_back_to_tgid),
		cmocka_unit_test(state_is_the_letter_after_the_last_parenthesis),
		cmocka_unit_test(nspid_is_the_innermost_of_well_formed_numbers),
		cmocka_unit_test(tgid_ids_and_masks_of_status),
		cmocka_unit_test(environment_values),
		cmocka_unit_test(ids),
		cmocka_unit_test(threads_of_a_fake_process),
		cmocka_unit_test(only_regular_files_are_opened),
		cmocka_unit_test(our_own_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
