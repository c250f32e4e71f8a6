/*
 * addr_ids: native frames' ids by (process, address). An id put is found
 * again under the same generation and only for its own process and
 * address; a new generation finds nothing; a slot taken by another
 * address gives nothing, never the other's id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "user/record/addr_ids.h"

#define TGID 4242u
#define BASE 0x7f0000001000ull

static void ids_are_found_for_their_own_address_and_process(void **state)
{
	struct addr_ids *ids = addr_ids__new();

	(void)state;
	assert_non_null(ids);
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE), -1);
	addr_ids__put(ids, 1, TGID, BASE, 7);
	addr_ids__put(ids, 1, TGID, BASE + 1, 0);
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE), 7);
	/* Id 0 is an id like any other, not an empty slot. */
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE + 1), 0);
	assert_int_equal(addr_ids__get(ids, 1, TGID + 1, BASE), -1);
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE + 2), -1);
	addr_ids__clear(ids);
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE), -1);
	addr_ids__free(ids);
}

static void another_generation_finds_nothing(void **state)
{
	struct addr_ids *ids = addr_ids__new();

	(void)state;
	assert_non_null(ids);
	addr_ids__put(ids, 5, TGID, BASE, 7);
	assert_int_equal(addr_ids__get(ids, 6, TGID, BASE), -1);
	/* And the table was emptied: going back finds nothing either. */
	assert_int_equal(addr_ids__get(ids, 5, TGID, BASE), -1);
	/* A store under a new generation empties what the old one left. */
	addr_ids__put(ids, 5, TGID, BASE, 7);
	addr_ids__put(ids, 9, TGID, BASE + 16, 8);
	assert_int_equal(addr_ids__get(ids, 9, TGID, BASE), -1);
	assert_int_equal(addr_ids__get(ids, 9, TGID, BASE + 16), 8);
	addr_ids__free(ids);
}

/* Four times more addresses than slots: each gives its own id or none, and most recent ones are kept. */
static void a_full_table_never_gives_another_address_its_id(void **state)
{
	struct addr_ids *ids = addr_ids__new();
	uint32_t n = 4 * ADDR_IDS_SLOTS, found = 0;

	(void)state;
	assert_non_null(ids);
	for (uint32_t i = 0; i < n; i++)
		addr_ids__put(ids, 1, TGID + (i & 1), BASE + 4 * (uint64_t)i, i);
	for (uint32_t i = 0; i < n; i++) {
		int64_t id = addr_ids__get(ids, 1, TGID + (i & 1), BASE + 4 * (uint64_t)i);

		if (id >= 0) {
			assert_int_equal(id, i);
			found++;
		}
	}
	assert_true(found <= ADDR_IDS_SLOTS);
	/* A hash that spread these addresses over a quarter of the slots or fewer would be a poor one. */
	assert_true(found >= ADDR_IDS_SLOTS / 4);
	addr_ids__free(ids);
}

/* UINT32_MAX cannot be kept (its slot would read as empty): it is not. */
static void the_largest_id_is_not_kept(void **state)
{
	struct addr_ids *ids = addr_ids__new();

	(void)state;
	assert_non_null(ids);
	addr_ids__put(ids, 1, TGID, BASE, UINT32_MAX);
	assert_int_equal(addr_ids__get(ids, 1, TGID, BASE), -1);
	addr_ids__free(ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_are_found_for_their_own_address_and_process),
		cmocka_unit_test(another_generation_finds_nothing),
		cmocka_unit_test(a_full_table_never_gives_another_address_its_id),
		cmocka_unit_test(the_largest_id_is_not_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
