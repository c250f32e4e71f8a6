/*
 * procfs: start time (with hostile comms), NSpid, comm, and opening files
 * inside a process root, where absolute symlinks must stay inside.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolizer/procfs.h"
#include "symbolizer_fixture.h"

static void start_time_is_field_22_whatever_the_comm(void **state)
{
	uint64_t t = 0;

	assert_int_equal(procfs__parse_start_time("42 (java) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0\n", &t), 0);
	assert_true(t == 123456);
	assert_int_equal(procfs__parse_start_time("42 (a) b) c (d) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0\n", &t), 0);
	assert_true(t == 777);
	assert_int_equal(procfs__parse_start_time("42 (x) S 1 2 3\n", &t), -EINVAL);
	assert_int_equal(procfs__parse_start_time("no parenthesis", &t), -EINVAL);
	assert_int_equal(procfs__parse_start_time("42 (x) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12z 0\n", &t), -EINVAL);
}

static void nspid_comm_and_root_of_a_fake_process(void **state)
{
	char tree[PATH_MAX], path[PATH_MAX + 64], comm[PROCFS_COMM_LEN], buf[64];
	uint64_t t;
	int fd;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 4242, "my prog", 99, 7, "", NULL);
	assert_int_equal(procfs__nspid(tree, 4242), 7);
	assert_int_equal(procfs__nspid(tree, 5555), 5555);
	assert_int_equal(procfs__comm(tree, 4242, comm, sizeof(comm)), 0);
	assert_string_equal(comm, "my prog");
	assert_int_equal(procfs__start_time(tree, 4242, &t), 0);
	assert_true(t == 99);
	assert_int_equal(procfs__start_time(tree, 5555, &t), -ESRCH);

	/* An absolute symlink in the container resolves inside the container. */
	snprintf(path, sizeof(path), "%s/4242/root/etc", tree);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/4242/root/etc/hostname", tree);
	fixture_write_str(path, "inside\n");
	snprintf(path, sizeof(path), "%s/4242/root/link", tree);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	fd = procfs__open_in_root(tree, 4242, "/link");
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "inside\n", 7);
	close(fd);
	assert_true(procfs__open_in_root(tree, 4242, "/missing") < 0);
	assert_int_equal(procfs__open_in_root(tree, 5555, "/etc/hostname"), -ESRCH);
	assert_int_equal(procfs__open_in_root(tree, 4242, "relative"), -EINVAL);
	fixture_rmtree(tree);
}

static void status_without_nspid_falls_back_to_tgid(void **state)
{
	char tree[PATH_MAX];

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 100, "x", 1, 1, "", NULL);
	fake_process_file(tree, 100, "status", "Name:\tx\nNSpid:\tgarbage\n");
	assert_int_equal(procfs__nspid(tree, 100), 100);
	fake_process_file(tree, 100, "status", "Name:\tx\n");
	assert_int_equal(procfs__nspid(tree, 100), 100);
	fake_process_file(tree, 100, "status", "Name:\tx\nNSpid:\t100\t99999999999\n");
	assert_int_equal(procfs__nspid(tree, 100), 100);
	fixture_rmtree(tree);
}

static void our_own_process(void **state)
{
	uint64_t t;
	char comm[PROCFS_COMM_LEN];

	assert_int_equal(procfs__start_time("/proc", (uint32_t)getpid(), &t), 0);
	assert_true(t > 0);
	assert_int_equal(procfs__comm("/proc", (uint32_t)getpid(), comm, sizeof(comm)), 0);
	assert_string_equal(comm, "test_procfs");
	assert_int_equal(procfs__nspid("/proc", (uint32_t)getpid()), (uint32_t)getpid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(start_time_is_field_22_whatever_the_comm),
		cmocka_unit_test(nspid_comm_and_root_of_a_fake_process),
		cmocka_unit_test(status_without_nspid_falls_back_to_tgid),
		cmocka_unit_test(our_own_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
