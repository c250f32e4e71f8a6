/*
 * rowalloc: ranges of the BPF unwind row array (user/record/unwinder.c),
 * handed out first fit and given back merged with their free neighbours.
 *
 * The array holds each file's rows in one contiguous range; files come and
 * go with the processes that map them, so the free space is a sorted list
 * of ranges, never two adjacent ones. Plain bookkeeping: no I/O, no BPF.
 * Not thread-safe.
 */
#ifndef JBPF_ROWALLOC_H
#define JBPF_ROWALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rowalloc_range {
	uint32_t start, len;
};

struct rowalloc {
	struct rowalloc_range *free; /* sorted by start, none empty, none adjacent */
	size_t nr_free, cap;
	uint64_t free_rows;          /* rows in all free ranges */
};

/* All of [0, nr_rows) free. 0, or -ENOMEM. */
int rowalloc__init(struct rowalloc *ra, uint32_t nr_rows);
/* NULL-safe on a zeroed struct. */
void rowalloc__destroy(struct rowalloc *ra);
/* The start of n rows taken from the first free range big enough; false when none is (or n is 0). */
bool rowalloc__take(struct rowalloc *ra, uint32_t n, uint32_t *start);
/*
 * Gives [start, start + n) back. false only when out of memory for the
 * list of free ranges: the rows are then lost to later takes, never given
 * twice.
 */
bool rowalloc__give(struct rowalloc *ra, uint32_t start, uint32_t n);

#endif /* JBPF_ROWALLOC_H */
