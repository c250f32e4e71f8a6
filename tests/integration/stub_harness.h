/*
 * stub_harness: what tests/integration/test_stub.c drives the agent with:
 * StubProbe JVMs started with -agentpath or attached to (the profiler's
 * own attach client), signals queued to their threads, and the agent's
 * stream read back and checked message by message into a struct
 * recording (hello, methods, traces, threads, stacks, stats, flushes),
 * with a deadline on every wait.
 */
#ifndef JBPF_STUB_HARNESS_H
#define JBPF_STUB_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "jvm.h"
#include "jvmti-stub/stream.h"

/* ---------------------------------------------------------------- the stream */
#define MAX_TRACES 64

#define MAX_METHODS 65536

#define MAX_THREADS 256

#define MAX_STACKS 256

/* From jvmti.h (not on this test's include path): GetThreadState's bits. */
#define JVMTI_THREAD_STATE_ALIVE 0x0001

#define JVMTI_THREAD_STATE_SLEEPING 0x0040

struct trace {
	uint64_t seq;
	uint32_t tid;
	int32_t status;
	bool has_spin;
	char top[64];     /* innermost frame's name, for failure messages */
};

struct thread_name {
	uint32_t tid;
	char name[64];
};

/* One THREAD_STACK, its frames named through the METHODs before it. */
struct stack {
	uint32_t tid;
	int32_t state;
	uint32_t frame_count;
	uint32_t flags;
	bool has_doze, has_spin, has_sleep; /* StubProbe.doze, StubProbe.spin, java.lang.Thread.sleep* */
	int32_t doze_bci;
	char top[64];      /* innermost frame's name */
	int32_t top_bci;
	size_t message;    /* its place in the stream */
};

/* What one recording sent, checked as it is read. */
struct recording {
	int fd;
	unsigned char buf[4 * JBPF_STREAM_MAX_PAYLOAD];
	size_t len;
	struct jbpf_msg_hello hello;
	size_t messages;
	uint64_t *method_ids;
	char **method_names;
	size_t n_methods;
	size_t unnamed_uses;         /* a TRACE frame or CODE_LOAD whose METHOD had not come */
	struct trace traces[MAX_TRACES];
	size_t n_traces;
	bool interpreter;            /* a STUB named "Interpreter" */
	bool spin_nmethod;           /* compiled code of StubProbe.spin */
	pid_t spin_tid;
	bool spin_thread;            /* THREAD {spin_tid, "StubSpin"} */
	struct thread_name threads[MAX_THREADS]; /* every THREAD, in order */
	size_t n_threads;
	struct stack stacks[MAX_STACKS];
	size_t n_stacks;
	size_t flushed_at;           /* the place of the last FLUSHED in the stream */
	struct jbpf_msg_stats stats; /* the last STATS */
	size_t flushed;
	char error[JBPF_STREAM_MAX_NAME + 1];
};

struct expect {
	uint64_t first_seq;
	unsigned int n;           /* seqs first_seq... */
	uint64_t foreign;         /* STATS.foreign */
	bool nmethod;             /* wait for StubProbe.spin's compiled code too */
};

int64_t now_ms(void);

/* Skips unless the JDK, the agent and StubProbe.class are there (compiling it if needed). */
void require_jvm(const struct jdk *jdk);

int remove_compiled(void **state);

/* A listening socket at a fresh path, which *path receives (caller frees it and its directory). */
int listen_at(char **dir, char **path);

void unlisten(int fd, char *dir, char *path);

/* Starts StubProbe on jdk, with the agent from start-up when agent_options is not NULL. */
void start_probe(struct child *jvm, const struct jdk *jdk, const char *agent_options, pid_t *spin_tid);

/* The tid of pid's thread whose comm is name, or -1. */
pid_t thread_named(pid_t pid, const char *name);

/* The probe's main thread still prints: two more ticks within 5 s. */
void assert_still_runs(struct child *jvm);

/* Stops the probe with SIGTERM; the JVM's orderly exit status is 128 + SIGTERM. */
void stop_probe(struct child *jvm);

void queue_signal(pid_t pid, pid_t tid, int signo, uint64_t value);

void foreign_signal(pid_t pid, pid_t tid, int signo);

/*
 * Loads the agent into JVM pid with options through the profiler's own
 * attach client (user/java/attach.h), as a later recording does. Returns
 * 0, or what Agent_OnAttach returned when that was not 0: the client
 * reports it only in its error line, "... (Agent_OnAttach returned N)".
 * Any other failure fails the test with the client's error line.
 */
int load_agent(pid_t pid, const char *options, int timeout_s);

void record_free(struct recording *r);

/* Reads and takes one message. 0, or -1 at EOF or at the deadline. */
int read_message(struct recording *r, int64_t deadline);

/* Accepts the agent's connection and reads its first message. */
struct recording *open_recording(int listen_fd, pid_t spin_tid);

void assert_hello(const struct recording *r, pid_t pid);

/*
 * Sends FLUSH and reads to FLUSHED, again until what e expects has come or
 * timeout_s passes: a signal is handled when its thread runs next, which
 * can be after the agent answered a flush.
 */
void flush_until(struct recording *r, const struct expect *e, int timeout_s);

/*
 * Signals the spinning thread n times with seqs from first_seq (and once
 * with tgkill, which must count as foreign), flushes, and checks the
 * traces: exactly those seqs, on that thread, their methods named before
 * use, and StubProbe.spin in most of them.
 *
 * Each signal goes out once the previous one's trace is back. Signals
 * queued together are all handled at the same instant, when the thread
 * next returns to user mode, and one unlucky instant (a deoptimisation
 * while the JIT replaces the loop: status -9) would spoil all of them.
 */
void signal_and_check(struct recording *r, pid_t pid, uint64_t first_seq, unsigned int n);

#endif /* JBPF_STUB_HARNESS_H */
