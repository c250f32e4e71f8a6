/*
 * pipeline: decode once, then wall, java, aggregate (contract in pipeline.h).
 */
#include "pipeline.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "user/java/starting.h"
#include "user/java/walked.h"
#include "user/record/decode.h"
#include "user/record/leaks.h"
#include "user/record/unwinder.h"

/* A wait still going on at the end, kept until the agents sent their stacks. */
struct final_wait {
	struct final_wait *next;
	size_t size;
	unsigned char record[];
};

struct pipeline {
	struct aggregator *agg;
	struct java *java;
	struct wall *wall;
	struct unwinder *unwinder;      /* NULL with --unwind fp */
	struct walked *walked;          /* JVMs whose Java frames BPF walks, or NULL */
	struct starting *starting;      /* JVMs the walk found still starting, or NULL */
	struct leaks *leaks;            /* -e nativemem --leaks: allocations held until freed, or NULL */
	struct sampler *sampler;        /* at pipeline__finish */
	bool wall_stopped;
	struct final_wait *final_waits; /* JVM threads waiting at the end, for their Java stacks */
	struct pipeline_stats stats;
};

struct pipeline *pipeline__new(struct aggregator *agg, struct java *java)
{
	struct pipeline *p = calloc(1, sizeof(*p));

	if (p) {
		p->agg = agg;
		p->java = java;
	}
	return p;
}

void pipeline__free(struct pipeline *p)
{
	struct final_wait *w;

	if (!p)
		return;
	while ((w = p->final_waits)) {
		p->final_waits = w->next;
		free(w);
	}
	wall__free(p->wall);
	free(p);
}

/* JVMs take the agent at the start or during the recording (java__watch): the Java side knows which. */
static bool is_jvm(const struct pipeline *p, uint32_t tgid)
{
	return p->java && java__has_agent(p->java, tgid);
}

static bool any_jvm(const struct pipeline *p)
{
	return p->java && java__nr_jvms(p->java);
}

/* After the wall stage (or at once without it): the Java side or the aggregator. */
static void after_wall(void *ctx, const struct record *r)
{
	struct pipeline *p = ctx;

	switch (r->type) {
	case JBPF_RECORD_NATIVE_ALLOC:
		/* An allocator's probe sends no signal: its Java frames are the BPF walk's, or none. */
		if (walked__has(p->walked, r->sample->tgid))
			walked__sample(p->walked, r->sample);
		else
			aggregator__add(p->agg, r->sample);
		return;
	case JBPF_RECORD_CPU_SAMPLE:
	case JBPF_RECORD_WAIT:
		/* A JVM walked by BPF that runs the agent too (--java-stacks both) is the agent's. */
		if (is_jvm(p, r->sample->tgid))
			java__sample(p->java, r->sample, r->size);
		else if (walked__has(p->walked, r->sample->tgid))
			walked__sample(p->walked, r->sample);
		else {
			starting__sample(p->starting, r->sample);
			aggregator__add(p->agg, r->sample);
		}
		return;
	case JBPF_RECORD_WAKER:
		/*
		 * The end of the wait it woke, kept until that comes: with its Java
		 * frames where BPF walks its JVM; never the agent's, which no
		 * signal could ask for at the wakeup.
		 */
		aggregator__capture_waker(p->agg);
		if (!(r->sample->flags & JBPF_WAKER_INTERRUPT) && walked__has(p->walked, r->sample->tgid))
			walked__sample(p->walked, r->sample);
		else
			aggregator__add(p->agg, r->sample);
		aggregator__keep_waker(p->agg, r->sample);
		return;
	case JBPF_RECORD_EXEC:
		walked__forget(p->walked, r->exec->tgid);
		if (p->leaks)
			leaks__forget_process(p->leaks, r->exec->tgid);
		if (p->java)
			java__exec(p->java, r->exec->tgid);
		aggregator__exec(p->agg, r->exec->tgid);
		return;
	case JBPF_RECORD_SIGNAL_LOST:
		if (p->java)
			java__signal_lost(p->java, r->signal_lost->seq);
		return;
	default:
		/* A wait's pieces with no wall stage to complete: nothing sends them then. */
		p->stats.malformed++;
		return;
	}
}

/*
 * A wait still going on at the end: no signal may reach its thread now. A
 * JVM thread's Java stack comes from its agent's stacks of all threads,
 * which arrive during java__finish; until then the wait is kept here. A
 * walked JVM's thread has its Java frames from its switch-out, if any.
 */
static void wait_at_end(void *ctx, const struct jbpf_sample *wait, size_t size)
{
	struct pipeline *p = ctx;
	struct final_wait *w;

	if (!is_jvm(p, wait->tgid) && walked__has(p->walked, wait->tgid)) {
		walked__sample(p->walked, wait);
		return;
	}
	if (!any_jvm(p) || !(w = malloc(sizeof(*w) + size))) {
		aggregator__add(p->agg, wait);
		return;
	}
	w->size = size;
	memcpy(w->record, wait, size);
	w->next = p->final_waits;
	p->final_waits = w;
}

static const char *thread_name(void *ctx, uint32_t tgid, uint32_t tid)
{
	struct pipeline *p = ctx;

	if (walked__has(p->walked, tgid))
		return walked__thread_name(p->walked, tgid, tid);
	return p->java ? java__thread_name(p->java, tgid, tid) : NULL;
}

int pipeline__add_wall(struct pipeline *p, const struct wall_config *config)
{
	struct wall_config c = *config;

	c.forward = after_wall;
	c.end_wait = wait_at_end;
	c.thread_name = thread_name;
	c.ctx = p;
	p->wall = wall__new(&c, p->agg);
	return p->wall ? 0 : -ENOMEM;
}

struct wall *pipeline__wall(const struct pipeline *p)
{
	return p->wall;
}

void pipeline__set_walked(struct pipeline *p, struct walked *walked, struct starting *starting)
{
	p->walked = walked;
	p->starting = starting;
}

void pipeline__set_leaks(struct pipeline *p, struct leaks *leaks)
{
	p->leaks = leaks;
}

void pipeline__set_unwinder(struct pipeline *p, struct unwinder *unwinder)
{
	p->unwinder = unwinder;
}

/*
 * What the unwind tables learn from a record: a process seen for the
 * first time, an exec, a pc in a mapping not yet listed. true when the
 * record was for the tables alone.
 */
static bool feed_unwinder(struct pipeline *p, const struct record *r)
{
	if (!p->unwinder)
		return r->type == JBPF_RECORD_UNWIND_MISS;
	switch (r->type) {
	case JBPF_RECORD_CPU_SAMPLE:
	case JBPF_RECORD_NATIVE_ALLOC:
		unwinder__saw(p->unwinder, r->sample->tgid, clock__monotonic_ns());
		return false;
	case JBPF_RECORD_EXEC:
		unwinder__exec(p->unwinder, r->exec->tgid, clock__monotonic_ns());
		return false;
	case JBPF_RECORD_UNWIND_MISS:
		unwinder__miss(p->unwinder, r->unwind_miss->tgid, clock__monotonic_ns());
		return true;
	default:
		return false;
	}
}

void pipeline__record(void *ctx, const void *data, size_t size)
{
	struct pipeline *p = ctx;
	struct record r;

	p->stats.records++;
	if (!decode__record(data, size, &r)) {
		p->stats.malformed++;
		if (decode__type_is_sample(r.type))
			p->stats.malformed_samples++;
		return;
	}
	if (feed_unwinder(p, &r))
		return;
	if (p->leaks && (r.type == JBPF_RECORD_NATIVE_ALLOC || r.type == JBPF_RECORD_NATIVE_ADDRESS ||
			 r.type == JBPF_RECORD_NATIVE_FREE)) {
		leaks__record(p->leaks, &r);
		return;
	}
	if (p->wall)
		wall__record(p->wall, &r);
	else
		after_wall(p, &r);
}

size_t pipeline__poll_fds(struct pipeline *p, struct pollfd *fds, size_t max)
{
	return p->java ? java__poll_fds(p->java, fds, max) : 0;
}

void pipeline__on_poll(struct pipeline *p, const struct pollfd *fds, size_t nr)
{
	if (p->java)
		java__on_poll(p->java, fds, nr);
}

uint64_t pipeline__next_tick_ns(const struct pipeline *p)
{
	return p->java ? java__next_watch_ns(p->java) : UINT64_MAX;
}

void pipeline__tick(struct pipeline *p, uint64_t now_ns)
{
	walked__tick(p->walked, now_ns);
	if (p->unwinder)
		unwinder__tick(p->unwinder, now_ns);
	if (p->java)
		java__tick(p->java, now_ns);
}

void pipeline__stopped(struct pipeline *p, uint64_t stop_ns)
{
	if (p->wall && !p->wall_stopped) {
		wall__stop(p->wall, stop_ns);
		p->wall_stopped = true;
	}
}

/* leaks__flush's: whether a target exited (its memory is no longer allocated). */
static bool target_exited(void *ctx, uint32_t tgid)
{
	struct pipeline *p = ctx;

	return sampler__target_exited(p->sampler, tgid);
}

/*
 * The agents' thread stacks are asked for before the wall window's last
 * waits are taken, since those of JVM threads need them; the join is
 * emptied next, then those waits are added, and only then, with every
 * record in the profile, each thread's exact time is settled.
 */
void pipeline__finish(struct pipeline *p, struct sampler *sampler)
{
	struct final_wait *w;

	p->sampler = sampler;
	if (p->wall) {
		if (any_jvm(p))
			java__request_thread_stacks(p->java);
		pipeline__stopped(p, sampler__stopped_ns(sampler));
		wall__end(p->wall, sampler);
	}
	if (p->java)
		java__finish(p->java);
	while ((w = p->final_waits)) {
		p->final_waits = w->next;
		java__add_final_wait(p->java, (const struct jbpf_sample *)w->record, w->size);
		free(w);
	}
	if (p->leaks)
		leaks__flush(p->leaks, target_exited, after_wall, p);
	aggregator__flush_waits(p->agg);
	/* Under --continuous samples weighed a period each: nothing is left to settle. */
	if (p->wall && aggregator__settles(p->agg))
		wall__settle(p->wall);
}

uint64_t pipeline__written(const struct pipeline *p)
{
	struct aggregator_stats stats;

	aggregator__stats(p->agg, &stats);
	return stats.written;
}

void pipeline__stats(const struct pipeline *p, struct pipeline_stats *stats)
{
	*stats = p->stats;
}
