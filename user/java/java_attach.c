/*
 * java_attach: the agent attached to JVMs, before and during the
 * recording (contract in java.h, the files' roles in java_internal.h).
 *
 * One attach is a struct attach_job: prepared on the session thread, run
 * (run_attach: the target opened, the agent loaded or woken, its hello
 * awaited) on the attach worker, or on the calling thread for the
 * attaches before the recording, then adopted by the session thread (a
 * JVM slot). The run touches nothing but its job, and every wait in it
 * ends when the recording does. A process that may become a JVM is
 * watched (java__watch, at most WATCH_SLOTS at once) and tried again at
 * growing intervals for WATCH_MS; each try's result says whether it needs
 * another.
 */
#include "user/java/java_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "symbolizer/proc.h"
#include "user/java/agent_error.h"
#include "user/java/agent_image.h"
#include "user/java/agent_loaded.h"
#include "user/java/agent_path.h"
#include "user/java/attach.h"
#include "user/java/attacher.h"
#include "user/java/javamap.h"
#include "user/java/javastacks.h"

#define ATTACH_TIMEOUT_MS 10000
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
 * Attaches held by the worker at once (queued, running, done). A watched
 * process whose turn comes while it is full is tried at the next tick.
 */
#define ATTACH_QUEUE 32

/*
 * After a failed load: the agent may have connected and said why before
 * giving up, which says more than the JVM's return code.
 */
static void take_agent_error(struct jvm_target *t, int listen_fd, const char *sock, uint32_t tgid, char *err,
			     size_t err_size)
{
	char ignored[128], said[256];
	int fd = attach__accept(t, listen_fd, sock, 200, ignored, sizeof(ignored));

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
	agent_path__installed(path, sizeof(path));
	snprintf(err, err_size,
		 "JVM pid %u refuses dynamically loaded agents (-XX:-EnableDynamicAgentLoading): start it with "
		 "-agentpath:%.300s",
		 tgid, path);
}
/*
 * Puts a JVM just attached in its slot: its own if it was attached before
 * (its agent went with an exec, say), whose old state goes, else a new one
 * (java__attach checked there is room).
 */
static void keep_jvm(struct java *java, const struct jvm *fresh)
{
	struct jvm *jvm = java__find_jvm(java, fresh->tgid);

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
	job->started_ns = clock__monotonic_ns();
	rc = attach__target_open((pid_t)job->tgid, &target, err, err_size);
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
	/* Heap allocations and locks are the agent's own events: no signal from BPF needed. */
	if (job->no_kfunc && !job->heap_only) {
		snprintf(err, err_size,
			 "this kernel cannot signal a thread with a value from BPF (bpf_send_signal_task, Linux 6.13 "
			 "and later)");
		goto fail;
	}
	/* An agent the JVM loaded at start-up is woken, never joined by a copy. */
	loaded = agent_loaded__find(&target, agent_path, sizeof(agent_path), err, err_size);
	if (loaded < 0)
		goto fail;
	image = agent_image__bytes(&image_size);
	if (!loaded && attach__install_agent(&target, image, image_size, agent_path, sizeof(agent_path), err, err_size))
		goto fail;
	listen_fd = attach__listen(&target, sock, sizeof(sock), err, err_size);
	if (listen_fd < 0)
		goto fail;
	snprintf(options, sizeof(options), "socket=%s%s", sock, job->nmethods ? ",nmethods" : "");
	if (job->alloc_interval)
		snprintf(options + strlen(options), sizeof(options) - strlen(options), ",alloc=%u", job->alloc_interval);
	rc = loaded ? agent_loaded__wake(&target, options, ATTACH_TIMEOUT_MS, err, err_size)
		    : attach__load_agent(&target, agent_path, options, ATTACH_TIMEOUT_MS, err, err_size);
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
	jvm->fd = attach__accept(&target, listen_fd, sock, CONNECT_TIMEOUT_MS, err, err_size);
	if (jvm->fd < 0)
		goto fail_jvm;
	if (java__wait_for_hello(jvm, cancel_fd, err, err_size)) {
		close(jvm->fd);
		jvm->fd = -1;
		goto fail_jvm;
	}
	attach__unlisten(&target, listen_fd, sock);
	attach__target_close(&target);
	job->rc = JAVA_ATTACH_OK;
	return;
fail_jvm:
	javamap__free(jvm->map);
	free(jvm->reader);
	*jvm = (struct jvm){ .fd = -1 };
fail:
	/* Closes it and removes its file, if the agent never came to take it. */
	if (listen_fd >= 0)
		attach__unlisten(&target, listen_fd, sock);
	attach__target_close(&target);
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
	job->finished_ns = clock__monotonic_ns();
}

/* The request part of a job for tgid, filled on the session thread. */
static void prepare_job(struct java *java, struct attach_job *job, uint32_t tgid, bool heap_only)
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
		.alloc_interval = java->alloc_interval,
		.heap_only = heap_only,
		.room = java__find_jvm(java, tgid) || java->nr_jvms < JBPF_MAX_TARGETS,
		.no_kfunc = java->no_kfunc && !java->without_signals,
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
	if (!java__find_jvm(java, job->tgid) && java->nr_jvms >= JBPF_MAX_TARGETS) {
		snprintf(job->err, sizeof(job->err),
			 "JVM pid %u not attached: %d JVMs already are, the most one recording signals (the BPF map of "
			 "JVMs to signal)", job->tgid, JBPF_MAX_TARGETS);
		job->rc = JAVA_ATTACH_FULL;
		note_over_bound(java, job->err);
	} else if (!java->join && !(java->join = join__new(java__emit, java))) {
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
	job->jvm.heap_only = job->heap_only;
	job->jvm.heard_ns = clock__monotonic_ns();
	keep_jvm(java, &job->jvm);
	job->jvm = (struct jvm){ .fd = -1 };
	java->attach.attached++;
	return JAVA_ATTACH_OK;
}

/* One attach, here and now: for everything, or for heap allocations alone. */
static int attach_now(struct java *java, uint32_t tgid, bool heap_only, char *err, size_t err_size)
{
	struct attach_job *job = malloc(sizeof(*job));
	int rc;

	if (!job) {
		snprintf(err, err_size, "out of memory");
		return JAVA_ATTACH_FAILED;
	}
	prepare_job(java, job, tgid, heap_only);
	run_attach(job, -1);
	rc = adopt(java, job);
	snprintf(err, err_size, "%s", job->err);
	discard_job(job);
	return rc;
}

int java__attach(struct java *java, uint32_t tgid, char *err, size_t err_size)
{
	return attach_now(java, tgid, false, err, err_size);
}

int java__attach_heap_only(struct java *java, uint32_t tgid, char *err, size_t err_size)
{
	return attach_now(java, tgid, true, err, err_size);
}

/* ---- attaching during the recording ---- */

void java__watch_execs(struct java *java, bool on)
{
	java->watch_execs = on;
}

void java__watch(struct java *java, uint32_t tgid)
{
	uint64_t now = clock__monotonic_ns();
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
	struct jvm *jvm = java__find_jvm(java, tgid);
	char err[256];

	if (!jvm || !java->sampler || jvm->heap_only)
		return;
	if (sampler__add_java(java->sampler, tgid, jvm->start_ticks, jvm->signo, err, sizeof(err)))
		java__detach(jvm, err);
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

/* Watched process w's next try, at the next of its growing intervals. */
static void try_later(struct watch *w, uint64_t now)
{
	w->next_ns = now + w->step_ms * NS_PER_MS;
	w->step_ms = w->step_ms * 2 > WATCH_MAX_MS ? WATCH_MAX_MS : w->step_ms * 2;
}

/* After a try of a watched process: its next try, or its slot freed. */
static void watched_tried(struct java *java, struct watch *w, int rc)
{
	uint64_t now = clock__monotonic_ns();

	w->in_flight = false;
	if (try_result(java, w, rc, now)) {
		if (now < w->deadline_ns && (w->jvm || now < w->since_ns + NATIVE_AFTER_MS * NS_PER_MS)) {
			try_later(w, now);
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
	uint64_t now = clock__monotonic_ns();

	fprintf(stderr,
		"jbpfprof: attach try of pid %u: %s after %.0f ms queued, %.0f ms running, taken %.0f ms later%s%s\n",
		job->tgid, result_name(rc), (double)(job->started_ns - job->submitted_ns) / 1e6,
		(double)(job->finished_ns - job->started_ns) / 1e6, (double)(now - job->finished_ns) / 1e6,
		job->err[0] ? ": " : "", job->err);
}

/* The attaches the worker finished: adopted, and their watches told. */
void java__take_finished(struct java *java)
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
		watched_tried(java, w, attach_now(java, w->tgid, w->heap_only, w->err, sizeof(w->err)));
		return true;
	}
	if (!(job = malloc(sizeof(*job))))
		return false;
	prepare_job(java, job, w->tgid, w->heap_only);
	job->submitted_ns = clock__monotonic_ns();
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
void java__attach_watched(struct java *java, uint64_t now)
{
	for (size_t k = 0; k < WATCH_SLOTS; k++) {
		struct watch *w = &java->watches[(java->next_watch + k) % WATCH_SLOTS];
		const struct jvm *jvm;
		enum java_adopt adopt;

		if (!w->tgid || w->in_flight || now < w->next_ns)
			continue;
		jvm = java__find_jvm(java, w->tgid);
		adopt = jvm && jvm->fd >= 0 ? JAVA_ADOPT_TAKEN :
			java->adopter ? java->adopter(java->adopter_ctx, w->tgid) : JAVA_ADOPT_NO;
		if (adopt == JAVA_ADOPT_TAKEN) {
			w->tgid = 0; /* attached already, or taken by BPF's walk */
			continue;
		}
		w->heap_only = adopt == JAVA_ADOPT_HEAP_ONLY;
		/*
		 * A JVM still starting is asked again soon, not later and later:
		 * its samples have no Java frames until the walk takes it, and it
		 * runs Java code a few tens of milliseconds after its layout reads.
		 */
		if (adopt == JAVA_ADOPT_WAIT && now < w->since_ns + JAVA_ADOPT_WAIT_MS * NS_PER_MS) {
			w->jvm = true;
			w->next_ns = now + WATCH_FIRST_MS * NS_PER_MS;
			continue;
		}
		if (!start_try(java, w)) {
			java->next_watch = (java->next_watch + k) % WATCH_SLOTS;
			return;
		}
	}
}

uint64_t java__next_watch_ns(const struct java *java)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < WATCH_SLOTS; i++) {
		const struct watch *w = &java->watches[i];

		if (w->tgid && !w->in_flight && w->next_ns < next)
			next = w->next_ns;
	}
	return next;
}

int java__attach_when_live(struct java *java, uint32_t tgid, char *err, size_t err_size)
{
	uint64_t deadline = clock__monotonic_ns() + WATCH_MS * NS_PER_MS;
	bool said = false;
	int rc;

	for (;;) {
		rc = java__attach(java, tgid, err, err_size);
		if (rc != JAVA_ATTACH_NOT_YET || clock__monotonic_ns() >= deadline)
			return rc;
		if (!said) {
			said = true;
			fprintf(stderr, "jbpfprof: JVM pid %u is still starting; waiting up to %d s for it to be live\n",
				tgid, WATCH_MS / 1000);
		}
		nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000L }, NULL);
	}
}
