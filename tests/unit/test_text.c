/*
 * The text report: self and total per function (a recursive function
 * counted once per sample), percentages of the whole, ordering, the top-N
 * cut, names that try to drive the terminal, and write errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/output.h"

static void add(struct profile *p, const char *const *names, size_t depth, uint64_t count)
{
	uint32_t ids[16];

	for (size_t i = 0; i < depth; i++) {
		int64_t id = profile__intern(p, names[i], FRAME_KIND_NATIVE);

		assert_true(id >= 0);
		ids[i] = (uint32_t)id;
	}
	assert_int_equal(profile__add(p, ids, depth, count), 0);
}

#define ADD(p, count, ...)                                                                \
	do {                                                                              \
		const char *const names_[] = { __VA_ARGS__ };                             \
		add(p, names_, sizeof(names_) / sizeof(names_[0]), count);                \
	} while (0)

/* The report for p, as a string the caller frees. */
static char *report(const struct profile *p, size_t top)
{
	struct output_meta meta = { .title = "Test profile", .duration_s = 2.0, .frequency_hz = 99 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(output_text_write(p, &meta, top, out), 0);
	fclose(out);
	return text;
}

/* The part of text from heading to the next blank line, last newline kept. */
static char *section(const char *text, const char *heading)
{
	const char *start = strstr(text, heading), *end;

	assert_non_null(start);
	end = strstr(start, "\n\n");
	return strndup(start, end ? (size_t)(end - start) + 1 : strlen(start));
}

/*
 * Six samples: main;a;b x3, main;a x2, main;c;c;c x1.
 * self: b 3, a 2, c 1.  total: main 6, a 5, b 3, c 1 (not 3).
 */
static struct profile *sample_profile(void)
{
	struct profile *p = profile__new(NULL);

	ADD(p, 3, "main", "a", "b");
	ADD(p, 2, "main", "a");
	ADD(p, 1, "main", "c", "c", "c");
	return p;
}

static void self_table(void **state)
{
	struct profile *p = sample_profile();
	char *text = report(p, 0), *self = section(text, "Top 30 functions by self samples");
	const char *b = strstr(self, "50.00%  b\n"), *a = strstr(self, "33.33%  a\n"), *c = strstr(self, "16.67%  c\n");

	assert_non_null(b);
	assert_non_null(a);
	assert_non_null(c);
	assert_true(b < a && a < c);
	/* main has no self samples: no row. */
	assert_null(strstr(self, "main"));
	free(self);
	free(text);
	profile__free(p);
}

static void total_table_counts_recursion_once(void **state)
{
	struct profile *p = sample_profile();
	char *text = report(p, 0), *total = section(text, "Top 30 functions by total samples");
	const char *main_row = strstr(total, "100.00%  main\n"), *a = strstr(total, "83.33%  a\n");
	const char *b = strstr(total, "50.00%  b\n"), *c = strstr(total, "16.67%  c\n");

	assert_non_null(main_row);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_true(main_row < a && a < b && b < c);
	free(total);
	free(text);
	profile__free(p);
}

static void header_and_top_n(void **state)
{
	struct profile *p = sample_profile();
	char *text = report(p, 1), *self = section(text, "Top 1 functions by self"), *total;
	int rows = 0;

	assert_true(!strncmp(text, "Test profile\n", 13));
	assert_non_null(strstr(text, "Duration: 2.0 s"));
	assert_non_null(strstr(text, "Frequency: 99 Hz"));
	assert_non_null(strstr(text, "Total: 6 samples"));
	for (const char *s = strchr(self, '%'); s; s = strchr(s + 1, '%'))
		rows++;
	assert_int_equal(rows, 1);
	assert_non_null(strstr(self, "  b\n"));
	total = section(text, "Top 1 functions by total");
	assert_non_null(strstr(total, "main"));
	assert_null(strstr(total, "  a"));
	free(total);
	free(self);
	free(text);
	profile__free(p);
}

static void terminal_escapes_are_neutralised(void **state)
{
	struct profile *p = profile__new(NULL);
	char *text;

	ADD(p, 1, "main", "evil\x1b]0;owned\x07\x1b[2J");
	text = report(p, 0);
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\x07'));
	assert_non_null(strstr(text, "evil"));
	free(text);
	profile__free(p);
}

static void empty_profile(void **state)
{
	struct profile *p = profile__new(NULL);
	char *text = report(p, 0);

	assert_non_null(strstr(text, "Total: 0 samples"));
	assert_non_null(strstr(text, "(none)"));
	free(text);
	profile__free(p);
}

static void write_error_is_reported(void **state)
{
	struct profile *p = sample_profile();
	FILE *full = fopen("/dev/full", "w");

	if (!full)
		skip();
	assert_true(output_text_write(p, NULL, 0, full) < 0);
	fclose(full);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(self_table),
		cmocka_unit_test(total_table_counts_recursion_once),
		cmocka_unit_test(header_and_top_n),
		cmocka_unit_test(terminal_escapes_are_neutralised),
		cmocka_unit_test(empty_profile),
		cmocka_unit_test(write_error_is_reported),
	};

	return cmocka_run_group_tests_name("text report", tests, NULL, NULL);
}
