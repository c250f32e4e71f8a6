/*
 * java: attaching the agent and routing its stream (contract in java.h).
 */
#include "java.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/java/agent_error.h"
#include "user/java/agent_image.h"
#include "user/java/agent_loaded.h"
#include "user/java/agent_path.h"
#include "common/counts.h"
#include "common/terminal.h"
#include "symbolizer/proc.h"
#include "user/java/attach.h"
#include "user/java/attacher.h"
#include "user/java/javamap.h"
#include "user/java/javastacks.h"
#include "user/java/javastream.h"
#include "user/java/join.h"
#include "user/java/merge.h"

#define ATTACH_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 3000
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
 * A process watched to be attached later (java__watch) is tried again at
 * growing intervals, from WATCH_FIRST_MS to WATCH_MAX_MS, for at most
 * WATCH_MS: a JVM that starts takes well under a second to load libjvm.so
 * and reach its live phase, and a launcher or wrapper that has not become
 * one in that time is taken for a native program.
 */
#define WATCH_MS 10000
#define WATCH_FIRST_MS 20
#define WATCH_MAX_MS 1000
/*
 * A process that maps neither libjli.so nor libjvm.so this long after it
 * was watched is taken for a native program at once: the dynamic loader
 * maps a launcher's libjli.so well before that, and a later exec into java
 * is watched again from its exec record. Under -a every exec on the host
 * is watched; this keeps their tries few.
 */
#define NATIVE_AFTER_MS 1000
/*
 * Processes watched at once. With -a every exec on the host is watched
 * briefly; past this many the new one is not, and counted.
 */
#define WATCH_SLOTS 256
/*
 * Attaches held by the worker at once (queued, running, done). A watched
 * process whose turn comes while it is full is tried at the next tick.
 */
#define ATTACH_QUEUE 32
/*
 * A JVM whose agent is gone and whose process has exited keeps its slot
 * this long (for samples still in the ring buffer or the join), then frees
 * it for another JVM; whether it exited is checked at most every
 * GONE_CHECK_MS.
 */
#define RELEASE_AFTER_MS 3000
#define GONE_CHECK_MS 1000

struct java;

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
	uint64_t gone_ns;       /* when its agent went (detach), or 0 */
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
	bool stacks_requested;  /* java__request_thread_stacks was called */
	bool watch_execs;       /* java__exec watches the process (see java__watch_execs) */
	bool verbose;
	bool finished;          /* java__finish ran: no attach starts any more */
	struct watch watches[WATCH_SLOTS];
	size_t next_watch;      /* where attach_watched starts its next pass */
	struct attacher *attacher; /* runs the attaches of watched processes; made at the first */
	bool no_attacher;       /* it could not be made: they run on the session thread */
	bool kfunc_checked, no_kfunc;
	size_t released;        /* JVMs whose slot was freed (release_jvm) */
	struct java_stats retired; /* the agents' counters of those JVMs */
	struct java_stats stats;
	struct java_attach_stats attach;
	java_trace_fn observer;    /* java__observe_traces */
	void *observer_ctx;
	java_adopt_fn adopter;     /* java__set_adopter */
	void *adopter_ctx;
};

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

static struct jvm *find_jvm(struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].tgid == tgid)
			return &java->jvms[i];
	return NULL;
}

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
	join__add_trace(jvm->java->join, jvm->tgid, trace, frames, clock_monotonic_ns());
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
	javastacks__add(jvm->stacks, stack, frames, clock_monotonic_ns());
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
	};
}

/* The agent is gone or misbehaved: stop signalling that JVM. */
static void detach(struct jvm *jvm, const char *why)
{
	if (jvm->fd < 0)
		return;
	close(jvm->fd);
	jvm->fd = -1;
	jvm->gone_ns = clock_monotonic_ns();
	if (jvm->java->sampler)
		sampler__forget_java(jvm->java->sampler, jvm->tgid);
	fprintf(stderr, "jbpfprof: the agent in JVM pid %u %s; its later samples have no Java frames\n", jvm->tgid,
		why);
}

/* The agent sent something: a JVM that was silent answers again, and is signalled again. */
static void heard(struct jvm *jvm)
{
	uint64_t now = clock_monotonic_ns();
	char ignored[256];

	if (jvm->silent && jvm->java->sampler &&
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
	rc = javastream_read(jvm->reader, jvm->fd, &handler);
	if (rc == 0)
		heard(jvm);
	if (rc == 1)
		detach(jvm, jvm->flushed ? "closed its connection" : "went away");
	else if (rc == -EPROTO)
		detach(jvm, "sent a malformed stream");
	else if (rc < 0)
		detach(jvm, "could not be read");
	return jvm->fd >= 0;
}

/*
 * Waits for the agent's first message (or its error) after the attach,
 * on the attach worker: jvm->java is NULL, and nothing but jvm is touched.
 * Gives up at once when cancel_fd (-1: never) polls readable.
 */
static int wait_for_hello(struct jvm *jvm, int cancel_fd, char *err, size_t err_size)
{
	uint64_t deadline = clock_monotonic_ns() + CONNECT_TIMEOUT_MS * NS_PER_MS;
	struct javastream_handler handler = handler_for(jvm);

	while (!jvm->hello && !jvm->error[0]) {
		struct pollfd p[2] = { { .fd = jvm->fd, .events = POLLIN }, { .fd = cancel_fd, .events = POLLIN } };
		uint64_t now = clock_monotonic_ns();
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
		rc = javastream_read(jvm->reader, jvm->fd, &handler);
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

/*
 * After a failed load: the agent may have connected and said why before
 * giving up, which says more than the JVM's return code.
 */
static void take_agent_error(struct jvm_target *t, int listen_fd, const char *sock, uint32_t tgid, char *err,
			     size_t err_size)
{
	char ignored[128], said[256];
	int fd = jvm_accept(t, listen_fd, sock, 200, ignored, sizeof(ignored));

	if (fd < 0)
		return;
	if (!agent_error__read(fd, 200, said, sizeof(said)))
		snprintf(err, err_size, "the agent failed in JVM pid %u: %.300s", tgid, said);
	close(fd);
}

/*
 * HotSpot's answer to a load under -XX:-EnableDynamicAgentLoading (JDK 21
 * and later, jvmtiAgent.cpp) is replaced by the way in that works: the
 * agent at start-up, which jbpfprof wakes without a load.
 */
static void explain_refused_load(uint32_t tgid, char *err, size_t err_size)
{
	char path[4096];

	if (!strstr(err, "Dynamic agent loading is not enabled"))
		return;
	agent_path_installed(path, sizeof(path));
	snprintf(err, err_size,
		 "JVM pid %u refuses dynamically loaded agents (-XX:-EnableDynamicAgentLoading): start it with "
		 "-agentpath:%.300s",
		 tgid, path);
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

static void emit(void *ctx, const struct jbpf_sample *sample, size_t size, const struct join_trace *trace,
		 enum join_outcome outcome);

/*
 * Puts a JVM just attached in its slot: its own if it was attached before
 * (its agent went with an exec, say), whose old state goes, else a new one
 * (java__attach checked there is room).
 */
static void keep_jvm(struct java *java, const struct jvm *fresh)
{
	struct jvm *jvm = find_jvm(java, fresh->tgid);

	if (jvm) {
		if (jvm->fd >= 0)
			close(jvm->fd);
		javamap__free(jvm->map);
		javastacks__free(jvm->stacks);
		free(jvm->reader);
	} else {
		jvm = &java->jvms[java->nr_jvms++];
	}
	*jvm = *fresh;
}

/* Whether cancel_fd (-1: never) says to give up. */
static bool cancelled(int cancel_fd)
{
	struct pollfd p = { .fd = cancel_fd, .events = POLLIN };

	return cancel_fd >= 0 && poll(&p, 1, 0) > 0;
}

/*
 * A JVM stopped by a signal or a debugger (state T or t) answers no
 * attach: trying would hold the attach worker for the whole load timeout,
 * and every attach queued behind it. It is tried again later (a watched
 * one until its watch ends), when it may run again.
 */
static bool is_stopped(uint32_t tgid, char *err, size_t err_size)
{
	char state = proc__thread_state("/proc", tgid, tgid);

	if (state != 'T' && state != 't')
		return false;
	snprintf(err, err_size, "JVM pid %u is stopped (%s)", tgid,
		 state == 'T' ? "by a signal" : "by a debugger or tracer");
	return true;
}

/*
 * The blocking part of an attach, on the attach worker (or inline for the
 * attaches before the recording): opens the target, loads or wakes the
 * agent and waits for its hello. Touches nothing but job; every wait ends
 * when cancel_fd (-1: never) polls readable, and then, as on any failure,
 * what it started is undone (the socket file removed, the agent's
 * connection closed: an agent that started sees it and stops).
 */
static void run_attach(struct attach_job *job, int cancel_fd)
{
	char agent_path[512], sock[256], options[512], *err = job->err;
	size_t err_size = sizeof(job->err);
	struct jvm_target target;
	struct jvm *jvm = &job->jvm;
	const void *image;
	size_t image_size;
	uint64_t start_ticks;
	int listen_fd = -1, rc, loaded;

	*jvm = (struct jvm){ .fd = -1 };
	job->rc = JAVA_ATTACH_FAILED;
	job->started_ns = clock_monotonic_ns();
	rc = jvm_target_open((pid_t)job->tgid, &target, err, err_size);
	if (rc == JVM_TARGET_NOT_JVM || rc == JVM_TARGET_STARTING || rc == JVM_TARGET_UNKNOWN || rc) {
		job->rc = rc == JVM_TARGET_NOT_JVM    ? JAVA_ATTACH_NOT_JVM
			  : rc == JVM_TARGET_STARTING ? JAVA_ATTACH_NOT_YET
			  : rc == JVM_TARGET_UNKNOWN  ? JAVA_ATTACH_UNKNOWN
						      : JAVA_ATTACH_FAILED;
		return;
	}
	target.cancel_fd = cancel_fd;
	if (is_stopped(job->tgid, err, err_size)) {
		job->rc = JAVA_ATTACH_NOT_YET;
		goto fail;
	}
	if (!job->room) {
		snprintf(err, err_size,
			 "JVM pid %u not attached: %d JVMs already are, the most one recording signals (the BPF map of "
			 "JVMs to signal)", job->tgid, JBPF_MAX_TARGETS);
		job->rc = JAVA_ATTACH_FULL;
		goto fail;
	}
	if (proc__start_time("/proc", job->tgid, &start_ticks)) {
		snprintf(err, err_size, "no process with PID %u (it has exited)", job->tgid);
		goto fail;
	}
	if (job->no_kfunc) {
		snprintf(err, err_size,
			 "this kernel cannot signal a thread with a value from BPF (bpf_send_signal_task, Linux 6.13 "
			 "and later)");
		goto fail;
	}
	/* An agent the JVM loaded at start-up is woken, never joined by a copy. */
	loaded = agent_loaded_find(&target, agent_path, sizeof(agent_path), err, err_size);
	if (loaded < 0)
		goto fail;
	image = agent_image(&image_size);
	if (!loaded && jvm_install_agent(&target, image, image_size, agent_path, sizeof(agent_path), err, err_size))
		goto fail;
	listen_fd = jvm_listen(&target, sock, sizeof(sock), err, err_size);
	if (listen_fd < 0)
		goto fail;
	snprintf(options, sizeof(options), "socket=%s%s", sock, job->nmethods ? ",nmethods" : "");
	rc = loaded ? agent_loaded_wake(&target, options, ATTACH_TIMEOUT_MS, err, err_size)
		    : jvm_load_agent(&target, agent_path, options, ATTACH_TIMEOUT_MS, err, err_size);
	if (rc == JVM_LOAD_NOT_LIVE) {
		job->rc = JAVA_ATTACH_NOT_YET;
		goto fail;
	}
	if (rc) {
		if (!loaded)
			explain_refused_load(job->tgid, err, err_size);
		if (!cancelled(cancel_fd))
			take_agent_error(&target, listen_fd, sock, job->tgid, err, err_size);
		goto fail;
	}
	*jvm = (struct jvm){ .tgid = job->tgid, .start_ticks = start_ticks, .fd = -1, .tids_stale = true };
	jvm->map = javamap__new();
	jvm->reader = malloc(sizeof(*jvm->reader));
	if (!jvm->map || !jvm->reader) {
		snprintf(err, err_size, "out of memory");
		goto fail_jvm;
	}
	jvm->reader->len = 0;
	jvm->fd = jvm_accept(&target, listen_fd, sock, CONNECT_TIMEOUT_MS, err, err_size);
	if (jvm->fd < 0)
		goto fail_jvm;
	if (wait_for_hello(jvm, cancel_fd, err, err_size)) {
		close(jvm->fd);
		jvm->fd = -1;
		goto fail_jvm;
	}
	jvm_unlisten(&target, listen_fd, sock);
	jvm_target_close(&target);
	job->rc = JAVA_ATTACH_OK;
	return;
fail_jvm:
	javamap__free(jvm->map);
	free(jvm->reader);
	*jvm = (struct jvm){ .fd = -1 };
fail:
	/* Closes it and removes its file, if the agent never came to take it. */
	if (listen_fd >= 0)
		jvm_unlisten(&target, listen_fd, sock);
	jvm_target_close(&target);
}

/* What a job holds, freed: an agent connected but never adopted sees its socket closed, and stops. */
static void discard_job(void *arg)
{
	struct attach_job *job = arg;

	if (job->jvm.fd >= 0)
		close(job->jvm.fd);
	javamap__free(job->jvm.map);
	free(job->jvm.reader);
	free(job);
}

static void run_attach_job(void *arg, int cancel_fd)
{
	struct attach_job *job = arg;

	run_attach(job, cancel_fd);
	job->finished_ns = clock_monotonic_ns();
}

/* The request part of a job for tgid, filled on the session thread. */
static void prepare_job(struct java *java, struct attach_job *job, uint32_t tgid)
{
	uint64_t lo, hi;

	/* A kfunc is a kernel function like any other: kallsyms lists it. */
	if (!java->kfunc_checked) {
		java->kfunc_checked = true;
		java->no_kfunc = symbolizer__kernel_symbol(java->sym, "bpf_send_signal_task", &lo, &hi) != 0;
	}
	*job = (struct attach_job){
		.tgid = tgid,
		.nmethods = java->nmethods,
		.room = find_jvm(java, tgid) || java->nr_jvms < JBPF_MAX_TARGETS,
		.no_kfunc = java->no_kfunc,
		.jvm = { .fd = -1 },
	};
}

static void note_over_bound(struct java *java, const char *err)
{
	if (!java->attach.over_bound++)
		fprintf(stderr, "jbpfprof: %s; this and any later JVM are profiled without Java frames\n", err);
}

/*
 * The session thread takes a finished attach: a connected agent gets its
 * JVM slot (if one is still free: attaches finish in any order) and the
 * job's jvm is emptied; anything else is only the job's result. Returns
 * the result (enum java_attach_result).
 */
static int adopt(struct java *java, struct attach_job *job)
{
	if (job->rc == JAVA_ATTACH_FULL)
		note_over_bound(java, job->err);
	if (job->rc != JAVA_ATTACH_OK)
		return job->rc;
	if (!find_jvm(java, job->tgid) && java->nr_jvms >= JBPF_MAX_TARGETS) {
		snprintf(job->err, sizeof(job->err),
			 "JVM pid %u not attached: %d JVMs already are, the most one recording signals (the BPF map of "
			 "JVMs to signal)", job->tgid, JBPF_MAX_TARGETS);
		job->rc = JAVA_ATTACH_FULL;
		note_over_bound(java, job->err);
	} else if (!java->join && !(java->join = join__new(emit, java))) {
		snprintf(job->err, sizeof(job->err), "out of memory");
		job->rc = JAVA_ATTACH_FAILED;
	}
	if (job->rc != JAVA_ATTACH_OK) {
		close(job->jvm.fd);
		javamap__free(job->jvm.map);
		free(job->jvm.reader);
		job->jvm = (struct jvm){ .fd = -1 };
		return job->rc;
	}
	job->jvm.java = java;
	job->jvm.heard_ns = clock_monotonic_ns();
	keep_jvm(java, &job->jvm);
	job->jvm = (struct jvm){ .fd = -1 };
	java->attach.attached++;
	return JAVA_ATTACH_OK;
}

int java__attach(struct java *java, uint32_t tgid, char *err, size_t err_size)
{
	struct attach_job *job = malloc(sizeof(*job));
	int rc;

	if (!job) {
		snprintf(err, err_size, "out of memory");
		return JAVA_ATTACH_FAILED;
	}
	prepare_job(java, job, tgid);
	run_attach(job, -1);
	rc = adopt(java, job);
	snprintf(err, err_size, "%s", job->err);
	discard_job(job);
	return rc;
}

bool java__has_agent(const struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < java->nr_jvms; i++)
		if (java->jvms[i].tgid == tgid)
			return true;
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

size_t java__targets(const struct java *java, struct sampler_java_target *targets, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < java->nr_jvms && n < max; i++)
		if (java->jvms[i].fd >= 0)
			targets[n++] = (struct sampler_java_target){ java->jvms[i].tgid, java->jvms[i].signo,
								     java->jvms[i].start_ticks };
	return n;
}

void java__set_sampler(struct java *java, struct sampler *sampler)
{
	uint64_t now = clock_monotonic_ns();

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
static const char *const agct_reasons[] = {
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
#define AGCT_OTHER (sizeof(agct_reasons) / sizeof(agct_reasons[0]) - 1)
_Static_assert(sizeof(((struct java_stats *)0)->agct) / sizeof(uint64_t) == AGCT_OTHER + 1,
	       "java_stats.agct counts each of agct_reasons");

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

static void emit(void *ctx, const struct jbpf_sample *sample, size_t size, const struct join_trace *trace,
		 enum join_outcome outcome)
{
	struct java *java = ctx;
	struct jvm *jvm = find_jvm(java, sample->tgid);
	struct merge_java a = { .map = jvm ? jvm->map : NULL, .trace = trace };
	char reason[128];

	if (!jvm) {
		aggregator__add(java->agg, sample);
		return;
	}
	a.thread_name = thread_name(jvm, sample, trace);
	if (outcome == JOIN_NO_TRACE) {
		if (!jvm->unanswered++)
			jvm->unanswered_since_ns = clock_monotonic_ns();
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
		const char *why;

		java->stats.failed++;
		if (trace->status == JBPF_TRACE_NO_AGCT) {
			why = "the JVM has no AsyncGetCallTrace";
			java->stats.unknown_status++;
		} else if (code > 0 && (size_t)code < AGCT_OTHER) {
			why = agct_reasons[code];
			java->stats.agct[code]++;
		} else {
			why = agct_reasons[AGCT_OTHER];
			java->stats.unknown_status++;
		}
		snprintf(reason, sizeof(reason), "[no Java frames: %s]", why);
		a.reason = reason;
	}
	merge__add(java->merge, sample, &a);
}

void java__exec(struct java *java, uint32_t tgid)
{
	struct jvm *jvm = find_jvm(java, tgid);

	if (jvm)
		detach(jvm, "is gone: the process ran another program");
	/* A wrapper script or a launcher that execs java: the new program may be a JVM. */
	if (java->watch_execs)
		java__watch(java, tgid);
}

void java__signal_lost(struct java *java, uint64_t seq)
{
	if (java->join)
		join__signal_lost(java->join, seq, clock_monotonic_ns());
}

void java__sample(struct java *java, const struct jbpf_sample *s, size_t size)
{
	struct jvm *jvm = find_jvm(java, s->tgid);
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
		join__add_sample(java->join, s, size, clock_monotonic_ns());
		return;
	}
	java->stats.failed++;
	if (s->signal_err)
		java->stats.signal_failed++;
	snprintf(reason, sizeof(reason), "[no Java frames: %s]",
		 s->signal_err			  ? "signal failed"
		 : s->type == JBPF_RECORD_WAIT ? "waited outside a system call"
		 : jvm->silent		      ? "JVM not answering"
					      : "agent gone");
	a.reason = reason;
	merge__add(java->merge, s, &a);
}

/* ---- attaching during the recording ---- */

void java__watch_execs(struct java *java, bool on)
{
	java->watch_execs = on;
}

void java__set_verbose(struct java *java, bool verbose)
{
	java->verbose = verbose;
}

void java__watch(struct java *java, uint32_t tgid)
{
	uint64_t now = clock_monotonic_ns();
	struct watch *free_slot = NULL;

	for (size_t i = 0; i < WATCH_SLOTS; i++) {
		struct watch *w = &java->watches[i];

		if (w->tgid == tgid) {
			free_slot = w; /* watched again from now: an exec restarts its time */
			break;
		}
		if (!w->tgid && !free_slot)
			free_slot = w;
	}
	if (!free_slot) {
		java->attach.watch_full++;
		return;
	}
	*free_slot = (struct watch){
		.in_flight = free_slot->tgid == tgid && free_slot->in_flight, /* its result still comes */
		.tgid = tgid,
		.since_ns = now,
		.next_ns = now,
		.deadline_ns = now + WATCH_MS * NS_PER_MS,
		.step_ms = WATCH_FIRST_MS,
	};
}

/* A JVM attached during the recording: its threads are signalled from now on. */
static void start_signalling(struct java *java, uint32_t tgid)
{
	struct jvm *jvm = find_jvm(java, tgid);
	char err[256];

	if (!jvm || !java->sampler)
		return;
	if (sampler__add_java(java->sampler, tgid, jvm->start_ticks, jvm->signo, err, sizeof(err)))
		detach(jvm, err);
}

/* What one try of a watched process gave; false once it needs no more. */
static bool try_result(struct java *java, struct watch *w, int rc, uint64_t now)
{
	switch (rc) {
	case JAVA_ATTACH_OK:
		java->attach.attached_late++;
		start_signalling(java, w->tgid);
		if (w->said || java->verbose)
			fprintf(stderr, "jbpfprof: agent loaded into JVM pid %u, %.1f s after it was first tried\n",
				w->tgid, (double)(now - w->since_ns) / 1e9);
		return false;
	case JAVA_ATTACH_NOT_JVM:
		/* Not (yet) a JVM; ask again until the deadline, then it is a native program. */
		w->jvm = false;
		return true;
	case JAVA_ATTACH_FULL:
	case JAVA_ATTACH_UNKNOWN:
		return false;
	case JAVA_ATTACH_NOT_YET:
		w->jvm = true;
		if (!w->said) {
			w->said = true;
			if (strstr(w->err, " is stopped ("))
				fprintf(stderr, "jbpfprof: %s; attaching if it runs again (up to %d s)\n", w->err,
					WATCH_MS / 1000);
			else
				fprintf(stderr,
					"jbpfprof: JVM pid %u is still starting; attaching when it is live (up to %d s)\n",
					w->tgid, WATCH_MS / 1000);
		}
		return true;
	default:
		java->attach.failed++;
		fprintf(stderr,
			"jbpfprof: cannot load the agent into pid %u: %s; profiling it without Java frames (frame "
			"pointers and any perf map)\n", w->tgid, w->err);
		return false;
	}
}

/* After a try of a watched process: its next try, or its slot freed. */
static void watched_tried(struct java *java, struct watch *w, int rc)
{
	uint64_t now = clock_monotonic_ns();

	w->in_flight = false;
	if (try_result(java, w, rc, now)) {
		if (now < w->deadline_ns && (w->jvm || now < w->since_ns + NATIVE_AFTER_MS * NS_PER_MS)) {
			w->next_ns = now + w->step_ms * NS_PER_MS;
			w->step_ms = w->step_ms * 2 > WATCH_MAX_MS ? WATCH_MAX_MS : w->step_ms * 2;
			return;
		}
		if (w->jvm) {
			java->attach.failed++;
			fprintf(stderr, "jbpfprof: JVM pid %u did not become live within %d s (%s); profiling it "
				"without Java frames\n", w->tgid, WATCH_MS / 1000, w->err);
		}
	}
	w->tgid = 0;
}

static struct watch *find_watch(struct java *java, uint32_t tgid)
{
	for (size_t i = 0; i < WATCH_SLOTS; i++)
		if (java->watches[i].tgid == tgid && java->watches[i].in_flight)
			return &java->watches[i];
	return NULL;
}

static const char *result_name(int rc)
{
	switch (rc) {
	case JAVA_ATTACH_OK:
		return "attached";
	case JAVA_ATTACH_NOT_JVM:
		return "not a JVM";
	case JAVA_ATTACH_NOT_YET:
		return "not live yet";
	case JAVA_ATTACH_FULL:
		return "no slot";
	case JAVA_ATTACH_UNKNOWN:
		return "gone";
	default:
		return "failed";
	}
}

/* -v: one line per finished try, with how long it waited for the worker and how long it ran. */
static void say_try(const struct attach_job *job, int rc)
{
	uint64_t now = clock_monotonic_ns();

	fprintf(stderr,
		"jbpfprof: attach try of pid %u: %s after %.0f ms queued, %.0f ms running, taken %.0f ms later%s%s\n",
		job->tgid, result_name(rc), (double)(job->started_ns - job->submitted_ns) / 1e6,
		(double)(job->finished_ns - job->started_ns) / 1e6, (double)(now - job->finished_ns) / 1e6,
		job->err[0] ? ": " : "", job->err);
}

/* The attaches the worker finished: adopted, and their watches told. */
static void take_finished(struct java *java)
{
	struct attach_job *job;

	while (java->attacher && (job = attacher__take(java->attacher))) {
		struct watch *w = find_watch(java, job->tgid);
		int rc = adopt(java, job);

		/* Under -a every exec on the host is tried: the native programs' tries are not worth a line. */
		if (java->verbose && ((w && w->jvm) || (rc != JAVA_ATTACH_NOT_JVM && rc != JAVA_ATTACH_UNKNOWN)))
			say_try(job, rc);

		if (w) {
			snprintf(w->err, sizeof(w->err), "%s", job->err);
			watched_tried(java, w, rc);
		}
		discard_job(job);
	}
}

/*
 * Starts a try of watched process w: on the attach worker (made at the
 * first), or here when it cannot be made. false when the worker's queue is
 * full: w's turn comes again at the next tick.
 */
static bool start_try(struct java *java, struct watch *w)
{
	struct attach_job *job;

	if (!java->attacher && !java->no_attacher &&
	    !(java->attacher = attacher__new(ATTACH_QUEUE, run_attach_job, discard_job))) {
		java->no_attacher = true;
		fprintf(stderr, "jbpfprof: cannot start the attach thread (%s); attaching during the recording "
			"holds up the recording loop\n", strerror(errno));
	}
	if (!java->attacher) {
		watched_tried(java, w, java__attach(java, w->tgid, w->err, sizeof(w->err)));
		return true;
	}
	if (!(job = malloc(sizeof(*job))))
		return false;
	prepare_job(java, job, w->tgid);
	job->submitted_ns = clock_monotonic_ns();
	if (attacher__submit(java->attacher, job)) {
		free(job);
		return false;
	}
	w->in_flight = true;
	return true;
}

/*
 * The watched processes whose turn it is, from where the last pass
 * stopped, so that a full worker queue delays every one in turn, never
 * the same ones.
 */
static void attach_watched(struct java *java, uint64_t now)
{
	for (size_t k = 0; k < WATCH_SLOTS; k++) {
		struct watch *w = &java->watches[(java->next_watch + k) % WATCH_SLOTS];
		const struct jvm *jvm;

		if (!w->tgid || w->in_flight || now < w->next_ns)
			continue;
		jvm = find_jvm(java, w->tgid);
		if ((jvm && jvm->fd >= 0) || (java->adopter && java->adopter(java->adopter_ctx, w->tgid))) {
			w->tgid = 0; /* attached already, or taken by BPF's walk */
			continue;
		}
		if (!start_try(java, w)) {
			java->next_watch = (java->next_watch + k) % WATCH_SLOTS;
			return;
		}
	}
}

int java__attach_when_live(struct java *java, uint32_t tgid, char *err, size_t err_size)
{
	uint64_t deadline = clock_monotonic_ns() + WATCH_MS * NS_PER_MS;
	bool said = false;
	int rc;

	for (;;) {
		rc = java__attach(java, tgid, err, err_size);
		if (rc != JAVA_ATTACH_NOT_YET || clock_monotonic_ns() >= deadline)
			return rc;
		if (!said) {
			said = true;
			fprintf(stderr, "jbpfprof: JVM pid %u is still starting; waiting up to %d s for it to be live\n",
				tgid, WATCH_MS / 1000);
		}
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
	}
}

void java__attach_stats(const struct java *java, struct java_attach_stats *stats)
{
	*stats = java->attach;
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
static void check_answering(struct jvm *jvm, uint64_t now)
{
	if (jvm->fd < 0)
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
		detach(jvm, "sent no Java stack for its threads' last signals (200 in a row, over 5 s): "
			    "they no longer run its handler");
}

/* The agents' own counters of jvm, added to totals (java__stats). */
static void add_agent_counts(struct java_stats *st, const struct jvm *jvm)
{
	struct javamap_stats ms;

	if (jvm->stacks) {
		struct javastacks_stats ss;

		javastacks__stats(jvm->stacks, &ss);
		st->thread_stacks += ss.stored;
		st->thread_stacks_dropped += ss.dropped + ss.unmapped;
	}
	st->thread_stacks_dropped += jvm->stacks_lost;
	st->ring_full += jvm->agent_stats.ring_full;
	st->handler_ns += jvm->agent_stats.handler_ns;
	st->handler_calls += jvm->agent_stats.traces;
	javamap__stats(jvm->map, &ms);
	st->methods += ms.methods;
	st->blobs += ms.blobs;
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
	add_agent_counts(&java->retired, jvm);
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
 * JBPF_MAX_TARGETS. Their BPF map entry went with the agent (detach).
 */
static void release_exited(struct java *java, uint64_t now)
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

void java__tick(struct java *java, uint64_t now)
{
	if (java->join)
		join__expire(java->join, now);
	for (size_t i = 0; i < java->nr_jvms; i++)
		check_answering(&java->jvms[i], now);
	release_exited(java, now);
	if (java->finished)
		return;
	take_finished(java);
	attach_watched(java, now);
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
			detach(jvm, "could not be asked for its threads' stacks");
	}
	java->stacks_requested = true;
}

const char *java__thread_name(struct java *java, uint32_t tgid, uint32_t tid)
{
	struct jvm *jvm = find_jvm(java, tgid);

	return jvm && jvm->own_pidns ? javamap__thread(jvm->map, tid) : NULL;
}

void java__add_final_wait(struct java *java, const struct jbpf_sample *wait, size_t size)
{
	struct jvm *jvm = find_jvm(java, wait->tgid);
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

void java__finish(struct java *java)
{
	uint64_t deadline = clock_monotonic_ns() + (java->stacks_requested ? STACKS_FLUSH_TIMEOUT_MS : FLUSH_TIMEOUT_MS) *
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
			detach(jvm, "could not be asked for its last stacks");
	}
	for (;;) {
		uint64_t now = clock_monotonic_ns();
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

void java__stats(const struct java *java, struct java_stats *stats)
{
	*stats = java->stats;
	stats->ring_full = java->retired.ring_full;
	stats->handler_ns = java->retired.handler_ns;
	stats->handler_calls = java->retired.handler_calls;
	stats->methods = java->retired.methods;
	stats->blobs = java->retired.blobs;
	stats->thread_stacks = java->retired.thread_stacks;
	stats->thread_stacks_dropped = java->retired.thread_stacks_dropped;
	for (size_t i = 0; i < java->nr_jvms; i++)
		add_agent_counts(stats, &java->jvms[i]);
	if (java->merge) {
		struct merge_kind_counts kinds;

		merge__kind_counts(java->merge, &kinds);
		stats->kinds_by_agent = kinds.by_agent;
		stats->kinds_by_native = kinds.by_native;
		stats->kinds_inferred = kinds.inferred;
	}
}

void java__describe(const struct java *java, char *buf, size_t size)
{
	struct java_stats st;
	uint64_t java_threads;
	size_t used;

	java__stats(java, &st);
	java_threads = st.jvm_samples - st.vm_threads;
	used = (size_t)snprintf(buf, size,
				"Java stacks: %llu of %llu joined (%.1f%%), %llu on VM threads (not signalled: %llu waits, "
				"%llu CPU samples)",
				(unsigned long long)st.with_java, (unsigned long long)java_threads,
				java_threads ? 100.0 * (double)st.with_java / (double)java_threads : 100.0,
				(unsigned long long)st.vm_threads, (unsigned long long)st.unsignalled_waits,
				(unsigned long long)st.unsignalled_cpu);
	if ((st.from_anchor || st.from_caller) && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; joined by a second walk: %llu from the last Java frame, %llu from a stub's "
					 "Java caller",
					 (unsigned long long)st.from_anchor, (unsigned long long)st.from_caller);
	if ((st.kinds_by_agent || st.kinds_by_native || st.kinds_inferred) && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; Java frame kinds: %llu exact (%llu walked by the agent, %llu from the native "
					 "stack), %llu inferred",
					 (unsigned long long)(st.kinds_by_agent + st.kinds_by_native),
					 (unsigned long long)st.kinds_by_agent, (unsigned long long)st.kinds_by_native,
					 (unsigned long long)st.kinds_inferred);
	{
		struct named_count causes[16];
		size_t n = 0;

		for (size_t code = 1; code < AGCT_OTHER; code++)
			causes[n++] = (struct named_count){ agct_reasons[code], st.agct[code] };
		causes[n++] = (struct named_count){ "signal failed", st.signal_failed };
		causes[n++] = (struct named_count){ "no stack from the agent", st.no_trace };
		causes[n++] = (struct named_count){ "still in a system call", st.in_syscall };
		causes[n++] = (struct named_count){ "signal not sent", st.signal_lost };
		causes[n++] = (struct named_count){ "join queue full", st.queue_full };
		causes[n++] = (struct named_count){ "other", st.unknown_status };
		used = counts__append(buf, size, used, "; without: ", causes, n);
	}
	if (st.ring_full && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; agent ring full %llu",
					 (unsigned long long)st.ring_full);
	if (st.thread_stacks_dropped && used < size)
		snprintf(buf + used, size - used, "; thread stacks dropped %llu",
			 (unsigned long long)st.thread_stacks_dropped);
}

void java__describe_attach(const struct java *java, bool all, char *buf, size_t size)
{
	const struct java_attach_stats *a = &java->attach;
	size_t used;

	buf[0] = '\0';
	if (!all && !a->attached_late && !a->failed && !a->over_bound && !a->watch_full)
		return;
	used = (size_t)snprintf(buf, size, "; JVMs: %llu attached (%llu during the recording), %llu failed",
				(unsigned long long)a->attached, (unsigned long long)a->attached_late,
				(unsigned long long)a->failed);
	if (a->over_bound && used < size)
		used += (size_t)snprintf(buf + used, size - used, ", %llu not attached past the bound of %d",
					 (unsigned long long)a->over_bound, JBPF_MAX_TARGETS);
	if (a->watch_full && used < size)
		snprintf(buf + used, size - used, ", %llu new processes not watched (%d at once)",
			 (unsigned long long)a->watch_full, WATCH_SLOTS);
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
