/*
 * rowalloc: the ranges of the BPF unwind row array. Rows are never handed
 * out twice, freed ranges merge with their neighbours so a large table
 * fits again, and a full array says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "user/record/rowalloc.h"

static void takes_first_fit_and_refuses_when_full(void **state)
{
	struct rowalloc ra;
	uint32_t a, b, c;

	assert_int_equal(rowalloc__init(&ra, 100), 0);
	assert_true(rowalloc__take(&ra, 40, &a));
	assert_true(rowalloc__take(&ra, 40, &b));
	assert_int_equal(a, 0);
	assert_int_equal(b, 40);
	assert_false(rowalloc__take(&ra, 21, &c));
	assert_true(rowalloc__take(&ra, 20, &c));
	assert_int_equal(c, 80);
	assert_int_equal(ra.free_rows, 0);
	assert_false(rowalloc__take(&ra, 1, &c));
	assert_false(rowalloc__take(&ra, 0, &c));
	rowalloc__destroy(&ra);
}

static void given_back_ranges_merge(void **state)
{
	struct rowalloc ra;
	uint32_t r[5], big;

	assert_int_equal(rowalloc__init(&ra, 50), 0);
	for (int i = 0; i < 5; i++) {
		assert_true(rowalloc__take(&ra, 10, &r[i]));
		assert_int_equal(r[i], 10 * i);
	}
	/* Holes at 10 and 30: neither alone holds 20 rows. */
	assert_true(rowalloc__give(&ra, r[1], 10));
	assert_true(rowalloc__give(&ra, r[3], 10));
	assert_int_equal(ra.nr_free, 2);
	assert_false(rowalloc__take(&ra, 20, &big));
	/* 20 between them: one range of 30 from 10. */
	assert_true(rowalloc__give(&ra, r[2], 10));
	assert_int_equal(ra.nr_free, 1);
	assert_true(rowalloc__take(&ra, 30, &big));
	assert_int_equal(big, 10);
	/* The ends merge as well. */
	assert_true(rowalloc__give(&ra, r[0], 10));
	assert_true(rowalloc__give(&ra, r[4], 10));
	assert_true(rowalloc__give(&ra, big, 30));
	assert_int_equal(ra.nr_free, 1);
	assert_int_equal(ra.free[0].start, 0);
	assert_int_equal(ra.free[0].len, 50);
	assert_int_equal(ra.free_rows, 50);
	rowalloc__destroy(&ra);
}

/* Many small holes: the list grows past its first allocation and stays sorted. */
static void many_holes_stay_sorted(void **state)
{
	struct rowalloc ra;
	uint32_t start;

	assert_int_equal(rowalloc__init(&ra, 1000), 0);
	for (int i = 0; i < 100; i++)
		assert_true(rowalloc__take(&ra, 10, &start));
	for (int i = 99; i >= 0; i -= 2)
		assert_true(rowalloc__give(&ra, (uint32_t)i * 10, 10));
	assert_int_equal(ra.nr_free, 50);
	for (size_t i = 1; i < ra.nr_free; i++)
		assert_true(ra.free[i - 1].start + ra.free[i - 1].len < ra.free[i].start);
	assert_int_equal(ra.free_rows, 500);
	rowalloc__destroy(&ra);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(takes_first_fit_and_refuses_when_full),
		cmocka_unit_test(given_back_ranges_merge),
		cmocka_unit_test(many_holes_stay_sorted),
	};

	return cmocka_run_group_tests_name("rowalloc", tests, NULL, NULL);
}
