/*
 * ranges: a bounded cache of named address ranges, [start, end) -> name,
 * for symbols learnt one at a time (the kernel's, asked of the kernel).
 *
 * Ranges do not overlap: one that would overlap a range already kept is
 * not kept. A range may carry no name (a place known to have no symbol).
 * When max ranges are kept, adding another empties the cache first: what
 * is still needed is learnt again.
 */
#ifndef JBPF_RANGES_H
#define JBPF_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ranges;

/* NULL on out of memory. */
struct ranges *ranges__new(size_t max);
void ranges__free(struct ranges *r);

/* Whether a kept range holds addr; if so *name is its name (NULL: no symbol there). */
bool ranges__find(const struct ranges *r, uint64_t addr, const char **name);

/* Keeps [start, end) as name (copied; NULL for none). 0, -EINVAL (empty or overlapping) or -ENOMEM. */
int ranges__add(struct ranges *r, uint64_t start, uint64_t end, const char *name);

size_t ranges__count(const struct ranges *r);

#endif /* JBPF_RANGES_H */
