/*
 * -e lock: the time Java threads wait to acquire a contended lock, from
 * the scheduler, each stack ending in the lock's class; with --wakers, the
 * holder's stack as it released the lock. On JDK 17 and JDK 25.
 *
 * tests/workloads/java/Contention.java: a thread enters a monitor (a
 * Contention$Gate) that another holds 50 ms at a time; one takes a
 * ReentrantLock that another holds 50 ms at a time; both holders sleep
 * while they hold, long enough that HotSpot's adaptive spin fails and
 * stops before a monitor's taker parks, on a kernel under emulation too
 * (see Contention.java); an idle pool and a sleeping thread wait for no
 * lock. The takers measure each wait themselves (System.nanoTime around
 * the acquire), for a fixed number of acquisitions that start once the
 * profiler records (a file the workload waits for), so the recording holds
 * all of them.
 *
 * Judged: each lock's time under its takers' method (enterGate, takeLock)
 * on 99% of it; its time asleep within 5% of the time the takers slept in
 * their acquires (every wait is recorded, so the error is not sampling's),
 * its time runnable at most their run-queue time; of the time
 * asleep, 99% ending in the lock's class (Contention$Gate,
 * java.util.concurrent.locks.ReentrantLock) and 90% woken by the holder's
 * releasing method (holdGate, holdLock) after [woken by]; no lock time at
 * all for the idle pool and the sleeper. The time asleep is what -e lock
 * is for, and what a slow machine leaves alone: a taker preempted in its
 * acquire (often, on one loaded CPU) or as it spins (under emulation) has
 * run-queue time there, and no waker; one preempted as it spins has not
 * named its monitor yet. On JDK 17 a thread that contends alone
 * for a monitor is its "responsible" thread, which parks with a timeout
 * and looks again: a third of its waits end by its own timer, and -e lock
 * joins them with the release that ends the acquire (the aggregator's
 * defer_wait), so the holder is the waker there too. Its re-checks come
 * 1 and 9 ms into the wait: with holds of 20 ms, under emulation, one that
 * ran late found the monitor free, took it without a wakeup, and that
 * acquire's sleep was its timer's (81.8% by the holder in a 6.12 guest);
 * holds of 50 ms leave the re-checks far from the release (95.8%).
 *
 * The time the takers slept is the kernel's own count (sum_sleep_runtime,
 * which each taker reads around its acquire) where the kernel keeps
 * scheduler statistics: the test turns them on for its run. Elsewhere it
 * is the acquires' length less the CPU and run-queue time the kernel
 * counted for them, which holds on a quiet machine but not under
 * emulation: a taker preempted after its last run-queue read and before
 * its acquire's end (in its CPU clock read, or reading the clock) has that
 * time in neither, so it counts as sleep. In a guest of 6.1 under qemu
 * with the machine loaded, that way gave 0.600 s asleep where the kernel
 * counted 0.487 s and the profile 0.488 s.
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
#define HOLD_MS "50"

struct lock_time {
	uint64_t total, under_method;
	/* Of the total: asleep (or blocked), and of that of the class and woken by the holder, by its timer. */
	uint64_t asleep, asleep_of_class, asleep_by_holder, asleep_by_timer;
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
		bool asleep = false;

		if (strncmp(c->stacks[i], prefix, strlen(prefix)))
			continue;
		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n && state < 0; k++)
			if (!strcmp(fr.f[k], "[sleeping]") || !strcmp(fr.f[k], "[runnable]") || !strcmp(fr.f[k], "[blocked]"))
				state = k;
		t.total += c->counts[i];
		if (state > 0 && find_frame(&fr, 0, method) >= 0 && find_frame(&fr, 0, method) < state)
			t.under_method += c->counts[i];
		asleep = state > 0 && strcmp(fr.f[state], "[runnable]");
		if (asleep) {
			t.asleep += c->counts[i];
			if (!strcmp(fr.f[state - 1], class))
				t.asleep_of_class += c->counts[i];
			if (find_frame(&fr, state, holder) > state)
				t.asleep_by_holder += c->counts[i];
			else if (find_frame(&fr, state, "[timed out]") > state)
				t.asleep_by_timer += c->counts[i];
		}
		free(fr.buf);
	}
	return t;
}

/*
 * What the takers measured of their acquires (Contention.java): their
 * length, and in it their CPU and run-queue time and the kernel's count of
 * their sleep (-1: the kernel keeps none).
 */
struct takers_truth {
	long long waited_ns, cpu_ns, queued_ns, slept_ns;
};

static struct takers_truth truth_of(const struct child *out, const char *lock)
{
	char name[32];
	struct takers_truth t;

	snprintf(name, sizeof(name), "%s_waited_ns", lock);
	t.waited_ns = harness_truth(out, name);
	snprintf(name, sizeof(name), "%s_cpu_ns", lock);
	t.cpu_ns = harness_truth(out, name);
	snprintf(name, sizeof(name), "%s_queued_ns", lock);
	t.queued_ns = harness_truth(out, name);
	snprintf(name, sizeof(name), "%s_slept_ns", lock);
	t.slept_ns = harness_truth(out, name);
	return t;
}

/*
 * The lock time asleep against the takers' time asleep in their acquires,
 * by the kernel's count where it keeps one, else their length less CPU
 * and run-queue time: within 5%. The time the takers
 * waited for a CPU is the scheduler's too, but not all of it was in the
 * lock's frames (a preemption while they read the clock), so the lock's
 * runnable time is held to at most it. holder_share: of the time asleep,
 * what the holder's release must have ended; the class is judged there
 * too, since a thread preempted as it spins, before it parks, has not
 * named its monitor yet ([monitor of unknown class], rare but for a slow
 * machine).
 */
static void check_lock(const char *what, struct lock_time t, struct takers_truth truth, double holder_share)
{
	long long asleep_ns = truth.slept_ns >= 0 ? truth.slept_ns : truth.waited_ns - truth.cpu_ns - truth.queued_ns;
	double asleep_us = (double)asleep_ns / 1000, queued_us = (double)truth.queued_ns / 1000;
	uint64_t runnable = t.total - t.asleep;

	fprintf(stderr, "  %s: the takers waited %.3f s: %.3f s on their CPU, %.3f s on a run queue, the rest %.3f s; ",
		what, (double)truth.waited_ns / 1e9, (double)truth.cpu_ns / 1e9, (double)truth.queued_ns / 1e9,
		(double)(truth.waited_ns - truth.cpu_ns - truth.queued_ns) / 1e9);
	if (truth.slept_ns >= 0)
		fprintf(stderr, "asleep by the kernel's count %.3f s\n", (double)truth.slept_ns / 1e9);
	else
		fprintf(stderr, "no sleep count from the kernel: asleep the rest\n");
	fprintf(stderr,
		"  %s: %.3f s of lock time, %.3f s asleep (%+.1f%%), %.3f s runnable; %.1f%% under the method; of the "
		"time asleep %.1f%% of the class, %.1f%% woken by the holder, %.1f%% by its timer\n",
		what, (double)t.total / 1e6, (double)t.asleep / 1e6, 100 * ((double)t.asleep - asleep_us) / asleep_us,
		(double)runnable / 1e6, t.total ? 100.0 * (double)t.under_method / (double)t.total : 0,
		t.asleep ? 100.0 * (double)t.asleep_of_class / (double)t.asleep : 0,
		t.asleep ? 100.0 * (double)t.asleep_by_holder / (double)t.asleep : 0,
		t.asleep ? 100.0 * (double)t.asleep_by_timer / (double)t.asleep : 0);
	assert_true(truth.waited_ns > 0 && truth.cpu_ns >= 0 && truth.queued_ns >= 0 && asleep_ns > 0 && t.asleep > 0);
	assert_true((double)t.asleep >= 0.95 * asleep_us && (double)t.asleep <= 1.05 * asleep_us);
	assert_true((double)runnable <= 1.05 * queued_us + 0.01 * asleep_us);
	assert_true(t.under_method >= 0.99 * (double)t.total);
	assert_true(t.asleep_of_class >= 0.99 * (double)t.asleep);
	assert_true(t.asleep_by_holder >= holder_share * (double)t.asleep);
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
		   truth_of(&jvm.out, "gate"), 0.9);
	check_lock("ReentrantLock",
		   lock_time_of(&c, "lock-taker", "Contention.takeLock", "java.util.concurrent.locks.ReentrantLock",
				"Contention.holdLock"),
		   truth_of(&jvm.out, "lock"), 0.9);
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

#define SCHEDSTATS "/proc/sys/kernel/sched_schedstats"

/* kernel.sched_schedstats before the run: -1 when the kernel has no such switch or it could not be read. */
static int schedstats_before = -1;

static void schedstats_set(int value)
{
	FILE *f = fopen(SCHEDSTATS, "w");

	if (f) {
		fprintf(f, "%d\n", value);
		fclose(f);
	}
}

/*
 * The kernel's scheduler statistics on for the run, where it has them
 * (Debian's kernels do; a kernel built without them has no switch), and
 * set back after: with them each taker reads the time it slept as the
 * kernel counts it (Contention.java). They cost every context switch of
 * the machine a little while on.
 */
static int schedstats_on(void **state)
{
	FILE *f = fopen(SCHEDSTATS, "r");

	(void)state;
	if (!f)
		return 0;
	if (fscanf(f, "%d", &schedstats_before) != 1)
		schedstats_before = -1;
	fclose(f);
	if (schedstats_before == 0)
		schedstats_set(1);
	return 0;
}

static int schedstats_restore(void **state)
{
	(void)state;
	if (schedstats_before == 0)
		schedstats_set(0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(refused_without_bpf_loop),
		HARNESS_TEST(contention_jdk17),
		HARNESS_TEST(contention_jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("-e lock: contended locks, their classes and holders", tests, schedstats_on,
					   schedstats_restore);
}
