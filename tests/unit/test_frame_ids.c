/*
 * frame_ids: the ids of walked Java frames, remembered by key. A frame put
 * is found again with its ids; the table doubles and keeps every frame
 * until its bound, and at the bound starts again rather than grow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "user/java/frame_ids.h"

static struct frame_ids_key key_of(uint64_t i)
{
	return (struct frame_ids_key){ .ptr = 0x7f0000000000ull + 64 * i, .pc = 0x7f1000000000ull + i,
				       .cookie = i % 7, .kind = 2 };
}

/* Frame i's ids: i + 1 of them (at most FRAME_IDS_INLINE), each naming i. */
static unsigned put_frame(struct frame_ids *t, uint64_t i)
{
	struct frame_ids_key key = key_of(i);
	int64_t ids[FRAME_IDS_INLINE];
	unsigned n = (unsigned)(i % FRAME_IDS_INLINE) + 1;

	for (unsigned k = 0; k < n; k++)
		ids[k] = (int64_t)(i * 16 + k);
	frame_ids__put(t, &key, ids, n);
	return n;
}

static bool has_frame(const struct frame_ids *t, uint64_t i)
{
	struct frame_ids_key key = key_of(i);
	int64_t ids[FRAME_IDS_INLINE];
	unsigned n = frame_ids__get(t, &key, ids);

	if (n != (unsigned)(i % FRAME_IDS_INLINE) + 1)
		return false;
	for (unsigned k = 0; k < n; k++)
		if (ids[k] != (int64_t)(i * 16 + k))
			return false;
	return true;
}

static void frames_are_found_again(void **state)
{
	struct frame_ids *t = frame_ids__new(16, 16);
	struct frame_ids_key other = key_of(3);
	int64_t ids[FRAME_IDS_INLINE];

	(void)state;
	assert_non_null(t);
	put_frame(t, 3);
	assert_true(has_frame(t, 3));
	/* Any part of the key differing is another frame. */
	other.pc++;
	assert_int_equal(frame_ids__get(t, &other, ids), 0);
	other = key_of(3);
	other.kind = 1;
	assert_int_equal(frame_ids__get(t, &other, ids), 0);
	/* More ids than a frame keeps: not remembered. */
	frame_ids__put(t, &other, (int64_t[FRAME_IDS_INLINE + 1]){ 0 }, FRAME_IDS_INLINE + 1);
	assert_int_equal(frame_ids__get(t, &other, ids), 0);
	frame_ids__clear(t);
	assert_false(has_frame(t, 3));
	frame_ids__free(t);
}

/* From 16 slots to 1024: three quarters of 1024 frames put, every one still there. */
static void growing_keeps_every_frame(void **state)
{
	struct frame_ids *t = frame_ids__new(16, 1024);

	(void)state;
	assert_non_null(t);
	for (uint64_t i = 0; i < 1024 / 4 * 3; i++)
		put_frame(t, i);
	for (uint64_t i = 0; i < 1024 / 4 * 3; i++)
		assert_true(has_frame(t, i));
	frame_ids__free(t);
}

/* At its bound the table empties and starts again: the newest frame is kept, the oldest are gone. */
static void at_the_bound_it_starts_again(void **state)
{
	struct frame_ids *t = frame_ids__new(16, 64);
	uint64_t last = 64 / 4 * 3;

	(void)state;
	assert_non_null(t);
	for (uint64_t i = 0; i <= last; i++)
		put_frame(t, i);
	assert_true(has_frame(t, last));
	assert_false(has_frame(t, 0));
	frame_ids__free(t);
}

static void bad_sizes_are_refused(void **state)
{
	(void)state;
	assert_null(frame_ids__new(0, 16));
	assert_null(frame_ids__new(24, 64));
	assert_null(frame_ids__new(16, 8));
	assert_null(frame_ids__new(16, 48));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames_are_found_again),
		cmocka_unit_test(growing_keeps_every_frame),
		cmocka_unit_test(at_the_bound_it_starts_again),
		cmocka_unit_test(bad_sizes_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
