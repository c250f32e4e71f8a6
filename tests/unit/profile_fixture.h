/*
 * Helpers shared by the tests that build profiles by hand (profile,
 * collapsed, flamegraph, text, view, pprof). Include after <cmocka.h>.
 */
#ifndef JBPF_TEST_PROFILE_FIXTURE_H
#define JBPF_TEST_PROFILE_FIXTURE_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"

/*
 * p written in format (output__write), the bytes in memory, NUL-terminated
 * after the *len of them; the caller frees them. Fails the test if the
 * writer fails.
 */
static inline char *written(enum output_format format, const struct profile *p, const struct output_meta *meta,
			    size_t top, size_t *len)
{
	char *data = NULL;
	FILE *out = open_memstream(&data, len);

	assert_non_null(out);
	assert_int_equal(output__write(format, p, meta, top, out), 0);
	assert_int_equal(fclose(out), 0);
	return data;
}

/* The id of (name, kind) in p; fails the test if it cannot be interned. */
static inline uint32_t intern_ok(struct profile *p, const char *name, enum frame_kind kind)
{
	int64_t id = profile__intern(p, name, kind);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/*
 * The id of a frame as the tests' tables spell it: its name and kind, and
 * number for the frames made from parts (a process's pid, a thread's tid,
 * -1 for none; a state frame's enum jbpf_state, its name unused). Fails
 * the test if it cannot be interned.
 */
static inline uint32_t frame_ok(struct profile *p, const char *name, enum frame_kind kind, int64_t number)
{
	int64_t id;

	switch (kind) {
	case FRAME_KIND_PROCESS:
		id = profile__intern_process(p, name, number);
		break;
	case FRAME_KIND_THREAD:
		id = profile__intern_thread(p, name, number);
		break;
	case FRAME_KIND_WAKER_PROCESS:
		id = profile__intern_waker_process_parts(p, &(struct process_parts){ .name = name, .pid = number });
		break;
	case FRAME_KIND_WAKER_THREAD:
		id = profile__intern_waker_thread(p, name, number);
		break;
	case FRAME_KIND_STATE:
		id = profile__intern_state(p, (unsigned)number);
		break;
	default:
		id = profile__intern(p, name, kind);
		break;
	}
	assert_true(id >= 0);
	return (uint32_t)id;
}

static inline int profile_fixture_compare_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * lines[0..n) sorted and joined, each followed by "\n"; the caller frees
 * it. The lines are sorted in place.
 */
static inline char *sorted_text(char **lines, size_t n)
{
	size_t len = 1;
	char *text;

	qsort(lines, n, sizeof(*lines), profile_fixture_compare_lines);
	for (size_t i = 0; i < n; i++)
		len += strlen(lines[i]) + 1;
	text = calloc(1, len);
	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		strcat(text, lines[i]);
		strcat(text, "\n");
	}
	return text;
}

/*
 * Every stack of p with its count, one line each, "name|kind;name|kind COUNT"
 * (root first, kind as profile__frame_kind_name says), lines sorted: two profiles
 * hold the same stacks, frames and counts exactly when their texts are
 * equal. The caller frees the text.
 */
static inline char *profile_text(const struct profile *p)
{
	size_t nr = profile__stack_count(p);
	char **lines = calloc(nr ? nr : 1, sizeof(*lines));
	char *text;

	assert_non_null(lines);
	for (size_t i = 0; i < nr; i++) {
		size_t depth, len = 0;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);
		FILE *out = open_memstream(&lines[i], &len);

		assert_non_null(out);
		for (size_t d = 0; d < depth; d++)
			fprintf(out, "%s%s|%s", d ? ";" : "", profile__frame_name(p, frames[d]),
				profile__frame_kind_name(profile__frame_kind(p, frames[d])));
		fprintf(out, " %" PRIu64, count);
		assert_int_equal(fclose(out), 0);
	}
	text = sorted_text(lines, nr);
	for (size_t i = 0; i < nr; i++)
		free(lines[i]);
	free(lines);
	return text;
}

/* The same text from lines written by hand (each "name|kind;... COUNT"). */
static inline char *lines_text(const char *const *expected, size_t n)
{
	char **lines = calloc(n ? n : 1, sizeof(*lines));
	char *text;

	assert_non_null(lines);
	memcpy(lines, expected, n * sizeof(*lines));
	text = sorted_text(lines, n);
	free(lines);
	return text;
}

#endif /* JBPF_TEST_PROFILE_FIXTURE_H */
