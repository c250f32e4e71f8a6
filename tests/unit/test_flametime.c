/*
 * Unit tests for output/flametime.c, the flame graph page's timeline: a
 * stack's cells sum to its count exactly, whatever its spans and weights;
 * a span is shared among the buckets it overlaps by its ticks in each;
 * buckets are of a round width and at most FLAMETIME_MAX_BUCKETS; cells
 * past FLAMETIME_MAX_CELLS make the buckets wider, and a profile that
 * keeps no time has no timeline.
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

#include "output/flametime.h"
#include "output/flametree.h"
#include "profile/profile.h"

/* A stack main;NAME of count, its index in *index. */
static uint32_t add(struct profile *p, const char *name, uint64_t count)
{
	uint32_t frames[2], index;

	frames[0] = (uint32_t)profile__intern(p, "main", FRAME_KIND_NATIVE);
	frames[1] = (uint32_t)profile__intern(p, name, FRAME_KIND_NATIVE);
	assert_int_equal(profile__add_indexed(p, frames, 2, count, &index), 0);
	return index;
}

/* The sum of the cells of the node where stack index ends, and their buckets' span. */
static uint64_t cells_of(const struct flame_tree *t, const struct flame_time *ft, uint32_t index, uint32_t *lo,
			 uint32_t *hi)
{
	uint64_t sum = 0;

	*lo = UINT32_MAX;
	*hi = 0;
	for (size_t i = 0; i < ft->nr; i++) {
		if (ft->cells[i].node != t->stack_node[index])
			continue;
		sum += ft->cells[i].count;
		*lo = ft->cells[i].bucket < *lo ? ft->cells[i].bucket : *lo;
		*hi = ft->cells[i].bucket > *hi ? ft->cells[i].bucket : *hi;
	}
	return sum;
}

static void cells_sum_to_each_stack_count(void **state)
{
	struct profile *p = profile__new(NULL);
	struct flame_tree t = { 0 };
	struct flame_time ft;
	uint32_t a, b, c, lo, hi;

	(void)state;
	/* a: 1000 counted over three uneven spans; b: a wait over 2.5 s; c: no time kept. */
	a = add(p, "a", 1000);
	assert_int_equal(profile__add_span(p, a, 0, 0, 3), 0);
	assert_int_equal(profile__add_span(p, a, 4999, 5003, 7), 0);
	assert_int_equal(profile__add_span(p, a, 9999, 9999, 1), 0);
	b = add(p, "b", 2500001);
	assert_int_equal(profile__add_span(p, b, 1000, 3499, 2500000), 0);
	c = add(p, "c", 17);
	assert_int_equal(flame_tree__build(p, &t), 0);
	assert_int_equal(flame_time__build(p, &t, 10.0, &ft), 0);
	/* 10 s in at most 240 buckets of a round width: 50 ms. */
	assert_int_equal(ft.bucket_ms, 50);
	assert_int_equal(ft.buckets, 200);
	assert_false(ft.omitted);
	assert_int_equal(cells_of(&t, &ft, a, &lo, &hi), 1000);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 199);
	assert_int_equal(cells_of(&t, &ft, b, &lo, &hi), 2500001);
	assert_int_equal(lo, 20);
	assert_int_equal(hi, 69);
	assert_int_equal(cells_of(&t, &ft, c, &lo, &hi), 0);
	assert_int_equal(ft.untimed, 17);
	/* b's span covers 50 buckets wholly: 50000 each, and the carry's 1 in the last. */
	for (size_t i = 0; i < ft.nr; i++)
		if (ft.cells[i].node == t.stack_node[b])
			assert_int_equal(ft.cells[i].count, ft.cells[i].bucket == 69 ? 50001 : 50000);
	flame_time__free(&ft);
	flame_tree__free(&t);
	profile__free(p);
}

static void a_span_is_shared_by_its_ticks(void **state)
{
	struct profile *p = profile__new(NULL);
	struct flame_tree t = { 0 };
	struct flame_time ft;
	uint32_t a;

	(void)state;
	/* 100 over ticks 40..59: 10 ticks in bucket 0 (0-49 ms), 10 in bucket 1. */
	a = add(p, "a", 100);
	assert_int_equal(profile__add_span(p, a, 40, 59, 1), 0);
	assert_int_equal(flame_tree__build(p, &t), 0);
	assert_int_equal(flame_time__build(p, &t, 10.0, &ft), 0);
	assert_int_equal(ft.nr, 2);
	assert_int_equal(ft.cells[0].bucket, 0);
	assert_int_equal(ft.cells[0].count, 50);
	assert_int_equal(ft.cells[1].bucket, 1);
	assert_int_equal(ft.cells[1].count, 50);
	flame_time__free(&ft);
	flame_tree__free(&t);
	profile__free(p);
}

static void too_many_cells_widen_the_buckets(void **state)
{
	struct profile *p = profile__new(NULL);
	struct flame_tree t = { 0 };
	struct flame_time ft;
	char name[32];
	/* Enough stacks, each in every bucket, to pass the bound at 240 buckets but not at 8. */
	size_t stacks = FLAMETIME_MAX_CELLS / 100;

	(void)state;
	for (size_t s = 0; s < stacks; s++) {
		uint32_t i;

		snprintf(name, sizeof(name), "f%zu", s);
		i = add(p, name, 240);
		for (uint32_t tick = 0; tick < 240000; tick += 1000)
			assert_int_equal(profile__add_span(p, i, tick, tick, 1), 0);
	}
	assert_int_equal(flame_tree__build(p, &t), 0);
	assert_int_equal(flame_time__build(p, &t, 240.0, &ft), 0);
	assert_false(ft.omitted);
	assert_true(ft.nr <= FLAMETIME_MAX_CELLS);
	assert_true(ft.buckets < 100);
	assert_true(ft.buckets >= FLAMETIME_MIN_BUCKETS);
	assert_int_equal(ft.nr, stacks * ft.buckets);
	flame_time__free(&ft);
	flame_tree__free(&t);
	profile__free(p);
}

static void no_time_no_timeline(void **state)
{
	struct profile *p = profile__new(NULL);
	struct flame_tree t = { 0 };
	struct flame_time ft;

	(void)state;
	add(p, "a", 5);
	assert_int_equal(flame_tree__build(p, &t), 0);
	assert_int_equal(flame_time__build(p, &t, 10.0, &ft), 0);
	assert_int_equal(ft.bucket_ms, 0);
	assert_int_equal(ft.nr, 0);
	assert_false(ft.omitted);
	flame_time__free(&ft);
	flame_tree__free(&t);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cells_sum_to_each_stack_count),
		cmocka_unit_test(a_span_is_shared_by_its_ticks),
		cmocka_unit_test(too_many_cells_widen_the_buckets),
		cmocka_unit_test(no_time_no_timeline),
	};

	return cmocka_run_group_tests_name("flametime", tests, NULL, NULL);
}
