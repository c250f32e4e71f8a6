/*
 * Unit tests for profile/view.c: each view option applied to a profile
 * aggregated in full, and root frames whose names look like their text.
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

/* A frame of the tables below, as frame_ok takes it. */
struct frame_spec {
	const char *name;
	enum frame_kind kind;
	int64_t number;
};

#define F_APP { "app", FRAME_KIND_PROCESS, 42 }
#define F_T43 { "worker", FRAME_KIND_THREAD, 43 }
#define F_T44 { "worker", FRAME_KIND_THREAD, 44 }
#define F_MAIN { "main", FRAME_KIND_NATIVE, 0 }
#define F_IDLE { "idle", FRAME_KIND_NATIVE, 0 }
#define F_BAR { "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, 0 }
#define F_BAZ { "Foo.baz_[i]", FRAME_KIND_JAVA_INLINED, 0 }
#define F_QUX { "Foo.qux_[0]", FRAME_KIND_JAVA_INTERP, 0 }
#define F_READ { "read_[k]", FRAME_KIND_KERNEL, 0 }
#define F_SLEEPING { "sleeping", FRAME_KIND_STATE, JBPF_STATE_SLEEPING }
#define F_RUNNING { "running", FRAME_KIND_STATE, JBPF_STATE_RUNNING }

/* The stacks of the full profile, root first, and their counts. */
static const struct {
	struct frame_spec frames[8];  /* ends at a NULL name */
	uint64_t count;
} full_stacks[] = {
	{ { F_APP, F_T43, F_MAIN, F_BAR, F_BAZ, F_READ, F_SLEEPING }, 5 },
	{ { F_APP, F_T43, F_MAIN, F_BAR, F_QUX, F_RUNNING }, 3 },
	{ { F_APP, F_T44, F_MAIN, F_BAR, F_QUX, F_RUNNING }, 2 },
	{ { F_APP, F_T43, F_MAIN, F_IDLE }, 7 },
};

static uint32_t frame_of(struct profile *p, const struct frame_spec *f)
{
	return frame_ok(p, f->name, f->kind, f->number);
}

static struct profile *full_profile(void)
{
	struct profile *p = profile__new(NULL);

	assert_non_null(p);
	for (size_t i = 0; i < ARRAY_SIZE(full_stacks); i++) {
		uint32_t ids[8];
		size_t depth = 0;

		for (; full_stacks[i].frames[depth].name; depth++)
			ids[depth] = frame_of(p, &full_stacks[i].frames[depth]);
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	const struct view_config config = { .process_root = VIEW_ROOT_EXECUTABLE, .threads = true, .annotate = true };
	static const char *const expected[] = {
		NAME_ROOT T43 MAIN BAR BAZ READ SLEEPING " 5",
		NAME_ROOT T43 MAIN BAR QUX RUNNING " 3",
		NAME_ROOT T44 MAIN BAR QUX RUNNING " 2",
		NAME_ROOT T43 "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

/*
 * Four processes: two instances of one Java program (one in a container),
 * another program of the same executable, and a native program twice.
 * Each grouping shows and merges them as it says.
 */
static char *grouped(enum view_process_root root)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const struct process_parts parts[] = {
		{ .name = "java", .program = "com.example.Main", .pid = 10 },
		{ .name = "java", .program = "com.example.Main", .container = id, .pid = 11 },
		{ .name = "java", .program = "billing.jar", .pid = 12 },
		{ .name = "cron", .pid = 13 },
		{ .name = "cron", .program = "cron", .pid = 14 },
	};
	struct profile *from = profile__new(NULL), *to = profile__new(NULL);
	char *text;

	assert_non_null(from);
	assert_non_null(to);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		uint32_t ids[2] = { (uint32_t)profile__intern_process_parts(from, &parts[i]),
				    frame_ok(from, "main", FRAME_KIND_NATIVE, 0) };

		assert_int_equal(profile__add(from, ids, 2, 1u << i), 0);
	}
	assert_int_equal(view__apply(from, &(struct view_config){ .process_root = root }, to, NULL), 0);
	text = profile_text(to);
	profile__free(from);
	profile__free(to);
	return text;
}

static void process_groupings_show_and_merge_as_they_say(void **state)
{
	static const char *const by_process[] = {
		"com.example.Main (java, pid 10)|process;main|native 1",
		"com.example.Main (java, pid 11, container 0123456789ab)|process;main|native 2",
		"billing.jar (java, pid 12)|process;main|native 4",
		"cron (pid 13)|process;main|native 8",
		"cron (pid 14)|process;main|native 16",
	};
	static const char *const by_service[] = {
		"com.example.Main (java)|process;main|native 3",
		"billing.jar (java)|process;main|native 4",
		"cron|process;main|native 24",
	};
	static const char *const by_executable[] = {
		"java|process;main|native 7",
		"cron|process;main|native 24",
	};
	static const char *const by_none[] = { "main|native 31" };
	const struct {
		enum view_process_root root;
		const char *const *lines;
		size_t n;
	} cases[] = {
		{ VIEW_ROOT_PROCESS, by_process, ARRAY_SIZE(by_process) },
		{ VIEW_ROOT_SERVICE, by_service, ARRAY_SIZE(by_service) },
		{ VIEW_ROOT_EXECUTABLE, by_executable, ARRAY_SIZE(by_executable) },
		{ VIEW_ROOT_NONE, by_none, ARRAY_SIZE(by_none) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *want = lines_text(cases[i].lines, cases[i].n), *got = grouped(cases[i].root);

		assert_string_equal(got, want);
		free(got);
		free(want);
	}
}

/* The words --group-by takes, and those of older recordings. */
static void grouping_words(void **state)
{
	for (int i = 0; i < VIEW_ROOT_NR; i++)
		assert_int_equal(view__root_of_word(view__root_word((enum view_process_root)i)), i);
	assert_int_equal(view__root_of_word("name"), VIEW_ROOT_EXECUTABLE);
	assert_int_equal(view__root_of_word("pid"), VIEW_ROOT_PROCESS);
	assert_int_equal(view__root_of_word("services"), -1);
	assert_int_equal(view__root_of_word(""), -1);
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .annotate = true };
	static const char *const expected[] = {
		PID_ROOT MAIN BAR BAZ READ SLEEPING " 5",
		PID_ROOT MAIN BAR QUX RUNNING " 5", /* 3 + 2 */
		PID_ROOT "main|native;idle|native 7",
	};

	assert_view(&config, expected, ARRAY_SIZE(expected));
}

static void annotate_off_gives_plain_java_frames(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true };
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true };
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
	root = frame_ok(from, "app", FRAME_KIND_PROCESS, 42);
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS,
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS,
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
	struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	config.process_root = VIEW_ROOT_EXECUTABLE;
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
	const struct view_config config = { .process_root = VIEW_ROOT_EXECUTABLE, .annotate = true, .reverse = true };
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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

/*
 * A profile of two events: the view of one keeps its stacks without their
 * event frame, and leaves the other's out without counting them as
 * dropped; without an event every stack keeps its event frame.
 */
static void event_view_takes_one_event_out(void **state)
{
	const struct view_config all = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
	struct view_config cpu = all, nativemem = all, none = all;
	struct profile *from = profile__new(NULL), *to;
	struct view_stats stats;
	uint32_t s[3];
	char *got;

	(void)state;
	assert_non_null(from);
	s[0] = intern_ok(from, "cpu", FRAME_KIND_EVENT);
	s[1] = intern_ok(from, "main", FRAME_KIND_NATIVE);
	s[2] = intern_ok(from, "spin", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(from, s, 3, 7), 0);
	s[0] = intern_ok(from, "nativemem", FRAME_KIND_EVENT);
	s[2] = intern_ok(from, "malloc", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add_objects(from, s, 3, 4096, 2), 0);
	cpu.event = "cpu";
	nativemem.event = "nativemem";
	none.event = "alloc";

	to = profile__new(NULL);
	assert_int_equal(view__apply(from, &cpu, to, &stats), 0);
	got = profile_text(to);
	assert_string_equal(got, "main|native;spin|native 7\n");
	assert_int_equal(stats.stacks_dropped, 0);
	free(got);
	profile__free(to);

	to = profile__new(NULL);
	assert_int_equal(view__apply(from, &nativemem, to, NULL), 0);
	got = profile_text(to);
	assert_string_equal(got, "main|native;malloc|native 4096\n");
	assert_int_equal(profile__stack_objects(to, 0), 2);
	free(got);
	profile__free(to);

	to = profile__new(NULL);
	assert_int_equal(view__apply(from, &none, to, NULL), 0);
	assert_int_equal(profile__total(to), 0);
	profile__free(to);

	to = profile__new(NULL);
	assert_int_equal(view__apply(from, &all, to, NULL), 0);
	got = profile_text(to);
	assert_string_equal(got, "cpu|event;main|native;spin|native 7\nnativemem|event;main|native;malloc|native 4096\n");
	free(got);
	profile__free(to);
	profile__free(from);
}

/* Stacks held with nothing counted yet are not part of any view. */
static void stacks_with_no_count_are_left_out(void **state)
{
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
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
	const struct view_config config = { .process_root = VIEW_ROOT_PROCESS, .threads = true, .annotate = true };
	const struct profile_limits limits = { .max_stacks = 2 };
	struct profile *from = full_profile(), *to = profile__new(&limits);

	assert_non_null(to);
	assert_int_equal(view__apply(from, &config, to, NULL), -ENOSPC);
	assert_int_equal(profile__stack_count(to), limits.max_stacks);
	profile__free(to);
	profile__free(from);
}

/* ---- root frames made from parts ---------------------------------------------- */

/*
 * A name may hold what a root frame's text adds ("(pid N)", "tid=N]"): the
 * view takes the name and the number from the frame's parts, so the name
 * comes out whole, and the pid goes only where the view asks for it.
 */
static void root_frames_keep_names_that_look_like_their_text(void **state)
{
	struct profile *from = profile__new(NULL), *to;
	uint32_t s[3];
	char *got;

	assert_non_null(from);
	s[0] = frame_ok(from, "a (pid 1)", FRAME_KIND_PROCESS, 2);
	s[1] = frame_ok(from, "x tid=5]", FRAME_KIND_THREAD, 7);
	s[2] = intern_ok(from, "main", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(from, s, 3, 1), 0);

	to = profile__new(NULL);
	assert_non_null(to);
	assert_int_equal(view__apply(from, &(struct view_config){ .process_root = VIEW_ROOT_EXECUTABLE, .threads = true },
				     to, NULL), 0);
	got = profile_text(to);
	assert_string_equal(got, "a (pid 1)|process;[x tid=5] tid=7]|thread;main|native 1\n");
	assert_string_equal(profile__root_name(to, 0), "a (pid 1)");
	assert_int_equal(profile__root_id(to, 0), -1);
	free(got);
	profile__free(to);

	to = profile__new(NULL);
	assert_non_null(to);
	assert_int_equal(view__apply(from, &(struct view_config){ .process_root = VIEW_ROOT_PROCESS }, to, NULL), 0);
	got = profile_text(to);
	assert_string_equal(got, "a (pid 1) (pid 2)|process;main|native 1\n");
	assert_int_equal(profile__root_id(to, 0), 2);
	free(got);
	profile__free(to);
	profile__free(from);
}

/*
 * Virtual threads: stacks through a [virtual thread #ID] marker, run by
 * two carriers, one with its outer frames frozen, beside a platform
 * thread's. By default the carrier's frames go; with --threads the marker
 * leads, then its carrier's thread frame; without, its id goes; with
 * --carrier-frames every frame stays where it is.
 */
static void virtual_threads_start_at_their_marker(void **state)
{
	static const struct {
		struct frame_spec frames[6];
		uint64_t count;
	} stacks[] = {
		{ { F_T43, { "start", FRAME_KIND_NATIVE, 0 }, { "Continuation.run", FRAME_KIND_JAVA, 0 },
		    { "[virtual thread #7]", FRAME_KIND_CARRIER, 0 }, { "V.five", FRAME_KIND_JAVA, 0 } },
		  3 },
		{ { F_T44, { "start", FRAME_KIND_NATIVE, 0 }, { "Continuation.run", FRAME_KIND_JAVA, 0 },
		    { "[virtual thread #7]", FRAME_KIND_CARRIER, 0 }, { "V.five", FRAME_KIND_JAVA, 0 } },
		  2 },
		{ { F_T44, { "start", FRAME_KIND_NATIVE, 0 }, { "Continuation.run", FRAME_KIND_JAVA, 0 },
		    { "[virtual thread #9 req-3]", FRAME_KIND_CARRIER, 0 }, { "V.five", FRAME_KIND_JAVA, 0 } },
		  1 },
		{ { F_T43, { "start", FRAME_KIND_NATIVE, 0 }, { "Continuation.run", FRAME_KIND_JAVA, 0 },
		    { "[virtual thread #8, outer frames frozen]", FRAME_KIND_CARRIER, 0 }, { "V.two", FRAME_KIND_JAVA, 0 } },
		  1 },
		{ { F_T43, F_MAIN, { "Foo.bar", FRAME_KIND_JAVA, 0 } }, 4 },
	};
	static const struct {
		struct view_config config;
		const char *text;
	} views[] = {
		{ { .process_root = VIEW_ROOT_NONE },
		  "[virtual thread, outer frames frozen]|carrier;V.two|java 1\n"
		  "[virtual thread]|carrier;V.five|java 6\n"
		  "main|native;Foo.bar|java 4\n" },
		{ { .process_root = VIEW_ROOT_NONE, .threads = true, .virtual_thread_ids = true },
		  "[virtual thread #7]|carrier;[worker tid=43]|thread;V.five|java 3\n"
		  "[virtual thread #7]|carrier;[worker tid=44]|thread;V.five|java 2\n"
		  "[virtual thread #8, outer frames frozen]|carrier;[worker tid=43]|thread;V.two|java 1\n"
		  "[virtual thread #9 req-3]|carrier;[worker tid=44]|thread;V.five|java 1\n"
		  "[worker tid=43]|thread;main|native;Foo.bar|java 4\n" },
		{ { .process_root = VIEW_ROOT_NONE, .carrier_frames = true },
		  "main|native;Foo.bar|java 4\n"
		  "start|native;Continuation.run|java;[virtual thread, outer frames frozen]|carrier;V.two|java 1\n"
		  "start|native;Continuation.run|java;[virtual thread]|carrier;V.five|java 6\n" },
		{ { .process_root = VIEW_ROOT_NONE, .threads = true, .carrier_frames = true, .virtual_thread_ids = true },
		  "[worker tid=43]|thread;main|native;Foo.bar|java 4\n"
		  "[worker tid=43]|thread;start|native;Continuation.run|java;[virtual thread #7]|carrier;V.five|java 3\n"
		  "[worker tid=43]|thread;start|native;Continuation.run|java;[virtual thread #8, outer frames frozen]|carrier;"
		  "V.two|java 1\n"
		  "[worker tid=44]|thread;start|native;Continuation.run|java;[virtual thread #7]|carrier;V.five|java 2\n"
		  "[worker tid=44]|thread;start|native;Continuation.run|java;[virtual thread #9 req-3]|carrier;V.five|java 1\n" },
	};
	struct profile *from = profile__new(NULL);

	(void)state;
	assert_non_null(from);
	for (size_t i = 0; i < ARRAY_SIZE(stacks); i++) {
		uint32_t ids[6];
		size_t depth = 0;

		for (; stacks[i].frames[depth].name; depth++)
			ids[depth] = frame_of(from, &stacks[i].frames[depth]);
		assert_int_equal(profile__add(from, ids, depth, stacks[i].count), 0);
	}
	for (size_t v = 0; v < ARRAY_SIZE(views); v++) {
		struct profile *to = profile__new(NULL);
		char *got;

		assert_non_null(to);
		assert_int_equal(view__apply(from, &views[v].config, to, NULL), 0);
		got = profile_text(to);
		assert_string_equal(got, views[v].text);
		free(got);
		profile__free(to);
	}
	profile__free(from);
}

/*
 * Java frames with positions (one frame per line): dropped, a method is one
 * frame again; shown, each line is in its name, before the suffix when
 * annotated; kept, names stay and positions go through (pprof, JFR).
 */
static void lines_dropped_shown_or_kept(void **state)
{
	struct profile *from = profile__new(NULL);
	const struct frame_position at10 = { 10, 3, "Foo.java" }, at12 = { 12, 7, "Foo.java" }, at5 = { 5, 0, NULL };
	uint32_t root, main_, bar10, bar12, qux, s[3];
	static const struct {
		struct view_config config;
		const char *text;
	} views[] = {
		{ { .process_root = VIEW_ROOT_NONE, .lines = VIEW_LINES_DROP },
		  "main|native;Foo.bar|java 5\nmain|native;Foo.qux|java 4\n" },
		{ { .process_root = VIEW_ROOT_NONE, .lines = VIEW_LINES_SHOW },
		  "main|native;Foo.bar:10|java 2\nmain|native;Foo.bar:12|java 3\nmain|native;Foo.qux:5|java 4\n" },
		{ { .process_root = VIEW_ROOT_NONE, .lines = VIEW_LINES_SHOW, .annotate = true },
		  "main|native;Foo.bar:10_[j]|compiled 2\nmain|native;Foo.bar:12_[j]|compiled 3\n"
		  "main|native;Foo.qux:5|java 4\n" },
	};

	(void)state;
	assert_non_null(from);
	root = frame_ok(from, "app", FRAME_KIND_PROCESS, 42);
	main_ = frame_ok(from, "main", FRAME_KIND_NATIVE, 0);
	bar10 = (uint32_t)profile__intern_at(from, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at10);
	bar12 = (uint32_t)profile__intern_at(from, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at12);
	qux = (uint32_t)profile__intern_at(from, "Foo.qux", FRAME_KIND_JAVA, &at5);
	assert_true(bar10 != bar12);
	assert_int_equal(profile__intern_at(from, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at10), bar10);
	s[0] = root, s[1] = main_, s[2] = bar10;
	assert_int_equal(profile__add(from, s, 3, 2), 0);
	s[2] = bar12;
	assert_int_equal(profile__add(from, s, 3, 3), 0);
	s[2] = qux;
	assert_int_equal(profile__add(from, s, 3, 4), 0);
	for (size_t v = 0; v < ARRAY_SIZE(views); v++) {
		struct profile *to = profile__new(NULL);
		char *got;

		assert_non_null(to);
		assert_int_equal(view__apply(from, &views[v].config, to, NULL), 0);
		assert_false(profile__has_positions(to));
		got = profile_text(to);
		assert_string_equal(got, views[v].text);
		free(got);
		profile__free(to);
	}
	{
		const struct view_config keep = { .process_root = VIEW_ROOT_PROCESS, .annotate = true,
						  .lines = VIEW_LINES_KEEP };
		struct profile *to = profile__new(NULL);
		size_t lines_seen = 0;

		assert_non_null(to);
		assert_int_equal(view__apply(from, &keep, to, NULL), 0);
		for (uint32_t f = 0; f < profile__frame_count(to); f++) {
			struct frame_position pos = profile__frame_position(to, f);

			if (!strcmp(profile__frame_name(to, f), "Foo.bar_[j]")) {
				assert_true((pos.line == 10 && pos.bci == 3) || (pos.line == 12 && pos.bci == 7));
				assert_string_equal(pos.file, "Foo.java");
				lines_seen++;
			}
		}
		assert_int_equal(lines_seen, 2);
		profile__free(to);
	}
	profile__free(from);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_options_give_the_profile_back),
		cmocka_unit_test(process_root_name_strips_the_pid),
		cmocka_unit_test(process_groupings_show_and_merge_as_they_say),
		cmocka_unit_test(grouping_words),
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
		cmocka_unit_test(event_view_takes_one_event_out),
		cmocka_unit_test(full_target_gives_enospc),
		cmocka_unit_test(root_frames_keep_names_that_look_like_their_text),
		cmocka_unit_test(virtual_threads_start_at_their_marker),
		cmocka_unit_test(lines_dropped_shown_or_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
