/*
 * Unit tests for hotspot/threads.c: a JVM's Java threads by native tid,
 * from a thread list laid out as JDK 17 and JDK 25 lay it out (their
 * VMStructs offsets), in a memory image of its own; and what a list that
 * lies, or is freed under the reader, gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hotspot_fixture.h"

#include "hotspot/threads.h"

/* The image: the list pointer, the list, its array, and each thread's JavaThread and OSThread. */
#define LIST_VAR 0x1000ull
#define LIST 0x2000ull
#define ARRAY 0x3000ull
#define JAVA_THREADS 0x100000ull /* one page each */
#define OSTHREAD_AT 0x800        /* a thread's OSThread, in its page */

struct jdk_threads {
	const char *osthread_type; /* JavaThread (JDK 17) or Thread (JDK 25) */
	uint64_t osthread, thread_id;
};

static const struct jdk_threads jdk17_threads = { "JavaThread", 560, 208 };
static const struct jdk_threads jdk25_threads = { "Thread", 1016, 12 };

static struct hotspot_vm *vm_of(const struct jdk_threads *j)
{
	struct hotspot_vm *vm = hotspot_vm__new();

	assert_non_null(vm);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", true, 0,
					      LIST_VAR), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsList", "_length", "const uint", false, 4, 0), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsList", "_threads", "JavaThread *const *const", false, 16, 0),
			 0);
	assert_int_equal(hotspot_vm__add_field(vm, j->osthread_type, "_osthread", "OSThread*", false, j->osthread, 0),
			 0);
	assert_int_equal(hotspot_vm__add_field(vm, "OSThread", "_thread_id", "pid_t", false, j->thread_id, 0), 0);
	return vm;
}

/* A list of n threads, thread i with tid 100 + i; the list claims length. */
static void image_of(struct fake_memory *fm, const struct jdk_threads *j, uint32_t n, uint32_t length)
{
	unsigned char *var = fake_map(fm, LIST_VAR, 8), *list = fake_map(fm, LIST, 32);
	unsigned char *array = fake_map(fm, ARRAY, (n ? n : 1) * 8);
	unsigned char *threads = fake_map(fm, JAVA_THREADS, (size_t)(n ? n : 1) << 12);

	fake_put64(var, LIST);
	fake_put32(list + 4, length);
	fake_put64(list + 16, ARRAY);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t jt = JAVA_THREADS + ((uint64_t)i << 12);

		fake_put64(array + 8 * i, jt);
		fake_put64(threads + ((size_t)i << 12) + j->osthread, jt + OSTHREAD_AT);
		fake_put32(threads + ((size_t)i << 12) + OSTHREAD_AT + j->thread_id, 100 + i);
	}
}

static void reads(const struct jdk_threads *j)
{
	static struct hotspot_java_thread got[2048];
	struct hotspot_vm *vm = vm_of(j);
	struct hotspot_threads__layout layout;
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	char err[256] = "";
	size_t nr;

	assert_int_equal(hotspot_threads__layout(vm, &layout, err, sizeof(err)), 0);
	/* More threads than one gather reads. */
	image_of(&fm, j, 1200, 1200);
	fake_reader(&mem, &fm);
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 2048, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 1200);
	for (uint32_t i = 0; i < nr; i++) {
		assert_int_equal(got[i].tid, 100 + i);
		assert_int_equal(got[i].java_thread, JAVA_THREADS + ((uint64_t)i << 12));
	}
	/* No more than asked for. */
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 10, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 10);
	fake_memory_free(&fm);
	hotspot_vm__free(vm);
}

static void threads_of_jdk17(void **state)
{
	(void)state;
	reads(&jdk17_threads);
}

static void threads_of_jdk25(void **state)
{
	(void)state;
	reads(&jdk25_threads);
}

/*
 * A thread ending (its OSThread gone, its tid 0) is left out; a list that
 * claims too many threads, or whose threads are not there (freed), fails
 * the read with its reason.
 */
static void a_list_that_lies(void **state)
{
	struct hotspot_java_thread got[8];
	struct hotspot_vm *vm = vm_of(&jdk17_threads);
	struct hotspot_threads__layout layout;
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	char err[256] = "";
	size_t nr;

	(void)state;
	assert_int_equal(hotspot_threads__layout(vm, &layout, err, sizeof(err)), 0);
	image_of(&fm, &jdk17_threads, 3, 3);
	/* Thread 1's OSThread pointer leads nowhere, thread 2's tid is 0. */
	fake_put64(fm.regions[3].bytes + (1 << 12) + jdk17_threads.osthread, 0xdead0000);
	fake_put32(fm.regions[3].bytes + (2 << 12) + OSTHREAD_AT + jdk17_threads.thread_id, 0);
	fake_reader(&mem, &fm);
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 8, &nr, err, sizeof(err)), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(got[0].tid, 100);

	fake_put32(fm.regions[1].bytes + 4, HOTSPOT_THREADS_MAX + 1);
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 8, &nr, err, sizeof(err)), -1);
	assert_string_equal(err, "its thread list claims 65537 threads, more than 65536");
	/* Longer than the array: the rest lies past the image, as a freed list's would. */
	fake_put32(fm.regions[1].bytes + 4, 4);
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 8, &nr, err, sizeof(err)), -1);
	assert_string_equal(err, "its thread list's threads (at 0x3000) cannot be read");
	fake_put64(fm.regions[0].bytes, 0);
	assert_int_equal(hotspot_threads__read(&mem, &layout, got, 8, &nr, err, sizeof(err)), -1);
	assert_string_equal(err, "its thread list cannot be read");
	fake_memory_free(&fm);
	hotspot_vm__free(vm);
}

/* A JVM that lists no OSThread tid is refused with what is missing. */
static void a_layout_without_tids(void **state)
{
	struct hotspot_vm *vm = hotspot_vm__new();
	struct hotspot_threads__layout layout;
	char err[256] = "";

	(void)state;
	assert_non_null(vm);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", true, 0,
					      LIST_VAR), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsList", "_length", "const uint", false, 4, 0), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "ThreadsList", "_threads", "JavaThread**", false, 16, 0), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "Thread", "_osthread", "OSThread*", false, 1016, 0), 0);
	assert_int_equal(hotspot_threads__layout(vm, &layout, err, sizeof(err)), -1);
	assert_string_equal(err, "HotSpot lists no OSThread::_thread_id");
	hotspot_vm__free(vm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threads_of_jdk17),
		cmocka_unit_test(threads_of_jdk25),
		cmocka_unit_test(a_list_that_lies),
		cmocka_unit_test(a_layout_without_tids),
	};

	return cmocka_run_group_tests_name("hotspot threads: Java threads by tid", tests, NULL, NULL);
}
