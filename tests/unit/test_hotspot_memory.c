/*
 * hotspot/memory: reads of a target's memory, over an image made here. A
 * window serves the reads inside its copy without a read of its own and
 * sends the others on; a window that cannot be copied says so and sends
 * every read on; strings stop at their NUL or fail, never cross into
 * memory that cannot be read. A gather reads its ranges in one call when
 * all are readable, and otherwise reads every other range and marks the
 * unreadable one, over the image and over this process's own memory
 * through process_vm_readv (where the kernel stops a copy at the first
 * page it cannot read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
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
	assert_true(hotspot_memory__window_open(&w, &mem, BASE + 100, 64));
	assert_int_equal(mem.reads, 1);
	/* Inside, to its last byte: no read of the memory under it. */
	assert_true(hotspot_memory__u32(&w.mem, BASE + 100, &v));
	assert_int_equal(v, 100 | 101 << 8 | 102 << 16 | 103u << 24);
	assert_true(hotspot_memory__u8(&w.mem, BASE + 163, &b));
	assert_int_equal(b, 163);
	assert_int_equal(mem.reads, 1);
	/* Across its end, or before it: read from the memory under it. */
	assert_true(hotspot_memory__u32(&w.mem, BASE + 162, &v));
	assert_int_equal(v, 162 | 163 << 8 | 164 << 16 | 165u << 24);
	assert_true(hotspot_memory__u8(&w.mem, BASE + 99, &b));
	assert_int_equal(b, 99);
	assert_int_equal(mem.reads, 3);
	/* Outside the memory altogether: a failed read, not a copy's bytes. */
	assert_false(hotspot_memory__u32(&w.mem, BASE + SIZE - 2, &v));
}

static void window_cut_to_its_bound(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	struct hotspot_window w;
	uint8_t b;

	(void)state;
	assert_true(hotspot_memory__window_open(&w, &mem, BASE, 4 * HOTSPOT_WINDOW_MAX));
	assert_int_equal(w.len, HOTSPOT_WINDOW_MAX);
	assert_int_equal(mem.bytes, HOTSPOT_WINDOW_MAX);
	assert_true(hotspot_memory__u8(&w.mem, BASE + HOTSPOT_WINDOW_MAX, &b));
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
	assert_false(hotspot_memory__window_open(&w, &mem, BASE + 100, 200));
	assert_true(hotspot_memory__u8(&w.mem, BASE + 150, &b));
	assert_int_equal(b, 150);
	assert_false(hotspot_memory__u8(&w.mem, BASE + 200, &b));
	assert_int_equal(mem.reads, 3);
	/* Nothing asked, nothing read: an empty window is no failure. */
	assert_true(hotspot_memory__window_open(&w, &mem, BASE + 200, 0));
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
	assert_int_equal(hotspot_memory__string(&mem, BASE + 4090, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "abcde");
	/* One that runs into the hole is refused. */
	image.bytes[4095] = 'x';
	assert_int_equal(hotspot_memory__string(&mem, BASE + 4090, buf, sizeof(buf)), -1);
	assert_string_equal(buf, "");
	/* Address 0 and a range that wraps are nobody's. */
	assert_false(hotspot_memory__read(&mem, 0, buf, 4));
	assert_false(hotspot_memory__read(&mem, UINT64_MAX - 1, buf, 4));
}

/* Three ranges, the middle one over the hole when hole: each marked as read or not, its bytes the image's. */
static void gather_over(struct hotspot_memory *mem, uint64_t base, bool hole, uint64_t expected_reads)
{
	uint8_t a[16], b[16], c[16];
	struct hotspot_span spans[] = {
		{ .addr = base, .buf = a, .len = sizeof(a) },
		{ .addr = base + 4096 + 8, .buf = b, .len = sizeof(b) },
		{ .addr = base + 2 * 4096 - 16, .buf = c, .len = sizeof(c) },
	};

	hotspot_memory__gather(mem, spans, 3);
	assert_true(spans[0].ok);
	assert_int_equal(spans[1].ok, !hole);
	assert_true(spans[2].ok);
	assert_int_equal(mem->reads, expected_reads);
	for (unsigned i = 0; i < 16; i++) {
		assert_int_equal(a[i], (uint8_t)i);
		assert_int_equal(c[i], (uint8_t)(2 * 4096 - 16 + i));
		if (!hole)
			assert_int_equal(b[i], (uint8_t)(4096 + 8 + i));
	}
}

static void gather_reads_each_range_or_says_it_could_not(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	uint8_t x;
	struct hotspot_span odd[] = {
		{ .addr = BASE, .buf = &x, .len = 0 },     /* nothing asked: read */
		{ .addr = 0, .buf = &x, .len = 1 },        /* nobody's */
		{ .addr = UINT64_MAX, .buf = &x, .len = 1 }, /* wraps */
	};

	(void)state;
	gather_over(&mem, BASE, false, 1);
	mem.reads = 0;
	image.hole_lo = BASE + 4096;
	image.hole_hi = BASE + 4096 + 64;
	/* The unreadable range costs one more call, for the ranges after it. */
	gather_over(&mem, BASE, true, 2);
	mem.reads = 0;
	hotspot_memory__gather(&mem, odd, 3);
	assert_true(odd[0].ok);
	assert_false(odd[1].ok);
	assert_false(odd[2].ok);
	assert_int_equal(mem.reads, 0);
}

/* The same through process_vm_readv, over two pages of this process with the second made unreadable. */
static void gather_through_the_kernel(void **state)
{
	struct hotspot_memory mem;
	uint8_t *pages = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(pages != MAP_FAILED);
	for (unsigned i = 0; i < 2 * 4096; i++)
		pages[i] = (uint8_t)i;
	hotspot_memory__of_process(&mem, getpid());
	gather_over(&mem, (uint64_t)(uintptr_t)pages, false, 1);
	assert_int_equal(mprotect(pages + 4096, 4096, PROT_NONE), 0);
	mem.reads = 0;
	/* The middle range lies in the protected page, and so does the last: only the first is read. */
	{
		uint8_t a[16], b[16];
		struct hotspot_span spans[] = {
			{ .addr = (uint64_t)(uintptr_t)pages + 100, .buf = a, .len = sizeof(a) },
			{ .addr = (uint64_t)(uintptr_t)pages + 4096 - 8, .buf = b, .len = sizeof(b) },
			{ .addr = (uint64_t)(uintptr_t)pages + 200, .buf = b, .len = sizeof(b) },
		};

		hotspot_memory__gather(&mem, spans, 3);
		assert_true(spans[0].ok);
		/* Half of it was readable: still not read. */
		assert_false(spans[1].ok);
		assert_true(spans[2].ok);
		assert_int_equal(a[0], 100);
		assert_int_equal(b[0], 200);
		assert_int_equal(mem.reads, 2);
	}
	munmap(pages, 2 * 4096);
}

/* Windows opened together: each holds its range, or says it could not. */
static void windows_open_together(void **state)
{
	struct hotspot_memory mem = memory_of_image();
	struct hotspot_window w1, w2, w3;
	struct hotspot_window *const ws[] = { &w1, &w2, &w3 };
	const uint64_t at[] = { BASE + 10, BASE + 300, BASE + 600 };
	const size_t lens[] = { 8, 4 * HOTSPOT_WINDOW_MAX, 0 };
	uint8_t b;

	(void)state;
	image.hole_lo = BASE + 300;
	image.hole_hi = BASE + 301;
	hotspot_memory__windows_open(ws, &mem, at, lens, 3);
	assert_int_equal(w1.len, 8);
	assert_int_equal(w2.len, 0);
	assert_int_equal(w3.len, 0);
	assert_true(hotspot_memory__u8(&w1.mem, BASE + 17, &b));
	assert_int_equal(b, 17);
	/* One call for all; the hole in the second cost one more for the third (empty: none). */
	assert_int_equal(mem.reads, 1);
	assert_true(hotspot_memory__u8(&w2.mem, BASE + 302, &b));
	assert_int_equal(mem.reads, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(window_serves_what_it_holds),
		cmocka_unit_test(window_cut_to_its_bound),
		cmocka_unit_test(window_over_a_hole),
		cmocka_unit_test(strings_stop_at_their_end),
		cmocka_unit_test(gather_reads_each_range_or_says_it_could_not),
		cmocka_unit_test(gather_through_the_kernel),
		cmocka_unit_test(windows_open_together),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
