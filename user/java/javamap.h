/*
 * javamap: what one JVM's agent has told the profiler: method names, the
 * code it generated and compiled (the code map), and its threads' names.
 *
 * The code map keeps history. Compiled code is freed and its addresses
 * reused by other methods, and samples are resolved a moment after they
 * were taken, so a lookup gives an address and the time of the sample:
 * among the blobs that ever covered the address, those unloaded before that
 * time are out; of the rest, the latest loaded at or before it wins, else
 * the earliest loaded after it (the JVM reports a load only after the code
 * can run, so a sample may come first).
 *
 * Everything is bounded: past the limits below, new entries are refused
 * and counted, never grown into.
 */
#ifndef JBPF_JAVAMAP_H
#define JBPF_JAVAMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvmti-stub/stream.h"

#define JAVAMAP_MAX_METHODS (1u << 20)
#define JAVAMAP_MAX_BLOBS (1u << 19)
#define JAVAMAP_MAX_THREADS (1u << 16)
/* All names together (methods, stubs, threads). */
#define JAVAMAP_MAX_NAME_BYTES (64u << 20)
/* No code blob is larger: HotSpot's whole code cache is at most 2 GiB. */
#define JAVAMAP_MAX_BLOB_SIZE (2ull << 30)

struct javamap;

struct javamap_code {
	uint64_t addr, size;
	uint64_t method_id; /* the compiled method (JBPF_CODE_NMETHOD), else 0 */
	uint32_t kind;      /* enum jbpf_code_kind */
	const char *name;   /* a stub's name, or the method's if known, else NULL */
};

struct javamap_stats {
	uint64_t methods, blobs, threads;
	uint64_t refused; /* entries past a limit, or out of memory */
};

struct javamap *javamap__new(void);
void javamap__free(struct javamap *map);

/* Adds or renames a method. name is copied. Returns 0 or -ENOSPC/-ENOMEM. */
int javamap__add_method(struct javamap *map, uint64_t method_id, uint32_t flags, const char *name);
/* The method's name and flags (JBPF_METHOD_*), or NULL when never told. */
const char *javamap__method(const struct javamap *map, uint64_t method_id, uint32_t *flags);

int javamap__add_code(struct javamap *map, const struct jbpf_msg_code_load *load, const char *name);
void javamap__unload_code(struct javamap *map, const struct jbpf_msg_code_unload *unload);
/* The blob holding addr at time_ns (see above); false when none. */
bool javamap__code_at(struct javamap *map, uint64_t addr, uint64_t time_ns, struct javamap_code *code);
/*
 * JAVAMAP_FRAME_SLOTS places where a user of the map may keep what it made
 * of a method (the profile keeps its frame ids there), all -1 at first and
 * again whenever the method is renamed. NULL for a method never named.
 */
#define JAVAMAP_FRAME_SLOTS 4
/* Every method's frame ids unset: the profile they named was handed over (--continuous). */
void javamap__forget_frame_slots(struct javamap *map);
int64_t *javamap__frame_slots(struct javamap *map, uint64_t method_id);

/* Whether the method has compiled code that has not been unloaded. */
bool javamap__is_compiled(const struct javamap *map, uint64_t method_id);

/* Thread names, by tid as the JVM's pid namespace sees it. */
int javamap__add_thread(struct javamap *map, uint32_t tid, const char *name);
const char *javamap__thread(const struct javamap *map, uint32_t tid);

void javamap__stats(const struct javamap *map, struct javamap_stats *stats);

#endif /* JBPF_JAVAMAP_H */
