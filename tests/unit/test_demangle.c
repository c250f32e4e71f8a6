/*
 * demangle: C++ names come out in source form; anything else is left alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "symbolizer/demangle.h"

static void demangles_functions_methods_and_templates(void **state)
{
	char buf[256];

	assert_int_equal(demangle__cxx("_ZN7fixture5scaleEid", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "fixture::scale(int, double)");
	assert_int_equal(demangle__cxx("_ZN7fixture5Shape5sidesEi", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "fixture::Shape::sides(int)");
	assert_int_equal(demangle__cxx("_ZN7fixture5twiceIlEET_S1_", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "long fixture::twice<long>(long)");
}

static void leaves_c_names_and_garbage_alone(void **state)
{
	char buf[64] = "untouched";

	assert_int_equal(demangle__cxx("main", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
	assert_int_equal(demangle__cxx("_Zgarbage!!", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
	assert_int_equal(demangle__cxx("_Z", buf, sizeof(buf)), 0);
	assert_int_equal(demangle__cxx("", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
}

static void truncates_to_the_buffer(void **state)
{
	char buf[8];

	assert_int_equal(demangle__cxx("_ZN7fixture5scaleEid", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "fixture");
}

static void refuses_absurdly_long_names(void **state)
{
	size_t len = 100000;
	char *name = malloc(len + 1), buf[64] = "untouched";

	/* Deep nesting is what a stack-exhausting name looks like. */
	memcpy(name, "_ZN", 3);
	memset(name + 3, 'A', len - 3);
	name[len] = '\0';
	assert_int_equal(demangle__cxx(name, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched");
	free(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demangles_functions_methods_and_templates),
		cmocka_unit_test(leaves_c_names_and_garbage_alone),
		cmocka_unit_test(truncates_to_the_buffer),
		cmocka_unit_test(refuses_absurdly_long_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
