/*
 * frame_ids: the profile's ids of a walked Java frame's logical frames,
 * remembered per frame, so that a method met again costs no naming, no
 * formatting and no hashing of its name.
 *
 * A key is what makes the names: the frame's kind, its pointer, its
 * cookie, and for a compiled frame its pc (inlining depends on it; an
 * interpreted frame's bcp does not change its name). At most
 * FRAME_IDS_INLINE ids per frame (deeper inlining is not remembered).
 * The table is bounded: when it is three quarters full it doubles, up to
 * its bound, where it is emptied instead.
 * Ids name frames of one profile: frame_ids__clear when the profile is
 * handed over (--continuous).
 */
#ifndef JBPF_FRAME_IDS_H
#define JBPF_FRAME_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_IDS_INLINE 8

struct frame_ids_key {
	uint64_t ptr, pc, cookie;
	uint8_t kind;
};

struct frame_ids;

/* Room for slots frames, growing to max_slots (powers of two); NULL when out of memory. */
struct frame_ids *frame_ids__new(size_t slots, size_t max_slots);
void frame_ids__free(struct frame_ids *t);
void frame_ids__clear(struct frame_ids *t);

/* The ids of key's frames, outermost first, into ids: how many, 0 when not known. */
unsigned frame_ids__get(const struct frame_ids *t, const struct frame_ids_key *key, int64_t ids[FRAME_IDS_INLINE]);
/* Remembers n ids (at most FRAME_IDS_INLINE) for key. */
void frame_ids__put(struct frame_ids *t, const struct frame_ids_key *key, const int64_t *ids, unsigned n);

#endif /* JBPF_FRAME_IDS_H */
