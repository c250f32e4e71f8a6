/*
 * Unit tests for profile/timeline.c and the time range of profile/view.c:
 * samples of one stack merge into a span while they are close, spans past
 * the bound are refused and their weight counted, a span's part of a range
 * is its share of the range's ticks, a stack's count spread over its spans
 * sums back to it exactly, and a view of ticks [from, to) keeps what was
 * counted there (and the spans, cut) and nothing else.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "profile/timeline.h"
#include "profile/view.h"

static void close_samples_merge(void **state)
{
	struct timeline *t = timeline__new(0);

	(void)state;
	assert_non_null(t);
	for (uint32_t tick = 100; tick < 100 + TIMELINE_MERGE_TICKS; tick++)
		assert_int_equal(timeline__add(t, 3, tick, tick, 1), 0);
	assert_int_equal(timeline__count(t), 1);
	/* The next tick is a bucket later: a span of its own. */
	assert_int_equal(timeline__add(t, 3, 100 + TIMELINE_MERGE_TICKS, 100 + TIMELINE_MERGE_TICKS, 1), 0);
	/* Another stack, and a late sample of the first: spans of their own. */
	assert_int_equal(timeline__add(t, 4, 101, 101, 1), 0);
	assert_int_equal(timeline__add(t, 3, 50, 50, 1), 0);
	assert_int_equal(timeline__count(t), 4);
	assert_int_equal(timeline__spans(t)[0].first, 100);
	assert_int_equal(timeline__spans(t)[0].last, 100 + TIMELINE_MERGE_TICKS - 1);
	assert_int_equal(timeline__spans(t)[0].weight, TIMELINE_MERGE_TICKS);
	assert_int_equal(timeline__end(t), 100 + TIMELINE_MERGE_TICKS);
	timeline__free(t);
}

static void waits_do_not_merge_and_swap(void **state)
{
	struct timeline *t = timeline__new(0);

	(void)state;
	assert_non_null(t);
	assert_int_equal(timeline__add(t, 0, 10, 5, 700), 0);
	assert_int_equal(timeline__add(t, 0, 6, 8, 300), 0);
	assert_int_equal(timeline__add(t, 0, 9, 9, 0), 0); /* nothing to place */
	assert_int_equal(timeline__count(t), 2);
	assert_int_equal(timeline__spans(t)[0].first, 5);
	assert_int_equal(timeline__spans(t)[0].last, 10);
	timeline__free(t);
}

static void bound_refuses_and_counts(void **state)
{
	struct timeline *t = timeline__new(2);

	(void)state;
	assert_non_null(t);
	assert_int_equal(timeline__add(t, 0, 0, 0, 1), 0);
	assert_int_equal(timeline__add(t, 1, 0, 0, 1), 0);
	assert_int_equal(timeline__add(t, 2, 0, 0, 5), -ENOSPC);
	/* A merge needs no room. */
	assert_int_equal(timeline__add(t, 1, 3, 3, 1), 0);
	assert_int_equal(timeline__count(t), 2);
	assert_int_equal(timeline__lost(t), 5);
	timeline__free(t);
}

static void part_of_a_range(void **state)
{
	struct timeline_span s = { .first = 10, .last = 19, .weight = 10 };

	(void)state;
	assert_true(timeline__span_part(&s, 0, 10) == 0);
	assert_true(timeline__span_part(&s, 10, 20) == 1);
	assert_true(timeline__span_part(&s, 15, 100) == 0.5);
	assert_true(timeline__span_part(&s, 12, 13) == 0.1);
	assert_true(timeline__span_part(&s, 20, 30) == 0);
}

static void shares_sum_to_the_count(void **state)
{
	const uint32_t weights[] = { 7, 1, 13, 2, 9, UINT32_MAX };
	const uint64_t counts[] = { 0, 1, 29, 1000003, UINT64_MAX / 3 };

	(void)state;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		uint64_t sum = 0, carry = 0, total = 0;

		for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
			total += weights[i];
		for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++) {
			struct timeline_span s = { .weight = weights[i] };

			sum += timeline__span_share(&s, counts[c], total, &carry);
		}
		assert_true(sum == counts[c]);
	}
}

/* Two stacks: "a" counted in ticks 0..999, "b" in 1000..1999, one sample a tick; "c" with no time. */
static struct profile *two_phases(void)
{
	struct profile *p = profile__new(NULL);
	uint32_t a, b, c, ia, ib, ic;

	assert_non_null(p);
	a = (uint32_t)profile__intern(p, "a", FRAME_KIND_NATIVE);
	b = (uint32_t)profile__intern(p, "b", FRAME_KIND_NATIVE);
	c = (uint32_t)profile__intern(p, "c", FRAME_KIND_NATIVE);
	for (uint32_t tick = 0; tick < 2000; tick++) {
		uint32_t *index = tick < 1000 ? &ia : &ib;

		assert_int_equal(profile__add_indexed(p, tick < 1000 ? &a : &b, 1, 1, index), 0);
		assert_int_equal(profile__add_span(p, *index, tick, tick, 1), 0);
	}
	assert_int_equal(profile__add_indexed(p, &c, 1, 5, &ic), 0);
	return p;
}

static uint64_t count_of(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < profile__stack_count(p); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);

		if (depth == 1 && !strcmp(profile__frame_name(p, frames[0]), name))
			return count;
	}
	return 0;
}

static void view_cuts_a_range(void **state)
{
	struct profile *p = two_phases(), *first = profile__new(NULL), *both = profile__new(NULL),
		       *again = profile__new(NULL);
	struct view_stats stats;
	uint64_t weight = 0;

	(void)state;
	assert_non_null(first);
	assert_non_null(both);
	assert_non_null(again);
	assert_int_equal(view__apply(p, &(struct view_config){ .time_range = true, .from_tick = 100, .to_tick = 400 },
				     first, &stats),
			 0);
	assert_int_equal(count_of(first, "a"), 300);
	assert_int_equal(count_of(first, "b"), 0);
	assert_int_equal(count_of(first, "c"), 0);
	assert_int_equal(stats.untimed, 1);
	/* The spans go with their stacks, cut to the range. */
	for (size_t i = 0; i < timeline__count(profile__timeline(first)); i++) {
		const struct timeline_span *s = &timeline__spans(profile__timeline(first))[i];

		assert_true(s->first >= 100 && s->last < 400);
		weight += s->weight;
	}
	assert_int_equal(weight, 300);
	/* Across the change: half a tick's worth of each side, and the view of a view cuts the same. */
	assert_int_equal(view__apply(p, &(struct view_config){ .time_range = true, .from_tick = 900, .to_tick = 1100 },
				     both, NULL),
			 0);
	assert_int_equal(count_of(both, "a"), 100);
	assert_int_equal(count_of(both, "b"), 100);
	assert_int_equal(view__apply(both, &(struct view_config){ .time_range = true, .from_tick = 1000, .to_tick = 1050 },
				     again, NULL),
			 0);
	assert_int_equal(count_of(again, "a"), 0);
	assert_int_equal(count_of(again, "b"), 50);
	profile__free(again);
	profile__free(both);
	profile__free(first);
	profile__free(p);
}

static void view_without_range_keeps_spans(void **state)
{
	struct profile *p = two_phases(), *all = profile__new(NULL);

	(void)state;
	assert_non_null(all);
	assert_int_equal(view__apply(p, &(struct view_config){ 0 }, all, NULL), 0);
	assert_int_equal(count_of(all, "c"), 5);
	assert_int_equal(timeline__count(profile__timeline(all)), timeline__count(profile__timeline(p)));
	profile__free(all);
	profile__free(p);
}

static void time_before_origin_is_the_start(void **state)
{
	struct profile *p = profile__new(NULL);
	uint32_t a, index;

	(void)state;
	assert_non_null(p);
	a = (uint32_t)profile__intern(p, "a", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add_indexed(p, &a, 1, 1, &index), 0);
	/* No origin: nothing kept. */
	assert_int_equal(profile__add_time(p, index, 5000000000ull, 5000000000ull, 1), 0);
	assert_null(profile__timeline(p));
	profile__set_time_origin(p, 1000000000ull);
	assert_int_equal(profile__add_time(p, index, 999000000ull, 3500000000ull, 1), 0);
	assert_int_equal(timeline__spans(profile__timeline(p))[0].first, 0);
	assert_int_equal(timeline__spans(profile__timeline(p))[0].last, 2500);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(close_samples_merge),
		cmocka_unit_test(waits_do_not_merge_and_swap),
		cmocka_unit_test(bound_refuses_and_counts),
		cmocka_unit_test(part_of_a_range),
		cmocka_unit_test(shares_sum_to_the_count),
		cmocka_unit_test(view_cuts_a_range),
		cmocka_unit_test(view_without_range_keeps_spans),
		cmocka_unit_test(time_before_origin_is_the_start),
	};

	return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
