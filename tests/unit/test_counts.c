/*
 * counts: only non-zero counts are named, the first after its own
 * separator, and a small buffer cuts the text without overrunning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/counts.h"

static const struct named_count causes[] = {
	{ "ring full", 3 },
	{ "unused", 0 },
	{ "malformed", 12 },
};

static void names_non_zero_counts_only(void **state)
{
	char buf[64] = "2 lost";
	size_t used = counts__append(buf, sizeof(buf), strlen(buf), " (", causes, 3);

	assert_string_equal(buf, "2 lost (ring full 3, malformed 12");
	assert_int_equal(used, strlen(buf));
}

static void all_zero_appends_nothing(void **state)
{
	char buf[16] = "x";

	assert_int_equal(counts__append(buf, sizeof(buf), 1, " (", causes + 1, 1), 1);
	assert_string_equal(buf, "x");
}

static void small_buffer_is_cut_and_terminated(void **state)
{
	char buf[12] = "ab";
	size_t used = counts__append(buf, sizeof(buf), 2, "; ", causes, 3);

	assert_int_equal(used, sizeof(buf) - 1);
	assert_string_equal(buf, "ab; ring fu");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_non_zero_counts_only),
		cmocka_unit_test(all_zero_appends_nothing),
		cmocka_unit_test(small_buffer_is_cut_and_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
