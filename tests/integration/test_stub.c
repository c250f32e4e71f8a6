/*
 * The JVMTI agent (jvmti-stub/, build/libjbpfagent.so), driven the way the
 * profiler drives it. The test listens on a Unix socket, starts a JVM
 * running tests/workloads/java/StubProbe.java with the agent, signals the
 * probe's spinning thread with chosen values, asks for a flush and reads
 * the stream (jvmti-stub/stream.h) back. Attached to a running JVM, it
 * checks the tids the agent reads for threads it never saw start, and the
 * thread stacks a 'W' request brings (the probe's sleeping thread's among
 * them).
 *
 * Signals go out with rt_tgsigqueueinfo (si_code SI_QUEUE), which the agent
 * takes only under its test-hook option "sigqueue"; the BPF program's
 * signals carry SI_KERNEL, which userspace cannot send. A tgkill signal
 * (SI_TKILL) stands for a stranger's and must be counted as foreign.
 *
 * Later recordings of the same JVM load the agent through the profiler's
 * own attach client (user/java/attach.h, linked in by the top Makefile),
 * so that re-attach, a refused second profiler and the attach-only start
 * are covered as jbpfprof itself reaches them.
 *
 * Every wait has a deadline; a flush is repeated until what was sent has
 * come back, since a signal is handled when its thread next runs, which
 * may be after a flush request. No root needed. Each scenario runs on JDK
 * 17 and JDK 25; a JDK that is not installed skips its runs.
 *
 * Environment, as the top Makefile sets it: AGENT (default
 * build/libjbpfagent.so), JAVA_CLASSES (default build/java, from
 * tests/workloads/java/java.mk; without StubProbe.class there it is compiled
 * here), JAVA17 and JAVA25 (the java binaries).
 *
 * The agent's JVM-free parts (the name normaliser, the option parser, the
 * ring, the method set and the outbox) have their own unit tests,
 * tests/unit/test_agent_*.c.
 */
#include "harness.h"
#include "jvm.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jvmti-stub/stream.h"
#include "user/java/attach.h"

/* ---------------------------------------------------------------- JVMs */

static char agent_path[PATH_MAX];
static char java_path[PATH_MAX]; /* of the JDK under test */
static char *class_dir;       /* where StubProbe.class is */
static char *compiled_dir;    /* class_dir when this test compiled it, to remove */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Skips unless the JDK, the agent and StubProbe.class are there (compiling it if needed). */
static void require_jvm(const struct jdk *jdk)
{
	const char *agent = harness_getenv("AGENT", "build/libjbpfagent.so");
	const char *dir = harness_getenv("JAVA_CLASSES", "build/java");
	char *probe;

	snprintf(java_path, sizeof(java_path), "%s", jdk_java_path(jdk));
	if (access(java_path, X_OK)) {
		fprintf(stderr, "SKIPPED: %s is not installed (no %s; set %s)\n", jdk->name, java_path, jdk->env);
		skip();
	}
	if (!realpath(agent, agent_path)) {
		fprintf(stderr, "SKIPPED: no agent at %s (make build/libjbpfagent.so first)\n", agent);
		skip();
	}
	if (class_dir)
		return;
	probe = harness_path(dir, "StubProbe.class");
	if (!access(probe, R_OK)) {
		class_dir = strdup(dir);
	} else {
		/* build/java is made by tests/workloads/java/java.mk; without it, compile here. */
		char javac[PATH_MAX + 8], *out = harness_tmpdir();
		const char *slash = strrchr(java_path, '/');
		struct child c;

		snprintf(javac, sizeof(javac), "%.*sjavac", slash ? (int)(slash + 1 - java_path) : 0, java_path);
		if (access(javac, X_OK)) {
			fprintf(stderr, "SKIPPED: no StubProbe.class in %s and no %s to compile it\n", dir, javac);
			skip();
		}
		assert_non_null(out);
		assert_int_equal(harness_start_command(&c, (char *[]){ javac, "--release", "17", "-d", out,
								       "tests/workloads/java/StubProbe.java", NULL },
						       STDOUT_FILENO),
				 0);
		if (harness_finish(&c, 120) != 0)
			fail_msg("%s could not compile tests/workloads/java/StubProbe.java", javac);
		class_dir = compiled_dir = out;
	}
	free(probe);
}

static int remove_compiled(void **state)
{
	DIR *d = compiled_dir ? opendir(compiled_dir) : NULL;
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strstr(e->d_name, ".class"))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d) {
		closedir(d);
		rmdir(compiled_dir);
	}
	free(compiled_dir);
	compiled_dir = class_dir = NULL;
	return 0;
}

/* A listening socket at a fresh path, which *path receives (caller frees it and its directory). */
static int listen_at(char **dir, char **path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*dir = harness_tmpdir();
	assert_non_null(*dir);
	*path = harness_path(*dir, "agent.sock");
	assert_true(fd >= 0);
	assert_true(strlen(*path) < sizeof(addr.sun_path));
	strcpy(addr.sun_path, *path);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void unlisten(int fd, char *dir, char *path)
{
	close(fd);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

/* The agent's connection, within timeout_s. */
static int accept_agent(int listen_fd, int timeout_s)
{
	struct pollfd p = { .fd = listen_fd, .events = POLLIN };

	if (poll(&p, 1, timeout_s * 1000) != 1)
		fail_msg("the agent did not connect within %d s", timeout_s);
	return accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
}

/* Starts StubProbe on jdk, with the agent from start-up when agent_options is not NULL. */
static void start_probe(struct child *jvm, const struct jdk *jdk, const char *agent_options, pid_t *spin_tid)
{
	char agent_arg[PATH_MAX + 256];
	char *argv[16];
	size_t n = 0;

	argv[n++] = java_path;
	/* Later recordings attach: listen from the start, and let JDK 21+ load agents quietly. */
	argv[n++] = "-XX:+IgnoreUnrecognizedVMOptions";
	argv[n++] = "-XX:+EnableDynamicAgentLoading";
	argv[n++] = "-XX:+StartAttachListener";
	if (agent_options) {
		snprintf(agent_arg, sizeof(agent_arg), "-agentpath:%s=%s", agent_path, agent_options);
		argv[n++] = agent_arg;
	}
	argv[n++] = "-cp";
	argv[n++] = class_dir;
	argv[n++] = "StubProbe";
	argv[n] = NULL;
	if (harness_start_workload(jvm, argv))
		fail_msg("%s did not start StubProbe (no \"ready\" within 10 s)", jdk->name);
	*spin_tid = (pid_t)harness_truth(jvm, "tid");
	assert_true(*spin_tid > 0);
}

/* The tid of pid's thread whose comm is name, or -1. */
static pid_t thread_named(pid_t pid, const char *name)
{
	char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name) + 8], comm[32];
	struct dirent *e;
	pid_t found = -1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && found < 0 && (e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)) &&
		    comm[strlen(name)] == '\n')
			found = atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* The last "tick N" the probe printed, -1 if none. */
static long last_tick(const struct child *jvm)
{
	long tick = -1;

	for (const char *p = strstr(jvm->buf, "tick "); p; p = strstr(p + 1, "tick "))
		tick = atol(p + 5);
	return tick;
}

/* The probe's main thread still prints: two more ticks within 5 s. */
static void assert_still_runs(struct child *jvm)
{
	char want[32];
	int status;

	snprintf(want, sizeof(want), "tick %ld\n", last_tick(jvm) + 2);
	if (harness_wait_for(jvm, want, 5))
		fail_msg("the JVM stopped printing ticks (waited for \"%s\")", "tick N+2");
	assert_int_equal(waitpid(jvm->pid, &status, WNOHANG), 0);
}

/* Stops the probe with SIGTERM; the JVM's orderly exit status is 128 + SIGTERM. */
static void stop_probe(struct child *jvm)
{
	assert_int_equal(harness_stop_workload(jvm), 128 + SIGTERM);
}

static void queue_signal(pid_t pid, pid_t tid, int signo, uint64_t value)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = signo;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value.sival_ptr = (void *)(uintptr_t)value;
	assert_int_equal(syscall(SYS_rt_tgsigqueueinfo, pid, tid, signo, &si), 0);
}

static void foreign_signal(pid_t pid, pid_t tid, int signo)
{
	assert_int_equal(syscall(SYS_tgkill, pid, tid, signo), 0);
}

/*
 * Loads the agent into JVM pid with options through the profiler's own
 * attach client (user/java/attach.h), as a later recording does. Returns
 * 0, or what Agent_OnAttach returned when that was not 0: the client
 * reports it only in its error line, "... (Agent_OnAttach returned N)".
 * Any other failure fails the test with the client's error line.
 */
static int load_agent(pid_t pid, const char *options, int timeout_s)
{
	static const char returned[] = "Agent_OnAttach returned ";
	struct jvm_target target;
	char err[1024] = "";
	const char *rc;
	int ret;

	if (jvm_target_open(pid, &target, err, sizeof(err)))
		fail_msg("cannot attach to JVM pid %d: %s", (int)pid, err);
	ret = jvm_load_agent(&target, agent_path, options, timeout_s * 1000, err, sizeof(err));
	jvm_target_close(&target);
	if (!ret)
		return 0;
	rc = strstr(err, returned);
	if (!rc)
		fail_msg("the agent was not loaded into JVM pid %d: %s", (int)pid, err);
	return atoi(rc + strlen(returned));
}

/* ---------------------------------------------------------------- the stream */

#define MAX_TRACES 64
#define MAX_METHODS 65536
#define MAX_THREADS 256
#define MAX_STACKS 256

/* From jvmti.h (not on this test's include path): GetThreadState's bits. */
#define JVMTI_THREAD_STATE_ALIVE 0x0001
#define JVMTI_THREAD_STATE_SLEEPING 0x0040

struct trace {
	uint64_t seq;
	uint32_t tid;
	int32_t status;
	bool has_spin;
	char top[64];     /* innermost frame's name, for failure messages */
};

struct thread_name {
	uint32_t tid;
	char name[64];
};

/* One THREAD_STACK, its frames named through the METHODs before it. */
struct stack {
	uint32_t tid;
	int32_t state;
	uint32_t frame_count;
	uint32_t flags;
	bool has_doze, has_spin, has_sleep; /* StubProbe.doze, StubProbe.spin, java.lang.Thread.sleep* */
	int32_t doze_bci;
	char top[64];      /* innermost frame's name */
	int32_t top_bci;
	size_t message;    /* its place in the stream */
};

/* What one recording sent, checked as it is read. */
struct recording {
	int fd;
	unsigned char buf[4 * JBPF_STREAM_MAX_PAYLOAD];
	size_t len;
	struct jbpf_msg_hello hello;
	size_t messages;
	uint64_t *method_ids;
	char **method_names;
	size_t n_methods;
	size_t unnamed_uses;         /* a TRACE frame or CODE_LOAD whose METHOD had not come */
	struct trace traces[MAX_TRACES];
	size_t n_traces;
	bool interpreter;            /* a STUB named "Interpreter" */
	bool spin_nmethod;           /* compiled code of StubProbe.spin */
	pid_t spin_tid;
	bool spin_thread;            /* THREAD {spin_tid, "StubSpin"} */
	struct thread_name threads[MAX_THREADS]; /* every THREAD, in order */
	size_t n_threads;
	struct stack stacks[MAX_STACKS];
	size_t n_stacks;
	size_t flushed_at;           /* the place of the last FLUSHED in the stream */
	struct jbpf_msg_stats stats; /* the last STATS */
	size_t flushed;
	char error[JBPF_STREAM_MAX_NAME + 1];
};

static const char *method_name(const struct recording *r, uint64_t id)
{
	for (size_t i = r->n_methods; i > 0; i--)
		if (r->method_ids[i - 1] == id)
			return r->method_names[i - 1];
	return NULL;
}

static void record_free(struct recording *r)
{
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->n_methods; i++)
		free(r->method_names[i]);
	free(r->method_ids);
	free(r->method_names);
	free(r);
}

/* Checks one message against stream.h and remembers what the tests ask about. */
static void take_message(struct recording *r, uint32_t type, const unsigned char *p, uint32_t size)
{
	if (r->messages++ == 0 && type != JBPF_MSG_HELLO && type != JBPF_MSG_ERROR)
		fail_msg("the first message is type %u, not HELLO", type);
	switch (type) {
	case JBPF_MSG_HELLO:
		assert_int_equal(size, sizeof(r->hello));
		assert_int_equal(r->messages, 1);
		memcpy(&r->hello, p, sizeof(r->hello));
		break;
	case JBPF_MSG_METHOD: {
		struct jbpf_msg_method m;

		assert_true(size >= sizeof(m));
		memcpy(&m, p, sizeof(m));
		assert_true(m.name_len <= JBPF_STREAM_MAX_NAME);
		assert_int_equal(size, sizeof(m) + m.name_len);
		assert_true(r->n_methods < MAX_METHODS);
		r->method_ids[r->n_methods] = m.method_id;
		r->method_names[r->n_methods] = strndup((const char *)p + sizeof(m), m.name_len);
		r->n_methods++;
		break;
	}
	case JBPF_MSG_TRACE: {
		struct jbpf_msg_trace t;
		struct trace *out = &r->traces[r->n_traces];

		assert_true(size >= sizeof(t));
		memcpy(&t, p, sizeof(t));
		assert_true(t.frame_count <= JBPF_STREAM_MAX_FRAMES);
		assert_int_equal(size, sizeof(t) + t.frame_count * sizeof(struct jbpf_trace_frame));
		assert_true(t.status <= 0 || (uint32_t)t.status == t.frame_count);
		assert_true(r->n_traces < MAX_TRACES);
		*out = (struct trace){ .seq = t.seq, .tid = t.tid, .status = t.status };
		for (uint32_t i = 0; i < t.frame_count; i++) {
			struct jbpf_trace_frame f;
			const char *name;

			memcpy(&f, p + sizeof(t) + i * sizeof(f), sizeof(f));
			name = method_name(r, f.method_id);
			if (!name)
				r->unnamed_uses++;
			else if (!strcmp(name, "StubProbe.spin"))
				out->has_spin = true;
			if (i == 0)
				snprintf(out->top, sizeof(out->top), "%s", name ? name : "?");
		}
		r->n_traces++;
		break;
	}
	case JBPF_MSG_THREAD: {
		struct jbpf_msg_thread t;

		assert_true(size >= sizeof(t));
		memcpy(&t, p, sizeof(t));
		assert_int_equal(size, sizeof(t) + t.name_len);
		if ((pid_t)t.tid == r->spin_tid && t.name_len == 8 && !memcmp(p + sizeof(t), "StubSpin", 8))
			r->spin_thread = true;
		assert_true(t.tid > 0);
		assert_true(r->n_threads < MAX_THREADS);
		r->threads[r->n_threads].tid = t.tid;
		snprintf(r->threads[r->n_threads].name, sizeof(r->threads[0].name), "%.*s",
			 (int)(t.name_len < 63 ? t.name_len : 63), (const char *)p + sizeof(t));
		r->n_threads++;
		break;
	}
	case JBPF_MSG_THREAD_STACK: {
		struct jbpf_msg_thread_stack t;
		struct stack *out = &r->stacks[r->n_stacks];

		assert_true(size >= sizeof(t));
		memcpy(&t, p, sizeof(t));
		assert_true(t.tid > 0);
		assert_true(t.frame_count <= JBPF_STREAM_MAX_FRAMES);
		assert_int_equal(size, sizeof(t) + t.frame_count * sizeof(struct jbpf_trace_frame));
		assert_int_equal(t.flags & ~JBPF_TRACE_TRUNCATED, 0);
		assert_true(r->n_stacks < MAX_STACKS);
		*out = (struct stack){ .tid = t.tid, .state = t.jvmti_state, .frame_count = t.frame_count,
				       .flags = t.flags, .message = r->messages, .doze_bci = -100 };
		for (uint32_t i = 0; i < t.frame_count; i++) {
			struct jbpf_trace_frame f;
			const char *name;

			memcpy(&f, p + sizeof(t) + i * sizeof(f), sizeof(f));
			name = method_name(r, f.method_id);
			if (!name) {
				r->unnamed_uses++;
				continue;
			}
			if (!strcmp(name, "StubProbe.doze")) {
				out->has_doze = true;
				out->doze_bci = f.bci;
			}
			out->has_spin |= !strcmp(name, "StubProbe.spin");
			out->has_sleep |= !strncmp(name, "java.lang.Thread.sleep", 22);
			if (i == 0) {
				snprintf(out->top, sizeof(out->top), "%s", name);
				out->top_bci = f.bci;
			}
		}
		r->n_stacks++;
		break;
	}
	case JBPF_MSG_CODE_LOAD: {
		struct jbpf_msg_code_load c;
		const char *name;

		assert_true(size >= sizeof(c));
		memcpy(&c, p, sizeof(c));
		assert_true(c.name_len <= JBPF_STREAM_MAX_NAME);
		assert_int_equal(size, sizeof(c) + c.name_len);
		assert_true(c.kind == JBPF_CODE_NMETHOD || c.kind == JBPF_CODE_STUB);
		if (c.kind == JBPF_CODE_STUB) {
			if (c.name_len == 11 && !memcmp(p + sizeof(c), "Interpreter", 11))
				r->interpreter = true;
			break;
		}
		name = method_name(r, c.method_id);
		if (!name)
			r->unnamed_uses++;
		else if (!strcmp(name, "StubProbe.spin"))
			r->spin_nmethod = true;
		break;
	}
	case JBPF_MSG_CODE_UNLOAD:
		assert_int_equal(size, sizeof(struct jbpf_msg_code_unload));
		break;
	case JBPF_MSG_STATS:
		assert_int_equal(size, sizeof(r->stats));
		memcpy(&r->stats, p, sizeof(r->stats));
		break;
	case JBPF_MSG_ERROR: {
		struct jbpf_msg_error e;

		assert_true(size >= sizeof(e));
		memcpy(&e, p, sizeof(e));
		assert_true(e.len <= JBPF_STREAM_MAX_NAME);
		assert_int_equal(size, sizeof(e) + e.len);
		memcpy(r->error, p + sizeof(e), e.len);
		r->error[e.len] = '\0';
		break;
	}
	case JBPF_MSG_FLUSHED:
		assert_int_equal(size, 0);
		r->flushed++;
		r->flushed_at = r->messages;
		break;
	default:
		fail_msg("message of unknown type %u", type);
	}
}

/* Reads and takes one message. 0, or -1 at EOF or at the deadline. */
static int read_message(struct recording *r, int64_t deadline)
{
	for (;;) {
		struct jbpf_msg_header h;

		if (r->len >= sizeof(h)) {
			memcpy(&h, r->buf, sizeof(h));
			assert_true(h.size <= JBPF_STREAM_MAX_PAYLOAD);
			if (r->len >= sizeof(h) + h.size) {
				take_message(r, h.type, r->buf + sizeof(h), h.size);
				r->len -= sizeof(h) + h.size;
				memmove(r->buf, r->buf + sizeof(h) + h.size, r->len);
				return 0;
			}
		}
		{
			struct pollfd p = { .fd = r->fd, .events = POLLIN };
			int64_t left = deadline - now_ms();
			ssize_t n;

			if (left <= 0 || poll(&p, 1, (int)left) != 1)
				return -1;
			n = read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len);
			if (n <= 0)
				return -1;
			r->len += (size_t)n;
		}
	}
}

/* Accepts the agent's connection and reads its first message. */
static struct recording *open_recording(int listen_fd, pid_t spin_tid)
{
	struct recording *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->method_ids = calloc(MAX_METHODS, sizeof(*r->method_ids));
	r->method_names = calloc(MAX_METHODS, sizeof(*r->method_names));
	assert_non_null(r->method_ids);
	assert_non_null(r->method_names);
	r->spin_tid = spin_tid;
	r->fd = accept_agent(listen_fd, 10);
	assert_true(r->fd >= 0);
	if (read_message(r, now_ms() + 10000))
		fail_msg("no first message from the agent within 10 s");
	return r;
}

static void assert_hello(const struct recording *r, pid_t pid)
{
	assert_int_equal(r->hello.version, JBPF_STREAM_VERSION);
	assert_int_equal(r->hello.pid, (uint32_t)pid);
	assert_int_equal(r->hello.max_frames, JBPF_STREAM_MAX_FRAMES);
	assert_in_range(r->hello.signo, (unsigned)SIGRTMIN + 4, (unsigned)SIGRTMAX - 4);
	assert_true(r->hello.vm_version[0] != '\0');
}

/* Whether traces hold every seq in [first, first + n). */
static bool has_seqs(const struct recording *r, uint64_t first, unsigned int n)
{
	for (uint64_t seq = first; seq < first + n; seq++) {
		bool found = false;

		for (size_t i = 0; i < r->n_traces && !found; i++)
			found = r->traces[i].seq == seq;
		if (!found)
			return false;
	}
	return true;
}

struct expect {
	uint64_t first_seq;
	unsigned int n;           /* seqs first_seq... */
	uint64_t foreign;         /* STATS.foreign */
	bool nmethod;             /* wait for StubProbe.spin's compiled code too */
};

static bool flushed_enough(const struct recording *r, const struct expect *e)
{
	return has_seqs(r, e->first_seq, e->n) && r->stats.foreign >= e->foreign && (!e->nmethod || r->spin_nmethod);
}

/*
 * Sends FLUSH and reads to FLUSHED, again until what e expects has come or
 * timeout_s passes: a signal is handled when its thread runs next, which
 * can be after the agent answered a flush.
 */
static void flush_until(struct recording *r, const struct expect *e, int timeout_s)
{
	int64_t deadline = now_ms() + timeout_s * 1000;

	do {
		size_t flushed = r->flushed;

		assert_int_equal(write(r->fd, (char[]){ JBPF_REQ_FLUSH }, 1), 1);
		while (r->flushed == flushed)
			if (read_message(r, deadline))
				fail_msg("no FLUSHED within %d s (the agent closed the stream or stalled)", timeout_s);
	} while (!flushed_enough(r, e) && now_ms() < deadline);
	if (!flushed_enough(r, e))
		fail_msg("after %d s of flushes: %zu traces, foreign %llu, spin nmethod %d", timeout_s, r->n_traces,
			 (unsigned long long)r->stats.foreign, r->spin_nmethod);
}

/*
 * Signals the spinning thread n times with seqs from first_seq (and once
 * with tgkill, which must count as foreign), flushes, and checks the
 * traces: exactly those seqs, on that thread, their methods named before
 * use, and StubProbe.spin in most of them.
 *
 * Each signal goes out once the previous one's trace is back. Signals
 * queued together are all handled at the same instant, when the thread
 * next returns to user mode, and one unlucky instant (a deoptimisation
 * while the JIT replaces the loop: status -9) would spoil all of them.
 */
static void signal_and_check(struct recording *r, pid_t pid, uint64_t first_seq, unsigned int n)
{
	size_t with_spin = 0;

	/* Sample the loop once the JIT has compiled it, not while it is being replaced. */
	flush_until(r, &(struct expect){ .nmethod = true }, 20);
	for (unsigned int i = 0; i < n; i++) {
		queue_signal(pid, r->spin_tid, (int)r->hello.signo, first_seq + i);
		flush_until(r, &(struct expect){ .first_seq = first_seq, .n = i + 1 }, 20);
	}
	foreign_signal(pid, r->spin_tid, (int)r->hello.signo);
	flush_until(r, &(struct expect){ .first_seq = first_seq, .n = n, .foreign = 1, .nmethod = true }, 20);

	assert_int_equal(r->n_traces, n);
	assert_true(has_seqs(r, first_seq, n));
	for (size_t i = 0; i < r->n_traces; i++) {
		assert_int_equal(r->traces[i].tid, (uint32_t)r->spin_tid);
		with_spin += r->traces[i].has_spin;
	}
	assert_int_equal(r->unnamed_uses, 0);
	fprintf(stderr, "  %zu/%u traces in StubProbe.spin; %zu methods named; stats: %llu signals, %llu traces, "
			"%llu foreign\n",
		with_spin, n, r->n_methods, (unsigned long long)r->stats.signals, (unsigned long long)r->stats.traces,
		(unsigned long long)r->stats.foreign);
	/* AsyncGetCallTrace may rarely find a thread not walkable; a spinning loop nearly never is. */
	for (size_t i = 0; with_spin * 2 <= n && i < r->n_traces; i++)
		fprintf(stderr, "  trace seq %#llx: status %d, innermost %s\n", (unsigned long long)r->traces[i].seq,
			r->traces[i].status, r->traces[i].top);
	assert_true(with_spin * 2 > n);
	assert_true(r->interpreter);
	assert_true(r->spin_nmethod);
	assert_int_equal(r->stats.signals, n + 1);
	assert_int_equal(r->stats.traces, n);
	assert_int_equal(r->stats.foreign, 1);
	assert_int_equal(r->stats.ring_full, 0);
	assert_int_equal(r->stats.events_lost, 0);
}

/* ---------------------------------------------------------------- scenarios */

/*
 * -agentpath with socket=: the agent records from VMInit. Threads started
 * afterwards are named with their tids. A signal on a JVM thread that runs
 * no Java (the VM Thread) gives a trace that says so. The JVM exits
 * normally while the recording is live, and the stream ends.
 */
static void startup_recording_takes_traces(void **state)
{
	const struct jdk *jdk = *state;
	char *dir, *path, options[256];
	struct recording *r;
	struct child jvm;
	pid_t tid, vm_thread;
	int lfd;

	require_jvm(jdk);
	lfd = listen_at(&dir, &path);
	snprintf(options, sizeof(options), "socket=%s,sigqueue,nmethods", path);
	start_probe(&jvm, jdk, options, &tid);
	r = open_recording(lfd, tid);
	assert_hello(r, jvm.pid);
	signal_and_check(r, jvm.pid, 0x5eed000000000001ull, 8);
	assert_true(r->spin_thread);

	vm_thread = thread_named(jvm.pid, "VM Thread");
	assert_true(vm_thread > 0);
	queue_signal(jvm.pid, vm_thread, (int)r->hello.signo, 0x5eed000000000099ull);
	flush_until(r, &(struct expect){ .first_seq = 0x5eed000000000099ull, .n = 1, .foreign = 1 }, 20);
	assert_int_equal(r->n_traces, 9);
	assert_int_equal(r->traces[8].seq, 0x5eed000000000099ull);
	assert_int_equal(r->traces[8].tid, (uint32_t)vm_thread);
	assert_int_equal(r->traces[8].status, JBPF_TRACE_NOT_JAVA_THREAD);

	assert_still_runs(&jvm);
	stop_probe(&jvm);
	/* The stream ends at the exit: EOF, not a timeout. */
	while (!read_message(r, now_ms() + 10000))
		;
	assert_int_equal(poll(&(struct pollfd){ .fd = r->fd, .events = POLLIN }, 1, 0), 1);
	assert_int_equal(read(r->fd, (char[1]){ 0 }, 1), 0);
	record_free(r);
	unlisten(lfd, dir, path);
}

/*
 * The profiler goes away (its socket closes, as when it is SIGKILLed): the
 * JVM runs on and a signal after that does not kill it. A new recording
 * then attaches and works, nothing of the old one leaking into it, and a
 * second profiler attaching meanwhile is refused with an ERROR.
 */
static void jvm_outlives_profiler_and_reattaches(void **state)
{
	const struct jdk *jdk = *state;
	char *dir[3], *path[3], options[256];
	struct recording *r, *refused;
	struct child jvm;
	int lfd[3], rc;
	uint32_t signo;
	pid_t tid;

	require_jvm(jdk);
	for (int i = 0; i < 3; i++)
		lfd[i] = listen_at(&dir[i], &path[i]);
	snprintf(options, sizeof(options), "socket=%s,sigqueue,nmethods", path[0]);
	start_probe(&jvm, jdk, options, &tid);
	r = open_recording(lfd[0], tid);
	assert_hello(r, jvm.pid);
	signo = r->hello.signo;
	record_free(r);

	/* Sent right after the close, with the recording ending or ended: ignored or discarded. */
	for (unsigned int i = 0; i < 4; i++)
		queue_signal(jvm.pid, tid, (int)signo, 0xdead0000 + i);
	foreign_signal(jvm.pid, tid, (int)signo);
	assert_still_runs(&jvm);
	/* And once the agent has certainly seen the close (two ticks later). */
	queue_signal(jvm.pid, tid, (int)signo, 0xdead0010);
	assert_still_runs(&jvm);

	snprintf(options, sizeof(options), "socket=%s,sigqueue,nmethods", path[1]);
	rc = load_agent(jvm.pid, options, 20);
	assert_int_equal(rc, 0);
	r = open_recording(lfd[1], tid);
	assert_hello(r, jvm.pid);
	assert_int_equal(r->hello.signo, signo);
	signal_and_check(r, jvm.pid, 0x5eed000000000100ull, 8);

	/* A second profiler while this one records. */
	snprintf(options, sizeof(options), "socket=%s,sigqueue,nmethods", path[2]);
	rc = load_agent(jvm.pid, options, 20);
	assert_int_equal(rc, 4);
	refused = open_recording(lfd[2], tid);
	assert_non_null(strstr(refused->error, "another jbpfprof session"));
	assert_int_equal(refused->messages, 1);
	record_free(refused);

	/* The live recording is untouched by the refusal. */
	queue_signal(jvm.pid, tid, (int)signo, 0x5eed000000000200ull);
	flush_until(r, &(struct expect){ .first_seq = 0x5eed000000000200ull, .n = 1, .foreign = 1 }, 20);
	assert_int_equal(r->n_traces, 9);
	record_free(r);
	assert_still_runs(&jvm);
	stop_probe(&jvm);
	for (int i = 0; i < 3; i++)
		unlisten(lfd[i], dir[i], path[i]);
}

/*
 * A JVM started without the agent: the first attach initialises it,
 * replays the code already generated and compiled, and records. An attach
 * with a wrong option is refused with the reason.
 */
static void attach_to_running_jvm(void **state)
{
	const struct jdk *jdk = *state;
	char *dir[2], *path[2], options[256];
	struct recording *r, *refused;
	struct child jvm;
	pid_t tid;
	int lfd[2];

	require_jvm(jdk);
	for (int i = 0; i < 2; i++)
		lfd[i] = listen_at(&dir[i], &path[i]);
	start_probe(&jvm, jdk, NULL, &tid);
	/* Let the spinning loop be compiled first, so its code is replayed rather than seen live. */
	assert_still_runs(&jvm);
	snprintf(options, sizeof(options), "sigqueue,nmethods,socket=%s", path[0]);
	assert_int_equal(load_agent(jvm.pid, options, 20), 0);
	r = open_recording(lfd[0], tid);
	assert_hello(r, jvm.pid);
	signal_and_check(r, jvm.pid, 0x5eed000000000301ull, 8);
	record_free(r);

	snprintf(options, sizeof(options), "socket=%s,bogus", path[1]);
	assert_int_equal(load_agent(jvm.pid, options, 20), 2);
	refused = open_recording(lfd[1], tid);
	assert_non_null(strstr(refused->error, "unknown option \"bogus\""));
	record_free(refused);
	assert_still_runs(&jvm);
	stop_probe(&jvm);
	for (int i = 0; i < 2; i++)
		unlisten(lfd[i], dir[i], path[i]);
}

/* The last THREAD's tid for name, 0 if none. */
static uint32_t tid_named(const struct recording *r, const char *name)
{
	for (size_t i = r->n_threads; i > 0; i--)
		if (!strcmp(r->threads[i - 1].name, name))
			return r->threads[i - 1].tid;
	return 0;
}

/* The last THREAD_STACK of tid, NULL if none. */
static const struct stack *stack_of(const struct recording *r, uint32_t tid)
{
	for (size_t i = r->n_stacks; i > 0; i--)
		if (r->stacks[i - 1].tid == tid)
			return &r->stacks[i - 1];
	return NULL;
}

/* /proc/<pid>/task/<tid>/comm into comm, newline removed; -1 if tid is no thread of pid. */
static int task_comm(pid_t pid, uint32_t tid, char *comm, size_t size)
{
	char path[96];
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)pid, tid);
	f = fopen(path, "r");
	if (f && fgets(comm, (int)size, f)) {
		comm[strcspn(comm, "\n")] = '\0';
		ret = 0;
	}
	if (f)
		fclose(f);
	return ret;
}

/* Sends requests (one write), then reads to the FLUSHED that answers its 'F'. */
static void request_and_flush(struct recording *r, const char *requests, int timeout_s)
{
	size_t flushed = r->flushed;
	int64_t deadline = now_ms() + timeout_s * 1000;

	assert_int_equal(write(r->fd, requests, strlen(requests)), (ssize_t)strlen(requests));
	while (r->flushed == flushed)
		if (read_message(r, deadline))
			fail_msg("no FLUSHED within %d s after \"%s\"", timeout_s, requests);
}

/* The stacks of one 'W', those after the message `from`: StubSleep's, StubSpin's, all on the JVM's threads. */
static void check_stacks(const struct recording *r, pid_t pid, size_t from, pid_t sleep_tid)
{
	const struct stack *sleeper = stack_of(r, (uint32_t)sleep_tid), *spinner = stack_of(r, (uint32_t)r->spin_tid);
	char comm[32];

	for (size_t i = 0; i < r->n_stacks; i++) {
		const struct stack *st = &r->stacks[i];

		if (st->message <= from)
			continue;
		if (task_comm(pid, st->tid, comm, sizeof(comm)))
			fail_msg("THREAD_STACK of tid %u, which is no thread of the JVM", st->tid);
		/* Every one before the FLUSHED that answered the 'F' sent with the 'W'. */
		assert_true(st->message < r->flushed_at);
		assert_true(st->state & JVMTI_THREAD_STATE_ALIVE);
	}
	if (!sleeper || sleeper->message <= from)
		fail_msg("no THREAD_STACK for StubSleep (tid %d)", (int)sleep_tid);
	fprintf(stderr, "  StubSleep: state %#x, %u frames, innermost %s (bci %d), doze at bci %d\n",
		(unsigned)sleeper->state, sleeper->frame_count, sleeper->top, (int)sleeper->top_bci,
		(int)sleeper->doze_bci);
	assert_true(sleeper->has_doze);
	assert_true(sleeper->doze_bci >= 0);
	assert_true(sleeper->has_sleep);
	/* Thread.sleep (JDK 17) or Thread.sleep0 (JDK 25): native, so -3 as AsyncGetCallTrace says. */
	assert_int_equal(strncmp(sleeper->top, "java.lang.Thread.sleep", 22), 0);
	assert_int_equal(sleeper->top_bci, -3);
	assert_true(sleeper->state & JVMTI_THREAD_STATE_SLEEPING);
	assert_int_equal(sleeper->flags, 0);
	assert_non_null(spinner);
	assert_true(spinner->message > from);
	assert_true(spinner->has_spin);
	assert_int_equal(r->unnamed_uses, 0);
}

/*
 * Attached to a running JVM: every thread already running is named with
 * its native tid, read from HotSpot's own tables, not from the thread
 * (StubSpin and StubSleep report theirs; /proc has the rest). On 'W' the
 * agent sends the Java stack of every thread, the one blocked in
 * Thread.sleep under StubProbe.doze included, all before the FLUSHED that
 * answers the 'F' sent right after; a second 'W' does it again, and a
 * flush alone sends none.
 */
static void running_threads_named_and_stacks_on_request(void **state)
{
	const struct jdk *jdk = *state;
	char *dir, *path, options[256], comm[32];
	size_t with_comm = 0, first_round, stacks;
	struct recording *r;
	struct child jvm;
	pid_t spin_tid, sleep_tid;
	int lfd;

	require_jvm(jdk);
	lfd = listen_at(&dir, &path);
	start_probe(&jvm, jdk, NULL, &spin_tid);
	sleep_tid = (pid_t)harness_truth(&jvm, "sleeptid");
	assert_true(sleep_tid > 0);
	snprintf(options, sizeof(options), "socket=%s", path);
	assert_int_equal(load_agent(jvm.pid, options, 20), 0);
	r = open_recording(lfd, spin_tid);
	assert_hello(r, jvm.pid);
	/* They are queued before the agent reads any request. */
	flush_until(r, &(struct expect){ 0 }, 20);
	assert_true(r->spin_thread);
	assert_int_equal(tid_named(r, "StubSleep"), (uint32_t)sleep_tid);
	for (size_t i = 0; i < r->n_threads; i++) {
		if (task_comm(jvm.pid, r->threads[i].tid, comm, sizeof(comm)))
			fail_msg("THREAD \"%s\" names tid %u, which is no thread of the JVM", r->threads[i].name,
				 r->threads[i].tid);
		/* HotSpot sets a thread's comm to its name, cut to 15 bytes; "main" is the launcher's "java". */
		if (!strncmp(comm, r->threads[i].name, 15))
			with_comm++;
		else
			fprintf(stderr, "  THREAD %u \"%s\": comm \"%s\"\n", r->threads[i].tid, r->threads[i].name,
				comm);
	}
	fprintf(stderr, "  %zu THREADs at attach, %zu with their comm\n", r->n_threads, with_comm);
	assert_true(with_comm + 1 >= r->n_threads);
	assert_int_equal(r->n_stacks, 0);

	request_and_flush(r, (char[]){ JBPF_REQ_THREAD_STACKS, JBPF_REQ_FLUSH, 0 }, 20);
	check_stacks(r, jvm.pid, 0, sleep_tid);
	first_round = r->n_stacks;
	fprintf(stderr, "  %zu THREAD_STACKs\n", first_round);
	assert_true(first_round >= 3); /* main, StubSpin, StubSleep at least */

	/* Again, in two writes; then a flush alone brings none. */
	assert_int_equal(write(r->fd, (char[]){ JBPF_REQ_THREAD_STACKS }, 1), 1);
	request_and_flush(r, (char[]){ JBPF_REQ_FLUSH, 0 }, 20);
	check_stacks(r, jvm.pid, r->stacks[first_round - 1].message, sleep_tid);
	stacks = r->n_stacks;
	assert_true(stacks > first_round);
	request_and_flush(r, (char[]){ JBPF_REQ_FLUSH, 0 }, 20);
	assert_int_equal(r->n_stacks, stacks);
	assert_int_equal(r->stats.events_lost, 0);

	record_free(r);
	assert_still_runs(&jvm);
	stop_probe(&jvm);
	unlisten(lfd, dir, path);
}

#define ON_JDK(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&jdk }

int main(void)
{
	/* One group: tests/run-suite.sh reads one cmocka summary per program. */
	const struct CMUnitTest tests[] = {
		ON_JDK(startup_recording_takes_traces, jdk17),
		ON_JDK(jvm_outlives_profiler_and_reattaches, jdk17),
		ON_JDK(attach_to_running_jvm, jdk17),
		ON_JDK(running_threads_named_and_stacks_on_request, jdk17),
		ON_JDK(startup_recording_takes_traces, jdk25),
		ON_JDK(jvm_outlives_profiler_and_reattaches, jdk25),
		ON_JDK(attach_to_running_jvm, jdk25),
		ON_JDK(running_threads_named_and_stacks_on_request, jdk25),
	};

	return cmocka_run_group_tests_name("jvmti agent", tests, NULL, remove_compiled);
}
