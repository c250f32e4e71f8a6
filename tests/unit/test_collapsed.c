/*
 * Unit tests for output/collapsed.c: exact text, ordering, sanitising.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include "output/output.h"
#include "profile/profile.h"

/* The collapsed text of p; the caller frees it. */
static char *collapse(const struct profile *p)
{
	size_t len = 0;
	char *text = written(OUTPUT_COLLAPSED, p, NULL, 0, &len);

	assert_int_equal(strlen(text), len);
	return text;
}

static void small_profile_gives_exact_text(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t main_id, work, rd, zlib, s[3];
	char *text;

	assert_non_null(p);
	main_id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	work = intern_ok(p, "work", FRAME_KIND_NATIVE);
	rd = intern_ok(p, "ksys_read_[k]", FRAME_KIND_KERNEL);
	zlib = intern_ok(p, "inflate", FRAME_KIND_NATIVE);

	/* Added out of order, one of them twice. */
	s[0] = main_id, s[1] = zlib;
	assert_int_equal(profile__add(p, s, 2, 5), 0);
	s[0] = main_id, s[1] = work, s[2] = rd;
	assert_int_equal(profile__add(p, s, 3, 3), 0);
	s[0] = main_id, s[1] = work;
	assert_int_equal(profile__add(p, s, 2, 2), 0);
	s[0] = main_id;
	assert_int_equal(profile__add(p, s, 1, 1), 0);
	s[0] = main_id, s[1] = work, s[2] = rd;
	assert_int_equal(profile__add(p, s, 3, 4), 0);
	/* No frames: counted in the profile, absent from the text. */
	assert_int_equal(profile__add(p, s, 0, 9), 0);

	/*
	 * Bytewise order: ' ' (0x20) sorts before ';' (0x3b), so a stack
	 * comes before the longer stacks it is a prefix of; "inflate" < "work".
	 */
	text = collapse(p);
	assert_string_equal(text,
			    "main 1\n"
			    "main;inflate 5\n"
			    "main;work 2\n"
			    "main;work;ksys_read_[k] 7\n");
	free(text);
	profile__free(p);
}

static void separators_and_newlines_in_names_are_replaced(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t root, semi, nl, s[2];
	char *text;

	assert_non_null(p);
	root = frame_ok(p, "java", FRAME_KIND_PROCESS, -1);
	semi = intern_ok(p, "Foo.bar(Ljava/lang/String;)V", FRAME_KIND_JIT);
	nl = intern_ok(p, "evil\nfake 1000\r\x7f\t", FRAME_KIND_NATIVE);
	s[0] = root, s[1] = semi;
	assert_int_equal(profile__add(p, s, 2, 3), 0);
	s[0] = root, s[1] = nl;
	assert_int_equal(profile__add(p, s, 2, 4), 0);

	text = collapse(p);
	assert_string_equal(text,
			    "java;Foo.bar(Ljava/lang/String,)V 3\n"
			    "java;evil?fake 1000??? 4\n");
	free(text);
	/* The writer left the profile alone. */
	assert_string_equal(profile__frame_name(p, nl), "evil\nfake 1000\r\x7f\t");
	profile__free(p);
}

static void stacks_printing_alike_are_merged(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t a, b, c, d;
	char *text;

	assert_non_null(p);
	a = intern_ok(p, "x;y", FRAME_KIND_NATIVE);
	b = intern_ok(p, "x,y", FRAME_KIND_NATIVE);
	c = intern_ok(p, "same", FRAME_KIND_JIT);
	d = intern_ok(p, "same", FRAME_KIND_JAVA_INTERP);
	assert_int_equal(profile__add(p, &a, 1, 2), 0);
	assert_int_equal(profile__add(p, &c, 1, 10), 0);
	assert_int_equal(profile__add(p, &b, 1, 3), 0);
	assert_int_equal(profile__add(p, &d, 1, 20), 0);

	text = collapse(p);
	assert_string_equal(text, "same 30\nx,y 5\n");
	free(text);
	profile__free(p);
}

static void empty_profile_gives_empty_text(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t none = 0;
	char *text;

	assert_non_null(p);
	text = collapse(p);
	assert_string_equal(text, "");
	free(text);

	intern_ok(p, "unused", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &none, 0, 5), 0);
	text = collapse(p);
	assert_string_equal(text, "");
	free(text);
	profile__free(p);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A bigger profile checked against the obvious implementation: print every
 * line into a string, sort with strcmp. Names share prefixes and contain
 * spaces, where the writer's streaming comparison is most likely wrong.
 */
static void order_matches_strcmp_of_whole_lines(void **state)
{
	static const char *const words[] = { "a", "a b", "a b c", "ab", "a!", "b", "a 1", "zz", "\xc3\xa9t\xc3\xa9" };
	enum { NR_WORDS = sizeof(words) / sizeof(words[0]), NR_ADDS = 3000 };
	struct profile *p = profile__new(NULL);
	uint32_t ids[NR_WORDS];
	char **lines;
	size_t nr, len = 0;
	char *expected, *text;
	unsigned seed = 12345;

	assert_non_null(p);
	for (size_t i = 0; i < NR_WORDS; i++)
		ids[i] = intern_ok(p, words[i], FRAME_KIND_NATIVE);
	for (int i = 0; i < NR_ADDS; i++) {
		uint32_t s[4];
		size_t depth;

		seed = seed * 1103515245u + 12345u;
		depth = 1 + (seed >> 16) % 4;
		for (size_t d = 0; d < depth; d++) {
			seed = seed * 1103515245u + 12345u;
			s[d] = ids[(seed >> 16) % NR_WORDS];
		}
		assert_int_equal(profile__add(p, s, depth, 1 + (seed >> 8) % 50), 0);
	}

	nr = profile__stack_count(p);
	lines = calloc(nr, sizeof(*lines));
	assert_non_null(lines);
	for (size_t i = 0; i < nr; i++) {
		size_t depth, pos = 0;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);
		char buf[256];

		for (size_t d = 0; d < depth; d++)
			pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, "%s%s", d ? ";" : "",
						profile__frame_name(p, frames[d]));
		snprintf(buf + pos, sizeof(buf) - pos, " %" PRIu64 "\n", count);
		lines[i] = strdup(buf);
		assert_non_null(lines[i]);
		len += strlen(buf);
	}
	qsort(lines, nr, sizeof(*lines), compare_strings);
	expected = calloc(1, len + 1);
	assert_non_null(expected);
	for (size_t i = 0; i < nr; i++) {
		strcat(expected, lines[i]);
		free(lines[i]);
	}
	free(lines);

	text = collapse(p);
	assert_string_equal(text, expected);
	free(text);
	free(expected);
	profile__free(p);
}

static void failed_write_is_reported(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t id;
	FILE *full = fopen("/dev/full", "w");

	assert_non_null(p);
	assert_non_null(full);
	id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &id, 1, 1), 0);
	assert_int_equal(output__collapsed_write(p, full), -ENOSPC);
	fclose(full);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_profile_gives_exact_text),
		cmocka_unit_test(separators_and_newlines_in_names_are_replaced),
		cmocka_unit_test(stacks_printing_alike_are_merged),
		cmocka_unit_test(empty_profile_gives_empty_text),
		cmocka_unit_test(order_matches_strcmp_of_whole_lines),
		cmocka_unit_test(failed_write_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
