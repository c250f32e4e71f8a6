/*
 * hotspot/memory: reads of a target's memory, over an image made here. A
 * window serves the reads inside its copy without a read of its own and
 * sends the others on; a window that cannot be copied says so and sends
 * every read on; strings stop at their NUL or fail, never cross into
 * memory that cannot be read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hotspot/memory.h"

#define BASE 0x200000ull
#define SIZE 8192u

/* 8 KiB of bytes i & 0xff at BASE + i; [hole_lo, hole_hi) cannot be read. */
struct image {
	uint8_t bytes[SIZE];
	uint64_t hole_lo, hole_hi;
};

static bool image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;

	if (addr < BASE || addr + len > BASE + SIZE || (addr < im->hole_hi && addr + len > im->hole_lo))
		return false;
	memcpy(buf, im->bytes + (addr - BASE), len);
	return true;
}

static struct image image;

static struct hotspot_memory memory_of_image(void)
{
	for (unsigned i = 0; i < SIZE; i++)
		image.bytes[i] = (uint8_t)i;
	image.hole_lo = image.hole_hi = 0;
	return (struct hotspot_memory){ .read = image_read, .ctx = &image };
}

static void window_serves_what_it_holds(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	struct hotspot_window w;
	uint32_t v;
	uint8_t b;

	(void)state;
	assert_true(hotspot_window_open(&w, &mem, BASE + 100, 64));
	assert_int_equal(mem.reads, 1);
	/* Inside, to its last byte: no read of the memory under it. */
	assert_true(hotspot_memory_u32(&w.mem, BASE + 100, &v));
	assert_int_equal(v, 100 | 101 << 8 | 102 << 16 | 103u << 24);
	assert_true(hotspot_memory_u8(&w.mem, BASE + 163, &b));
	assert_int_equal(b, 163);
	assert_int_equal(mem.reads, 1);
	/* Across its end, or before it: read from the memory under it. */
	assert_true(hotspot_memory_u32(&w.mem, BASE + 162, &v));
	assert_int_equal(v, 162 | 163 << 8 | 164 << 16 | 165u << 24);
	assert_true(hotspot_memory_u8(&w.mem, BASE + 99, &b));
	assert_int_equal(b, 99);
	assert_int_equal(mem.reads, 3);
	/* Outside the memory altogether: a failed read, not a copy's bytes. */
	assert_false(hotspot_memory_u32(&w.mem, BASE + SIZE - 2, &v));
}

static void window_cut_to_its_bound(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	struct hotspot_window w;
	uint8_t b;

	(void)state;
	assert_true(hotspot_window_open(&w, &mem, BASE, 4 * HOTSPOT_WINDOW_MAX));
	assert_int_equal(w.len, HOTSPOT_WINDOW_MAX);
	assert_int_equal(mem.bytes, HOTSPOT_WINDOW_MAX);
	assert_true(hotspot_memory_u8(&w.mem, BASE + HOTSPOT_WINDOW_MAX, &b));
	assert_int_equal(b, HOTSPOT_WINDOW_MAX & 0xff);
	assert_int_equal(mem.reads, 2);
}

/* A copy that cannot be taken (a hole inside it): false, and every read goes to the memory under it. */
static void window_over_a_hole(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	struct hotspot_window w;
	uint8_t b;

	(void)state;
	image.hole_lo = BASE + 200;
	image.hole_hi = BASE + 201;
	assert_false(hotspot_window_open(&w, &mem, BASE + 100, 200));
	assert_true(hotspot_memory_u8(&w.mem, BASE + 150, &b));
	assert_int_equal(b, 150);
	assert_false(hotspot_memory_u8(&w.mem, BASE + 200, &b));
	assert_int_equal(mem.reads, 3);
	/* Nothing asked, nothing read: an empty window is no failure. */
	assert_true(hotspot_window_open(&w, &mem, BASE + 200, 0));
	assert_int_equal(mem.reads, 3);
}

static void strings_stop_at_their_end(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	char buf[64];

	(void)state;
	/* Bytes 4090..4095 then the hole: a string that ends before the hole reads. */
	memcpy(image.bytes + 4090, "abcde", 6);
	image.hole_lo = BASE + 4096;
	image.hole_hi = BASE + 8192;
	assert_int_equal(hotspot_memory_string(&mem, BASE + 4090, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "abcde");
	/* One that runs into the hole is refused. */
	image.bytes[4095] = 'x';
	assert_int_equal(hotspot_memory_string(&mem, BASE + 4090, buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	/* Address 0 and a range that wraps are nobody's. */
	assert_false(hotspot_memory_read(&mem, 0, buf, 4));
	assert_false(hotspot_memory_read(&mem, UINT64_MAX - 1, buf, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window_serves_what_it_holds),
		cmocka_unit_test(window_cut_to_its_bound),
		cmocka_unit_test(window_over_a_hole),
		cmocka_unit_test(strings_stop_at_their_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
