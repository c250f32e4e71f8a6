/*
 * methodset: the jmethodIDs whose names the current recording has already
 * been sent, so that each METHOD message goes out once, before the first
 * TRACE or CODE_LOAD that uses the ID.
 *
 * A fixed open-addressing table of 64-bit keys, allocated once. It never
 * grows: when it reaches 3/4 of its capacity it is emptied and starts over,
 * so names are sent again as they are met again (the stream allows a later
 * METHOD for an ID; the reader keeps the latest). Not thread-safe: the
 * outbox serialises every use under its lock.
 */
#ifndef JBPF_METHODSET_H
#define JBPF_METHODSET_H

#include <stdbool.h>
#include <stdint.h>

struct methodset;

/* A set of 2^capacity_log2 entries (4..30). NULL when out of memory. */
struct methodset *methodset__new(unsigned int capacity_log2);
void methodset__free(struct methodset *set); /* NULL-safe */

bool methodset__contains(const struct methodset *set, uint64_t id);
/* Adds id; when the table is 3/4 full, first empties it (counted in resets). */
void methodset__insert(struct methodset *set, uint64_t id);
void methodset__clear(struct methodset *set);
/* How many times the table was emptied for being full since creation. */
uint64_t methodset__resets(const struct methodset *set);

#endif /* JBPF_METHODSET_H */
