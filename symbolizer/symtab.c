/*
 * symtab: sorted named ranges (contract in symtab.h).
 *
 * Layout: syms[] holds {start, end, name offset, priority}; every name is a
 * NUL-terminated string in one growing pool, so a table of 200k kernel
 * symbols costs two allocations, not 200k.
 *
 * Lookup is a binary search for the last entry starting at or below the
 * address. Symbol tables may nest (a local label inside a sized function),
 * so a miss on that entry looks at a few entries before it; the first that
 * covers the address is the innermost.
 */
#include "symbolizer/symtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How many enclosing entries a lookup tries; real nesting is one or two deep. */
#define NEST_BACKTRACK 8

struct sym {
	uint64_t start;
	uint64_t end;      /* exclusive; == start while the size is unknown */
	uint32_t name_off; /* into pool */
	uint32_t priority;
	uint8_t renamed;
};

struct symtab {
	struct sym *syms;
	size_t nr, cap;
	char *pool;
	size_t pool_len, pool_cap;
	int finished;
};

uint32_t symtab__alias_priority(enum symtab_binding binding, const char *name)
{
	uint32_t underscores = 0;

	while (underscores < 3 && name[underscores] == '_')
		underscores++;
	return (uint32_t)binding * 4u + (3u - underscores);
}

struct symtab *symtab__new(void)
{
	return calloc(1, sizeof(struct symtab));
}

void symtab__free(struct symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->pool);
	free(st);
}

size_t symtab__bytes(const struct symtab *st)
{
	return st ? sizeof(*st) + st->cap * sizeof(struct sym) + st->pool_cap : 0;
}

/* Copies name[0..len) into the pool; returns its offset or a negative errno. */
static int64_t pool_append(struct symtab *st, const char *name, size_t len)
{
	size_t need, off;

	if (len > SYMTAB_MAX_NAME)
		len = SYMTAB_MAX_NAME;
	need = st->pool_len + len + 1;
	if (need > SYMTAB_MAX_POOL)
		return -ENOSPC;
	if (need > st->pool_cap) {
		size_t cap = st->pool_cap ? st->pool_cap : 4096;
		char *pool;

		while (cap < need)
			cap *= 2;
		if (cap > SYMTAB_MAX_POOL)
			cap = SYMTAB_MAX_POOL;
		pool = realloc(st->pool, cap);
		if (!pool)
			return -ENOMEM;
		st->pool = pool;
		st->pool_cap = cap;
	}
	off = st->pool_len;
	memcpy(st->pool + off, name, len);
	st->pool[off + len] = '\0';
	st->pool_len = need;
	return (int64_t)off;
}

int symtab__add(struct symtab *st, uint64_t start, uint64_t size, const char *name,
		size_t name_len, uint32_t priority)
{
	struct sym *s;
	int64_t off;

	if (st->finished)
		return -EBUSY;
	if (st->nr >= SYMTAB_MAX_ENTRIES)
		return -ENOSPC;
	if (st->nr == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 256;
		struct sym *syms = realloc(st->syms, cap * sizeof(*syms));

		if (!syms)
			return -ENOMEM;
		st->syms = syms;
		st->cap = cap;
	}
	off = pool_append(st, name, name_len);
	if (off < 0)
		return (int)off;
	s = &st->syms[st->nr++];
	s->start = start;
	/* A range running past the top of the address space ends there. */
	s->end = size > UINT64_MAX - start ? UINT64_MAX : start + size;
	s->name_off = (uint32_t)off;
	s->priority = priority;
	s->renamed = 0;
	return 0;
}

/*
 * Start ascending, then priority descending, then size descending, then
 * name: a total order, so the same input always gives the same names.
 */
static int compare_syms(const void *a, const void *b, void *arg)
{
	const struct sym *x = a, *y = b;
	const char *pool = arg;
	uint64_t xs, ys;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	xs = x->end - x->start;
	ys = y->end - y->start;
	if (xs != ys)
		return xs > ys ? -1 : 1;
	return strcmp(pool + x->name_off, pool + y->name_off);
}

static void finish_nest(struct symtab *st)
{
	size_t i, out = 0;

	/* One entry per start: the best name, with the largest size of its aliases. */
	for (i = 0; i < st->nr; i++) {
		if (out && st->syms[out - 1].start == st->syms[i].start) {
			if (st->syms[i].end > st->syms[out - 1].end)
				st->syms[out - 1].end = st->syms[i].end;
			continue;
		}
		st->syms[out++] = st->syms[i];
	}
	st->nr = out;

	for (i = 0; i < st->nr; i++) {
		struct sym *s = &st->syms[i];

		if (s->end != s->start)
			continue;
		if (i + 1 < st->nr)
			s->end = st->syms[i + 1].start;
		else
			s->end = s->start > UINT64_MAX - SYMTAB_UNSIZED_LAST_SPAN ?
					 UINT64_MAX : s->start + SYMTAB_UNSIZED_LAST_SPAN;
	}
}

static void finish_newest(struct symtab *st)
{
	size_t i, out = 0;

	for (i = 0; i < st->nr; i++) {
		struct sym *s = &st->syms[i];

		if (s->end == s->start)
			continue;
		if (out) {
			struct sym *last = &st->syms[out - 1];

			/* Sorted: a same start seen before has the higher priority. */
			if (last->start == s->start)
				continue;
			if (last->end > s->start) {
				if (s->priority < last->priority)
					continue;
				last->end = s->start;
			}
		}
		st->syms[out++] = *s;
	}
	st->nr = out;
}

/*
 * Both arrays grew by doubling: a table is kept for as long as its file is
 * used, so the slack (a quarter of the bytes on average) is given back
 * once it is complete. A failed realloc keeps the larger block.
 */
static void shrink_to_fit(struct symtab *st)
{
	struct sym *syms;
	char *pool;

	if (st->nr && st->nr < st->cap && (syms = realloc(st->syms, st->nr * sizeof(*syms)))) {
		st->syms = syms;
		st->cap = st->nr;
	}
	if (st->pool_len && st->pool_len < st->pool_cap && (pool = realloc(st->pool, st->pool_len))) {
		st->pool = pool;
		st->pool_cap = st->pool_len;
	}
}

/* Entries that share a start and are fewer than this are ordered by insertion. */
#define SMALL_TIE 16

/* Orders each run of entries with one start by compare_syms (the radix sort leaves them as added). */
static void sort_ties(struct symtab *st)
{
	size_t i = 0;

	while (i < st->nr) {
		size_t end = i + 1;

		while (end < st->nr && st->syms[end].start == st->syms[i].start)
			end++;
		if (end - i >= SMALL_TIE) {
			qsort_r(st->syms + i, end - i, sizeof(*st->syms), compare_syms, st->pool);
		} else {
			for (size_t j = i + 1; j < end; j++) {
				struct sym s = st->syms[j];
				size_t k = j;

				for (; k > i && compare_syms(&st->syms[k - 1], &s, st->pool) > 0; k--)
					st->syms[k] = st->syms[k - 1];
				st->syms[k] = s;
			}
		}
		i = end;
	}
}

/*
 * Sorts by start with a least-significant-byte-first radix sort, stable,
 * so that a table of libjvm's size (tens of thousands of symbols) sorts in
 * a tenth of qsort's time; a byte every start shares costs no pass. Ties
 * are then ordered by compare_syms. Returns -ENOMEM when the scratch array
 * cannot be had (the caller sorts with qsort instead).
 */
static int radix_sort(struct symtab *st)
{
	size_t counts[8][256] = { { 0 } };
	struct sym *from = st->syms, *to = malloc(st->nr * sizeof(*to));

	if (!to)
		return -ENOMEM;
	for (size_t i = 0; i < st->nr; i++)
		for (unsigned int b = 0; b < 8; b++)
			counts[b][(from[i].start >> (8 * b)) & 0xff]++;
	for (unsigned int b = 0; b < 8; b++) {
		size_t offset = 0, *count = counts[b];
		struct sym *swap;

		if (count[(from[0].start >> (8 * b)) & 0xff] == st->nr)
			continue;
		for (unsigned int d = 0; d < 256; d++) {
			size_t n = count[d];

			count[d] = offset;
			offset += n;
		}
		for (size_t i = 0; i < st->nr; i++)
			to[count[(from[i].start >> (8 * b)) & 0xff]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != st->syms)
		memcpy(st->syms, from, st->nr * sizeof(*from));
	free(from == st->syms ? to : from);
	sort_ties(st);
	return 0;
}

void symtab__finish(struct symtab *st, enum symtab_overlap overlap)
{
	if (st->finished)
		return;
	st->finished = 1;
	if (st->nr > 1 && radix_sort(st))
		qsort_r(st->syms, st->nr, sizeof(*st->syms), compare_syms, st->pool);
	if (overlap == SYMTAB_OVERLAP_NEWEST)
		finish_newest(st);
	else
		finish_nest(st);
	shrink_to_fit(st);
}

size_t symtab__count(const struct symtab *st)
{
	return st->finished ? st->nr : 0;
}

long symtab__lookup(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi, tries;

	if (!st->finished || !st->nr)
		return -1;
	/* Find the first entry starting above addr; the candidate is just before. */
	hi = st->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (tries = 0; lo > 0 && tries < NEST_BACKTRACK; tries++, lo--) {
		const struct sym *s = &st->syms[lo - 1];

		if (addr < s->end)
			return (long)(lo - 1);
	}
	return -1;
}

const char *symtab__name(const struct symtab *st, long idx)
{
	return st->pool + st->syms[idx].name_off;
}

uint64_t symtab__start(const struct symtab *st, long idx)
{
	return st->syms[idx].start;
}

uint64_t symtab__end(const struct symtab *st, long idx)
{
	return st->syms[idx].end;
}

int symtab__renamed(const struct symtab *st, long idx)
{
	return st->syms[idx].renamed;
}

int symtab__rename(struct symtab *st, long idx, const char *name)
{
	int64_t off = pool_append(st, name, strlen(name));

	st->syms[idx].renamed = 1;
	if (off < 0)
		return (int)off;
	st->syms[idx].name_off = (uint32_t)off;
	return 0;
}
