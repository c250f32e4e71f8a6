/*
 * stub_harness: StubProbe JVMs and the agent's stream, read and checked
 * (contract in stub_harness.h).
 */
#include "stub_harness.h"

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

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void require_jvm(const struct jdk *jdk)
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

int remove_compiled(void **state)
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

int listen_at(char **dir, char **path)
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

void unlisten(int fd, char *dir, char *path)
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

void start_probe(struct child *jvm, const struct jdk *jdk, const char *agent_options, pid_t *spin_tid)
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

pid_t thread_named(pid_t pid, const char *name)
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

void assert_still_runs(struct child *jvm)
{
	char want[32];
	int status;

	snprintf(want, sizeof(want), "tick %ld\n", last_tick(jvm) + 2);
	if (harness_wait_for(jvm, want, 5))
		fail_msg("the JVM stopped printing ticks (waited for \"%s\")", "tick N+2");
	assert_int_equal(waitpid(jvm->pid, &status, WNOHANG), 0);
}

void stop_probe(struct child *jvm)
{
	assert_int_equal(harness_stop_workload(jvm), 128 + SIGTERM);
}

void queue_signal(pid_t pid, pid_t tid, int signo, uint64_t value)
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

void foreign_signal(pid_t pid, pid_t tid, int signo)
{
	assert_int_equal(syscall(SYS_tgkill, pid, tid, signo), 0);
}

int load_agent(pid_t pid, const char *options, int timeout_s)
{
	static const char returned[] = "Agent_OnAttach returned ";
	struct jvm_target target;
	char err[1024] = "";
	const char *rc;
	int ret;

	if (attach__target_open(pid, &target, err, sizeof(err)))
		fail_msg("cannot attach to JVM pid %d: %s", (int)pid, err);
	ret = attach__load_agent(&target, agent_path, options, timeout_s * 1000, err, sizeof(err));
	attach__target_close(&target);
	if (!ret)
		return 0;
	rc = strstr(err, returned);
	if (!rc)
		fail_msg("the agent was not loaded into JVM pid %d: %s", (int)pid, err);
	return atoi(rc + strlen(returned));
}

static const char *method_name(const struct recording *r, uint64_t id)
{
	for (size_t i = r->n_methods; i > 0; i--)
		if (r->method_ids[i - 1] == id)
			return r->method_names[i - 1];
	return NULL;
}

void record_free(struct recording *r)
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

int read_message(struct recording *r, int64_t deadline)
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

struct recording *open_recording(int listen_fd, pid_t spin_tid)
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

void assert_hello(const struct recording *r, pid_t pid)
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

static bool flushed_enough(const struct recording *r, const struct expect *e)
{
	return has_seqs(r, e->first_seq, e->n) && r->stats.foreign >= e->foreign && (!e->nmethod || r->spin_nmethod);
}

void flush_until(struct recording *r, const struct expect *e, int timeout_s)
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

void signal_and_check(struct recording *r, pid_t pid, uint64_t first_seq, unsigned int n)
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
