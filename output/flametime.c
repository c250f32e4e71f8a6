/*
 * flametime: a flame graph's stacks in buckets of time (contract in
 * flametime.h).
 *
 * Spans are grouped by stack first (a counting sort of their indices), so
 * each stack's buckets are filled in one scratch row and written out
 * before the next stack's: memory is the cells plus 4 bytes a span and
 * 8 bytes a stack, whatever the number of buckets.
 */
#include "flametime.h"

#include <errno.h>
#include <stdlib.h>

#include "profile/timeline.h"

/* Spans grouped by stack: the spans of stack s are by_stack[start[s] .. start[s + 1]). */
struct grouped {
	size_t *start;
	uint32_t *by_stack;
};

static int group(const struct timeline *tl, size_t nr_stacks, struct grouped *g)
{
	const struct timeline_span *spans = timeline__spans(tl);
	size_t nr = timeline__count(tl);

	g->start = calloc(nr_stacks + 2, sizeof(*g->start));
	g->by_stack = malloc((nr ? nr : 1) * sizeof(*g->by_stack));
	if (!g->start || !g->by_stack)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		if (spans[i].stack < nr_stacks)
			g->start[spans[i].stack + 2]++;
	for (size_t s = 2; s < nr_stacks + 2; s++)
		g->start[s] += g->start[s - 1];
	/* start[s + 1] is now where stack s's spans go; each placed moves it on, ending at its end. */
	for (size_t i = 0; i < nr; i++)
		if (spans[i].stack < nr_stacks)
			g->by_stack[g->start[spans[i].stack + 1]++] = (uint32_t)i;
	return 0;
}

static int append(struct flame_time *ft, size_t *cap, struct flame_cell cell)
{
	if (ft->nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct flame_cell *n = realloc(ft->cells, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ft->cells = n;
		*cap = ncap;
	}
	ft->cells[ft->nr++] = cell;
	return 0;
}

/*
 * Adds share, span s's part of its stack's count, to row[] over the buckets
 * of width ticks it overlaps, each in proportion to its ticks there; the
 * parts sum to share.
 */
static void spread(const struct timeline_span *s, uint64_t share, uint64_t width, uint64_t *row)
{
	uint64_t len = (uint64_t)s->last + 1 - s->first, carry = 0;

	for (uint64_t b = s->first / width; b <= s->last / width; b++) {
		uint64_t lo = b * width > s->first ? b * width : s->first;
		uint64_t hi = (b + 1) * width < (uint64_t)s->last + 1 ? (b + 1) * width : (uint64_t)s->last + 1;
		__extension__ unsigned __int128 n = (unsigned __int128)share * (hi - lo) + carry;

		row[b] += (uint64_t)(n / len);
		carry = (uint64_t)(n % len);
	}
}

/*
 * The cells at buckets of width ticks, into ft; -ENOSPC past
 * FLAMETIME_MAX_CELLS, -ENOMEM.
 */
static int fill(const struct profile *profile, const struct flame_tree *tree, const struct grouped *g,
		const uint64_t *weights, uint64_t width, uint32_t buckets, uint64_t *row, struct flame_time *ft)
{
	const struct timeline_span *spans = timeline__spans(profile__timeline(profile));
	size_t cap = 0;

	free(ft->cells);
	ft->cells = NULL;
	ft->nr = 0;
	ft->untimed = 0;
	for (size_t s = 0; s < tree->nr_stacks; s++) {
		uint64_t count, carry = 0;
		size_t depth;

		if (tree->stack_node[s] == FLAME_NO_NODE)
			continue;
		profile__stack(profile, s, &depth, &count);
		if (!weights[s]) {
			ft->untimed += count;
			continue;
		}
		for (size_t k = g->start[s]; k < g->start[s + 1]; k++) {
			const struct timeline_span *sp = &spans[g->by_stack[k]];

			spread(sp, timeline__span_share(sp, count, weights[s], &carry), width, row);
		}
		for (uint32_t b = 0; b < buckets; b++) {
			if (!row[b])
				continue;
			if (ft->nr == FLAMETIME_MAX_CELLS)
				return -ENOSPC;
			if (append(ft, &cap, (struct flame_cell){ tree->stack_node[s], b, row[b] }))
				return -ENOMEM;
			row[b] = 0;
		}
	}
	return 0;
}

/* The next round width after w ms: 1, 2, 5, 10, 20, 50... */
static uint64_t next_round(uint64_t w)
{
	uint64_t decade = 1;

	while (decade * 10 <= w)
		decade *= 10;
	return w < 2 * decade ? 2 * decade : w < 5 * decade ? 5 * decade : 10 * decade;
}

int flame_time__build(const struct profile *profile, const struct flame_tree *tree, double duration_s,
		      struct flame_time *ft)
{
	const struct timeline *tl = profile__timeline(profile);
	struct grouped g = { 0 };
	uint64_t *weights = NULL, *row = NULL, ticks, width = 1;
	int err = 0;

	*ft = (struct flame_time){ 0 };
	if (!tl || !tree->stack_node)
		return 0;
	/* Ticks are of 1 ms (TIMELINE_TICK_NS), so a bucket's width in ticks is its width in ms. */
	ticks = (uint64_t)timeline__end(tl) + 1;
	if (duration_s > 0 && duration_s < 1e8 && (uint64_t)(duration_s * 1000) > ticks)
		ticks = (uint64_t)(duration_s * 1000);
	while ((ticks + width - 1) / width > FLAMETIME_MAX_BUCKETS)
		width = next_round(width);
	weights = timeline__stack_weights(tl, tree->nr_stacks);
	row = calloc(FLAMETIME_MAX_BUCKETS, sizeof(*row));
	if (!weights || !row || group(tl, tree->nr_stacks, &g)) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		uint32_t buckets = (uint32_t)((ticks + width - 1) / width);

		for (uint32_t b = 0; b < FLAMETIME_MAX_BUCKETS; b++)
			row[b] = 0;
		err = fill(profile, tree, &g, weights, width, buckets, row, ft);
		if (!err) {
			ft->bucket_ms = width;
			ft->buckets = buckets;
			break;
		}
		if (err != -ENOSPC)
			goto out;
		if (buckets <= FLAMETIME_MIN_BUCKETS) {
			free(ft->cells);
			*ft = (struct flame_time){ .omitted = true };
			err = 0;
			break;
		}
		width = next_round(width);
	}
out:
	free(g.start);
	free(g.by_stack);
	free(weights);
	free(row);
	return err;
}

void flame_time__free(struct flame_time *ft)
{
	free(ft->cells);
	*ft = (struct flame_time){ 0 };
}
