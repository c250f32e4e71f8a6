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
void hotspot_memory_of_process(struct hotspot_memory *mem, pid_t pid);

/* len bytes at addr into buf: true, or false (buf then undefined) when not all are readable. */
bool hotspot_memory_read(struct hotspot_memory *mem, uint64_t addr, void *buf, size_t len);

/* Typed reads of one little-endian word at addr. */
bool hotspot_memory_u64(struct hotspot_memory *mem, uint64_t addr, uint64_t *out);
bool hotspot_memory_u32(struct hotspot_memory *mem, uint64_t addr, uint32_t *out);
bool hotspot_memory_u16(struct hotspot_memory *mem, uint64_t addr, uint16_t *out);
bool hotspot_memory_u8(struct hotspot_memory *mem, uint64_t addr, uint8_t *out);

/*
 * A NUL-terminated string at addr, at most size - 1 bytes, into buf:
 * its length, or -1 when unreadable or longer (buf then holds "").
 */
long hotspot_memory_string(struct hotspot_memory *mem, uint64_t addr, char *buf, size_t size);

#endif /* JBPF_HOTSPOT_MEMORY_H */
