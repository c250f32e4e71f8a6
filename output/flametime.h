/*
 * flametime: when the stacks of a flame graph ran, in buckets of time, for
 * the page's timeline.
 *
 * The recording's length (the later of its duration and its timeline's
 * last tick) is cut into at most FLAMETIME_MAX_BUCKETS buckets of a round
 * width (1, 2 or 5 times a power of ten ms). Each stack's count is shared
 * among its spans (timeline__span_share) and each span's part among the
 * buckets it overlaps, in proportion to its ticks in each, with carries so
 * that a stack's cells sum to its count exactly. A cell is (node of the
 * flame tree where the stack ends, bucket, count), only where the count
 * is not 0.
 *
 * The page carries the cells, so they are bounded: past
 * FLAMETIME_MAX_CELLS the buckets are made wider (fewer cells, as a stack
 * seen in two buckets may then be in one), down to FLAMETIME_MIN_BUCKETS;
 * if even then there are too many, there is no timeline (omitted set).
 * Stacks with no span (their time not kept) are counted in untimed.
 */
#ifndef JBPF_OUTPUT_FLAMETIME_H
#define JBPF_OUTPUT_FLAMETIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flametree.h"
#include "profile/profile.h"

/* Some 5 CSS pixels a bucket across a 1200-pixel page. */
#define FLAMETIME_MAX_BUCKETS 240
#define FLAMETIME_MIN_BUCKETS 8
/* About 18 bytes of JSON a cell: at most some 4.5 MiB of page. */
#define FLAMETIME_MAX_CELLS (1u << 18)

struct flame_cell {
	uint32_t node;
	uint32_t bucket;
	uint64_t count;
};

struct flame_time {
	uint64_t bucket_ms;      /* 0: no timeline (the profile keeps no time, or omitted) */
	uint32_t buckets;
	uint64_t untimed;        /* counts of stacks drawn but never placed in time */
	bool omitted;            /* too many cells even at FLAMETIME_MIN_BUCKETS */
	struct flame_cell *cells;
	size_t nr;
};

/*
 * Buckets of tree's stacks (built by flame_tree__build from profile) over
 * duration_s, or the timeline's end if later. 0 or -ENOMEM; free with
 * flame_time__free whatever it returns.
 */
int flame_time__build(const struct profile *profile, const struct flame_tree *tree, double duration_s,
		      struct flame_time *out);
void flame_time__free(struct flame_time *ft);

#endif /* JBPF_OUTPUT_FLAMETIME_H */
