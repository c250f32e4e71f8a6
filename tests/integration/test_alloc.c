/*
 * -e alloc: Java heap allocations sampled by the agent (JVMTI
 * SampledObjectAlloc), each stack ending in the class allocated and
 * weighing the bytes it stands for. On JDK 17 and JDK 25.
 *
 * AllocSplit's two threads allocate a fixed amount, split 60/30/10 between
 * alloc60 (long[]), alloc30 (int[]) and alloc10 (AllocSplit$Box), and
 * count what each method allocated by their own allocated-bytes counters.
 * The work starts once the profiler samples (a file the workload waits
 * for), so the recording covers all of it and nothing else of theirs.
 *
 * Judged against that truth: each method's share of the three methods'
 * bytes within 3 points, and their total within 10%. Each sample stands
 * for about one interval of bytes (the objects are far smaller), so the
 * samples number about N = bytes / interval, and a share's standard
 * deviation is sqrt(p (1 - p) / N): the test asks for enough work that 3
 * points are at least four of them, and a total's relative deviation
 * 1 / sqrt(N) makes 10% more still. A slow machine takes longer, the same
 * work, the same figures. And each method allocates its own class alone:
 * no stack puts long[] right above alloc30. Other stacks under a method
 * are what the JVM makes on its behalf the first time it runs: resolving
 * and loading AllocSplit$Box (recorded with --alloc-interval 64: JDK 17
 * makes a String and a byte[] right above alloc10, 454 bytes; JDK 25 runs
 * its class loader's Java code, 2,183 bytes of nine classes, int[]
 * among them). Any allocation may be sampled, so those are allowed up to
 * 0.1% of the bytes (some eight samples): far more than they can take by
 * chance, far less than a profiler that names the wrong class gives them.
 *
 * And the objects: the recording's pprof file, read by `go tool pprof`
 * (Debian's golang-go) with -sample_index=alloc_objects, counts the Box
 * objects alloc10 made within four standard deviations of the truth (its
 * samples number about alloc10's bytes / interval, the estimate's relative
 * deviation 1 / sqrt of that).
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

/* Rounds per thread: each allocates 100 KiB; two threads, 4 GB in all. */
#define ROUNDS "20000"
#define INTERVAL (512.0 * 1024)

static const char *const methods[] = { "AllocSplit.alloc60", "AllocSplit.alloc30", "AllocSplit.alloc10" };
static const char *const classes[] = { "long[]", "int[]", "AllocSplit$Box" };
static const char *const truths[] = { "alloc60", "alloc30", "alloc10" };

/* Which of the three methods allocates class, or -1. */
static int class_index(const char *class)
{
	for (int m = 0; m < 3; m++)
		if (!strcmp(class, classes[m]))
			return m;
	return -1;
}

/*
 * The alloc_objects of the stacks ending in class, from `go tool pprof
 * -sample_index=alloc_objects -top -focus=class`: a line per node, "FLAT
 * FLAT% SUM% CUM CUM% NAME", the class's flat value the sum of the stacks
 * that end in it. (-traces prints a trace per sample, and the samples of a
 * file with times are one per span: thousands.)
 */
static double pprof_objects(const char *pprof, const char *class)
{
	char focus[300], *go = "/usr/bin/go",
	     *argv[] = { go, "tool", "pprof", "-sample_index=alloc_objects", "-top", focus, (char *)pprof, NULL };
	struct child c;
	double sum = 0;

	/* Only the traces through class (its $ escaped): all of them would not fit the output kept. */
	snprintf(focus, sizeof(focus), "-focus=^");
	for (const char *p = class; *p && strlen(focus) + 3 < sizeof(focus); p++)
		snprintf(focus + strlen(focus), sizeof(focus) - strlen(focus), "%s%c", *p == '$' ? "\\" : "", *p);
	snprintf(focus + strlen(focus), sizeof(focus) - strlen(focus), "$");

	if (access(go, X_OK))
		fail_msg("%s is missing: install Debian's golang-go (install-deps.sh does)", go);
	assert_int_equal(harness_start_command(&c, argv, 1), 0);
	assert_int_equal(harness_finish(&c, 120), 0);
	for (const char *line = c.buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char name[256];
		double value;

		if (sscanf(line, " %lf %*s %*s %*f %*s %255s", &value, name) == 2 && !strcmp(name, class))
			sum += value;
	}
	return sum;
}

/* The last frame of a collapsed stack. */
static const char *leaf_of(const struct frames *fr)
{
	return fr->n ? fr->f[fr->n - 1] : "";
}

/*
 * The CPU view of -e cpu,alloc: its Java frames walked by BPF (the agent
 * samples the heap alone), the samples the summary's CPU part says were
 * written, none ending in an allocated class (no allocation among
 * them), and most of them under the three methods, where the two
 * allocating threads spend their time.
 */
static void check_cpu_view(const struct jdk *jdk, const char *collapsed, const char *summary)
{
	uint64_t total = 0, under_methods = 0, in_class = 0;
	unsigned long long written = 0;
	const char *part = strstr(summary, "samples taken, ");
	struct collapsed c;

	if (!part || sscanf(part, "samples taken, %llu written", &written) != 1)
		fail_msg("the summary has no CPU part: %s", summary);
	/* The CPU samples' Java frames are the BPF walk's, as in a recording of cpu alone. */
	if (!strstr(summary, "JVM thread samples with Java frames"))
		fail_msg("the JVM's Java frames were not walked by BPF: %s", summary);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;

		frames_split(&fr, c.stacks[i]);
		total += c.counts[i];
		for (int m = 0; m < 3; m++) {
			if (find_frame(&fr, 0, methods[m]) >= 0) {
				under_methods += c.counts[i];
				break;
			}
		}
		for (int m = 0; m < 3; m++)
			if (!strcmp(leaf_of(&fr), classes[m]))
				in_class += c.counts[i];
		free(fr.buf);
	}
	collapsed_free(&c);
	fprintf(stderr, "  %s: CPU view %" PRIu64 " samples (%llu written), %" PRIu64 " under the three methods\n",
		jdk->name, total, written, under_methods);
	assert_true(total > 0);
	assert_int_equal(total, written);
	assert_int_equal(in_class, 0);
	/* The rest is the JVM's own threads: the collector and the compilers. */
	assert_true(2 * under_methods >= total);
}

/*
 * AllocSplit recorded with -e alloc, or (with_cpu) with -e cpu,alloc into
 * one pprof file whose alloc event is judged the same, taken out again by
 * convert --event, and whose CPU view is checked beside it.
 */
static void check(const struct jdk *jdk, bool with_cpu)
{
	char *dir, *collapsed, *cpu_collapsed, *pprof, *go, pid[16];
	uint64_t bytes[3] = { 0 }, misplaced = 0, others = 0, sum = 0;
	long long truth[3], truth_sum = 0;
	struct child profiler;
	struct collapsed c;
	struct jvm jvm;
	FILE *f;

	jvm_require(jdk, "AllocSplit");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "alloc.collapsed");
	cpu_collapsed = harness_path(dir, "cpu.collapsed");
	pprof = harness_path(dir, "alloc.pb.gz");
	go = harness_path(dir, "go");
	jvm_start(&jvm, jdk, "AllocSplit", (char *[]){ "-t", "2", "-g", go, "-r", ROUNDS, NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	if (with_cpu)
		assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "cpu,alloc", "-f", pprof, NULL }),
				 0);
	else
		assert_int_equal(
			harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "alloc", "-f", collapsed, "-f", pprof, NULL }),
			0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
	if (harness_wait_for(&jvm.out, "done\n", 300))
		fail_msg("AllocSplit did not finish its rounds: %s", jvm.out.buf);
	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	jvm_assert_agent_loaded(&profiler);
	for (int i = 0; i < 3; i++) {
		truth[i] = harness_truth(&jvm.out, truths[i]);
		assert_true(truth[i] > 0);
		truth_sum += truth[i];
	}
	jvm_stop(&jvm);
	if (with_cpu) {
		harness_convert_event(pprof, "alloc", collapsed);
		harness_convert_event(pprof, "cpu", cpu_collapsed);
		check_cpu_view(jdk, cpu_collapsed, profiler.buf);
		unlink(cpu_collapsed);
	}
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;

		frames_split(&fr, c.stacks[i]);
		for (int m = 0; m < 3; m++) {
			if (find_frame(&fr, 0, methods[m]) < 0)
				continue;
			bytes[m] += c.counts[i];
			if (!strcmp(leaf_of(&fr), classes[m]))
				continue;
			fprintf(stderr, "  %s: %" PRIu64 " bytes under %s end in %s\n", jdk->name, c.counts[i], methods[m],
				leaf_of(&fr));
			/* The method's own 'new' named with another method's class: a wrong class. */
			if (fr.n >= 2 && !strcmp(fr.f[fr.n - 2], methods[m]) && class_index(leaf_of(&fr)) >= 0)
				misplaced += c.counts[i];
			else
				others += c.counts[i];
		}
		free(fr.buf);
	}
	for (int m = 0; m < 3; m++)
		sum += bytes[m];
	fprintf(stderr, "  %s: %" PRIu64 " bytes estimated in the three methods, %lld allocated (%+.1f%%)\n",
		jdk->name, sum, truth_sum, 100.0 * ((double)sum - (double)truth_sum) / (double)truth_sum);
	{
		double n = (double)truth_sum / INTERVAL;

		for (int m = 0; m < 3; m++) {
			double want = 100.0 * (double)truth[m] / (double)truth_sum;
			double got = sum ? 100.0 * (double)bytes[m] / (double)sum : 0;
			double sigma = 100.0 * sqrt(want / 100 * (1 - want / 100) / n);

			fprintf(stderr, "  %s: %.2f%% of the bytes, %.2f%% allocated (sigma %.2f points)\n", methods[m], got,
				want, sigma);
			/* Enough work that 3 points are four deviations: the aim, not luck. */
			assert_true(4 * sigma <= 3.0);
			assert_true(fabs(got - want) <= 3.0);
		}
		assert_true(fabs((double)sum - (double)truth_sum) <= 0.10 * (double)truth_sum);
	}
	/* No method allocates another's class itself; what the JVM made for them is a sample or a few. */
	assert_int_equal(misplaced, 0);
	assert_true(others * 1000 <= sum);
	{
		double boxes = pprof_objects(pprof, "AllocSplit$Box"), want = (double)harness_truth(&jvm.out, "objects10");
		double n = (double)truth[2] / INTERVAL, bound = 4 / sqrt(n);

		fprintf(stderr, "  %s: %.0f Box objects estimated, %.0f allocated (%+.1f%%, bound %.1f%%)\n", jdk->name,
			boxes, want, 100 * (boxes - want) / want, 100 * bound);
		assert_true(want > 0);
		assert_true(fabs(boxes - want) <= bound * want);
	}
	collapsed_free(&c);
	unlink(collapsed);
	unlink(pprof);
	unlink(go);
	rmdir(dir);
	free(collapsed);
	free(cpu_collapsed);
	free(pprof);
	free(go);
	free(dir);
}

/*
 * A target that is no JVM, beside one that is: one line names it, and the
 * JVM's allocations are recorded all the same, each stack under its own
 * process (two targets: a process frame each); none under the other.
 */
static void a_target_that_is_no_jvm_is_named_and_the_rest_kept(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir, *collapsed, jvm_pid[16], native_pid[16], pids[40];
	char line[128], jvm_root[64];
	uint64_t jvm_bytes = 0, other = 0;
	struct child native, profiler;
	struct collapsed c;
	struct jvm jvm;

	(void)state;
	jvm_require(&jdk17, "AllocSplit");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "alloc.collapsed");
	assert_int_equal(harness_start_workload(&native, (char *[]){ workload, "-t", "1", NULL }), 0);
	jvm_start(&jvm, &jdk17, "AllocSplit", NULL);
	snprintf(jvm_pid, sizeof(jvm_pid), "%d", (int)jvm.out.pid);
	snprintf(native_pid, sizeof(native_pid), "%d", (int)native.pid);
	snprintf(pids, sizeof(pids), "%s,%s", native_pid, jvm_pid);
	assert_int_equal(harness_run_profiler(&profiler, (char *[]){ "-p", pids, "-e", "alloc", "-d", "2", "-f",
								       collapsed, NULL },
					      60),
			 0);
	jvm_stop(&jvm);
	harness_stop_workload(&native);
	snprintf(line, sizeof(line), "pid %s is not a JVM", native_pid);
	if (!strstr(profiler.buf, line))
		fail_msg("no line names pid %s as no JVM: %s", native_pid, profiler.buf);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	snprintf(jvm_root, sizeof(jvm_root), "pid %s)", jvm_pid);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;

		frames_split(&fr, c.stacks[i]);
		if (fr.n && strstr(fr.f[0], jvm_root) && find_frame(&fr, 0, "AllocSplit.work") >= 0)
			jvm_bytes += c.counts[i];
		else if (fr.n && !strstr(fr.f[0], jvm_root))
			other += c.counts[i];
		free(fr.buf);
	}
	fprintf(stderr, "  %" PRIu64 " bytes under AllocSplit.work, %" PRIu64 " under another process\n", jvm_bytes,
		other);
	/* Two seconds of AllocSplit: gigabytes. */
	assert_true(jvm_bytes > (100u << 20));
	assert_int_equal(other, 0);
	collapsed_free(&c);
	unlink(collapsed);
	rmdir(dir);
	free(collapsed);
	free(dir);
	free(workload);
}

static void alloc_split_jdk17(void **state)
{
	(void)state;
	check(&jdk17, false);
}

static void alloc_split_jdk25(void **state)
{
	(void)state;
	check(&jdk25, false);
}

/*
 * A JVM that refuses the agent (attach disabled), recorded with -e
 * cpu,alloc: one line names it, and the rest of the recording is kept:
 * its CPU samples with their Java frames, walked by BPF, and no
 * allocation.
 */
static void a_jvm_that_refuses_the_agent_keeps_its_cpu_samples(void **state)
{
	char *dir, *pprof, *cpu, *alloc, pid[16], line[128];
	struct child profiler;
	struct collapsed c;
	uint64_t in_work;
	struct jvm jvm;

	(void)state;
	jvm_require(&jdk17, "AllocSplit");
	dir = harness_tmpdir();
	pprof = harness_path(dir, "both.pb.gz");
	cpu = harness_path(dir, "cpu.collapsed");
	alloc = harness_path(dir, "alloc.collapsed");
	jvm_start_opts(&jvm, &jdk17, (char *[]){ "-XX:+DisableAttachMechanism", NULL }, "AllocSplit", NULL);
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(
		harness_run_profiler(&profiler, (char *[]){ "-p", pid, "-e", "cpu,alloc", "-d", "2", "-f", pprof, NULL }, 60),
		0);
	jvm_stop(&jvm);
	snprintf(line, sizeof(line), "cannot load the agent into pid %s", pid);
	if (!strstr(profiler.buf, line) || !strstr(profiler.buf, "heap allocations are not sampled"))
		fail_msg("no line names pid %s as refusing the agent: %s", pid, profiler.buf);
	harness_convert_event(pprof, "cpu", cpu);
	harness_convert_event(pprof, "alloc", alloc);
	assert_int_equal(collapsed_load(cpu, &c), 0);
	in_work = collapsed_count_frame(&c, "AllocSplit.work");
	fprintf(stderr, "  attach disabled: %" PRIu64 " CPU samples, %" PRIu64 " under AllocSplit.work\n", c.total,
		in_work);
	/* Two seconds of two allocating threads at 99 Hz: their samples are most of the JVM's. */
	assert_true(in_work > 0);
	assert_true(2 * in_work >= c.total);
	collapsed_free(&c);
	assert_int_equal(collapsed_load(alloc, &c), 0);
	assert_int_equal(c.total, 0);
	collapsed_free(&c);
	unlink(pprof);
	unlink(cpu);
	unlink(alloc);
	rmdir(dir);
	free(pprof);
	free(cpu);
	free(alloc);
	free(dir);
}

/* -e cpu,alloc: the allocations judged as alone, and the CPU view of the same recording. */
static void cpu_and_alloc_in_one_recording_jdk17(void **state)
{
	(void)state;
	check(&jdk17, true);
}

static void cpu_and_alloc_in_one_recording_jdk25(void **state)
{
	(void)state;
	check(&jdk25, true);
}

/* The absolute path of workload library name (caller frees): a JVM runs in a directory of its own. */
static char *workload_library(const char *name)
{
	char *relative = harness_workload(name), *path = realpath(relative, NULL);

	if (!path)
		fail_msg("no %s: build the workloads first", relative);
	free(relative);
	return path;
}

/*
 * Allocations made by native code: JniAlloc's thread allocates the same
 * byte arrays from Java and from C through JNI, turn by turn. Every
 * sample of the C path must read, from the Java native method inwards,
 * Java_JniAlloc_nativeArrays, jnialloc_arrays and byte[] (the VM's own
 * frames between them and the allocation are left out); every sample of
 * the Java path has its method right above its class. Each sample is
 * judged alone, so the test asks for all but a rounding's worth of them
 * (99% of the bytes), from at least 100 samples of each path: recordings
 * of two seconds are taken until there are, at most ten.
 */
static void allocations_by_native_code(const struct jdk *jdk)
{
	static const char *const native_tail[] = { "JniAlloc.nativeArrays", "Java_JniAlloc_nativeArrays",
						   "jnialloc_arrays", "byte[]" };
	char *dir, *collapsed, *lib, pid[16];
	uint64_t native_bytes = 0, native_whole = 0, java_bytes = 0, java_right = 0;
	struct jvm jvm;

	jvm_require(jdk, "JniAlloc");
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "alloc.collapsed");
	lib = workload_library("libjnialloc.so");
	jvm_start(&jvm, jdk, "JniAlloc", (char *[]){ lib, NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	for (int round = 0; round < 10 && (native_bytes < 100 * INTERVAL || java_bytes < 100 * INTERVAL); round++) {
		struct child profiler;
		struct collapsed c;

		assert_int_equal(harness_run_profiler(&profiler,
						      (char *[]){ "-p", pid, "-e", "alloc", "-d", "2", "-f", collapsed, NULL },
						      60),
				 0);
		if (!strstr(profiler.buf, "made by native code"))
			fail_msg("the summary does not count allocations made by native code: %s", profiler.buf);
		assert_int_equal(collapsed_load(collapsed, &c), 0);
		for (size_t i = 0; i < c.n; i++) {
			struct frames fr;
			int at;

			frames_split(&fr, c.stacks[i]);
			if (find_frame(&fr, 0, "JniAlloc.nativeArrays") >= 0) {
				native_bytes += c.counts[i];
				at = fr.n - 4;
				for (int k = 0; at >= 0 && k < 4; k++)
					if (find_frame(&fr, at + k, native_tail[k]) != at + k)
						at = -1;
				if (at >= 0)
					native_whole += c.counts[i];
			} else if (find_frame(&fr, 0, "JniAlloc.javaArrays") >= 0) {
				java_bytes += c.counts[i];
				if (fr.n >= 2 && find_frame(&fr, fr.n - 2, "JniAlloc.javaArrays") == fr.n - 2 &&
				    !strcmp(leaf_of(&fr), "byte[]"))
					java_right += c.counts[i];
			}
			free(fr.buf);
		}
		collapsed_free(&c);
	}
	jvm_stop(&jvm);
	fprintf(stderr,
		"  %s: from C, %.1f%% of %.0f samples' bytes under jnialloc_arrays; from Java, %.1f%% of %.0f "
		"with no native frame\n",
		jdk->name, native_bytes ? 100.0 * (double)native_whole / (double)native_bytes : 0,
		(double)native_bytes / INTERVAL, java_bytes ? 100.0 * (double)java_right / (double)java_bytes : 0,
		(double)java_bytes / INTERVAL);
	assert_true(native_bytes >= 100 * INTERVAL && java_bytes >= 100 * INTERVAL);
	assert_true(native_whole >= 0.99 * (double)native_bytes);
	assert_true(java_right >= 0.99 * (double)java_bytes);
	unlink(collapsed);
	rmdir(dir);
	free(collapsed);
	free(lib);
	free(dir);
}

static void allocations_by_native_code_jdk17(void **state)
{
	(void)state;
	allocations_by_native_code(&jdk17);
}

static void allocations_by_native_code_jdk25(void **state)
{
	(void)state;
	allocations_by_native_code(&jdk25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(alloc_split_jdk17),
		HARNESS_TEST(alloc_split_jdk25),
		HARNESS_TEST(cpu_and_alloc_in_one_recording_jdk17),
		HARNESS_TEST(cpu_and_alloc_in_one_recording_jdk25),
		HARNESS_TEST(a_target_that_is_no_jvm_is_named_and_the_rest_kept),
		HARNESS_TEST(a_jvm_that_refuses_the_agent_keeps_its_cpu_samples),
		HARNESS_TEST(allocations_by_native_code_jdk17),
		HARNESS_TEST(allocations_by_native_code_jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("-e alloc: Java heap allocations by class and method", tests, NULL, NULL);
}
