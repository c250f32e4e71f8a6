/*
 * timeline: spans of stacks in time (contract in timeline.h).
 *
 * Layout:
 *   spans[]    every span, in the order added
 *   latest[]   per stack number: index + 1 of its latest span, 0 for none;
 *              where the next sample of that stack may merge
 *
 * Merging only into a stack's latest span keeps an add O(1): records come
 * nearly in time order (one ring buffer for every CPU), and a sample that
 * comes late simply starts a span of its own.
 */
#include "timeline.h"

#include <errno.h>
#include <stdlib.h>

struct timeline {
	struct timeline_span *spans;
	size_t nr, cap, max;
	uint32_t *latest;
	size_t nr_latest;
	uint64_t lost;
	uint32_t end;
};

struct timeline *timeline__new(size_t max_spans)
{
	struct timeline *t = calloc(1, sizeof(*t));

	if (t)
		t->max = max_spans ? max_spans : TIMELINE_DEFAULT_SPANS;
	return t;
}

void timeline__free(struct timeline *t)
{
	if (!t)
		return;
	free(t->spans);
	free(t->latest);
	free(t);
}

/* Grows *array of *cap elements of size to hold at least want, doubling. */
static int grow(void **array, size_t *cap, size_t want, size_t size)
{
	size_t n = *cap ? *cap : 256;
	void *p;

	if (want <= *cap)
		return 0;
	while (n < want)
		n *= 2;
	p = realloc(*array, n * size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

static uint32_t saturate(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int timeline__add(struct timeline *t, uint32_t stack, uint32_t first, uint32_t last, uint64_t weight)
{
	struct timeline_span *s;
	size_t cap;

	if (!weight)
		return 0;
	if (first > last) {
		uint32_t swap = first;

		first = last;
		last = swap;
	}
	if (stack < t->nr_latest && t->latest[stack]) {
		s = &t->spans[t->latest[stack] - 1];
		/* A sample at or after the span's end, soon after its start: the span grows to it. */
		if (first == last && first >= s->last && first - s->first < TIMELINE_MERGE_TICKS) {
			s->last = first;
			s->weight = saturate((uint64_t)s->weight + weight);
			t->end = last > t->end ? last : t->end;
			return 0;
		}
	}
	if (t->nr >= t->max) {
		t->lost += weight;
		return -ENOSPC;
	}
	if (stack >= t->nr_latest) {
		cap = t->nr_latest;
		if (grow((void **)&t->latest, &cap, (size_t)stack + 1, sizeof(*t->latest)))
			return -ENOMEM;
		for (size_t i = t->nr_latest; i < cap; i++)
			t->latest[i] = 0;
		t->nr_latest = cap;
	}
	if (grow((void **)&t->spans, &t->cap, t->nr + 1, sizeof(*t->spans)))
		return -ENOMEM;
	t->spans[t->nr] = (struct timeline_span){ .stack = stack, .first = first, .last = last,
						  .weight = saturate(weight) };
	t->latest[stack] = (uint32_t)++t->nr;
	t->end = last > t->end ? last : t->end;
	return 0;
}

size_t timeline__count(const struct timeline *t)
{
	return t ? t->nr : 0;
}

const struct timeline_span *timeline__spans(const struct timeline *t)
{
	return t && t->nr ? t->spans : NULL;
}

uint64_t timeline__lost(const struct timeline *t)
{
	return t ? t->lost : 0;
}

size_t timeline__bytes(const struct timeline *t)
{
	return t ? sizeof(*t) + t->cap * sizeof(*t->spans) + t->nr_latest * sizeof(*t->latest) : 0;
}

uint32_t timeline__end(const struct timeline *t)
{
	return t ? t->end : 0;
}

uint64_t *timeline__stack_weights(const struct timeline *t, size_t nr_stacks)
{
	uint64_t *w = calloc(nr_stacks ? nr_stacks : 1, sizeof(*w));

	for (size_t i = 0; w && t && i < t->nr; i++)
		if (t->spans[i].stack < nr_stacks)
			w[t->spans[i].stack] += t->spans[i].weight;
	return w;
}

double *timeline__range_weights(const struct timeline *t, size_t nr_stacks, uint64_t from, uint64_t to)
{
	double *w = calloc(nr_stacks ? nr_stacks : 1, sizeof(*w));

	for (size_t i = 0; w && t && i < t->nr; i++)
		if (t->spans[i].stack < nr_stacks)
			w[t->spans[i].stack] += t->spans[i].weight * timeline__span_part(&t->spans[i], from, to);
	return w;
}

double timeline__span_part(const struct timeline_span *s, uint64_t from, uint64_t to)
{
	uint64_t lo = s->first > from ? s->first : from, hi = (uint64_t)s->last + 1 < to ? (uint64_t)s->last + 1 : to;

	if (hi <= lo)
		return 0;
	return (double)(hi - lo) / (double)((uint64_t)s->last + 1 - s->first);
}

uint64_t timeline__span_share(const struct timeline_span *s, uint64_t count, uint64_t stack_weight,
			     uint64_t *carry)
{
	/* count * weight needs up to 96 bits; a carry is below stack_weight. */
	__extension__ unsigned __int128 n;

	if (!stack_weight)
		return 0;
	n = (unsigned __int128)count * s->weight + *carry;
	*carry = (uint64_t)(n % stack_weight);
	return (uint64_t)(n / stack_weight);
}
