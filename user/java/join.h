/*
 * join: pairs each BPF sample of a JVM thread with the Java stack that the
 * agent's signal handler took for it.
 *
 * The BPF program stores in a sample the sequence number it sent with the
 * signal (java_seq); the handler tags its trace with the number it received.
 * Samples and traces arrive through different channels and in either
 * order, so each waits here for the other. Every sample added leaves
 * exactly once, through the emit callback, with its trace or with the
 * reason it has none; a trace is used only for samples of the JVM whose
 * agent sent it (tgid) that carry its number, so no stack is joined to the
 * wrong sample. A JVM sees the numbers sent to it and can guess others,
 * but what its agent sends for them reaches only its own samples: one JVM
 * cannot put frames, or a status such as JBPF_TRACE_NOT_JAVA_THREAD, on
 * another's.
 *
 * Samples taken during one stay in a system call share one number and one
 * trace (JBPF_SAMPLE_DEFERRED): that trace is kept a while after its first
 * match for the others. Waits are bounded in time (see join.c) and in
 * memory; join__finish empties everything at the end of a recording.
 */
#ifndef JBPF_JOIN_H
#define JBPF_JOIN_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"
#include "jvmti-stub/stream.h"

enum join_outcome {
	JOIN_MATCHED,          /* the trace is given */
	JOIN_NO_TRACE,         /* the agent sent no trace for the signal in time */
	JOIN_IN_SYSCALL,       /* the system call had not returned in time */
	JOIN_SIGNAL_LOST,      /* the deferred signal could not be sent */
	JOIN_QUEUE_FULL,       /* too many samples waiting */
	JOIN_NR_OUTCOMES,
};

struct join_trace {
	uint64_t seq, time_ns;
	uint32_t tid;
	int32_t status;
	uint32_t flags;
	uint32_t frame_count;
	struct jbpf_trace_frame frames[];
};

/* trace is NULL unless outcome is JOIN_MATCHED; both valid during the call. */
typedef void (*join_emit_fn)(void *ctx, const struct jbpf_sample *sample, size_t size,
			     const struct join_trace *trace, enum join_outcome outcome);

struct join_stats {
	uint64_t outcomes[JOIN_NR_OUTCOMES];
	uint64_t traces;           /* traces received */
	uint64_t traces_unmatched; /* dropped without any sample carrying their number */
	uint64_t waiting;          /* samples waiting now */
};

struct join;

struct join *join__new(join_emit_fn emit, void *ctx);
void join__free(struct join *join);

/* A sample with java_seq != 0, copied; now_ns is the caller's clock. */
void join__add_sample(struct join *join, const struct jbpf_sample *sample, size_t size, uint64_t now_ns);
/* A trace from the agent of JVM tgid (never 0), for that JVM's samples only. */
void join__add_trace(struct join *join, uint32_t tgid, const struct jbpf_msg_trace *trace,
		     const struct jbpf_trace_frame *frames, uint64_t now_ns);
/*
 * The signal for seq was never sent (BPF says so, by number alone): its
 * samples, of whichever JVM, get JOIN_SIGNAL_LOST, whatever trace an agent
 * sends for that number.
 */
void join__signal_lost(struct join *join, uint64_t seq, uint64_t now_ns);

/* Emits the samples that waited too long, and drops traces kept too long. */
void join__expire(struct join *join, uint64_t now_ns);
/* Emits every waiting sample with its reason and drops every trace. */
void join__finish(struct join *join);
/*
 * A JVM that is gone: each of its samples still waiting is emitted now
 * with the outcome its time limit would give it, and its kept traces go.
 */
void join__forget_tgid(struct join *join, uint32_t tgid);

void join__stats(const struct join *join, struct join_stats *stats);

#endif /* JBPF_JOIN_H */
