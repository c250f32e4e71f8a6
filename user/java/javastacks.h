/*
 * javastacks: the Java stacks one JVM's agent took of all its threads at
 * the end of a wall-clock or off-CPU recording (JBPF_MSG_THREAD_STACK), by
 * host tid, for the threads still blocked then.
 *
 * The agent names a thread by its tid in the JVM's pid namespace; samples
 * carry host tids. javastacks__read_tids reads the correspondence from
 * <proc_root>/<tgid>/task/<tid>/status (the last number of "NSpid:" is the
 * tid in the thread's own namespace; a JVM in the profiler's namespace has
 * one number, its tid) while the threads are alive, and javastacks__add
 * files each stack under the host tid that map gives.
 *
 * A stack is kept as a struct join_trace (join.h), so the aggregator takes
 * it as it takes a joined trace: frames innermost first, as in a TRACE;
 * status = frame_count (0 for a thread with no Java frame); flags
 * JBPF_TRACE_TRUNCATED when the agent cut it; tid, as in a TRACE, the
 * JVM's own (the key of its THREAD name in javamap); seq 0; time_ns when
 * it arrived (CLOCK_MONOTONIC, the caller's clock).
 *
 * Bounded: JAVASTACKS_MAX_THREADS stacks of at most JAVASTACKS_MAX_BYTES
 * together; a stack past either, or whose tid no thread of the process
 * has, is dropped and counted. A later stack of the same thread takes the
 * earlier one's place for lookups; both are held (and counted) until
 * javastacks__free, so a stack once returned stays valid. Not thread-safe.
 */
#ifndef JBPF_JAVASTACKS_H
#define JBPF_JAVASTACKS_H

#include <stdint.h>

#include "jvmti-stub/stream.h"
#include "user/java/join.h"

#define JAVASTACKS_MAX_THREADS (1u << 16)
/* About 16,000 stacks of the greatest depth; typical ones are a tenth of that. */
#define JAVASTACKS_MAX_BYTES (64u << 20)

struct javastacks_stats {
	uint64_t stored;   /* stacks held */
	uint64_t bytes;    /* their size, against JAVASTACKS_MAX_BYTES */
	uint64_t dropped;  /* past a bound, or out of memory */
	uint64_t unmapped; /* no thread of the process had that tid in its namespace */
};

struct javastacks;

struct javastacks *javastacks__new(void);
void javastacks__free(struct javastacks *stacks); /* NULL-safe */

/*
 * Replaces the tid map with tgid's threads now. 0, or a negative errno
 * (the map is then empty: the process is gone, or /proc cannot be read).
 */
int javastacks__read_tids(struct javastacks *stacks, const char *proc_root, uint32_t tgid);

/*
 * For a JVM in the profiler's own pid namespace: every tid is its host
 * tid, so no /proc file is read (a thousand threads' status files cost
 * tens of milliseconds). Replaces the tid map until the next
 * javastacks__read_tids; a stack for a tid no thread has is then kept
 * and never looked up.
 */
void javastacks__same_tids(struct javastacks *stacks);

/* Files stack (with its stack->frame_count frames) under its host tid. 0, or -ENOENT/-ENOSPC/-ENOMEM. */
int javastacks__add(struct javastacks *stacks, const struct jbpf_msg_thread_stack *stack,
		    const struct jbpf_trace_frame *frames, uint64_t now_ns);

/* host_tid's latest stack, or NULL; valid until javastacks__free. */
const struct join_trace *javastacks__get(const struct javastacks *stacks, uint32_t host_tid);

void javastacks__stats(const struct javastacks *stacks, struct javastacks_stats *stats);

#endif /* JBPF_JAVASTACKS_H */
