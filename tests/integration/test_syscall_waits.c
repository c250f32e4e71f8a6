/*
 * A profiling signal never interrupts a system call: JVM threads blocked in
 * nanosleep() and in read() on a pipe, sampled at 1 kHz with Java stacks,
 * see no EINTR and no sleep that ends early. The workload is
 * tests/workloads/java/SyscallWaits.java with its native half
 * (tests/workloads/jni/syscallwaits.c, $WORKLOAD_DIR/libsyscallwaits.so),
 * which counts, around each call, what only native code can see: -1/EINTR,
 * and a nanosleep that returned 0 before its time. Its reader takes
 * SA_RESTART off the agent's handler, so that a read interrupted by our
 * signal says so instead of being restarted unseen.
 *
 * Each call is short (200 us), so samples land inside system calls often:
 * their Java stack signal is owed to the thread until it leaves the call
 * (bpf/deferral.bpf.h). The profiler's -v line "N Java signals deferred"
 * shows it happened; a signal sent at the sample instead would cut the
 * call short and the counts would show it.
 *
 * Both ways of paying the debt are tested on this kernel, chosen with
 * JBPFPROF_DEFER: BPF task work, and the system call exit program (the
 * fallback for kernels before 6.18); each on JDK 17 and JDK 25, and each
 * once under -e wall, where the waits themselves owe Java stacks and the
 * switch-in checks (bpf/deferral.bpf.h) ride on the same returns. The
 * JVM's heartbeat must keep coming throughout.
 */
#include "harness.h"
#include "jvm.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_S "4"
#define STALL_BOUND_MS 2000
#define AFTER_MS 500
/* Calls of 200 us for 4 s: tens of thousands each; a tenth of that shows they ran throughout. */
#define LEAST_CALLS 2000
/*
 * Samples in a system call whose signal was deferred: none would mean the
 * test proved nothing. The CPU modes see 17 to 28 in 4 s on a 2-CPU machine
 * (the threads mostly sleep), so 20 failed now and then; 10 still shows
 * signals deferred throughout.
 */
#define LEAST_DEFERRED 10

struct mode {
	const struct jdk *jdk;
	const char *defer; /* JBPFPROF_DEFER */
	bool wall;         /* -e wall: waits owe their Java stacks too */
};

/* "N Java signals deferred" from the profiler's -v output, or -1. */
static long long signals_deferred(const struct child *profiler)
{
	const char *at = strstr(profiler->buf, " Java signals deferred");
	const char *start;

	if (!at)
		return -1;
	for (start = at; start > profiler->buf && start[-1] >= '0' && start[-1] <= '9'; start--)
		;
	return start < at ? atoll(start) : -1;
}

static void syscalls_not_cut_short(void **state)
{
	const struct mode *mode = *state;
	char *built, *lib, *file;
	unsigned long long joined, on_jvm;
	struct heartbeats hb;
	struct child profiler;
	struct jvm jvm;
	long long deferred;
	int status;

	jvm_require(mode->jdk, "SyscallWaits");
	built = harness_workload("libsyscallwaits.so");
	/* The JVM runs in a directory of its own, and System.load wants an absolute path. */
	lib = realpath(built, NULL);
	if (!lib)
		fail_msg("%s is not built (make all)", built);
	free(built);
	jvm_start(&jvm, mode->jdk, "SyscallWaits", (char *[]){ lib, NULL });
	file = harness_path(jvm.dir, "waits.collapsed");
	setenv("JBPFPROF_DEFER", mode->defer, 1);
	status = jvm_record_watched(&jvm, &profiler, file,
				    /* The agent's deferred signals are what is tested: Java stacks from the agent. */
				    mode->wall ? (char *[]){ "-F", "1000", "-e", "wall", "--wait-interval", "1ms",
							   "-d", RECORD_S, "-v", "--java-stacks", "agent", NULL }
					       : (char *[]){ "-F", "1000", "-d", RECORD_S, "-v", "--java-stacks", "agent",
							     NULL },
				    60, STALL_BOUND_MS, AFTER_MS, &hb);
	unsetenv("JBPFPROF_DEFER");
	if (hb.stalled) {
		jvm_kill(&jvm);
		fail_msg("%s: the JVM stopped beating after %ld beats", mode->jdk->name, hb.beats);
	}
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
	assert_int_equal(status, 0);
	jvm_assert_agent_loaded(&profiler);
	jvm_stop(&jvm);
	assert_int_equal(jvm_java_summary(&profiler, &joined, &on_jvm), 0);
	deferred = signals_deferred(&profiler);
	fprintf(stderr, "  %s, %s%s: %ld beats (longest gap %lld ms), %llu of %llu JVM samples joined, %lld deferred\n",
		mode->jdk->name, mode->defer, mode->wall ? ", -e wall" : "", hb.beats, (long long)hb.longest_ms, joined, on_jvm, deferred);
	jvm_assert_did(&jvm, "the JVM did",
		       (const struct jvm_minimum[]){ { "sleeps", LEAST_CALLS },
						     { "reads", LEAST_CALLS },
						     { "writes", LEAST_CALLS },
						     { "handlers_unrestarted", 1 },
						     { NULL, 0 } });
	fprintf(stderr, "  cut short: sleep_eintr %lld, short_sleeps %lld, read_eintr %lld\n",
		harness_truth(&jvm.out, "sleep_eintr"), harness_truth(&jvm.out, "short_sleeps"),
		harness_truth(&jvm.out, "read_eintr"));
	/* What no profiler may cause. */
	assert_int_equal(harness_truth(&jvm.out, "sleep_eintr"), 0);
	assert_int_equal(harness_truth(&jvm.out, "short_sleeps"), 0);
	assert_int_equal(harness_truth(&jvm.out, "read_eintr"), 0);
	/* And the case was there: samples in system calls, joined to their Java stacks. */
	assert_true(joined > 0);
	assert_true(deferred >= LEAST_DEFERRED);
	unlink(file);
	free(file);
	free(lib);
}

static const struct mode jdk17_task_work = { &jdk17, "task-work", false }, jdk25_task_work = { &jdk25, "task-work", false },
			 jdk17_syscall_exit = { &jdk17, "syscall-exit", false },
			 jdk25_syscall_exit = { &jdk25, "syscall-exit", false },
			 jdk17_wall_syscall_exit = { &jdk17, "syscall-exit", true },
			 jdk25_wall_task_work = { &jdk25, "task-work", true };

#define MODE_TEST(f, m) { #f " (" #m ")", f, NULL, NULL, (void *)&m }

int main(void)
{
	const struct CMUnitTest tests[] = {
		MODE_TEST(syscalls_not_cut_short, jdk17_task_work),
		MODE_TEST(syscalls_not_cut_short, jdk25_task_work),
		MODE_TEST(syscalls_not_cut_short, jdk17_syscall_exit),
		MODE_TEST(syscalls_not_cut_short, jdk25_syscall_exit),
		MODE_TEST(syscalls_not_cut_short, jdk17_wall_syscall_exit),
		MODE_TEST(syscalls_not_cut_short, jdk25_wall_task_work),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("syscall_waits", tests, NULL, NULL);
}
