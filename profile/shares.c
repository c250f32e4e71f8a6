/*
 * shares: an open-addressing table of (key, stack) -> units while a
 * recording runs; at the first settle it is sorted by key once, and each
 * settle finds its key's run by binary search.
 *
 * A key's total T is split by cumulative rounding: with U the key's units
 * and u_1..u_n its stacks' units in order, stack i gets
 * round(T * (u_1 + .. + u_i) / U) - round(T * (u_1 + .. + u_{i-1}) / U),
 * which are never negative and sum to exactly T.
 */
#include "profile/shares.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_ENTRIES (4u << 20)

struct share {
	uint64_t key;
	uint32_t stack;
	uint32_t units; /* 0: empty slot */
};

struct shares {
	struct share *slots;
	size_t cap;      /* power of two, or 0 */
	size_t nr;       /* used slots */
	size_t max_entries;
	bool sorted;     /* slots[0..nr) sorted by key; no more adds */
};

struct shares *shares__new(size_t max_entries)
{
	struct shares *s = calloc(1, sizeof(*s));

	if (s)
		s->max_entries = max_entries ? max_entries : DEFAULT_MAX_ENTRIES;
	return s;
}

void shares__free(struct shares *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s);
}

static size_t slot_of(uint64_t key, uint32_t stack, size_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull ^ ((uint64_t)stack * 0xc2b2ae3d27d4eb4full);

	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static int grow(struct shares *s)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	struct share *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->slots[i].units)
			continue;
		for (j = slot_of(s->slots[i].key, s->slots[i].stack, cap); slots[j].units; j = (j + 1) & (cap - 1))
			;
		slots[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int shares__add(struct shares *s, uint64_t key, uint32_t stack, uint32_t units)
{
	size_t i;
	int err;

	if (s->sorted || !units)
		return s->sorted ? -EINVAL : 0;
	if ((s->nr + 1) * 2 > s->cap) {
		if (s->nr >= s->max_entries)
			goto lookup_only;
		err = grow(s);
		if (err)
			return err;
	}
lookup_only:
	for (i = slot_of(key, stack, s->cap); s->slots[i].units; i = (i + 1) & (s->cap - 1)) {
		if (s->slots[i].key == key && s->slots[i].stack == stack) {
			if (s->slots[i].units > UINT32_MAX - units)
				return -ENOSPC;
			s->slots[i].units += units;
			return 0;
		}
	}
	if (s->nr >= s->max_entries || (s->nr + 1) * 2 > s->cap)
		return -ENOSPC;
	s->slots[i] = (struct share){ .key = key, .stack = stack, .units = units };
	s->nr++;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct share *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Packs the used slots to the front and sorts them. */
static void sort_once(struct shares *s)
{
	size_t n = 0;

	if (s->sorted)
		return;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i].units)
			s->slots[n++] = s->slots[i];
	if (n)
		qsort(s->slots, n, sizeof(*s->slots), by_key);
	s->sorted = true;
}

bool shares__settle(struct shares *s, uint64_t key, uint64_t total, struct profile *profile)
{
	size_t lo = 0, hi, first, end;
	unsigned __int128 units = 0, cum = 0;
	uint64_t given = 0;

	sort_once(s);
	hi = s->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->slots[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	for (end = first; end < s->nr && s->slots[end].key == key; end++)
		units += s->slots[end].units;
	if (first == end)
		return false;
	for (size_t i = first; i < end; i++) {
		uint64_t upto;

		cum += s->slots[i].units;
		upto = (uint64_t)(((unsigned __int128)total * cum * 2 + units) / (units * 2));
		profile__add_to(profile, s->slots[i].stack, upto - given);
		given = upto;
	}
	return true;
}
