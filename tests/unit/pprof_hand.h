/*
 * pprof_hand: a pprof message built by hand, as another tool (Go's
 * runtime/pprof, say) writes one: samples and CPU time, plain function
 * names, no system names, no comments. The reader's tests break one thing
 * in it at a time (tests/unit/test_pprof_hand.c).
 */
#ifndef JBPF_PPROF_HAND_H
#define JBPF_PPROF_HAND_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof_fixture.h"
#include "input/pprof_read.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

enum {
	S_EMPTY, S_SAMPLES, S_COUNT, S_CPU, S_NANOSECONDS, S_MAIN, S_WORK, S_APP_BIN, S_LIBC,
	S_PROCESS, S_PID, S_THREAD, S_TID, S_STATE, S_APP, S_WORKER, S_SLEEPING, S_DOZING, S_43, S_SPAN, S_NR
};

static const char *const hand_strings[S_NR] = {
	[S_EMPTY] = "", [S_SAMPLES] = "samples", [S_COUNT] = "count", [S_CPU] = "cpu",
	[S_NANOSECONDS] = "nanoseconds", [S_MAIN] = "main", [S_WORK] = "work", [S_APP_BIN] = "/usr/bin/app",
	[S_LIBC] = "/lib/libc.so.6", [S_PROCESS] = "process", [S_PID] = "pid", [S_THREAD] = "thread",
	[S_TID] = "tid", [S_STATE] = "state", [S_APP] = "app", [S_WORKER] = "worker",
	[S_SLEEPING] = "sleeping", [S_DOZING] = "dozing", [S_43] = "43", [S_SPAN] = "span",
};

enum { HAND_PERIOD_NS = 10000000, HAND_SAMPLES = 7 };

struct hand {
	PProfile msg;
	char *strings[S_NR];
	PValueType types[2], *type_ptrs[2], period_type;
	PMapping mappings[2], *mapping_ptrs[2];
	PFunction functions[2], *function_ptrs[2];
	PLine lines[2], *line_ptrs[2];
	PLocation locations[2], *location_ptrs[2];
	PSample sample, *sample_ptrs[1];
	uint64_t location_ids[2];
	int64_t values[2];
	PLabel labels[6], *label_ptrs[6];
	int64_t comments[1];
};

/* main (in the app, location 1, function 1) calls work (in libc, location 2, function 2), 7 samples. */
static inline void hand_init(struct hand *h)
{
	memset(h, 0, sizeof(*h));
	perftools__profiles__profile__init(&h->msg);
	for (size_t i = 0; i < S_NR; i++)
		h->strings[i] = (char *)hand_strings[i];
	h->msg.n_string_table = S_NR;
	h->msg.string_table = h->strings;

	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&h->types[i]);
		h->type_ptrs[i] = &h->types[i];
	}
	h->types[0].type = S_SAMPLES;
	h->types[0].unit = S_COUNT;
	h->types[1].type = S_CPU;
	h->types[1].unit = S_NANOSECONDS;
	h->msg.n_sample_type = 2;
	h->msg.sample_type = h->type_ptrs;
	perftools__profiles__value_type__init(&h->period_type);
	h->period_type = h->types[1];
	h->msg.period_type = &h->period_type;
	h->msg.period = HAND_PERIOD_NS;
	h->msg.duration_nanos = 3000000000;

	for (int i = 0; i < 2; i++) {
		perftools__profiles__mapping__init(&h->mappings[i]);
		h->mappings[i].id = (uint64_t)i + 1;
		h->mappings[i].filename = i ? S_LIBC : S_APP_BIN;
		h->mappings[i].has_functions = true;
		h->mapping_ptrs[i] = &h->mappings[i];

		perftools__profiles__function__init(&h->functions[i]);
		h->functions[i].id = (uint64_t)i + 1;
		h->functions[i].name = i ? S_WORK : S_MAIN;
		h->function_ptrs[i] = &h->functions[i];

		perftools__profiles__line__init(&h->lines[i]);
		h->lines[i].function_id = (uint64_t)i + 1;
		h->line_ptrs[i] = &h->lines[i];

		perftools__profiles__location__init(&h->locations[i]);
		h->locations[i].id = (uint64_t)i + 1;
		h->locations[i].mapping_id = (uint64_t)i + 1;
		h->locations[i].address = 0x1000 * ((uint64_t)i + 1);
		h->locations[i].n_line = 1;
		h->locations[i].line = &h->line_ptrs[i];
		h->location_ptrs[i] = &h->locations[i];
	}
	h->msg.n_mapping = h->msg.n_function = h->msg.n_location = 2;
	h->msg.mapping = h->mapping_ptrs;
	h->msg.function = h->function_ptrs;
	h->msg.location = h->location_ptrs;

	perftools__profiles__sample__init(&h->sample);
	h->location_ids[0] = 2; /* leaf first */
	h->location_ids[1] = 1;
	h->sample.n_location_id = 2;
	h->sample.location_id = h->location_ids;
	h->values[0] = HAND_SAMPLES;
	h->values[1] = HAND_SAMPLES * HAND_PERIOD_NS;
	h->sample.n_value = 2;
	h->sample.value = h->values;
	h->sample.label = h->label_ptrs;
	h->sample_ptrs[0] = &h->sample;
	h->msg.n_sample = 1;
	h->msg.sample = h->sample_ptrs;
	h->msg.comment = h->comments;
}

static inline void hand_label(struct hand *h, int64_t key, int64_t str, int64_t num)
{
	PLabel *l = &h->labels[h->sample.n_label];

	assert_true(h->sample.n_label < ARRAY_SIZE(h->labels));
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	l->num = num;
	h->label_ptrs[h->sample.n_label++] = l;
}

/* Packs h and reads it; the error text, if any, is left in err. */
static inline int hand_read(const struct hand *h, struct pprof_recording *rec, char *err, size_t err_size)
{
	size_t len = perftools__profiles__profile__get_packed_size(&h->msg);
	uint8_t *data = malloc(len ? len : 1);
	int ret;

	assert_non_null(data);
	assert_int_equal(perftools__profiles__profile__pack(&h->msg, data), len);
	ret = pprof_read__buffer(data, len, rec, err, err_size);
	free(data);
	return ret;
}

static inline void assert_refused(const struct hand *h, const char *reason)
{
	struct pprof_recording rec;
	char err[256] = "";

	if (hand_read(h, &rec, err, sizeof(err)) != -1) {
		pprof_recording__free(&rec);
		fail_msg("read, though it should fail with \"%s\"", reason);
	}
	if (!strstr(err, reason))
		fail_msg("failed with \"%s\", not \"%s\"", err, reason);
	assert_null(rec.profile);
}

#endif /* JBPF_PPROF_HAND_H */
