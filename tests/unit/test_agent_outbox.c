/*
 * agent outbox (jvmti-stub/outbox.c): each method is reported unnamed
 * until an append names it, an append past the limit is dropped whole and
 * counted, bytes come out in order, and a closed outbox refuses appends
 * without counting them and forgets its names for the next recording.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jvmti-stub/outbox.h"

static void outbox_names_each_method_once_in_order(void **state)
{
	uint64_t unnamed[8], ids[] = { 1, 2, 1, 3 }, named[] = { 1, 2 };
	struct outbox_chunk *c;
	char big[100];
	size_t n;

	assert_int_equal(outbox__init(), 0);
	assert_int_equal(outbox__open("H", 1), 0);
	n = outbox__unnamed(ids, 4, unnamed);
	assert_int_equal(n, 3);
	assert_int_equal(unnamed[0], 1);
	assert_int_equal(unnamed[1], 2);
	assert_int_equal(unnamed[2], 3);
	assert_int_equal(outbox__append("AB", 2, OUTBOX_LIMIT, named, 2), 0);
	n = outbox__unnamed(ids, 4, unnamed);
	assert_int_equal(n, 1);
	assert_int_equal(unnamed[0], 3);
	/* Past the limit: dropped whole and counted. */
	memset(big, 'x', sizeof(big));
	assert_int_equal(outbox__append(big, sizeof(big), 50, NULL, 0), -1);
	assert_int_equal(outbox__events_lost(), 1);
	assert_int_equal(outbox__bytes(), 3);
	c = outbox__take();
	assert_non_null(c);
	assert_null(c->next);
	assert_int_equal(c->len, 3);
	assert_memory_equal(c->data, "HAB", 3);
	assert_null(outbox__take());
	outbox__done(c);
	assert_int_equal(outbox__bytes(), 0);
	/* Closed: refused, not counted, and names forgotten for the next recording. */
	outbox__close();
	assert_int_equal(outbox__append("C", 1, OUTBOX_LIMIT, NULL, 0), -1);
	assert_int_equal(outbox__events_lost(), 1);
	assert_int_equal(outbox__open("H", 1), 0);
	assert_int_equal(outbox__events_lost(), 0);
	assert_int_equal(outbox__unnamed(ids, 4, unnamed), 3);
	outbox__close();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(outbox_names_each_method_once_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
