/*
 * memory: reads of another process's memory, which that process controls.
 *
 * A JVM's memory is hostile input to a profiler that runs as root: every
 * read may fail (unmapped, the process gone), and every value read is
 * checked by the caller before it is used as a size or an address. Reads
 * go through a function so that tests can give a memory image of their
 * own; the real one is process_vm_readv(2), which never faults and never
 * stops the target.
 */
#ifndef JBPF_HOTSPOT_MEMORY_H
#define JBPF_HOTSPOT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads len bytes at addr into buf: true when all were read. */
typedef bool (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct hotspot_memory {
	hotspot_read_fn read;
	void *ctx;
	pid_t pid;           /* for the process reader */
	uint64_t reads;      /* reads made, for -v and the tests' bounds */
	uint64_t bytes;      /* bytes asked for */
};

/* A reader of process pid's memory (process_vm_readv). */
void hotspot_memory__of_process(struct hotspot_memory *mem, pid_t pid);

/* len bytes at addr into buf: true, or false (buf then undefined) when not all are readable. */
bool hotspot_memory__read(struct hotspot_memory *mem, uint64_t addr, void *buf, size_t len);

/*
 * A gather: several ranges read together, in order, in one system call
 * when every one is readable (process_vm_readv's iovecs), each marked ok
 * or not on its own. For reads that do not depend on one another: the
 * cost of a read of another process is mostly the call, not the bytes.
 * Counted in reads once per call made: one, plus one per range that could
 * not be read and had others after it. Ranges are read in the order given,
 * so a check that something did not change meanwhile goes last.
 */
struct hotspot_span {
	uint64_t addr;
	void *buf;
	size_t len;
	bool ok;         /* set by the gather */
};
#define HOTSPOT_GATHER_MAX 72
/* Reads spans[0..nr) (nr at most HOTSPOT_GATHER_MAX; more are left not ok). */
void hotspot_memory__gather(struct hotspot_memory *mem, struct hotspot_span *spans, size_t nr);

/* Typed reads of one little-endian word at addr. */
bool hotspot_memory__u64(struct hotspot_memory *mem, uint64_t addr, uint64_t *out);
bool hotspot_memory__u32(struct hotspot_memory *mem, uint64_t addr, uint32_t *out);
bool hotspot_memory__u16(struct hotspot_memory *mem, uint64_t addr, uint16_t *out);
bool hotspot_memory__u8(struct hotspot_memory *mem, uint64_t addr, uint8_t *out);

/*
 * A NUL-terminated string at addr, at most size - 1 bytes, into buf:
 * its length, or -1 when unreadable or longer (buf then holds "").
 */
long hotspot_memory__string(struct hotspot_memory *mem, uint64_t addr, char *buf, size_t size);

/*
 * A window: a copy of [base, base + len) of another reader's memory, taken
 * in one read, that serves the reads inside it; reads outside it (all of
 * them, when the copy could not be taken) go to the other reader. For
 * structures read field by field (an nmethod's header, its PcDescs): one
 * system call instead of one per field. What it serves is as old as its
 * copy, so a check that something did not change meanwhile reads the
 * other reader. The window's reader points at the window: not to be
 * copied.
 */
#define HOTSPOT_WINDOW_MAX 1024
struct hotspot_window {
	struct hotspot_memory mem;   /* read through this */
	struct hotspot_memory *under;
	uint64_t base;
	size_t len;                  /* 0 when the copy could not be taken */
	uint8_t copy[HOTSPOT_WINDOW_MAX];
};

/*
 * Opens w over [base, base + len) of under (len cut to HOTSPOT_WINDOW_MAX):
 * true when the copy was taken. A caller whose fields all lie in one
 * object can take false for the object unreadable.
 */
bool hotspot_memory__window_open(struct hotspot_window *w, struct hotspot_memory *under, uint64_t base, size_t len);

/*
 * Opens ws[i] over [bases[i], bases[i] + lens[i]) of under for each i < nr
 * (at most HOTSPOT_GATHER_MAX), in one gather: as hotspot_memory__window_open for
 * each, whose result is each window's len (0: not taken, unless asked 0).
 */
void hotspot_memory__windows_open(struct hotspot_window *const *ws, struct hotspot_memory *under, const uint64_t *bases,
			  const size_t *lens, size_t nr);

#endif /* JBPF_HOTSPOT_MEMORY_H */
