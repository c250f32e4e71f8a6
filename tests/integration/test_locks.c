/*
 * -e lock: the time Java threads wait to acquire a contended lock, from
 * the scheduler, each stack ending in the lock's class; with --wakers, the
 * holder's stack as it released the lock. On JDK 17 and JDK 25.
 *
 * tests/workloads/java/Contention.java: a thread enters a monitor (a
 * Contention$Gate) that another holds 20 ms at a time; one takes a
 * ReentrantLock that another holds 20 ms at a time; both holders sleep
 * while they hold, long enough that HotSpot's adaptive spin fails and
 * stops before a monitor's taker parks, on a kernel under emulation too
 * (see Contention.java); an idle pool and a sleeping thread wait for no
 * lock. The takers measure each wait themselves (System.nanoTime around
 * the acquire), for a fixed number of acquisitions that start once the
 * profiler records (a file the workload waits for), so the recording holds
 * all of them.
 *
 * Judged: each lock's time under its takers' method (enterGate, takeLock)
 * and its class (Contention$Gate, java.util.concurrent.locks.ReentrantLock)
 * on 99% of it; its total within 5% of the time the takers measured off
 * their CPU in their acquires (every wait is recorded, so the error is not
 * sampling's; the spin before a thread parks is on its CPU, and the
 * takers measured their CPU time); the holder's releasing method
 * (holdGate, holdLock) after [woken by] on 90% of it; no lock time at all
 * for the idle pool and the sleeper. On JDK 17 a thread that contends
 * alone for a monitor is its "responsible" thread, which parks with a
 * timeout and looks again: a third of its waits end by its own timer, and
 * -e lock joins them with the release that ends the acquire (the
 * aggregator's defer_wait), so the holder is the waker there too.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

#define ROUNDS "100"
#define HOLD_MS "20"

struct lock_time {
	uint64_t total, under_method, right_class, by_holder, by_timer;
};

/* The lock time of the threads whose names start with thread (with --threads: "[name tid=N]"). */
static struct lock_time lock_time_of(const struct collapsed *c, const char *thread, const char *method,
				     const char *class, const char *holder)
{
	struct lock_time t = { 0 };
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "[%s", thread);
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int state = -1;

		if (strncmp(c->stacks[i], prefix, strlen(prefix)))
			continue;
		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n && state < 0; k++)
			if (!strcmp(fr.f[k], "[sleeping]") || !strcmp(fr.f[k], "[runnable]") || !strcmp(fr.f[k], "[blocked]"))
				state = k;
		t.total += c->counts[i];
		if (state > 0 && find_frame(&fr, 0, method) >= 0 && find_frame(&fr, 0, method) < state)
			t.under_method += c->counts[i];
		if (state > 0 && !strcmp(fr.f[state - 1], class))
			t.right_class += c->counts[i];
		if (state > 0 && find_frame(&fr, state, holder) > state)
			t.by_holder += c->counts[i];
		else if (state > 0 && find_frame(&fr, state, "[timed out]") > state)
			t.by_timer += c->counts[i];
		free(fr.buf);
	}
	return t;
}

/*
 * waited_ns, cpu_ns: what the takers measured of their acquires, their
 * whole length and the CPU time they used in them; the difference is the
 * time off CPU that -e lock records. holder_share: of the lock time, what
 * its holder's release must have ended.
 */
static void check_lock(const char *what, struct lock_time t, long long waited_ns, long long cpu_ns, double holder_share)
{
	long long truth_ns = waited_ns - cpu_ns;
	double truth_us = (double)truth_ns / 1000;

	fprintf(stderr, "  %s: the takers waited %.3f s, %.3f s of it on their CPU\n", what, (double)waited_ns / 1e9,
		(double)cpu_ns / 1e9);
	fprintf(stderr,
		"  %s: %.3f s of lock time, %.3f s off CPU by the takers (%+.1f%%); %.1f%% under the method, %.1f%% "
		"of the class, %.1f%% woken by the holder, %.1f%% by its timer\n",
		what, (double)t.total / 1e6, truth_us / 1e6, 100 * ((double)t.total - truth_us) / truth_us,
		t.total ? 100.0 * (double)t.under_method / (double)t.total : 0,
		t.total ? 100.0 * (double)t.right_class / (double)t.total : 0,
		t.total ? 100.0 * (double)t.by_holder / (double)t.total : 0,
		t.total ? 100.0 * (double)t.by_timer / (double)t.total : 0);
	assert_true(waited_ns > 0 && cpu_ns >= 0 && truth_ns > 0 && t.total > 0);
	assert_true((double)t.total >= 0.95 * truth_us && (double)t.total <= 1.05 * truth_us);
	assert_true(t.under_method >= 0.99 * (double)t.total);
	assert_true(t.right_class >= 0.99 * (double)t.total);
	assert_true(t.by_holder >= holder_share * (double)t.total);
}

static void contention(const struct jdk *jdk)
{
	char *dir, *collapsed, *go, pid[16];
	struct child profiler;
	struct collapsed c;
	struct lock_time idle;
	struct jvm jvm;
	FILE *f;

	jvm_require(jdk, "Contention");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "lock.collapsed");
	go = harness_path(dir, "go");
	jvm_start(&jvm, jdk, "Contention", (char *[]){ "-g", go, "-r", ROUNDS, "-h", HOLD_MS, NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "lock", "--wakers", "--threads",
								       "-f", collapsed, NULL }),
			 0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
	if (harness_wait_for(&jvm.out, "done\n", 300))
		fail_msg("Contention did not finish its rounds: %s", jvm.out.buf);
	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	fprintf(stderr, "  %s:\n", jdk->name);
	check_lock("monitor", lock_time_of(&c, "gate-taker", "Contention.enterGate", "Contention$Gate", "Contention.holdGate"),
		   harness_truth(&jvm.out, "gate_waited_ns"), harness_truth(&jvm.out, "gate_cpu_ns"), 0.9);
	check_lock("ReentrantLock",
		   lock_time_of(&c, "lock-taker", "Contention.takeLock", "java.util.concurrent.locks.ReentrantLock",
				"Contention.holdLock"),
		   harness_truth(&jvm.out, "lock_waited_ns"), harness_truth(&jvm.out, "lock_cpu_ns"), 0.9);
	idle = lock_time_of(&c, "pool-", "", "", "");
	assert_int_equal(idle.total, 0);
	idle = lock_time_of(&c, "sleeper", "", "", "");
	assert_int_equal(idle.total, 0);
	jvm_stop(&jvm);
	collapsed_free(&c);
	unlink(go);
	free(go);
	harness_output_free(NULL, collapsed, dir);
}

/*
 * Without bpf_loop (forced: JBPFPROF_FORCE_FALLBACK=bpf-loop) -e lock has
 * no way to tell a lock's waits, which it reads from BPF's Java walk: it
 * is refused in one line that names what it needs, and alone the profiler
 * exits with an error rather than record nothing; with -e nativemem
 * beside it, the recording goes on without it. No JVM is needed: the
 * refusal comes before any process is looked at.
 */
static void refused_without_bpf_loop(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *pprof, *html, pid[16];
	struct child w, alone, beside;
	int alone_status, beside_status;

	(void)state;
	harness_require_root();
	pprof = harness_path(dir, "beside.pb.gz");
	html = harness_path(dir, "alone.html");
	assert_int_equal(harness_start_workload(&w, (char *[]){ workload, NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	setenv("JBPFPROF_FORCE_FALLBACK", "bpf-loop", 1);
	alone_status = harness_run_profiler(&alone, (char *[]){ "-p", pid, "-e", "lock", "-d", "1", "-f", html, NULL }, 30);
	beside_status = harness_run_profiler(&beside, (char *[]){ "-p", pid, "-e", "lock,nativemem", "-d", "1", "-o", "pprof", "-f", pprof,
						  NULL },
			     60);
	unsetenv("JBPFPROF_FORCE_FALLBACK");
	harness_stop_workload(&w);
	fprintf(stderr, "  -e lock alone:\n%s  -e lock,nativemem:\n%s", alone.buf, beside.buf);
	assert_int_equal(alone_status, 1);
	assert_int_equal(beside_status, 0);
	assert_non_null(strstr(alone.buf, "jbpfprof: unavailable: -e lock: it needs Java frames walked by BPF, and that "
					  "needs bpf_loop (Linux 5.17)\n"));
	assert_null(strstr(alone.buf, "sampling"));
	assert_null(strstr(alone.buf, "permitted"));
	assert_non_null(strstr(beside.buf, "jbpfprof: unavailable: -e lock: "));
	assert_non_null(strstr(beside.buf, "sampling the native allocations"));
	assert_int_equal(access(pprof, F_OK), 0);
	assert_int_not_equal(access(html, F_OK), 0);
	free(workload);
	free(html);
	harness_output_free(NULL, pprof, dir);
}

static void contention_jdk17(void **state)
{
	(void)state;
	contention(&jdk17);
}

static void contention_jdk25(void **state)
{
	(void)state;
	contention(&jdk25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(refused_without_bpf_loop),
		HARNESS_TEST(contention_jdk17),
		HARNESS_TEST(contention_jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("-e lock: contended locks, their classes and holders", tests, NULL, NULL);
}
