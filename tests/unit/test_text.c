/*
 * Unit tests for output/text.c: self and total counts, percentages, order,
 * the top-N cut and alignment.
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

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "output/output.h"
#include "profile/profile.h"

struct row {
	uint64_t count;
	double percent;
	char name[256];
	size_t name_column; /* offset of the name in its line */
};

struct table {
	struct row rows[64];
	size_t nr;
};

static char *report_of(const struct profile *p, const struct output_meta *meta, size_t top)
{
	size_t len = 0;

	return written(OUTPUT_TEXT, p, meta, top, &len);
}

/*
 * Parses the table whose heading starts with `heading`: a column header
 * line, then "COUNT PERCENT% NAME" rows up to a blank line or the end.
 */
static void parse_table(const char *text, const char *heading, struct table *t)
{
	const char *line = strstr(text, heading);

	assert_non_null(line);
	t->nr = 0;
	line = strchr(line, '\n');
	assert_non_null(line);
	line = strchr(line + 1, '\n'); /* the column header */
	assert_non_null(line);
	for (line++; *line && *line != '\n'; ) {
		const char *eol = strchr(line, '\n');
		struct row *r = &t->rows[t->nr];
		int used = 0;

		assert_non_null(eol);
		assert_true(t->nr < 64);
		assert_int_equal(sscanf(line, " %" SCNu64 " %lf%% %n", &r->count, &r->percent, &used), 2);
		assert_true(used > 0 && line + used <= eol);
		r->name_column = (size_t)used;
		assert_true((size_t)(eol - line - used) < sizeof(r->name));
		memcpy(r->name, line + used, (size_t)(eol - line - used));
		r->name[eol - line - used] = '\0';
		t->nr++;
		line = eol + 1;
	}
}

static const struct row *find_row(const struct table *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	return NULL;
}

/*
 *   main;a;b;a  3   (a recurses)
 *   main;a      2
 *   main;c      5
 *   (no frames) 1   counted in the grand total only
 */
static struct profile *recursive_profile(void)
{
	struct profile *p = profile__new(NULL);
	uint32_t m, a, b, c, s[4];

	assert_non_null(p);
	m = intern_ok(p, "main", FRAME_KIND_NATIVE);
	a = intern_ok(p, "a", FRAME_KIND_NATIVE);
	b = intern_ok(p, "b", FRAME_KIND_NATIVE);
	c = intern_ok(p, "c", FRAME_KIND_NATIVE);
	s[0] = m, s[1] = a, s[2] = b, s[3] = a;
	assert_int_equal(profile__add(p, s, 4, 3), 0);
	s[0] = m, s[1] = a;
	assert_int_equal(profile__add(p, s, 2, 2), 0);
	s[0] = m, s[1] = c;
	assert_int_equal(profile__add(p, s, 2, 5), 0);
	assert_int_equal(profile__add(p, s, 0, 1), 0);
	return p;
}

static void check_row(const struct table *t, const char *name, uint64_t count, uint64_t grand_total)
{
	const struct row *r = find_row(t, name);

	assert_non_null(r);
	assert_int_equal(r->count, count);
	/* Printed with two decimals. */
	assert_true(r->percent > 100.0 * (double)count / (double)grand_total - 0.006);
	assert_true(r->percent < 100.0 * (double)count / (double)grand_total + 0.006);
}

/*
 * A wall-clock stack: thread root, functions, state. Self time belongs to
 * the innermost function, and neither the thread nor the state is a row.
 */
static void process_thread_and_state_frames_are_not_functions(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t s[5];
	struct table self, total;
	char *text;

	assert_non_null(p);
	s[0] = frame_ok(p, "app", FRAME_KIND_PROCESS, 7);
	s[1] = frame_ok(p, "worker", FRAME_KIND_THREAD, 8);
	s[2] = intern_ok(p, "main", FRAME_KIND_NATIVE);
	s[3] = intern_ok(p, "read_[k]", FRAME_KIND_KERNEL);
	s[4] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_SLEEPING);
	assert_int_equal(profile__add(p, s, 5, 70), 0);
	s[3] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_RUNNING);
	assert_int_equal(profile__add(p, s, 4, 30), 0);
	text = report_of(p, NULL, 0);
	parse_table(text, "Top 30 functions by self", &self);
	parse_table(text, "Top 30 functions by total", &total);
	assert_int_equal(self.nr, 2);
	check_row(&self, "read_[k]", 70, 100);
	check_row(&self, "main", 30, 100);
	assert_int_equal(total.nr, 2);
	check_row(&total, "main", 100, 100);
	assert_null(find_row(&total, "[sleeping]"));
	assert_null(find_row(&total, "[worker tid=8]"));
	assert_null(find_row(&total, "app (pid 7)"));
	free(text);
	profile__free(p);
}

/*
 * A wait joined with its waker (--wakers): the function tables count its
 * own frames only, its self time going to its innermost function, and
 * the wakers table names where it waited and who woke it, kernel frames
 * left out.
 */
static void a_waker_is_listed_apart_from_the_functions(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t s[8];
	struct table self, total;
	char *text, *at;

	assert_non_null(p);
	s[0] = intern_ok(p, "consume", FRAME_KIND_NATIVE);
	s[1] = intern_ok(p, "futex_wait_[k]", FRAME_KIND_KERNEL);
	s[2] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_SLEEPING);
	s[3] = intern_ok(p, "[woken by]", FRAME_KIND_WAKER);
	s[4] = intern_ok(p, "try_to_wake_up_[k]", FRAME_KIND_WAKER);
	s[5] = intern_ok(p, "signal", FRAME_KIND_WAKER);
	s[6] = intern_ok(p, "produce", FRAME_KIND_WAKER);
	assert_int_equal(profile__add(p, s, 7, 80), 0);
	s[1] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_RUNNING);
	assert_int_equal(profile__add(p, s, 2, 20), 0);
	text = report_of(p, NULL, 0);
	parse_table(text, "Top 30 functions by self", &self);
	parse_table(text, "Top 30 functions by total", &total);
	assert_int_equal(self.nr, 2);
	check_row(&self, "futex_wait_[k]", 80, 100);
	check_row(&self, "consume", 20, 100);
	assert_int_equal(total.nr, 2);
	assert_null(find_row(&total, "produce"));
	at = strstr(text, "Top 10 wakers by samples\n");
	assert_non_null(at);
	assert_non_null(strstr(at, "80   80.00%\n    waits in  consume\n    woken by  signal < produce\n"));
	free(text);
	profile__free(p);
}

/* The processes the stacks begin with, most counted first; the rest past top in one row. */
static void processes_are_listed_with_their_shares(void **state)
{
	const struct process_parts parts[] = {
		{ .name = "java", .program = "com.example.Main", .pid = 10 },
		{ .name = "python3", .program = "app.py", .pid = 11 },
		{ .name = "cron", .pid = 12 },
	};
	const uint64_t counts[] = { 60, 30, 9 };
	struct profile *p = profile__new(NULL), *none = recursive_profile();
	struct table t;
	char *text;

	assert_non_null(p);
	for (size_t i = 0; i < 3; i++) {
		uint32_t s[2] = { (uint32_t)profile__intern_process_parts(p, &parts[i]),
				  intern_ok(p, "main", FRAME_KIND_NATIVE) };

		assert_int_equal(profile__add(p, s, 2, counts[i]), 0);
	}
	/* A stack with no process frame counts in the total only. */
	assert_int_equal(profile__add(p, (uint32_t[]){ intern_ok(p, "main", FRAME_KIND_NATIVE) }, 1, 1), 0);
	text = report_of(p, NULL, 2);
	parse_table(text, "Processes by samples", &t);
	assert_int_equal(t.nr, 3);
	assert_string_equal(t.rows[0].name, "com.example.Main (java, pid 10)");
	check_row(&t, "com.example.Main (java, pid 10)", 60, 100);
	assert_string_equal(t.rows[1].name, "app.py (python3, pid 11)");
	check_row(&t, "app.py (python3, pid 11)", 30, 100);
	check_row(&t, "(the other processes)", 9, 100);
	free(text);
	text = report_of(none, NULL, 0);
	assert_null(strstr(text, "Processes by"));
	free(text);
	profile__free(p);
	profile__free(none);
}

/*
 * An allocation profile: the self table is by class, and the sites table
 * counts each stack under the frame that allocated, whatever the class.
 */
static void allocation_sites_are_listed_with_their_shares(void **state)
{
	struct profile *p = profile__new(NULL), *none = recursive_profile();
	const struct output_meta meta = { .unit = "bytes", .event = "alloc" };
	uint32_t run, fill, box, longs, boxes;
	struct table sites, self;
	char *text;

	(void)state;
	assert_non_null(p);
	run = intern_ok(p, "Main.run", FRAME_KIND_JAVA);
	fill = intern_ok(p, "Main.fill", FRAME_KIND_JAVA);
	box = intern_ok(p, "Main.box", FRAME_KIND_JAVA);
	longs = intern_ok(p, "long[]", FRAME_KIND_CLASS);
	boxes = intern_ok(p, "Main$Box", FRAME_KIND_CLASS);
	assert_int_equal(profile__add(p, (uint32_t[]){ run, fill, longs }, 3, 600), 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ run, fill, boxes }, 3, 100), 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ run, box, boxes }, 3, 300), 0);
	/* Allocated where the walk gave no frame above the class: not a site of any method. */
	assert_int_equal(profile__add(p, (uint32_t[]){ boxes }, 1, 7), 0);
	text = report_of(p, &meta, 0);
	parse_table(text, "Allocation sites by bytes", &sites);
	assert_int_equal(sites.nr, 2);
	assert_string_equal(sites.rows[0].name, "Main.fill");
	check_row(&sites, "Main.fill", 700, 1007);
	check_row(&sites, "Main.box", 300, 1007);
	parse_table(text, "Top 30 functions by self bytes", &self);
	check_row(&self, "long[]", 600, 1007);
	check_row(&self, "Main$Box", 407, 1007);
	free(text);
	text = report_of(none, NULL, 0);
	assert_null(strstr(text, "Allocation sites by"));
	free(text);
	profile__free(p);
	profile__free(none);
}

static void self_and_total_count_recursion_once(void **state)
{
	struct profile *p = recursive_profile();
	const uint64_t grand = 3 + 2 + 5 + 1;
	struct table self, total;
	char *text = report_of(p, NULL, 0);

	parse_table(text, "Top 30 functions by self", &self);
	parse_table(text, "Top 30 functions by total", &total);

	/* Leaves: a (3 + 2) and c (5); main and b are never last. */
	assert_int_equal(self.nr, 2);
	check_row(&self, "a", 3 + 2, grand);
	check_row(&self, "c", 5, grand);
	assert_null(find_row(&self, "main"));

	assert_int_equal(total.nr, 4);
	check_row(&total, "main", 3 + 2 + 5, grand);
	check_row(&total, "a", 3 + 2, grand); /* not 3 + 3 + 2 */
	check_row(&total, "b", 3, grand);
	check_row(&total, "c", 5, grand);
	free(text);
	profile__free(p);
}

/* Recursion at the leaf: main;c;c;c is one sample of c, self and total. */
static void recursive_leaf_counts_once(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t m, c, s[4];
	struct table self, total;
	char *text;

	assert_non_null(p);
	m = intern_ok(p, "main", FRAME_KIND_NATIVE);
	c = intern_ok(p, "c", FRAME_KIND_NATIVE);
	s[0] = m, s[1] = c, s[2] = c, s[3] = c;
	assert_int_equal(profile__add(p, s, 4, 1), 0);
	s[0] = m;
	assert_int_equal(profile__add(p, s, 1, 5), 0);
	text = report_of(p, NULL, 0);
	parse_table(text, "functions by self", &self);
	parse_table(text, "functions by total", &total);
	check_row(&self, "c", 1, 1 + 5);
	check_row(&self, "main", 5, 1 + 5);
	check_row(&total, "c", 1, 1 + 5);
	check_row(&total, "main", 1 + 5, 1 + 5);
	/* The exact row format: count, two-decimal percent, two spaces, name. */
	assert_non_null(strstr(text, "  16.67%  c\n"));
	assert_non_null(strstr(text, " 100.00%  main\n"));
	free(text);
	profile__free(p);
}

static void rows_are_ordered_by_count_then_name(void **state)
{
	struct profile *p = recursive_profile();
	struct table self, total;
	char *text = report_of(p, NULL, 0);

	parse_table(text, "functions by self", &self);
	parse_table(text, "functions by total", &total);
	/* a and c tie at 5: by name. */
	assert_string_equal(self.rows[0].name, "a");
	assert_string_equal(self.rows[1].name, "c");
	assert_string_equal(total.rows[0].name, "main");
	assert_string_equal(total.rows[1].name, "a");
	assert_string_equal(total.rows[2].name, "c");
	assert_string_equal(total.rows[3].name, "b");
	for (size_t i = 1; i < total.nr; i++)
		assert_true(total.rows[i - 1].count >= total.rows[i].count);
	free(text);
	profile__free(p);
}

static void top_limits_the_rows(void **state)
{
	struct profile *p = recursive_profile();
	struct table total;
	char *text = report_of(p, NULL, 2);

	parse_table(text, "Top 2 functions by total", &total);
	assert_int_equal(total.nr, 2);
	assert_string_equal(total.rows[0].name, "main");
	assert_string_equal(total.rows[1].name, "a");
	free(text);
	profile__free(p);
}

static void header_names_the_recording(void **state)
{
	struct profile *p = recursive_profile();
	struct output_meta meta = { .title = "CPU profile of pid 7", .unit = "ms", .duration_s = 12.5,
				    .frequency_hz = 49, .summary = "taken 11, lost 0" };
	char *text = report_of(p, &meta, 0);

	assert_int_equal(strncmp(text, "CPU profile of pid 7\n", 21), 0);
	assert_non_null(strstr(text, "Duration: 12.5 s"));
	assert_non_null(strstr(text, "Frequency: 49 Hz"));
	assert_non_null(strstr(text, "Total: 11 ms\n"));
	assert_non_null(strstr(text, "\ntaken 11, lost 0\n"));
	assert_non_null(strstr(text, "functions by self ms\n"));
	free(text);
	profile__free(p);
}

/* Same name, two kinds: one function. Long names in full, aligned, tamed. */
static void names_are_merged_aligned_and_sanitised(void **state)
{
	struct profile *p = profile__new(NULL);
	char long_name[200];
	uint32_t jit, interp, longf, evil, s[2];
	struct table self;
	char *text;

	assert_non_null(p);
	memset(long_name, 'L', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	jit = intern_ok(p, "Foo.bar", FRAME_KIND_JIT);
	interp = intern_ok(p, "Foo.bar", FRAME_KIND_JAVA_INTERP);
	longf = intern_ok(p, long_name, FRAME_KIND_NATIVE);
	evil = intern_ok(p, "x\x1b]0;owned\x07y", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &jit, 1, 1000), 0);
	assert_int_equal(profile__add(p, &interp, 1, 24), 0);
	s[0] = jit, s[1] = longf;
	assert_int_equal(profile__add(p, s, 2, 7), 0);
	assert_int_equal(profile__add(p, &evil, 1, 3), 0);

	text = report_of(p, NULL, 0);
	assert_null(strchr(text, '\x1b'));
	assert_null(strchr(text, '\x07'));
	parse_table(text, "functions by self", &self);
	assert_int_equal(self.nr, 3);
	check_row(&self, "Foo.bar", 1000 + 24, 1000 + 24 + 7 + 3);
	check_row(&self, long_name, 7, 1000 + 24 + 7 + 3);
	/* ESC and BEL become '?'; the rest of the would-be sequence is inert text. */
	check_row(&self, "x?]0;owned?y", 3, 1000 + 24 + 7 + 3);
	/* Counts of different widths, names in one column. */
	for (size_t i = 1; i < self.nr; i++)
		assert_int_equal(self.rows[i].name_column, self.rows[0].name_column);
	free(text);
	profile__free(p);
}

static void empty_profile_says_none(void **state)
{
	struct profile *p = profile__new(NULL);
	char *text;

	assert_non_null(p);
	text = report_of(p, NULL, 0);
	assert_non_null(strstr(text, "Total: 0 samples\n"));
	assert_int_equal((int)(strstr(strstr(text, "by total"), "(none)") != NULL), 1);
	free(text);
	profile__free(p);
}

static void failed_write_is_reported(void **state)
{
	struct profile *p = recursive_profile();
	FILE *full = fopen("/dev/full", "w");

	assert_non_null(full);
	assert_int_equal(output__text_write(p, NULL, 0, full), -ENOSPC);
	fclose(full);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(self_and_total_count_recursion_once),
		cmocka_unit_test(processes_are_listed_with_their_shares),
		cmocka_unit_test(allocation_sites_are_listed_with_their_shares),
		cmocka_unit_test(process_thread_and_state_frames_are_not_functions),
		cmocka_unit_test(a_waker_is_listed_apart_from_the_functions),
		cmocka_unit_test(recursive_leaf_counts_once),
		cmocka_unit_test(rows_are_ordered_by_count_then_name),
		cmocka_unit_test(top_limits_the_rows),
		cmocka_unit_test(header_names_the_recording),
		cmocka_unit_test(names_are_merged_aligned_and_sanitised),
		cmocka_unit_test(empty_profile_says_none),
		cmocka_unit_test(failed_write_is_reported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
