/*
 * timeline: when each stack of a profile was counted.
 *
 * A span (stack, first, last, weight) says that stack's count grew by
 * weight between ticks first and last, both included, spread evenly over
 * them. A tick is a millisecond since the recording began (TIMELINE_TICK_NS;
 * 2^32 of them are 49 days). A CPU sample is a span of one tick, a wait
 * runs from its start to its end.
 *
 * Weights place a stack's count in time; they are not the count. A
 * stack's count is spread over its spans in proportion to their weights
 * (timeline__span_share), so a count settled after its samples were taken
 * (a wall-clock profile's on-CPU time) or a weight that saturated at
 * 2^32 - 1 still lands where its samples were.
 *
 * Memory: 16 bytes a span, and 4 a stack. A sample of a stack whose latest
 * span began less than TIMELINE_MERGE_TICKS before it, and ends no later
 * than it, grows that span instead of adding one, so spans are at most one
 * per sample, and at most one per stack per TIMELINE_MERGE_TICKS while
 * samples come in time order. Past max_spans no span is added and the
 * weight left out is counted (timeline__lost). Not thread-safe.
 */
#ifndef JBPF_TIMELINE_H
#define JBPF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_TICK_NS 1000000ull
#define TIMELINE_MERGE_TICKS 10
/* The default bound: 16 Mi spans, 256 MiB. */
#define TIMELINE_DEFAULT_SPANS (16u << 20)

struct timeline_span {
	uint32_t stack;  /* the profile's stack number */
	uint32_t first;  /* ticks since the recording began */
	uint32_t last;   /* >= first */
	uint32_t weight; /* saturates at UINT32_MAX */
};

struct timeline;

/* max_spans 0 for TIMELINE_DEFAULT_SPANS. NULL when out of memory. */
struct timeline *timeline__new(size_t max_spans);
void timeline__free(struct timeline *t);

/*
 * Adds weight to stack between ticks first and last (swapped if given the
 * other way round). 0, or -ENOSPC past max_spans (the weight counted as
 * lost), -ENOMEM. A weight of 0 adds nothing.
 */
int timeline__add(struct timeline *t, uint32_t stack, uint32_t first, uint32_t last, uint64_t weight);

size_t timeline__count(const struct timeline *t);
/* Spans in the order added (mostly time order: records arrive so); NULL when there are none. */
const struct timeline_span *timeline__spans(const struct timeline *t);
/* Weight that found no room. */
uint64_t timeline__lost(const struct timeline *t);
/* The bytes the timeline holds: its spans' array as allocated (it doubles) and the per-stack index. */
size_t timeline__bytes(const struct timeline *t);
/* The latest tick of any span; 0 for none. */
uint32_t timeline__end(const struct timeline *t);

/*
 * Each stack's spans' weights summed, for stacks 0..nr_stacks): an array
 * the caller frees; NULL out of memory.
 */
uint64_t *timeline__stack_weights(const struct timeline *t, size_t nr_stacks);

/*
 * Each stack's spans' weights within ticks [from, to) (timeline__span_part
 * of each), for stacks 0..nr_stacks): an array the caller frees; NULL out
 * of memory.
 */
double *timeline__range_weights(const struct timeline *t, size_t nr_stacks, uint64_t from, uint64_t to);

/*
 * What part of span s lies in ticks [from, to): its share of the span's
 * ticks, 0 to 1.
 */
double timeline__span_part(const struct timeline_span *s, uint64_t from, uint64_t to);

/*
 * The part of count that span s carries, its stack's spans weighing
 * stack_weight in all: count * s->weight / stack_weight, rounded down;
 * *carry keeps the remainder across the spans of one stack, so that the
 * parts of all its spans, given in any order with one carry per stack,
 * sum to count exactly.
 */
uint64_t timeline__span_share(const struct timeline_span *s, uint64_t count, uint64_t stack_weight,
			     uint64_t *carry);

#endif /* JBPF_TIMELINE_H */
