/*
 * thread_names: the names a walked JVM gives its threads, by tid, for the
 * stacks' thread frames (--threads, pprof's thread label, JFR's thread
 * table, OTLP's thread.name).
 *
 * Built from each reading of the JVM's thread list (hotspot/threads.h):
 * a thread seen before keeps its name while its Thread's name is the same
 * String (three reads, hotspot_thread_names__string); a new thread, or one
 * renamed since, has its name read whole (hotspot/thread_names.h). So a
 * name costs its reads once per thread and rename (and after a collection,
 * which may have put another String at the same address), never per
 * sample. Names read while a collection moved objects are not believed:
 * the names read before are kept, and read again at the next list. A
 * thread the JVM does not name (no Thread object) or whose name cannot be
 * read has none here: its samples keep the kernel's name, and an
 * unreadable or invalid name is counted.
 *
 * Not thread-safe; owned by its JVM's entry in walked.c.
 */
#ifndef JBPF_USER_JAVA_THREAD_NAMES_H
#define JBPF_USER_JAVA_THREAD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"
#include "hotspot/thread_names.h"
#include "hotspot/threads.h"

struct thread_names;

struct thread_names_stats {
	uint64_t read;        /* names read whole (new threads and renames) */
	uint64_t kept;        /* names found unchanged by the cheap check */
	uint64_t unreadable;  /* names not read: a read failed */
	uint64_t invalid;     /* names refused: not a String, an absurd length, an unknown coder */
};

/* layout stays the caller's. NULL when out of memory. */
struct thread_names *thread_names__new(const struct hotspot_thread_names__layout *layout);
void thread_names__free(struct thread_names *names);

/* The JVM's threads now (nr of them in list): the table rebuilt from them, reading what changed. */
void thread_names__update(struct thread_names *names, struct hotspot_memory *mem,
			  const struct hotspot_java_thread *list, size_t nr);

/*
 * A tid sampled and not in the last list read (a thread newer than the
 * list, or one that is not a Java thread) is marked, so that it asks for
 * the list to be read again once, not at each of its samples; the marks
 * are kept until thread_names__forget_unlisted (the owner's periodic
 * reading), whatever lists are read meanwhile. At most 1024 are kept.
 */
void thread_names__mark_unlisted(struct thread_names *names, uint32_t tid);
void thread_names__forget_unlisted(struct thread_names *names);
/* Whether tid was in the last list read, or marked since. */
bool thread_names__known(const struct thread_names *names, uint32_t tid);
/* Whether the last list's names were read with no collection moving objects (else they are to be read again). */
bool thread_names__settled(const struct thread_names *names);
/* tid's Java name, or NULL (not a Java thread, unnamed, or unreadable). */
const char *thread_names__get(const struct thread_names *names, uint32_t tid);

/* Adds the counts so far to *out. */
void thread_names__stats(const struct thread_names *names, struct thread_names_stats *out);

#endif /* JBPF_USER_JAVA_THREAD_NAMES_H */
