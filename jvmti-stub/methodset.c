/*
 * methodset: a bounded set of method IDs (contract in methodset.h).
 *
 * Linear probing over a power-of-two table; 0 marks an empty entry, so the
 * ID 0 (no jmethodID at all) is kept in a flag of its own. Keys are
 * pointers, 8-byte aligned and clustered, so they are spread with a
 * multiplicative hash before use.
 */
#include "methodset.h"

#include <stdlib.h>
#include <string.h>

struct methodset {
	uint64_t *keys;
	uint64_t mask;
	uint64_t count;   /* keys in the table, 0 not included */
	uint64_t limit;   /* count at which the table is emptied: 3/4 of it */
	uint64_t resets;
	bool has_zero;
};

struct methodset *methodset__new(unsigned int capacity_log2)
{
	struct methodset *set;

	if (capacity_log2 < 4 || capacity_log2 > 30)
		return NULL;
	set = calloc(1, sizeof(*set));
	if (!set)
		return NULL;
	set->keys = calloc((size_t)1 << capacity_log2, sizeof(*set->keys));
	if (!set->keys) {
		free(set);
		return NULL;
	}
	set->mask = ((uint64_t)1 << capacity_log2) - 1;
	set->limit = (set->mask + 1) / 4 * 3;
	return set;
}

void methodset__free(struct methodset *set)
{
	if (!set)
		return;
	free(set->keys);
	free(set);
}

static uint64_t slot_of(const struct methodset *set, uint64_t id)
{
	return ((id * 0x9e3779b97f4a7c15ull) >> 32) & set->mask;
}

bool methodset__contains(const struct methodset *set, uint64_t id)
{
	if (!id)
		return set->has_zero;
	/* The table is never more than 3/4 full, so an empty entry ends the probe. */
	for (uint64_t i = slot_of(set, id);; i = (i + 1) & set->mask) {
		if (set->keys[i] == id)
			return true;
		if (!set->keys[i])
			return false;
	}
}

void methodset__insert(struct methodset *set, uint64_t id)
{
	if (!id) {
		set->has_zero = true;
		return;
	}
	if (methodset__contains(set, id))
		return;
	if (set->count >= set->limit) {
		methodset__clear(set);
		set->resets++;
	}
	for (uint64_t i = slot_of(set, id);; i = (i + 1) & set->mask)
		if (!set->keys[i]) {
			set->keys[i] = id;
			set->count++;
			return;
		}
}

void methodset__clear(struct methodset *set)
{
	memset(set->keys, 0, (set->mask + 1) * sizeof(*set->keys));
	set->count = 0;
	set->has_zero = false;
}

uint64_t methodset__resets(const struct methodset *set)
{
	return set->resets;
}
