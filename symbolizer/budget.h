/*
 * budget: one bound on the memory the symbolizer's tables hold, across
 * every file and process, whatever each table's own bounds.
 *
 * Each table's bytes are taken from the budget when it is kept and given
 * back when it is freed. A table that does not fit is not kept (the
 * caller may first free older ones) and is counted as refused: its
 * addresses resolve to offsets, and the count says why.
 *
 * A file's section is read into memory before its table exists, so the
 * ELF reader is also told how many bytes are left (membudget__left) and
 * does not read a section larger than that.
 */
#ifndef JBPF_BUDGET_H
#define JBPF_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/*
 * 1 GiB: libxul's or a JVM's symbols with many libraries besides take a
 * few hundred MiB; a profiler that needs more than this for names is
 * being fed garbage.
 */
#define MEMBUDGET_DEFAULT (1ull << 30)

struct membudget {
	size_t limit;     /* bytes */
	size_t used;      /* bytes taken */
	uint64_t refused; /* tables not kept for want of room */
};

void membudget__init(struct membudget *b, size_t limit);

/* Takes bytes: 0, or -ENOSPC (counted as refused) when they do not fit. */
int membudget__take(struct membudget *b, size_t bytes);

/* Counts a table refused without asking (the ELF reader left it unread). */
void membudget__refuse(struct membudget *b);

/* Gives back bytes taken before. */
void membudget__give(struct membudget *b, size_t bytes);

/* Bytes not taken. */
size_t membudget__left(const struct membudget *b);

#endif /* JBPF_BUDGET_H */
