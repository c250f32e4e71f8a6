/*
 * -e nativemem: native allocations sampled by bytes through uprobes on
 * each target's C library allocator, and --leaks, what is still allocated
 * at the end.
 *
 * malloc_split's threads ask for a fixed amount of memory, split 60/30/10
 * between site_malloc60 (malloc), site_calloc30 (calloc) and site_leak10
 * (realloc of NULL and posix_memalign), and count the bytes each site
 * asked for; site_leak10 never frees. The work starts once the profiler
 * samples (a file the workload waits for).
 *
 * Judged against that truth: each site's share of the bytes within 3
 * points, the total within 10%, and each site's bytes in stacks that end
 * in the function it calls. A sample stands for about one interval of
 * bytes or more (most calls are far smaller), so about N = bytes /
 * interval are taken, and a share's standard deviation is
 * sqrt(p (1 - p) / N): the test asks for enough work that 3 points are at
 * least four of them. With --leaks, only site_leak10's stacks, its bytes
 * within 10% of what it kept, with enough leaked bytes that 10% is four
 * standard deviations (1 / sqrt(N) each).
 *
 * With -m, malloc_split also maps anonymous memory itself (counted, and
 * with --leaks only what it never unmapped), asks malloc for blocks malloc
 * maps (counted once, as malloc's), and reserves address space (not
 * counted).
 *
 * Then: Java frames above a JVM's native allocation (direct byte
 * buffers, JDK 17 and 25); a statically linked target named in one line
 * and the others recorded; a target that exits during the recording.
 */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

static const char *const sites[] = { "site_malloc60", "site_calloc30", "site_leak10" };
static const char *const truths[] = { "malloc60", "calloc30", "leak10" };

/* The last frame of a collapsed stack. */
static const char *leaf_of(const struct frames *fr)
{
	return fr->n ? fr->f[fr->n - 1] : "";
}

/* Whether a leaf names one of the functions a site calls (glibc's calloc is named __libc_calloc). */
static bool leaf_fits(int site, const char *leaf)
{
	switch (site) {
	case 0:
		return strstr(leaf, "malloc") != NULL;
	case 1:
		return strstr(leaf, "calloc") != NULL;
	default:
		return strstr(leaf, "malloc") || strstr(leaf, "realloc") || strstr(leaf, "posix_memalign");
	}
}

/* Once the profiler samples, the workload's work begins: the file it waits for is made. */
static void release_once_sampling(struct child *profiler, const char *go)
{
	FILE *f;

	if (harness_wait_for(profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler->buf);
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
}

struct split {
	uint64_t bytes[3];   /* estimated, under each site */
	uint64_t misplaced;  /* under a site, ending elsewhere than what it calls */
	long long truth[3];
	long long leaked;
	char *buf;           /* the profiler's stderr */
	/* with_cpu: the CPU view of the same recording */
	uint64_t cpu_samples, cpu_in_workers;
	/* maps (malloc_split -m): what the program mapped itself, and malloc's large blocks */
	uint64_t mmap_bytes, mmap_misplaced, big_bytes, big_through_mmap, reserve_bytes;
	long long mmap_truth, mmap_kept, big_truth;
	char title[256];     /* the text report's first line */
};

/* How malloc_split runs and is recorded. */
struct split_run {
	long rounds;
	const char *interval;  /* --alloc-interval */
	bool leaks;            /* --leaks */
	bool with_cpu;         /* -e cpu,nativemem into a pprof file, each event taken out by convert --event */
	bool maps;             /* malloc_split -m */
};

/* What -m's sites weigh in stack fr, of count. */
static void count_maps(struct split *s, const struct frames *fr, uint64_t count)
{
	if (find_frame(fr, 0, "site_mmap") >= 0) {
		s->mmap_bytes += count;
		if (!strstr(leaf_of(fr), "mmap"))
			s->mmap_misplaced += count;
	}
	if (find_frame(fr, 0, "site_big") >= 0) {
		s->big_bytes += count;
		for (int i = 0; i < fr->n; i++)
			if (strstr(fr->f[i], "mmap")) {
				s->big_through_mmap += count;
				break;
			}
	}
	if (find_frame(fr, 0, "site_reserve") >= 0)
		s->reserve_bytes += count;
}

/*
 * The CPU view: its samples, and those of the worker threads (under
 * work; a sample in a uprobe's out-of-line copy of an instruction has no
 * site frame above it, so the sites are not the test).
 */
static void count_cpu(struct split *s, const char *collapsed)
{
	struct collapsed c;

	assert_int_equal(collapsed_load(collapsed, &c), 0);
	s->cpu_samples = c.total;
	s->cpu_in_workers = collapsed_count_frame(&c, "work");
	collapsed_free(&c);
}

/* malloc_split -t 2, profiled with -e nativemem as run says: the bytes by site, and the truth. */
static void run_split(struct split *s, const struct split_run *run)
{
	char *workload = harness_workload("malloc_split"), *dir = harness_tmpdir(), *collapsed, *go, *pprof,
	     *cpu_collapsed, *text, pid[16], rounds_arg[24];
	struct child w, profiler;
	struct collapsed c;

	memset(s, 0, sizeof(*s));
	collapsed = harness_path(dir, "nm.collapsed");
	cpu_collapsed = harness_path(dir, "cpu.collapsed");
	pprof = harness_path(dir, "both.pb.gz");
	text = harness_path(dir, "report");
	go = harness_path(dir, "go");
	snprintf(rounds_arg, sizeof(rounds_arg), "%ld", run->rounds);
	assert_int_equal(harness_start_workload(&w, (char *[]){ workload, "-t", "2", "-r", rounds_arg, "-g", go,
							    run->maps ? "-m" : NULL, NULL }),
			 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	{
		/* And a text report (-o text: its file has no extension), whose first line is the title. */
		char *args[] = { "-p", pid, "-e", run->with_cpu ? "cpu,nativemem" : "nativemem", "--alloc-interval",
				 (char *)run->interval, "-f", run->with_cpu ? pprof : collapsed, "-o", "text", "-f", text,
				 run->leaks ? "--leaks" : NULL, NULL };

		assert_int_equal(harness_start_profiler(&profiler, args), 0);
	}
	release_once_sampling(&profiler, go);
	if (harness_wait_for(&w, "done\n", 600))
		fail_msg("malloc_split did not finish its rounds: %s", w.buf);
	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	for (int i = 0; i < 3; i++) {
		s->truth[i] = harness_truth(&w, truths[i]);
		assert_true(s->truth[i] > 0);
	}
	s->leaked = harness_truth(&w, "leaked");
	if (run->maps) {
		s->mmap_truth = harness_truth(&w, "mmap");
		s->mmap_kept = harness_truth(&w, "mmap_kept");
		s->big_truth = harness_truth(&w, "big");
	}
	harness_stop_workload(&w);
	if (run->with_cpu) {
		harness_convert_event(pprof, "nativemem", collapsed);
		harness_convert_event(pprof, "cpu", cpu_collapsed);
		count_cpu(s, cpu_collapsed);
		unlink(cpu_collapsed);
		unlink(pprof);
	}
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;

		frames_split(&fr, c.stacks[i]);
		for (int site = 0; site < 3; site++) {
			if (find_frame(&fr, 0, sites[site]) < 0)
				continue;
			s->bytes[site] += c.counts[i];
			if (!leaf_fits(site, leaf_of(&fr)))
				s->misplaced += c.counts[i];
		}
		count_maps(s, &fr, c.counts[i]);
		free(fr.buf);
	}
	s->buf = strdup(profiler.buf);
	{
		FILE *f = fopen(text, "r");

		assert_non_null(f);
		if (!fgets(s->title, sizeof(s->title), f))
			s->title[0] = '\0';
		s->title[strcspn(s->title, "\n")] = '\0';
		fclose(f);
	}
	collapsed_free(&c);
	unlink(text);
	free(text);
	unlink(collapsed);
	unlink(go);
	rmdir(dir);
	free(collapsed);
	free(cpu_collapsed);
	free(pprof);
	free(go);
	free(dir);
	free(workload);
}

/* Each site's share of the bytes within 3 points of the truth, the total within 10%, leaves as called. */
static void check_shares(const struct split *s, double interval)
{
	uint64_t sum = 0;
	long long truth_sum = 0;

	for (int i = 0; i < 3; i++) {
		sum += s->bytes[i];
		truth_sum += s->truth[i];
	}
	fprintf(stderr, "  %" PRIu64 " bytes estimated under the three sites, %lld asked for (%+.1f%%)\n", sum,
		truth_sum, 100.0 * ((double)sum - (double)truth_sum) / (double)truth_sum);
	for (int i = 0; i < 3; i++) {
		double want = 100.0 * (double)s->truth[i] / (double)truth_sum;
		double got = sum ? 100.0 * (double)s->bytes[i] / (double)sum : 0;
		double sigma = 100.0 * sqrt(want / 100 * (1 - want / 100) / ((double)truth_sum / interval));

		fprintf(stderr, "  %s: %.2f%% of the bytes, %.2f%% asked for (sigma %.2f points)\n", sites[i], got, want,
			sigma);
		/* Enough work that 3 points are four deviations: the aim, not luck. */
		assert_true(4 * sigma <= 3.0);
		assert_true(fabs(got - want) <= 3.0);
	}
	assert_true(fabs((double)sum - (double)truth_sum) <= 0.10 * (double)truth_sum);
	assert_int_equal(s->misplaced, 0);
	if (!strstr(s->buf, "allocation calls"))
		fail_msg("the summary does not count the allocation calls: %s", s->buf);
}

static void shares_follow_the_bytes(void **state)
{
	struct split s;

	(void)state;
	harness_require_root();
	/* 2 threads x 200 rounds x 1 MiB: 400 MiB, some 6,400 samples at 64 KiB. */
	run_split(&s, &(struct split_run){ .rounds = 200, .interval = "64k" });
	check_shares(&s, 64 * 1024);
	if (strncmp(s.title, "Native memory profile of pid ", 29) || !strstr(s.title, "(malloc_split)"))
		fail_msg("the report's title is \"%s\"", s.title);
	free(s.buf);
}

/*
 * -e cpu,nativemem: one recording, both views. The native memory view is
 * judged as its own run is; the CPU view holds the CPU samples the
 * summary wrote (no allocation's bytes among them), most of them the
 * workload's two threads', which do all its work.
 */
static void cpu_and_native_memory_in_one_recording(void **state)
{
	unsigned long long written = 0;
	const char *part;
	struct split s;

	(void)state;
	harness_require_root();
	run_split(&s, &(struct split_run){ .rounds = 200, .interval = "64k", .with_cpu = true });
	check_shares(&s, 64 * 1024);
	part = strstr(s.buf, "samples taken, ");
	if (!part || sscanf(part, "samples taken, %llu written", &written) != 1)
		fail_msg("the summary has no CPU part: %s", s.buf);
	fprintf(stderr, "  CPU view: %" PRIu64 " samples (%llu written), %.1f%% in the worker threads\n", s.cpu_samples,
		written, s.cpu_samples ? 100.0 * (double)s.cpu_in_workers / (double)s.cpu_samples : 0.0);
	assert_true(s.cpu_samples > 0);
	assert_int_equal(s.cpu_samples, written);
	assert_true(4 * s.cpu_in_workers >= 3 * s.cpu_samples);
	free(s.buf);
}

static void leaks_show_only_what_was_not_freed(void **state)
{
	const double interval = 16 * 1024;
	struct split s;
	double n, bound;

	(void)state;
	harness_require_root();
	/* site_leak10 keeps a tenth of 2 x 200 MiB: some 2,500 samples of what it leaked at 16 KiB. */
	run_split(&s, &(struct split_run){ .rounds = 200, .interval = "16k", .leaks = true });
	n = (double)s.leaked / interval;
	bound = 4 / sqrt(n);
	fprintf(stderr, "  --leaks: %" PRIu64 " bytes under site_leak10, %lld leaked (%+.1f%%, bound %.1f%%); "
		"%" PRIu64 " under site_malloc60, %" PRIu64 " under site_calloc30\n",
		s.bytes[2], s.leaked, 100.0 * ((double)s.bytes[2] - (double)s.leaked) / (double)s.leaked, 100 * bound,
		s.bytes[0], s.bytes[1]);
	assert_true(s.leaked > 0);
	/* Enough leaked that 10% is four deviations. */
	assert_true(bound <= 0.10);
	assert_true(fabs((double)s.bytes[2] - (double)s.leaked) <= 0.10 * (double)s.leaked);
	/* Everything the other sites took, they freed. */
	assert_int_equal(s.bytes[0], 0);
	assert_int_equal(s.bytes[1], 0);
	assert_int_equal(s.misplaced, 0);
	if (!strstr(s.buf, "freed during the recording"))
		fail_msg("the summary does not say what was freed: %s", s.buf);
	if (strncmp(s.title, "Native memory still allocated: pid ", 35) || !strstr(s.title, "(malloc_split)"))
		fail_msg("the report's title is \"%s\"", s.title);
	free(s.buf);
}

/* bytes within 4 standard deviations (1 / sqrt(truth / interval) each) of truth, which must be that precise. */
static void assert_estimate(const char *what, uint64_t bytes, long long truth, double interval)
{
	double bound = 4 / sqrt((double)truth / interval);

	fprintf(stderr, "  %s: %" PRIu64 " bytes, %lld in truth (%+.1f%%, bound %.1f%%)\n", what, bytes, truth,
		100.0 * ((double)bytes - (double)truth) / (double)truth, 100 * bound);
	assert_true(truth > 0);
	assert_true(bound <= 0.10);
	assert_true(fabs((double)bytes - (double)truth) <= bound * (double)truth);
}

/*
 * malloc_split -m: the anonymous memory the program maps itself counts,
 * under its call site and ending in mmap; malloc's own mappings for its
 * large blocks do not count again (site_big weighs what it asked malloc
 * for, with no mmap frame); a PROT_NONE reservation is no memory. With
 * --leaks, only the mappings never unmapped.
 */
static void anonymous_mappings_of_the_program(void **state)
{
	const double interval = 16 * 1024;
	struct split s;

	(void)state;
	harness_require_root();
	/* 2 x 200 rounds: 100 MiB mapped by site_mmap, half of it kept, 400 MiB asked by site_big; 16 KiB: enough samples. */
	run_split(&s, &(struct split_run){ .rounds = 200, .interval = "16k", .maps = true });
	assert_estimate("site_mmap", s.mmap_bytes, s.mmap_truth, interval);
	assert_estimate("site_big", s.big_bytes, s.big_truth, interval);
	assert_int_equal(s.mmap_misplaced, 0);
	assert_int_equal(s.big_through_mmap, 0);
	assert_int_equal(s.reserve_bytes, 0);
	free(s.buf);

	run_split(&s, &(struct split_run){ .rounds = 200, .interval = "16k", .leaks = true, .maps = true });
	assert_estimate("site_mmap, still mapped", s.mmap_bytes, s.mmap_kept, interval);
	assert_int_equal(s.big_bytes, 0);
	assert_int_equal(s.reserve_bytes, 0);
	free(s.buf);
}

/* A JVM's direct byte buffers: malloc under Unsafe, under the Java method that asked. */
static void check_jvm(const struct jdk *jdk)
{
	char *dir, *collapsed, pid[16];
	uint64_t total = 0, under_java = 0;
	struct child profiler;
	struct collapsed c;
	struct jvm jvm;

	jvm_require(jdk, "DirectAlloc");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "nm.collapsed");
	jvm_start_opts(&jvm, jdk, (char *[]){ "-XX:MaxDirectMemorySize=64m", NULL }, "DirectAlloc", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(
		harness_run_profiler(&profiler, (char *[]){ "-p", pid, "-e", "nativemem", "-d", "3", "-f", collapsed, NULL },
				     60),
		0);
	jvm_stop(&jvm);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;
		int method;

		frames_split(&fr, c.stacks[i]);
		total += c.counts[i];
		method = find_frame(&fr, 0, "DirectAlloc.direct");
		if (method >= 0 && find_frame(&fr, method, "java.nio.ByteBuffer.allocateDirect") > method &&
		    strstr(leaf_of(&fr), "malloc"))
			under_java += c.counts[i];
		free(fr.buf);
	}
	fprintf(stderr, "  %s: %" PRIu64 " of %" PRIu64 " bytes under DirectAlloc.direct and ByteBuffer.allocateDirect\n",
		jdk->name, under_java, total);
	/* The workload allocates nothing else worth a tenth of its buffers. */
	assert_true(total > 0);
	assert_true(under_java >= 0.8 * (double)total);
	collapsed_free(&c);
	unlink(collapsed);
	rmdir(dir);
	free(collapsed);
	free(dir);
}

static void java_frames_above_native_allocations_jdk17(void **state)
{
	(void)state;
	check_jvm(&jdk17);
}

static void java_frames_above_native_allocations_jdk25(void **state)
{
	(void)state;
	check_jvm(&jdk25);
}

/*
 * A statically linked target has no allocator to probe: one line names
 * it, and the other target is recorded; a target that exits during the
 * recording is said to have, and what it allocated before is kept.
 */
static void static_and_exiting_targets(void **state)
{
	char *stat = harness_workload("static_spin"), *split = harness_workload("malloc_split"), *dir, *collapsed, *go;
	char pids[40], line[128];
	struct child s, w, profiler;
	struct collapsed c;

	(void)state;
	harness_require_root();
	if (access(stat, X_OK))
		fail_msg("%s is not built", stat);
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "nm.collapsed");
	go = harness_path(dir, "go");
	assert_int_equal(harness_start_workload(&s, (char *[]){ stat, NULL }), 0);
	/* 2 x 300 MiB once the profiler samples, then it exits (-s 0). */
	assert_int_equal(
		harness_start_workload(&w, (char *[]){ split, "-t", "2", "-r", "300", "-g", go, "-s", "0", NULL }), 0);
	snprintf(pids, sizeof(pids), "%d,%d", (int)s.pid, (int)w.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pids, "-e", "nativemem", "-d", "60", "-f",
								       collapsed, NULL }),
			 0);
	release_once_sampling(&profiler, go);
	/* The static target lives on: the recording is stopped once the other is gone. */
	if (harness_wait_for(&profiler, "exited after", 300))
		fail_msg("the exit of pid %d was not reported: %s", (int)w.pid, profiler.buf);
	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	harness_stop_workload(&s);
	snprintf(line, sizeof(line), "pid %d: its native memory is not recorded", (int)s.pid);
	if (!strstr(profiler.buf, line) || !strstr(profiler.buf, "statically linked"))
		fail_msg("no line names the static pid %d: %s", (int)s.pid, profiler.buf);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	/* What the target that exited allocated first is kept: hundreds of MiB. */
	assert_true(collapsed_count_frame(&c, "site_malloc60") > (100u << 20));
	collapsed_free(&c);
	harness_stop_workload(&w);
	unlink(collapsed);
	unlink(go);
	rmdir(dir);
	free(collapsed);
	free(go);
	free(dir);
	free(stat);
	free(split);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(shares_follow_the_bytes),
		HARNESS_TEST(leaks_show_only_what_was_not_freed),
		HARNESS_TEST(cpu_and_native_memory_in_one_recording),
		HARNESS_TEST(anonymous_mappings_of_the_program),
		HARNESS_TEST(java_frames_above_native_allocations_jdk17),
		HARNESS_TEST(java_frames_above_native_allocations_jdk25),
		HARNESS_TEST(static_and_exiting_targets),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("-e nativemem: native allocations by call site, and leaks", tests, NULL,
					   NULL);
}
