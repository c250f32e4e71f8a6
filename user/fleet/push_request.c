/*
 * push_request: a spool entry as a push.v1.PushRequest (contract in
 * push_request.h).
 */
#include "push_request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "common/random.h"
#include "output/output.h"
#include "proto/pyroscope/push/v1/push.pb-c.h"
#include "input/pprof_read.h"

/* The longest name a query can hold (push__query encodes one of at most 1 KiB). */
#define NAME_MAX_LEN 1024

/* The query's "name" parameter, percent-decoded into out; false when absent, malformed or too long. */
static bool name_of(const char *query, char *out, size_t size)
{
	const char *p = query;
	size_t n = 0;

	while (strncmp(p, "name=", 5)) {
		p = strchr(p, '&');
		if (!p)
			return false;
		p++;
	}
	for (p += 5; *p && *p != '&' && *p != '\n'; p++) {
		int hi, lo;
		char c = *p;

		if (c == '%') {
			hi = hex__digit(p[1]);
			lo = hi < 0 ? -1 : hex__digit(p[2]);
			if (lo < 0)
				return false;
			c = (char)(hi << 4 | lo);
			p += 2;
		}
		if (!c || n + 1 >= size)
			return false;
		out[n++] = c;
	}
	out[n] = '\0';
	return n > 0;
}

/* Pyroscope's name for the profiles of an event; NULL for one this does not make. */
static const char *profile_name(const char *event)
{
	if (!strcmp(event, "cpu"))
		return "process_cpu";
	if (!strcmp(event, "wall") || !strcmp(event, "offcpu"))
		return event;
	return NULL;
}

/*
 * Splits name, in place, into labels[] (pointing into it): service_name,
 * __name__, then the pairs. The number of labels, or -1.
 */
static int split_name(char *name, Types__V1__LabelPair *labels, size_t max)
{
	char *open = strchr(name, '{'), *close = open ? strchr(open, '}') : NULL, *event, *pair;
	size_t nr = 2;

	if (!open || !close || close[1] || max < 2)
		return -1;
	*open = *close = '\0';
	event = strrchr(name, '.');
	if (!event || event == name || !profile_name(event + 1))
		return -1;
	*event++ = '\0';
	labels[0].name = "service_name";
	labels[0].value = name;
	labels[1].name = "__name__";
	labels[1].value = (char *)profile_name(event);
	for (pair = open + 1; *pair; ) {
		char *comma = strchr(pair, ','), *eq;

		if (comma)
			*comma = '\0';
		eq = strchr(pair, '=');
		if (!eq || eq == pair || !eq[1] || nr == max)
			return -1;
		*eq = '\0';
		labels[nr].name = pair;
		labels[nr].value = eq + 1;
		nr++;
		if (!comma)
			break;
		pair = comma + 1;
	}
	return (int)nr;
}

int push_request__encode(const char *query, const void *profile, size_t len, const char *id, uint8_t **out,
			 size_t *out_len)
{
	Types__V1__LabelPair labels[PUSH_REQUEST_MAX_LABELS], *label_ptrs[PUSH_REQUEST_MAX_LABELS];
	Push__V1__RawSample sample = PUSH__V1__RAW_SAMPLE__INIT, *sample_ptr = &sample;
	Push__V1__RawProfileSeries series = PUSH__V1__RAW_PROFILE_SERIES__INIT, *series_ptr = &series;
	Push__V1__PushRequest request = PUSH__V1__PUSH_REQUEST__INIT;
	char name[NAME_MAX_LEN];
	int nr;

	if (!name_of(query, name, sizeof(name)))
		return -EINVAL;
	for (size_t i = 0; i < PUSH_REQUEST_MAX_LABELS; i++) {
		types__v1__label_pair__init(&labels[i]);
		label_ptrs[i] = &labels[i];
	}
	nr = split_name(name, labels, PUSH_REQUEST_MAX_LABELS);
	if (nr < 0)
		return -EINVAL;
	sample.raw_profile.data = (uint8_t *)profile;
	sample.raw_profile.len = len;
	sample.id = (char *)id;
	series.n_labels = (size_t)nr;
	series.labels = label_ptrs;
	series.n_samples = 1;
	series.samples = &sample_ptr;
	request.n_series = 1;
	request.series = &series_ptr;
	*out_len = push__v1__push_request__get_packed_size(&request);
	*out = malloc(*out_len ? *out_len : 1);
	if (!*out)
		return -ENOMEM;
	push__v1__push_request__pack(&request, *out);
	return 0;
}

/* The OTLP resource attribute a query's label stands for (OpenTelemetry's names where it has one). */
static const char *resource_key(const char *label)
{
	if (!strcmp(label, "service_name"))
		return "service.name";
	if (!strcmp(label, "hostname"))
		return "host.name";
	if (!strcmp(label, "container_id"))
		return "container.id";
	return label;
}

int push_request__otlp(const char *query, const void *profile, size_t len, uint8_t **out, size_t *out_len,
		       char *err, size_t err_size)
{
	Types__V1__LabelPair labels[PUSH_REQUEST_MAX_LABELS];
	const char *attributes[2 * PUSH_REQUEST_MAX_LABELS];
	struct pprof_recording rec;
	struct output_meta meta = { 0 };
	char name[NAME_MAX_LEN];
	size_t nr_attributes = 0;
	FILE *f;
	int nr, error;

	*out = NULL;
	if (!name_of(query, name, sizeof(name)) || (nr = split_name(name, labels, PUSH_REQUEST_MAX_LABELS)) < 0) {
		snprintf(err, err_size, "its name is not service.event{labels}");
		return -EINVAL;
	}
	for (int i = 0; i < nr; i++) {
		/* __name__ is the profile's kind: OTLP says that by the profile's sample type. */
		if (!strcmp(labels[i].name, "__name__"))
			continue;
		attributes[2 * nr_attributes] = resource_key(labels[i].name);
		attributes[2 * nr_attributes + 1] = labels[i].value;
		nr_attributes++;
	}
	if (pprof_read__buffer(profile, len, &rec, err, err_size))
		return -EINVAL;
	meta.event = rec.event;
	meta.unit = rec.time_weights ? "microseconds" : "samples";
	meta.duration_s = rec.duration_s;
	meta.frequency_hz = rec.frequency_hz;
	meta.start_unix_ns = rec.start_unix_ns;
	meta.resource_attributes = attributes;
	meta.nr_resource_attributes = nr_attributes;
	f = open_memstream((char **)out, out_len);
	error = f ? output__otlp_write(rec.profile, &meta, f) : -ENOMEM;
	if (f && fclose(f) && !error)
		error = -ENOMEM;
	pprof_recording__free(&rec);
	if (error) {
		free(*out);
		*out = NULL;
		snprintf(err, err_size, "%s", strerror(-error));
		return -ENOMEM;
	}
	return 0;
}

void push_request__uuid(char *buf, size_t size)
{
	uint64_t hi = random__u64(), lo = random__u64();

	/* Version 4 (random), variant 10. */
	hi = (hi & ~0xf000ull) | 0x4000ull;
	lo = (lo & ~(3ull << 62)) | (2ull << 62);
	snprintf(buf, size, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64, hi >> 32,
		 (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48, (uint64_t)(lo & 0xffffffffffffull));
}
