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
 * counts anything else as foreign. It finds the interrupted thread's
 * JNIEnv without calling into the JVM (javathread.h), calls
 * AsyncGetCallTrace into a ring slot, and publishes the slot. When the ring
 * passes half full it writes to an eventfd to wake the agent thread.
 *
 * handler__on_signal is async-signal-safe in every state the interrupted
 * thread can be in; handler.c lists every function it calls and why each
 * is safe, and `make check-handler` holds the file to that list. The other
 * functions of handler.c only load and store atomics. handler_install.c
 * (handler__init, handler__signo, handler__ring, handler__wake_fd) is not
 * signal-safe and runs on the agent's ordinary threads.
 */
#ifndef JBPF_HANDLER_H
#define JBPF_HANDLER_H

#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jni.h>

#include "ring.h"

/* Ring geometry: 512 slots of RING_MAX_FRAMES frames, 2.1 MiB, mapped once. */
#define HANDLER_RING_SLOTS 512
/*
 * Distinct JavaThread classes the handler can recognise (javathread.h).
 * HotSpot has fewer than ten (JavaThread, CompilerThread, ServiceThread,
 * the attach listener's...), and application threads are all JavaThread.
 */
#define HANDLER_MAX_JAVA_VTABLES 16

/* Counters of the current recording; see struct jbpf_msg_stats. */
struct handler_stats {
	uint64_t signals;   /* invocations while enabled, foreign ones included */
	uint64_t traces;    /* traces written to the ring */
	uint64_t ring_full; /* traces dropped: no free slot */
	uint64_t foreign;   /* signals neither from BPF nor (with sigqueue) from sigqueue */
	uint64_t not_java;  /* traces of threads that are not JavaThreads (or the agent's) */
	uint64_t handler_ns; /* time in the handler for accepted signals */
};

/*
 * Maps the ring, opens the wake eventfd, looks up AsyncGetCallTrace (by
 * name, else in the library holding jvm_code, any address inside libjvm),
 * then picks and installs the signal. Each step is done once; a failed
 * step is tried again by the next call. Returns 0, or -1 with a one-line
 * reason in err. The JVM's absence of AsyncGetCallTrace is not a failure:
 * traces then carry JBPF_TRACE_NO_AGCT. Called with the agent's lock held.
 */
int handler__init(const void *jvm_code, char *err, size_t err_size);
/* The installed signal, 0 before handler__init succeeded. */
int handler__signo(void);
struct ring *handler__ring(void);

/* The handler itself, for sigaction (handler_install.c). */
void handler__on_signal(int signo, siginfo_t *info, void *ucontext);
/* What the handler calls and writes into; before it is installed. */
void handler__configure(void *agct, struct ring *ring, int wake_fd);

/*
 * How the handler finds a JavaThread's JNIEnv (javathread.h): HotSpot's
 * thread key and the JNIEnv's offset in a JavaThread, set once, before the
 * first recording; later calls change nothing.
 */
void handler__set_java_threads(pthread_key_t key, ptrdiff_t env_offset);
/*
 * Adds the vtable of a class known to be a JavaThread. false when
 * HANDLER_MAX_JAVA_VTABLES are already known. Callers serialise.
 */
bool handler__add_java_vtable(uintptr_t vtable);
unsigned handler__nr_java_vtables(void);

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
