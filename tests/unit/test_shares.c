/*
 * Unit tests for user/shares.c: a key's exact total spread over its stacks
 * in proportion to their units. Every expected part is computed here from
 * the test's own inputs: a part may differ from total * units / sum by less
 * than one (the rounding), and the parts of a key sum to its total exactly.
 * Stacks are real ones of a profile, made with a count of 0 so that what
 * settle adds is all they hold.
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

#include "profile_fixture.h"

#include "profile/profile.h"
#include "profile/shares.h"

#define MAX_TEST_STACKS 16

struct fixture {
	struct profile *profile;
	struct shares *shares;
	uint32_t stacks[MAX_TEST_STACKS]; /* profile stack indexes, one frame each */
};

static int setup_bounded(void **state, size_t max_entries)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char name[32];

	if (!f)
		return -1;
	f->profile = profile__new(NULL);
	f->shares = shares__new(max_entries);
	if (!f->profile || !f->shares)
		return -1;
	for (uint32_t i = 0; i < MAX_TEST_STACKS; i++) {
		int64_t id;

		snprintf(name, sizeof(name), "frame_%u", i);
		id = profile__intern(f->profile, name, FRAME_KIND_NATIVE);
		if (id < 0)
			return -1;
		if (profile__add_indexed(f->profile, &(uint32_t){ (uint32_t)id }, 1, 0, &f->stacks[i]))
			return -1;
	}
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_bounded(state, 0);
}

static int setup_three_entries(void **state)
{
	return setup_bounded(state, 3);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	shares__free(f->shares);
	profile__free(f->profile);
	free(f);
	return 0;
}

/* The count profile stack i holds now. */
static uint64_t count_of(const struct fixture *f, size_t i)
{
	size_t depth;
	uint64_t count;

	assert_non_null(profile__stack(f->profile, f->stacks[i], &depth, &count));
	assert_int_equal(depth, 1);
	return count;
}

/*
 * Adds units[i] to (key, stack i) for i < n, settles total over key, and
 * checks each part against its exact proportion and their sum against total.
 */
static void split_and_check(struct fixture *f, uint64_t key, uint64_t total, const uint32_t *units, size_t n)
{
	unsigned __int128 sum_units = 0, sum_parts = 0;

	assert_true(n <= MAX_TEST_STACKS);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(shares__add(f->shares, key, f->stacks[i], units[i]), 0);
		sum_units += units[i];
	}
	assert_true(shares__settle(f->shares, key, total, f->profile));
	for (size_t i = 0; i < n; i++) {
		uint64_t part = count_of(f, i);
		/* part * sum_units within sum_units of total * units[i]: |part - exact| < 1. */
		unsigned __int128 got = (unsigned __int128)part * sum_units;
		unsigned __int128 want = (unsigned __int128)total * units[i];
		unsigned __int128 diff = got > want ? got - want : want - got;

		assert_true(part <= total);
		if (diff >= sum_units)
			fail_msg("stack %zu: part %llu is not within 1 of %llu * %u / sum", i,
				 (unsigned long long)part, (unsigned long long)total, units[i]);
		sum_parts += part;
	}
	assert_true(sum_parts == total);
	assert_true(profile__total(f->profile) == total);
}

static void ten_over_three_equal_stacks(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { 1, 1, 1 };

	split_and_check(f, 42, 10, units, 3);
	/* 10/3 each: every part is 3 or 4. */
	for (size_t i = 0; i < 3; i++)
		assert_true(count_of(f, i) == 3 || count_of(f, i) == 4);
}

static void seven_over_three_unequal_stacks(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { 2, 3, 5 };

	split_and_check(f, 7, 7, units, 3);
}

static void exact_proportions_are_exact(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { 1, 3 };

	split_and_check(f, 1, 850000, units, 2);
	assert_int_equal(count_of(f, 0), 212500);
	assert_int_equal(count_of(f, 1), 637500);
}

static void zero_total_adds_nothing_but_is_settled(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { 5, 1, 9 };

	split_and_check(f, 3, 0, units, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(count_of(f, i), 0);
}

/* T * cumulative units needs more than 64 bits: the split must not overflow. */
static void huge_total_with_large_units(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { UINT32_MAX - 1, UINT32_MAX / 3, 12345, UINT32_MAX, 1, 977 };

	split_and_check(f, 9, (1ull << 63) - 25, units, 6);
}

static void largest_total_over_two_halves(void **state)
{
	struct fixture *f = *state;
	const uint32_t units[] = { UINT32_MAX, UINT32_MAX };

	split_and_check(f, 11, UINT64_MAX - 1, units, 2);
	assert_true(count_of(f, 0) == UINT64_MAX / 2);
	assert_true(count_of(f, 1) == UINT64_MAX / 2);
}

/* Many stacks of one key, with awkward totals: parts always sum exactly. */
static void many_awkward_splits_sum_exactly(void **state)
{
	const uint64_t totals[] = { 1, 2, 999, 1000003, 123456789012345ull };

	(void)state;
	for (size_t t = 0; t < sizeof(totals) / sizeof(totals[0]); t++) {
		struct fixture *f;
		uint32_t units[MAX_TEST_STACKS];

		assert_int_equal(setup(state), 0);
		f = *state;
		for (size_t i = 0; i < MAX_TEST_STACKS; i++)
			units[i] = (uint32_t)(i * 7 % 5 + 1);
		split_and_check(f, 5, totals[t], units, MAX_TEST_STACKS);
		teardown(state);
	}
}

static void key_without_stacks_is_not_settled(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shares__add(f->shares, 1, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, 3, f->stacks[1], 1), 0);
	/* 2 lies between two keys that exist; 0 and 4 below and above all of them. */
	assert_false(shares__settle(f->shares, 2, 1000, f->profile));
	assert_false(shares__settle(f->shares, 0, 1000, f->profile));
	assert_false(shares__settle(f->shares, 4, 1000, f->profile));
	assert_int_equal(profile__total(f->profile), 0);
}

static void empty_table_settles_nothing(void **state)
{
	struct fixture *f = *state;

	assert_false(shares__settle(f->shares, 1, 1000, f->profile));
	assert_int_equal(profile__total(f->profile), 0);
}

static void zero_units_add_no_stack(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shares__add(f->shares, 1, f->stacks[0], 0), 0);
	assert_false(shares__settle(f->shares, 1, 1000, f->profile));
	assert_int_equal(profile__total(f->profile), 0);
}

/* Two keys share stack 1; each key's total goes only to its own units. */
static void distinct_keys_do_not_mix(void **state)
{
	struct fixture *f = *state;
	uint64_t key_a = (uint64_t)1234 << 8 | 0, key_b = (uint64_t)1234 << 8 | 2;

	assert_int_equal(shares__add(f->shares, key_a, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, key_a, f->stacks[1], 1), 0);
	assert_int_equal(shares__add(f->shares, key_b, f->stacks[1], 1), 0);
	assert_int_equal(shares__add(f->shares, key_b, f->stacks[2], 3), 0);
	assert_true(shares__settle(f->shares, key_a, 100, f->profile));
	assert_int_equal(count_of(f, 0), 50);
	assert_int_equal(count_of(f, 1), 50);
	assert_int_equal(count_of(f, 2), 0);
	assert_true(shares__settle(f->shares, key_b, 1000, f->profile));
	assert_int_equal(count_of(f, 0), 50);
	assert_int_equal(count_of(f, 1), 50 + 250);
	assert_int_equal(count_of(f, 2), 750);
	assert_int_equal(profile__total(f->profile), 1100);
}

static void repeated_adds_accumulate(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 3; i++)
		assert_int_equal(shares__add(f->shares, 8, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, 8, f->stacks[1], 1), 0);
	assert_int_equal(shares__add(f->shares, 8, f->stacks[0], 4), 0);
	/* Units 7 : 1. */
	assert_true(shares__settle(f->shares, 8, 800, f->profile));
	assert_int_equal(count_of(f, 0), 700);
	assert_int_equal(count_of(f, 1), 100);
}

/* Units of one entry that would pass 2^32 are refused and the entry is kept. */
static void units_overflow_is_refused(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shares__add(f->shares, 8, f->stacks[0], UINT32_MAX), 0);
	assert_int_not_equal(shares__add(f->shares, 8, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, 8, f->stacks[1], UINT32_MAX), 0);
	assert_true(shares__settle(f->shares, 8, 1001, f->profile));
	assert_true(count_of(f, 0) == 500 || count_of(f, 0) == 501);
	assert_int_equal(count_of(f, 0) + count_of(f, 1), 1001);
}

/* Enough entries for the table to grow several times: nothing is lost. */
static void growth_keeps_every_entry(void **state)
{
	struct fixture *f = *state;
	const uint64_t nr_keys = 5000;

	for (uint64_t key = 1; key <= nr_keys; key++) {
		/* Key k: stack (k % 16) one unit, stack ((k + 1) % 16) three units. */
		assert_int_equal(shares__add(f->shares, key * 0x10001, f->stacks[key % MAX_TEST_STACKS], 1), 0);
		assert_int_equal(shares__add(f->shares, key * 0x10001, f->stacks[(key + 1) % MAX_TEST_STACKS], 3), 0);
	}
	for (uint64_t key = 1; key <= nr_keys; key++) {
		uint64_t low = count_of(f, key % MAX_TEST_STACKS), high = count_of(f, (key + 1) % MAX_TEST_STACKS);

		assert_true(shares__settle(f->shares, key * 0x10001, 4000, f->profile));
		assert_int_equal(count_of(f, key % MAX_TEST_STACKS) - low, 1000);
		assert_int_equal(count_of(f, (key + 1) % MAX_TEST_STACKS) - high, 3000);
	}
	assert_int_equal(profile__total(f->profile), nr_keys * 4000);
}

/* max_entries 3: a fourth distinct pair is refused; the three are intact and still grow. */
static void bound_refuses_new_pairs_only(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shares__add(f->shares, 1, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, 1, f->stacks[1], 1), 0);
	assert_int_equal(shares__add(f->shares, 2, f->stacks[2], 1), 0);
	assert_int_equal(shares__add(f->shares, 1, f->stacks[3], 1), -ENOSPC);
	assert_int_equal(shares__add(f->shares, 3, f->stacks[0], 1), -ENOSPC);
	assert_int_equal(shares__add(f->shares, 2, f->stacks[0], 5), -ENOSPC);
	/* Existing pairs still take units. */
	assert_int_equal(shares__add(f->shares, 1, f->stacks[1], 2), 0);
	assert_int_equal(shares__add(f->shares, 2, f->stacks[2], 9), 0);
	/* Key 1: units 1 : 3 over stacks 0 and 1; stack 3 was never added. */
	assert_true(shares__settle(f->shares, 1, 400, f->profile));
	assert_int_equal(count_of(f, 0), 100);
	assert_int_equal(count_of(f, 1), 300);
	assert_int_equal(count_of(f, 3), 0);
	assert_true(shares__settle(f->shares, 2, 77, f->profile));
	assert_int_equal(count_of(f, 2), 77);
	assert_false(shares__settle(f->shares, 3, 1000, f->profile));
	assert_int_equal(profile__total(f->profile), 477);
}

static void add_after_settle_is_refused(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(shares__add(f->shares, 1, f->stacks[0], 1), 0);
	assert_int_equal(shares__add(f->shares, 2, f->stacks[1], 1), 0);
	assert_true(shares__settle(f->shares, 1, 10, f->profile));
	/* Refused for a new pair and for an existing one, and nothing changes. */
	assert_true(shares__add(f->shares, 2, f->stacks[2], 1) < 0);
	assert_true(shares__add(f->shares, 2, f->stacks[1], 1) < 0);
	assert_true(shares__add(f->shares, 5, f->stacks[3], 1) < 0);
	assert_true(shares__settle(f->shares, 2, 90, f->profile));
	assert_int_equal(count_of(f, 1), 90);
	assert_int_equal(count_of(f, 2), 0);
	assert_false(shares__settle(f->shares, 5, 90, f->profile));
	assert_int_equal(profile__total(f->profile), 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ten_over_three_equal_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(seven_over_three_unequal_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(exact_proportions_are_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_total_adds_nothing_but_is_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(huge_total_with_large_units, setup, teardown),
		cmocka_unit_test_setup_teardown(largest_total_over_two_halves, setup, teardown),
		cmocka_unit_test(many_awkward_splits_sum_exactly),
		cmocka_unit_test_setup_teardown(key_without_stacks_is_not_settled, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_table_settles_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_units_add_no_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(distinct_keys_do_not_mix, setup, teardown),
		cmocka_unit_test_setup_teardown(repeated_adds_accumulate, setup, teardown),
		cmocka_unit_test_setup_teardown(units_overflow_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(growth_keeps_every_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(bound_refuses_new_pairs_only, setup_three_entries, teardown),
		cmocka_unit_test_setup_teardown(add_after_settle_is_refused, setup, teardown),
	};

	return cmocka_run_group_tests_name("shares", tests, NULL, NULL);
}
