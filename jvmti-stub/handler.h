/*
 * handler: the signal handler that takes a Java stack when the BPF program
 * signals a sampled thread, and the ring it writes into.
 *
 * The handler is installed once, on the first real-time signal from
 * SIGRTMIN+4 to SIGRTMAX-4 that nobody handles, and is never uninstalled:
 * a real-time signal left at its default disposition kills the process,
 * and the BPF program may have queued one just before its profiler died.
 * Between recordings it returns at once.
 *
 * While enabled, it takes a signal whose si_code is SI_KERNEL (sent by
 * bpf_send_signal_task; si_value is the seq to put in the trace), or
 * SI_QUEUE when the recording asked for it (the sigqueue test hook), and
 * counts anything else as foreign. It gets the thread's JNIEnv with
 * GetEnv, calls AsyncGetCallTrace into a ring slot, and publishes the
 * slot. When the ring passes half full it writes to an eventfd to wake the
 * agent thread.
 *
 * The handler itself is async-signal-safe: no allocation, no locks, no
 * stdio, no JNI but GetEnv (which reads a thread-local variable since JDK
 * 9, JDK-8132510), and it preserves errno. The functions below are not,
 * and are called from the agent's ordinary threads.
 */
#ifndef JBPF_HANDLER_H
#define JBPF_HANDLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jni.h>

#include "ring.h"

/* Ring geometry: 512 slots of RING_MAX_FRAMES frames, 2.1 MiB, mapped once. */
#define HANDLER_RING_SLOTS 512

/* Counters of the current recording; see struct jbpf_msg_stats. */
struct handler_stats {
	uint64_t signals;   /* invocations while enabled, foreign ones included */
	uint64_t traces;    /* traces written to the ring */
	uint64_t ring_full; /* traces dropped: no free slot */
	uint64_t foreign;   /* signals neither from BPF nor (with sigqueue) from sigqueue */
	uint64_t handler_ns; /* time in the handler for accepted signals */
};

/*
 * Maps the ring, opens the wake eventfd, looks up AsyncGetCallTrace (by
 * name, else in the library holding jvm_code, any address inside libjvm),
 * then picks and installs the signal. Each step is done once; a failed
 * step is tried again by the next call. Returns 0, or -1 with a one-line
 * reason in err. The JVM's absence of AsyncGetCallTrace is not a failure:
 * traces then carry JBPF_TRACE_NO_AGCT.
 */
int handler__init(JavaVM *vm, const void *jvm_code, char *err, size_t err_size);
/* The installed signal, 0 before handler__init succeeded. */
int handler__signo(void);
struct ring *handler__ring(void);

/* Starts taking signals for recording session (non-zero), counters reset. */
void handler__enable(uint32_t session, bool accept_sigqueue);
/* Stops: from now on the handler returns at once. A handler already running may still finish its trace. */
void handler__disable(void);
void handler__stats(struct handler_stats *out);
/*
 * The agent thread's own tid: its samples are the profiler's cost, not the
 * application's Java, so its traces say JBPF_TRACE_NOT_JAVA_THREAD.
 */
void handler__set_agent_tid(pid_t tid);

/* Readable when the handler wants the ring drained. */
int handler__wake_fd(void);
/* The agent thread read the wake fd: the next half-full ring may wake it again. */
void handler__woken(void);

#endif /* JBPF_HANDLER_H */
