/*
 * java: the core of the profiler's side of the agent (contract in java.h,
 * the files' roles in java_internal.h). It holds struct java and its JVM
 * slots, and routes each sample of a JVM: one the BPF program signalled
 * waits in the join for its Java stack; any other goes to the merge at
 * once, labelled with why it has no Java frames. java__emit takes what the
 * join pairs or gives up on, counts the outcome, and marks the threads
 * that run no Java so that BPF stops signalling them. java__tick drives
 * the agents' checks (java_agents.c) and the attaches (java_attach.c).
 */
#include "user/java/java_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/java/attacher.h"
#include "user/java/javamap.h"
#include "user/java/javastacks.h"
#include "user/java/merge.h"

void java__set_adopter(struct java *java, java_adopt_fn fn, void *ctx)
{
	java->adopter = fn;
	java->adopter_ctx = ctx;
}

void java__observe_traces(struct java *java, java_trace_fn fn, void *ctx)
{
	java->observer = fn;
	java->observer_ctx = ctx;
}

struct jvm *java__find_jvm(struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].tgid == tgid)
			return &java->jvms[i];
	return NULL;
}

struct java *java__new(struct aggregator *agg, struct symbolizer *sym)
{
	struct java *java = calloc(1, sizeof(*java));

	if (!java)
		return NULL;
	java->agg = agg;
	java->sym = sym;
	java->merge = merge__new(agg, sym);
	if (!java->merge) {
		free(java);
		return NULL;
	}
	return java;
}

bool java__has_agent(const struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].tgid == tgid)
			return !java->jvms[i].heap_only;
	return false;
}

size_t java__nr_jvms(const struct java *java)
{
	return java->nr_jvms + java->released;
}

void java__forget_frame_ids(struct java *java)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].map)
			javamap__forget_frame_slots(java->jvms[i].map);
}

void java__want_nmethods(struct java *java, bool want)
{
	java->nmethods = want;
}

void java__sample_allocations(struct java *java, uint32_t interval)
{
	java->alloc_interval = interval;
}

void java__without_signals(struct java *java)
{
	java->without_signals = true;
}

size_t java__targets(const struct java *java, struct sampler_java_target *targets, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < java->nr_jvms && n < max; i++)
		if (java->jvms[i].fd >= 0 && !java->jvms[i].heap_only)
			targets[n++] = (struct sampler_java_target){ java->jvms[i].tgid, java->jvms[i].signo,
								     java->jvms[i].start_ticks };
	return n;
}

void java__set_sampler(struct java *java, struct sampler *sampler)
{
	uint64_t now = clock__monotonic_ns();

	java->sampler = sampler;
	/* The recording starts now: attaching the others (with -a, many) was no silence of theirs. */
	for (size_t i = 0; i < java->nr_jvms; i++)
		java->jvms[i].heard_ns = now;
}

/* ---- samples ---- */

static void note_thread(struct java *java, uint32_t tgid, uint32_t tid, bool ran_java, bool certain)
{
	struct thread_seen *t = &java->threads[tid % NO_JAVA_SLOTS];
	bool known = t->tid == tid && t->tgid == tgid;

	if (!known)
		*t = (struct thread_seen){ .tid = tid, .tgid = tgid };
	if (ran_java) {
		/* A probe of a thread marked before its slot was taken over counts too. */
		if ((t->marked || !known) && java->sampler)
			sampler__set_no_java(java->sampler, tid, false);
		t->streak = 0;
		t->marked = false;
		return;
	}
	if (t->streak < UINT8_MAX)
		t->streak++;
	if (!t->marked && (certain || t->streak >= NO_JAVA_AFTER) && java->sampler) {
		sampler__set_no_java(java->sampler, tid, true);
		t->marked = true;
	}
}

/* AsyncGetCallTrace's code for a thread outside Java whose top frame it cannot find. */
#define AGCT_UNKNOWN_NOT_JAVA (-3)

/* AsyncGetCallTrace's failure codes, by -code. */
/* AsyncGetCallTrace's failures by -code; the last entry for any other code. */
_Static_assert(JBPF_EBUSY == EBUSY, "BPF's EBUSY is the kernel's");

const char *const java_agct_reasons[] = {
	[0] = "no Java frame",
	[1] = "class load events off",
	[2] = "GC active",
	[3] = "unknown state, not in Java",
	[4] = "not walkable, not in Java",
	[5] = "unknown state in Java",
	[6] = "not walkable in Java",
	[7] = "unknown thread state",
	[8] = "thread exiting",
	[9] = "deoptimizing",
	[10] = "at a safepoint",
	[11] = "unknown code",
};
_Static_assert(sizeof(((struct java_stats *)0)->agct) / sizeof(uint64_t) == AGCT_OTHER + 1,
	       "java_stats.agct counts each of java_agct_reasons");

static const char *outcome_reason(enum join_outcome outcome)
{
	switch (outcome) {
	case JOIN_NO_TRACE:
		return "no stack from the agent";
	case JOIN_IN_SYSCALL:
		return "still in a system call";
	case JOIN_SIGNAL_LOST:
		return "signal not sent";
	case JOIN_QUEUE_FULL:
		return "join queue full";
	default:
		return "unknown";
	}
}

static void count_outcome(struct java_stats *st, enum join_outcome outcome)
{
	switch (outcome) {
	case JOIN_NO_TRACE:
		st->no_trace++;
		break;
	case JOIN_IN_SYSCALL:
		st->in_syscall++;
		break;
	case JOIN_SIGNAL_LOST:
		st->signal_lost++;
		break;
	case JOIN_QUEUE_FULL:
		st->queue_full++;
		break;
	default:
		break;
	}
}

/*
 * The Java name of a sample's thread: the agent names threads by its own
 * tids, which a trace carries; without a trace the sample's tid serves
 * when the JVM sees the same pids as we do.
 */
static const char *thread_name(struct jvm *jvm, const struct jbpf_sample *sample, const struct join_trace *trace)
{
	if (trace)
		return javamap__thread(jvm->map, trace->tid);
	return jvm->own_pidns ? javamap__thread(jvm->map, sample->tid) : NULL;
}

void java__emit(void *ctx, const struct jbpf_sample *sample, size_t size, const struct join_trace *trace,
		 enum join_outcome outcome)
{
	struct java *java = ctx;
	struct jvm *jvm = java__find_jvm(java, sample->tgid);
	struct merge_java a = { .map = jvm ? jvm->map : NULL, .trace = trace };
	char reason[128];

	if (!jvm) {
		aggregator__add(java->agg, sample);
		return;
	}
	a.thread_name = thread_name(jvm, sample, trace);
	if (outcome == JOIN_NO_TRACE) {
		if (!jvm->unanswered++)
			jvm->unanswered_since_ns = clock__monotonic_ns();
	} else if (outcome == JOIN_MATCHED) {
		jvm->unanswered = 0;
	}
	if (outcome != JOIN_MATCHED) {
		java->stats.failed++;
		count_outcome(&java->stats, outcome);
		snprintf(reason, sizeof(reason), "[no Java frames: %s]", outcome_reason(outcome));
		a.reason = reason;
	} else if (trace->status > 0) {
		java->stats.with_java++;
		if (java->observer)
			java->observer(java->observer_ctx, sample, trace, jvm->map);
		if (trace->flags & JBPF_TRACE_FROM_ANCHOR)
			java->stats.from_anchor++;
		else if (trace->flags & JBPF_TRACE_FROM_CALLER)
			java->stats.from_caller++;
		note_thread(java, sample->tgid, sample->tid, true, false);
		if (!java->stats.first_joined_ns || sample->time_ns < java->stats.first_joined_ns)
			java->stats.first_joined_ns = sample->time_ns;
	} else if (trace->status == 0 || trace->status == JBPF_TRACE_NOT_JAVA_THREAD ||
		   (trace->status == AGCT_UNKNOWN_NOT_JAVA && sample->ustack_len &&
		    !merge__in_generated_code(java->merge, sample, jvm->map))) {
		/*
		 * GC, compiler and other VM threads: their native stack is the
		 * whole story. AsyncGetCallTrace calls a thread outside Java
		 * with no Java frame to walk from "unknown, not in Java"; when
		 * no frame of its native stack is in generated code either, it
		 * runs no Java (a compiler thread, say), and nothing is missing.
		 */
		java->stats.vm_threads++;
		note_thread(java, sample->tgid, sample->tid, false, trace->status == JBPF_TRACE_NOT_JAVA_THREAD);
	} else {
		int code = -trace->status;
		const char *err;

		java->stats.failed++;
		if (trace->status == JBPF_TRACE_NO_AGCT) {
			err = "the JVM has no AsyncGetCallTrace";
			java->stats.unknown_status++;
		} else if (code > 0 && (size_t)code < AGCT_OTHER) {
			err = java_agct_reasons[code];
			java->stats.agct[code]++;
		} else {
			err = java_agct_reasons[AGCT_OTHER];
			java->stats.unknown_status++;
		}
		snprintf(reason, sizeof(reason), "[no Java frames: %s]", err);
		a.reason = reason;
	}
	merge__add(java->merge, sample, &a);
}

void java__exec(struct java *java, uint32_t tgid)
{
	struct jvm *jvm = java__find_jvm(java, tgid);

	if (jvm)
		java__detach(jvm, "is gone: the process ran another program");
	/* A wrapper script or a launcher that execs java: the new program may be a JVM. */
	if (java->watch_execs)
		java__watch(java, tgid);
}

void java__signal_lost(struct java *java, uint64_t seq)
{
	if (java->join)
		join__signal_lost(java->join, seq, clock__monotonic_ns());
}

void java__sample(struct java *java, const struct jbpf_sample *s, size_t size)
{
	struct jvm *jvm = java__find_jvm(java, s->tgid);
	struct merge_java a = { .map = jvm ? jvm->map : NULL };
	char reason[128];

	if (!jvm) {
		aggregator__add(java->agg, s);
		return;
	}
	java->stats.jvm_samples++;
	/* Threads that run no Java, or whose Java stack is missing, keep their Java names. */
	a.thread_name = thread_name(jvm, s, NULL);
	if (s->flags & JBPF_SAMPLE_NO_JAVA) {
		java->stats.vm_threads++;
		if (s->type == JBPF_RECORD_WAIT)
			java->stats.unsignalled_waits++;
		else
			java->stats.unsignalled_cpu++;
		merge__add(java->merge, s, &a);
		return;
	}
	if (s->java_seq) {
		join__add_sample(java->join, s, size, clock__monotonic_ns());
		return;
	}
	java->stats.failed++;
	if (s->signal_err == -JBPF_EBUSY)
		java->stats.signal_busy++;
	else if (s->signal_err)
		java->stats.signal_failed++;
	snprintf(reason, sizeof(reason), "[no Java frames: %s]",
		 s->signal_err == -JBPF_EBUSY	  ? "its last signal still handled"
		 : s->signal_err		  ? "signal failed"
		 : s->type == JBPF_RECORD_WAIT ? "waited outside a system call"
		 : jvm->silent		      ? "JVM not answering"
					      : "agent gone");
	a.reason = reason;
	merge__add(java->merge, s, &a);
}

void java__set_verbose(struct java *java, bool verbose)
{
	java->verbose = verbose;
}

void java__tick(struct java *java, uint64_t now)
{
	if (java->join)
		join__expire(java->join, now);
	for (size_t i = 0; i < java->nr_jvms; i++)
		java__check_answering(&java->jvms[i], now);
	java__release_exited(java, now);
	if (java->finished)
		return;
	java__take_finished(java);
	java__attach_watched(java, now);
}

const char *java__thread_name(struct java *java, uint32_t tgid, uint32_t tid)
{
	struct jvm *jvm = java__find_jvm(java, tgid);

	return jvm && jvm->own_pidns ? javamap__thread(jvm->map, tid) : NULL;
}

void java__add_final_wait(struct java *java, const struct jbpf_sample *wait, size_t size)
{
	struct jvm *jvm = java__find_jvm(java, wait->tgid);
	struct merge_java a = { 0 };

	if (!jvm) {
		aggregator__add(java->agg, wait);
		return;
	}
	a.map = jvm->map;
	a.trace = java__thread_stack(java, wait->tgid, wait->tid);
	a.thread_name = thread_name(jvm, wait, a.trace);
	java->stats.jvm_samples++;
	if (a.trace && a.trace->status > 0)
		java->stats.with_java++;
	else if (!a.trace)
		a.reason = "[no Java frames: no stack from the agent at the end]";
	merge__add(java->merge, wait, &a);
}

const struct join_trace *java__thread_stack(const struct java *java, uint32_t tgid, uint32_t tid)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].tgid == tgid)
			return java->jvms[i].stacks ? javastacks__get(java->jvms[i].stacks, tid) : NULL;
	return NULL;
}

void java__free(struct java *java)
{
	if (!java)
		return;
	attacher__free(java->attacher);
	for (size_t i = 0; i < java->nr_jvms; i++) {
		if (java->jvms[i].fd >= 0)
			close(java->jvms[i].fd);
		javamap__free(java->jvms[i].map);
		javastacks__free(java->jvms[i].stacks);
		free(java->jvms[i].reader);
	}
	join__free(java->join);
	merge__free(java->merge);
	free(java);
}
