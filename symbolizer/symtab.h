/*
 * symtab: a sorted table of named address ranges, the one lookup structure
 * behind kernel symbols, ELF symbols and perf maps.
 *
 * Fill it with symtab__add, seal it with symtab__finish, then look addresses
 * up. Addresses are whatever space the caller fills it in (kernel VA, ELF
 * vaddr, process VA for perf maps); symtab never converts.
 *
 * Names live in one string pool owned by the table. A name pointer returned
 * by symtab__name stays valid until the next symtab__rename or symtab__free.
 * Bounded: at most SYMTAB_MAX_ENTRIES entries and SYMTAB_MAX_POOL bytes of
 * names; adds past them fail with -ENOSPC. Not thread-safe.
 */
#ifndef JBPF_SYMTAB_H
#define JBPF_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/* More than any real file has (libjvm: ~100k symbols, vmlinux: ~200k). */
#define SYMTAB_MAX_ENTRIES (8u << 20)
/* Pool offsets are 32 bits; 512 MiB of names is far past any real table. */
#define SYMTAB_MAX_POOL (512u << 20)
/* Longer names (hostile perf maps) are cut to this many bytes. */
#define SYMTAB_MAX_NAME 1024
/* A symbol without a size, last in its table, covers this many bytes. */
#define SYMTAB_UNSIZED_LAST_SPAN 4096

struct symtab;

/* How symtab__finish resolves entries whose ranges overlap. */
enum symtab_overlap {
	/*
	 * Symbols: same start, keep the highest priority (then the largest
	 * size); a zero size extends to the next symbol's start; nested
	 * ranges are kept and a lookup finds the innermost.
	 */
	SYMTAB_OVERLAP_NEST,
	/*
	 * JIT code maps, where priority is the order of appearance: a newer
	 * entry wins its whole range, and an older one keeps only the part
	 * before the newer one's start (code at that address was freed and
	 * reused). Zero sizes are dropped.
	 */
	SYMTAB_OVERLAP_NEWEST,
};

/* How strongly a symbol is bound, for symtab__alias_priority. */
enum symtab_binding {
	SYMTAB_BIND_LOCAL,
	SYMTAB_BIND_WEAK,
	SYMTAB_BIND_GLOBAL,
};

/*
 * The priority that picks one name among aliases of one address, as perf
 * does, so both tools name a function alike: global before weak before
 * local, then fewer leading underscores. glibc's getpid is a weak alias of
 * the global __getpid, so "__getpid" it is; a static function and its
 * exported wrapper at one address give the exported name.
 */
uint32_t symtab__alias_priority(enum symtab_binding binding, const char *name);

struct symtab *symtab__new(void);
void symtab__free(struct symtab *st);

/*
 * Adds [start, start + size) named name[0..name_len) (cut to
 * SYMTAB_MAX_NAME). Higher priority wins ties at the same start.
 * Returns 0, -ENOSPC past the bounds, -ENOMEM, or -EBUSY once finished.
 */
int symtab__add(struct symtab *st, uint64_t start, uint64_t size, const char *name,
		size_t name_len, uint32_t priority);

/* Sorts and resolves overlaps; after it, adds fail and lookups work. */
void symtab__finish(struct symtab *st, enum symtab_overlap overlap);

/* Bytes the table holds in memory (entries and names, as allocated). */
size_t symtab__bytes(const struct symtab *st);

/* Entries after symtab__finish. */
size_t symtab__count(const struct symtab *st);

/* The index of the entry containing addr, or -1. Only after symtab__finish. */
long symtab__lookup(const struct symtab *st, uint64_t addr);

/* Entry idx's name, start and end (exclusive). idx must be valid. */
const char *symtab__name(const struct symtab *st, long idx);
uint64_t symtab__start(const struct symtab *st, long idx);
uint64_t symtab__end(const struct symtab *st, long idx);

/*
 * Whether entry idx was renamed already (used to demangle each name once,
 * on first lookup, instead of every name at load).
 */
int symtab__renamed(const struct symtab *st, long idx);

/*
 * Replaces entry idx's name (copied) and marks it renamed. Invalidates
 * earlier symtab__name pointers. Returns 0, -ENOSPC or -ENOMEM; on failure
 * the old name stays, marked renamed so that it is not retried.
 */
int symtab__rename(struct symtab *st, long idx, const char *name);

#endif /* JBPF_SYMTAB_H */
