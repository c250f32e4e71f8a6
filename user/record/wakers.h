/*
 * wakers: --wakers' slots, the stacks of wakers kept until the waits they
 * woke come.
 *
 * A waker (JBPF_RECORD_WAKER) arrives before its wait and is joined to it
 * by the number both carry (wait_id). Its stack, built by the aggregator
 * like any other, is kept here as the end of that wait's stack: a
 * "[woken by]" frame, then the waker's frames innermost first, each of a
 * waker's own kind (FRAME_KIND_WAKER; its process and thread roots as the
 * waker's roots), so that the two stacks meet at the separator.
 *
 * WAKER_SLOTS slots, one per wait_id modulo their number, made at the
 * first waker kept. A waker whose slot is taken replaces the one there,
 * most likely of a wait that did not come (dropped by --min-block, ended
 * unseen). A slot holds frame ids of one profile: wakers__clear when the
 * profile changes. Not thread-safe, like the aggregator that owns it.
 */
#ifndef JBPF_WAKERS_H
#define JBPF_WAKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define WAKER_SLOTS 4096 /* a power of two */

/* A waker's frames, for the wait whose wait_id is seq. */
struct waker {
	uint64_t seq;
	uint32_t depth;   /* 0: empty */
	uint32_t *frames; /* [woken by], then the waker's frames innermost first */
};

struct wakers;

/* NULL when out of memory. Every call below takes a NULL w as a set of empty slots, but wakers__keep. */
struct wakers *wakers__new(void);
void wakers__free(struct wakers *w);
/* Every slot emptied: the profile the frames were interned in is gone. */
void wakers__clear(struct wakers *w);

/*
 * Keeps the stack captured[0..depth) (root first, frames of profile) as
 * the waker of wait seq: 0, or -1 when it could not be kept (no memory,
 * profile full). *replaced: its slot held another waker, now gone either
 * way.
 */
int wakers__keep(struct wakers *w, struct profile *profile, uint64_t seq, const uint32_t *captured,
		 size_t depth, bool *replaced);

/*
 * The waker kept for wait seq; when there is none (ring full, replaced), a
 * stand-in that says so ("[woken by]", "[waker not recorded]") and *missing
 * set. NULL when the profile is full. The stand-in is valid until the next
 * call.
 */
const struct waker *wakers__of(struct wakers *w, struct profile *profile, uint64_t seq, bool *missing);

/* Done with waker k of wait seq: its slot is emptied (a waker is of one wait); a stand-in is left alone. */
void wakers__release(struct wakers *w, const struct waker *k, uint64_t seq);

/* Whether waker k is a timer's (an interrupt waker whose last frame is "[timed out]"). */
bool wakers__is_timer(const struct profile *profile, const struct waker *k);

#endif /* JBPF_WAKERS_H */
