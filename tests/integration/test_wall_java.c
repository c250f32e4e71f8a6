/*
 * Wall-clock mode on Java, end to end: the real profiler with
 * "-e wall --threads -v -d 4" attached with -p to a JVM started with no
 * special flags, on JDK 17 and on JDK 25, running
 * tests/workloads/java/WallWorkload.java (class files in $JAVA_CLASSES, by
 * default the java/ directory beside $WORKLOAD_DIR). Each JDK is recorded
 * twice: with the Java stacks walked by BPF (the default: a wait's Java
 * stack walked at its switch-out, no agent, no signal) and with
 * --java-stacks agent (the agent's signal, deferred to the return to user
 * mode, and its thread stacks at the end).
 *
 * WallWorkload has one thread per way to spend time, each named and each in
 * a method of its own: spinner (WallWorkload.spinLoop, on a CPU), sleeper
 * (sleepLoop, Thread.sleep), waiter (waitLoop, Object.wait), parker
 * (parkLoop, LockSupport.parkNanos), reader (readLoop, one read(2) that never
 * returns), holder (holdLoop, Thread.sleep holding a lock) and monitor
 * (monitorLoop, blocked entering that lock).
 *
 * In wall mode a collapsed line's count is microseconds, its first frame
 * (with --threads) is "[<thread name> tid=<tid>]" and its last frame the
 * thread's state: [running], [runnable], [sleeping] or [blocked]. With -v the
 * profiler prints the recording's exact length as "window: <N> us". What
 * must hold (the contract in the wall-clock mode's specification):
 *
 *   - every thread alive through the recording sums to the window, within
 *     1%, and the window covers the -d 4 s (and not a second more);
 *   - a thread that waits spends at least 95% of that time off the CPU in
 *     stacks that have its method's Java frame: its Java stack is known for
 *     each blocking episode, also one that began before the recording or
 *     lasts past its end (reader blocks in one read the whole time), and
 *     without a signal that would cut the wait short;
 *   - the spinner spends at least 95% [running] or [runnable] in spinLoop;
 *   - the workload saw no exception, no read return and no wait, park or
 *     sleep end early, and its sleeper's completed sleeps fit in the time
 *     it slept ("sleeps N", "elapsed_ms M": N * 200 <= M);
 *   - the JVM's own threads that run no Java (the periodic task) have
 *     their waits recorded without a signal (with the agent);
 *   - walked by BPF, the agent is never mapped into the JVM (no signal
 *     can have been sent), and the waiting threads but the reader (one
 *     read since before the recording: no switch-out to walk it at) have
 *     their method's Java frame for 90% of their time off the CPU (the
 *     wait under way at the start is not walked either).
 *
 * The workload prints each thread's tid ("tid <tid> <name>"), and the thread
 * frames must agree with it.
 *
 * One recording per JDK, made by the first test that needs it and read by
 * the others, so each check passes or fails on its own.
 *
 * JDK paths: $JAVA17 and $JAVA25 override the Debian and Temurin defaults; a
 * JDK that is not there skips its variants with a message.
 */
#include "harness.h"
#include "jvm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The recording: -d 4, in seconds, and the accounting tolerance, 1% of the window. */
#define WALL_SECONDS 4
#define STRINGIFY(x) #x
#define STR(x) STRINGIFY(x)
#define WINDOW_TOLERANCE_PERCENT 1.0
/* Share of a thread's time that must be in its own method (and state). */
#define IN_METHOD_PERCENT 95.0
/*
 * Walked by BPF, a waiting thread's wait under way when the recording
 * starts has no switch-out in the window to be walked at: it keeps the
 * frame-pointer user stack read at its system call's return, without
 * Java frames. WallWorkload's waits are at most 300 ms of the 4 s.
 */
#define IN_METHOD_BPF_PERCENT 90.0
/*
 * The kernel does not report every context switch (bpf/offcpu.bpf.c); a
 * wait whose switch went unseen has no stacks, and says so in this frame.
 * Such time is no fault of the walk, so it is left out of a thread's time
 * when its method's share is taken, up to this share of the thread's time.
 */
#define SWITCH_UNSEEN_FRAME "[user stack: its context switch was not seen]"
#define SWITCH_UNSEEN_MAX_PERCENT 10.0
/* WallWorkload's sleeper sleeps this long each time. */
#define SLEEP_MS 200
/* The agent, as a JVM maps it once loaded (libjbpfagent.so, or the copy an attach writes). */
#define AGENT_MAPPING "jbpfagent"

/* WallWorkload's threads, and the method each spends its time in. */
enum wall_thread { SPINNER, SLEEPER, WAITER, PARKER, READER, HOLDER, MONITOR, N_THREADS };

static const struct {
	const char *name;   /* the Java thread name, and the kernel's */
	const char *method; /* its Java frame */
} threads[N_THREADS] = {
	[SPINNER] = { "spinner", "WallWorkload.spinLoop" },
	[SLEEPER] = { "sleeper", "WallWorkload.sleepLoop" },
	[WAITER] = { "waiter", "WallWorkload.waitLoop" },
	[PARKER] = { "parker", "WallWorkload.parkLoop" },
	[READER] = { "reader", "WallWorkload.readLoop" },
	[HOLDER] = { "holder", "WallWorkload.holdLoop" },
	[MONITOR] = { "monitor", "WallWorkload.monitorLoop" },
};

enum wall_state { RUNNING, RUNNABLE, SLEEPING, BLOCKED, NO_STATE, N_STATES };

static const char *const state_frames[N_STATES] = { "[running]", "[runnable]", "[sleeping]", "[blocked]", "other" };

/* One thread's time in the profile, in microseconds. */
struct thread_time {
	uint64_t total;
	uint64_t by_state[N_STATES];    /* by the stack's last frame */
	uint64_t in_method_off_cpu;     /* its method's frame, and not [running] (may be [runnable]) */
	uint64_t in_method_on_cpu;      /* its method's frame, and [running] or [runnable] */
	uint64_t other_tid;             /* under its name, but not the tid the workload printed */
	uint64_t other_name;            /* under its tid, but another name */
	uint64_t switch_unseen;         /* waits whose context switch the kernel did not report */
	size_t lines;
};

/* One JDK's recording of WallWorkload, and what the tests read from it. */
struct wall_run {
	const struct jdk *jdk;
	const char *java_stacks;        /* --java-stacks, or NULL for the default (bpf) */
	const char *force_fallback;     /* JBPFPROF_FORCE_FALLBACK for the profiler, or NULL */
	int recorded;                   /* 1 done, -1 tried and failed, 0 not yet */
	int agent_mapped;               /* the JVM mapped the agent by the end of the recording */
	unsigned long long window_us;   /* "window: N us" */
	long long vm_waits_unsignalled; /* "not signalled: N waits" (-v), -1 if missing */
	long tids[N_THREADS];           /* "tid <tid> <name>" from the workload */
	struct thread_time time[N_THREADS];
	long long errors, sleeps, elapsed_ms;
	struct collapsed stacks;
};

static struct wall_run jdk17_run = { .jdk = &jdk17, .java_stacks = "agent" };
static struct wall_run jdk25_run = { .jdk = &jdk25, .java_stacks = "agent" };
static struct wall_run jdk17_bpf_run = { .jdk = &jdk17 };
static struct wall_run jdk25_bpf_run = { .jdk = &jdk25 };
/* Walked by BPF, the threads' ends read without the map's iterator (Linux 6.1's way). */
static struct wall_run jdk17_task_iter_run = { .jdk = &jdk17, .force_fallback = "map-elem-iter" };

/* The run's name in messages: "JDK 17" with the agent, "JDK 17 (BPF)" walked. */
static const char *run_name(const struct wall_run *run)
{
	static char names[2][64];
	static int next;
	char *name = names[next++ & 1];

	snprintf(name, sizeof(names[0]), "%s%s%s", run->jdk->name, run->java_stacks ? "" : " (BPF)",
		 run->force_fallback ? " (fallback forced)" : "");
	return name;
}

/* Whether process pid maps a file whose path has what in it. */
static int maps_have(pid_t pid, const char *what)
{
	char path[64], line[4096];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/* Prints the lines of the profiler's stderr that start with one of the prefixes. */
static void print_profiler_lines(const char *name, const char *buf, const char *const prefixes[])
{
	for (const char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		for (int i = 0; prefixes[i]; i++)
			if (!strncmp(p, prefixes[i], strlen(prefixes[i]))) {
				fprintf(stderr, "  %s: %.*s\n", name, (int)strcspn(p, "\n"), p);
				break;
			}
}

/* Whether the ';'-separated stack has a frame that is name (see collapsed_frame_is). */
static int stack_has(const char *stack, const char *name)
{
	for (const char *p = stack;;) {
		size_t len = strcspn(p, ";");

		if (collapsed_frame_is(p, len, name))
			return 1;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * The thread of a stack whose first frame is "[<name> tid=<tid>]": index in
 * threads[] by name, or -1 for another thread or a stack without a thread
 * frame. *tid, if not NULL, gets the frame's tid (-1 without a thread frame).
 */
static int stack_thread(const char *stack, long *tid)
{
	size_t len = strcspn(stack, ";");
	const char *at = NULL;

	if (tid)
		*tid = -1;
	if (stack[0] != '[' || len < 2 || stack[len - 1] != ']')
		return -1;
	/* The name may hold spaces: the tid is after the last " tid=" of the frame. */
	for (const char *p = stack; (p = strstr(p, " tid=")) && p < stack + len; p++)
		at = p;
	if (!at)
		return -1;
	if (tid)
		*tid = atol(at + 5);
	for (int i = 0; i < N_THREADS; i++) {
		size_t name_len = strlen(threads[i].name);

		if ((size_t)(at - stack - 1) == name_len && !strncmp(stack + 1, threads[i].name, name_len))
			return i;
	}
	return -1;
}

/* The workload's "tid <tid> <name>" lines, into run->tids (-1 for a thread it did not name). */
static void read_tids(struct wall_run *run, const struct child *workload)
{
	for (int t = 0; t < N_THREADS; t++)
		run->tids[t] = -1;
	for (const char *p = workload->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char name[32];
		long tid;

		if (sscanf(p, "tid %ld %31s", &tid, name) != 2)
			continue;
		for (int t = 0; t < N_THREADS; t++)
			if (!strcmp(name, threads[t].name))
				run->tids[t] = tid;
	}
}

static enum wall_state stack_state(const char *stack)
{
	const char *last = strrchr(stack, ';');

	last = last ? last + 1 : stack;
	for (int s = 0; s < NO_STATE; s++)
		if (!strcmp(last, state_frames[s]))
			return s;
	return NO_STATE;
}

/* Sums each thread's lines: total, by state, and in its method on and off the CPU. */
static void account(struct wall_run *run)
{
	memset(run->time, 0, sizeof(run->time));
	for (size_t i = 0; i < run->stacks.n; i++) {
		const char *stack = run->stacks.stacks[i];
		uint64_t us = run->stacks.counts[i];
		long tid;
		int t = stack_thread(stack, &tid);
		enum wall_state s;

		/* A thread of the workload's under a name not its own. */
		for (int k = 0; k < N_THREADS; k++)
			if (k != t && tid >= 0 && tid == run->tids[k])
				run->time[k].other_name += us;
		if (t < 0)
			continue;
		if (tid != run->tids[t])
			run->time[t].other_tid += us;
		s = stack_state(stack);
		run->time[t].total += us;
		run->time[t].by_state[s] += us;
		run->time[t].lines++;
		if (strstr(stack, SWITCH_UNSEEN_FRAME))
			run->time[t].switch_unseen += us;
		if (stack_has(stack, threads[t].method)) {
			if (s == RUNNING || s == RUNNABLE)
				run->time[t].in_method_on_cpu += us;
			if (s != RUNNING)
				run->time[t].in_method_off_cpu += us;
		}
	}
}

/* One line per thread: its total against the window, its states, its time in its method. */
static void print_times(const struct wall_run *run)
{
	fprintf(stderr, "  %s: window %llu us; errors %lld, sleeps %lld, elapsed_ms %lld\n", run_name(run),
		run->window_us, run->errors, run->sleeps, run->elapsed_ms);
	for (int t = 0; t < N_THREADS; t++) {
		const struct thread_time *tt = &run->time[t];

		fprintf(stderr,
			"  %s %-7s %9llu us (%6.2f%% of the window, %zu lines): running %.1f%% runnable %.1f%% "
			"sleeping %.1f%% blocked %.1f%% other %.1f%%; in %s: %.1f%% not running, "
			"%.1f%% running or runnable\n",
			run_name(run), threads[t].name, (unsigned long long)tt->total,
			harness_percent(tt->total, run->window_us), tt->lines, harness_percent(tt->by_state[RUNNING],
			tt->total),
			harness_percent(tt->by_state[RUNNABLE], tt->total), harness_percent(tt->by_state[SLEEPING],
			tt->total),
			harness_percent(tt->by_state[BLOCKED], tt->total), harness_percent(tt->by_state[NO_STATE],
			tt->total),
			threads[t].method, harness_percent(tt->in_method_off_cpu, tt->total),
			harness_percent(tt->in_method_on_cpu, tt->total));
	}
}

/* The thread's heaviest stacks that miss its method (or, with on_cpu, its on-CPU state), for a failure. */
static void print_other_stacks(const struct wall_run *run, int t, int on_cpu)
{
	const size_t top = 5;
	size_t shown[5], n = 0;

	for (; n < top; n++) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < run->stacks.n; i++) {
			const char *stack = run->stacks.stacks[i];
			enum wall_state s = stack_state(stack);
			int in = stack_has(stack, threads[t].method) &&
				 (on_cpu ? s == RUNNING || s == RUNNABLE : s != RUNNING);
			int seen = 0;

			for (size_t k = 0; k < n; k++)
				seen |= shown[k] == i;
			if (seen || in || stack_thread(stack, NULL) != t)
				continue;
			if (best == SIZE_MAX || run->stacks.counts[i] > run->stacks.counts[best])
				best = i;
		}
		if (best == SIZE_MAX)
			break;
		shown[n] = best;
	}
	/* Heaviest last, next to the failure, where a cut log still shows it. */
	while (n--)
		fprintf(stderr, "    %llu us: %s\n", (unsigned long long)run->stacks.counts[shown[n]],
			run->stacks.stacks[shown[n]]);
}

/*
 * Records WallWorkload on the JDK: starts it, runs the profiler from its
 * "sampling" line to its end, stops the JVM for the truth, and sums the
 * profile. Fails unless the profiler exits 0 with the agent loaded, prints
 * the window and writes a profile that parses, and the JVM stops cleanly.
 */
static void record(struct wall_run *run)
{
	static const char *const summary[] = { "jbpfprof:", "window:", NULL };
	char pid[16], *file;
	struct child profiler;
	struct jvm jvm;
	const char *window, *unsignalled;
	int status;

	run->recorded = -1;
	jvm_start(&jvm, run->jdk, "WallWorkload", NULL);
	file = harness_path(jvm.dir, "wall.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	if (run->force_fallback)
		setenv("JBPFPROF_FORCE_FALLBACK", run->force_fallback, 1);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "wall", "--threads", "-v",
									"-d", STR(WALL_SECONDS), "-f", file,
									run->java_stacks ? "--java-stacks" : NULL,
									(char *)run->java_stacks, NULL }),
			 0);
	unsetenv("JBPFPROF_FORCE_FALLBACK");
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 30)) {
		fprintf(stderr, "the profiler did not start sampling in 30 s; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	status = harness_finish(&profiler, 60);
	print_profiler_lines(run_name(run), profiler.buf, summary);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
	assert_int_equal(status, 0);
	if (run->java_stacks)
		jvm_assert_agent_loaded(&profiler);
	if (run->force_fallback)
		assert_non_null(strstr(profiler.buf, "jbpfprof: fallback: "));
	run->agent_mapped = maps_have(jvm.out.pid, AGENT_MAPPING);
	window = strstr(profiler.buf, "window: ");
	if (!window || sscanf(window, "window: %llu us", &run->window_us) != 1) {
		fprintf(stderr, "no \"window: N us\" on the profiler's stderr:\n%s\n", profiler.buf);
		fail();
	}
	unsignalled = strstr(profiler.buf, "not signalled: ");
	if (!unsignalled || sscanf(unsignalled, "not signalled: %lld waits", &run->vm_waits_unsignalled) != 1)
		run->vm_waits_unsignalled = -1;
	assert_int_equal(collapsed_load(file, &run->stacks), 0);
	free(file);
	read_tids(run, &jvm.out);
	jvm_stop(&jvm);
	run->errors = harness_truth(&jvm.out, "errors");
	run->sleeps = harness_truth(&jvm.out, "sleeps");
	run->elapsed_ms = harness_truth(&jvm.out, "elapsed_ms");
	account(run);
	print_times(run);
	run->recorded = 1;
}

/* The JDK's recording, made now if no test made it yet; fails if it was tried and failed. */
static struct wall_run *recorded(void **state)
{
	struct wall_run *run = *state;

	jvm_require(run->jdk, "WallWorkload");
	if (run->recorded == 0)
		record(run);
	if (run->recorded < 0) {
		fprintf(stderr, "%s: the recording failed in an earlier test\n", run_name(run));
		fail();
	}
	return run;
}

/*
 * Each thread's lines sum to the window within 1%. The window itself must
 * cover the -d 4 s, and not by much more: it may begin before the sampler is
 * attached (loading the BPF programs takes a few hundred ms under ASan), so
 * a second is allowed.
 */
static void wall_java_threads_fill_window(void **state)
{
	const struct wall_run *run = recorded(state);
	int failed = 0;

	for (int t = 0; t < N_THREADS; t++) {
		double off = harness_percent(run->time[t].total, run->window_us) - 100.0;

		if (off > WINDOW_TOLERANCE_PERCENT || off < -WINDOW_TOLERANCE_PERCENT) {
			fprintf(stderr, "  %s: %s sums to %llu us, %+.2f%% off the window of %llu us\n", run_name(run),
				threads[t].name, (unsigned long long)run->time[t].total, off, run->window_us);
			failed = 1;
		}
	}
	fprintf(stderr, "  %s: window %llu us, %+lld us from -d %d\n", run_name(run), run->window_us,
		(long long)run->window_us - WALL_SECONDS * 1000000LL, WALL_SECONDS);
	assert_in_range(run->window_us, WALL_SECONDS * 1000000ULL, (WALL_SECONDS + 1) * 1000000ULL);
	assert_false(failed);
}

/*
 * The thread frames name the threads right: every line under a thread's
 * name has the tid the workload printed for it, and no line with that tid
 * has another name.
 */
static void wall_java_thread_frames_name_the_threads(void **state)
{
	const struct wall_run *run = recorded(state);
	int failed = 0;

	for (int t = 0; t < N_THREADS; t++) {
		const struct thread_time *tt = &run->time[t];

		if (run->tids[t] < 0) {
			fprintf(stderr, "  %s: the workload printed no tid for %s\n", run_name(run), threads[t].name);
			failed = 1;
		} else if (tt->other_tid || tt->other_name) {
			fprintf(stderr, "  %s: %s (tid %ld): %llu us under its name with another tid, %llu us under "
				"its tid with another name\n", run_name(run), threads[t].name, run->tids[t],
				(unsigned long long)tt->other_tid, (unsigned long long)tt->other_name);
			failed = 1;
		}
	}
	assert_false(failed);
}

/*
 * The threads that wait: 95% of their time off the CPU with their method's
 * frame, the time of waits whose switch went unseen left out (at most 10%).
 */
static void wall_java_waiting_threads_in_their_method(void **state)
{
	static const enum wall_thread waiting[] = { SLEEPER, WAITER, PARKER, READER, HOLDER, MONITOR };
	const struct wall_run *run = recorded(state);
	int failed = 0;

	for (size_t i = 0; i < sizeof(waiting) / sizeof(waiting[0]); i++) {
		int t = waiting[i];
		const struct thread_time *tt = &run->time[t];
		uint64_t seen = tt->total - tt->switch_unseen;

		/*
		 * The reader waits in one read(2) from before the recording to
		 * after it: no switch-out in the window, so nothing walked its
		 * stack (docs/architecture.md, Known limits). The agent's
		 * thread stacks at the end give it one.
		 */
		if (t == READER && !run->java_stacks)
			continue;
		if (tt->total && harness_percent(tt->switch_unseen, tt->total) <= SWITCH_UNSEEN_MAX_PERCENT &&
		    harness_percent(tt->in_method_off_cpu,
		    seen) >= (run->java_stacks ? IN_METHOD_PERCENT : IN_METHOD_BPF_PERCENT))
			continue;
		fprintf(stderr,
			"  %s: %s has %.1f%% of its %llu us off the CPU in %s (%llu us of waits whose switch was "
			"not seen left out); its heaviest other stacks, heaviest last:\n",
			run_name(run), threads[t].name, harness_percent(tt->in_method_off_cpu, seen),
			(unsigned long long)tt->total, threads[t].method, (unsigned long long)tt->switch_unseen);
		print_other_stacks(run, t, 0);
		failed = 1;
	}
	assert_false(failed);
}

/* The spinner: 95% of its time [running] or [runnable] in WallWorkload.spinLoop. */
static void wall_java_spinner_on_cpu_in_spin_loop(void **state)
{
	const struct wall_run *run = recorded(state);
	const struct thread_time *tt = &run->time[SPINNER];

	if (!tt->total || harness_percent(tt->in_method_on_cpu, tt->total) < IN_METHOD_PERCENT) {
		fprintf(stderr,
			"  %s: spinner has %.1f%% of its %llu us on the CPU in %s; "
			"its heaviest other stacks, heaviest last:\n",
			run_name(run), harness_percent(tt->in_method_on_cpu, tt->total), (unsigned long long)tt->total,
			threads[SPINNER].method);
		print_other_stacks(run, SPINNER, 1);
		fail();
	}
}

/*
 * No wait was cut short: the workload counted no exception, no read that
 * returned and no wait, park or sleep that ended early, and the sleeper's
 * completed 200 ms sleeps fit in the time since its first.
 */
static void wall_java_no_wait_cut_short(void **state)
{
	const struct wall_run *run = recorded(state);

	assert_int_equal(run->errors, 0);
	/* It slept through the recording: at least the window's worth of sleeps, less the one at each end. */
	assert_true(run->sleeps >= (long long)(run->window_us / 1000 / SLEEP_MS) - 2);
	if (run->sleeps * SLEEP_MS > run->elapsed_ms)
		fprintf(stderr, "  %s: %lld sleeps of %d ms in %lld ms: some were cut short\n", run_name(run),
			run->sleeps, SLEEP_MS, run->elapsed_ms);
	assert_true(run->sleeps * SLEEP_MS <= run->elapsed_ms);
}

/*
 * The agent's own thread ("jbpfprof agent") wakes every few milliseconds:
 * those waits are the profiler's, and none is recorded (bpf/offcpu.bpf.c).
 * Its time is still there, under its name, but no more than a quarter of
 * its time off the CPU may be in stacks with its user frames:
 * its first wait, which began before the recording, is the only one with
 * stacks; the rest are waits not recorded, and the one still going on at
 * the end. Were every wait recorded, nearly all of it would be.
 */
#define AGENT_THREAD_FRAME "[jbpfprof agent tid="
#define AGENT_RECORDED_MAX_PERCENT 25.0

static void wall_java_agent_thread_records_no_wait(void **state)
{
	const struct wall_run *run = recorded(state);
	uint64_t total = 0, off_cpu = 0, recorded_off_cpu = 0;

	for (size_t i = 0; i < run->stacks.n; i++) {
		const char *stack = run->stacks.stacks[i];
		enum wall_state st = stack_state(stack);

		if (strncmp(stack, AGENT_THREAD_FRAME, strlen(AGENT_THREAD_FRAME)))
			continue;
		total += run->stacks.counts[i];
		if (st == RUNNING)
			continue;
		off_cpu += run->stacks.counts[i];
		/* A user stack of the agent's thread has HotSpot's JvmtiAgentThread:: frame that starts it. */
		if (strstr(stack, ";JvmtiAgentThread::"))
			recorded_off_cpu += run->stacks.counts[i];
	}
	fprintf(stderr, "  %s: agent thread %llu us, %llu us off the CPU, %.1f%% of that in recorded waits\n",
		run_name(run), (unsigned long long)total, (unsigned long long)off_cpu,
		harness_percent(recorded_off_cpu, off_cpu));
	assert_true(off_cpu > 0);
	assert_true(harness_percent(recorded_off_cpu, off_cpu) <= AGENT_RECORDED_MAX_PERCENT);
}

/*
 * A VM thread's waits are not signalled for a Java stack it does not have
 * (runs_no_java in bpf/shared.bpf.h): once the agent has said the thread
 * runs no Java, its waits keep their native stacks and cost the JVM no
 * signal. The VM's periodic task alone wakes every 50 ms, each time a
 * recorded wait, so at least one such wait a second must have gone
 * unsignalled. Were waits signalled as they were before, none would be.
 */
#define VM_WAITS_UNSIGNALLED_MIN_PER_S 1

static void wall_java_vm_thread_waits_not_signalled(void **state)
{
	const struct wall_run *run = recorded(state);

	fprintf(stderr, "  %s: %lld waits of VM threads not signalled\n", run_name(run), run->vm_waits_unsignalled);
	assert_true(run->vm_waits_unsignalled >= VM_WAITS_UNSIGNALLED_MIN_PER_S * WALL_SECONDS);
}

/*
 * Walked by BPF: no signal was sent and nothing was loaded into the JVM
 * (the agent is not among its mappings), and the summary says the JVM's
 * Java frames were walked. The waits' Java frames are the other tests'.
 */
static void wall_java_bpf_no_agent_no_signal(void **state)
{
	const struct wall_run *run = recorded(state);

	fprintf(stderr, "  %s: agent mapped: %d\n", run_name(run), run->agent_mapped);
	assert_int_equal(run->agent_mapped, 0);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, &jdk##_run }
#define JDK_TESTS(f) JDK_TEST(f, jdk17), JDK_TEST(f, jdk25)
#define BPF_TESTS(f) JDK_TEST(f, jdk17_bpf), JDK_TEST(f, jdk25_bpf)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BPF_TESTS(wall_java_threads_fill_window),
		BPF_TESTS(wall_java_thread_frames_name_the_threads),
		BPF_TESTS(wall_java_waiting_threads_in_their_method),
		BPF_TESTS(wall_java_spinner_on_cpu_in_spin_loop),
		BPF_TESTS(wall_java_no_wait_cut_short),
		BPF_TESTS(wall_java_bpf_no_agent_no_signal),
		JDK_TEST(wall_java_threads_fill_window, jdk17_task_iter),
		JDK_TEST(wall_java_waiting_threads_in_their_method, jdk17_task_iter),
		JDK_TEST(wall_java_bpf_no_agent_no_signal, jdk17_task_iter),
		JDK_TESTS(wall_java_threads_fill_window),
		JDK_TESTS(wall_java_thread_frames_name_the_threads),
		JDK_TESTS(wall_java_waiting_threads_in_their_method),
		JDK_TESTS(wall_java_spinner_on_cpu_in_spin_loop),
		JDK_TESTS(wall_java_no_wait_cut_short),
		JDK_TESTS(wall_java_agent_thread_records_no_wait),
		JDK_TESTS(wall_java_vm_thread_waits_not_signalled),
	};
	int failed;

	harness_filter_tests();
	failed = cmocka_run_group_tests_name("wall_java", tests, NULL, NULL);

	collapsed_free(&jdk17_run.stacks);
	collapsed_free(&jdk25_run.stacks);
	collapsed_free(&jdk17_bpf_run.stacks);
	collapsed_free(&jdk25_bpf_run.stacks);
	collapsed_free(&jdk17_task_iter_run.stacks);
	return failed;
}
