/*
 * shares: stack counts that are fixed only at the end of a recording.
 *
 * In a wall-clock profile a thread's on-CPU time is known exactly (from the
 * scheduler), but which stacks it ran is known only from CPU samples; the
 * same holds for the time of short waits, of which only some are recorded.
 * Each such sample adds units to (key, stack) here, key naming the thread
 * and state it stands for; at the end shares__settle spreads the exact
 * total of a key over its stacks in proportion to their units, so the
 * profile's per-thread totals are exact and its split is the samples'.
 *
 * Memory is bounded (max_entries distinct (key, stack) pairs); an add past
 * it fails and the caller counts the loss. Not thread-safe.
 */
#ifndef JBPF_SHARES_H
#define JBPF_SHARES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct shares;

/* max_entries 0 for the default (4 Mi). NULL when out of memory. */
struct shares *shares__new(size_t max_entries);
void shares__free(struct shares *shares);

/* Adds units to (key, stack). 0, or -ENOSPC past the bound, -ENOMEM. */
int shares__add(struct shares *shares, uint64_t key, uint32_t stack, uint32_t units);

/*
 * Adds total to the profile's stacks of key, split in proportion to their
 * units; the parts sum to total exactly. Returns false, adding nothing,
 * when key has no stacks. No shares__add may follow the first settle.
 */
bool shares__settle(struct shares *shares, uint64_t key, uint64_t total, struct profile *profile);

#endif /* JBPF_SHARES_H */
