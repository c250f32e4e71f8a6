/*
 * pipeline: the one path every ring buffer record takes.
 *
 * pipeline__record is the sampler's callback. It decodes and checks each
 * record once (decode.h), counts a malformed one, and hands the others to
 * the stages in order:
 *
 *   wall       (wall-clock and off-CPU recordings) completes each wait
 *              with its user stack or its end, clips it to the window and
 *              accounts its thread's time; then hands it on;
 *   java       the samples of JVMs that took the agent, at the start or
 *              during the recording (java__has_agent): the join waits for
 *              each one's Java stack, then the Java merge adds it;
 *   aggregate  every other sample, straight to the profile.
 *
 * The unwind tables' feeder (unwinder.h) hears first of every process
 * sampled, every exec, and takes the walker's reports of pcs it could not
 * place (those go no further).
 *
 * Exec records reach the aggregator (the process's symbols are forgotten)
 * and the Java side (a JVM that ran another program has lost its agent);
 * lost deferred signals reach the join.
 *
 * At the end, pipeline__stopped closes the wall window when the sampler
 * stops (before its last drain), and pipeline__finish empties every stage
 * in order: the agents' thread stacks are asked for, the wall window's
 * waits still going on are taken (those of JVM threads kept until their
 * Java stacks came), the join is emptied, and each thread's exact time is
 * settled. The session (session.h) calls these; the stages never call the
 * command.
 */
#ifndef JBPF_PIPELINE_H
#define JBPF_PIPELINE_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "user/java/java.h"
#include "user/record/aggregator.h"
#include "user/record/sampler.h"
#include "user/record/wall.h"

struct pipeline_stats {
	uint64_t records;      /* records received */
	uint64_t malformed;    /* ... that failed decoding, dropped */
	uint64_t malformed_samples; /* ... of them CPU samples or waits */
};

struct pipeline;
struct unwinder;

/* agg and java stay the caller's and must outlive the pipeline. NULL when out of memory. */
struct pipeline *pipeline__new(struct aggregator *agg, struct java *java);
void pipeline__free(struct pipeline *p);

/*
 * A wall-clock or off-CPU recording: creates the wall stage (its forward,
 * end_wait and thread_name callbacks are the pipeline's own; those given
 * are ignored). 0, or -ENOMEM.
 */
int pipeline__add_wall(struct pipeline *p, const struct wall_config *config);
/* The wall stage, or NULL. */
struct wall *pipeline__wall(const struct pipeline *p);

/*
 * The feeder of the unwind tables (sampler__unwinder), or NULL: it hears of
 * each process sampled, each exec and each pc the walker could not place.
 */
struct walked;
struct starting;
/*
 * JVMs whose Java frames BPF walks: their samples go there (user/java/walked.h);
 * the samples of those not walked yet are counted by starting (user/java/starting.h).
 */
void pipeline__set_walked(struct pipeline *p, struct walked *walked, struct starting *starting);

void pipeline__set_unwinder(struct pipeline *p, struct unwinder *unwinder);

/*
 * -e nativemem --leaks: sampled allocations are held there until freed,
 * and those left at pipeline__finish go on (user/record/leaks.h).
 */
struct leaks;
void pipeline__set_leaks(struct pipeline *p, struct leaks *leaks);

/* The sampler's callback (sampler_record_fn); ctx is the pipeline. */
void pipeline__record(void *ctx, const void *data, size_t size);

/* The session loop's turn: the agents' sockets, and the join's clock. */
size_t pipeline__poll_fds(struct pipeline *p, struct pollfd *fds, size_t max);
void pipeline__on_poll(struct pipeline *p, const struct pollfd *fds, size_t nr);
void pipeline__tick(struct pipeline *p, uint64_t now_ns);
/* When a tick is next due (a watched JVM's try), CLOCK_MONOTONIC ns; UINT64_MAX: none before the loop's own. */
uint64_t pipeline__next_tick_ns(const struct pipeline *p);

/* The sampler stopped at stop_ns; records drained from now on are cut there. */
void pipeline__stopped(struct pipeline *p, uint64_t stop_ns);
/* After the sampler's last drain: empties every stage, as described above. */
void pipeline__finish(struct pipeline *p, struct sampler *sampler);

/* Samples in the profile so far, for the progress line. */
uint64_t pipeline__written(const struct pipeline *p);
void pipeline__stats(const struct pipeline *p, struct pipeline_stats *stats);

#endif /* JBPF_PIPELINE_H */
