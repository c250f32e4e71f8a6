/*
 * A recording of several events in one pprof file (output/pprof.c,
 * input/pprof_read.c): each event's sample types side by side, each sample
 * valued in its own event's types and 0 in the others', the first event's
 * main type the default; read back one event at a time, the first unless
 * another is asked for, and an event the file has not refused by name.
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

#include "output/output.h"
#include "profile/profile.h"
#include "input/pprof_read.h"

static const struct output_meta both_meta = {
	.title = "Profiles of app: CPU, native memory",
	.duration_s = 2,
	.frequency_hz = 100,
	.summary = "7 samples taken, 7 written, 0 lost; 40 allocation calls, 2 sampled, 2 written, 0 lost",
	.event = "cpu,nativemem",
};

/* cpu: main;spin 7 and main;read 3; nativemem: main;malloc 4096 bytes in 2 calls. */
static struct profile *both_profile(void)
{
	struct profile *p = profile__new(NULL);
	uint32_t s[3];

	assert_non_null(p);
	s[0] = frame_ok(p, "cpu", FRAME_KIND_EVENT, 0);
	s[1] = frame_ok(p, "main", FRAME_KIND_NATIVE, 0);
	s[2] = frame_ok(p, "spin", FRAME_KIND_NATIVE, 0);
	assert_int_equal(profile__add(p, s, 3, 7), 0);
	s[2] = frame_ok(p, "read_[k]", FRAME_KIND_KERNEL, 0);
	assert_int_equal(profile__add(p, s, 3, 3), 0);
	s[0] = frame_ok(p, "nativemem", FRAME_KIND_EVENT, 0);
	s[2] = frame_ok(p, "malloc", FRAME_KIND_NATIVE, 0);
	assert_int_equal(profile__add_objects(p, s, 3, 4096, 2), 0);
	return p;
}

static void *both_file(size_t *len)
{
	struct profile *p = both_profile();
	void *data = written(OUTPUT_PPROF, p, &both_meta, 0, len);

	profile__free(p);
	return data;
}

/* What go tool pprof sees: four types, in the events' order, each sample valued in its own. */
static void types_side_by_side(void **state)
{
	static const char *const types[][2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" }, { "alloc_objects", "count" }, { "alloc_space", "bytes" },
	};
	size_t len;
	void *data = both_file(&len);
	PProfile *msg = decode(data, len);
	int cpu_samples = 0, malloc_samples = 0;

	(void)state;
	assert_int_equal(msg->n_sample_type, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(string_of(msg, msg->sample_type[i]->type), types[i][0]);
		assert_string_equal(string_of(msg, msg->sample_type[i]->unit), types[i][1]);
	}
	assert_string_equal(string_of(msg, msg->default_sample_type), "cpu");
	assert_int_equal(msg->period, 10000000);
	assert_int_equal(msg->n_sample, 3);
	for (size_t i = 0; i < msg->n_sample; i++) {
		const int64_t *v = msg->sample[i]->value;

		assert_int_equal(msg->sample[i]->n_value, 4);
		/* Two locations each: the event frame is none. */
		assert_int_equal(msg->sample[i]->n_location_id, 2);
		if (v[0]) {
			assert_int_equal(v[1], v[0] * 10000000);
			assert_true(v[2] == 0 && v[3] == 0);
			cpu_samples++;
		} else {
			assert_int_equal(v[1], 0);
			assert_int_equal(v[2], 2);
			assert_int_equal(v[3], 4096);
			malloc_samples++;
		}
	}
	assert_int_equal(cpu_samples, 2);
	assert_int_equal(malloc_samples, 1);
	perftools__profiles__profile__free_unpacked(msg, NULL);
	free(data);
}

/* Read back: the first event unless told, each without the other's stacks. */
static void read_one_event_at_a_time(void **state)
{
	struct pprof_recording rec;
	char err[256] = "";
	size_t len;
	void *data = both_file(&len);
	char *got;

	(void)state;
	if (pprof_read__buffer(data, len, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	assert_string_equal(rec.events, "cpu,nativemem");
	assert_string_equal(rec.event, "cpu");
	assert_false(rec.bytes);
	assert_false(rec.time_weights);
	assert_int_equal(rec.frequency_hz, 100);
	got = profile_text(rec.profile);
	assert_string_equal(got, "main|native;read_[k]|kernel 3\nmain|native;spin|native 7\n");
	free(got);
	pprof_recording__free(&rec);

	if (pprof_read__buffer_event(data, len, "nativemem", &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	assert_string_equal(rec.event, "nativemem");
	assert_true(rec.bytes);
	got = profile_text(rec.profile);
	assert_string_equal(got, "main|native;malloc|native 4096\n");
	assert_int_equal(profile__stack_objects(rec.profile, 0), 2);
	free(got);
	pprof_recording__free(&rec);

	assert_int_equal(pprof_read__buffer_event(data, len, "alloc", &rec, err, sizeof(err)), -1);
	assert_string_equal(err, "a recording of cpu,nativemem: it has no event alloc");
	free(data);
}

/* A file of one event is read when asked for it, and refused when asked for another. */
static void one_event_file_asked_by_name(void **state)
{
	struct profile *p = profile__new(NULL);
	struct output_meta meta = both_meta;
	struct pprof_recording rec;
	char err[256] = "";
	size_t len;
	void *data;
	uint32_t id;

	(void)state;
	assert_non_null(p);
	id = frame_ok(p, "spin", FRAME_KIND_NATIVE, 0);
	assert_int_equal(profile__add(p, &id, 1, 5), 0);
	meta.event = "cpu";
	data = written(OUTPUT_PPROF, p, &meta, 0, &len);
	if (pprof_read__buffer_event(data, len, "cpu", &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	assert_null(rec.events);
	assert_int_equal(profile__total(rec.profile), 5);
	pprof_recording__free(&rec);
	assert_int_equal(pprof_read__buffer_event(data, len, "wall", &rec, err, sizeof(err)), -1);
	assert_string_equal(err, "a recording of cpu alone: it has no event wall");
	free(data);
	profile__free(p);
}

/* An event list that names something else is refused in one line, its text made printable. */
static void event_list_of_others_refused(void **state)
{
	struct profile *p = both_profile();
	struct output_meta meta = both_meta;
	struct pprof_recording rec;
	char err[256] = "";
	size_t len;
	void *data;

	(void)state;
	meta.event = "cpu,heap\nfake";
	data = written(OUTPUT_PPROF, p, &meta, 0, &len);
	assert_int_equal(pprof_read__buffer_event(data, len, NULL, &rec, err, sizeof(err)), -1);
	assert_string_equal(err, "its event comment \"cpu,heap?fake\" names no event of ours");
	free(data);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(types_side_by_side),
		cmocka_unit_test(read_one_event_at_a_time),
		cmocka_unit_test(one_event_file_asked_by_name),
		cmocka_unit_test(event_list_of_others_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
