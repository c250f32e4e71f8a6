/*
 * Hostile JVMs walked by BPF, end to end: the real profiler against
 * hostile_jvm (tests/workloads/hostile_jvm.c), a process of HOSTILE_USER
 * that maps a file named libjvm.so exporting HotSpot's VMStructs tables and
 * describes with them a code cache of its own, where its threads run.
 *
 * Each mode is profiled once, `-p PID -d 3 -F 999 -o collapsed -f FILE -v`,
 * and in every mode:
 *
 *   - the profiler exits 0 within TIME_BOUND_S of its start (measured, not
 *     slept), and its peak resident memory (the kernel's, read from its
 *     zombie before it is reaped) stays under RSS_BOUND_KIB;
 *   - the workload's native thread keeps its frames
 *     (hostile_native_thread;hostile_native_spin), whatever the JVM says.
 *
 * Then, by mode:
 *
 *   valid          the fake is walked at all (else the rest proves nothing):
 *                  "N of M JVM thread samples with Java frames" with N > 0,
 *                  nearly all walked to the root; the interpreted frame is
 *                  named hostile.Spin.interpret on top of its native caller,
 *                  and the compiled one sits on top of its own caller;
 *   segmap-loop, huge-frame, sender-cycle, unmapped
 *                  the walk ends early, every time: 0.0% walked to the
 *                  root, each expected reason in the summary's "ended
 *                  early" and as "[unknown Java: reason]" frames, and no
 *                  sample of a thread in the code cache reaches that
 *                  thread's native frames;
 *   unmapped-heap, absurd-tables, absurd-stride, absurd-sizes
 *                  the layout reader refuses, one line with its reason
 *                  ("JVM pid N: <reason>; its Java frames come from the
 *                  agent"); the agent is then tried, and refused in turn
 *                  since the fake does not catch SIGQUIT; no Java frame is
 *                  walked.
 *
 * Each run's time and peak memory are printed, for docs/architecture.md.
 */
#include "harness.h"
#include "jvm.h"
#include "hostile.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DURATION_S 3
/*
 * The run itself, plus what comes before it and after: loading and
 * checking the BPF programs and reading the target under ASan on a busy
 * two-CPU machine takes 1-3 s, the last drain well under one. A profiler
 * that cannot keep up with a hostile JVM's samples (the bug this found:
 * 665 s for a 3 s run) is far past it.
 */
#define TIME_BOUND_S (DURATION_S + 12)
/*
 * The ASan build: some 75-105 MiB measured in every mode (shadow memory,
 * quarantine, the unwind tables and name caches, all bounded). Unbounded
 * growth from a table or a walk would pass it quickly.
 */
#define RSS_BOUND_KIB (256 << 10)
/* Samples of the native thread: ~1,000 at 999 Hz for 3 s on a busy machine, a few dozen at the very least. */
#define MIN_NATIVE_SAMPLES 30

/* What one mode must show. */
struct expect {
	const char *mode;
	const char *refusal;  /* the layout reader's reason, or NULL when the JVM is walked */
	const char *stops[3]; /* reasons the walk ends early for, each seen (hostile walked modes) */
};

struct run {
	struct child workload, profiler;
	char pid[16];
	char *dir, *file;
	struct collapsed stacks;
	double seconds;
	long max_rss_kib;
	int status;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Reads the profiler's stderr to its end and waits for it to exit, both
 * before deadline (else kills it and fails); then takes its peak memory
 * from the zombie (waitid WNOWAIT, whose rusage is the dead process's)
 * and lets the harness reap it.
 */
static void finish_profiler(struct run *r, double start, double deadline)
{
	struct pollfd exited = { .fd = (int)syscall(SYS_pidfd_open, r->profiler.pid, 0), .events = POLLIN };
	struct rusage ru = { 0 };
	siginfo_t info;
	int left;

	assert_true(exited.fd >= 0);
	while ((left = (int)((deadline - now_s()) * 1000)) > 0 && !harness_read_some(&r->profiler, left))
		;
	if (left > 0)
		left = (int)((deadline - now_s()) * 1000);
	if (left <= 0 || poll(&exited, 1, left) != 1) {
		harness_finish(&r->profiler, 0);
		fail_msg("the profiler did not exit within %d s; its stderr:\n%s", TIME_BOUND_S, r->profiler.buf);
	}
	close(exited.fd);
	r->seconds = now_s() - start;
	assert_int_equal(syscall(SYS_waitid, P_PID, r->profiler.pid, &info, WEXITED | WNOWAIT, &ru), 0);
	r->max_rss_kib = ru.ru_maxrss;
	r->status = harness_finish(&r->profiler, 5);
}

/* hostile_jvm in mode, as the hostile user, profiled once; its output loaded into r. */
static void run_mode(struct run *r, const char *mode)
{
	char *workload = hostile_workload("hostile_jvm"), *libjvm = hostile_workload("hostile_jvm_lib/libjvm.so");
	double start;

	memset(r, 0, sizeof(*r));
	assert_int_equal(hostile_start(&r->workload, (char *[]){ workload, libjvm, (char *)mode, NULL }, 1), 0);
	free(workload);
	free(libjvm);
	if (harness_wait_for(&r->workload, "ready\n", 10)) {
		harness_finish(&r->workload, 5);
		fail_msg("hostile_jvm %s did not start: %s", mode, r->workload.buf);
	}
	snprintf(r->pid, sizeof(r->pid), "%d", (int)r->workload.pid);
	r->dir = harness_tmpdir();
	assert_non_null(r->dir);
	r->file = harness_path(r->dir, "hostile.collapsed");
	start = now_s();
	assert_int_equal(harness_start_profiler(&r->profiler, (char *[]){ "-p", r->pid, "-d", "3", "-F", "999", "-o",
									   "collapsed", "-f", r->file, "-v", NULL }),
			 0);
	finish_profiler(r, start, start + TIME_BOUND_S);
	fprintf(stderr, "  %s: profiler exited %d after %.2f s, peak RSS %.1f MiB; its stderr:\n%s", mode, r->status,
		r->seconds, (double)r->max_rss_kib / 1024, r->profiler.buf);
	assert_int_equal(harness_stop_workload(&r->workload), 0);
	assert_int_equal(r->status, 0);
	assert_true(r->seconds <= TIME_BOUND_S);
	if (r->max_rss_kib > RSS_BOUND_KIB)
		fail_msg("the profiler's peak RSS was %ld KiB, over %d", r->max_rss_kib, RSS_BOUND_KIB);
	assert_int_equal(collapsed_load(r->file, &r->stacks), 0);
}

static void run_free(struct run *r)
{
	harness_output_free(&r->stacks, r->file, r->dir);
}

/*
 * Samples whose stack has caller immediately followed by callee, or (same
 * false) by any frame but callee (NULL: any frame at all).
 */
static uint64_t count_calls(const struct collapsed *c, const char *caller, const char *callee, bool same)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int at;

		frames_split(&fr, c->stacks[i]);
		at = find_frame(&fr, 0, caller);
		if (at >= 0 && at + 1 < fr.n && (!callee || !strcmp(fr.f[at + 1], callee) == same))
			n += c->counts[i];
		free(fr.buf);
	}
	return n;
}

/*
 * A thread in the code cache sampled without its JVM's layout in BPF (the
 * layouts go in before the perf events start: none should be) is walked as
 * native code: "thread;[anon]", by frame pointers. Any other frame on its
 * thread's function came from the Java walk.
 */
#define UNWALKED "[anon]"

/* Samples with a frame that starts with prefix. */
static uint64_t count_prefix(const struct collapsed *c, const char *prefix)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n; k++)
			if (!strncmp(fr.f[k], prefix, strlen(prefix))) {
				n += c->counts[i];
				break;
			}
		free(fr.buf);
	}
	return n;
}

/* The native thread's frames, whatever the JVM says. */
static void assert_native_frames(const struct run *r)
{
	uint64_t native = count_calls(&r->stacks, "hostile_native_thread", "hostile_native_spin", true);

	if (native < MIN_NATIVE_SAMPLES)
		fail_msg("%llu samples of hostile_native_thread;hostile_native_spin of %llu", (unsigned long long)native,
			 (unsigned long long)r->stacks.total);
}

/* The summary's walk figures: with_java of samples, pct walked to the root; the rest of its line into *line. */
static void walk_summary(const struct run *r, unsigned long long *with_java, unsigned long long *samples, double *pct,
			 const char **line)
{
	if (jvm_walk_summary(&r->profiler, with_java, samples, pct, line))
		fail_msg("no walk figures in the summary: %.300s", r->profiler.buf);
}

static void walked_jvm_line(const struct run *r)
{
	char line[96];

	snprintf(line, sizeof(line), "JVM pid %s: Java frames walked by BPF", r->pid);
	assert_non_null(strstr(r->profiler.buf, line));
}

static void valid_fake_is_walked(void **state)
{
	unsigned long long with_java, samples;
	uint64_t interpreted, compiled, unwalked;
	const char *line;
	struct run r;
	double pct;

	(void)state;
	harness_require_root();
	run_mode(&r, "valid");
	assert_native_frames(&r);
	walked_jvm_line(&r);
	walk_summary(&r, &with_java, &samples, &pct, &line);
	assert_true(with_java > 0);
	assert_true(pct >= 90.0);
	/* The interpreted frame, named, on its native caller: the walk came back out of the code cache. */
	interpreted = count_calls(&r.stacks, "hostile_interpreted_thread", "hostile.Spin.interpret", true);
	/* The compiled frame likewise: whatever its name, a frame of the walk. */
	compiled = count_calls(&r.stacks, "hostile_called_thread", UNWALKED, false);
	unwalked = count_calls(&r.stacks, "hostile_called_thread", UNWALKED, true) +
		   count_calls(&r.stacks, "hostile_interpreted_thread", UNWALKED, true);
	fprintf(stderr, "  valid: interpreted %llu, compiled %llu, walked as native code before the layout was in "
			"BPF %llu\n",
		(unsigned long long)interpreted, (unsigned long long)compiled, (unsigned long long)unwalked);
	assert_true(interpreted > 0 && compiled > 0);
	assert_true(unwalked * 10 < interpreted + compiled);
	run_free(&r);
}

/* The code cache's threads: a walk that reached one's native frames came back out of a lie. */
static const char *const code_threads[] = {
	"hostile_compiled_thread", "hostile_interpreted_thread", "hostile_cycle_thread", "hostile_chain_thread",
};

static void assert_walk_ends_early(const struct expect *e)
{
	unsigned long long with_java, samples;
	const char *line;
	struct run r;
	double pct;

	harness_require_root();
	run_mode(&r, e->mode);
	assert_native_frames(&r);
	walked_jvm_line(&r);
	walk_summary(&r, &with_java, &samples, &pct, &line);
	assert_true(with_java > 0);
	/* Printed with one decimal: not one walk in 2,000 reached the root. */
	if (pct != 0.0)
		fail_msg("%s: %.1f%% of the walks reached the root", e->mode, pct);
	assert_non_null(strstr(line, "(ended early: "));
	for (int i = 0; i < 3 && e->stops[i]; i++) {
		char frame[128];

		snprintf(frame, sizeof(frame), "[unknown Java: %s", e->stops[i]);
		if (!strstr(line, e->stops[i]) || !count_prefix(&r.stacks, frame))
			fail_msg("%s: no walk ended for \"%s\"", e->mode, e->stops[i]);
	}
	for (size_t i = 0; i < sizeof(code_threads) / sizeof(code_threads[0]); i++)
		if (count_calls(&r.stacks, code_threads[i], UNWALKED, false))
			fail_msg("%s: a walk went from the code cache back to %s", e->mode, code_threads[i]);
	run_free(&r);
}

static void assert_refused(const struct expect *e)
{
	char line[256];
	struct run r;

	harness_require_root();
	run_mode(&r, e->mode);
	assert_native_frames(&r);
	snprintf(line, sizeof(line), "JVM pid %s: %s", r.pid, e->refusal);
	if (!strstr(r.profiler.buf, line))
		fail_msg("%s: no \"%s\"", e->mode, line);
	assert_non_null(strstr(strstr(r.profiler.buf, line), "; its Java frames come from the agent\n"));
	/* The agent is tried next: the fake does not catch SIGQUIT, so it is not signalled, and says so. */
	assert_non_null(strstr(r.profiler.buf, "does not handle SIGQUIT"));
	assert_null(strstr(r.profiler.buf, "Java frames walked by BPF"));
	assert_null(strstr(r.profiler.buf, "JVM thread samples with Java frames"));
	assert_int_equal(count_prefix(&r.stacks, "[unknown Java"), 0);
	run_free(&r);
}

static void segment_map_that_never_ends(void **state)
{
	static const struct expect e = { "segmap-loop", NULL, { "a pc in no code blob" } };

	(void)state;
	assert_walk_ends_early(&e);
}

static void huge_and_negative_frames(void **state)
{
	static const struct expect e = { "huge-frame", NULL, { "a frame that makes no sense" } };

	(void)state;
	assert_walk_ends_early(&e);
}

static void senders_that_cycle(void **state)
{
	/* The interpreted frame that is its own sender; the compiled frames that repeat past the walk's depth. */
	static const struct expect e = { "sender-cycle", NULL, { "a frame that makes no sense", "deeper than" } };

	(void)state;
	assert_walk_ends_early(&e);
}

static void pointers_into_unmapped_memory(void **state)
{
	static const struct expect e = {
		"unmapped", NULL, { "a pc in no code blob", "the interpreter setting up a frame", "a read failed" }
	};

	(void)state;
	assert_walk_ends_early(&e);
}

static void unmapped_code_heap_is_refused(void **state)
{
	static const struct expect e = { "unmapped-heap", "code heap 0 is unreadable at 0x", { NULL } };

	(void)state;
	assert_refused(&e);
}

static void endless_table_is_refused(void **state)
{
	static const struct expect e = { "absurd-tables", "gHotSpotVMStructs has no end within 16384 entries", { NULL } };

	(void)state;
	assert_refused(&e);
}

static void absurd_stride_is_refused(void **state)
{
	static const struct expect e = { "absurd-stride", "gHotSpotVMStructs's stride 1099511627776 is outside 1..256",
					 { NULL } };

	(void)state;
	assert_refused(&e);
}

static void absurd_heap_count_is_refused(void **state)
{
	static const struct expect e = { "absurd-sizes", "1073741824 code heaps, not 1..4", { NULL } };

	(void)state;
	assert_refused(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(valid_fake_is_walked),
		HARNESS_TEST(segment_map_that_never_ends),
		HARNESS_TEST(huge_and_negative_frames),
		HARNESS_TEST(senders_that_cycle),
		HARNESS_TEST(pointers_into_unmapped_memory),
		HARNESS_TEST(unmapped_code_heap_is_refused),
		HARNESS_TEST(endless_table_is_refused),
		HARNESS_TEST(absurd_stride_is_refused),
		HARNESS_TEST(absurd_heap_count_is_refused),
	};

	return cmocka_run_group_tests_name("hostile JVMs walked by BPF", tests, NULL, NULL);
}
