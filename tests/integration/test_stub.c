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
 * The agent's JVM-free parts (the option parser, the ring, the method set
 * and the outbox) have their own unit tests, tests/unit/test_agent_*.c,
 * and the names it gives frames tests/unit/test_classname.c. The JVMs and
 * the stream's reader are tests/integration/stub_harness.c.
 */
#include "harness.h"
#include "stub_harness.h"
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
