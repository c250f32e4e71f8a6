/*
 * unwind: unwind tables for the BPF stack walker, one per ELF file, and a
 * cache that shares them by file identity.
 *
 * A table is built from the file's .eh_frame (found through .eh_frame_hdr)
 * with elfutils' CFI reader, and from .debug_frame of a separate debug file
 * for the ranges the main file leaves without CFI. Each row says, for an
 * address range, how to find the CFA and the caller's rbp (row format and
 * its invariants: bpf/unwind.h). Address spaces: rows hold
 *   row pc = ELF vaddr - table->base
 * and the walker computes the ELF vaddr from a runtime pc with the load
 * bias of the mapping.
 *
 * Every size read from the file is hostile input: the number of rows is
 * bounded before anything is allocated for them (-EFBIG), and the cache
 * holds at most max_bytes of tables in all.
 *
 * Plain C, no BPF and no /proc: the caller opens the files. Not
 * thread-safe: a cache and the tables it hands out belong to one thread.
 */
#ifndef JBPF_UNWIND_H
#define JBPF_UNWIND_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/unwind.h"

struct unwind_table {
	uint64_t base;                 /* subtracted from ELF vaddrs to give row pcs */
	uint64_t end;                  /* ELF vaddr just past the last row's range */
	size_t nr_rows;
	struct jbpf_unwind_row *rows;  /* sorted by pc */
	struct unwind_table_stats {
		uint64_t fdes;             /* FDEs read */
		uint64_t rows_stop;        /* rows made JBPF_CFA_STOP: expressions, other registers, overflow */
		uint64_t rows_plt;         /* PLT-pattern rows */
		uint64_t ranges_over_work; /* FDE ranges cut short by a JBPF_CFA_STOP row: past libdw's work bounds (table.c) */
		uint64_t build_ns;         /* time to build this table */
	} stats;
};

/*
 * A CFI section larger than this is not read: libelf reads a section
 * whole, and a sparse file makes a large one free for its owner. libjvm's
 * .eh_frame, the largest we have met, is 1.7 MiB.
 */
#define UNWIND_MAX_CFI_BYTES (64u << 20)

/*
 * Builds the table of the ELF file open on fd (read-only, already opened by
 * the caller under the project's open rule: this function opens nothing).
 * debug_fd: a separate debug file for the same build (.debug_frame), or -1.
 * 0 and *out, or a negative errno (-ENOENT: the file has no CFI at all;
 * -EFBIG: over the per-table bound, or a CFI section over
 * UNWIND_MAX_CFI_BYTES; -EINVAL: call frame instructions past the bounds
 * of cfa_check.h) with one line in err. Besides the table, a build
 * allocates at most a few copies of the file's CFI sections and, in libdw,
 * what those bounds allow; libdw's time is bounded by a work budget
 * proportional to the CFI's size (table.c). A .debug_frame compressed
 * (SHF_COMPRESSED, or a .zdebug_frame) is not read.
 * Neither fd is closed; neither is needed once this returns.
 */
int unwind_table__build(int fd, int debug_fd, struct unwind_table **out, char *err, size_t err_size);
/* NULL-safe. Only for tables from unwind_table__build, not from a cache. */
void unwind_table__free(struct unwind_table *table);
/* Bytes the table takes (for the budget). */
size_t unwind_table__bytes(const struct unwind_table *table);

/* Bytes of a digest (SHA-256). */
#define UNWIND_DIGEST_LEN 32
/*
 * The digest of everything unwind_table__build reads from the ELF file on
 * fd and the debug file on debug_fd (-1: none): its headers and its CFI
 * sections (the list: digest.c). Two files with the same digest give the
 * same table; a build-id alone says nothing, since a target can write any
 * build-id into a file. 0, or a negative errno (-ENOEXEC: fd is not ELF).
 * Reads with pread; neither fd is closed.
 */
int unwind_digest__file(int fd, int debug_fd, uint8_t digest[UNWIND_DIGEST_LEN]);

/*
 * The cache: tables by file identity, built once, bounded in total bytes,
 * least recently used dropped first. A table handed out stays valid until
 * it is put back (reference counted), even if evicted meanwhile.
 */
struct unwind_cache;
struct unwind_cache_key {
	uint8_t build_id[20];
	uint8_t build_id_len;          /* 0: none, use dev and ino */
	/*
	 * With a build-id: unwind_digest__file of the file and of the debug
	 * file passed to unwind_cache__get with this key. The table is shared
	 * only between keys with the same build-id and digest.
	 */
	uint8_t digest[UNWIND_DIGEST_LEN];
	uint64_t dev, ino;
};
/* NULL on out of memory. */
struct unwind_cache *unwind_cache__new(size_t max_bytes);
/* NULL-safe. Every table handed out must have been put back first. */
void unwind_cache__free(struct unwind_cache *cache);
/*
 * The table for key, building it from fd (and debug_fd, may be -1) if not
 * cached. NULL when the file has no usable CFI or it does not fit (the
 * reason counted in the stats); a failure is remembered for key, so a file
 * is not tried again on every sample of the process.
 * A table returned holds one reference: give it back with
 * unwind_cache__put. The fds are neither kept nor closed.
 */
const struct unwind_table *unwind_cache__get(struct unwind_cache *cache, const struct unwind_cache_key *key,
					     int fd, int debug_fd);
/*
 * Makes the cache read tables of files with a build-id from disk (disk.h)
 * before building them, and keep there those it builds, both by build-id
 * and digest. The cache does not
 * own disk; NULL turns it off.
 */
struct unwind_disk;
void unwind_cache__set_disk(struct unwind_cache *cache, struct unwind_disk *disk);
/* Drops one reference taken by unwind_cache__get; NULL-safe. */
void unwind_cache__put(struct unwind_cache *cache, const struct unwind_table *table);
struct unwind_cache_stats {
	uint64_t tables, rows, bytes;      /* held now */
	uint64_t built, failed, evicted;
	uint64_t build_ns;                 /* total time spent building (or reading from disk) */
	uint64_t disk_read, disk_written;  /* tables read from, and kept in, the disk store */
};
void unwind_cache__stats(const struct unwind_cache *cache, struct unwind_cache_stats *stats);

#endif /* JBPF_UNWIND_H */
