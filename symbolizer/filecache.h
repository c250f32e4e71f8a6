/*
 * filecache: ELF files kept open and their symbols, shared by every process
 * that maps them, keyed by file identity.
 *
 * The key is (st_dev, st_ino) of the opened file, plus its size and mtime
 * so that a file rewritten in place is not confused with its old content.
 * Adding a file keeps its fd; its symbol table is parsed on the first
 * lookup (lazily: most mapped files are never sampled), the separate debug
 * file searched for then, and the fd closed once parsed.
 *
 * At most max_files entries; adding one more evicts the least recently
 * used, which a later lookup reports as not cached (the caller may reopen
 * it through the process, if it still lives). Not thread-safe.
 */
#ifndef JBPF_FILECACHE_H
#define JBPF_FILECACHE_H

#include <stddef.h>
#include <stdint.h>

struct symtab;
struct elf_image;
struct membudget;

struct file_key {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	int64_t mtime_ns;
};

struct file_symbols {
	const struct elf_image *img; /* NULL: not an ELF file */
	struct symtab *symbols;      /* NULL: no function symbols */
};

struct filecache_stats {
	uint64_t loaded;  /* symbol tables parsed */
	uint64_t evicted;
	uint64_t forgotten; /* dropped by filecache__forget_unused */
	uint64_t failed;  /* files not opened (counted by callers) or not parsed */
};

/*
 * proc_root, debug_root and budget are borrowed and must outlive the
 * cache. Every symbol table kept is taken from budget (struct membudget):
 * when one does not fit, the least recently used tables are evicted to
 * make room, and if it still does not fit it is dropped (the file resolves
 * to offsets). A file's sections are read only as far as the budget has
 * room left.
 */
struct filecache *filecache__new(size_t max_files, const char *proc_root, const char *debug_root,
				 struct membudget *budget);
void filecache__free(struct filecache *fc);

/*
 * Adds the regular file open at fd, taking the fd over (kept, or closed
 * when the file is cached already or on error). path is where process tgid
 * sees it, used to find its debug file later; uid is that process's user,
 * who may own the debug file. Fills *key. Returns 0 or a negative errno.
 */
int filecache__add(struct filecache *fc, int fd, const char *path, uint32_t tgid, uint32_t uid,
		   struct file_key *key);

/*
 * The file's symbols, parsed now if this is the first lookup; marks it
 * recently used. Returns 0 with *out filled (pointers valid until the next
 * filecache__add or filecache__get, which may evict to make room), or -ENOENT when the file is not cached (evicted).
 */
int filecache__get(struct filecache *fc, const struct file_key *key, struct file_symbols *out);

/*
 * Drops every file neither added nor looked up since the previous call (or
 * since the cache was made), so that a recording of days holds the files
 * its processes use now, not every file the host has run: a file needed
 * again is reopened through a process that maps it, and parsed again.
 * Returns how many were dropped.
 */
size_t filecache__forget_unused(struct filecache *fc);
/* Counts a file that could not be opened. */
void filecache__count_failure(struct filecache *fc);

void filecache__stats(const struct filecache *fc, struct filecache_stats *stats);

#endif /* JBPF_FILECACHE_H */
