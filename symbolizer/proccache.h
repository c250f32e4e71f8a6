/*
 * proccache: the processes whose addresses are being resolved: their
 * executable mappings, name, namespace pid and perf map.
 *
 * A process is keyed by tgid and remembered with its start time (stat
 * field 22). When its maps are read again and the start time differs, the
 * pid was reused: everything about the old process is dropped. The
 * mappings keep only file identities (struct file_key); the files
 * themselves live in the filecache, opened when the maps are read.
 *
 * Maps are re-read on request at most once per PROCCACHE_REFRESH_NS per
 * process, and the perf map re-read at most as often, when it changed.
 * At most max_processes are kept; one more evicts the least recently used.
 * Not thread-safe.
 */
#ifndef JBPF_PROCCACHE_H
#define JBPF_PROCCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolizer/filecache.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"

struct symtab;
struct membudget;

#define PROCCACHE_REFRESH_NS 1000000000ull

struct mapping {
	uint64_t start;        /* runtime VA */
	uint64_t end;          /* runtime VA, exclusive */
	uint64_t pgoff;        /* file offset at start */
	uint64_t dev;          /* as maps says (makedev of MAJOR:MINOR), to check the file opened */
	uint64_t inode;        /* as maps says, to check the file opened */
	enum procmaps_kind kind;
	int deleted;
	int has_file;          /* key is valid: the file was opened */
	struct file_key key;
	char *path;            /* as maps says; NULL for anonymous memory */
	const char *name;      /* basename of path, or the pseudo-name */
};

struct process {
	uint32_t tgid;
	uint32_t nspid;              /* pid inside its namespace, for perf-<nspid>.map */
	uint64_t start_time;
	uint32_t uid;                /* effective uid: who may own its perf map and debug links */
	char comm[PROC_COMM_LEN];
	struct mapping *maps;        /* sorted by start, non-overlapping */
	size_t nr_maps;
	uint64_t maps_read_ns;       /* CLOCK_MONOTONIC of the last maps read */
	struct symtab *perfmap;      /* NULL: none read */
	size_t perfmap_bytes;        /* taken from the budget */
	int perfmap_checked;
	uint64_t perfmap_checked_ns;
	uint64_t perfmap_size;
	int64_t perfmap_mtime_ns;
	struct process *hash_next;
	struct process *lru_prev, *lru_next;
};

struct proccache_stats {
	uint64_t loaded;  /* maps reads, re-reads included */
	uint64_t evicted;
	uint64_t held;    /* processes kept now */
};

/*
 * proc_root, files and budget are borrowed and must outlive the cache. A
 * perf map's table is taken from budget; one that does not fit is not
 * kept (its addresses resolve as "[anon]").
 */
struct proccache *proccache__new(size_t max_processes, const char *proc_root,
				 struct filecache *files, struct membudget *budget);
void proccache__free(struct proccache *pc);

/*
 * The process tgid, read now if unknown (then recently read: a refresh
 * right after does nothing). NULL with *err = -ESRCH if it does not exist,
 * or another negative errno.
 */
struct process *proccache__get(struct proccache *pc, uint32_t tgid, int *err);

/*
 * Reads p's maps again unless that was done less than PROCCACHE_REFRESH_NS
 * ago; when the start time changed, reloads it as a new process. Returns 1
 * when the maps were read, else 0. p stays valid.
 */
int proccache__refresh(struct proccache *pc, struct process *p);

/* The mapping containing addr, or NULL. */
struct mapping *process__find_mapping(const struct process *p, uint64_t addr);

/*
 * Opens m's file again after the filecache evicted it. Returns 0 with
 * m->key updated, or a negative errno (then m->has_file is cleared).
 */
int proccache__reopen(struct proccache *pc, struct process *p, struct mapping *m);

/*
 * The perf map name of addr, reading /tmp/perf-<nspid>.map in the process
 * root on first use and again (when changed, at most once per
 * PROCCACHE_REFRESH_NS) after a miss. NULL when none covers addr.
 */
const char *proccache__perfmap_lookup(struct proccache *pc, struct process *p, uint64_t addr);

/* Drops everything known of tgid (it exec'd or exited); nothing if unknown. */
void proccache__forget(struct proccache *pc, uint32_t tgid);

/*
 * Drops every process that has exited, or whose pid now names another
 * process (start time changed), so that a long recording holds the
 * processes alive, not all it ever saw. Returns how many were dropped.
 * Addresses of a dropped process no longer resolve: call it when those
 * already taken are resolved (--continuous: at an interval's cut).
 */
size_t proccache__forget_gone(struct proccache *pc);

void proccache__stats(const struct proccache *pc, struct proccache_stats *stats);

/*
 * A number that changes whenever an address of a process already known may
 * have come to lie in another mapping: its maps read again, the process
 * dropped (forgotten, gone, evicted). Reading a new process leaves it alone.
 */
uint64_t proccache__generation(const struct proccache *pc);

#endif /* JBPF_PROCCACHE_H */
