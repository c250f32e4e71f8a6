/*
 * wall: wall-clock and off-CPU profiles from the scheduler program's
 * records (bpf/offcpu.bpf.c), with each thread's time accounted exactly
 * over the recording's window.
 *
 * Every ring buffer record goes through wall__record first (the pipeline's
 * first stage, user/session/pipeline.h):
 *   - a wait whose user stack comes later (from its system call's exit) or
 *     whose end comes later (a blocked wait, sent open at switch-out)
 *     waits here for that piece, then goes on complete; the others go on
 *     at once;
 *   - waits are clipped to the window: a thread off CPU since before the
 *     start counts from the start, one born later from its birth;
 *   - each thread's off-CPU time is summed by state, and its lifetime noted
 *     (birth, exit), so that its running time is the rest of its life;
 *   - a virtual thread's time unmounted (JBPF_RECORD_VTHREAD_WAIT) goes on
 *     as a wait of its own, not its carrier's (which ran meanwhile): clipped
 *     to the window, a short one picked by chance weighing the wait
 *     interval, JBPF_WAIT_UNMOUNTED;
 *   - all other records (CPU samples, execs...) go on untouched.
 * "Go on" means the forward callback: the pipeline's next stages (the Java
 * join for a JVM's samples, then the aggregator).
 *
 * wall__end, after the sampler stopped, closes the window: threads still
 * off CPU, and virtual threads still unmounted, get a wait up to the end, with their kernel stack from /proc (a
 * sleeping thread's user stack cannot be read without waking it; a JVM
 * thread's Java stack comes from its agent, see the end_wait callback).
 * wall__settle, once every record reached the aggregator, gives each
 * thread's exact running time, and the exact time of its short waits, to
 * the CPU samples and sampled waits that share it (aggregator__settle).
 *
 * Bounded: threads followed and pieces waiting are capped; what does not
 * fit is counted in wall_stats.
 */
#ifndef JBPF_WALL_H
#define JBPF_WALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "user/record/aggregator.h"
#include "user/record/decode.h"
#include "user/record/sampler.h"

/* Hands on a record, complete; valid only during the call. */
typedef void (*wall_forward_fn)(void *ctx, const struct record *record);
/* Hands on a wait still going on at the end. */
typedef void (*wall_end_wait_fn)(void *ctx, const struct jbpf_sample *wait, size_t size);

struct wall_config {
	bool offcpu_only;          /* -e offcpu: running time is not shown */
	uint64_t full_wait_ns;     /* the wait interval: what a short virtual thread's wait picked by chance weighs */
	uint64_t min_block_ns;     /* waits shorter than this are dropped (counted) */
	uint64_t max_block_ns;     /* and longer than this; 0: no limit */
	wall_forward_fn forward;   /* every record, once complete */
	/*
	 * A wait still going on at the end (no user stack, java_seq 0). NULL:
	 * forward. The caller may add the JVM thread's Java stack.
	 */
	wall_end_wait_fn end_wait;
	/* The name of a thread for the stacks wall adds itself; NULL, or returning NULL: its comm. */
	const char *(*thread_name)(void *ctx, uint32_t tgid, uint32_t tid);
	void *ctx;
};

struct wall_stats {
	uint64_t waits;            /* waits handed on */
	uint64_t waits_at_end;     /* ... of which still going on at the end */
	uint64_t no_user_stack;    /* waits handed on without the user stack they waited for */
	uint64_t ends_lost;        /* blocked waits whose end never came (dropped) */
	uint64_t filtered;         /* waits dropped by --min-block / --max-block, here and in BPF */
	uint64_t threads;          /* threads accounted */
	uint64_t threads_full;     /* threads not accounted: the table was full */
	uint64_t pending_full;     /* waits with no room to wait for a piece: on without their user stack, or dropped when their end was missing */
	uint64_t vthread_waits;    /* virtual threads' unmounted waits handed on (bpf/vthreads.bpf.c) */
	uint64_t vthread_ns;       /* ... the time they stand for, in the window */
};

struct wall;

/* agg stays the caller's. NULL when out of memory. */
struct wall *wall__new(const struct wall_config *config, struct aggregator *agg);
void wall__free(struct wall *wall);

/*
 * The CPU sampling period: the running time of a thread the scheduler
 * program could not follow is its samples times this.
 */
void wall__set_sample_period(struct wall *wall, uint64_t period_ns);

/* The window opens at start_ns (CLOCK_MONOTONIC), before the scheduler program runs. */
void wall__start(struct wall *wall, uint64_t start_ns);


/* One ring buffer record, decoded and checked (user/record/decode.h). */
void wall__record(struct wall *wall, const struct record *record);

/*
 * The window closes at end_ns, when the sampler stopped: waits handed on
 * from now on are cut there (the last records drained may end later,
 * since the programs are detached after the stop).
 */
void wall__stop(struct wall *wall, uint64_t end_ns);

/*
 * After the sampler's last drain: reads what the scheduler program still
 * holds (sampler NULL: nothing) and hands on what is still waiting.
 */
void wall__end(struct wall *wall, struct sampler *sampler);

/* What wall__end does for one thread the scheduler program held (tests call it directly). */
void wall__end_thread(struct wall *wall, const struct jbpf_thread_end *end);

/* What wall__end does for a virtual thread still unmounted (the same). */
void wall__end_unmounted(struct wall *wall, uint32_t tgid, uint64_t id, uint64_t since, uint32_t state);
/* After everything reached the aggregator: settles every thread's shares. */
void wall__settle(struct wall *wall);

/* end - start of the window, in ns (0 before wall__end). */
uint64_t wall__window_ns(const struct wall *wall);
void wall__stats(const struct wall *wall, struct wall_stats *stats);
/*
 * Forgets the threads that have exited, for a recording cut into intervals
 * (--continuous, where wall__settle is not used): the table then holds the
 * threads alive, not every thread the host ever ran. Returns how many were
 * forgotten (none when there is no memory to rebuild the table).
 */
size_t wall__forget_exited(struct wall *wall);

#endif /* JBPF_WALL_H */
