/*
 * java_internal: what the files of the Java side share and nobody else
 * uses. java.h is the public contract; the Java side is split into
 *
 *   java.c         the core: struct java made and freed, the JVMs' slots,
 *                  each sample of a JVM routed to the join or the merge,
 *                  java__tick
 *   java_agents.c  the agents' sockets: their messages read, a JVM that
 *                  stops answering, an agent gone (java__detach), the slot
 *                  of an exited JVM freed, the final flush
 *   java_attach.c  the agent attached: one attach (on the attach worker, or
 *                  on the calling thread before the recording), adopted by
 *                  the session thread; the processes watched until they
 *                  are live JVMs, tried again and again
 *   java_stats.c   the counters, and the summary's Java and JVMs parts
 *
 * All of it runs on the session thread, but for the blocking part of an
 * attach (java_attach.c), which touches nothing but its struct attach_job.
 */
#ifndef JBPF_JAVA_INTERNAL_H
#define JBPF_JAVA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/java/java.h"
#include "user/java/javastream.h"
#include "user/java/join.h"

/* How long the agent has to connect back, and then to say hello. */
#define CONNECT_TIMEOUT_MS 3000
/*
 * Processes watched at once. With -a every exec on the host is watched
 * briefly; past this many the new one is not, and counted.
 */
#define WATCH_SLOTS 256

struct jvm {
	struct java *java;
	uint32_t tgid;
	uint64_t start_ticks;   /* when the process started (/proc/PID/stat), for the sampler */
	int fd;                 /* the agent's socket; -1 once it is gone */
	uint32_t signo;
	bool hello, flushed;
	bool own_pidns;         /* the JVM sees the same pids as we do */
	struct javamap *map;
	struct javastream_reader *reader;
	struct jbpf_msg_stats agent_stats;
	char error[256];        /* the agent's own JBPF_MSG_ERROR */
	struct javastacks *stacks; /* THREAD_STACKs, made at the first one */
	bool tids_stale;        /* read the tid map again before the next THREAD_STACK */
	uint64_t stacks_lost;   /* THREAD_STACKs not kept: no memory for the store */
	uint64_t heard_ns;      /* when the agent last sent anything */
	bool silent;            /* not heard for AGENT_SILENCE_MS: its threads are not signalled */
	uint64_t unanswered;    /* signalled samples in a row without a trace */
	uint64_t unanswered_since_ns; /* the first of them */
	uint64_t gone_ns;       /* when its agent went (java__detach), or 0 */
	/*
	 * The agent samples heap allocations alone (java__attach_heap_only):
	 * BPF walks the JVM's Java frames, so it is never signalled and its
	 * CPU samples and waits are not the Java side's.
	 */
	bool heap_only;
	uint64_t next_gone_check_ns; /* when to look again whether the process exited */
};

/*
 * One attach, as the session thread hands it to the attach worker and
 * takes it back (attacher.h): the worker reads the request and fills the
 * result, touching nothing else; jvm.java stays NULL until the session
 * thread adopts it (adopt).
 */
struct attach_job {
	/* the request */
	uint32_t tgid;
	bool nmethods;
	uint32_t alloc_interval; /* the agent option alloc=BYTES; 0: none */
	bool heap_only;         /* for heap allocations alone (struct jvm's) */
	bool room;              /* a JVM slot is free: without one, a JVM stops at JAVA_ATTACH_FULL */
	bool no_kfunc;          /* the kernel cannot send the signal a JVM needs */
	uint64_t submitted_ns;  /* CLOCK_MONOTONIC: handed to the worker (for -v) */
	/* the result */
	uint64_t started_ns, finished_ns; /* the worker took it, and was done with it (for -v) */
	int rc;                 /* enum java_attach_result */
	char err[512];
	struct jvm jvm;         /* with JAVA_ATTACH_OK: the connected agent (fd, map, reader, hello) */
};

/*
 * What the samples of a thread showed lately, to find the threads of a JVM
 * that run no Java (GC, compiler): after NO_JAVA_AFTER samples in a row
 * without Java, or at once for a thread with no JNIEnv, the BPF program is
 * told to stop signalling it but for an occasional probe. One slot per
 * tid modulo NO_JAVA_SLOTS; a collision only forgets a streak.
 */
#define NO_JAVA_SLOTS 4096
#define NO_JAVA_AFTER 8

struct thread_seen {
	uint32_t tid;
	uint32_t tgid;   /* its JVM, whose slot's release unmarks it */
	uint8_t streak;  /* samples in a row without Java, saturating */
	bool marked;     /* in the BPF map no_java_tids */
};

/* A process to attach when it becomes a live JVM (java__watch). */
struct watch {
	uint32_t tgid;          /* 0: a free slot */
	uint64_t since_ns, next_ns, deadline_ns;
	uint32_t step_ms;       /* until the next try */
	bool jvm;               /* it maps libjvm.so: a JVM that is not live yet */
	bool said;              /* the line saying it waits was printed */
	bool in_flight;         /* an attach of it is with the worker */
	bool heap_only;         /* BPF walks it: the agent is for its heap allocations alone */
	char err[512];          /* why the last try did not attach */
};

struct java {
	struct aggregator *agg;
	struct merge *merge;
	struct thread_seen threads[NO_JAVA_SLOTS];
	struct symbolizer *sym;
	struct sampler *sampler;
	struct join *join;
	struct jvm jvms[JBPF_MAX_TARGETS];
	size_t nr_jvms;
	bool nmethods;
	uint32_t alloc_interval; /* java__sample_allocations; 0: not sampled */
	bool stacks_requested;  /* java__request_thread_stacks was called */
	bool watch_execs;       /* java__exec watches the process (see java__watch_execs) */
	bool verbose;
	bool finished;          /* java__finish ran: no attach starts any more */
	struct watch watches[WATCH_SLOTS];
	size_t next_watch;      /* where java__attach_watched starts its next pass */
	struct attacher *attacher; /* runs the attaches of watched processes; made at the first */
	bool no_attacher;       /* it could not be made: they run on the session thread */
	bool kfunc_checked, no_kfunc;
	bool without_signals;   /* java__without_signals: no Java stack is asked by a signal */
	size_t released;        /* JVMs whose slot was freed (release_jvm) */
	struct java_stats retired; /* the agents' counters of those JVMs */
	struct java_stats stats;
	struct java_attach_stats attach;
	java_trace_fn observer;    /* java__observe_traces */
	void *observer_ctx;
	java_adopt_fn adopter;     /* java__set_adopter */
	void *adopter_ctx;
};

/*
 * AsyncGetCallTrace's failures by -code (java.c), one for each of
 * java_stats.agct; the last entry for any other code.
 */
extern const char *const java_agct_reasons[sizeof(((struct java_stats *)0)->agct) / sizeof(uint64_t)];
#define AGCT_OTHER (sizeof(java_agct_reasons) / sizeof(java_agct_reasons[0]) - 1)

/* java.c: the slot of the JVM tgid, or NULL. */
struct jvm *java__find_jvm(struct java *java, uint32_t tgid);

/*
 * java.c: the join's callback (join_emit_fn, ctx the struct java): a
 * sample paired with its Java stack, or given up on, counted by outcome
 * and handed to the merge.
 */
void java__emit(void *ctx, const struct jbpf_sample *sample, size_t size, const struct join_trace *trace,
	       enum join_outcome outcome);

/* java_agents.c: the agent is gone or misbehaved (why, for the line on stderr): its JVM is no longer signalled. */
void java__detach(struct jvm *jvm, const char *err);

/*
 * java_agents.c: waits for the agent's hello after an attach, on the
 * attach worker; 0, or -1 with err set. Gives up when cancel_fd (-1:
 * never) polls readable.
 */
int java__wait_for_hello(struct jvm *jvm, int cancel_fd, char *err, size_t err_size);

/* java_agents.c, from java__tick: a JVM not answering is no longer signalled; an exited one's slot is freed. */
void java__check_answering(struct jvm *jvm, uint64_t now);
void java__release_exited(struct java *java, uint64_t now);

/* java_attach.c, from java__tick: the attaches the worker finished, adopted; the watched processes' tries that are due. */
void java__take_finished(struct java *java);
void java__attach_watched(struct java *java, uint64_t now);

/*
 * java_alloc.c: an allocation jvm's agent sampled, added to the profile
 * with its class as the last frame, weighing sampled_bytes__of
 * (common/sampled_bytes.h); native code's allocation with its native
 * frames (nr_native of them) between its Java frames and its class.
 */
void java__add_alloc(struct java *java, struct jvm *jvm, const struct jbpf_msg_alloc *alloc,
		    const struct jbpf_trace_frame *frames, const char *class_name, const uint64_t *native,
		    uint32_t nr_native);

/* java_stats.c: the agent's own counters of jvm, added to st. */
void java__add_agent_counts(struct java_stats *st, const struct jvm *jvm);

#endif /* JBPF_JAVA_INTERNAL_H */
