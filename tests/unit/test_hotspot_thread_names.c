/*
 * Unit tests for hotspot/thread_names.c and user/java/thread_names.c: a
 * Java thread's name read from a memory image laid out as a JVM with
 * compressed oops and class pointers lays it out (JavaThread::_threadObj,
 * an OopHandle slot, Thread.name, String.value and .coder, a byte[]), in
 * Latin-1 and UTF-16; names that lie (an absurd length, unmapped memory,
 * an object that is not a String, an unknown coder) are refused and
 * counted once per thread; a renamed thread is read again, an unchanged
 * one is not, unless a collection ran since; names read while one runs
 * are not believed.
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

#include "hotspot/thread_names.h"
#include "user/java/thread_names.h"

/* The image: JavaThreads, their handles' slots, and a heap of compressed oops (shift 3). */
#define JAVA_THREADS 0x10000ull  /* a page each */
#define HANDLES 0x20000ull       /* a word each */
#define HEAP 0x800000000ull
#define HEAP_SIZE 0x10000u
#define KLASS_BASE 0x40000000ull
#define STRING_KLASS (KLASS_BASE + 0x1000)
#define OTHER_KLASS (KLASS_BASE + 0x2000)
/* Per thread i, in the heap: its Thread at 0x1000 * i + 0x100, its String at + 0x200, the bytes at + 0x400. */
#define THREAD_OF(i) (HEAP + 0x1000ull * (i) + 0x100)
#define STRING_OF(i) (HEAP + 0x1000ull * (i) + 0x200)
#define ARRAY_OF(i) (HEAP + 0x1000ull * (i) + 0x400)

static const struct hotspot_thread_names__layout layout = {
	.thread_obj = 0x180,
	.thread_name = 0x50,
	.string_value = 12,
	.string_coder = 16,
	.klass = 8,
	.array_length = 12,
	.array_data = 16,
	.narrow = true,
	.shift = 3,
	.base = HEAP,
	.klass_base = KLASS_BASE,
	.klass_shift = 0,
	.string_klass = STRING_KLASS,
};

struct image {
	struct fake_memory fm;
	struct hotspot_memory mem;
	unsigned char *threads, *handles, *heap;
};

static uint32_t narrow(uint64_t oop)
{
	return (uint32_t)((oop - HEAP) >> 3);
}

static void image_new(struct image *im)
{
	memset(im, 0, sizeof(*im));
	im->threads = fake_map(&im->fm, JAVA_THREADS, 16 << 12);
	im->handles = fake_map(&im->fm, HANDLES, 16 * 8);
	im->heap = fake_map(&im->fm, HEAP, HEAP_SIZE);
	fake_reader(&im->mem, &im->fm);
}

static unsigned char *at(struct image *im, uint64_t addr)
{
	return im->heap + (addr - HEAP);
}

/* Thread i named by len bytes of coder, its array claiming length (len, unless a lie is wanted). */
static void thread_named(struct image *im, unsigned i, const void *bytes, size_t len, uint8_t coder, int32_t length)
{
	fake_put64(im->threads + ((size_t)i << 12) + layout.thread_obj, HANDLES + 8 * i);
	fake_put64(im->handles + 8 * i, THREAD_OF(i));
	fake_put32(at(im, THREAD_OF(i)) + layout.thread_name, narrow(STRING_OF(i)));
	fake_put32(at(im, STRING_OF(i)) + 8, (uint32_t)(STRING_KLASS - KLASS_BASE));
	fake_put32(at(im, STRING_OF(i)) + 12, narrow(ARRAY_OF(i)));
	at(im, STRING_OF(i))[16] = coder;
	fake_put32(at(im, ARRAY_OF(i)) + 12, (uint32_t)length);
	memcpy(at(im, ARRAY_OF(i)) + 16, bytes, len);
}

static uint64_t java_thread(unsigned i)
{
	return JAVA_THREADS + ((uint64_t)i << 12);
}

/* Thread i's name read as the profiler reads it: the result, the name in out. */
static enum hotspot_thread_name_result name_of(struct image *im, unsigned i, char out[HOTSPOT_THREAD_NAME_MAX])
{
	uint64_t string;
	enum hotspot_thread_name_result r = hotspot_thread_names__string(&im->mem, &layout, java_thread(i), &string);

	out[0] = '\0';
	return r == HOTSPOT_THREAD_NAME_OK ? hotspot_thread_names__read(&im->mem, &layout, string, out) : r;
}

static void latin1_names_whole(void **state)
{
	static const char name[] = "worker-pool-alpha-long-name-1";
	static const uint8_t umlauts[] = { 'P', 'r', 0xfc, 'f', '-', 0xdc, 'b' };
	char out[HOTSPOT_THREAD_NAME_MAX];
	struct image im;

	(void)state;
	image_new(&im);
	thread_named(&im, 0, name, strlen(name), 0, (int32_t)strlen(name));
	thread_named(&im, 1, umlauts, sizeof(umlauts), 0, sizeof(umlauts));
	assert_int_equal(name_of(&im, 0, out), HOTSPOT_THREAD_NAME_OK);
	assert_string_equal(out, name);
	assert_int_equal(name_of(&im, 1, out), HOTSPOT_THREAD_NAME_OK);
	assert_string_equal(out, "Pr\xc3\xbc" "f-\xc3\x9c" "b");
	fake_memory_free(&im.fm);
}

static void utf16_names_whole(void **state)
{
	/* 計算, U+1F600 as a surrogate pair, "-x" */
	static const uint16_t units[] = { 0x8a08, 0x7b97, 0xd83d, 0xde00, '-', 'x' };
	char out[HOTSPOT_THREAD_NAME_MAX];
	struct image im;

	(void)state;
	image_new(&im);
	thread_named(&im, 2, units, sizeof(units), 1, sizeof(units));
	assert_int_equal(name_of(&im, 2, out), HOTSPOT_THREAD_NAME_OK);
	assert_string_equal(out, "\xe8\xa8\x88\xe7\xae\x97\xf0\x9f\x98\x80-x");
	fake_memory_free(&im.fm);
}

/* What the decoder makes of bytes that are not a plain name. */
static void decoding_hostile_bytes(void **state)
{
	static const uint16_t lone[] = { 'a', 0xdc00, 'b', 0xd800 };
	static const uint8_t controls[] = { 'a', '\n', ';', 0x1b, 0x85, 'z' };
	static uint8_t big[HOTSPOT_THREAD_NAME_VALUE_MAX + 2];
	char out[HOTSPOT_THREAD_NAME_MAX];

	(void)state;
	assert_int_equal(hotspot_thread_names__decode((const uint8_t *)lone, sizeof(lone), 1, out),
			 HOTSPOT_THREAD_NAME_OK);
	assert_string_equal(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	assert_int_equal(hotspot_thread_names__decode(controls, sizeof(controls), 0, out), HOTSPOT_THREAD_NAME_OK);
	assert_string_equal(out, "a?;??z");
	assert_int_equal(hotspot_thread_names__decode(controls, 5, 1, out), HOTSPOT_THREAD_NAME_INVALID);
	assert_int_equal(hotspot_thread_names__decode(controls, 2, 2, out), HOTSPOT_THREAD_NAME_INVALID);
	assert_int_equal(hotspot_thread_names__decode(controls, 0, 0, out), HOTSPOT_THREAD_NAME_NONE);
	memset(big, 0xff, sizeof(big));
	assert_int_equal(hotspot_thread_names__decode(big, HOTSPOT_THREAD_NAME_VALUE_MAX, 0, out),
			 HOTSPOT_THREAD_NAME_OK);
	assert_int_equal(strlen(out), 2 * HOTSPOT_THREAD_NAME_VALUE_MAX);
	assert_int_equal(hotspot_thread_names__decode(big, HOTSPOT_THREAD_NAME_VALUE_MAX + 2, 0, out),
			 HOTSPOT_THREAD_NAME_INVALID);
	assert_string_equal(out, "");
}

/* Names that lie: each refused, for what it is. */
static void names_that_lie(void **state)
{
	char out[HOTSPOT_THREAD_NAME_MAX];
	struct image im;

	(void)state;
	image_new(&im);
	/* An absurd length, and a negative one. */
	thread_named(&im, 0, "abc", 3, 0, 1 << 30);
	assert_int_equal(name_of(&im, 0, out), HOTSPOT_THREAD_NAME_INVALID);
	thread_named(&im, 0, "abc", 3, 0, -3);
	assert_int_equal(name_of(&im, 0, out), HOTSPOT_THREAD_NAME_INVALID);
	/* An array at the heap's end whose length runs past it: unreadable. */
	thread_named(&im, 5, "abc", 3, 0, 3);
	fake_put32(at(&im, STRING_OF(5)) + 12, narrow(HEAP + HEAP_SIZE - 24));
	fake_put32(at(&im, HEAP + HEAP_SIZE - 24) + 12, 1000);
	assert_int_equal(name_of(&im, 5, out), HOTSPOT_THREAD_NAME_UNREADABLE);
	/* A String whose value points into unmapped memory. */
	thread_named(&im, 1, "abc", 3, 0, 3);
	fake_put32(at(&im, STRING_OF(1)) + 12, 0x40000000u);
	assert_int_equal(name_of(&im, 1, out), HOTSPOT_THREAD_NAME_UNREADABLE);
	/* A name field pointing at unmapped memory. */
	thread_named(&im, 2, "abc", 3, 0, 3);
	fake_put32(at(&im, THREAD_OF(2)) + layout.thread_name, 0x40000000u);
	assert_int_equal(name_of(&im, 2, out), HOTSPOT_THREAD_NAME_UNREADABLE);
	/* An object that is not a String. */
	thread_named(&im, 3, "abc", 3, 0, 3);
	fake_put32(at(&im, STRING_OF(3)) + 8, (uint32_t)(OTHER_KLASS - KLASS_BASE));
	assert_int_equal(name_of(&im, 3, out), HOTSPOT_THREAD_NAME_INVALID);
	/* A coder that is neither Latin-1 nor UTF-16. */
	thread_named(&im, 4, "abc", 3, 7, 3);
	assert_int_equal(name_of(&im, 4, out), HOTSPOT_THREAD_NAME_INVALID);
	/* No Thread object yet, and an empty handle slot: not named, not counted as a lie. */
	assert_int_equal(name_of(&im, 8, out), HOTSPOT_THREAD_NAME_NONE);
	thread_named(&im, 6, "abc", 3, 0, 3);
	fake_put64(im.handles + 8 * 6, 0);
	assert_int_equal(name_of(&im, 6, out), HOTSPOT_THREAD_NAME_NONE);
	assert_string_equal(out, "");
	fake_memory_free(&im.fm);
}

/* The table by tid: names read once, read again on a rename, lies counted once per thread. */
static void names_by_tid(void **state)
{
	struct hotspot_java_thread list[3] = {
		{ .tid = 300, .java_thread = java_thread(0) },
		{ .tid = 100, .java_thread = java_thread(1) },
		{ .tid = 200, .java_thread = java_thread(2) },
	};
	struct thread_names_stats st = { 0 };
	struct thread_names *names;
	struct image im;
	uint64_t reads;

	(void)state;
	image_new(&im);
	thread_named(&im, 0, "first-name-of-zero", 18, 0, 18);
	thread_named(&im, 1, "thread-one-long-name", 20, 0, 20);
	thread_named(&im, 2, "abc", 3, 0, 1 << 30);
	names = thread_names__new(&layout);
	assert_non_null(names);
	thread_names__update(names, &im.mem, list, 3);
	assert_string_equal(thread_names__get(names, 300), "first-name-of-zero");
	assert_string_equal(thread_names__get(names, 100), "thread-one-long-name");
	assert_null(thread_names__get(names, 200));
	assert_null(thread_names__get(names, 400));
	assert_true(thread_names__known(names, 200));
	assert_false(thread_names__known(names, 400));
	thread_names__mark_unlisted(names, 400);
	assert_true(thread_names__known(names, 400));

	/* Unchanged: kept with three reads each; the lie not counted again. */
	reads = im.mem.reads;
	thread_names__update(names, &im.mem, list, 3);
	assert_true(im.mem.reads - reads <= 3 * 3 + 6);
	assert_true(thread_names__known(names, 400));
	thread_names__forget_unlisted(names);
	assert_false(thread_names__known(names, 400));
	thread_names__stats(names, &st);
	assert_int_equal(st.read, 2);
	assert_int_equal(st.kept, 2);
	assert_int_equal(st.invalid, 1);

	/* Thread zero renamed: a new String, elsewhere. */
	fake_put32(at(&im, THREAD_OF(0)) + layout.thread_name, narrow(STRING_OF(7)));
	thread_named(&im, 7, "second-name-of-zero", 19, 0, 19);
	fake_put64(im.handles + 8 * 7, 0);
	thread_names__update(names, &im.mem, list, 3);
	assert_string_equal(thread_names__get(names, 300), "second-name-of-zero");
	memset(&st, 0, sizeof(st));
	thread_names__stats(names, &st);
	assert_int_equal(st.read, 3);
	assert_int_equal(st.kept, 3);
	assert_int_equal(st.invalid, 1);

	/* A thread gone from the list has no name any more. */
	thread_names__update(names, &im.mem, list, 1);
	assert_null(thread_names__get(names, 100));
	thread_names__free(names);
	fake_memory_free(&im.fm);
}

/* The heap's state, in an image of its own: its count of collections and its pause flag. */
#define COLLECTED_HEAP 0x30000ull

struct moving_image {
	struct image im;
	unsigned char *heap_state;
	uint64_t collect_on; /* a read of this address starts a collection (bumps the count) after it */
};

static bool read_while_collecting(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct moving_image *m = ctx;
	bool ok = fake_read(&m->im.fm, addr, buf, len);

	if (m->collect_on && addr <= m->collect_on && m->collect_on < addr + len) {
		uint32_t count;

		memcpy(&count, m->heap_state, sizeof(count));
		fake_put32(m->heap_state, count + 1);
		m->collect_on = 0;
	}
	return ok;
}

static void collect(struct moving_image *m)
{
	uint32_t count;

	memcpy(&count, m->heap_state, sizeof(count));
	fake_put32(m->heap_state, count + 1);
}

/*
 * A collection may put another String where a thread's String was, and a
 * name read while objects move may be another object's: the cheap check
 * is not trusted across a collection, and names read during one are not
 * believed (the previous ones are kept), nor counted as lies.
 */
static void names_across_collections(void **state)
{
	struct hotspot_thread_names__layout heap_layout = layout;
	struct hotspot_java_thread list[2] = {
		{ .tid = 100, .java_thread = java_thread(0) },
		{ .tid = 200, .java_thread = java_thread(1) },
	};
	struct thread_names_stats st = { 0 };
	struct thread_names *names;
	struct moving_image m;

	(void)state;
	image_new(&m.im);
	m.heap_state = fake_map(&m.im.fm, COLLECTED_HEAP, 16);
	m.collect_on = 0;
	m.im.mem.read = read_while_collecting;
	m.im.mem.ctx = &m;
	heap_layout.heap_collections = COLLECTED_HEAP;
	heap_layout.heap_pausing = COLLECTED_HEAP + 8;
	thread_named(&m.im, 0, "generation-1", 12, 0, 12);
	thread_named(&m.im, 1, "steady", 6, 0, 6);
	names = thread_names__new(&heap_layout);
	assert_non_null(names);
	thread_names__update(names, &m.im.mem, list, 2);
	assert_string_equal(thread_names__get(names, 100), "generation-1");

	/* Renamed, then compacted: the new String now where the old one was. */
	thread_named(&m.im, 0, "generation-2", 12, 0, 12);
	collect(&m);
	thread_names__update(names, &m.im.mem, list, 2);
	assert_string_equal(thread_names__get(names, 100), "generation-2");
	assert_string_equal(thread_names__get(names, 200), "steady");

	/* A pause under way: what is read is not believed, lies included. */
	m.heap_state[8] = 1;
	thread_named(&m.im, 0, "generation-3", 12, 0, 12);
	thread_named(&m.im, 1, "junk", 4, 7, 4);
	thread_names__update(names, &m.im.mem, list, 2);
	assert_string_equal(thread_names__get(names, 100), "generation-2");
	assert_string_equal(thread_names__get(names, 200), "steady");
	m.heap_state[8] = 0;
	thread_named(&m.im, 1, "steady", 6, 0, 6);
	thread_names__update(names, &m.im.mem, list, 2);
	assert_string_equal(thread_names__get(names, 100), "generation-3");

	/* A collection starts while thread zero's new name is read: kept as it was, read at the next list. */
	thread_named(&m.im, 7, "generation-4", 12, 0, 12);
	fake_put32(at(&m.im, THREAD_OF(0)) + layout.thread_name, narrow(STRING_OF(7)));
	m.collect_on = ARRAY_OF(7) + 16;
	thread_names__update(names, &m.im.mem, list, 2);
	assert_int_equal(m.collect_on, 0);
	assert_string_equal(thread_names__get(names, 100), "generation-3");
	assert_string_equal(thread_names__get(names, 200), "steady");
	thread_names__update(names, &m.im.mem, list, 2);
	assert_string_equal(thread_names__get(names, 100), "generation-4");
	thread_names__stats(names, &st);
	assert_int_equal(st.unreadable, 0);
	assert_int_equal(st.invalid, 0);
	thread_names__free(names);
	fake_memory_free(&m.im.fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(latin1_names_whole),
		cmocka_unit_test(utf16_names_whole),
		cmocka_unit_test(decoding_hostile_bytes),
		cmocka_unit_test(names_that_lie),
		cmocka_unit_test(names_by_tid),
		cmocka_unit_test(names_across_collections),
	};

	return cmocka_run_group_tests_name("hotspot thread names: Java threads' names from the JVM's memory", tests,
					   NULL, NULL);
}
