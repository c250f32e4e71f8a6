/*
 * unwinder: feeds the BPF stack walker (bpf/unwind.bpf.h) its unwind
 * tables: for each target process, the list of its executable mappings
 * (the `unwind_procs` map), and the rows of each mapped file's table,
 * placed once per file in the `unwind_rows` array however many processes
 * map it.
 *
 * For a process (unwinder__add_process) it reads /proc/PID/maps, opens each
 * executable file mapping through map_files (the file mapped, even if
 * replaced or deleted since), gets the file's table from the table cache
 * (unwind/unwind.h: built once per build-id or device+inode, from the
file's .eh_frame and .debug_frame and, for code they do not cover, the
.debug_frame of its separate debug file, found as the symbolizer finds
it: symbolizer/debuginfo.h), places its
 * rows in a free range of the array (first fit; a range is freed when no
 * listed process maps its file any more), and writes the process's list,
 * sorted by start. A mapping without a table (anonymous or JIT code, the
 * vDSO, a file without CFI, rows that did not fit) is listed with no rows:
 * the walker then takes a frame-pointer step there.
 *
 * When the list goes out of date: after an exec (unwinder__exec), and when
 * the walker reports a pc in no listed mapping, e.g. of a library loaded
 * with dlopen (unwinder__miss), the maps are read again, at most once per
 * UNWINDER_REREAD_NS per process (a later miss waits for unwinder__tick).
 * unwinder__tick also drops processes that exited, and lists the processes
 * unwinder__saw found (-a): a new file's table can take seconds to build,
 * and the recording loop reads its records and the agents between ticks,
 * so a tick builds for at most UNWINDER_TICK_BUDGET_NS (past one process).
 *
 * Row memory: the array is mapped into this process (BPF_F_MMAPABLE) and
 * rows are copied in; the kernel rounds each 12-byte row to 16 bytes. Only
 * the part up to the highest row placed so far is mapped (in 1 MiB steps):
 * the kernel holds the whole array either way, but pages mapped count in
 * this process's RSS.
 * A walk in flight may read a range being reused for another file; it then
 * follows a wrong rule for a frame or two, which its bounds make harmless.
 *
 * Not thread-safe: one thread (the recording's loop) calls everything.
 */
#ifndef JBPF_UNWINDER_H
#define JBPF_UNWINDER_H

#include <stddef.h>
#include <stdint.h>

/* The least time between two reads of one process's maps after misses. */
#define UNWINDER_REREAD_NS 200000000ull
/* Where separate debug files are, unless the config names another root. */
#define UNWINDER_DEBUG_ROOT "/usr/lib/debug"
/* What one unwinder__tick spends at most listing processes seen since the last (past one). */
#define UNWINDER_TICK_BUDGET_NS 50000000ull
/* How often unwinder__tick looks for processes that exited. */
#define UNWINDER_SWEEP_NS 1000000000ull
/* How often that look also compares start times (a pid reused by a new process). */
#define UNWINDER_VERIFY_NS 10000000000ull

struct unwind_cache;

struct unwinder_config {
	const char *proc_root;      /* "/proc", or a fixture tree */
	const char *debug_root;     /* where separate debug files are; NULL: UNWINDER_DEBUG_ROOT */
	int rows_fd;                /* the unwind_rows array (mmapable) */
	uint32_t max_rows;          /* its entries */
	int procs_fd;               /* the unwind_procs hash */
	uint32_t max_procs;         /* its entries */
	size_t cache_bytes;         /* the table cache's bound (unwind_cache__new) */
};

struct unwinder_stats {
	uint64_t processes;         /* lists held now */
	uint64_t lists_written;     /* lists written (first reads and re-reads) */
	uint64_t rereads;           /* maps read again after a miss or an exec */
	uint64_t misses;            /* miss reports received */
	uint64_t processes_full;    /* lists not written: the map was full */
	uint64_t lists_truncated;   /* lists written without the mappings past JBPF_UNWIND_MAX_MAPPINGS */
	uint64_t files;             /* files with rows placed now */
	uint64_t rows;              /* rows placed now */
	uint64_t rows_full;         /* tables not placed: no free range big enough */
	uint64_t mappings_no_table; /* mappings listed without rows, over every list written */
	uint64_t row_bytes_used;    /* bytes of the row array that rows placed take */
	uint64_t row_bytes;         /* bytes of the row array (its size, whole) */
	uint64_t row_bytes_mapped;  /* bytes of it mapped into our address space now (in our RSS) */
};

struct unwinder;

/* 0 and *out, or a negative errno with one line in err. */
int unwinder__new(const struct unwinder_config *config, struct unwinder **out, char *err, size_t err_size);
/* Frees everything; the BPF maps keep what was written. NULL-safe. */
void unwinder__free(struct unwinder *u);

/*
 * Reads tgid's mappings and writes its list (again, if it has one).
 * 0, or a negative errno: -ESRCH when the process is gone, -ENOSPC when the
 * process map is full.
 */
int unwinder__add_process(struct unwinder *u, uint32_t tgid);
/* A sample of tgid was seen: if it is new (-a), the next unwinder__tick lists it. */
void unwinder__saw(struct unwinder *u, uint32_t tgid, uint64_t now_ns);
/* tgid replaced its program: its list is read again. */
void unwinder__exec(struct unwinder *u, uint32_t tgid, uint64_t now_ns);
/* The walker found a pc of tgid in no listed mapping. */
void unwinder__miss(struct unwinder *u, uint32_t tgid, uint64_t now_ns);
/* Lists processes seen since the last tick (within its budget), re-reads deferred, drops processes that exited. */
void unwinder__tick(struct unwinder *u, uint64_t now_ns);

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *stats);
/* The table cache, for its statistics. */
const struct unwind_cache *unwinder__cache(const struct unwinder *u);

#endif /* JBPF_UNWINDER_H */
