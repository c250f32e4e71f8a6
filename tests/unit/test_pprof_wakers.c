/*
 * A wait joined with its waker (--wakers) in a pprof file and in a view
 * (output/pprof.c, input/pprof_read.c, profile/view.c): the waker's frames
 * after the wait's state, in that order; the waker's process and thread
 * as labels of their own (waker_process, waker_pid, waker_thread,
 * waker_tid), read back as the frames that end the stack; a view shows
 * the waker's roots as it shows the wait's own, and --no-wakers drops
 * the waker's part.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof_fixture.h"
#include "profile_fixture.h"

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "output/output.h"
#include "profile/profile.h"
#include "profile/view.h"
#include "input/pprof_read.h"

static const struct output_meta wall_meta = {
	.title = "Wall-clock profile of app",
	.duration_s = 2,
	.frequency_hz = 99,
	.summary = "wakers: 1 read",
	.event = "wall",
	.process_roots = "pid",
};

/* consumer's 80 us asleep in futex_wait, woken by producer's produce; 20 us running consume. */
static struct profile *woken_profile(void)
{
	struct profile *p = profile__new(NULL);
	uint32_t s[9];

	assert_non_null(p);
	s[0] = frame_ok(p, "app", FRAME_KIND_PROCESS, 7);
	s[1] = frame_ok(p, "consumer", FRAME_KIND_THREAD, 8);
	s[2] = frame_ok(p, "consume", FRAME_KIND_NATIVE, 0);
	s[3] = frame_ok(p, "futex_wait_[k]", FRAME_KIND_KERNEL, 0);
	s[4] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_SLEEPING);
	s[5] = frame_ok(p, "[woken by]", FRAME_KIND_WAKER, 0);
	s[6] = frame_ok(p, "produce", FRAME_KIND_WAKER, 0);
	s[7] = frame_ok(p, "producer", FRAME_KIND_WAKER_THREAD, 9);
	s[8] = frame_ok(p, "app", FRAME_KIND_WAKER_PROCESS, 7);
	assert_int_equal(profile__add(p, s, 9, 80), 0);
	s[3] = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_RUNNING);
	assert_int_equal(profile__add(p, s, 4, 20), 0);
	return p;
}

#define WOKEN_TEXT                                                                                          \
	"app (pid 7)|process;[consumer tid=8]|thread;consume|native;[running]|state 20\n"                    \
	"app (pid 7)|process;[consumer tid=8]|thread;consume|native;futex_wait_[k]|kernel;[sleeping]|state;" \
	"[woken by]|waker;produce|waker;[producer tid=9]|waker-thread;app (pid 7)|waker-process 80\n"

static const Perftools__Profiles__Label *label(const PProfile *msg, const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(string_of(msg, s->label[i]->key), key))
			return s->label[i];
	return NULL;
}

/* In the file: the waker's frames as locations after the wait's, its roots as labels. */
static void the_waker_is_labelled(void **state)
{
	struct profile *p = woken_profile();
	size_t len;
	void *data = written(OUTPUT_PPROF, p, &wall_meta, 0, &len);
	PProfile *msg = decode(data, len);
	const Perftools__Profiles__Sample *woken = NULL;

	(void)state;
	for (size_t i = 0; i < msg->n_sample; i++)
		if (msg->sample[i]->n_location_id == 4)
			woken = msg->sample[i];
	assert_non_null(woken);
	assert_string_equal(string_of(msg, label(msg, woken, "waker_thread")->str), "producer");
	assert_int_equal(label(msg, woken, "waker_tid")->num, 9);
	assert_string_equal(string_of(msg, label(msg, woken, "waker_process")->str), "app");
	assert_int_equal(label(msg, woken, "waker_pid")->num, 7);
	assert_string_equal(string_of(msg, label(msg, woken, "thread")->str), "consumer");
	assert_string_equal(string_of(msg, label(msg, woken, "state")->str), "sleeping");
	perftools__profiles__profile__free_unpacked(msg, NULL);
	free(data);
	profile__free(p);
}

/* Read back: the same stacks, the state before the waker's part and the waker's roots ending it. */
static void a_woken_wait_reads_back_as_written(void **state)
{
	struct profile *p = woken_profile();
	struct pprof_recording rec;
	char err[256] = "", *got;
	size_t len;
	void *data = written(OUTPUT_PPROF, p, &wall_meta, 0, &len);

	(void)state;
	if (pprof_read__buffer(data, len, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	got = profile_text(rec.profile);
	assert_string_equal(got, WOKEN_TEXT);
	free(got);
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

static char *viewed(const struct profile *from, const struct view_config *config)
{
	struct profile *to = profile__new(NULL);
	char *text;

	assert_non_null(to);
	assert_int_equal(view__apply(from, config, to, NULL), 0);
	text = profile_text(to);
	profile__free(to);
	return text;
}

/* A view shows the waker's roots as the wait's own; --no-wakers leaves the wait alone. */
static void views_treat_the_waker_as_the_wait(void **state)
{
	struct profile *p = woken_profile();
	char *got;

	(void)state;
	got = viewed(p, &(struct view_config){ .process_root = VIEW_ROOT_NONE });
	assert_string_equal(got, "consume|native;[running]|state 20\n"
				 "consume|native;futex_wait_[k]|kernel;[sleeping]|state;[woken by]|waker;produce|waker 80\n");
	free(got);
	got = viewed(p, &(struct view_config){ .process_root = VIEW_ROOT_PROCESS, .threads = true });
	assert_string_equal(got, WOKEN_TEXT);
	free(got);
	got = viewed(p, &(struct view_config){ .threads = true, .no_wakers = true });
	assert_string_equal(got, "[consumer tid=8]|thread;consume|native;[running]|state 20\n"
				 "[consumer tid=8]|thread;consume|native;futex_wait_[k]|kernel;[sleeping]|state 80\n");
	free(got);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_waker_is_labelled),
		cmocka_unit_test(a_woken_wait_reads_back_as_written),
		cmocka_unit_test(views_treat_the_waker_as_the_wait),
	};

	return cmocka_run_group_tests_name("wakers in pprof files and views", tests, NULL, NULL);
}
