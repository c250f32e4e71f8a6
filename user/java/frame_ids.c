/*
 * frame_ids: a walked frame's profile ids (contract in frame_ids.h).
 * Open addressing with linear probing; a slot with n == 0 is free.
 */
#include "frame_ids.h"

#include <stdlib.h>
#include <string.h>

struct slot {
	struct frame_ids_key key;
	unsigned n;
	int64_t ids[FRAME_IDS_INLINE];
};

struct frame_ids {
	struct slot *slots;
	size_t mask, used, max_slots;
};

static bool power_of_two(size_t n)
{
	return n && !(n & (n - 1));
}

struct frame_ids *frame_ids__new(size_t slots, size_t max_slots)
{
	struct frame_ids *t = calloc(1, sizeof(*t));

	if (!t || !power_of_two(slots) || !power_of_two(max_slots) || max_slots < slots ||
	    !(t->slots = calloc(slots, sizeof(*t->slots)))) {
		free(t);
		return NULL;
	}
	t->mask = slots - 1;
	t->max_slots = max_slots;
	return t;
}

void frame_ids__free(struct frame_ids *t)
{
	if (t)
		free(t->slots);
	free(t);
}

void frame_ids__clear(struct frame_ids *t)
{
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->used = 0;
}

static size_t hash(const struct frame_ids_key *k)
{
	uint64_t h = k->ptr * 0x9e3779b97f4a7c15ull ^ k->pc * 0xc2b2ae3d27d4eb4full ^ k->cookie ^ k->kind;

	return (size_t)(h ^ h >> 29);
}

static bool same(const struct frame_ids_key *a, const struct frame_ids_key *b)
{
	return a->ptr == b->ptr && a->pc == b->pc && a->cookie == b->cookie && a->kind == b->kind;
}

/* The slot holding key, or the free one where it would go. */
static struct slot *find(const struct frame_ids *t, const struct frame_ids_key *key)
{
	size_t i = hash(key) & t->mask;

	while (t->slots[i].n && !same(&t->slots[i].key, key))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

unsigned frame_ids__get(const struct frame_ids *t, const struct frame_ids_key *key, int64_t ids[FRAME_IDS_INLINE])
{
	const struct slot *s = find(t, key);

	memcpy(ids, s->ids, s->n * sizeof(ids[0]));
	return s->n;
}

/* Twice the slots, every frame kept: false at max_slots or out of memory. */
static bool grow(struct frame_ids *t)
{
	size_t slots = 2 * (t->mask + 1);
	struct frame_ids bigger = { .mask = slots - 1, .used = t->used, .max_slots = t->max_slots };

	if (slots > t->max_slots || !(bigger.slots = calloc(slots, sizeof(*bigger.slots))))
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].n)
			*find(&bigger, &t->slots[i].key) = t->slots[i];
	free(t->slots);
	*t = bigger;
	return true;
}

void frame_ids__put(struct frame_ids *t, const struct frame_ids_key *key, const int64_t *ids, unsigned n)
{
	struct slot *s;

	if (!n || n > FRAME_IDS_INLINE)
		return;
	/* Three quarters full: probes grow long; twice the room, or at the bound start again. */
	if (t->used >= (t->mask + 1) / 4 * 3 && !grow(t))
		frame_ids__clear(t);
	s = find(t, key);
	if (!s->n)
		t->used++;
	s->key = *key;
	s->n = n;
	memcpy(s->ids, ids, n * sizeof(ids[0]));
}
