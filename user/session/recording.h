/*
 * recording: one recording, from its targets to the profile it made.
 *
 * recording__new resolves the targets (-p may name threads: their
 * processes are profiled), recording__run sets up the stages (symbolizer,
 * aggregator, the Java side with its agents, the wall stage, the pipeline
 * that joins them), opens the sampler, runs the session, and leaves the
 * profile and every counter for the summary. The command (user/main.c)
 * only turns options into a recording_config and writes the outputs.
 */
#ifndef JBPF_RECORDING_H
#define JBPF_RECORDING_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"
#include "profile/profile.h"
#include "profile/view.h"

enum recording_event {
	RECORDING_CPU,
	RECORDING_WALL,
	RECORDING_OFFCPU,
	RECORDING_ALLOC,  /* Java heap allocations sampled by the JVMs' agents; no CPU samples */
	RECORDING_NATIVEMEM, /* native allocations sampled by uprobes on the targets' allocators; no CPU samples */
	RECORDING_LOCK,   /* off-CPU waits of Java threads for a lock, each ending in the lock's class; no CPU samples */
};

/*
 * A recording's events, 1 << enum recording_event each: one of CPU, WALL,
 * OFFCPU and LOCK at most, and ALLOC or NATIVEMEM beside it. With several, each
 * stack of the profile begins with its event's frame (FRAME_KIND_EVENT,
 * see aggregator.h).
 */
#define RECORDING_EVENT(e) (1u << (e))

/* The word files and frames name event by: "cpu", "wall", "offcpu", "alloc", "nativemem" ("leaks" with leaks). */
const char *recording__event_word(enum recording_event event, bool leaks);

enum recording_java {
	RECORDING_JAVA_AUTO,      /* attach to JVMs; one that refuses is profiled without Java frames */
	RECORDING_JAVA_REQUIRED,  /* every target must be a JVM that takes the agent */
	RECORDING_JAVA_OFF,
};

/* Where a JVM's Java frames come from. */
enum recording_java_stacks {
	RECORDING_JAVA_STACKS_BPF,   /* walked by BPF from HotSpot's frames; the agent where that is not understood */
	RECORDING_JAVA_STACKS_AGENT, /* the agent's AsyncGetCallTrace, through a signal */
	RECORDING_JAVA_STACKS_BOTH,  /* the agent's, each sample's checked against BPF's walk (user/java/oracle.h) */
};


/* One interval of a --continuous recording, handed over with its profile. */
struct recording_interval {
	int64_t from_unix_ns, until_unix_ns; /* CLOCK_REALTIME */
	const char *summary;      /* the interval's own "N samples taken, N written, N lost (...)" */
	bool last;                /* the recording ends with it */
};

/*
 * Takes an interval's profile: it may read it during the call only (the
 * recording frees it, or keeps it as recording__profile after the last).
 */
typedef void (*recording_interval_fn)(void *ctx, const struct profile *profile,
				      const struct recording_interval *interval);

struct recording_config {
	const uint32_t *pids;     /* processes or threads; none with all */
	size_t nr_pids;
	bool all;
	unsigned events;          /* RECORDING_EVENT(...) | ... */
	unsigned frequency_hz;
	bool fixed_interval;
	uint64_t duration_ns;     /* 0: until Ctrl-C or the targets exit */
	uint64_t min_block_ns, max_block_ns;
	uint64_t wait_interval_ns; /* one recorded wait per this much waiting; 0: 1/frequency_hz */
	uint32_t alloc_interval;  /* RECORDING_ALLOC, _NATIVEMEM: one sample per this many bytes allocated */
	bool leaks;               /* RECORDING_NATIVEMEM: only the sampled allocations not freed by the end */
	bool wakers;              /* waits: each sleeping wait joined with the stack of the thread that woke it */
	bool no_unmounted;        /* waits: not virtual threads' time unmounted (bpf/vthreads.bpf.c not loaded) */
	unsigned state_mask;
	enum recording_java java;
	enum recording_java_stacks java_stacks;
	bool unwind_fp;           /* user stacks by frame pointers only (--unwind fp) */
	bool full;                /* aggregate everything, for a pprof file (profile/view.h) */
	bool no_times;            /* no output needs when stacks were counted: no timeline kept */
	bool threads, annotate;   /* without full: the thread frames, how Java frames ran */
	bool lines;               /* Java frames' source lines kept (--lines); full and --continuous keep them too */
	/*
	 * How stacks begin (--group-by), when given; by default, a frame per
	 * process with -a or several targets, none for one.
	 */
	bool group_by_given;
	enum view_process_root group_by;
	int verbose;
	/*
	 * --continuous: every interval_ns the profile so far goes to
	 * on_interval and a fresh one begins; the last interval when the
	 * recording ends. Wall and off-CPU time are then weighed per sample
	 * (aggregator_config.sample_weight_ns), not settled at the end.
	 */
	uint64_t interval_ns;
	recording_interval_fn on_interval;
	void *interval_ctx;
};

struct recording;

/*
 * Resolves config's targets. NULL after printing one line saying why
 * (a pid that does not exist, out of memory).
 */
/* Whether config records event. */
static inline bool recording__config_has(const struct recording_config *config, enum recording_event event)
{
	return config->events & RECORDING_EVENT(event);
}

struct recording *recording__new(const struct recording_config *config);
void recording__free(struct recording *rec);

/*
 * Aggregate everything (a pprof file is among the outputs), whatever
 * config.full said; before recording__run.
 */
void recording__set_full(struct recording *rec, bool full);

/* Records until the duration, a signal or the targets' exit. 0, or -1 after saying why. */
int recording__run(struct recording *rec);

/* The distinct processes recorded (none with all). */
size_t recording__targets(const struct recording *rec, const uint32_t **tgids);
/* "pid 1234 (java)", "pid 1, pid 2 (x)" or "all processes". */
void recording__describe_targets(const struct recording *rec, char *buf, size_t size);
/* How the recording's own stacks begin: with all, names; with several targets, pids. */
enum view_process_root recording__roots(const struct recording *rec);

/* After run: the profile (owned by the recording). */
struct profile *recording__profile(const struct recording *rec);
/*
 * When the sampler started, ns since the epoch: the moment the profile's
 * timeline counts from (profile__set_time_origin); 0 before it started.
 */
int64_t recording__start_unix_ns(const struct recording *rec);
double recording__elapsed_s(const struct recording *rec);

/*
 * After run: the summary, "N samples taken, N written, N lost (...)" and
 * the wall and Java parts; and the samples written.
 */
void recording__summary(const struct recording *rec, char *buf, size_t size);
uint64_t recording__written(const struct recording *rec);
/* After run and the outputs: what a person should know (no samples, targets gone) and, with -v, the costs. */
void recording__report(const struct recording *rec);

#endif /* JBPF_RECORDING_H */
