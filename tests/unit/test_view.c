/*
 * Unit tests for user/view.c: each view option applied to a profile
 * aggregated in full, and the parsing of process and thread frames.
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include "user/record/aggregator.h"
#include "profile/profile.h"
#include "profile/view.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The full profile every view test starts from: one process, two threads,
 * the Java frames as they ran. Pieces of the expected lines are spelled
 * out below in the order a stack has them.
 */
#define PID_ROOT "app (pid 42)|process;"
#define NAME_ROOT "app|process;"
#define T43 "[worker tid=43]|thread;"
#define T44 "[worker tid=44]|thread;"
#define MAIN "main|native;"
#define BAR "Foo.bar_[j]|compiled;"
#define BAZ "Foo.baz_[i]|inlined;"
#define QUX "Foo.qux_[0]|interpreted;"
#define READ "read_[k]|kernel;"
#define PLAIN_BAR "Foo.bar|java;"
#define PLAIN_BAZ "Foo.baz|java;"
#define PLAIN_QUX "Foo.qux|java;"
#define SLEEPING "[sleeping]|state"
#define RUNNING "[running]|state"

/* The stacks of the full profile, root first, and their counts. */
static const struct {
	const char *frames[8];  /* NULL-terminated */
	uint64_t count;
} full_stacks[] = {
	{ { "app (pid 42)", "[worker tid=43]", "main", "Foo.bar_[j]", "Foo.baz_[i]", "read_[k]", "[sleeping]" }, 5 },
	{ { "app (pid 42)", "[worker tid=43]", "main", "Foo.bar_[j]", "Foo.qux_[0]", "[running]" }, 3 },
	{ { "app (pid 42)", "[worker tid=44]", "main", "Foo.bar_[j]", "Foo.qux_[0]", "[running]" }, 2 },
	{ { "app (pid 42)", "[worker tid=43]", "main", "idle" }, 7 },
};

/* The kind of each frame name used in full_stacks. */
static enum frame_kind kind_of(const char *name)
{
	static const struct {
		const char *name;
		enum frame_kind kind;
	} kinds[] = {
		{ "app (pid 42)", FRAME_KIND_PROCESS },     { "[worker tid=43]", FRAME_KIND_THREAD },
		{ "[worker tid=44]", FRAME_KIND_THREAD },   { "main", FRAME_KIND_NATIVE },
		{ "idle", FRAME_KIND_NATIVE },              { "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED },
		{ "Foo.baz_[i]", FRAME_KIND_JAVA_INLINED }, { "Foo.qux_[0]", FRAME_KIND_JAVA_INTERP },
		{ "read_[k]", FRAME_KIND_KERNEL },          { "[sleeping]", FRAME_KIND_STATE },
		{ "[running]", FRAME_KIND_STATE },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i].name, name))
			return kinds[i].kind;
	fail_msg("no kind for frame %s", name);
	return FRAME_KIND_NR;
}

static struct profile *full_profile(void)
{
	struct profile *p = profile__new(NULL);

	assert_non_null(p);
	for (size_t i = 0; i < ARRAY_SIZE(full_stacks); i++) {
		uint32_t ids[8];
		size_t depth = 0;

		for (; full_stacks[i].frames[depth]; depth++)
			ids[depth] = intern_ok(p, full_stacks[i].frames[depth], kind_of(full_stacks[i].frames[depth]));
		assert_int_equal(profile__add(p, ids, depth, full_stacks[i].count), 0);
	}
	return p;
}

static uint64_t full_total(void)
{
	uint64_t total = 0;

	for (size_t i = 0; i < ARRAY_SIZE(full_stacks); i++)
		total += full_stacks[i].count;
	return total;
}

/* The view of the full profile as lines, with its stats. */
static char *view_text(const struct view_config *config, struct view_stats *stats)
{
	struct profile *from = full_profile(), *to = profile__new(NULL);
	char *text;

	assert_non_null(to);
	assert_int_equal(view__apply(from, config, to, stats), 0);
	text = profile_text(to);
	profile__free(to);
	profile__free(from);
	return text;
}

static void assert_view(const struct view_config *config, const char *const *expected, size_t n)
{
	char *want = lines_text(expected, n), *got = view_text(config, NULL);

	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* Everything kept: the view of a full profile with full options is that profile. */
static void full_options_give_the_profile_back(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	struct profile *from = full_profile();
	char *want = profile_text(from), *got;
	struct view_stats stats;

	profile__free(from);
	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	assert_int_equal(stats.stacks_dropped, 0);
	assert_int_equal(stats.count_dropped, 0);
	free(got);
	free(want);
}

static void process_root_name_strips_the_pid(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_NAME, .threads = true, .annotate = true };
	static const char *const expected[] = {
		NAME_ROOT T43 MAIN BAR BAZ READ SLEEPING " 5",
		NAME_ROOT T43 MAIN BAR QUX RUNNING " 3",
		NAME_ROOT T44 MAIN BAR QUX RUNNING " 2",
		NAME_ROOT T43 "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

static void process_root_none_drops_the_process_frame(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_NONE, .threads = true, .annotate = true };
	static const char *const expected[] = {
		T43 MAIN BAR BAZ READ SLEEPING " 5",
		T43 MAIN BAR QUX RUNNING " 3",
		T44 MAIN BAR QUX RUNNING " 2",
		T43 "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

/* Two threads ran the same code: without thread frames their stacks are one. */
static void threads_off_drops_thread_frames_and_merges(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .annotate = true };
	static const char *const expected[] = {
		PID_ROOT MAIN BAR BAZ READ SLEEPING " 5",
		PID_ROOT MAIN BAR QUX RUNNING " 5", /* 3 + 2 */
		PID_ROOT "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

static void annotate_off_gives_plain_java_frames(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true };
	static const char *const expected[] = {
		PID_ROOT T43 MAIN PLAIN_BAR PLAIN_BAZ READ SLEEPING " 5",
		PID_ROOT T43 MAIN PLAIN_BAR PLAIN_QUX RUNNING " 3",
		PID_ROOT T44 MAIN PLAIN_BAR PLAIN_QUX RUNNING " 2",
		PID_ROOT T43 "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

/*
 * One method seen compiled, inlined and interpreted at the same place is one
 * frame without annotations; a suffix is cut only from the kind it belongs
 * to, and a Java frame lacking its suffix keeps its name.
 */
static void annotate_off_merges_stacks_that_differ_in_how_java_ran(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true };
	struct profile *from = profile__new(NULL), *to = profile__new(NULL);
	uint32_t root, compiled, inlined, interp, native, unsuffixed, wrong, s[2];
	static const char *const expected[] = {
		"app (pid 42)|process;Foo.run|java 14",       /* 2 + 4 + 8 */
		"app (pid 42)|process;helper_[j]|native 16",  /* native: the suffix is part of the name */
		"app (pid 42)|process;Odd|java 32",
		"app (pid 42)|process;Bar.x_[i]|java 64",     /* compiled, so only "_[j]" is cut */
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;

	assert_non_null(from);
	assert_non_null(to);
	root = intern_ok(from, "app (pid 42)", FRAME_KIND_PROCESS);
	compiled = intern_ok(from, "Foo.run_[j]", FRAME_KIND_JAVA_COMPILED);
	inlined = intern_ok(from, "Foo.run_[i]", FRAME_KIND_JAVA_INLINED);
	interp = intern_ok(from, "Foo.run_[0]", FRAME_KIND_JAVA_INTERP);
	native = intern_ok(from, "helper_[j]", FRAME_KIND_NATIVE);
	unsuffixed = intern_ok(from, "Odd", FRAME_KIND_JAVA_COMPILED);
	wrong = intern_ok(from, "Bar.x_[i]", FRAME_KIND_JAVA_COMPILED);
	s[0] = root;
	s[1] = compiled;
	assert_int_equal(profile__add(from, s, 2, 2), 0);
	s[1] = inlined;
	assert_int_equal(profile__add(from, s, 2, 4), 0);
	s[1] = interp;
	assert_int_equal(profile__add(from, s, 2, 8), 0);
	s[1] = native;
	assert_int_equal(profile__add(from, s, 2, 16), 0);
	s[1] = unsuffixed;
	assert_int_equal(profile__add(from, s, 2, 32), 0);
	s[1] = wrong;
	assert_int_equal(profile__add(from, s, 2, 64), 0);

	assert_int_equal(view__apply(from, &config, to, NULL), 0);
	got = profile_text(to);
	assert_string_equal(got, want);
	assert_int_equal(profile__total(to), profile__total(from));
	free(got);
	free(want);
	profile__free(to);
	profile__free(from);
}

static void state_mask_keeps_matching_states_and_stateless_stacks(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID,
					    .threads = true,
					    .annotate = true,
					    .state_mask = 1u << JBPF_STATE_SLEEPING };
	static const char *const expected[] = {
		PID_ROOT T43 MAIN BAR BAZ READ SLEEPING " 5",
		PID_ROOT T43 "main|native;idle|native 7",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;
	struct view_stats stats;

	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	/* The two running stacks. */
	assert_int_equal(stats.stacks_dropped, 2);
	assert_int_equal(stats.count_dropped, full_stacks[1].count + full_stacks[2].count);
	free(got);
	free(want);
}

static void state_mask_of_every_state_present_drops_nothing(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID,
					    .threads = true,
					    .annotate = true,
					    .state_mask = (1u << JBPF_STATE_SLEEPING) | (1u << JBPF_STATE_RUNNING) };
	struct profile *from = full_profile();
	char *want = profile_text(from), *got;
	struct view_stats stats;

	profile__free(from);
	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	assert_int_equal(stats.stacks_dropped, 0);
	assert_int_equal(stats.count_dropped, 0);
	free(got);
	free(want);
}

static void compile(regex_t *re, const char *pattern)
{
	assert_int_equal(regcomp(re, pattern, REG_EXTENDED | REG_NOSUB), 0);
}

static void include_keeps_stacks_with_a_matching_frame(void **state)
{
	regex_t re;
	struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	static const char *const expected[] = {
		PID_ROOT T43 MAIN BAR BAZ READ SLEEPING " 5",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;
	struct view_stats stats;

	compile(&re, "^read_");
	config.include = &re;
	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	assert_int_equal(stats.stacks_dropped, ARRAY_SIZE(full_stacks) - 1);
	assert_int_equal(stats.count_dropped, full_total() - full_stacks[0].count);
	free(got);
	free(want);
	regfree(&re);
}

static void exclude_drops_stacks_with_a_matching_frame(void **state)
{
	regex_t re;
	struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	static const char *const expected[] = {
		PID_ROOT T43 MAIN BAR BAZ READ SLEEPING " 5",
		PID_ROOT T43 "main|native;idle|native 7",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;
	struct view_stats stats;

	compile(&re, "qux");
	config.exclude = &re;
	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	assert_int_equal(stats.stacks_dropped, 2);
	assert_int_equal(stats.count_dropped, full_stacks[1].count + full_stacks[2].count);
	free(got);
	free(want);
	regfree(&re);
}

/* Exclude wins over include when a stack matches both. */
static void include_and_exclude_combine(void **state)
{
	regex_t in, out;
	struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	static const char *const expected[] = {
		PID_ROOT T43 MAIN BAR QUX RUNNING " 3",
		PID_ROOT T44 MAIN BAR QUX RUNNING " 2",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;
	struct view_stats stats;

	compile(&in, "^Foo\\.");
	compile(&out, "^read_");
	config.include = &in;
	config.exclude = &out;
	got = view_text(&config, &stats);
	assert_string_equal(got, want);
	assert_int_equal(stats.stacks_dropped, 2);
	assert_int_equal(stats.count_dropped, full_stacks[0].count + full_stacks[3].count);
	free(got);
	free(want);
	regfree(&out);
	regfree(&in);
}

/*
 * Patterns see the frames as the view shows them: a suffix the view cuts,
 * a pid it strips and a thread frame it leaves out cannot match.
 */
static void patterns_match_frames_as_shown(void **state)
{
	regex_t re;
	struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	struct view_stats stats;
	char *got;

	compile(&re, "^Foo\\.qux$");
	config.include = &re;
	got = view_text(&config, &stats);
	assert_string_equal(got, "");
	assert_int_equal(stats.stacks_dropped, ARRAY_SIZE(full_stacks));
	assert_int_equal(stats.count_dropped, full_total());
	free(got);
	config.annotate = false;
	got = view_text(&config, &stats);
	assert_int_equal(stats.stacks_dropped, 2);
	assert_int_equal(stats.count_dropped, full_stacks[0].count + full_stacks[3].count);
	free(got);
	regfree(&re);

	compile(&re, "^app$");
	config.include = &re;
	got = view_text(&config, &stats);
	assert_int_equal(stats.stacks_dropped, ARRAY_SIZE(full_stacks));
	free(got);
	config.process_root = VIEW_ROOT_NAME;
	got = view_text(&config, &stats);
	assert_int_equal(stats.stacks_dropped, 0);
	free(got);
	regfree(&re);

	compile(&re, "tid=44");
	config.include = &re;
	got = view_text(&config, &stats);
	assert_int_equal(stats.stacks_dropped, ARRAY_SIZE(full_stacks) - 1);
	free(got);
	config.threads = false;
	got = view_text(&config, &stats);
	assert_string_equal(got, "");
	assert_int_equal(stats.stacks_dropped, ARRAY_SIZE(full_stacks));
	free(got);
	regfree(&re);
}

static void reverse_puts_the_leaf_first(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_NAME, .annotate = true, .reverse = true };
	static const char *const expected[] = {
		"[sleeping]|state;read_[k]|kernel;" BAZ BAR MAIN "app|process 5",
		"[running]|state;Foo.qux_[0]|interpreted;" BAR MAIN "app|process 5",
		"idle|native;" MAIN "app|process 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

/* A profile aggregated without roots gains none, whatever the view asks. */
static void profile_without_roots_is_viewed_as_it_is(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	struct profile *from = profile__new(NULL), *to = profile__new(NULL);
	uint32_t s[2];
	char *want, *got;

	assert_non_null(from);
	assert_non_null(to);
	s[0] = intern_ok(from, "main", FRAME_KIND_NATIVE);
	s[1] = intern_ok(from, "Foo.bar", FRAME_KIND_JAVA);
	assert_int_equal(profile__add(from, s, 2, 9), 0);
	assert_int_equal(profile__add(from, s, 1, 1), 0);
	assert_int_equal(view__apply(from, &config, to, NULL), 0);
	want = profile_text(from);
	got = profile_text(to);
	assert_string_equal(got, want);
	free(got);
	free(want);
	profile__free(to);
	profile__free(from);
}

/* Stacks held with nothing counted yet are not part of any view. */
static void stacks_with_no_count_are_left_out(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	struct profile *from = full_profile(), *to = profile__new(NULL);
	uint32_t id, index;

	assert_non_null(to);
	id = intern_ok(from, "never", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add_indexed(from, &id, 1, 0, &index), 0);
	assert_int_equal(view__apply(from, &config, to, NULL), 0);
	assert_int_equal(profile__stack_count(to), ARRAY_SIZE(full_stacks));
	profile__free(to);
	profile__free(from);
}

static void full_target_gives_enospc(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PID, .threads = true, .annotate = true };
	const struct profile_limits limits = { .max_stacks = 2 };
	struct profile *from = full_profile(), *to = profile__new(&limits);

	assert_non_null(to);
	assert_int_equal(view__apply(from, &config, to, NULL), -ENOSPC);
	assert_int_equal(profile__stack_count(to), limits.max_stacks);
	profile__free(to);
	profile__free(from);
}

/* ---- parsing root frames ----------------------------------------------------- */

static void parse_process_splits_name_and_pid(void **state)
{
	size_t len = 0;
	uint32_t pid = 0;

	assert_true(view__parse_process("app (pid 42)", &len, &pid));
	assert_int_equal(len, strlen("app"));
	assert_int_equal(pid, 42);
	assert_true(view__parse_process(" (pid 7)", &len, &pid));
	assert_int_equal(len, 0);
	assert_int_equal(pid, 7);
	assert_true(view__parse_process("x (pid 4294967295)", &len, &pid));
	assert_int_equal(len, 1);
	assert_int_equal(pid, UINT32_MAX);
}

/* The last " (pid N)" is the one the aggregator added; the name may hold anything. */
static void parse_process_takes_the_last_pid(void **state)
{
	const char *frame = "a (pid 1) (pid 2)";
	size_t len = 0;
	uint32_t pid = 0;

	assert_true(view__parse_process(frame, &len, &pid));
	assert_int_equal(len, strlen("a (pid 1)"));
	assert_int_equal(pid, 2);
}

static void parse_process_refuses_malformed_frames(void **state)
{
	static const char *const bad[] = {
		"",
		")",
		"app",
		"app (pid )",
		"app (pid)",
		"app (pid 42",
		"app (pid -1)",
		"app (pid 4x2)",
		"app(pid 42)",
		"(pid 42)",
		"app (pid 4294967296)",  /* UINT32_MAX + 1 */
		"app (pid 10000000001)", /* 11 digits, the last 10 a valid pid */
		"app (pid 99999999999999999999999)",
		"app (tid 42)",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t len;
		uint32_t pid;

		if (view__parse_process(bad[i], &len, &pid))
			fail_msg("\"%s\" parsed as a process frame", bad[i]);
	}
}

static void parse_thread_splits_name_and_tid(void **state)
{
	size_t len = 0;
	uint32_t tid = 0;

	assert_true(view__parse_thread("[worker tid=43]", &len, &tid));
	assert_int_equal(len, strlen("worker"));
	assert_int_equal(tid, 43);
	assert_true(view__parse_thread("[ tid=1]", &len, &tid));
	assert_int_equal(len, 0);
	assert_int_equal(tid, 1);
	assert_true(view__parse_thread("[x tid=5] tid=7]", &len, &tid));
	assert_int_equal(len, strlen("x tid=5]"));
	assert_int_equal(tid, 7);
}

static void parse_thread_refuses_malformed_frames(void **state)
{
	static const char *const bad[] = {
		"",
		"[",
		"]",
		"[]",
		"[worker]",
		"[worker tid=]",
		"[worker tid=43",
		"worker tid=43]",
		"[tid=43]",
		"[worker tid=4294967296]",
		"[worker tid=12345678901]",
		"[worker tid=-3]",
		"[worker pid=43]",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t len;
		uint32_t tid;

		if (view__parse_thread(bad[i], &len, &tid))
			fail_msg("\"%s\" parsed as a thread frame", bad[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_options_give_the_profile_back),
		cmocka_unit_test(process_root_name_strips_the_pid),
		cmocka_unit_test(process_root_none_drops_the_process_frame),
		cmocka_unit_test(threads_off_drops_thread_frames_and_merges),
		cmocka_unit_test(annotate_off_gives_plain_java_frames),
		cmocka_unit_test(annotate_off_merges_stacks_that_differ_in_how_java_ran),
		cmocka_unit_test(state_mask_keeps_matching_states_and_stateless_stacks),
		cmocka_unit_test(state_mask_of_every_state_present_drops_nothing),
		cmocka_unit_test(include_keeps_stacks_with_a_matching_frame),
		cmocka_unit_test(exclude_drops_stacks_with_a_matching_frame),
		cmocka_unit_test(include_and_exclude_combine),
		cmocka_unit_test(patterns_match_frames_as_shown),
		cmocka_unit_test(reverse_puts_the_leaf_first),
		cmocka_unit_test(profile_without_roots_is_viewed_as_it_is),
		cmocka_unit_test(stacks_with_no_count_are_left_out),
		cmocka_unit_test(full_target_gives_enospc),
		cmocka_unit_test(parse_process_splits_name_and_pid),
		cmocka_unit_test(parse_process_takes_the_last_pid),
		cmocka_unit_test(parse_process_refuses_malformed_frames),
		cmocka_unit_test(parse_thread_splits_name_and_tid),
		cmocka_unit_test(parse_thread_refuses_malformed_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
