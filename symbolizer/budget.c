/*
 * budget: the symbolizer's memory bound (contract in budget.h).
 */
#include "symbolizer/budget.h"

#include <errno.h>

void membudget__init(struct membudget *b, size_t limit)
{
	b->limit = limit;
	b->used = 0;
	b->refused = 0;
}

int membudget__take(struct membudget *b, size_t bytes)
{
	if (bytes > b->limit - b->used) {
		b->refused++;
		return -ENOSPC;
	}
	b->used += bytes;
	return 0;
}

void membudget__refuse(struct membudget *b)
{
	b->refused++;
}

void membudget__give(struct membudget *b, size_t bytes)
{
	b->used = bytes > b->used ? 0 : b->used - bytes;
}

size_t membudget__left(const struct membudget *b)
{
	return b->limit - b->used;
}
