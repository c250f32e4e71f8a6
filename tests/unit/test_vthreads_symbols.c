/*
 * vthreads__find_functions (user/record/vthreads.c): where in a target's
 * libjvm.so the freezes and the thaw are, for their uprobes. The file is
 * the target's, so: a stripped one, one that is no ELF, and one cut short
 * find nothing (and the attach says so); in the fixture that has them
 * (tests/fixtures/fakejvm.c), each offset found holds the code the
 * function runs in this process.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolizer/procmaps.h"
#include "symbolizer_fixture.h"
#include "user/record/vthreads.h"

static int open_fixture(const char *name)
{
	char path[PATH_MAX];
	int fd = open(fixture_path(name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

/* The file's bytes at offset equal the code at addr in this process. */
static void assert_code_at(int fd, uint64_t offset, uintptr_t addr)
{
	unsigned char in_file[16];

	assert_int_equal(pread(fd, in_file, sizeof(in_file), (off_t)offset), sizeof(in_file));
	assert_memory_equal(in_file, (const void *)addr, sizeof(in_file));
}

static void finds_freezes_and_thaw(void **state)
{
	uint64_t freezes[VTHREADS_MAX_FUNCTIONS], thaws[VTHREADS_MAX_FUNCTIONS];
	size_t nr_freezes, nr_thaws;
	void *lib = fixture_dlopen("fakejvm/libjvm.so");
	uintptr_t (*function)(int);
	void *sym = dlsym(lib, "fakejvm_function");
	int fd = open_fixture("fakejvm/libjvm.so");

	(void)state;
	assert_non_null(sym);
	memcpy(&function, &sym, sizeof(function));
	assert_int_equal(vthreads__find_functions(fd, freezes, &nr_freezes, thaws, &nr_thaws), 0);
	assert_int_equal(nr_freezes, 2);
	assert_int_equal(nr_thaws, 1);
	/* In the order vthreads.c lists them: freeze<Config>, then try_preempt. */
	assert_code_at(fd, freezes[0], function(0));
	assert_code_at(fd, freezes[1], function(1));
	assert_code_at(fd, thaws[0], function(2));
	close(fd);
	dlclose(lib);
}

static void stripped_finds_nothing(void **state)
{
	uint64_t freezes[VTHREADS_MAX_FUNCTIONS], thaws[VTHREADS_MAX_FUNCTIONS];
	size_t nr_freezes = 9, nr_thaws = 9;
	int fd = open_fixture("fakejvm_stripped/libjvm.so");

	(void)state;
	assert_int_equal(vthreads__find_functions(fd, freezes, &nr_freezes, thaws, &nr_thaws), -ENOENT);
	assert_int_equal(nr_freezes, 0);
	assert_int_equal(nr_thaws, 0);
	close(fd);
}

/* A file that is no ELF, and the fixture cut short at several lengths. */
static void hostile_files_find_nothing(void **state)
{
	uint64_t freezes[VTHREADS_MAX_FUNCTIONS], thaws[VTHREADS_MAX_FUNCTIONS];
	size_t nr_freezes, nr_thaws, len;
	char path[64], whole[PATH_MAX];
	char *bytes = fixture_read(fixture_path("fakejvm/libjvm.so", whole, sizeof(whole)), &len);
	static const size_t cuts[] = { 0, 4, 64, 512, 4096 };
	int fd;

	(void)state;
	fixture_temp_file(path, sizeof(path), "test-vthreads", "#!/bin/sh\nnot a library\n");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(vthreads__find_functions(fd, freezes, &nr_freezes, thaws, &nr_thaws) < 0);
	assert_int_equal(nr_freezes + nr_thaws, 0);
	close(fd);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		assert_true(cuts[i] < len);
		fixture_write(path, bytes, cuts[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_true(vthreads__find_functions(fd, freezes, &nr_freezes, thaws, &nr_thaws) < 0);
		close(fd);
	}
	unlink(path);
	free(bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_freezes_and_thaw),
		cmocka_unit_test(stripped_finds_nothing),
		cmocka_unit_test(hostile_files_find_nothing),
	};

	return cmocka_run_group_tests_name("vthreads_symbols", tests, NULL, NULL);
}
