/*
 * Unit tests for profile/profile.c: interning, root and state frames made
 * from their parts, merging, totals and limits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "profile/profile.h"

static void same_name_and_kind_interns_to_one_id(void **state)
{
	struct profile *p = profile__new(NULL);
	char copy[] = "main";
	uint32_t a, b, c;

	assert_non_null(p);
	a = intern_ok(p, "main", FRAME_KIND_NATIVE);
	b = intern_ok(p, "work", FRAME_KIND_NATIVE);
	c = intern_ok(p, copy, FRAME_KIND_NATIVE); /* equal text, other pointer */
	assert_int_equal(a, c);
	assert_int_not_equal(a, b);
	assert_int_equal(profile__frame_count(p), 2);
	/* The name was copied, not kept by pointer. */
	copy[0] = 'X';
	assert_string_equal(profile__frame_name(p, a), "main");
	assert_int_equal(profile__frame_kind(p, b), FRAME_KIND_NATIVE);
	profile__free(p);
}

static void different_kind_interns_to_another_id(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t native, jit;

	assert_non_null(p);
	native = intern_ok(p, "Foo.bar", FRAME_KIND_NATIVE);
	jit = intern_ok(p, "Foo.bar", FRAME_KIND_JIT);
	assert_int_not_equal(native, jit);
	assert_int_equal(profile__frame_kind(p, native), FRAME_KIND_NATIVE);
	assert_int_equal(profile__frame_kind(p, jit), FRAME_KIND_JIT);
	assert_string_equal(profile__frame_name(p, jit), "Foo.bar");
	assert_int_equal(intern_ok(p, "Foo.bar", FRAME_KIND_JIT), jit);
	assert_int_equal(profile__frame_count(p), 2);
	profile__free(p);
}

static void kind_names_are_distinct_words(void **state)
{
	for (int a = 0; a < FRAME_KIND_NR; a++) {
		assert_non_null(profile__frame_kind_name((enum frame_kind)a));
		for (int b = 0; b < a; b++)
			assert_string_not_equal(profile__frame_kind_name((enum frame_kind)a),
						profile__frame_kind_name((enum frame_kind)b));
	}
	assert_string_equal(profile__frame_kind_name(FRAME_KIND_KERNEL), "kernel");
	assert_non_null(profile__frame_kind_name(FRAME_KIND_NR));
}

static void identical_stacks_merge_and_totals_add_up(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t main_id, work_id, read_id, s1[3], s2[2];
	const uint32_t *frames;
	size_t depth;
	uint64_t count;

	assert_non_null(p);
	main_id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	work_id = intern_ok(p, "work", FRAME_KIND_NATIVE);
	read_id = intern_ok(p, "ksys_read_[k]", FRAME_KIND_KERNEL);
	s1[0] = main_id, s1[1] = work_id, s1[2] = read_id;
	s2[0] = main_id, s2[1] = work_id;

	assert_int_equal(profile__add(p, s1, 3, 5), 0);
	assert_int_equal(profile__add(p, s2, 2, 7), 0);
	assert_int_equal(profile__add(p, s1, 3, 2), 0);
	/* A prefix of another stack is a stack of its own. */
	assert_int_equal(profile__stack_count(p), 2);
	assert_int_equal(profile__total(p), 5 + 7 + 2);

	frames = profile__stack(p, 0, &depth, &count);
	assert_int_equal(depth, 3);
	assert_int_equal(count, 5 + 2);
	assert_memory_equal(frames, s1, sizeof(s1));
	frames = profile__stack(p, 1, &depth, &count);
	assert_int_equal(depth, 2);
	assert_int_equal(count, 7);
	assert_memory_equal(frames, s2, sizeof(s2));

	/* Out of range: nothing, not a crash. */
	assert_null(profile__stack(p, 2, &depth, &count));
	assert_int_equal(depth, 0);
	assert_int_equal(count, 0);
	profile__free(p);
}

static void empty_stack_is_counted(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t unused = 0;
	size_t depth = 1;
	uint64_t count = 0;

	assert_non_null(p);
	assert_int_equal(profile__add(p, &unused, 0, 4), 0);
	assert_int_equal(profile__add(p, &unused, 0, 1), 0);
	assert_int_equal(profile__stack_count(p), 1);
	profile__stack(p, 0, &depth, &count);
	assert_int_equal(depth, 0);
	assert_int_equal(count, 5);
	assert_int_equal(profile__total(p), 5);
	profile__free(p);
}

static void invalid_frame_id_is_rejected(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t ok, stack[2];

	assert_non_null(p);
	ok = intern_ok(p, "main", FRAME_KIND_NATIVE);
	stack[0] = ok;
	stack[1] = ok + 1; /* never interned */
	assert_int_equal(profile__add(p, stack, 2, 3), -EINVAL);
	assert_int_equal(profile__stack_count(p), 0);
	assert_int_equal(profile__total(p), 0);
	profile__free(p);
}

static void max_frames_gives_enospc_and_keeps_existing(void **state)
{
	struct profile_limits limits = { .max_frames = 2 };
	struct profile *p = profile__new(&limits);
	uint32_t a, b;

	assert_non_null(p);
	a = intern_ok(p, "a", FRAME_KIND_NATIVE);
	b = intern_ok(p, "b", FRAME_KIND_NATIVE);
	assert_int_equal(profile__intern(p, "c", FRAME_KIND_NATIVE), -ENOSPC);
	assert_int_equal(profile__intern(p, "a", FRAME_KIND_KERNEL), -ENOSPC);
	assert_int_equal(profile__frame_count(p), 2);
	/* Known frames are still found. */
	assert_int_equal(intern_ok(p, "a", FRAME_KIND_NATIVE), a);
	assert_int_equal(intern_ok(p, "b", FRAME_KIND_NATIVE), b);
	profile__free(p);
}

static void max_stacks_gives_enospc_and_changes_nothing(void **state)
{
	struct profile_limits limits = { .max_stacks = 2 };
	struct profile *p = profile__new(&limits);
	uint32_t a, b, c;
	size_t depth;
	uint64_t count;

	assert_non_null(p);
	a = intern_ok(p, "a", FRAME_KIND_NATIVE);
	b = intern_ok(p, "b", FRAME_KIND_NATIVE);
	c = intern_ok(p, "c", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &a, 1, 1), 0);
	assert_int_equal(profile__add(p, &b, 1, 2), 0);
	assert_int_equal(profile__add(p, &c, 1, 4), -ENOSPC);
	assert_int_equal(profile__stack_count(p), 2);
	assert_int_equal(profile__total(p), 1 + 2);
	/* A stack already held still grows. */
	assert_int_equal(profile__add(p, &b, 1, 8), 0);
	assert_int_equal(profile__total(p), 1 + 2 + 8);
	profile__stack(p, 1, &depth, &count);
	assert_int_equal(count, 2 + 8);
	profile__free(p);
}

static void max_depth_keeps_the_leaf_end(void **state)
{
	struct profile_limits limits = { .max_depth = 3 };
	struct profile *p = profile__new(&limits);
	uint32_t ids[5];
	const uint32_t *frames;
	size_t depth;
	uint64_t count;
	char name[16];

	assert_non_null(p);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ids[i] = intern_ok(p, name, FRAME_KIND_NATIVE);
	}
	assert_int_equal(profile__add(p, ids, 5, 1), 0);
	frames = profile__stack(p, 0, &depth, &count);
	assert_int_equal(depth, 3);
	assert_memory_equal(frames, &ids[2], 3 * sizeof(*ids));
	/* The same stack cut the same way merges with it. */
	assert_int_equal(profile__add(p, &ids[2], 3, 1), 0);
	assert_int_equal(profile__stack_count(p), 1);
	profile__stack(p, 0, &depth, &count);
	assert_int_equal(count, 2);
	profile__free(p);
}

/* Enough frames and stacks to grow both hash tables many times over. */
static void many_stacks_survive_table_growth(void **state)
{
	enum { NR_FRAMES = 3000, NR_STACKS = 20000 };
	struct profile *p = profile__new(NULL);
	uint64_t expected_total = 0;
	char name[32];

	assert_non_null(p);
	for (uint32_t i = 0; i < NR_FRAMES; i++) {
		snprintf(name, sizeof(name), "function_%u", i);
		assert_int_equal(profile__intern(p, name, FRAME_KIND_NATIVE), i);
	}
	for (uint32_t i = 0; i < NR_FRAMES; i++) {
		snprintf(name, sizeof(name), "function_%u", i);
		assert_int_equal(profile__intern(p, name, FRAME_KIND_NATIVE), i);
	}
	/* Stack i: (i % 7, i % NR_FRAMES, i / 7), distinct for every i. */
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < NR_STACKS; i++) {
			uint32_t s[3] = { i % 7, i % NR_FRAMES, i / 7 };

			assert_int_equal(profile__add(p, s, 3, i + 1), 0);
			expected_total += i + 1;
		}
	}
	assert_int_equal(profile__stack_count(p), NR_STACKS);
	assert_int_equal(profile__total(p), expected_total);
	for (uint32_t i = 0; i < NR_STACKS; i++) {
		uint32_t s[3] = { i % 7, i % NR_FRAMES, i / 7 };
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);

		assert_int_equal(depth, 3);
		assert_memory_equal(frames, s, sizeof(s));
		assert_int_equal(count, 2 * (uint64_t)(i + 1));
	}
	profile__free(p);
}

/* Root and state frames: their text made from their parts, the parts kept. */
static void root_and_state_frames_keep_their_parts(void **state)
{
	struct profile *p = profile__new(NULL);
	int64_t app, app_no_pid, worker, worker_no_tid, sleeping, unknown, plain;

	assert_non_null(p);
	app = profile__intern_process(p, "app", 42);
	app_no_pid = profile__intern_process(p, "app", -1);
	worker = profile__intern_thread(p, "worker", 4294967295);
	worker_no_tid = profile__intern_thread(p, "worker", -1);
	sleeping = profile__intern_state(p, JBPF_STATE_SLEEPING);
	unknown = profile__intern_state(p, JBPF_STATE_NR);
	plain = profile__intern(p, "app", FRAME_KIND_NATIVE);
	assert_true(app >= 0 && app_no_pid >= 0 && worker >= 0 && worker_no_tid >= 0 && sleeping >= 0 &&
		    unknown >= 0 && plain >= 0);

	assert_string_equal(profile__frame_name(p, (uint32_t)app), "app (pid 42)");
	assert_string_equal(profile__root_name(p, (uint32_t)app), "app");
	assert_int_equal(profile__root_id(p, (uint32_t)app), 42);
	assert_string_equal(profile__frame_name(p, (uint32_t)app_no_pid), "app");
	assert_string_equal(profile__root_name(p, (uint32_t)app_no_pid), "app");
	assert_int_equal(profile__root_id(p, (uint32_t)app_no_pid), -1);
	assert_int_equal(profile__frame_kind(p, (uint32_t)app_no_pid), FRAME_KIND_PROCESS);

	assert_string_equal(profile__frame_name(p, (uint32_t)worker), "[worker tid=4294967295]");
	assert_string_equal(profile__root_name(p, (uint32_t)worker), "worker");
	assert_int_equal(profile__root_id(p, (uint32_t)worker), 4294967295);
	assert_string_equal(profile__frame_name(p, (uint32_t)worker_no_tid), "[worker]");
	assert_int_equal(profile__root_id(p, (uint32_t)worker_no_tid), -1);

	assert_string_equal(profile__frame_name(p, (uint32_t)sleeping), "[sleeping]");
	assert_int_equal(profile__frame_state(p, (uint32_t)sleeping), JBPF_STATE_SLEEPING);
	assert_string_equal(profile__frame_name(p, (uint32_t)unknown), "[unknown state]");
	assert_int_equal(profile__frame_state(p, (uint32_t)unknown), -1);

	/* Other frames have no parts; the same parts give the same frame. */
	assert_null(profile__root_name(p, (uint32_t)plain));
	assert_int_equal(profile__root_id(p, (uint32_t)plain), -1);
	assert_int_equal(profile__frame_state(p, (uint32_t)plain), -1);
	assert_int_equal(profile__frame_state(p, (uint32_t)app), -1);
	assert_null(profile__root_name(p, (uint32_t)sleeping));
	assert_int_equal(profile__intern_process(p, "app", 42), app);
	assert_int_equal(profile__intern_state(p, JBPF_STATE_SLEEPING), sleeping);
	profile__free(p);
}

/* The frames made from parts cannot be made from text: nothing would give their parts. */
static void root_and_state_kinds_are_not_interned_as_text(void **state)
{
	struct profile *p = profile__new(NULL);

	assert_non_null(p);
	assert_int_equal(profile__intern(p, "app (pid 42)", FRAME_KIND_PROCESS), -EINVAL);
	assert_int_equal(profile__intern(p, "[worker tid=1]", FRAME_KIND_THREAD), -EINVAL);
	assert_int_equal(profile__intern(p, "[sleeping]", FRAME_KIND_STATE), -EINVAL);
	assert_int_equal(profile__frame_count(p), 0);
	profile__free(p);
}

/* A name longer than the buffer the text is usually made in comes out whole. */
static void long_root_names_are_kept_whole(void **state)
{
	struct profile *p = profile__new(NULL);
	char name[1000], want[1100];
	int64_t id;

	assert_non_null(p);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	id = profile__intern_thread(p, name, 7);
	assert_true(id >= 0);
	snprintf(want, sizeof(want), "[%s tid=7]", name);
	assert_string_equal(profile__frame_name(p, (uint32_t)id), want);
	assert_string_equal(profile__root_name(p, (uint32_t)id), name);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_name_and_kind_interns_to_one_id),
		cmocka_unit_test(different_kind_interns_to_another_id),
		cmocka_unit_test(kind_names_are_distinct_words),
		cmocka_unit_test(identical_stacks_merge_and_totals_add_up),
		cmocka_unit_test(empty_stack_is_counted),
		cmocka_unit_test(invalid_frame_id_is_rejected),
		cmocka_unit_test(max_frames_gives_enospc_and_keeps_existing),
		cmocka_unit_test(max_stacks_gives_enospc_and_changes_nothing),
		cmocka_unit_test(max_depth_keeps_the_leaf_end),
		cmocka_unit_test(many_stacks_survive_table_growth),
		cmocka_unit_test(root_and_state_frames_keep_their_parts),
		cmocka_unit_test(root_and_state_kinds_are_not_interned_as_text),
		cmocka_unit_test(long_root_names_are_kept_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
