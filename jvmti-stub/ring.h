/*
 * ring: the bounded lock-free queue of Java stacks between the signal
 * handler (many producers, one per interrupted thread) and the agent thread
 * (the only consumer).
 *
 * Memory is mapped once by ring__create and never freed: a handler may run
 * at any moment, even after the profiler has gone, and must always find
 * valid memory. Producers never wait: a producer that finds no free slot
 * after RING_CLAIM_TRIES attempts gives up, and the caller counts a drop.
 *
 * Each slot carries a turn counter (Dmitry Vyukov's bounded queue): slot i
 * is free for the producer at position p when turn == p, holds a published
 * trace for the consumer at position p when turn == p + 1, and is handed
 * back with turn = p + nr_slots. A producer claims a position with one
 * compare-and-swap, fills the slot, then publishes it with one release
 * store; the consumer reads it after an acquire load, in position order.
 *
 * Signal safety, per function: ring__claim, ring__publish and ring__used are
 * async-signal-safe (atomics on lock-free 64-bit words only). ring__create
 * and the consumer functions are not, and the consumer functions must be
 * called from one thread at a time.
 *
 * This header uses no JNI types, so the ring can be tested without a JVM.
 */
#ifndef JBPF_RING_H
#define JBPF_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "stream.h"

/*
 * One more frame than the stream carries: a stack that fills all of them
 * was deeper than JBPF_STREAM_MAX_FRAMES and is sent truncated.
 */
#define RING_MAX_FRAMES (JBPF_STREAM_MAX_FRAMES + 1)
/* A producer retries this often when another takes its position, then drops. */
#define RING_CLAIM_TRIES 8

/* The same layout as HotSpot's ASGCT_CallFrame { jint lineno; jmethodID method_id; }. */
struct ring_frame {
	int32_t lineno; /* for AsyncGetCallTrace: the bytecode index, -3 for a native method */
	uint32_t kind;  /* in ASGCT_CallFrame's padding, which it never writes: JBPF_FRAME_* (codewalk.h) */
	void *method_id;
};

struct ring_slot {
	_Atomic uint64_t turn; /* owned by the ring: see the comment above */
	uint64_t seq;          /* the value sent with the signal */
	uint64_t time_ns;      /* CLOCK_MONOTONIC when the handler ran */
	uint32_t session;      /* the recording the handler ran for */
	uint32_t tid;
	int32_t num_frames;    /* AsyncGetCallTrace's result, or JBPF_TRACE_* */
	uint32_t how;          /* JBPF_TRACE_FROM_*: where the frames were walked from, 0 the signal's context */
	struct ring_frame frames[RING_MAX_FRAMES];
};

struct ring;

/* Maps a ring of nr_slots (a power of two, at least 2) slots. NULL on failure, errno set. */
struct ring *ring__create(uint32_t nr_slots);
uint32_t ring__nr_slots(const struct ring *r);

/* Producer: a free slot to fill, or NULL if the ring stays full. Async-signal-safe. */
struct ring_slot *ring__claim(struct ring *r);
/* Producer: hands a claimed slot to the consumer. Async-signal-safe. */
void ring__publish(struct ring *r, struct ring_slot *slot);
/* Slots claimed and not yet consumed (approximate while producers run). Async-signal-safe. */
uint32_t ring__used(const struct ring *r);

/* Consumer: the oldest published slot, or NULL if there is none (yet). */
struct ring_slot *ring__peek(struct ring *r);
/* Consumer: gives the slot ring__peek returned back to the producers. */
void ring__pop(struct ring *r);
/* Consumer: whether no slot is claimed or published, i.e. no producer is mid-way. */
bool ring__idle(const struct ring *r);

#endif /* JBPF_RING_H */
