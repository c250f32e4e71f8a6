/*
 * --wakers: each sleeping wait of -e wall joined with the stack of the
 * thread that woke it, read in BPF at the wakeup, in the waker's context.
 *
 * The workloads' waiting threads wait for one known thread and nothing
 * else, so every sleeping wait of theirs has one right waker:
 *
 *   - tests/workloads/java/Wakers.java, on JDK 17 and 25: two consumers
 *     fed by a producer through a SynchronousQueue (queue) or through two
 *     OS pipes (pipe); the consumers' sleeping time must show, after its
 *     [woken by] frame, the producer's Java method (Wakers.produceQueue,
 *     Wakers.producePipe), walked by BPF in the producer's context;
 *   - the same JVM's thread that sleeps 20 ms at a time (sleep): woken by
 *     its timer, from an interrupt, it shows "[timed out]" and nothing but
 *     the interrupt's kernel frames: no task's frames;
 *   - tests/workloads/wakers.c, a native program: a thread waiting on a
 *     condition variable shows the native frame of the thread that signals
 *     it (signal_ready), and a pprof file of the same recording reads back
 *     with the same joined stacks.
 *
 * Each wait is judged on its own, so the share that must be right is "all
 * but a few": 90% of the waiting threads' sleeping time (a wait under way
 * at the end of the recording has not been woken yet, and is no one's).
 * Recordings of 3 seconds: the waiting threads sleep most of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

/* Sleeping time of the threads whose name starts with thread, and of it what is woken by waker. */
struct woken {
	uint64_t sleeping, by_waker, foreign; /* foreign: waker parts with a frame that is not the kernel's */
};

static struct woken woken_by(const struct collapsed *c, const char *thread, const char *waker)
{
	struct woken w = { 0 };
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "[%s", thread);
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int state, sep;

		if (strncmp(c->stacks[i], prefix, strlen(prefix)))
			continue;
		frames_split(&fr, c->stacks[i]);
		state = find_frame(&fr, 0, "[sleeping]");
		if (state >= 0) {
			w.sleeping += c->counts[i];
			sep = find_frame(&fr, state, "[woken by]");
			/* The waker's part comes right after the wait's state. */
			if (sep == state + 1 && find_frame(&fr, sep, waker) > sep)
				w.by_waker += c->counts[i];
			for (int k = sep + 1; sep > 0 && k < fr.n; k++)
				if (fr.f[k][0] != '[' && !strstr(fr.f[k], "_[k]")) {
					w.foreign += c->counts[i];
					break;
				}
		}
		free(fr.buf);
	}
	return w;
}

static void assert_woken(const char *what, struct woken w, uint64_t min_sleeping_us)
{
	fprintf(stderr, "  %s: %.1f%% of %.2f s asleep woken as it should be\n", what,
		w.sleeping ? 100.0 * (double)w.by_waker / (double)w.sleeping : 0, (double)w.sleeping / 1e6);
	assert_true(w.sleeping >= min_sleeping_us);
	assert_true(w.by_waker >= 0.9 * (double)w.sleeping);
}

/* Records the JVM running Wakers MODE with -e wall --wakers for 3 s, into c. */
static void record_wakers(const struct jdk *jdk, const char *mode, struct collapsed *c)
{
	char *dir, *file, pid[16];
	struct child profiler;
	struct jvm jvm;

	jvm_require(jdk, "Wakers");
	dir = harness_tmpdir();
	file = harness_path(dir, "wall.collapsed");
	jvm_start(&jvm, jdk, "Wakers", (char *[]){ (char *)mode, NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_run_profiler(&profiler,
					      (char *[]){ "-p", pid, "-e", "wall", "--wakers", "--threads", "-d", "3",
							  "-f", file, NULL },
					      60),
			 0);
	jvm_stop(&jvm);
	if (!strstr(profiler.buf, "wakers: "))
		fail_msg("the summary says nothing of the wakers: %s", profiler.buf);
	assert_int_equal(collapsed_load(file, c), 0);
	harness_output_free(NULL, file, dir);
}

static void handoff(const struct jdk *jdk, const char *mode, const char *producer)
{
	struct collapsed c;
	char what[64];

	record_wakers(jdk, mode, &c);
	snprintf(what, sizeof(what), "%s, %s: consumers woken by %s", jdk->name, mode, producer);
	/* Two consumers, 3 s each, waiting for a producer that computes: at least one second asleep. */
	assert_woken(what, woken_by(&c, "consumer-", producer), 1000000);
	collapsed_free(&c);
}

static void queue_consumers_woken_by_the_producer_jdk17(void **state)
{
	(void)state;
	handoff(&jdk17, "queue", "Wakers.produceQueue");
}

static void queue_consumers_woken_by_the_producer_jdk25(void **state)
{
	(void)state;
	handoff(&jdk25, "queue", "Wakers.produceQueue");
}

static void pipe_consumers_woken_by_the_producer_jdk17(void **state)
{
	(void)state;
	handoff(&jdk17, "pipe", "Wakers.producePipe");
}

static void pipe_consumers_woken_by_the_producer_jdk25(void **state)
{
	(void)state;
	handoff(&jdk25, "pipe", "Wakers.producePipe");
}

/* A timed sleep ends by its timer, from an interrupt: "[timed out]" and kernel frames alone. */
static void a_sleep_is_woken_by_its_timer(void **state)
{
	struct collapsed c;
	struct woken w;

	(void)state;
	record_wakers(&jdk17, "sleep", &c);
	w = woken_by(&c, "sleeper", "[timed out]");
	assert_woken("JDK 17, sleep: the sleeper woken by its timer", w, 2000000);
	fprintf(stderr, "  %.2f s of it with a frame that is no interrupt's\n", (double)w.foreign / 1e6);
	assert_int_equal(w.foreign, 0);
	collapsed_free(&c);
}

/*
 * A native waiter on a condition variable, woken by signal_ready's
 * thread, with native frames; the pprof file of the same recording reads
 * back to the same joined stacks.
 */
static void native_waiter_woken_by_its_signaller(void **state)
{
	char *dir, *collapsed, *pprof, *converted, pid[16];
	struct child workload, profiler, convert;
	struct collapsed c, back;
	struct woken w, w_back;

	(void)state;
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "wall.collapsed");
	pprof = harness_path(dir, "wall.pb.gz");
	converted = harness_path(dir, "back.collapsed");
	assert_int_equal(harness_start_workload(&workload, (char *[]){ harness_workload("wakers"), NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)workload.pid);
	assert_int_equal(harness_run_profiler(&profiler,
					      (char *[]){ "-p", pid, "-e", "wall", "--wakers", "--threads", "-d", "3",
							  "-f", collapsed, "-f", pprof, NULL },
					      60),
			 0);
	harness_stop_workload(&workload);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	w = woken_by(&c, "waiter", "signal_ready");
	assert_woken("native: the waiter woken by signal_ready", w, 2000000);
	assert_int_equal(harness_run_profiler(&convert,
					      (char *[]){ "convert", "--threads", pprof, "-f", converted, NULL }, 60),
			 0);
	assert_int_equal(collapsed_load(converted, &back), 0);
	w_back = woken_by(&back, "waiter", "signal_ready");
	fprintf(stderr, "  read back from pprof: %.2f s woken by signal_ready, %.2f s before\n",
		(double)w_back.by_waker / 1e6, (double)w.by_waker / 1e6);
	assert_true(w_back.sleeping == w.sleeping && w_back.by_waker == w.by_waker);
	collapsed_free(&back);
	unlink(converted);
	free(converted);
	unlink(pprof);
	free(pprof);
	harness_output_free(&c, collapsed, dir);
}

/* --wakers needs waits to join. */
static void wakers_need_waits(void **state)
{
	struct child profiler;

	(void)state;
	assert_int_equal(harness_run_profiler(&profiler, (char *[]){ "-a", "-e", "cpu", "--wakers", "-d", "1", NULL }, 30),
			 2);
	if (!strstr(profiler.buf, "--wakers needs -e wall, offcpu or lock"))
		fail_msg("no clear error: %s", profiler.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(wakers_need_waits),
		HARNESS_TEST(native_waiter_woken_by_its_signaller),
		HARNESS_TEST(a_sleep_is_woken_by_its_timer),
		HARNESS_TEST(queue_consumers_woken_by_the_producer_jdk17),
		HARNESS_TEST(queue_consumers_woken_by_the_producer_jdk25),
		HARNESS_TEST(pipe_consumers_woken_by_the_producer_jdk17),
		HARNESS_TEST(pipe_consumers_woken_by_the_producer_jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("--wakers: who woke each wait", tests, NULL, NULL);
}
