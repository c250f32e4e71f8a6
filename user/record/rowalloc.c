/*
 * rowalloc: first fit over a sorted list of free ranges (contract in
 * rowalloc.h). The list is short (one range per gap between placed
 * files), so a linear walk is enough.
 */
#include "rowalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rowalloc__init(struct rowalloc *ra, uint32_t nr_rows)
{
	memset(ra, 0, sizeof(*ra));
	return !nr_rows || rowalloc__give(ra, 0, nr_rows) ? 0 : -ENOMEM;
}

void rowalloc__destroy(struct rowalloc *ra)
{
	free(ra->free);
	memset(ra, 0, sizeof(*ra));
}

static void remove_range(struct rowalloc *ra, size_t i)
{
	memmove(&ra->free[i], &ra->free[i + 1], (ra->nr_free - i - 1) * sizeof(*ra->free));
	ra->nr_free--;
}

bool rowalloc__take(struct rowalloc *ra, uint32_t n, uint32_t *start)
{
	if (!n)
		return false;
	for (size_t i = 0; i < ra->nr_free; i++) {
		struct rowalloc_range *r = &ra->free[i];

		if (r->len < n)
			continue;
		*start = r->start;
		r->start += n;
		r->len -= n;
		ra->free_rows -= n;
		if (!r->len)
			remove_range(ra, i);
		return true;
	}
	return false;
}

bool rowalloc__give(struct rowalloc *ra, uint32_t start, uint32_t n)
{
	size_t i = 0;

	if (!n)
		return true;
	while (i < ra->nr_free && ra->free[i].start < start)
		i++;
	if (i > 0 && ra->free[i - 1].start + ra->free[i - 1].len == start) {
		ra->free[i - 1].len += n;
		if (i < ra->nr_free && start + n == ra->free[i].start) {
			ra->free[i - 1].len += ra->free[i].len;
			remove_range(ra, i);
		}
		ra->free_rows += n;
		return true;
	}
	if (i < ra->nr_free && start + n == ra->free[i].start) {
		ra->free[i].start = start;
		ra->free[i].len += n;
		ra->free_rows += n;
		return true;
	}
	if (ra->nr_free == ra->cap) {
		size_t cap = ra->cap ? 2 * ra->cap : 16;
		struct rowalloc_range *grown = realloc(ra->free, cap * sizeof(*grown));

		if (!grown)
			return false;
		ra->free = grown;
		ra->cap = cap;
	}
	memmove(&ra->free[i + 1], &ra->free[i], (ra->nr_free - i) * sizeof(*ra->free));
	ra->free[i].start = start;
	ra->free[i].len = n;
	ra->nr_free++;
	ra->free_rows += n;
	return true;
}
