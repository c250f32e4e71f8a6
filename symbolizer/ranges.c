/*
 * ranges: a bounded cache of named address ranges (contract in ranges.h).
 * A sorted array: lookups are binary searches, and an insertion moves the
 * entries after it, which is cheap at the few thousand ranges a kernel's
 * stacks name.
 */
#include "symbolizer/ranges.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct range {
	uint64_t start, end;
	char *name;
};

struct ranges {
	struct range *v;
	size_t nr, cap, max;
};

struct ranges *ranges__new(size_t max)
{
	struct ranges *r = calloc(1, sizeof(*r));

	if (r)
		r->max = max ? max : 1;
	return r;
}

static void clear(struct ranges *r)
{
	for (size_t i = 0; i < r->nr; i++)
		free(r->v[i].name);
	r->nr = 0;
}

void ranges__free(struct ranges *r)
{
	if (!r)
		return;
	clear(r);
	free(r->v);
	free(r);
}

/* The index of the first range that starts after addr. */
static size_t after(const struct ranges *r, uint64_t addr)
{
	size_t lo = 0, hi = r->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool ranges__find(const struct ranges *r, uint64_t addr, const char **name)
{
	size_t i = after(r, addr);

	if (!i || addr >= r->v[i - 1].end)
		return false;
	*name = r->v[i - 1].name;
	return true;
}

int ranges__add(struct ranges *r, uint64_t start, uint64_t end, const char *name)
{
	char *copy = NULL;
	size_t i;

	if (start >= end)
		return -EINVAL;
	if (r->nr == r->max)
		clear(r);
	i = after(r, start);
	if ((i && r->v[i - 1].end > start) || (i < r->nr && r->v[i].start < end))
		return -EINVAL;
	if (r->nr == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct range *v;

		if (cap > r->max)
			cap = r->max;
		v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	if (name && !(copy = strdup(name)))
		return -ENOMEM;
	memmove(&r->v[i + 1], &r->v[i], (r->nr - i) * sizeof(*r->v));
	r->v[i] = (struct range){ .start = start, .end = end, .name = copy };
	r->nr++;
	return 0;
}

size_t ranges__count(const struct ranges *r)
{
	return r->nr;
}
