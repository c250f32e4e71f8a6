/*
 * ring: bounded lock-free multi-producer, single-consumer queue of Java
 * stacks (contract in ring.h).
 *
 * Memory: one anonymous mapping of nr_slots slots, each about 4 KiB
 * (RING_MAX_FRAMES frames of 16 bytes), so 512 slots take 2.1 MiB. It is
 * mapped with MAP_POPULATE so that no handler takes a page fault on it.
 */
#include "ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>

/* Handlers use these from signal context: they must not fall back to locks. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");

struct ring {
	_Atomic uint64_t head; /* next position a producer claims */
	char pad1[64 - sizeof(uint64_t)];
	_Atomic uint64_t tail; /* next position the consumer reads */
	char pad2[64 - sizeof(uint64_t)];
	uint64_t mask;          /* nr_slots - 1 */
	struct ring_slot slots[];
};

struct ring *ring__create(uint32_t nr_slots)
{
	size_t size;
	struct ring *r;

	if (nr_slots < 2 || (nr_slots & (nr_slots - 1))) {
		errno = EINVAL;
		return NULL;
	}
	size = offsetof(struct ring, slots) + (size_t)nr_slots * sizeof(struct ring_slot);
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->mask = nr_slots - 1;
	for (uint32_t i = 0; i < nr_slots; i++)
		atomic_init(&r->slots[i].turn, i);
	return r;
}

uint32_t ring__nr_slots(const struct ring *r)
{
	return (uint32_t)(r->mask + 1);
}

struct ring_slot *ring__claim(struct ring *r)
{
	uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);

	for (int tries = 0; tries < RING_CLAIM_TRIES; tries++) {
		struct ring_slot *slot = &r->slots[pos & r->mask];
		uint64_t turn = atomic_load_explicit(&slot->turn, memory_order_acquire);
		int64_t diff = (int64_t)(turn - pos);

		if (diff < 0)
			return NULL; /* the consumer has not freed this slot: full */
		if (diff > 0) {
			/* Another producer took pos: try the current head. */
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
			continue;
		}
		/* On failure, pos is reloaded with the head another producer moved. */
		if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
							  memory_order_relaxed))
			return slot;
	}
	return NULL;
}

void ring__publish(struct ring *r, struct ring_slot *slot)
{
	/* The slot was free at turn == pos; the consumer waits for pos + 1. */
	uint64_t turn = atomic_load_explicit(&slot->turn, memory_order_relaxed);

	atomic_store_explicit(&slot->turn, turn + 1, memory_order_release);
}

uint32_t ring__used(const struct ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	return head > tail ? (uint32_t)(head - tail) : 0;
}

struct ring_slot *ring__peek(struct ring *r)
{
	uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct ring_slot *slot = &r->slots[pos & r->mask];

	if (atomic_load_explicit(&slot->turn, memory_order_acquire) != pos + 1)
		return NULL;
	return slot;
}

void ring__pop(struct ring *r)
{
	uint64_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	struct ring_slot *slot = &r->slots[pos & r->mask];

	atomic_store_explicit(&slot->turn, pos + r->mask + 1, memory_order_release);
	atomic_store_explicit(&r->tail, pos + 1, memory_order_relaxed);
}

bool ring__idle(const struct ring *r)
{
	return atomic_load_explicit(&r->head, memory_order_acquire) ==
	       atomic_load_explicit(&r->tail, memory_order_relaxed);
}
