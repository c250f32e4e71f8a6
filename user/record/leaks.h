/*
 * leaks: the sampled allocations not freed by the end (-e nativemem
 * --leaks).
 *
 * A sampled allocation (JBPF_RECORD_NATIVE_ALLOC) is held, a copy of its
 * record, until the call returns its address (JBPF_RECORD_NATIVE_ADDRESS,
 * matched by thread and time), then until that address is freed
 * (JBPF_RECORD_NATIVE_FREE, by process and address). What is held at the
 * end is what leaks__flush hands on: the profile of memory still
 * allocated. An allocation whose address never came (the call failed, or
 * its record was lost), or whose free cannot be seen (the BPF live table
 * was full), is dropped and counted, never shown as a leak.
 *
 * Bounded: at most max_bytes of records are held; a sample past that is
 * dropped and counted.
 */
#ifndef JBPF_LEAKS_H
#define JBPF_LEAKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/record/decode.h"

struct leaks_stats {
	uint64_t sampled;      /* allocation records received */
	uint64_t freed;        /* dropped: freed during the recording */
	uint64_t no_address;   /* dropped: the call failed, or its address was lost */
	uint64_t untracked;    /* dropped: the BPF live table was full, its free would not be seen */
	uint64_t full;         /* dropped: max_bytes held already */
	uint64_t exited;       /* dropped at the end: their process exited */
	uint64_t kept;         /* handed on by leaks__flush: still allocated at the end */
};

struct leaks;

struct leaks *leaks__new(size_t max_bytes);
void leaks__free(struct leaks *l);

/* A NATIVE_ALLOC, NATIVE_ADDRESS or NATIVE_FREE record (others are ignored). */
void leaks__record(struct leaks *l, const struct record *r);
/* Process tgid ran another program (or is gone): its allocations are no more. */
void leaks__forget_process(struct leaks *l, uint32_t tgid);

/*
 * Hands each allocation still held to fn, oldest first, except those of
 * processes for which exited says so (counted), and empties the table.
 */
void leaks__flush(struct leaks *l, bool (*exited)(void *ctx, uint32_t tgid),
		  void (*fn)(void *ctx, const struct record *r), void *ctx);

void leaks__stats(const struct leaks *l, struct leaks_stats *stats);

#endif /* JBPF_LEAKS_H */
