/*
 * agent methodset (jvmti-stub/methodset.c): the table holds what was
 * inserted until it is 3/4 full, then empties itself, counts the reset,
 * and keeps only what comes after.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jvmti-stub/methodset.h"

static void methodset_empties_itself_when_full(void **state)
{
	struct methodset *set = methodset__new(4); /* 16 entries, emptied at 12 */

	assert_non_null(set);
	assert_false(methodset__contains(set, 0));
	methodset__insert(set, 0);
	assert_true(methodset__contains(set, 0));
	for (uint64_t id = 1; id <= 12; id++)
		methodset__insert(set, id * 8);
	for (uint64_t id = 1; id <= 12; id++)
		assert_true(methodset__contains(set, id * 8));
	assert_int_equal(methodset__resets(set), 0);
	methodset__insert(set, 13 * 8);
	assert_int_equal(methodset__resets(set), 1);
	assert_true(methodset__contains(set, 13 * 8));
	assert_false(methodset__contains(set, 8));
	assert_false(methodset__contains(set, 0));
	methodset__free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(methodset_empties_itself_when_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
