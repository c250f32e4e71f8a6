/*
 * java: the profiler's side of the agent, for every JVM among the targets.
 *
 * java__attach loads the agent (libjbpfagent.so, embedded in the profiler)
 * into a JVM through the HotSpot attach protocol, and keeps the socket the
 * agent connects back on. From then on:
 *
 *   - the pipeline (user/session/pipeline.h) hands it the samples of the
 *     JVMs java__targets lists (java__sample), exec records and lost
 *     signals: a sample waits in the join for its Java stack, then the
 *     Java merge (merge.h) adds it to the profile;
 *   - the session polls the agents' sockets (java__poll_fds, java__on_poll):
 *     traces go to the join, method names, code and threads to the JVM's
 *     javamap; a closed socket means the agent is gone, and the JVM is no
 *     longer signalled;
 *   - attaches before the recording (-p, -a at the start, --java) run on
 *     the calling thread; those during it (java__watch: a JVM started or
 *     exec'd while recording) run on one attach worker thread
 *     (attacher.h), so that a JVM slow to answer never holds up the
 *     recording loop: java__tick submits the tries that are due and
 *     adopts the agents the worker connected (a JVM slot, its threads
 *     signalled). A JVM stopped by a signal or a debugger is not tried
 *     (it would hold the worker for the whole load timeout), only tried
 *     again while its watch lasts; -v prints one line per try (time
 *     queued, running, until taken; result and reason);
 *   - a JVM whose agent sent nothing for 5 s is no longer signalled until
 *     it talks again, unless its socket holds data (then the loop was late,
 *     not the JVM); a JVM whose agent is gone and whose process exited
 *     frees its slot 3 s later (its waiting samples emitted, its agent's
 *     counters kept), so JVMs that come and go over a long recording never
 *     use up JBPF_MAX_TARGETS;
 *   - java__tick expires samples that waited too long, and java__finish, at
 *     the end, asks every agent for what it still holds and empties the
 *     join, so every sample is in the profile or counted;
 *   - in a wall-clock or off-CPU recording, java__request_thread_stacks,
 *     just before java__finish, asks every agent for the Java stack of each
 *     of its threads (for those still blocked at the end, which no signal
 *     will reach); java__thread_stack then gives them by host tid.
 *
 * Nothing from an agent is trusted: see javastream.h.
 */
#ifndef JBPF_JAVA_H
#define JBPF_JAVA_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/record/aggregator.h"
#include "user/record/sampler.h"

struct java;
struct join_trace;

struct java_stats {
	uint64_t jvm_samples;      /* samples of threads of JVMs with the agent */
	uint64_t with_java;        /* ... that carry Java frames */
	uint64_t from_anchor;      /* ... of those, by AsyncGetCallTrace again from the last Java frame */
	uint64_t from_caller;      /* ... of those, by it again from a stub's Java caller */
	uint64_t vm_threads;       /* ... of threads running no Java (GC, compiler...) */
	uint64_t unsignalled_waits, unsignalled_cpu; /* ... of those, not signalled (JBPF_SAMPLE_NO_JAVA) */
	uint64_t failed;           /* ... on Java threads, without Java frames */
	uint64_t signal_failed;    /* the BPF program could not send the signal */
	uint64_t signal_busy;      /* ... nor did it: the thread still had one waiting or in its handler */
	uint64_t agct[12];         /* failures by AsyncGetCallTrace code 0..-11 (index = -code) */
	uint64_t no_trace, in_syscall, signal_lost, queue_full, unknown_status;
	uint64_t ring_full;        /* traces the agents dropped (their counters) */
	uint64_t methods, blobs;   /* what the agents told */
	uint64_t first_joined_ns;  /* CLOCK_MONOTONIC of the first sample with Java frames, or 0 */
	uint64_t handler_ns, handler_calls; /* the agents' signal handler time, when they report it */
	uint64_t thread_stacks;    /* end-of-recording thread stacks kept (java__thread_stack) */
	uint64_t thread_stacks_dropped; /* ... not kept: past a bound, tid not found, no memory */
	/* Java frames whose kind (--annotate) was found by the agent's walk, the native stack, or inferred. */
	uint64_t kinds_by_agent, kinds_by_native, kinds_inferred;
	/*
	 * Sampled allocations (-e alloc): received, and of them without Java
	 * frames, and made by native code with its frames; the agents' own counts.
	 */
	uint64_t allocs, allocs_no_java, allocs_native;
	uint64_t agent_allocs, agent_allocs_lost; /* taken by the agents, and dropped there */
};

/* agg and sym stay the caller's and must outlive java. */
struct java *java__new(struct aggregator *agg, struct symbolizer *sym);
void java__free(struct java *java);

/* What java__attach did. */
enum java_attach_result {
	JAVA_ATTACH_OK = 0,
	JAVA_ATTACH_NOT_JVM = 1, /* tgid maps no libjvm.so: nothing was sent to it */
	JAVA_ATTACH_NOT_YET = 2, /* a JVM still starting (a launcher without libjvm.so, or not live) */
	JAVA_ATTACH_FULL = 3,    /* a JVM, not attached: JBPF_MAX_TARGETS already are (counted in over_bound) */
	JAVA_ATTACH_UNKNOWN = 4, /* it exited, or its memory maps cannot be read (err says which) */
	JAVA_ATTACH_FAILED = -1,
};

/* How the attaches of a recording went, for the summary. */
struct java_attach_stats {
	uint64_t attached;      /* agents loaded (a JVM re-attached after an exec counts again) */
	uint64_t attached_late; /* ... of them during the recording (java__watch) */
	uint64_t failed;        /* JVMs that refused the agent, or never became live */
	uint64_t over_bound;    /* JVMs not attached: JBPF_MAX_TARGETS already were */
	uint64_t watch_full;    /* processes not watched: WATCH_SLOTS were */
};

/*
 * Loads the agent into tgid, once; err says why not (one line). Any time,
 * before or during the recording; a JVM attached during the recording is
 * signalled once java__tick attached it (see java__watch), not by this
 * call alone. At most JBPF_MAX_TARGETS JVMs (the BPF map's size) take the
 * agent; past it, JAVA_ATTACH_FULL (err says so only the first time, the
 * summary counts them).
 */
int java__attach(struct java *java, uint32_t tgid, char *err, size_t err_size);
/*
 * java__attach for a JVM whose Java frames BPF walks (user/java/walked.h),
 * in a recording of heap allocations (java__sample_allocations): its agent
 * samples them and does nothing else. It is never signalled, and its CPU
 * samples and waits are not the Java side's (java__has_agent says no).
 */
int java__attach_heap_only(struct java *java, uint32_t tgid, char *err, size_t err_size);
/*
 * java__attach, tried again while the JVM is still starting, for at most
 * 10 s, with one line saying it waits: for --java, where the recording
 * must not start without the agent.
 */
int java__attach_when_live(struct java *java, uint32_t tgid, char *err, size_t err_size);
/*
 * Attach at any moment: tgid is tried at each java__tick when due (at
 * growing intervals, for at most 10 s from now) until it is a live JVM
 * and takes the agent, from then on signalled like a JVM attached at the
 * start. A JVM still starting gets one line saying so, and one more when
 * attached or given up; a process that never maps libjvm.so is dropped
 * silently (a native program). Watching again restarts the 10 s.
 */
void java__watch(struct java *java, uint32_t tgid);
/*
 * Whether java__exec watches the process that ran a new program (a
 * wrapper script or launcher exec'ing java): on for -p targets, and for
 * every process with -a; off with --no-java.
 */
void java__watch_execs(struct java *java, bool on);
/* -v: a line for every attach made during the recording, not only those that waited. */
void java__set_verbose(struct java *java, bool verbose);
void java__attach_stats(const struct java *java, struct java_attach_stats *stats);

/*
 * Whether samples of tgid go to java__sample: it took the agent during this
 * recording (even if gone since, until its slot is freed), and not for heap
 * allocations alone.
 */
bool java__has_agent(const struct java *java, uint32_t tgid);
/* JVMs that took the agent during this recording. */
size_t java__nr_jvms(const struct java *java);

/*
 * Whether agents attached from now on report compiled methods too (the
 * code map's nmethods), which frame kinds (--annotate) need. Off by
 * default: HotSpot's work for those events costs a compile-heavy JVM
 * several percent.
 */
void java__want_nmethods(struct java *java, bool want);
/*
 * Every agent attached from now on samples Java heap allocations, one per
 * interval bytes a thread allocates on average (JVMTI SampledObjectAlloc),
 * and each becomes a stack ending in its class (java_alloc.c).
 */
void java__sample_allocations(struct java *java, uint32_t interval);
/*
 * The agents are for their own events alone (-e alloc without cpu, wall,
 * offcpu or lock): no Java stack is asked of them by a signal, so a kernel
 * that cannot send one (bpf_send_signal_task, Linux 6.13) still takes them.
 */
void java__without_signals(struct java *java);

struct join_trace;
struct javamap;
/*
 * Called with each sample the agent gave a Java stack for, with that
 * stack and the JVM's names (--java-stacks both: user/java/oracle.h).
 */
typedef void (*java_trace_fn)(void *ctx, const struct jbpf_sample *sample, const struct join_trace *trace,
			      const struct javamap *map);
void java__observe_traces(struct java *java, java_trace_fn fn, void *ctx);

/*
 * A watched process (java__watch) is offered to fn before each try of the
 * agent. TAKEN: its Java frames need no agent (BPF walks them), which ends
 * the watch. HEAP_ONLY: BPF walks them, and the agent is tried for its heap
 * allocations alone (java__attach_heap_only). WAIT: not yet, and the agent
 * is not to be tried this time; it is offered again later, and after
 * JAVA_ADOPT_WAIT_MS of waits the agent is tried all the same. NO: the
 * agent's tries go on.
 */
enum java_adopt {
	JAVA_ADOPT_NO,
	JAVA_ADOPT_TAKEN,
	JAVA_ADOPT_HEAP_ONLY,
	JAVA_ADOPT_WAIT,
};
#define JAVA_ADOPT_WAIT_MS 5000
/*
 * When the next try of a watched process is due (CLOCK_MONOTONIC ns), for
 * the loop that calls java__tick to wake by then; UINT64_MAX when none is.
 */
uint64_t java__next_watch_ns(const struct java *java);
typedef enum java_adopt (*java_adopt_fn)(void *ctx, uint32_t tgid);
void java__set_adopter(struct java *java, java_adopt_fn fn, void *ctx);
/* The profile was handed over (--continuous): frame ids kept for it are forgotten. */
void java__forget_frame_ids(struct java *java);

/* The attached JVMs and their signals, for the sampler. */
size_t java__targets(const struct java *java, struct sampler_java_target *targets, size_t max);
void java__set_sampler(struct java *java, struct sampler *sampler);

/*
 * A CPU sample or wait of one of the JVMs java__targets listed, decoded
 * and checked (user/record/decode.h).
 */
void java__sample(struct java *java, const struct jbpf_sample *sample, size_t size);
/*
 * Process tgid ran another program: if it was a JVM, its agent is gone;
 * with java__watch_execs, the new program is watched (java__watch).
 */
void java__exec(struct java *java, uint32_t tgid);
/* The BPF program could not send the deferred signal numbered seq. */
void java__signal_lost(struct java *java, uint64_t seq);

/* The agents' sockets to poll, and what to do when they are ready. */
size_t java__poll_fds(struct java *java, struct pollfd *fds, size_t max);
void java__on_poll(struct java *java, const struct pollfd *fds, size_t nr);
void java__tick(struct java *java, uint64_t now_ns);

/*
 * Sends JBPF_REQ_THREAD_STACKS to every attached agent: each takes the
 * Java stack of all its threads (one safepoint in the JVM) and sends them
 * before it answers java__finish's flush. Call it once, at the end of a
 * wall-clock or off-CPU recording, just before java__finish; a CPU
 * recording never calls it and costs the JVMs nothing.
 */
void java__request_thread_stacks(struct java *java);

/* The Java name of a JVM's thread, by host tid, when the agent sent one; else NULL. */
const char *java__thread_name(struct java *java, uint32_t tgid, uint32_t tid);

/*
 * After java__finish: a wait still going on at the end of a wall or
 * off-CPU recording, added with the Java stack its thread's agent sent
 * (java__request_thread_stacks), or with a reason frame.
 */
void java__add_final_wait(struct java *java, const struct jbpf_sample *wait, size_t size);

/*
 * After java__finish: the Java stack the agent of JVM tgid took at the
 * end for its thread tid (a host tid, as samples carry), or NULL. Usable
 * as merge_java.trace like a joined trace: status is its frame_count,
 * 0 for a thread with no Java frames (which is still given); trace->tid is
 * the JVM's own tid, the one javamap__thread names. Valid until java__free.
 */
const struct join_trace *java__thread_stack(const struct java *java, uint32_t tgid, uint32_t tid);

/*
 * After the sampler stopped: asks each agent to flush (waiting at most
 * about a second, five when thread stacks were asked for), then emits
 * every sample still waiting.
 */
void java__finish(struct java *java);

void java__stats(const struct java *java, struct java_stats *stats);
/*
 * The attaches in the summary, e.g. "; JVMs: 3 attached (1 during the
 * recording), 1 failed, 2 not attached past the bound of 64"; empty when
 * every -p JVM took the agent at the start (always given with all, -a).
 */
void java__describe_attach(const struct java *java, bool all, char *buf, size_t size);
/* One line on the Java side of the recording, e.g. for the summary. */
void java__describe(const struct java *java, char *buf, size_t size);

#endif /* JBPF_JAVA_H */
