/*
 * Java, end to end: the real profiler attached with -p to real JVMs started
 * with no special flags, once on JDK 17 and once on JDK 25, running the
 * workloads in tests/workloads/java/ (class files in $JAVA_CLASSES, by
 * default the java/ directory beside $WORKLOAD_DIR).
 *
 * What the output must show (collapsed stacks, root first): Java frames
 * named package.Class.method, outermost first, then the native frames they
 * called, then kernel frames (_[k]). With --annotate a Java frame ends in
 * _[j], _[i] or _[0]; with --threads each stack starts with a
 * [<thread name> tid=<tid>] frame. Java frames come from the default, the
 * BPF walk of HotSpot's frames, except in the tests of the agent's own
 * ways (--java-stacks agent), whose summary line on stderr says "Java
 * stacks: J of N joined"; tests/integration/test_java_walk.c checks the
 * walk against the agent.
 *
 * Each JVM runs in a temporary directory of its own, so a crash report
 * (hs_err_pid*.log) it writes there is found; every test looks for one.
 * JDK paths: $JAVA17 and $JAVA25 override the Debian and Temurin defaults; a
 * JDK that is not there skips its variants with a message.
 */
#include "harness.h"
#include "jvm.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The test's JDK (its state), once jvm_require lets it run; CpuSplit stands for the built classes. */
static const struct jdk *require_java(void **state)
{
	jvm_require(*state, "CpuSplit");
	return *state;
}



/* The last heartbeat ("alive N") the JVM printed, 0 if none yet. */
static long last_heartbeat(const struct child *c)
{
	long last = 0;

	for (const char *p = strstr(c->buf, "alive "); p; p = strstr(p + 1, "alive "))
		if (p == c->buf || p[-1] == '\n')
			last = atol(p + 6);
	return last;
}

/* Reads what the child has written so far, without waiting. */
static void drain(struct child *c)
{
	struct pollfd p = { .fd = c->out_fd, .events = POLLIN };
	ssize_t n;

	while (c->len + 1 < sizeof(c->buf) && poll(&p, 1, 0) == 1 &&
	       (n = read(c->out_fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len)) > 0) {
		c->len += (size_t)n;
		c->buf[c->len] = '\0';
	}
}

/*
 * Waits (timeout_s at most) for beats more heartbeats than the JVM has
 * printed so far; what sits unread in the pipe counts as printed.
 */
static int wait_heartbeats(struct child *c, long beats, int timeout_s)
{
	char line[32];

	drain(c);
	snprintf(line, sizeof(line), "\nalive %ld\n", last_heartbeat(c) + beats);
	return harness_wait_for(c, line, timeout_s);
}

/*
 * Records the JVM: the profiler with "-p PID -f FILE" and args, to the end.
 * Fails unless it exits 0 with the agent loaded and FILE parses.
 */
static void record_until(struct child *profiler, struct collapsed *stacks, const struct jvm *jvm, char *const args[],
			 long long cpu_ms, int timeout_s)
{
	char pid[16], *file = harness_path(jvm->dir, "profile.collapsed"), *argv[48] = { "-p", pid, "-f", file };
	size_t n = 4;
	int status;

	snprintf(pid, sizeof(pid), "%d", (int)jvm->out.pid);
	for (size_t i = 0; args[i] && n + 1 < 48; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	status = cpu_ms ? harness_run_profiler_cpu(profiler, argv, jvm->out.pid, cpu_ms, timeout_s)
			: harness_run_profiler(profiler, argv, timeout_s);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler->buf);
	assert_int_equal(status, 0);
	jvm_assert_agent_loaded(profiler);
	assert_int_equal(collapsed_load(file, stacks), 0);
	unlink(file);
	free(file);
}

/* Records the JVM with args (which end it with -d). */
static void record(struct child *profiler, struct collapsed *stacks, const struct jvm *jvm, char *const args[],
		   int timeout_s)
{
	record_until(profiler, stacks, jvm, args, 0, timeout_s);
}

/* Prints the summary's Java part (with the reasons for stacks not joined), if there is one. */
static void print_java_summary(const struct jdk *jdk, const struct child *profiler)
{
	const char *p = strstr(profiler->buf, "Java stacks: ");

	if (p)
		fprintf(stderr, "  %s: %.*s\n", jdk->name, (int)strcspn(p, "\n"), p);
}


static int ends_with(const char *s, const char *suffix)
{
	size_t len = strlen(s), slen = strlen(suffix);

	return len >= slen && !strcmp(s + len - slen, suffix);
}

static int is_java_frame(const char *frame)
{
	return ends_with(frame, "_[j]") || ends_with(frame, "_[i]") || ends_with(frame, "_[0]");
}


/* Index of the first frame starting with prefix, or -1. */
static int find_prefix(const struct frames *fr, const char *prefix)
{
	for (int i = 0; i < fr->n; i++)
		if (!strncmp(fr->f[i], prefix, strlen(prefix)))
			return i;
	return -1;
}

/* Samples whose stack has a frame that is name (with or without an annotation). */
static uint64_t count_frame(const struct collapsed *c, const char *name)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		if (find_frame(&fr, 0, name) >= 0)
			n += c->counts[i];
		free(fr.buf);
	}
	return n;
}

/*
 * With --threads: samples of the threads whose name starts with thread (the
 * first frame is "[<name> tid=..."), and how many of them have a frame
 * starting with java_prefix.
 */
static void count_thread_java(const struct collapsed *c, const char *thread, const char *java_prefix,
			      uint64_t *on_thread, uint64_t *with_java)
{
	char root[64];

	snprintf(root, sizeof(root), "[%s", thread);
	*on_thread = *with_java = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], root, strlen(root))) {
			*on_thread += c->counts[i];
			if (find_prefix(&fr, java_prefix) >= 0)
				*with_java += c->counts[i];
		}
		free(fr.buf);
	}
}

/* CpuSplit's three methods: frame names and the truth names it prints. */
static const char *const share_frames[] = { "CpuSplit.share50", "CpuSplit.share30", "CpuSplit.share20" };
static const char *const share_truths[] = { "share50", "share30", "share20" };

/*
 * Profiles CpuSplit run with wargs, with the profiler's args, until the JVM
 * has used cpu_ms of CPU time, and returns the worst difference in
 * percentage points between a method's share of the three methods' samples
 * and its share of their CPU time.
 */
static double cpu_split_worst_error(const struct jdk *jdk, char *const wargs[], char *const args[], long long cpu_ms,
				    uint64_t *samples)
{
	long long truth[3], truth_total = 0;
	uint64_t n[3], counted = 0;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	double worst = 0;

	jvm_start(&jvm, jdk, "CpuSplit", wargs);
	record_until(&profiler, &stacks, &jvm, args, cpu_ms, 600);
	jvm_stop(&jvm);
	for (int i = 0; i < 3; i++) {
		n[i] = count_frame(&stacks, share_frames[i]);
		counted += n[i];
		truth[i] = harness_truth(&jvm.out, share_truths[i]);
		assert_true(truth[i] > 0);
		truth_total += truth[i];
	}
	print_java_summary(jdk, &profiler);
	assert_true(counted > 0);
	for (int i = 0; i < 3; i++) {
		double measured = harness_percent(n[i], counted), real = 100.0 * (double)truth[i] / (double)truth_total;

		fprintf(stderr, "  %s %s: measured %.1f%%, truth %.1f%% (%llu samples)\n", jdk->name, share_frames[i],
			measured, real, (unsigned long long)n[i]);
		worst = fmax(worst, fabs(measured - real));
	}
	*samples = counted;
	collapsed_free(&stacks);
	return worst;
}

/* 50/30/20 split by thread CPU time, two threads, 997 Hz for 16 s of CPU: within 2 pp. */
static void cpu_split_shares(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t samples;
	double worst = cpu_split_worst_error(jdk, (char *[]){ "-t", "2", NULL },
					     (char *[]){ "-F", "997", NULL }, 16000, &samples);

	/*
	 * 16 s of the JVM's CPU at 997 Hz, most of it the two workers': some
	 * 15,000 samples, and those of the moments the profiler takes to stop.
	 */
	assert_in_range(samples, 10000, 18000);
	assert_true(worst <= harness_share_tolerance(samples, 2.0));
}

/*
 * Phases on a 10 ms cycle of CLOCK_MONOTONIC, one thread pinned per CPU,
 * sampled at 100 Hz on average: randomised intervals stay within 3 pp
 * (wider with fewer samples).
 */
static void cpu_split_no_aliasing_at_100_hz(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t samples;
	double worst = cpu_split_worst_error(jdk, (char *[]){ "-t", "2", "-c", "10", "-p", "-w", NULL },
					     (char *[]){ "-F", "100", NULL }, 40000, &samples);

	/* 40 s of the JVM's CPU at 100 Hz, most of it the two workers': some 3,800 samples. */
	assert_true(samples >= 2500);
	assert_true(worst <= harness_share_tolerance(samples, 3.0));
}

/* The control: with --fixed-interval the same workload aliases, so the test above can fail. */
static void cpu_split_fixed_interval_aliases(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t samples;
	double worst = cpu_split_worst_error(jdk, (char *[]){ "-t", "2", "-c", "10", "-p", "-w", NULL },
					     (char *[]){ "-F", "100", "--fixed-interval", NULL }, 10000, &samples);

	/* 10 s of CPU at 100 Hz: some 950 samples. */
	assert_true(samples > 300);
	assert_true(worst > 10.0);
}

/*
 * JniDeflate's threads spend nearly all their time in zlib. Among samples
 * whose stack has the loop method JniDeflate.deflateLoop, at least 95% must
 * also have Deflater's native method java.util.zip.Deflater.deflateBytesBytes
 * (its name on JDK 17 and 25) under it, followed by at least one frame that
 * is not a Java frame: the native code it called, joined under it.
 */
static void deflate_native_frames_under_java(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t in_loop = 0, with_native = 0, on_threads, with_loop;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "JniDeflate", (char *[]){ "2", NULL });
	record_until(&profiler, &stacks, &jvm, (char *[]){ "-F", "997", "--threads", "--annotate", NULL }, 10000, 600);
	jvm_stop(&jvm);
	assert_true(harness_truth(&jvm.out, "rounds") > 0);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		int loop, native;

		frames_split(&fr, stacks.stacks[i]);
		loop = find_frame(&fr, 0, "JniDeflate.deflateLoop");
		if (loop >= 0) {
			in_loop += stacks.counts[i];
			native = find_frame(&fr, loop + 1, "java.util.zip.Deflater.deflateBytesBytes");
			if (native >= 0 && native + 1 < fr.n && !is_java_frame(fr.f[native + 1]))
				with_native += stacks.counts[i];
		}
		free(fr.buf);
	}
	count_thread_java(&stacks, "deflate-", "JniDeflate.deflateLoop", &on_threads, &with_loop);
	fprintf(stderr,
		"  %s: %llu samples in JniDeflate.deflateLoop, %.1f%% with native frames under "
		"Deflater.deflateBytesBytes; %.1f%% of the deflate threads' %llu samples are in the loop\n",
		jdk->name, (unsigned long long)in_loop, harness_percent(with_native, in_loop),
		harness_percent(with_loop, on_threads),
		(unsigned long long)on_threads);
	/* 10 s of the JVM's CPU at 997 Hz, most of it the two deflate threads': some 9,000 samples. */
	assert_true(in_loop >= 2000);
	assert_true(with_native * 100 >= in_loop * 95);
	collapsed_free(&stacks);
}

/*
 * FsyncLoop's thread calls FileChannel.force(true) in a loop. Among its
 * samples in the native method that makes the fsync(2) call
 * (sun.nio.ch.FileDispatcherImpl.force0 on JDK 17,
 * sun.nio.ch.UnixFileDispatcherImpl.force0 on JDK 25), at least 95% must have
 * kernel frames after it.
 */
static void fsync_kernel_frames_under_java(void **state)
{
	static const char *const force0[] = { "sun.nio.ch.FileDispatcherImpl.force0",
					      "sun.nio.ch.UnixFileDispatcherImpl.force0" };
	const struct jdk *jdk = require_java(state);
	uint64_t in_force = 0, with_kernel = 0;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "FsyncLoop", NULL);
	/*
	 * The thread mostly waits for the disk, how much depends on the disk:
	 * 200 to 2,100 samples of force0 in 8 s were seen. The recording lasts
	 * until the JVM used 1.5 s of CPU, most of it the fsync thread's.
	 */
	record_until(&profiler, &stacks, &jvm, (char *[]){ "-F", "997", "--threads", "--annotate", NULL }, 1500, 600);
	jvm_stop(&jvm);
	assert_true(harness_truth(&jvm.out, "syncs") > 0);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		int at = -1;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], "[fsync tid=", 11))
			for (int k = 0; k < 2 && at < 0; k++)
				at = find_frame(&fr, 0, force0[k]);
		if (at >= 0) {
			in_force += stacks.counts[i];
			for (int k = at + 1; k < fr.n; k++)
				if (ends_with(fr.f[k], "_[k]")) {
					with_kernel += stacks.counts[i];
					break;
				}
		}
		free(fr.buf);
	}
	fprintf(stderr, "  %s: %llu samples of the fsync thread in force0, %.1f%% with kernel frames under it\n",
		jdk->name, (unsigned long long)in_force, harness_percent(with_kernel, in_force));
	assert_true(in_force >= 200);
	assert_true(with_kernel * 100 >= in_force * 95);
	collapsed_free(&stacks);
}

/*
 * One recording of a CpuSplit JVM (threads split-*), with --threads, through
 * the agent (what these tests are about: its attach, its survival): fails
 * unless at least 90% of the workers' samples have CpuSplit's Java frames.
 */
static void record_with_java_frames(const struct jdk *jdk, const struct jvm *jvm, const char *what)
{
	uint64_t on_threads, with_java;
	struct child profiler;
	struct collapsed stacks;

	record(&profiler, &stacks, jvm, (char *[]){ "-F", "997", "-d", "2", "--threads", "--java-stacks", "agent", NULL },
	       60);
	count_thread_java(&stacks, "split-", "CpuSplit.", &on_threads, &with_java);
	fprintf(stderr, "  %s, %s: %llu worker samples, %.1f%% with Java frames\n", jdk->name, what,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	assert_true(on_threads >= 500);
	assert_true(with_java * 100 >= on_threads * 90);
	collapsed_free(&stacks);
}

/* Two recordings in a row of one JVM: the second attaches again and gets Java frames too. */
static void attach_twice(void **state)
{
	const struct jdk *jdk = require_java(state);
	struct jvm jvm;

	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "1", NULL });
	record_with_java_frames(jdk, &jvm, "first recording");
	record_with_java_frames(jdk, &jvm, "second recording");
	jvm_stop(&jvm);
	assert_true(harness_truth(&jvm.out, "share50") > 0);
}

/*
 * The profiler SIGKILLed while it samples (no clean-up of its own): the JVM
 * keeps running Java code (its heartbeat goes on), a new recording gets
 * Java frames, and the JVM still stops cleanly with its truth.
 */
static void profiler_killed_jvm_serves(void **state)
{
	const struct jdk *jdk = require_java(state);
	char pid[16], *file;
	struct child profiler;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "1", "-b", NULL });
	file = harness_path(jvm.dir, "killed.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-F", "997", "-d", "60", "--threads",
									"--java-stacks", "agent", "-f", file, NULL }),
			 0);
	if (harness_wait_for(&profiler, "sampling", 30)) {
		fprintf(stderr, "the profiler did not start sampling in 30 s; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	jvm_assert_agent_loaded(&profiler);
	/* Half a second of recording, by the JVM's own clock, then the kill. */
	assert_int_equal(wait_heartbeats(&jvm.out, 5, 10), 0);
	kill(profiler.pid, SIGKILL);
	assert_int_equal(harness_finish(&profiler, 10), -1);
	/* A second of heartbeats after the kill, within 5 s. */
	if (wait_heartbeats(&jvm.out, 10, 5)) {
		fprintf(stderr, "%s stopped answering after the profiler was killed; its output:\n%s\n", jdk->name,
			jvm.out.buf);
		fail();
	}
	record_with_java_frames(jdk, &jvm, "recording after the kill");
	assert_int_equal(wait_heartbeats(&jvm.out, 2, 5), 0);
	jvm_stop(&jvm);
	assert_true(harness_truth(&jvm.out, "share50") > 0);
	free(file);
}

/*
 * Stress (allocation and GC, deoptimisation, class loading and unloading)
 * sampled at 10 kHz for 60 s: the JVM must keep making progress (a
 * heartbeat every 100 ms, none missing for STRESS_STALL_BOUND_MS, during the
 * recording and for 2 s after), leave no crash report, stop cleanly with
 * every stress thread still running (a failed one ends the JVM with status
 * 1), and the summary must report joined Java stacks.
 */
#define STRESS_STALL_BOUND_MS 3000

static void stress_at_10_khz(void **state)
{
	const struct jdk *jdk = require_java(state);
	unsigned long long joined = 0, on_jvm = 0;
	struct heartbeats hb;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	char *file;
	int status;

	jvm_start(&jvm, jdk, "Stress", NULL);
	file = harness_path(jvm.dir, "stress.collapsed");
	status = jvm_record_watched(&jvm, &profiler, file,
				    (char *[]){ "-F", "10000", "-d", "60", "--java-stacks", "agent", NULL }, 240,
				    STRESS_STALL_BOUND_MS, 2000, &hb);
	if (hb.stalled)
		fail();
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
	assert_int_equal(status, 0);
	jvm_assert_agent_loaded(&profiler);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	unlink(file);
	free(file);
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	if (jvm_java_summary(&profiler, &joined, &on_jvm)) {
		fprintf(stderr, "no \"Java stacks: J of N joined\" in the summary; the profiler's stderr:\n%s\n",
			profiler.buf);
		fail();
	}
	print_java_summary(jdk, &profiler);
	fprintf(stderr,
		"  %s: %llu samples written, %.1f%% of those on JVM threads joined; %ld beats, longest stall %lld ms\n",
		jdk->name, (unsigned long long)stacks.total, harness_percent(joined, on_jvm), hb.beats,
		(long long)hb.longest_ms);
	assert_true(joined > 0);
	{
		const char *walk = strstr(profiler.buf, "joined by a second walk: ");

		fprintf(stderr, "  %s: %.*s\n", jdk->name, walk ? (int)strcspn(walk, ";\n") : 24,
			walk ? walk : "no stack joined by a second walk");
	}
	/* The stress happened: classes came and went, and the collector ran. */
	jvm_assert_did(&jvm, "the JVM did",
		       (const struct jvm_minimum[]){ { "plugin_rounds", 11 },
						     { "classes_unloaded", 1 },
						     { "gc_count", 11 },
						     { "allocated_mb", 0 },
						     { NULL, 0 } });
	collapsed_free(&stacks);
}

/*
 * Threads running Java code: at least 99% of the CpuSplit workers' samples
 * carry Java frames (a CpuSplit frame; a failed join leaves only
 * "[no Java frames: <reason>]" and native frames).
 */
static void java_frames_on_java_threads(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t on_threads, with_java;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "2", NULL });
	record(&profiler, &stacks, &jvm, (char *[]){ "-F", "997", "-d", "8", "--threads", NULL }, 60);
	jvm_stop(&jvm);
	count_thread_java(&stacks, "split-", "CpuSplit.", &on_threads, &with_java);
	print_java_summary(jdk, &profiler);
	fprintf(stderr, "  %s: %llu samples on the worker threads, %.2f%% with Java frames\n", jdk->name,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	/* Two busy threads for 8 s at 997 Hz: 16,000 samples at most. */
	assert_true(on_threads >= 4000);
	assert_true(with_java * 100 >= on_threads * 99);
	collapsed_free(&stacks);
}

/*
 * Samples of the threads named vm-* (with --threads) and how many of them
 * have one of frames (exact Java frame names) on their stack.
 */
static void count_vm_calls(const struct collapsed *c, const char *const frames[], uint64_t *on_threads,
			   uint64_t *with_frame)
{
	*on_threads = *with_frame = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], "[vm-", 4)) {
			*on_threads += c->counts[i];
			for (size_t j = 0; frames[j]; j++)
				if (find_frame(&fr, 0, frames[j]) >= 0) {
					*with_frame += c->counts[i];
					break;
				}
		}
		free(fr.buf);
	}
}

/* The number after "label " in the profiler's summary (its stderr), or -1. */
static long long summary_count(const struct child *profiler, const char *label)
{
	const char *p = strstr(profiler->buf, label);

	return p ? atoll(p + strlen(label)) : -1;
}

/*
 * VmCalls in mode (tests/workloads/java/VmCalls.java): threads whose time
 * goes below compiled Java code, into the VM or its stubs, where
 * AsyncGetCallTrace alone gives up on most samples. At least 97% of the
 * vm-* threads' samples must carry the Java method that made the call
 * (one of frames), the summary must say stacks were joined by the second
 * walk, and the JVM must go on beating and leave no crash report.
 */
static void vm_calls_have_java_frames(void **state, const char *mode, const char *const frames[])
{
	const struct jdk *jdk = require_java(state);
	uint64_t on_threads, with_frame;
	struct child profiler;
	struct collapsed stacks;
	long long anchor, caller;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "VmCalls", (char *[]){ (char *)mode, NULL });
	record(&profiler, &stacks, &jvm, (char *[]){ "-F", "997", "-d", "6", "--threads", "--java-stacks", "agent", NULL },
	       60);
	assert_int_equal(wait_heartbeats(&jvm.out, 2, 5), 0);
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	count_vm_calls(&stacks, frames, &on_threads, &with_frame);
	print_java_summary(jdk, &profiler);
	anchor = summary_count(&profiler, "joined by a second walk: ");
	caller = summary_count(&profiler, " from the last Java frame, ");
	fprintf(stderr, "  %s, %s: %llu samples on the vm-* threads, %.2f%% with %s; second walk: %lld + %lld\n",
		jdk->name, mode, (unsigned long long)on_threads, harness_percent(with_frame, on_threads), frames[0],
		anchor,
		caller);
	/* Two busy threads for 6 s at 997 Hz: 12,000 samples at most; 1,000 measure 97% to half a point. */
	assert_true(on_threads >= 1000);
	assert_true(with_frame * 100 >= on_threads * 97);
	assert_true(anchor + caller > 0);
	assert_true(harness_truth(&jvm.out, "rounds") > 0);
	collapsed_free(&stacks);
}

/* Arrays too large for a TLAB and small objects, from compiled code: the allocation slow path. */
static void allocation_slow_path_java_frames(void **state)
{
	vm_calls_have_java_frames(state, "alloc", (const char *const[]){ "VmCalls.allocate", NULL });
}

/* System.arraycopy (a leaf stub with no frame anchor), identity hashes and String.intern. */
static void runtime_calls_java_frames(void **state)
{
	vm_calls_have_java_frames(state, "runtime",
				  (const char *const[]){ "VmCalls.copy", "VmCalls.hash", "VmCalls.intern", NULL });
}

/*
 * Stacks of the kinds-* threads with a frame named `name`, and how many of
 * them have it as `want` (annotation included), directly under a frame
 * `caller_want` when that is not NULL.
 */
static void count_kind(const struct collapsed *c, const char *name, const char *want, const char *caller_want,
		       uint64_t *with_name, uint64_t *as_wanted)
{
	*with_name = *as_wanted = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int at;

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], "[kinds-", 7) && (at = find_frame(&fr, 0, name)) >= 0) {
			*with_name += c->counts[i];
			if (!strcmp(fr.f[at], want) && (!caller_want || (at > 0 && !strcmp(fr.f[at - 1], caller_want))))
				*as_wanted += c->counts[i];
		}
		free(fr.buf);
	}
}

/*
 * FrameKinds (tests/workloads/java/FrameKinds.java) with --annotate: below
 * a compiled frame, which keeps no frame pointer, only the agent's walk of
 * HotSpot's frames tells how a Java frame ran. FrameKinds.mid, inlined
 * into the compiled FrameKinds.level and calling the compiled
 * FrameKinds.outer, must be mid_[i] directly under level_[j] (no inference
 * from compiled code can say inlined), FrameKinds.interpreted (excluded
 * from compilation) interpreted_[0] under the compiled callsInterpreted_[j],
 * and the summary must say that at least 90% of the Java frames' kinds
 * were walked by the agent. The JVM keeps beating and writes no crash report.
 */
static void frame_kinds_walked_by_agent(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t mid, mid_inlined, interp, interp_exact;
	long long exact, walked, inferred;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start_opts(&jvm, jdk,
		       (char *[]){ "-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,FrameKinds::interpreted",
				   "-XX:CompileCommand=dontinline,FrameKinds::outer",
				   "-XX:CompileCommand=dontinline,FrameKinds::level",
				   "-XX:CompileCommand=dontinline,FrameKinds::callsInterpreted",
				   "-XX:CompileCommand=inline,FrameKinds::mid", NULL },
		       "FrameKinds", NULL);
	record(&profiler, &stacks, &jvm,
	       (char *[]){ "-F", "997", "-d", "5", "--threads", "--annotate", "--java-stacks", "agent", NULL }, 60);
	assert_int_equal(wait_heartbeats(&jvm.out, 2, 5), 0);
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	assert_true(harness_truth(&jvm.out, "rounds") > 0);
	count_kind(&stacks, "FrameKinds.mid", "FrameKinds.mid_[i]", "FrameKinds.level_[j]", &mid, &mid_inlined);
	count_kind(&stacks, "FrameKinds.interpreted", "FrameKinds.interpreted_[0]", "FrameKinds.callsInterpreted_[j]",
		   &interp, &interp_exact);
	print_java_summary(jdk, &profiler);
	exact = summary_count(&profiler, "Java frame kinds: ");
	walked = summary_count(&profiler, " exact (");
	inferred = summary_count(&profiler, " from the native stack), ");
	fprintf(stderr,
		"  %s: FrameKinds.mid in %llu samples, %.1f%% inlined under level_[j]; interpreted in %llu, %.1f%% "
		"_[0] under callsInterpreted_[j]; kinds: %lld exact (%lld walked), %lld inferred\n",
		jdk->name, (unsigned long long)mid, harness_percent(mid_inlined, mid), (unsigned long long)interp,
		harness_percent(interp_exact, interp), exact, walked, inferred);
	/* Two busy threads for 5 s at 997 Hz, about half of the time in each path once compiled. */
	assert_true(mid >= 1000);
	assert_true(interp >= 300);
	assert_true(mid_inlined * 100 >= mid * 95);
	assert_true(interp_exact * 100 >= interp * 95);
	assert_true(exact >= 0 && walked >= 0 && inferred >= 0);
	assert_true(walked * 100 >= (exact + inferred) * 90);
	collapsed_free(&stacks);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }
#define JDK_TESTS(f) JDK_TEST(f, jdk17), JDK_TEST(f, jdk25)

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TESTS(cpu_split_shares),
		JDK_TESTS(cpu_split_no_aliasing_at_100_hz),
		JDK_TESTS(cpu_split_fixed_interval_aliases),
		JDK_TESTS(deflate_native_frames_under_java),
		JDK_TESTS(fsync_kernel_frames_under_java),
		JDK_TESTS(attach_twice),
		JDK_TESTS(profiler_killed_jvm_serves),
		JDK_TESTS(java_frames_on_java_threads),
		JDK_TESTS(stress_at_10_khz),
		JDK_TESTS(allocation_slow_path_java_frames),
		JDK_TESTS(runtime_calls_java_frames),
		JDK_TESTS(frame_kinds_walked_by_agent),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("java", tests, NULL, NULL);
}
