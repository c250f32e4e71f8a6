/*
 * leaks: sampled allocations held until freed (contract in leaks.h).
 *
 * One table of held records, chained by hash, each under one key at a
 * time: (thread, time) while its address is awaited, then (process,
 * address) while it lives. A list in arrival order lets the end hand them
 * on oldest first and a process's be dropped in one pass.
 */
#include "leaks.h"

#include <stdlib.h>
#include <string.h>

#define LEAKS_BUCKETS 65536u
/* Key a of an allocation whose address is known: its process, marked apart from a thread id. */
#define LIVE_KEY (1ull << 32)

struct held {
	struct held *chain;       /* the next in its bucket */
	struct held *prev, *next; /* arrival order */
	uint64_t a, b;            /* awaited: tid, time_ns; live: LIVE_KEY | tgid, addr */
	size_t size;
	unsigned char record[];
};

struct leaks {
	struct held **buckets;
	struct held *oldest, *newest;
	size_t bytes, max_bytes;
	struct leaks_stats stats;
};

struct leaks *leaks__new(size_t max_bytes)
{
	struct leaks *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->buckets = calloc(LEAKS_BUCKETS, sizeof(*l->buckets));
	if (!l->buckets) {
		free(l);
		return NULL;
	}
	l->max_bytes = max_bytes;
	return l;
}

static size_t bucket_of(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h ^ (h >> 29)) & (LEAKS_BUCKETS - 1);
}

static struct held *find(const struct leaks *l, uint64_t a, uint64_t b)
{
	for (struct held *h = l->buckets[bucket_of(a, b)]; h; h = h->chain)
		if (h->a == a && h->b == b)
			return h;
	return NULL;
}

static void chain_in(struct leaks *l, struct held *h)
{
	size_t at = bucket_of(h->a, h->b);

	h->chain = l->buckets[at];
	l->buckets[at] = h;
}

static void chain_out(struct leaks *l, struct held *h)
{
	struct held **p = &l->buckets[bucket_of(h->a, h->b)];

	while (*p && *p != h)
		p = &(*p)->chain;
	if (*p)
		*p = h->chain;
}

static void drop(struct leaks *l, struct held *h)
{
	chain_out(l, h);
	if (h->prev)
		h->prev->next = h->next;
	else
		l->oldest = h->next;
	if (h->next)
		h->next->prev = h->prev;
	else
		l->newest = h->prev;
	l->bytes -= h->size;
	free(h);
}

static void hold(struct leaks *l, const struct jbpf_sample *s)
{
	size_t size = decode__sample_used_size(s);
	struct held *h;

	l->stats.sampled++;
	if (l->bytes + size > l->max_bytes || !(h = malloc(sizeof(*h) + size))) {
		l->stats.full++;
		return;
	}
	h->a = s->tid;
	h->b = s->time_ns;
	h->size = size;
	memcpy(h->record, s, size);
	h->prev = l->newest;
	h->next = NULL;
	if (l->newest)
		l->newest->next = h;
	else
		l->oldest = h;
	l->newest = h;
	l->bytes += size;
	chain_in(l, h);
}

static void placed(struct leaks *l, const struct jbpf_native_address *at)
{
	struct held *h = find(l, at->tid, at->time_ns), *old;

	if (!h)
		return;
	if (!at->addr || !(at->flags & JBPF_NATIVE_TRACKED)) {
		if (at->addr)
			l->stats.untracked++;
		else
			l->stats.no_address++;
		drop(l, h);
		return;
	}
	/* An address held already was freed unseen (its free's record lost): the new one stands. */
	old = find(l, LIVE_KEY | at->tgid, at->addr);
	if (old) {
		l->stats.freed++;
		drop(l, old);
	}
	chain_out(l, h);
	h->a = LIVE_KEY | at->tgid;
	h->b = at->addr;
	chain_in(l, h);
}

static void freed(struct leaks *l, const struct jbpf_native_free *f)
{
	struct held *h = find(l, LIVE_KEY | f->tgid, f->addr);

	if (h) {
		l->stats.freed++;
		drop(l, h);
	}
}

void leaks__record(struct leaks *l, const struct record *r)
{
	switch (r->type) {
	case JBPF_RECORD_NATIVE_ALLOC:
		hold(l, r->sample);
		break;
	case JBPF_RECORD_NATIVE_ADDRESS:
		placed(l, r->native_address);
		break;
	case JBPF_RECORD_NATIVE_FREE:
		freed(l, r->native_free);
		break;
	default:
		break;
	}
}

static uint32_t tgid_of(const struct held *h)
{
	return ((const struct jbpf_sample *)(const void *)h->record)->tgid;
}

void leaks__forget_process(struct leaks *l, uint32_t tgid)
{
	struct held *h = l->oldest, *next;

	for (; h; h = next) {
		next = h->next;
		if (tgid_of(h) == tgid) {
			l->stats.exited++;
			drop(l, h);
		}
	}
}

void leaks__flush(struct leaks *l, bool (*exited)(void *ctx, uint32_t tgid),
		  void (*fn)(void *ctx, const struct record *r), void *ctx)
{
	while (l->oldest) {
		struct held *h = l->oldest;

		if (!(h->a & LIVE_KEY)) {
			l->stats.no_address++;
		} else if (exited && exited(ctx, tgid_of(h))) {
			l->stats.exited++;
		} else {
			struct record r = { .type = JBPF_RECORD_NATIVE_ALLOC, .size = h->size, .data = h->record };

			l->stats.kept++;
			fn(ctx, &r);
		}
		drop(l, h);
	}
}

void leaks__stats(const struct leaks *l, struct leaks_stats *stats)
{
	*stats = l->stats;
}

void leaks__free(struct leaks *l)
{
	if (!l)
		return;
	while (l->oldest)
		drop(l, l->oldest);
	free(l->buckets);
	free(l);
}
