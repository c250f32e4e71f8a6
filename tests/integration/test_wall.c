/*
 * Wall-clock and off-CPU profiling (-e wall, -e offcpu), end to end: the
 * real profiler on tests/workloads/offcpu.c, whose threads wait in known
 * ways. Where the time goes is checked against truths the profile cannot
 * have invented: the recording's window (every live thread's time must add
 * up to it), the lifetimes the short threads measure themselves, and the
 * kernel's own scheduler statistics (/proc/PID/task/TID/schedstat).
 *
 * In these modes a collapsed line's count is microseconds, and its last
 * frame is the thread's state: [running], [runnable], [sleeping] or
 * [blocked]. With --threads and one -p, the first frame is
 * "[<thread name> tid=<tid>]".
 *
 * The "mix" recording is made once, by the first test that needs it, and
 * read by the others: each looks at one promise, so that a report says
 * which one broke.
 */
#include "harness.h"
#include "wall_run.h"

#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the mix recording, shared ------------------------------------------ */

static struct wall_run mix_run;
static int mix_recorded;

/* offcpu mix under -e wall --threads -d 3 -F 99 -v, recorded on first use. */
static const struct wall_run *mix(void)
{
	harness_require_root();
	if (!mix_recorded) {
		/* Once only, even if it fails: later tests then fail on the status. */
		mix_recorded = 1;
		record(&mix_run, (char *[]){ "mix", NULL },
			(char *[]){ "-e", "wall", "--threads", "-d", "3", "-F", "99", "-v", NULL });
		mix_recorded = 2;
	}
	if (mix_recorded != 2) {
		fprintf(stderr, "  the shared mix recording failed in the first test that made it\n");
		fail();
	}
	return &mix_run;
}

/* How many long-lived threads' lines do not add up to the window, within 1%. */
static int threads_off_window(const struct wall_run *r)
{
	int off = 0;

	for (int i = 0; i < NR_MIX; i++) {
		uint64_t us = thread_us(&r->stacks, r->tids[i], NR_STATES, NULL);
		double error = harness_percent(us, r->window_us) - 100.0;

		fprintf(stderr, "  %-9s tid %ld: %" PRIu64 " us, %+.2f%% of the window\n", mix_names[i],
			r->tids[i], us, error);
		off += fabs(error) > 1.0;
	}
	return off;
}

/* Every long-lived thread's lines add up to the window, within 1%. */
static void threads_add_up_to_window(void **state)
{
	assert_int_equal(threads_off_window(mix()), 0);
}

/*
 * Where the window may start, as far as the test can tell: after the
 * profiler's launch, no later than its "sampling" line was read, and early
 * enough to end before it exited.
 */
static int64_t latest_window_start(const struct wall_run *r)
{
	int64_t last = r->sampling_ns, window_ns = (int64_t)r->window_us * 1000;

	if (r->end_ns - window_ns < last)
		last = r->end_ns - window_ns;
	assert_true(last >= r->launch_ns);
	return last;
}

/*
 * The most steal time all CPUs can have seen from point k0 to point k1, in
 * ns: their count's increase, and one clock tick for its rounding.
 */
static double steal_between(const struct wall_run *r, size_t k0, size_t k1)
{
	double stolen = r->points[k1].steal_ns - r->points[k0].steal_ns;

	return stolen > 0 ? stolen + 1e9 / (double)sysconf(_SC_CLK_TCK) : 0.0;
}

/*
 * Bounds, in us, of what the kernel counted for long-lived thread i over the
 * window: [0] on a CPU, [1] on a runqueue, [2] both. For each candidate start
 * s from the launch to latest_window_start(), 1 ms apart, the count over
 * [s, s + W] lies between its increase from the first read after s to the
 * last read before s + W, and its increase from the last read before s to
 * the first read after s + W; low and high are the least and the greatest
 * of these. A read lags: /proc gives a running thread's on-CPU time as of
 * its last scheduler update (at most a tick, 4 ms at 250 Hz), and a
 * waiting thread's runqueue time without its current wait, which a busy
 * machine can make longer than any tolerance. So the read that closes the
 * outer count is the first after s + W at which the thread's counters have
 * moved since the last read before it: by then a wait under way at s + W
 * is counted. Callers allow 1% of the window for the tick.
 *
 * The kernel's on-CPU count leaves out steal time (CONFIG_PARAVIRT_TIME_
 * ACCOUNTING): time a virtual machine's host gave the CPU to others while
 * the thread was current. The profile's running time is wall time, steal
 * included, so the high bounds of [0] and [2] add the steal all CPUs saw in
 * the outer interval, and one clock tick for its rounding. A noisy host can
 * steal more than the 1% tolerance in a few seconds.
 */
static void schedstat_bounds(const struct wall_run *r, int i, double low[3], double high[3])
{
	int64_t window_ns = (int64_t)r->window_us * 1000, last = latest_window_start(r);

	for (int j = 0; j < 3; j++) {
		low[j] = INFINITY;
		high[j] = -INFINITY;
	}
	for (int64_t s = r->launch_ns; s <= last; s += 1000000) {
		size_t s_before, s_after, e_before, e_after;
		double stolen;

		points_around(r, s, &s_before, &s_after);
		points_around(r, s + window_ns, &e_before, &e_after);
		while (e_after + 1 < r->nr_points && point_field(r, e_after, i, 2) == point_field(r, e_before, i, 2))
			e_after++;
		stolen = steal_between(r, s_before, e_after);
		for (int j = 0; j < 3; j++) {
			double inner = point_field(r, e_before, i, j) - point_field(r, s_after, i, j);
			double outer = point_field(r, e_after, i, j) - point_field(r, s_before, i, j);

			if (j != 1)
				outer += stolen;

			low[j] = fmin(low[j], fmax(inner, 0.0) / 1e3);
			high[j] = fmax(high[j], outer / 1e3);
		}
	}
}

/*
 * Each waiting thread spends at least 95% of its time asleep in the system
 * call it makes: the rest is its few microseconds of work per wake-up, and
 * room for stacks sampled short of their kernel part. The time it waited
 * for a CPU once woken is runnable, not sleeping, by the contract, and on a
 * busy machine that can be more than 5%: so the 95% are of its time less
 * the most the kernel counted it on a runqueue during the window
 * (schedstat_bounds).
 */
static void sleepers_sleep_in_their_system_calls(void **state)
{
	static const struct {
		int thread;
		const char *frame; /* part of a kernel frame */
	} sleepers[] = {
		{ NANOSLEEP, "nanosleep" },
		{ FEEDER, "nanosleep" },
		/* pipe_read_[k] before Linux 6.14, anon_pipe_read_[k] since. */
		{ PIPEREAD, "pipe_read_[k]" },
		{ FUTEX, "futex_wait" },
	};
	const struct wall_run *r = mix();
	int off = 0;

	for (size_t i = 0; i < sizeof(sleepers) / sizeof(sleepers[0]); i++) {
		long tid = r->tids[sleepers[i].thread];
		uint64_t total = thread_us(&r->stacks, tid, NR_STATES, NULL);
		uint64_t asleep = thread_us(&r->stacks, tid, SLEEPING, NULL);
		uint64_t in_call = thread_us(&r->stacks, tid, SLEEPING, sleepers[i].frame);
		double low[3], high[3], base;

		schedstat_bounds(r, sleepers[i].thread, low, high);
		base = fmax((double)total - high[1], 0.0);
		fprintf(stderr,
			"  %-9s: %.2f%% sleeping, %.2f%% sleeping under a kernel frame with \"%s\"; "
			"%.2f%% running, %.2f%% runnable; on a runqueue at most %.2f%% (schedstat)\n",
			mix_names[sleepers[i].thread], harness_percent(asleep, total), harness_percent(in_call, total),
			sleepers[i].frame, harness_percent(thread_us(&r->stacks, tid, RUNNING, NULL), total),
			harness_percent(thread_us(&r->stacks, tid, RUNNABLE, NULL), total),
			100.0 * high[1] / (double)total);
		off += total == 0 || (double)in_call < 0.95 * base;
	}
	assert_int_equal(off, 0);
}

/*
 * The stuck thread sleeps in read() from before the recording to after it:
 * all of its time (99%: nothing else happens to it) is one sleep, and that
 * sleep is longer than a sampling period, so it keeps its exact stack.
 */
static void stuck_thread_sleeps_throughout(void **state)
{
	const struct wall_run *r = mix();
	long tid = r->tids[STUCK];
	uint64_t total = thread_us(&r->stacks, tid, NR_STATES, NULL);
	uint64_t asleep = thread_us(&r->stacks, tid, SLEEPING, NULL);
	uint64_t in_read = thread_us(&r->stacks, tid, SLEEPING, "pipe_read_[k]");

	fprintf(stderr, "  stuck: %" PRIu64 " us, %.2f%% sleeping, %.2f%% sleeping under *pipe_read_[k]\n",
		total, harness_percent(asleep, total), harness_percent(in_read, total));
	for (size_t i = 0; i < r->stacks.n && harness_percent(in_read, total) < 99.0; i++)
		if (stack_tid(r->stacks.stacks[i]) == tid)
			fprintf(stderr, "    %s %" PRIu64 "\n", r->stacks.stacks[i], r->stacks.counts[i]);
	assert_true(total > 0);
	assert_true(harness_percent(asleep, total) >= 99.0);
	assert_true(harness_percent(in_read, total) >= 99.0);
}

/* The spin thread never waits: 95% or more running or runnable. */
static void spinner_runs(void **state)
{
	const struct wall_run *r = mix();
	long tid = r->tids[SPIN];
	uint64_t total = thread_us(&r->stacks, tid, NR_STATES, NULL);
	uint64_t running = thread_us(&r->stacks, tid, RUNNING, NULL);
	uint64_t runnable = thread_us(&r->stacks, tid, RUNNABLE, NULL);

	fprintf(stderr, "  spin: %.2f%% running, %.2f%% runnable, %.2f%% sleeping, %.2f%% blocked\n",
		harness_percent(running, total), harness_percent(runnable, total),
		harness_percent(thread_us(&r->stacks, tid, SLEEPING, NULL), total),
		harness_percent(thread_us(&r->stacks, tid, BLOCKED, NULL), total));
	assert_true(total > 0);
	assert_true(harness_percent(running + runnable, total) >= 95.0);
}

/*
 * Each long-lived thread's running and runnable time against the kernel's
 * own count of them, /proc/PID/task/TID/schedstat (on-CPU ns, runqueue ns,
 * where the runqueue time includes a woken thread's wait for a CPU), read
 * every 2 ms or so from the profiler's launch to its exit.
 *
 * The test knows the window's length W exactly but not where it lies, so
 * the kernel's count is known only within bounds (schedstat_bounds); the
 * profile's figure must lie within them, give or take 1% of W (the
 * precision the contract gives a thread's total). The candidate starts span
 * the profiler's start-up (a few hundred ms), so this is a loose bracket
 * for a busy thread, but a sound one: it assumes nothing the contract does
 * not say.
 */
static int threads_off_schedstat(const struct wall_run *r)
{
	static const char *const what[3] = { "running", "runnable", "running+runnable" };
	double tolerance_us = 0.01 * (double)r->window_us;
	const char *summary;
	int off = 0, was_off = 0;

	fprintf(stderr, "  the window starts 0 to %.0f ms after the launch; %zu schedstat reads; "
		"tolerance %.0f us; steal on all CPUs meanwhile %.0f ms\n",
		(double)(latest_window_start(r) - r->launch_ns) / 1e6, r->nr_points, tolerance_us,
		(r->points[r->nr_points - 1].steal_ns - r->points[0].steal_ns) / 1e6);
	for (int i = 0; i < NR_MIX; i++) {
		double low[3], high[3], prof[3];

		prof[0] = (double)thread_us(&r->stacks, r->tids[i], RUNNING, NULL);
		prof[1] = (double)thread_us(&r->stacks, r->tids[i], RUNNABLE, NULL);
		prof[2] = prof[0] + prof[1];
		schedstat_bounds(r, i, low, high);
		for (int j = 0; j < 3; j++) {
			int ok = prof[j] >= low[j] - tolerance_us && prof[j] <= high[j] + tolerance_us;

			fprintf(stderr, "  %-9s %-16s profile %8.0f us, schedstat %8.0f to %8.0f us%s\n",
				mix_names[i], what[j], prof[j], low[j], high[j], ok ? "" : ": OUTSIDE");
			off += !ok;
			if (!ok && j < 2)
				print_thread_stacks(&r->stacks, r->tids[i], j ? RUNNABLE : RUNNING);
		}
		if (off > was_off)
			for (int st = SLEEPING; st < NR_STATES; st++)
				print_thread_stacks(&r->stacks, r->tids[i], (enum state)st);
		was_off = off;
		if (r->asleep_queued_ns[i] > 0.0)
			fprintf(stderr, "  %-9s schedstat also counted %.0f us on a runqueue while it slept: left out\n",
				mix_names[i], r->asleep_queued_ns[i] / 1e3);
	}
	/* What the profiler said it missed (context switches not seen, waits lost): the first clue to a miss. */
	summary = strstr(r->profiler.buf, "jbpfprof: recorded ");
	if (off && summary)
		fprintf(stderr, "  the profiler's summary: %.*s\n", (int)strcspn(summary, "\n"), summary);
	return off;
}

static void threads_match_schedstat(void **state)
{
	assert_int_equal(threads_off_schedstat(mix()), 0);
}

/*
 * The same mix with every fallback forced (JBPFPROF_FORCE_FALLBACK=all):
 * the threads' ends read by the task iterator and the map from user space
 * instead of the map's iterator, stacks by frame pointers instead of
 * bpf_loop's walk: the same answers, within the same tolerances, and the
 * profiler says which fallbacks it took.
 */
static void forced_fallbacks_match_schedstat(void **state)
{
	struct wall_run run;

	harness_require_root();
	setenv("JBPFPROF_FORCE_FALLBACK", "all", 1);
	record(&run, (char *[]){ "mix", NULL }, (char *[]){ "-e", "wall", "--threads", "-d", "3", "-F", "99", "-v", NULL });
	unsetenv("JBPFPROF_FORCE_FALLBACK");
	assert_non_null(strstr(run.profiler.buf, "jbpfprof: fallback: map-elem-iter: forced"));
	assert_non_null(strstr(run.profiler.buf, "jbpfprof: fallback: bpf-loop: forced"));
	assert_int_equal(threads_off_window(&run), 0);
	assert_int_equal(threads_off_schedstat(&run), 0);
	wall_run_free(&run);
}

/* One "life" line of offcpu mix (see tests/workloads/offcpu.c). */
struct life {
	long long tid;
	long long ns, start;              /* first to last instruction */
	long long outer_ns, outer_start;  /* from pthread_create to leaving /proc */
	long long cpu_ns, runqueue_ns;    /* schedstat at its last instruction */
	long long unseen_ns;              /* of its life but its sleep, neither on a CPU nor queued */
};

/*
 * The next "life" line from p of a thread whose whole life (the outer bracket)
 * fell inside the window; NULL at the end. The test knows the window only
 * from its side: it opens after the profiler's launch and no later than
 * the "sampling" line was read, and lasts W. So a life lies inside it for
 * sure when it begins after that line and ends before launch + W; lives
 * that straddle either edge, or might, are skipped (and counted).
 */
static const char *next_life(const struct wall_run *r, const char *p, struct life *l, int *skipped)
{
	int64_t last = r->launch_ns + (int64_t)r->window_us * 1000;

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (sscanf(p, "life %lld %lld %lld %lld %lld %lld %lld %lld", &l->tid, &l->ns, &l->start,
				&l->outer_ns, &l->outer_start, &l->cpu_ns, &l->runqueue_ns, &l->unseen_ns) != 8)
			continue;
		if (l->outer_start < r->sampling_ns || l->outer_start + l->outer_ns > last) {
			(*skipped)++;
			continue;
		}
		return strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
	}
	return NULL;
}

/*
 * Short threads count their own life. The kernel's view of it lies
 * between what the thread measured (first to last instruction) and what
 * its creator measured around it (pthread_create to its leaving /proc): the
 * profile's total must lie in that bracket, give or take 1% of the life or
 * 200 us, whichever is larger. At least three lives must qualify (about
 * ten start each second), or the test proves nothing.
 */
static void short_threads_count_their_lives(void **state)
{
	const struct wall_run *r = mix();
	int checked = 0, off = 0, skipped = 0;
	struct life l;

	for (const char *p = next_life(r, r->workload.buf, &l, &skipped); p;
		p = next_life(r, p, &l, &skipped)) {
		double us = (double)thread_us(&r->stacks, (long)l.tid, NR_STATES, NULL);
		double tolerance_us = fmax(0.01 * (double)l.ns / 1e3, 200.0);

		checked++;
		if (us < (double)l.ns / 1e3 - tolerance_us || us > (double)l.outer_ns / 1e3 + tolerance_us) {
			off++;
			fprintf(stderr, "  short tid %lld: lived %.0f to %.0f us, profile says %.0f us\n",
				l.tid, (double)l.ns / 1e3, (double)l.outer_ns / 1e3, us);
		}
	}
	fprintf(stderr, "  short threads: %d wholly inside the window checked, %d off; %d skipped\n", checked,
		off, skipped);
	assert_true(checked >= 3);
	assert_int_equal(off, 0);
}

/* The profiler's "N context switches not seen" (-v), 0 when it says none. */
static long long switches_not_seen(const struct wall_run *r)
{
	const char *p = strstr(r->profiler.buf, " context switches not seen");

	if (!p)
		return 0;
	while (p > r->profiler.buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return atoll(p);
}

/*
 * Short threads' running and runnable time against their own schedstat,
 * read at their last instruction, so counting from their creation: the
 * profile may add only what came after (at most the time from that
 * instruction to its leaving /proc), and the same tolerance as above.
 * The kernel's on-CPU count leaves out time stolen by the host and time
 * in interrupts, which the profile counts running (the thread was on its
 * CPU): the thread measures that over its life (the "unseen" time of
 * offcpu's life line; /proc/stat counts steal only in clock ticks), and
 * running may exceed the kernel's count by that much.
 *
 * The kernel does not report every context switch (about 1% of them here,
 * see docs/architecture.md, and -v counts them): the profile then places
 * the switch by the thread's CPU time, which leaves the same time out, or
 * at its return to user mode, and the time between may land in the
 * neighbouring state. So as many threads as switches went unseen may be
 * off by more, though by no more than a tenth of their life: a profile
 * wrong for its own reasons is off for more threads, or by more.
 */
static void short_threads_split_like_schedstat(void **state)
{
	const struct wall_run *r = mix();
	int checked = 0, off = 0, wrong = 0, skipped = 0;
	long long not_seen = switches_not_seen(r);
	struct life l;

	for (const char *p = next_life(r, r->workload.buf, &l, &skipped); p;
		p = next_life(r, p, &l, &skipped)) {
		double running = (double)thread_us(&r->stacks, (long)l.tid, RUNNING, NULL);
		double runnable = (double)thread_us(&r->stacks, (long)l.tid, RUNNABLE, NULL);
		double tail_us = (double)(l.outer_start + l.outer_ns - l.start - l.ns) / 1e3;
		double tolerance_us = fmax(0.01 * (double)l.ns / 1e3, 200.0);
		double cpu_us = (double)l.cpu_ns / 1e3, runqueue_us = (double)l.runqueue_ns / 1e3;
		double stolen_us = (double)l.unseen_ns / 1e3, loose_us = 0.1 * (double)l.ns / 1e3;

		checked++;
		if (running < cpu_us - tolerance_us || running > cpu_us + tail_us + stolen_us + tolerance_us ||
			runnable < runqueue_us - tolerance_us ||
			runnable > runqueue_us + tail_us + tolerance_us) {
			off++;
			wrong += running < cpu_us - loose_us || running > cpu_us + tail_us + stolen_us + loose_us ||
				 runnable < runqueue_us - loose_us ||
				 runnable > runqueue_us + tail_us + stolen_us + loose_us;
			fprintf(stderr,
				"  short tid %lld: running %.0f us (schedstat %.0f), runnable %.0f us "
				"(schedstat %.0f), allowed %.0f us over them (and %.0f us unseen by the "
				"kernel over running) or %.0f us under; sleeping %" PRIu64 " us, blocked %" PRIu64
				" us, life %.0f us\n",
				l.tid, running, cpu_us, runnable, runqueue_us, tail_us + tolerance_us,
				stolen_us, tolerance_us, thread_us(&r->stacks, (long)l.tid, SLEEPING, NULL),
				thread_us(&r->stacks, (long)l.tid, BLOCKED, NULL), (double)l.ns / 1e3);
			for (int st = RUNNING; st < NR_STATES; st++)
				print_thread_stacks(&r->stacks, (long)l.tid, (enum state)st);
		}
	}
	fprintf(stderr, "  short threads: %d checked, %d off (%d by more than a tenth of their life); %d skipped; "
			"%lld context switches not seen\n",
		checked, off, wrong, skipped, not_seen);
	assert_true(checked >= 3);
	assert_int_equal(wrong, 0);
	assert_true(off <= not_seen);
}

/*
 * Whether long-lived thread i of a mix recording sleeps as long as the
 * kernel says it was neither on a CPU nor on a runqueue: none of these
 * threads ever blocks uninterruptibly, so that is W less its on-CPU and
 * runqueue time, known within schedstat_bounds, give or take 1% of W.
 */
static int sleeps_as_schedstat_says(const struct wall_run *r, int i)
{
	double low[3], high[3], asleep = (double)thread_us(&r->stacks, r->tids[i], SLEEPING, NULL);
	double tolerance_us = 0.01 * (double)r->window_us, least, most;
	int ok;

	schedstat_bounds(r, i, low, high);
	least = fmax((double)r->window_us - high[2], 0.0);
	most = fmax((double)r->window_us - low[2], 0.0);
	ok = asleep >= least - tolerance_us && asleep <= most + tolerance_us;
	fprintf(stderr,
		"  %-9s sleeps %8.0f us; by schedstat %8.0f to %8.0f us%s (runnable %" PRIu64
		" us, on a run queue by schedstat %.0f to %.0f us)\n",
		mix_names[i], asleep, least, most, ok ? "" : ": OUTSIDE",
		thread_us(&r->stacks, r->tids[i], RUNNABLE, NULL), low[1], high[1]);
	return ok;
}

/*
 * --state sleeping keeps only [sleeping] stacks, and filtering takes
 * nothing from them: each long-lived thread still sleeps as long as the
 * kernel says (sleeps_as_schedstat_says), the spin thread about never.
 */
static void state_filter_keeps_sleeping(void **state)
{
	struct wall_run r;
	uint64_t other = 0;
	int off = 0;

	harness_require_root();
	record(&r, (char *[]){ "mix", NULL },
	       (char *[]){ "-e", "wall", "--state", "sleeping", "--threads", "-d", "2", "-v", NULL });
	for (size_t i = 0; i < r.stacks.n; i++)
		if (stack_state(r.stacks.stacks[i]) != SLEEPING) {
			if (!other)
				fprintf(stderr, "  not sleeping: %s %" PRIu64 "\n", r.stacks.stacks[i],
					r.stacks.counts[i]);
			other += r.stacks.counts[i];
		}
	fprintf(stderr, "  --state sleeping: %" PRIu64 " us in other states\n", other);
	for (int i = 0; i < NR_MIX; i++)
		off += !sleeps_as_schedstat_says(&r, i);
	assert_true(r.stacks.n > 0);
	assert_int_equal(other, 0);
	assert_int_equal(off, 0);
	wall_run_free(&r);
}

/* -e offcpu: nothing on a CPU, and every thread's sleep all there. */
static void offcpu_mode_has_no_running(void **state)
{
	struct wall_run r;
	uint64_t running;
	int off = 0;

	harness_require_root();
	record(&r, (char *[]){ "mix", NULL },
	       (char *[]){ "-e", "offcpu", "--threads", "-d", "2", "-v", NULL });
	running = collapsed_count_frame(&r.stacks, "[running]");
	fprintf(stderr, "  -e offcpu: %" PRIu64 " us [running], %" PRIu64 " us [runnable]\n", running,
		collapsed_count_frame(&r.stacks, "[runnable]"));
	for (int i = 0; i < NR_MIX; i++)
		off += !sleeps_as_schedstat_says(&r, i);
	assert_int_equal(running, 0);
	assert_int_equal(off, 0);
	wall_run_free(&r);
}

/*
 * --max-block drops the waits longer than it: with 29 ms, the futex
 * thread's 30 ms waits and the stuck thread's whole-recording wait go,
 * the nanosleep thread's 20 ms sleeps stay. A wait lasts until the thread
 * runs again, so a sleep's wait is its 20 ms and the time it then waits
 * for a CPU, which the mix's own spinning threads make several
 * milliseconds at times on two CPUs: the limit leaves it 9 ms.
 */
static void max_block_drops_long_waits(void **state)
{
	struct wall_run r;
	uint64_t futex, stuck, nanosleep;

	harness_require_root();
	record(&r, (char *[]){ "mix", NULL },
	       (char *[]){ "-e", "offcpu", "--threads", "-d", "2", "-v", "--max-block", "29ms", NULL });
	futex = thread_us(&r.stacks, r.tids[FUTEX], NR_STATES, "futex_wait");
	stuck = thread_us(&r.stacks, r.tids[STUCK], NR_STATES, NULL);
	nanosleep = thread_us(&r.stacks, r.tids[NANOSLEEP], NR_STATES, "nanosleep");
	fprintf(stderr, "  --max-block 29ms: futex %.2f%%, stuck %.2f%%, nanosleep %.2f%% of the window\n",
		harness_percent(futex, r.window_us), harness_percent(stuck, r.window_us), harness_percent(nanosleep,
		r.window_us));
	assert_true(harness_percent(futex, r.window_us) < 5.0);
	assert_int_equal(stuck, 0);
	assert_true(harness_percent(nanosleep, r.window_us) > 90.0);
	wall_run_free(&r);
}

/* "waits sent N" from the profiler's -v output; 0 if missing. */
static uint64_t parse_waits_sent(const char *stderr_text)
{
	const char *p = strstr(stderr_text, "waits sent ");

	return p ? strtoull(p + strlen("waits sent "), NULL, 10) : 0;
}

/*
 * --wait-interval sets how many waits are recorded, not where the time
 * goes: at 2 ms every sleep and futex wait of the mix (20 and 30 ms) is
 * recorded, at 200 ms about one in eight. Both recordings still give the
 * nanosleep thread the sleep schedstat measures.
 */
static void wait_interval_sets_recorded_waits(void **state)
{
	struct wall_run fine, coarse;
	uint64_t fine_waits, coarse_waits;
	int ok;

	harness_require_root();
	record(&fine, (char *[]){ "mix", NULL },
	       (char *[]){ "-e", "wall", "--threads", "-d", "2", "-v", "--wait-interval", "2ms", NULL });
	record(&coarse, (char *[]){ "mix", NULL },
	       (char *[]){ "-e", "wall", "--threads", "-d", "2", "-v", "--wait-interval", "200ms", NULL });
	fine_waits = parse_waits_sent(fine.profiler.buf);
	coarse_waits = parse_waits_sent(coarse.profiler.buf);
	fprintf(stderr, "  waits sent: %" PRIu64 " at 2 ms, %" PRIu64 " at 200 ms\n", fine_waits, coarse_waits);
	ok = sleeps_as_schedstat_says(&fine, NANOSLEEP);
	ok &= sleeps_as_schedstat_says(&coarse, NANOSLEEP);
	assert_true(fine_waits > 0 && coarse_waits * 3 < fine_waits);
	assert_true(ok);
	wall_run_free(&fine);
	wall_run_free(&coarse);
}

static int compare_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* A thousand threads blocked for good: each there, and together 1000 windows within 1%. */
static void idle_threads_add_up(void **state)
{
	enum { IDLE_THREADS = 1000 };
	struct wall_run r;
	uint64_t total = 0;
	long *tids;
	size_t n = 0, distinct = 0;
	double error;

	harness_require_root();
	record(&r, (char *[]){ "idle", "1000", NULL },
	       (char *[]){ "-e", "wall", "--threads", "-d", "2", "-v", NULL });
	tids = calloc(r.stacks.n + 1, sizeof(*tids));
	assert_non_null(tids);
	for (size_t i = 0; i < r.stacks.n; i++)
		if (stack_thread_named(r.stacks.stacks[i], "idle")) {
			total += r.stacks.counts[i];
			tids[n++] = stack_tid(r.stacks.stacks[i]);
		}
	qsort(tids, n, sizeof(*tids), compare_long);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || tids[i] != tids[i - 1];
	free(tids);
	error = 100.0 * (double)total / ((double)IDLE_THREADS * (double)r.window_us) - 100.0;
	fprintf(stderr, "  idle: %zu threads, %" PRIu64 " us in all, %+.2f%% of %d windows\n", distinct,
		total, error, IDLE_THREADS);
	assert_int_equal(distinct, IDLE_THREADS);
	assert_true(fabs(error) <= 1.0);
	wall_run_free(&r);
}

/*
 * A fresh machine has tracefs unmounted, and the scheduler program is a
 * tracepoint one, whose id libbpf reads there: the profiler mounts it, as
 * perf does. Unmounted first (lazily: nothing else is using it now), then
 * a recording of waits must start and end well, and find the waits.
 */
static void tracefs_mounted_when_needed(void **state)
{
	struct wall_run r;
	struct stat st;

	harness_require_root();
	umount2("/sys/kernel/tracing", MNT_DETACH);
	if (stat("/sys/kernel/tracing/events", &st) == 0 || stat("/sys/kernel/debug/tracing/events", &st) == 0)
		skip(); /* still reachable (debugfs, another mount): not the state under test */
	record(&r, (char *[]){ "idle", "4", NULL }, (char *[]){ "-e", "wall", "-d", "1", "-v", NULL });
	assert_true(collapsed_count_frame(&r.stacks, "[sleeping]") > 0);
	assert_int_equal(stat("/sys/kernel/tracing/events", &st), 0);
	wall_run_free(&r);
}

/* The number of lines in s that start with "jbpfprof: ". */
static int message_lines(const char *s)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, "jbpfprof: ", 10);
	return n;
}

static int usage_error(char *const args[], const char *expected)
{
	struct child prof;
	int status = harness_run_profiler(&prof, args, 10);
	int ok = status == 2 && strstr(prof.buf, expected) && message_lines(prof.buf) == 1;

	if (!ok)
		fprintf(stderr, "  expected exit 2 and one line with \"%s\"; got %d and:\n%s\n", expected,
			status, prof.buf);
	return ok;
}

/* Usage errors exit 2 with one line that names what is wrong. */
static void usage_errors(void **state)
{
	int ok = 1;

	if (access(harness_profiler(), X_OK))
		skip();
	ok &= usage_error((char *[]){ "-a", "-e", "wall", "--state", "bogus", NULL }, "bogus");
	ok &= usage_error((char *[]){ "-a", "-e", "cpu", "--state", "sleeping", NULL }, "--state");
	ok &= usage_error((char *[]){ "-a", "--state", "sleeping", NULL }, "--state");
	ok &= usage_error((char *[]){ "-a", "--wait-interval", "20ms", NULL }, "--wait-interval");
	ok &= usage_error((char *[]){ "-a", "-e", "wall", "--wait-interval", "10us", NULL }, "--wait-interval");
	ok &= usage_error((char *[]){ "-a", "-e", "bogus", NULL }, "bogus");
	assert_true(ok);
}

static int free_mix(void **state)
{
	if (mix_recorded)
		wall_run_free(&mix_run);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(usage_errors),
		HARNESS_TEST(tracefs_mounted_when_needed),
		HARNESS_TEST(threads_add_up_to_window),
		HARNESS_TEST(sleepers_sleep_in_their_system_calls),
		HARNESS_TEST(stuck_thread_sleeps_throughout),
		HARNESS_TEST(spinner_runs),
		HARNESS_TEST(threads_match_schedstat),
		HARNESS_TEST(forced_fallbacks_match_schedstat),
		HARNESS_TEST(short_threads_count_their_lives),
		HARNESS_TEST(short_threads_split_like_schedstat),
		HARNESS_TEST(state_filter_keeps_sleeping),
		HARNESS_TEST(offcpu_mode_has_no_running),
		HARNESS_TEST(max_block_drops_long_waits),
		HARNESS_TEST(wait_interval_sets_recorded_waits),
		HARNESS_TEST(idle_threads_add_up),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("wall clock", tests, NULL, free_mix);
}
