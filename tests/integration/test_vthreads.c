/*
 * Virtual threads (JDK 21 and later) walked by BPF, on JDK 25: CPU samples
 * of many virtual threads, the wall-clock time of one pinned to its
 * carrier (pinned_virtual_thread_blocks_its_carrier), and the time of
 * those that wait unmounted (unmounted_waits_under_their_methods).
 *
 * tests/workloads/java/VThreads.java runs 10,000 virtual threads, each
 * forever doing five units of work in VThreads.five, three in
 * VThreads.three and two in VThreads.two, then yielding: 50/30/20 of the
 * work, on the carriers (ForkJoinPool workers) that mount them in turn.
 *
 * Each virtual thread yields with its stack some ten frames deep: mounted
 * again, it gets only its innermost frames back on the carrier's stack,
 * the rest staying frozen in the heap, so the walk must read those there.
 *
 * Judged, from samples taken until there are enough to judge a share to
 * 3 points with four standard errors to spare: each method's share of the
 * samples under VThreads.unit within 3 points of its share of the work; on
 * 99% of them, the stack starts at the marker frame (the carrier's frames
 * are left out by default), then the virtual thread's, from
 * Continuation.enter through VirtualThread.run to the workload's VThreads.work;
 * the summary counts the samples on virtual threads, as many as carry the
 * marker, and at most 1% of them with frames left frozen. The JVM beats
 * throughout.
 */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"
#include "user/java/walked.h"

#define VIRTUAL_THREADS "10000"
/* Recordings at most, of 4 s each: a loaded machine takes more of them. */
#define ROUNDS 8

struct shares {
	uint64_t work;     /* samples under VThreads.unit */
	uint64_t in[3];    /* of those, under five, three, two */
	uint64_t marked;   /* of those, starting at the marker, then Continuation.enter */
	uint64_t to_run;   /* of those, through VirtualThread.run to VThreads.work */
	uint64_t on_virtual; /* samples with the marker, the summary's figure to match */
	long long summary; /* what the summary counts on virtual threads, summed over recordings */
	long long frozen;  /* of those, the ones whose outer frames were not walked */
};

static const char *const methods[3] = { "VThreads.five", "VThreads.three", "VThreads.two" };
static const double expected[3] = { 0.5, 0.3, 0.2 };

static bool is_marker(const char *frame)
{
	return !strncmp(frame, WALKED_VIRTUAL, strlen(WALKED_VIRTUAL));
}

static void tally(const struct collapsed *c, struct shares *s)
{
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int unit, marker = -1;

		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n && marker < 0; k++)
			if (is_marker(fr.f[k]))
				marker = k;
		s->on_virtual += marker >= 0 ? c->counts[i] : 0;
		unit = find_frame(&fr, 0, "VThreads.unit");
		if (unit >= 0) {
			s->work += c->counts[i];
			for (int m = 0; m < 3; m++)
				if (find_frame(&fr, 0, methods[m]) >= 0)
					s->in[m] += c->counts[i];
			/* The marker first (the carrier's frames left out), then Continuation.enter through its run. */
			if (marker == 0 && marker + 1 < fr.n && !strcmp(fr.f[marker + 1], "jdk.internal.vm.Continuation.enter")) {
				int run = find_frame(&fr, marker, "java.lang.VirtualThread.run");
				int entry = find_frame(&fr, marker, "VThreads.work");

				s->marked += c->counts[i];
				s->to_run += run > marker && entry > run ? c->counts[i] : 0;
			}
		}
		free(fr.buf);
	}
}

/* N and M of "N on virtual threads, M of them with outer frames frozen" in the profiler's summary: 0, or -1. */
static int summary_on_virtual(const struct child *profiler, long long *on, long long *frozen)
{
	const char *p = strstr(profiler->buf, " on virtual threads, ");
	const char *start;

	if (!p)
		return -1;
	for (start = p; start > profiler->buf && start[-1] >= '0' && start[-1] <= '9'; start--)
		;
	if (start == p || sscanf(p, " on virtual threads, %lld of them with outer frames frozen", frozen) != 1)
		return -1;
	*on = atoll(start);
	return 0;
}

/* A recording with --threads: samples of work, and those whose stack starts "[virtual thread #N vt-K];[<carrier> tid=M]". */
struct by_thread {
	uint64_t work, grouped;
};

static void threads_view(struct jvm *jvm, struct by_thread *t)
{
	struct child profiler;
	struct collapsed stacks;

	jvm_record_stacks(jvm, &profiler, "threads.collapsed", (char *[]){ "-F", "997", "-d", "2", "--threads", NULL }, 0,
			  &stacks, NULL);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		unsigned long long id;
		char carrier[32], name[32];

		frames_split(&fr, stacks.stacks[i]);
		if (find_frame(&fr, 0, "VThreads.unit") >= 0) {
			t->work += stacks.counts[i];
			if (fr.n > 2 && sscanf(fr.f[0], "[virtual thread #%llu %31[^]]]", &id, name) == 2 &&
			    !strncmp(name, "vt-", 3) &&
			    sscanf(fr.f[1], "[%31[^ ] tid=", carrier) == 1 && !strncmp(carrier, "ForkJoinPool", 12))
				t->grouped += stacks.counts[i];
		}
		free(fr.buf);
	}
	collapsed_free(&stacks);
}

static void cpu_shares_of_virtual_threads(void **state)
{
	const struct jdk *jdk = &jdk25;
	struct by_thread by_thread = { 0 };
	struct shares s = { 0 };
	double tolerance = 0.03;
	/* n with four standard errors of the largest (p = 1/2) under the tolerance. */
	uint64_t needed = (uint64_t)ceil(pow(4 * 0.5 / tolerance, 2));
	struct jvm jvm;

	(void)state;
	jvm_require(jdk, "VThreads");
	jvm_start(&jvm, jdk, "VThreads", (char *[]){ "cpu", VIRTUAL_THREADS, NULL });
	s.summary = 0;
	for (int round = 0; s.work < needed && round < ROUNDS; round++) {
		struct child profiler;
		struct collapsed stacks;
		long long counted, frozen;

		jvm_record_stacks(&jvm, &profiler, "vthreads.collapsed", (char *[]){ "-F", "997", "-d", "4", NULL }, 0,
				  &stacks, NULL);
		tally(&stacks, &s);
		if (summary_on_virtual(&profiler, &counted, &frozen))
			fprintf(stderr, "no count of virtual-thread samples in:\n%s\n", profiler.buf);
		assert_int_equal(summary_on_virtual(&profiler, &counted, &frozen), 0);
		s.summary += counted;
		s.frozen += frozen;
		collapsed_free(&stacks);
	}
	threads_view(&jvm, &by_thread);
	jvm_stop(&jvm);
	fprintf(stderr, "  %s, --threads: %llu samples of work, %.2f%% under [virtual thread #ID vt-N], then its carrier\n",
		jdk->name, (unsigned long long)by_thread.work, harness_percent(by_thread.grouped, by_thread.work));
	fprintf(stderr, "  %s: %llu samples of work (%llu wanted): five %.1f%%, three %.1f%%, two %.1f%%; "
		"%.2f%% start at the marker, then Continuation.enter, %.2f%% through VirtualThread.run; "
		"%llu on virtual threads, the summary says %lld, %lld of them frozen\n",
		jdk->name, (unsigned long long)s.work, (unsigned long long)needed, harness_percent(s.in[0], s.work),
		harness_percent(s.in[1], s.work), harness_percent(s.in[2], s.work), harness_percent(s.marked, s.work),
		harness_percent(s.to_run, s.work), (unsigned long long)s.on_virtual, s.summary, s.frozen);
	assert_true(s.work >= needed);
	for (int m = 0; m < 3; m++)
		assert_true(fabs((double)s.in[m] / (double)s.work - expected[m]) <= tolerance);
	assert_true(s.marked * 100 >= s.work * 99);
	assert_true(s.to_run * 100 >= s.work * 99);
	/* The frozen frames are walked: a walk that could not read them is rare. */
	assert_true(s.frozen * 100 <= s.summary);
	assert_true(by_thread.work >= 500);
	assert_true(by_thread.grouped * 100 >= by_thread.work * 99);
	/* Every sample the summary counts on a virtual thread carries the marker, and the reverse. */
	assert_int_equal(s.summary, (long long)s.on_virtual);
}

/* "window X s" of a wall-clock recording's summary, in microseconds; -1 when absent. */
static double window_us(const struct child *profiler)
{
	const char *p = strstr(profiler->buf, "window ");
	double s;

	return p && sscanf(p, "window %lf s", &s) == 1 ? s * 1e6 : -1;
}

/*
 * A virtual thread that sleeps under a native frame (VThreads.viaNative,
 * which calls back VThreads.sleepPinned) is pinned: its carrier sleeps
 * with it. The wall-clock profile shows the carrier's time asleep under the
 * virtual thread's stack, [virtual thread #ID] then its carrier's frame,
 * through the native frame down to Thread.sleep: at least 95% of the
 * recording's window (it sleeps in 50 ms turns, all but a few µs of each).
 * Its every park tries to unmount it, and fails: none of its time shows
 * unmounted, and the summary counts the failed freezes.
 */
static void pinned_virtual_thread_blocks_its_carrier(void **state)
{
	const struct jdk *jdk = &jdk25;
	char *dir, *lib;
	uint64_t asleep = 0, unmounted = 0;
	unsigned long long pinned_id = 0;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	double window;

	(void)state;
	jvm_require(jdk, "VThreads");
	dir = realpath(harness_getenv("WORKLOAD_DIR", "build/workloads"), NULL);
	assert_non_null(dir);
	lib = harness_path(dir, "libvthreadsjni.so");
	free(dir);
	jvm_start_opts(&jvm, jdk, (char *[]){ "--enable-native-access=ALL-UNNAMED", NULL }, "VThreads",
		       (char *[]){ "pinned", "50", lib, NULL });
	jvm_record_stacks(&jvm, &profiler, "pinned.collapsed", (char *[]){ "-e", "wall", "-d", "3", "--threads", NULL },
			  0, &stacks, NULL);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		unsigned long long id;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 2 && sscanf(fr.f[0], "[virtual thread #%llu]", &id) == 1 &&
		    !strncmp(fr.f[1], "[ForkJoinPool", 13) && !strcmp(fr.f[fr.n - 1], "[sleeping]") &&
		    find_frame(&fr, 2, "VThreads.viaNative") >= 0 && find_frame(&fr, 2, "VThreads.sleepPinned") >= 0 &&
		    find_frame(&fr, 2, "java.lang.Thread.sleep") >= 0) {
			asleep += stacks.counts[i];
			pinned_id = id;
		}
		free(fr.buf);
	}
	/* Each of its parks tried to unmount it and failed: none of its time is unmounted. */
	for (size_t i = 0; pinned_id && i < stacks.n; i++) {
		struct frames fr;
		unsigned long long id;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 1 && sscanf(fr.f[0], "[virtual thread #%llu", &id) == 1 && id == pinned_id &&
		    !strcmp(fr.f[1], "[unmounted]"))
			unmounted += stacks.counts[i];
		free(fr.buf);
	}
	window = window_us(&profiler);
	fprintf(stderr, "  %s, pinned: %llu us of the carrier asleep under the virtual thread's stack, %.1f%% of the "
		"%.0f us window\n",
		jdk->name, (unsigned long long)asleep, window > 0 ? 100.0 * (double)asleep / window : 0.0, window);
	assert_true(window > 0);
	assert_true((double)asleep >= 0.95 * window);
	assert_true(pinned_id > 0);
	assert_int_equal(unmounted, 0);
	assert_non_null(strstr(profiler.buf, "freezes of pinned ones (they stayed mounted)"));
	collapsed_free(&stacks);
	free(lib);
}

/* Waits of the virtual threads named prefix (vt-sleep-, ...) under method, in microseconds. */
struct unmounted_time {
	uint64_t total;     /* every stack of theirs through method */
	uint64_t unmounted; /* of it, unmounted: [unmounted] after the marker */
	uint64_t asleep;    /* of that, ending in [sleeping] */
};

static struct unmounted_time unmounted_time_of(const struct collapsed *c, const char *prefix, const char *method)
{
	struct unmounted_time t = { 0 };

	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		unsigned long long id;
		char name[32];

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 2 && sscanf(fr.f[0], "[virtual thread #%llu %31[^]]]", &id, name) == 2 &&
		    !strncmp(name, prefix, strlen(prefix)) && find_frame(&fr, 1, method) > 0) {
			t.total += c->counts[i];
			if (!strcmp(fr.f[1], "[unmounted]")) {
				t.unmounted += c->counts[i];
				if (!strcmp(fr.f[fr.n - 1], "[sleeping]"))
					t.asleep += c->counts[i];
			}
		}
		free(fr.buf);
	}
	return t;
}

static void check_unmounted(const char *what, struct unmounted_time t, long long truth_ns)
{
	double truth_us = (double)truth_ns / 1000;

	fprintf(stderr,
		"  %s: %.3f s under the method, %.3f s measured by the virtual threads (%+.2f%%); %.1f%% of it "
		"unmounted, %.1f%% of that asleep\n",
		what, (double)t.total / 1e6, truth_us / 1e6,
		truth_us > 0 ? 100 * ((double)t.total - truth_us) / truth_us : 0,
		t.total ? 100.0 * (double)t.unmounted / (double)t.total : 0,
		t.unmounted ? 100.0 * (double)t.asleep / (double)t.unmounted : 0);
	assert_true(truth_ns > 0 && t.total > 0);
	assert_true((double)t.total >= 0.95 * truth_us && (double)t.total <= 1.05 * truth_us);
	assert_true(t.unmounted >= 0.9 * (double)t.total);
	assert_true(t.asleep >= 0.99 * (double)t.unmounted);
}

/*
 * Virtual threads that sleep (VThreads.sleepWait), wait for a ReentrantLock
 * another one holds (VThreads.lockWait) and read a socket
 * (VThreads.socketWait), 200 times each once the profiler records (a file
 * the workload waits for), each wait measured by the thread itself
 * (System.nanoTime around it). A parked virtual thread leaves no trace in
 * the scheduler: its time comes from the probes on its freeze and thaw
 * (bpf/vthreads.bpf.c). --wait-interval 1ms records every wait longer
 * than 1 ms, and a shorter one by chance, weighed to stand for 1 ms. The
 * few percent a waiting thread spends on its carrier (parking, waking,
 * trying the lock again) come from CPU samples, each standing for a
 * share of its carrier's running time: -F 999 takes enough of them that
 * their count's noise is well inside the 5% allowed.
 *
 * Judged, with --threads: each method's time, on stacks that start at its
 * virtual threads' marker ([virtual thread #ID vt-sleep-0] ...), within 5%
 * of what the threads measured; at least 90% of it unmounted ([unmounted]
 * instead of a carrier, the rest is on a carrier parking and waking),
 * and that asleep. The summary counts the waits. All 1,200 waits done
 * means every virtual thread went on.
 */
static void unmounted_waits_under_their_methods(void **state)
{
	const struct jdk *jdk = &jdk25;
	char *dir, *collapsed, *go, pid[16];
	struct child profiler;
	struct collapsed c;
	struct jvm jvm;
	FILE *f;

	(void)state;
	jvm_require(jdk, "VThreads");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "unmounted.collapsed");
	go = harness_path(dir, "go");
	jvm_start(&jvm, jdk, "VThreads", (char *[]){ "waits", go, "200", NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "wall", "--threads", "-F", "999",
								       "--wait-interval", "1ms", "-f", collapsed,
								       NULL }),
			 0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	/* A kernel without what it needs refuses the part at the start: nothing to wait for then. */
	if (strstr(profiler.buf, "jbpfprof: unavailable: the time virtual threads spend unmounted")) {
		kill(profiler.pid, SIGINT);
		harness_finish(&profiler, 60);
		fail_msg("the profiler records no unmounted time here: %s", profiler.buf);
	}
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
	if (harness_wait_for(&jvm.out, "done\n", 300))
		fail_msg("VThreads did not finish its waits: %s", jvm.out.buf);
	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	assert_non_null(strstr(profiler.buf, "; virtual threads: "));
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	fprintf(stderr, "  %s:\n", jdk->name);
	check_unmounted("sleep", unmounted_time_of(&c, "vt-sleep-", "VThreads.sleepWait"),
			harness_truth(&jvm.out, "sleep_waited_ns"));
	check_unmounted("ReentrantLock", unmounted_time_of(&c, "vt-taker-", "VThreads.lockWait"),
			harness_truth(&jvm.out, "lock_waited_ns"));
	check_unmounted("socket read", unmounted_time_of(&c, "vt-reader-", "VThreads.socketWait"),
			harness_truth(&jvm.out, "socket_waited_ns"));
	jvm_stop(&jvm);
	collapsed_free(&c);
	unlink(go);
	free(go);
	harness_output_free(NULL, collapsed, dir);
}

/*
 * Virtual threads that do nothing but yield (VThreads yields), each yield
 * an unmount and a mount, some hundred thousand a second: every mount must
 * find its unmount, at the start and the end of the recording too (the
 * probes come and go in an order that keeps them paired), so no virtual
 * thread is unmounted for longer than the window, and the JVM beats
 * throughout. A yield waits for a carrier: its time is runnable. Then
 * --no-unmounted leaves the time out, and the summary says nothing of it.
 */
static void unmounted_time_fits_the_window(void **state)
{
	const struct jdk *jdk = &jdk25;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	uint64_t most = 0, ids[64] = { 0 }, unmounted[64] = { 0 };
	size_t nr = 0;
	double window;

	(void)state;
	jvm_require(jdk, "VThreads");
	jvm_start(&jvm, jdk, "VThreads", (char *[]){ "yields", "8", NULL });
	jvm_record_stacks(&jvm, &profiler, "yields.collapsed",
			  (char *[]){ "-e", "wall", "-d", "2", "--threads", "--wait-interval", "1ms", NULL }, 0, &stacks,
			  NULL);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		unsigned long long id;
		size_t k = 0;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 1 && sscanf(fr.f[0], "[virtual thread #%llu", &id) == 1 && !strcmp(fr.f[1], "[unmounted]")) {
			while (k < nr && ids[k] != id)
				k++;
			if (k == nr && nr < 64)
				ids[nr++] = id;
			if (k < 64)
				unmounted[k] += stacks.counts[i];
		}
		free(fr.buf);
	}
	for (size_t k = 0; k < nr; k++)
		most = unmounted[k] > most ? unmounted[k] : most;
	window = window_us(&profiler);
	fprintf(stderr, "  %s, yields: %zu virtual threads unmounted, the most for %llu us of the %.0f us window "
		"(%.0f us allowed)\n",
		jdk->name, nr, (unsigned long long)most, window, window + 4 * sqrt(window * 1000));
	assert_true(window > 0);
	assert_true(nr > 0);
	/*
	 * A yield's wait is short: recorded by chance, each weighing the wait
	 * interval (1 ms). The count of those recorded over a window is about
	 * Poisson: its time is allowed four standard errors over the window.
	 */
	assert_true((double)most <= window + 4 * sqrt(window * 1000));
	collapsed_free(&stacks);

	/* --no-unmounted: no probes, no time unmounted, nothing said of it. */
	jvm_record_stacks(&jvm, &profiler, "no-unmounted.collapsed",
			  (char *[]){ "-e", "wall", "-d", "1", "--threads", "--no-unmounted", NULL }, 0, &stacks, NULL);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++)
		assert_null(strstr(stacks.stacks[i], "[unmounted]"));
	assert_null(strstr(profiler.buf, "; virtual threads: "));
	collapsed_free(&stacks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(cpu_shares_of_virtual_threads, harness_teardown),
		cmocka_unit_test_teardown(pinned_virtual_thread_blocks_its_carrier, harness_teardown),
		cmocka_unit_test_teardown(unmounted_waits_under_their_methods, harness_teardown),
		cmocka_unit_test_teardown(unmounted_time_fits_the_window, harness_teardown),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("vthreads", tests, NULL, NULL);
}
