/*
 * javamap: methods and threads by id, and the code map's history: an
 * address reused by another compiled method resolves by the sample's time,
 * and a load reported after code already ran still covers it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "user/java/javamap.h"

static void load(struct javamap *map, uint64_t addr, uint64_t size, uint64_t method, uint64_t time_ns)
{
	struct jbpf_msg_code_load m = { .addr = addr, .size = size, .time_ns = time_ns, .method_id = method,
					 .kind = JBPF_CODE_NMETHOD };

	assert_int_equal(javamap__add_code(map, &m, ""), 0);
}

static void unload(struct javamap *map, uint64_t addr, uint64_t method, uint64_t time_ns)
{
	struct jbpf_msg_code_unload m = { .addr = addr, .time_ns = time_ns, .method_id = method };

	javamap__unload_code(map, &m);
}

static uint64_t method_at(struct javamap *map, uint64_t addr, uint64_t time_ns)
{
	struct javamap_code code;

	return javamap__code_at(map, addr, time_ns, &code) ? code.method_id : 0;
}

static void methods_and_threads_by_id(void **state)
{
	struct javamap *map = javamap__new();
	uint32_t flags = 0;

	assert_non_null(map);
	assert_null(javamap__method(map, 7, NULL));
	assert_int_equal(javamap__add_method(map, 7, JBPF_METHOD_NATIVE, "a.B.c"), 0);
	assert_string_equal(javamap__method(map, 7, &flags), "a.B.c");
	assert_int_equal(flags, JBPF_METHOD_NATIVE);
	/* Enough to make the index grow several times. */
	for (uint64_t id = 100; id < 5100; id++) {
		char name[32];

		snprintf(name, sizeof(name), "m%llu", (unsigned long long)id);
		assert_int_equal(javamap__add_method(map, id, 0, name), 0);
	}
	assert_string_equal(javamap__method(map, 4321, NULL), "m4321");
	assert_string_equal(javamap__method(map, 7, NULL), "a.B.c");
	assert_int_equal(javamap__add_thread(map, 12, "worker-1"), 0);
	assert_int_equal(javamap__add_thread(map, 12, "renamed"), 0);
	assert_string_equal(javamap__thread(map, 12), "renamed");
	assert_null(javamap__thread(map, 13));
	javamap__free(map);
}

static void reused_address_resolves_by_time(void **state)
{
	struct javamap *map = javamap__new();

	load(map, 0x1000, 0x100, 1, 100);
	unload(map, 0x1000, 1, 200);
	load(map, 0x1000, 0x80, 2, 300);
	assert_int_equal(method_at(map, 0x1010, 150), 1);
	assert_int_equal(method_at(map, 0x1010, 350), 2);
	/* Past the new blob's end, the old one is unloaded by then: nothing. */
	assert_int_equal(method_at(map, 0x10a0, 350), 0);
	assert_int_equal(method_at(map, 0x10a0, 150), 1);
	/* Reported after it ran (250 < 300), the new blob still covers it. */
	assert_int_equal(method_at(map, 0x1010, 250), 2);
	assert_false(javamap__is_compiled(map, 1));
	assert_true(javamap__is_compiled(map, 2));
	javamap__free(map);
}

static void lookups_find_large_blobs_below_small_ones(void **state)
{
	struct javamap *map = javamap__new();
	struct javamap_code code;
	struct jbpf_msg_code_load stub = { .addr = 0x5000, .size = 0x10000, .time_ns = 1, .kind = JBPF_CODE_STUB };

	assert_int_equal(javamap__add_code(map, &stub, "Interpreter"), 0);
	/* Added out of order: the map sorts itself. */
	load(map, 0x30000, 0x20, 9, 5);
	load(map, 0x20000, 0x20, 8, 5);
	assert_true(javamap__code_at(map, 0x9000, 10, &code));
	assert_int_equal(code.kind, JBPF_CODE_STUB);
	assert_string_equal(code.name, "Interpreter");
	assert_int_equal(method_at(map, 0x20010, 10), 8);
	assert_int_equal(method_at(map, 0x30010, 10), 9);
	assert_false(javamap__code_at(map, 0x4fff, 10, &code));
	assert_false(javamap__code_at(map, 0x15000, 10, &code));
	javamap__free(map);
}

static void unload_of_an_unknown_blob_changes_nothing(void **state)
{
	struct javamap *map = javamap__new();

	load(map, 0x1000, 0x100, 1, 100);
	unload(map, 0x1000, 2, 150); /* another method at that address: not ours */
	unload(map, 0x2000, 1, 150);
	assert_int_equal(method_at(map, 0x1010, 300), 1);
	assert_true(javamap__is_compiled(map, 1));
	javamap__free(map);
}

/*
 * Enough blobs that most are in the sorted part: a large blob far below
 * small ones is still found, and history holds across a re-sort.
 */
static void many_blobs_resolve_after_sorting(void **state)
{
	struct javamap *map = javamap__new();
	struct jbpf_msg_code_load interp = { .addr = 0x100000, .size = 0x80000, .time_ns = 1,
					      .kind = JBPF_CODE_STUB };
	struct javamap_code code;

	assert_int_equal(javamap__add_code(map, &interp, "Interpreter"), 0);
	/* 2000 methods of 0x100 bytes above it, added from the top down. */
	for (uint64_t i = 2000; i-- > 0;)
		load(map, 0x200000 + i * 0x100, 0x100, 1000 + i, 10);
	unload(map, 0x200000 + 7 * 0x100, 1007, 20);
	load(map, 0x200000 + 7 * 0x100, 0x100, 5000, 30);
	for (int i = 0; i < 600; i++) /* pushes the reload into the sorted part */
		load(map, 0x900000 + (uint64_t)i * 0x40, 0x40, 9000 + (uint64_t)i, 40);
	assert_true(javamap__code_at(map, 0x17ffff, 50, &code));
	assert_string_equal(code.name, "Interpreter");
	assert_false(javamap__code_at(map, 0x180000, 50, &code));
	assert_int_equal(method_at(map, 0x200000 + 1234 * 0x100 + 0x80, 50), 1000 + 1234);
	assert_int_equal(method_at(map, 0x200000 + 7 * 0x100 + 4, 15), 1007);
	assert_int_equal(method_at(map, 0x200000 + 7 * 0x100 + 4, 35), 5000);
	assert_int_equal(method_at(map, 0x900000 + 599 * 0x40, 50), 9000 + 599);
	assert_false(javamap__is_compiled(map, 1007));
	javamap__free(map);
}

/* A hostile agent cannot make every lookup scan the whole map. */
static void giant_blobs_are_refused(void **state)
{
	struct javamap *map = javamap__new();
	struct jbpf_msg_code_load m = { .addr = 0x1000, .size = JAVAMAP_MAX_BLOB_SIZE + 1, .method_id = 1,
					 .kind = JBPF_CODE_NMETHOD };
	struct javamap_stats st;

	assert_int_equal(javamap__add_code(map, &m, ""), -ENOSPC);
	assert_int_equal(method_at(map, 0x2000, 10), 0);
	javamap__stats(map, &st);
	assert_int_equal(st.blobs, 0);
	assert_int_equal(st.refused, 1);
	javamap__free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(methods_and_threads_by_id),
		cmocka_unit_test(reused_address_resolves_by_time),
		cmocka_unit_test(lookups_find_large_blobs_below_small_ones),
		cmocka_unit_test(unload_of_an_unknown_blob_changes_nothing),
		cmocka_unit_test(giant_blobs_are_refused),
		cmocka_unit_test(many_blobs_resolve_after_sorting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
