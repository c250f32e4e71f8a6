/*
 * java_agents: the agents' sockets, on the session thread (contract in
 * java.h, the files' roles in java_internal.h). What an agent sends goes
 * to its JVM: traces to the join, names, code and threads to its javamap,
 * thread stacks to its javastacks. An agent that closes its socket or
 * sends a malformed stream is detached (java__detach: its JVM no longer
 * signalled); one silent for AGENT_SILENCE_MS is not signalled until it
 * talks again. A JVM whose agent is gone and whose process exited frees
 * its slot RELEASE_AFTER_MS later. java__finish asks every agent for what
 * it still holds and waits, bounded, for the answers.
 */
#include "user/java/java_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/terminal.h"
#include "symbolizer/proc.h"
#include "user/java/attacher.h"
#include "user/java/javamap.h"
#include "user/java/javastacks.h"

#define FLUSH_TIMEOUT_MS 1500
/*
 * With thread stacks asked for, the flush waits for them too: a safepoint,
 * then a message (and the names of its methods) per thread.
 */
#define STACKS_FLUSH_TIMEOUT_MS 5000
/*
 * The agent sends STATS every second. Nothing at all for this long means
 * the JVM stopped: hung, stopped by a signal or a debugger, or in a very
 * long pause. Its threads are then no longer signalled, until it answers
 * again: signals sent to a JVM that does not run would only pile up.
 */
#define AGENT_SILENCE_MS 5000
/*
 * Signalled samples of one JVM in a row that got no trace, over at least
 * AGENT_SILENCE_MS: its threads no longer run the handler although the
 * agent still talks. Sporadic misses (a full ring) never come this many in
 * a row.
 */
#define UNANSWERED_SIGNALS 200
/*
 * A JVM whose agent is gone and whose process has exited keeps its slot
 * this long (for samples still in the ring buffer or the join), then frees
 * it for another JVM; whether it exited is checked at most every
 * GONE_CHECK_MS.
 */
#define RELEASE_AFTER_MS 3000
#define GONE_CHECK_MS 1000

/* ---- the agent's messages ---- */

static void on_hello(void *ctx, const struct jbpf_msg_hello *hello)
{
	struct jvm *jvm = ctx;

	/* Only a real-time signal: never one whose meaning is fixed (SIGKILL...). */
	if (hello->version != JBPF_STREAM_VERSION || hello->signo < (uint32_t)SIGRTMIN ||
	    hello->signo > (uint32_t)SIGRTMAX)
		return;
	jvm->signo = hello->signo;
	jvm->own_pidns = hello->pid == jvm->tgid;
	jvm->hello = true;
}

static void on_method(void *ctx, uint64_t method_id, uint32_t flags, const char *name)
{
	struct jvm *jvm = ctx;

	javamap__add_method(jvm->map, method_id, flags, name);
}

static void on_trace(void *ctx, const struct jbpf_msg_trace *trace, const struct jbpf_trace_frame *frames)
{
	struct jvm *jvm = ctx;

	/* None can come before the JVM is signalled; an attach in progress keeps nothing. */
	if (!jvm->java || !jvm->java->join)
		return;
	join__add_trace(jvm->java->join, jvm->tgid, trace, frames, clock__monotonic_ns());
}

static void on_thread(void *ctx, uint32_t tid, const char *name)
{
	struct jvm *jvm = ctx;

	javamap__add_thread(jvm->map, tid, name);
}

static void on_code_load(void *ctx, const struct jbpf_msg_code_load *load, const char *name)
{
	struct jvm *jvm = ctx;

	javamap__add_code(jvm->map, load, name);
}

static void on_code_unload(void *ctx, const struct jbpf_msg_code_unload *unload)
{
	struct jvm *jvm = ctx;

	javamap__unload_code(jvm->map, unload);
}

static void on_stats(void *ctx, const struct jbpf_msg_stats *stats)
{
	struct jvm *jvm = ctx;

	jvm->agent_stats = *stats;
}

static void on_error(void *ctx, const char *text)
{
	struct jvm *jvm = ctx;

	/* Printed on stderr later: the agent's words must hold no terminal escapes. */
	terminal__safe(text, jvm->error, sizeof(jvm->error));
}

static void on_notice(void *ctx, const char *text)
{
	struct jvm *jvm = ctx;
	char safe[JBPF_STREAM_MAX_NAME + 1];

	/* The agent's words must hold no terminal escapes. */
	terminal__safe(text, safe, sizeof(safe));
	fprintf(stderr, "jbpfprof: JVM pid %u: %s\n", jvm->tgid, safe);
}

static void on_flushed(void *ctx)
{
	struct jvm *jvm = ctx;

	jvm->flushed = true;
}

/*
 * The tids the agent sends are the JVM's own; the store files stacks by
 * host tid, through the JVM's threads as /proc shows them when the first
 * stack of a request arrives (its threads are alive then, or have no
 * stack worth keeping).
 */
static void on_thread_stack(void *ctx, const struct jbpf_msg_thread_stack *stack,
			    const struct jbpf_trace_frame *frames)
{
	struct jvm *jvm = ctx;

	if (!jvm->java)
		return; /* the attach's error probe keeps nothing */
	if (!jvm->stacks && !(jvm->stacks = javastacks__new())) {
		jvm->stacks_lost++;
		return;
	}
	if (jvm->tids_stale) {
		jvm->tids_stale = false;
		if (jvm->own_pidns)
			javastacks__same_tids(jvm->stacks);
		else
			javastacks__read_tids(jvm->stacks, "/proc", jvm->tgid);
	}
	javastacks__add(jvm->stacks, stack, frames, clock__monotonic_ns());
}

static void on_alloc(void *ctx, const struct jbpf_msg_alloc *alloc, const struct jbpf_trace_frame *frames,
		     const char *class_name, const uint64_t *native, uint32_t nr_native)
{
	struct jvm *jvm = ctx;

	if (jvm->java)
		java__add_alloc(jvm->java, jvm, alloc, frames, class_name, native, nr_native);
}

static struct javastream_handler handler_for(struct jvm *jvm)
{
	return (struct javastream_handler){
		.ctx = jvm,
		.hello = on_hello,
		.method = on_method,
		.trace = on_trace,
		.thread = on_thread,
		.code_load = on_code_load,
		.code_unload = on_code_unload,
		.stats = on_stats,
		.error = on_error,
		.notice = on_notice,
		.flushed = on_flushed,
		.thread_stack = on_thread_stack,
		.alloc = on_alloc,
	};
}

/* The agent is gone or misbehaved: stop signalling that JVM. */
void java__detach(struct jvm *jvm, const char *err)
{
	if (jvm->fd < 0)
		return;
	close(jvm->fd);
	jvm->fd = -1;
	jvm->gone_ns = clock__monotonic_ns();
	if (jvm->java->sampler)
		sampler__forget_java(jvm->java->sampler, jvm->tgid);
	fprintf(stderr, "jbpfprof: the agent in JVM pid %u %s; %s\n", jvm->tgid, err,
		jvm->java->alloc_interval ? "no more of its allocations are sampled" : "its later samples have no Java frames");
}

/* The agent sent something: a JVM that was silent answers again, and is signalled again. */
static void heard(struct jvm *jvm)
{
	uint64_t now = clock__monotonic_ns();
	char ignored[256];

	if (jvm->silent && jvm->java->sampler && !jvm->heap_only &&
	    !sampler__add_java(jvm->java->sampler, jvm->tgid, jvm->start_ticks, jvm->signo, ignored, sizeof(ignored))) {
		jvm->silent = false;
		fprintf(stderr, "jbpfprof: JVM pid %u answers again after %.1f s; its samples have Java frames again\n",
			jvm->tgid, (double)(now - jvm->heard_ns) / 1e9);
	}
	jvm->heard_ns = now;
}

/* Reads what the agent sent; false once it is gone. */
static bool read_agent(struct jvm *jvm)
{
	struct javastream_handler handler = handler_for(jvm);
	int rc;

	if (jvm->fd < 0)
		return false;
	rc = javastream__read(jvm->reader, jvm->fd, &handler);
	if (rc == 0)
		heard(jvm);
	if (rc == 1)
		java__detach(jvm, jvm->flushed ? "closed its connection" : "went away");
	else if (rc == -EPROTO)
		java__detach(jvm, "sent a malformed stream");
	else if (rc < 0)
		java__detach(jvm, "could not be read");
	return jvm->fd >= 0;
}

/*
 * Waits for the agent's first message (or its error) after the attach,
 * on the attach worker: jvm->java is NULL, and nothing but jvm is touched.
 * Gives up at once when cancel_fd (-1: never) polls readable.
 */
int java__wait_for_hello(struct jvm *jvm, int cancel_fd, char *err, size_t err_size)
{
	uint64_t deadline = clock__monotonic_ns() + CONNECT_TIMEOUT_MS * NS_PER_MS;
	struct javastream_handler handler = handler_for(jvm);

	while (!jvm->hello && !jvm->error[0]) {
		struct pollfd p[2] = { { .fd = jvm->fd, .events = POLLIN }, { .fd = cancel_fd, .events = POLLIN } };
		uint64_t now = clock__monotonic_ns();
		int rc;

		if (now >= deadline) {
			snprintf(err, err_size, "the agent in JVM pid %u did not say hello within %d ms", jvm->tgid,
				 CONNECT_TIMEOUT_MS);
			return -1;
		}
		if (poll(p, 2, (int)((deadline - now) / NS_PER_MS) + 1) < 0 && errno != EINTR)
			break;
		if (p[1].revents) {
			snprintf(err, err_size, "attach to JVM pid %u given up: the recording ended", jvm->tgid);
			return -1;
		}
		rc = javastream__read(jvm->reader, jvm->fd, &handler);
		if (rc != 0 && !jvm->hello && !jvm->error[0]) {
			snprintf(err, err_size, "the agent in JVM pid %u %s before saying hello", jvm->tgid,
				 rc == 1 ? "closed its connection" : "sent a malformed stream");
			return -1;
		}
	}
	if (jvm->error[0]) {
		snprintf(err, err_size, "the agent failed in JVM pid %u: %s", jvm->tgid, jvm->error);
		return -1;
	}
	return 0;
}

/* ---- the session loop ---- */

size_t java__poll_fds(struct java *java, struct pollfd *fds, size_t max)
{
	size_t n = 0;

	/* First, so that it is never cut: the attach worker has a finished attach (java__tick takes it). */
	if (java->attacher && n < max)
		fds[n++] = (struct pollfd){ .fd = attacher__fd(java->attacher), .events = POLLIN };
	for (size_t i = 0; i < java->nr_jvms && n < max; i++)
		if (java->jvms[i].fd >= 0)
			fds[n++] = (struct pollfd){ .fd = java->jvms[i].fd, .events = POLLIN };
	return n;
}

void java__on_poll(struct java *java, const struct pollfd *fds, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (!fds[i].revents)
			continue;
		for (size_t j = 0; j < java->nr_jvms; j++)
			if (java->jvms[j].fd == fds[i].fd)
				read_agent(&java->jvms[j]);
	}
}

/*
 * Whether the agent's socket holds something not read yet. The recording
 * loop may have been held up (building a large unwind table, say) while
 * the agent kept talking: that silence is ours, not the JVM's.
 */
static bool agent_waiting(const struct jvm *jvm)
{
	struct pollfd p = { .fd = jvm->fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* A JVM whose agent says nothing, or whose threads no longer answer signals, is no longer signalled. */
void java__check_answering(struct jvm *jvm, uint64_t now)
{
	/* One that samples the heap alone is never signalled: its silence is a JVM that allocates little. */
	if (jvm->fd < 0 || jvm->heap_only)
		return;
	if (!jvm->silent && now >= jvm->heard_ns + AGENT_SILENCE_MS * NS_PER_MS && agent_waiting(jvm) &&
	    !read_agent(jvm))
		return;
	if (!jvm->silent && now >= jvm->heard_ns + AGENT_SILENCE_MS * NS_PER_MS) {
		if (jvm->java->sampler)
			sampler__forget_java(jvm->java->sampler, jvm->tgid);
		jvm->silent = true;
		fprintf(stderr,
			"jbpfprof: JVM pid %u stopped answering (nothing from its agent for %d s): its threads are no "
			"longer signalled, and its samples have no Java frames until it answers again\n",
			jvm->tgid, AGENT_SILENCE_MS / 1000);
	}
	if (jvm->unanswered >= UNANSWERED_SIGNALS && now >= jvm->unanswered_since_ns + AGENT_SILENCE_MS * NS_PER_MS)
		java__detach(jvm, "sent no Java stack for its threads' last signals (200 in a row, over 5 s): "
			    "they no longer run its handler");
}

/*
 * The threads of an exited JVM marked as running no Java are unmarked: the
 * BPF map knows tids only, and a tid is soon another thread's (pid_max can
 * be as low as 32768), maybe one of a JVM that runs Java.
 */
static void unmark_threads(struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < NO_JAVA_SLOTS; i++) {
		struct thread_seen *t = &java->threads[i];

		if (t->tgid != tgid || !t->tid)
			continue;
		if (t->marked && java->sampler)
			sampler__set_no_java(java->sampler, t->tid, false);
		*t = (struct thread_seen){ 0 };
	}
}

/*
 * Frees slot i: its samples still waiting in the join are emitted first
 * (they need its map), its agent's counters kept for the summary. The last
 * slot moves into it.
 */
static void release_jvm(struct java *java, size_t i)
{
	struct jvm *jvm = &java->jvms[i];

	if (java->join)
		join__forget_tgid(java->join, jvm->tgid);
	java__add_agent_counts(&java->retired, jvm);
	unmark_threads(java, jvm->tgid);
	javamap__free(jvm->map);
	javastacks__free(jvm->stacks);
	free(jvm->reader);
	if (java->verbose)
		fprintf(stderr, "jbpfprof: JVM pid %u has exited; its slot is free for another JVM\n", jvm->tgid);
	java->jvms[i] = java->jvms[--java->nr_jvms];
	java->released++;
}

/*
 * JVMs whose agent is gone and whose process exited (or whose pid is
 * another process's now) free their slots, after RELEASE_AFTER_MS, so
 * that over a long recording JVMs that come and go never use up
 * JBPF_MAX_TARGETS. Their BPF map entry went with the agent (java__detach).
 */
void java__release_exited(struct java *java, uint64_t now)
{
	size_t i = 0;

	while (i < java->nr_jvms) {
		struct jvm *jvm = &java->jvms[i];
		uint64_t start;

		if (jvm->fd >= 0 || !jvm->gone_ns || now < jvm->gone_ns + RELEASE_AFTER_MS * NS_PER_MS ||
		    now < jvm->next_gone_check_ns) {
			i++;
			continue;
		}
		jvm->next_gone_check_ns = now + GONE_CHECK_MS * NS_PER_MS;
		if (!proc__start_time("/proc", jvm->tgid, &start) && start == jvm->start_ticks) {
			i++;
			continue;
		}
		release_jvm(java, i);
	}
}

void java__request_thread_stacks(struct java *java)
{
	for (size_t i = 0; i < java->nr_jvms; i++) {
		struct jvm *jvm = &java->jvms[i];
		char request = JBPF_REQ_THREAD_STACKS;

		if (jvm->fd < 0)
			continue;
		jvm->tids_stale = true;
		if (write(jvm->fd, &request, 1) != 1)
			java__detach(jvm, "could not be asked for its threads' stacks");
	}
	java->stacks_requested = true;
}

void java__finish(struct java *java)
{
	uint64_t deadline = clock__monotonic_ns() + (java->stacks_requested ? STACKS_FLUSH_TIMEOUT_MS : FLUSH_TIMEOUT_MS) *
					       NS_PER_MS;
	struct pollfd fds[JBPF_MAX_TARGETS];
	size_t waiting;

	/* An attach still in progress gives up; one done but not taken is undone (attacher.h). */
	java->finished = true;
	attacher__free(java->attacher);
	java->attacher = NULL;
	for (size_t i = 0; i < java->nr_jvms; i++) {
		struct jvm *jvm = &java->jvms[i];
		char request = JBPF_REQ_FLUSH;

		jvm->flushed = false;
		if (jvm->fd >= 0 && write(jvm->fd, &request, 1) != 1)
			java__detach(jvm, "could not be asked for its last stacks");
	}
	for (;;) {
		uint64_t now = clock__monotonic_ns();
		size_t n = 0;

		waiting = 0;
		for (size_t i = 0; i < java->nr_jvms; i++) {
			if (java->jvms[i].fd < 0 || java->jvms[i].flushed)
				continue;
			fds[n++] = (struct pollfd){ .fd = java->jvms[i].fd, .events = POLLIN };
			waiting++;
		}
		if (!waiting || now >= deadline)
			break;
		if (poll(fds, n, (int)((deadline - now) / NS_PER_MS) + 1) < 0 && errno != EINTR)
			break;
		java__on_poll(java, fds, n);
		/* Signals deferred to a system call's exit may still report a loss. */
		if (java->sampler)
			sampler__drain(java->sampler);
	}
	if (waiting)
		fprintf(stderr, "jbpfprof: %zu agent(s) did not answer the final flush in time\n", waiting);
	if (java->join)
		join__finish(java->join);
}
