/*
 * procmaps: the shapes real maps lines take (spaces in paths, deleted
 * files, pseudo-names, no path) and absurd lines, which must be skipped.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolizer/procmaps.h"
#include "symbolizer_fixture.h"

static void parses_a_file_mapping(void **state)
{
	struct procmaps_entry e;

	assert_int_equal(procmaps__parse_line("7f3c2a000000-7f3c2a1b2000 r-xp 00028000 08:01 1835"
					      "                      /usr/lib/x86_64-linux-gnu/libc.so.6\n",
					      &e), 0);
	assert_true(e.start == 0x7f3c2a000000ull);
	assert_true(e.end == 0x7f3c2a1b2000ull);
	assert_true(e.pgoff == 0x28000);
	assert_int_equal(e.dev_major, 8);
	assert_int_equal(e.dev_minor, 1);
	assert_int_equal(e.inode, 1835);
	assert_true(e.executable);
	assert_false(e.deleted);
	assert_int_equal(e.kind, PROCMAPS_FILE);
	assert_string_equal(e.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	free(e.path);
}

static void keeps_spaces_and_strips_deleted(void **state)
{
	struct procmaps_entry e;

	assert_int_equal(procmaps__parse_line("400000-401000 r-xp 00001000 fd:00 77 /opt/my app/bin/run me (deleted)\n",
					      &e), 0);
	assert_true(e.deleted);
	assert_string_equal(e.path, "/opt/my app/bin/run me");
	assert_int_equal(e.kind, PROCMAPS_FILE);
	free(e.path);

	/* Only a trailing " (deleted)" is the kernel's marker. */
	assert_int_equal(procmaps__parse_line("400000-401000 r-xp 0 fd:00 77 /x (deleted) y\n", &e), 0);
	assert_false(e.deleted);
	assert_string_equal(e.path, "/x (deleted) y");
	free(e.path);
}

static void classifies_pseudo_and_anonymous_mappings(void **state)
{
	static const struct {
		const char *line;
		enum procmaps_kind kind;
		int executable;
	} cases[] = {
		{ "7ffd1c5f0000-7ffd1c5f2000 r-xp 00000000 00:00 0                          [vdso]\n", PROCMAPS_VDSO, 1 },
		{ "55d0c0e3e000-55d0c0e5f000 rw-p 00000000 00:00 0                          [heap]\n", PROCMAPS_SPECIAL, 0 },
		{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n", PROCMAPS_SPECIAL, 1 },
		{ "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n", PROCMAPS_ANON, 1 },
		{ "7f0000000000-7f0000100000 rwxp 00000000 00:00 0\n", PROCMAPS_ANON, 1 },
		{ "7f0000000000-7f0000100000 r-xp 00000000 00:00 0", PROCMAPS_ANON, 1 },
		{ "7f0000000000-7f0000100000 r-xs 00000000 00:00 0 [anon:jit code]\n", PROCMAPS_ANON, 1 },
	};
	struct procmaps_entry e;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(procmaps__parse_line(cases[i].line, &e), 0);
		assert_int_equal(e.kind, cases[i].kind);
		assert_int_equal(e.executable, cases[i].executable);
		free(e.path);
	}
}

static void rejects_absurd_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage\n",
		"2000-1000 r-xp 00000000 08:01 1 /lib/a.so\n",             /* end before start */
		"1000-1000 r-xp 00000000 08:01 1 /lib/a.so\n",             /* empty */
		"11234567812345678-ffffffffffffffff r-xp 0 08:01 1 /a\n",  /* 17 digits */
		"1000-2000 r-xq 00000000 08:01 1 /lib/a.so\n",             /* bad perms */
		"1000-2000 r-x 00000000 08:01 1 /lib/a.so\n",
		"1000-2000 r-xp 00000000 08:01 /lib/a.so\n",               /* no inode */
		"1000-2000 r-xp 00000000 0801 1 /lib/a.so\n",              /* no ':' */
		"1000-2000 r-xp -1000 08:01 1 /lib/a.so\n",
		"1000-2000 r-xp ffffffffffffffff 08:01 1 /lib/a.so\n",     /* offset wraps */
		"1000-2000 r-xp 0 08:01 99999999999999999999999 /a\n",     /* inode overflows */
		"1000-2000 r-xp 0 08:01 1x /lib/a.so\n",
		"1000-2000 r-xp 0 08:01 1 /a\nsecond line\n",
		" 1000-2000 r-xp 0 08:01 1 /a\n",
	};
	struct procmaps_entry e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.path = (char *)"untouched";
		assert_int_equal(procmaps__parse_line(bad[i], &e), -EINVAL);
		assert_null(e.path);
	}
}

static void reads_executable_mappings_skipping_bad_lines(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], *huge;
	struct procmaps_entry *entries;
	size_t nr, len = 20000;

	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/maps", dir);
	huge = malloc(len + 200);
	snprintf(huge, 200, "1000-2000 r-xp 0 08:01 1 /");
	memset(huge + strlen(huge), 'a', len);
	huge[len] = '\0';
	{
		size_t total = len + 1024;
		char *text = malloc(total);

		snprintf(text, total,
			 "555555554000-555555555000 r--p 00000000 08:01 10 /usr/bin/prog\n"
			 "555555555000-555555556000 r-xp 00001000 08:01 10 /usr/bin/prog\n"
			 "this is not a maps line\n"
			 "%s\n"
			 "7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
			 "9000-8000 r-xp 0 08:01 1 /bad\n"
			 "7ffd1c5f0000-7ffd1c5f2000 r-xp 00000000 00:00 0 [vdso]\n",
			 huge);
		fixture_write_str(path, text);
		free(text);
	}
	free(huge);

	assert_int_equal(procmaps__read(path, 1, &entries, &nr), 0);
	assert_int_equal(nr, 3);
	assert_true(entries[0].start == 0x555555555000ull);
	assert_string_equal(entries[0].path, "/usr/bin/prog");
	assert_int_equal(entries[1].kind, PROCMAPS_ANON);
	assert_null(entries[1].path);
	assert_int_equal(entries[2].kind, PROCMAPS_VDSO);
	procmaps__free(entries, nr);

	assert_int_equal(procmaps__read(path, 0, &entries, &nr), 0);
	assert_int_equal(nr, 4);
	procmaps__free(entries, nr);

	assert_int_equal(procmaps__read("/nonexistent/maps", 1, &entries, &nr), -ENOENT);
	fixture_rmtree(dir);
}

static void reads_our_own_maps(void **state)
{
	struct procmaps_entry *entries;
	size_t i, nr;
	int found = 0;
	uint64_t here = (uint64_t)(uintptr_t)reads_our_own_maps;

	assert_int_equal(procmaps__read("/proc/self/maps", 1, &entries, &nr), 0);
	for (i = 0; i < nr; i++)
		if (here >= entries[i].start && here < entries[i].end)
			found = entries[i].kind == PROCMAPS_FILE;
	assert_true(found);
	procmaps__free(entries, nr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_a_file_mapping),
		cmocka_unit_test(keeps_spaces_and_strips_deleted),
		cmocka_unit_test(classifies_pseudo_and_anonymous_mappings),
		cmocka_unit_test(rejects_absurd_lines),
		cmocka_unit_test(reads_executable_mappings_skipping_bad_lines),
		cmocka_unit_test(reads_our_own_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
