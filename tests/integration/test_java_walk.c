/*
 * Java stacks walked by BPF (bpf/hotspot.bpf.h, user/java/walked.c), end to
 * end, on JDK 17 and JDK 25: the default way a JVM's Java frames are taken,
 * with nothing loaded into the JVM.
 *
 *  - against the agent: with --java-stacks both, every sample the agent
 *    takes a Java stack for (AsyncGetCallTrace, through a signal) is
 *    compared with the walk of the same sample: at least 99% the same
 *    methods in the same order, bytecode indexes and kinds (interpreted,
 *    compiled, inlined) the same where both have them, on workloads where
 *    AsyncGetCallTrace succeeds (the CPU split, JNI into libz, the frame
 *    kinds, recursion, lambdas, method handles, exceptions, JNI calling
 *    back into Java);
 *  - deep inlining (DeepInline: chains cut into several compiled frames,
 *    monomorphic and megamorphic call sites, a recursion inlined into
 *    itself, an OSR loop): 99.5% the same methods, 99% the same kinds,
 *    over enough samples to tell;
 *  - javac from the first instant of its work: 99% of the main thread's
 *    samples reach JavacDriver.main (less the sampling error of a run);
 *  - javac profiled from its exec, ten times: never the agent, and its
 *    main thread's samples as whole as those of a JVM already started;
 *  - whole stacks through JNI: Java -> JNI -> Java -> JNI;
 *  - a recursion 1000 deep: cut at the walk's bound, counted and said;
 *  - a JVM run with -Xint: every Java frame interpreted;
 *  - nothing in the JVM: the agent's library is not mapped into it, and
 *    no signal was sent; a JVM that refuses agents is walked all the same;
 *  - -a: a JVM started during the recording is walked as soon as it can be;
 *  - churn (threads, exceptions, class unloading, deoptimisation, a small
 *    code cache): no frame names a method its thread was not running, and
 *    the JVM keeps beating.
 */
#include "harness.h"
#include "jvm.h"
#include "java_walk_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void walk_agrees_with_agent(void **state)
{
	const struct jdk *jdk = require_java(state);
	char *jni = walkjni_path();

	agrees(jdk, "CpuSplit", NULL, "CpuSplit", (char *[]){ "-t", "2", NULL });
	agrees(jdk, "JniDeflate", NULL, "JniDeflate", (char *[]){ "2", NULL });
	agrees(jdk, "FrameKinds",
	       (char *[]){ "-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,FrameKinds::interpreted",
			   "-XX:CompileCommand=dontinline,FrameKinds::outer", NULL },
	       "FrameKinds", NULL);
	agrees(jdk, "WalkShapes", NULL, "WalkShapes", (char *[]){ "shapes", jni, NULL });
	free(jni);
}

/* What deep_inlining_kinds_agree waits for, over however many recordings it takes. */
#define DEEP_MIN_SAMPLES 3000
#define DEEP_MAX_ROUNDS (3 * RECORD_ROUNDS)
/* Fewer than this after DEEP_MAX_ROUNDS (a machine ten times too slow gives 3,000): too few to judge. */
#define DEEP_FEWEST_SAMPLES 1000

/*
 * DeepInline (tests/workloads/java/DeepInline.java) under --java-stacks
 * both: JIT-compiled code whose frames are mostly inlined (a chain of
 * small methods cut by C2 into several compiled frames, monomorphic and
 * megamorphic call sites, an expression tree's recursion inlined into
 * itself) below an OSR-compiled loop. The walk and the agent must name
 * the same methods on 99.5% of samples and give the same kind to 99% of
 * frames, each less three standard errors of its count. Recordings of 3 s
 * are taken until DEEP_MIN_SAMPLES samples were compared: a loaded machine
 * takes more of them (and one so slow that DEEP_MAX_ROUNDS gave fewer is
 * judged on what it gave, with the wider tolerance of fewer samples, down
 * to DEEP_FEWEST_SAMPLES). The stacks must have the shape (at least six kinds compared a
 * sample: the deep inlining is there) and the loop must run compiled:
 * DeepInline.run_[j] (--annotate) in 95% of the workers' samples with
 * Java frames (the profile is the agent's: AsyncGetCallTrace gives none
 * for a few percent, caught in a prologue or a stub).
 */
static void deep_inlining_kinds_agree(void **state)
{
	const struct jdk *jdk = require_java(state);
	struct agreement_sum sum = { 0 };
	uint64_t on_workers = 0, osr_compiled = 0;
	struct jvm jvm;

	jvm_require(jdk, "DeepInline");
	jvm_start(&jvm, jdk, "DeepInline", (char *[]){ "-t", "2", NULL });
	while (sum.samples < DEEP_MIN_SAMPLES && sum.rounds < DEEP_MAX_ROUNDS) {
		struct collapsed stacks;
		uint64_t n, j;

		compare_once(&jvm, jdk, "DeepInline",
			     (char *[]){ "-F", "997", "-d", "3", "--java-stacks", "both", "--threads", "--annotate", NULL },
			     &sum, &stacks);
		count_loop_compiled(&stacks, &n, &j);
		on_workers += n;
		osr_compiled += j;
		collapsed_free(&stacks);
	}
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	fprintf(stderr,
		"  %s, DeepInline: %.0f samples in %d recordings, %.2f%% the same methods (at least %.2f%%), "
		"%.2f%% of %.0f kinds the same (at least %.2f%%); the loop compiled in %.2f%% of %llu worker samples\n",
		jdk->name, sum.samples, sum.rounds, share_of(sum.methods, sum.samples),
		99.5 - three_errors(99.5, sum.samples), share_of(sum.kinds, sum.kind_pairs), sum.kind_pairs,
		99.0 - three_errors(99.0, sum.kind_pairs), harness_percent(osr_compiled, on_workers),
		(unsigned long long)on_workers);
	assert_true(sum.samples >= DEEP_FEWEST_SAMPLES);
	assert_true(sum.kind_pairs >= 6 * sum.samples);
	assert_true(osr_compiled * 100 >= on_workers * 95);
	assert_true(share_of(sum.methods, sum.samples) >= 99.5 - three_errors(99.5, sum.samples));
	assert_true(share_of(sum.kinds, sum.kind_pairs) >= 99.0 - three_errors(99.0, sum.kind_pairs));
}

/*
 * Java sources for javac to compile: classes with generics, lambdas and
 * nested expressions, a few seconds of work per compile (type inference
 * of these grows fast with their number).
 */
#define SOURCES 40
#define METHODS 8
static void write_sources(const char *dir, const char *argfile, const char *out_dir)
{
	FILE *args = fopen(argfile, "w");

	assert_non_null(args);
	fprintf(args, "-d %s -proc:none -nowarn\n", out_dir);
	for (int c = 0; c < SOURCES; c++) {
		char name[64], *path;
		FILE *f;

		snprintf(name, sizeof(name), "Gen%03d.java", c);
		path = harness_path(dir, name);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "import java.util.*;\nimport java.util.function.*;\npublic class Gen%03d<T extends Comparable<T>> {\n",
			c);
		for (int m = 0; m < METHODS; m++)
			fprintf(f,
				"  public static <K, V extends Comparable<V>> Map<K, List<V>> m%d(Map<K, V> in, Function<V, V> f) {\n"
				"    Map<K, List<V>> out = new HashMap<>();\n"
				"    in.forEach((k, v) -> out.computeIfAbsent(k, x -> new ArrayList<>()).add(f.apply(v)));\n"
				"    out.values().forEach(l -> l.sort(Comparator.naturalOrder()));\n"
				"    return out.entrySet().stream().filter(e -> e.getValue().size() > %d)\n"
				"        .collect(HashMap::new, (h, e) -> h.put(e.getKey(), e.getValue()), HashMap::putAll);\n"
				"  }\n",
				m, m % 3);
		fprintf(f, "}\n");
		fclose(f);
		fprintf(args, "%s\n", path);
		free(path);
	}
	fclose(args);
}

/*
 * JavacDriver (tests/workloads/java/JavacDriver.java) compiling generated
 * sources, profiled from the first instant of its work: it waits on its
 * standard input (a FIFO held open here, so neither side blocks) until the
 * profiler samples. At least 97% of its main thread's samples carry Java
 * frames down to its entry method, JavacDriver.main. The aim is 99%: the
 * walk reaches 98.6 to 99.3% on JDK 17 and 98.1 to 98.6% on JDK 25 (the
 * rest: C1's leaf stubs and compiled frames caught where their sender is
 * not found; docs/architecture.md), and this keeps it from going back.
 */
static void javac_main_thread_reaches_main(void **state)
{
	const struct jdk *jdk = require_java(state);
	char *dir = harness_tmpdir(), *fifo = harness_path(dir, "go"), *argfile = harness_path(dir, "javac.args");
	char *out_dir = harness_path(dir, "classes"), *file = harness_path(dir, "javac.collapsed");
	char *classes = jvm_class_dir(), command[4096], pid[16], *argv[32], main_root[128];
	struct child javac, profiler;
	struct collapsed stacks;
	uint64_t on_main, with_main;
	int go, status;

	assert_non_null(classes);
	assert_int_equal(mkdir(out_dir, 0700), 0);
	write_sources(dir, argfile, out_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* Read and write: opening a FIFO so never waits for the other end. */
	go = open(fifo, O_RDWR | O_CLOEXEC);
	assert_true(go >= 0);
	snprintf(command, sizeof(command), "exec %s -cp %s JavacDriver 2 @%s < %s", jdk_java_path(jdk), classes, argfile,
		 fifo);
	assert_int_equal(harness_start_workload(&javac, (char *[]){ "/bin/sh", "-c", command, NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)javac.pid);
	harness_profiler_args(argv, 32, pid, file, (char *[]){ "-F", "997", "--threads", NULL });
	assert_int_equal(harness_start_profiler(&profiler, argv), 0);
	if (harness_wait_for(&profiler, "sampling", 30)) {
		fprintf(stderr, "the profiler did not start sampling; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	assert_int_equal(write(go, "go\n", 3), 3);
	/* The JVM exits when the compiles are done; the profiler ends with it. */
	if (harness_wait_for(&javac, "elapsed_ns", 120)) {
		fprintf(stderr, "javac did not finish; its output:\n%s\n", javac.buf);
		fail();
	}
	status = harness_finish(&profiler, 60);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
	assert_int_equal(status, 0);
	assert_int_equal(harness_finish(&javac, 30), 0);
	close(go);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	thread_running(&stacks, "JavacDriver.main", main_root, sizeof(main_root));
	count_thread_frame(&stacks, main_root, "JavacDriver.main", &on_main, &with_main);
	fprintf(stderr, "  %s: javac's main thread [%s: %llu samples, %.2f%% reach JavacDriver.main\n", jdk->name,
		main_root, (unsigned long long)on_main, harness_percent(with_main, on_main));
	/*
	 * Two compiles: seconds of work, a thousand samples at least. The aim
	 * is 99%; a run's share is a sample of the walk's, so it is held to
	 * 99% less three standard errors of a share of 99% over on_main samples
	 * (98.6% at 6,000 samples).
	 */
	assert_true(on_main >= 1000);
	assert_true(harness_percent(with_main, on_main) >= 99.0 - 300.0 * sqrt(0.99 * 0.01 / (double)on_main));
	harness_output_free(&stacks, file, NULL);
	unlink(fifo);
	unlink(argfile);
	free(fifo);
	free(argfile);
	free(out_dir);
	free(classes);
	free(dir);
}

/* Whether /proc/PID/maps names the agent's library, or its copy in the JVM's /tmp. */
static bool agent_mapped(pid_t pid)
{
	char path[64], *maps = NULL;
	size_t size = 0;
	bool mapped;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_true(getdelim(&maps, &size, '\0', f) > 0);
	fclose(f);
	mapped = strstr(maps, "jbpfagent") || strstr(maps, "jbpfprof-agent");
	free(maps);
	return mapped;
}

#define FROM_EXEC_RUNS 10

/*
 * JavacDriver compiling, profiled from its exec onward, ten times: the
 * profiler is pointed at the process as it starts (a shell about to exec
 * java), so it meets the JVM before it loads libjvm, or while its layout
 * does not read yet. The walk takes it as soon as it can, and the agent is
 * never loaded: after the compile, with the JVM held alive, its maps have
 * no trace of it. The main thread's samples outside the VM's creation
 * reach JavacDriver.main as often as those of a JVM profiled once started
 * (javac_main_thread_reaches_main's bound, over the runs' samples).
 */
static void javac_profiled_from_its_exec(void **state)
{
	const struct jdk *jdk = require_java(state);
	char *dir = harness_tmpdir(), *fifo = harness_path(dir, "go"), *argfile = harness_path(dir, "javac.args");
	char *out_dir = harness_path(dir, "classes"), *file = harness_path(dir, "javac.collapsed");
	char *classes = jvm_class_dir(), command[4096], pid[16], *argv[32];
	uint64_t all_main = 0, all_with = 0;
	double share[FROM_EXEC_RUNS], mean = 0, spread = 0, error;

	assert_non_null(classes);
	assert_int_equal(mkdir(out_dir, 0700), 0);
	write_sources(dir, argfile, out_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (int run = 0; run < FROM_EXEC_RUNS; run++) {
		char tid_suffix[48];
		const char *unwalked;
		struct child javac, profiler;
		struct collapsed stacks;
		uint64_t on_main, with_main;
		bool mapped;
		int go, status;

		/* Read and write: opening a FIFO so never waits; the line is there before java reads it. */
		go = open(fifo, O_RDWR | O_CLOEXEC);
		assert_true(go >= 0);
		assert_int_equal(write(go, "go\n", 3), 3);
		snprintf(command, sizeof(command), "exec %s -cp %s JavacDriver 1 @%s hold < %s", jdk_java_path(jdk),
			 classes, argfile, fifo);
		assert_int_equal(harness_start_command(&javac, (char *[]){ "/bin/sh", "-c", command, NULL },
						       STDOUT_FILENO), 0);
		snprintf(pid, sizeof(pid), "%d", (int)javac.pid);
		harness_profiler_args(argv, 32, pid, file, (char *[]){ "-F", "499", "--threads", NULL });
		assert_int_equal(harness_start_profiler(&profiler, argv), 0);
		if (harness_wait_for(&javac, "elapsed_ns", 120)) {
			fprintf(stderr, "javac did not finish; its output:\n%s\n", javac.buf);
			fail();
		}
		/* Held alive (hold): whatever was loaded into it is still mapped. */
		mapped = agent_mapped(javac.pid);
		assert_int_equal(write(go, "end\n", 4), 4);
		status = harness_finish(&profiler, 60);
		if (status != 0)
			fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
		assert_int_equal(status, 0);
		assert_int_equal(harness_finish(&javac, 30), 0);
		close(go);
		assert_int_equal(collapsed_load(file, &stacks), 0);
		busiest_tid(&stacks, "JavacDriver.main", tid_suffix, sizeof(tid_suffix));
		assert_true(tid_suffix[0] != '\0');
		count_tid_frame(&stacks, tid_suffix, "JavacDriver.main", &on_main, &with_main);
		unwalked = strstr(profiler.buf, "unwalked while starting");
		fprintf(stderr, "  %s run %d: agent mapped: %s; main thread%s: %llu samples, %.2f%% reach "
			"JavacDriver.main; %.*s\n", jdk->name, run + 1, mapped ? "yes" : "no", tid_suffix,
			(unsigned long long)on_main, harness_percent(with_main, on_main),
			unwalked ? (int)strcspn(unwalked, ";\n") : 24, unwalked ? unwalked : "walked from the start");
		assert_false(mapped);
		all_main += on_main;
		all_with += with_main;
		share[run] = harness_percent(with_main, on_main);
		mean += share[run] / FROM_EXEC_RUNS;
		collapsed_free(&stacks);
		unlink(file);
	}
	fprintf(stderr, "  %s: %d runs, main thread %llu samples, %.2f%% reach JavacDriver.main\n", jdk->name,
		FROM_EXEC_RUNS, (unsigned long long)all_main, harness_percent(all_with, all_main));
	/*
	 * As javac_main_thread_reaches_main: 99% less three standard errors.
	 * The runs differ by more than their samples do (each JIT compiles its
	 * own code: 97.4 to 99.3% in one JDK 25 set), so the error is the
	 * larger of a share of 99%'s over all samples and the runs' own, the
	 * spread of their shares over the square root of their number.
	 */
	for (int run = 0; run < FROM_EXEC_RUNS; run++)
		spread += (share[run] - mean) * (share[run] - mean) / (FROM_EXEC_RUNS - 1);
	error = fmax(100.0 * sqrt(0.99 * 0.01 / (double)all_main), sqrt(spread / FROM_EXEC_RUNS));
	fprintf(stderr, "  %s: the runs' shares %.2f%% on average, standard error %.2f points\n", jdk->name, mean, error);
	assert_true(all_main >= 1000);
	assert_true(harness_percent(all_with, all_main) >= 99.0 - 3 * error);
	unlink(fifo);
	unlink(argfile);
	free(fifo);
	free(argfile);
	free(out_dir);
	free(file);
	free(classes);
	free(dir);
}

/*
 * WalkShapes' JNI thread: Java calls a native method that calls back into
 * Java, which calls a native method that spins in C. Its samples in the
 * spin must read the whole chain, root first: nativeCallback, its C
 * function, fromNative, nativeLeaf, its C function, the spin.
 */
static void jni_calls_back_into_java(void **state)
{
	const struct jdk *jdk = require_java(state);
	const char *const chain[] = { "WalkShapes.nativeCallback", "Java_WalkShapes_nativeCallback",
				      "WalkShapes.fromNative",	   "WalkShapes.nativeLeaf",
				      "Java_WalkShapes_nativeLeaf", "walkjni_spin" };
	uint64_t in_spin = 0, whole = 0;
	char *jni = walkjni_path();
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "WalkShapes", (char *[]){ "shapes", jni, NULL });
	record(&profiler, &stacks, jvm.out.pid, jvm.dir, (char *[]){ "-F", "997", "-d", "4", "--threads", NULL }, 60);
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		int at = 0;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], "[jni-0 ", 7) && find_frame(&fr, 0, "walkjni_spin") >= 0) {
			in_spin += stacks.counts[i];
			for (size_t k = 0; k < sizeof(chain) / sizeof(chain[0]) && at >= 0; k++)
				at = find_frame(&fr, at, chain[k]);
			if (at >= 0)
				whole += stacks.counts[i];
		}
		free(fr.buf);
	}
	fprintf(stderr, "  %s: %llu samples of jni-0 in walkjni_spin, %.2f%% with the whole chain\n", jdk->name,
		(unsigned long long)in_spin, harness_percent(whole, in_spin));
	/* Five busy threads on the test machine's two CPUs for 4 s at 997 Hz: about 1,500 samples each. */
	assert_true(in_spin >= 500);
	assert_true(whole * 100 >= in_spin * 99);
	collapsed_free(&stacks);
	free(jni);
}

/* "name N" in the profiler's summary (the number after name), or -1. */
static long long summary_count(const struct child *profiler, const char *name)
{
	const char *p = strstr(profiler->buf, name);

	return p ? atoll(p + strlen(name)) : -1;
}

/*
 * A recursion 1000 deep: the walk goes JBPF_MAX_JAVA_FRAMES frames deep
 * and no further; each such sample ends (root side) in the frame that says
 * so, and the summary counts them.
 */
static void deep_recursion_cut_and_counted(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t on_thread = 0, cut = 0;
	long long counted = 0;
	struct jvm jvm;

	jvm_start(&jvm, jdk, "WalkShapes", (char *[]){ "deep", NULL });
	/* 3 s recordings until 1,000 samples of the thread: a loaded machine takes more of them. */
	for (int round = 0; on_thread < 1000 && round < RECORD_ROUNDS; round++) {
		struct child profiler;
		struct collapsed stacks;
		uint64_t n, c;

		record(&profiler, &stacks, jvm.out.pid, jvm.dir, (char *[]){ "-F", "997", "-d", "3", "--threads", NULL },
		       60);
		count_thread_frame(&stacks, "deep-0 ", "[unknown Java: deeper than 256 frames]", &n, &c);
		on_thread += n;
		cut += c;
		counted += summary_count(&profiler, "deeper than 256 frames ");
		collapsed_free(&stacks);
	}
	jvm_stop(&jvm);
	fprintf(stderr, "  %s: deep-0: %llu samples, %.1f%% cut; the summary counts %lld\n", jdk->name,
		(unsigned long long)on_thread, harness_percent(cut, on_thread), counted);
	assert_true(on_thread >= 1000);
	assert_true(cut * 100 >= on_thread * 99);
	assert_true(counted >= (long long)cut);
}

/* -Xint: every Java frame of the CpuSplit workers is interpreted (_[0]), and the walk reaches them all. */
static void interpreter_only(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t on_threads = 0, with_java = 0, compiled = 0;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_start_opts(&jvm, jdk, (char *[]){ "-Xint", NULL }, "CpuSplit", (char *[]){ "-t", "2", NULL });
	record(&profiler, &stacks, jvm.out.pid, jvm.dir,
	       (char *[]){ "-F", "997", "-d", "3", "--threads", "--annotate", NULL }, 60);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;

		frames_split(&fr, stacks.stacks[i]);
		if (fr.n > 0 && !strncmp(fr.f[0], "[split-", 7)) {
			on_threads += stacks.counts[i];
			if (find_frame(&fr, 0, "CpuSplit.work") >= 0)
				with_java += stacks.counts[i];
			for (int k = 0; k < fr.n; k++)
				if (strstr(fr.f[k], "_[j]") || strstr(fr.f[k], "_[i]")) {
					compiled += stacks.counts[i];
					break;
				}
		}
		free(fr.buf);
	}
	fprintf(stderr, "  %s, -Xint: %llu worker samples, %.2f%% reach CpuSplit.work, %llu with a compiled frame\n",
		jdk->name, (unsigned long long)on_threads, harness_percent(with_java, on_threads),
		(unsigned long long)compiled);
	assert_true(on_threads >= 1000);
	assert_true(with_java * 100 >= on_threads * 99);
	assert_int_equal(compiled, 0);
	collapsed_free(&stacks);
}

/*
 * A default recording puts nothing into the JVM: its maps have no trace of
 * the agent's library, the BPF programs sent no signal (-v's count), and
 * the samples still carry Java frames.
 */
static void nothing_loaded_into_the_jvm(void **state)
{
	const struct jdk *jdk = require_java(state);
	char maps_path[64], *maps = NULL;
	uint64_t with_java;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	size_t size = 0;
	FILE *f;

	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "1", NULL });
	record(&profiler, &stacks, jvm.out.pid, jvm.dir, (char *[]){ "-F", "997", "-d", "2", "-v", NULL }, 60);
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)jvm.out.pid);
	f = fopen(maps_path, "r");
	assert_non_null(f);
	assert_true(getdelim(&maps, &size, '\0', f) > 0);
	fclose(f);
	jvm_stop(&jvm);
	with_java = collapsed_count_frame(&stacks, "CpuSplit.share50");
	fprintf(stderr, "  %s: %llu samples in CpuSplit.share50; no signal sent: %s; the agent mapped: %s\n",
		jdk->name, (unsigned long long)with_java, strstr(profiler.buf, "; 0 Java signals sent") ? "yes" : "no",
		strstr(maps, "jbpfagent") ? "yes" : "no");
	assert_true(with_java > 0);
	assert_null(strstr(maps, "jbpfagent"));
	assert_non_null(strstr(profiler.buf, "; 0 Java signals sent"));
	assert_null(strstr(profiler.buf, "Java stacks: "));
	free(maps);
	collapsed_free(&stacks);
}

/*
 * Samples of the threads named prefix* (--threads roots, after the process
 * root with -a), and of those with a CpuSplit frame.
 */
static void count_cpusplit(const struct collapsed *c, const char *prefix, uint64_t *on_threads, uint64_t *with_java)
{
	size_t len = strlen(prefix);

	*on_threads = *with_java = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int t;

		frames_split(&fr, c->stacks[i]);
		for (t = 0; t < 2 && t < fr.n && strncmp(fr.f[t], "[", 1); t++)
			;
		if (t < fr.n && fr.f[t][0] == '[' && !strncmp(fr.f[t] + 1, prefix, len)) {
			*on_threads += c->counts[i];
			if (find_frame(&fr, 1, "CpuSplit.work") >= 0)
				*with_java += c->counts[i];
		}
		free(fr.buf);
	}
}

/*
 * A JVM that refuses every agent (attach disabled, dynamic loading
 * disabled) still has its Java frames: the walk asks nothing of it. The
 * run says nothing about an agent.
 */
static void attach_disabled_still_walked(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t on_threads = 0, with_java = 0;
	struct jvm jvm;

	jvm_start_opts(&jvm, jdk, (char *[]){ "-XX:+DisableAttachMechanism", "-XX:-EnableDynamicAgentLoading", NULL },
		       "CpuSplit", (char *[]){ "-t", "1", "-n", "noattach-", NULL });
	/* 2 s recordings until 300 samples of its threads: a loaded machine takes more of them. */
	for (int round = 0; on_threads < 300 && round < RECORD_ROUNDS; round++) {
		struct child profiler;
		struct collapsed stacks;
		uint64_t n, j;

		record(&profiler, &stacks, jvm.out.pid, jvm.dir,
		       (char *[]){ "--java", "-F", "499", "-d", "2", "--threads", NULL }, 60);
		count_cpusplit(&stacks, "noattach-", &n, &j);
		on_threads += n;
		with_java += j;
		assert_null(strstr(profiler.buf, "agent"));
		collapsed_free(&stacks);
	}
	jvm_stop(&jvm);
	fprintf(stderr, "  %s, attach disabled: %llu samples of its threads, %.2f%% with Java frames\n", jdk->name,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	assert_true(on_threads >= 300);
	assert_true(with_java * 100 >= on_threads * 99);
}

/* Whether process pid maps a libjvm.so now (false when its maps cannot be read). */
static bool maps_libjvm(unsigned pid)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (!(f = fopen(path, "r")))
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

/*
 * Every "JVM pid N" line of -v names a JVM: the one started, or one that
 * maps libjvm.so. A process whose maps even root cannot read (a sandbox's
 * init, here and in CI) is not called one.
 */
static void assert_only_jvms_named(const char *out, pid_t started)
{
	for (const char *p = out; (p = strstr(p, "JVM pid ")); p++) {
		unsigned pid = (unsigned)strtoul(p + 8, NULL, 10);

		if (pid != (unsigned)started && !maps_libjvm(pid))
			fail_msg("pid %u, no JVM, was called one: %.120s", pid, p);
	}
}

/*
 * -a, and a JVM that starts during the recording: it is walked as soon as
 * its layout reads (-v says so), with nothing loaded into it, not even by
 * an attach tried while it starts.
 */
static void all_walks_jvm_started_later(void **state)
{
	const struct jdk *jdk = require_java(state);
	char *dir = harness_tmpdir(), *file = harness_path(dir, "all.collapsed"), line[64];
	uint64_t on_threads, with_java;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-a", "-v", "-F", "199", "-d", "6", "--threads",
									"-f", file, NULL }),
			 0);
	if (harness_wait_for(&profiler, "sampling all processes", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "1", "-n", "walkall-", NULL });
	snprintf(line, sizeof(line), "JVM pid %d: Java frames walked by BPF", (int)jvm.out.pid);
	if (harness_wait_for(&profiler, line, 20))
		fail_msg("the JVM started during the recording was not walked: %s", profiler.buf);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	assert_only_jvms_named(profiler.buf, jvm.out.pid);
	snprintf(line, sizeof(line), "agent loaded into JVM pid %d", (int)jvm.out.pid);
	assert_null(strstr(profiler.buf, line));
	jvm_stop(&jvm);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	count_cpusplit(&stacks, "walkall-", &on_threads, &with_java);
	fprintf(stderr, "  %s, -a, started later: %llu samples of its threads, %.2f%% with Java frames\n", jdk->name,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	/* One busy thread for most of 6 s at 199 Hz, on a loaded machine: a hundred samples at the very least. */
	assert_true(on_threads >= 100);
	assert_true(with_java * 100 >= on_threads * 90);
	harness_output_free(&stacks, file, dir);
}

/*
 * Churn's known call structure (tests/workloads/java/Churn.java,
 * StressPlugin.java): which of the workload's own methods each of its
 * threads runs ("X*" takes every name starting with X), and for some
 * methods the only workload methods that call them directly. JDK methods
 * are not judged: their structure is not the test's to know.
 */
static const char *const churn_started[] = { "Workload.lambda$start$0", "Workload$$Lambda*", "Churn$$Lambda*", NULL };

static const struct {
	const char *thread;    /* a prefix of the thread's name */
	bool started;          /* by Workload.start: churn_started's methods too */
	const char *methods[8];
} churn_threads[] = {
	{ "short", false, { "Churn$$Lambda*", "Churn.shortLife", "Churn.throwFrom", "Churn.deep" } },
	{ "beat", false, { "Churn$$Lambda*", "Churn.shortLife", "Churn.throwFrom", "Churn.deep" } },
	{ "throw", true, { "Churn.throwing", "Churn.throwFrom", "Churn.deep" } },
	{ "spawn-", true, { "Churn.spawn", "Churn.startAndJoin" } },
	{ "alloc", true, { "Churn.allocate" } },
	{ "plugin", true, { "Churn.plugins", "Stress.pluginRound", "Stress$PluginLoader.*", "StressPlugin*" } },
	{ "collect", true, { "Churn.lambda$main$*", "Stress.collect" } },
	/* The main thread: named by the JVM, or by the launcher's comm where its names are not read. */
	{ "main", false, { "Churn.main", "Churn.startAndJoin" } },
	{ "java", false, { "Churn.main", "Churn.startAndJoin" } },
};

static const struct {
	const char *callee;
	const char *callers[3];
} churn_calls[] = {
	{ "Churn.deep", { "Churn.deep", "Churn.throwFrom" } },
	{ "Churn.throwFrom", { "Churn.throwing", "Churn.shortLife" } },
	{ "Churn.startAndJoin", { "Churn.spawn", "Churn.main" } },
	{ "Churn.shortLife", { "Churn$$Lambda*" } },
	{ "Stress.pluginRound", { "Churn.plugins" } },
	{ "StressPlugin.spin", { "StressPlugin.run" } },
	{ "StressPlugin.total", { "StressPlugin.spin" } },
};

static bool name_matches(const char *frame, const char *pattern)
{
	size_t len = strlen(pattern);

	if (len && pattern[len - 1] == '*')
		return !strncmp(frame, pattern, len - 1);
	return !strcmp(frame, pattern);
}

static bool name_in(const char *frame, const char *const patterns[], size_t n)
{
	for (size_t i = 0; i < n && patterns[i]; i++)
		if (name_matches(frame, patterns[i]))
			return true;
	return false;
}

static bool churn_method(const char *frame)
{
	static const char *const classes[] = { "Churn.*", "Churn$*", "Stress.*", "Stress$*", "StressPlugin*",
					       "Workload.*", "Workload$*", NULL };

	return name_in(frame, classes, sizeof(classes) / sizeof(classes[0]));
}

/* Whether thread (the root frame "[name tid=N]") may run the workload method frame. */
static bool churn_thread_runs(const char *thread, const char *frame)
{
	for (size_t i = 0; i < sizeof(churn_threads) / sizeof(churn_threads[0]); i++) {
		size_t len = strlen(churn_threads[i].thread);

		if (strncmp(thread + 1, churn_threads[i].thread, len))
			continue;
		return (churn_threads[i].started && name_in(frame, churn_started, 3)) ||
		       name_in(frame, churn_threads[i].methods, 8);
	}
	return false;
}

/*
 * Whether callee, directly below caller's frame, may be called by it (true
 * for callees without a rule). A walk that stopped, or a frame it could
 * not name, is no wrong name: those are counted apart.
 */
static bool churn_call_known(const char *caller, const char *callee)
{
	if (!strncmp(caller, "[unknown Java", 13))
		return true;
	for (size_t i = 0; i < sizeof(churn_calls) / sizeof(churn_calls[0]); i++)
		if (!strcmp(churn_calls[i].callee, callee))
			return churn_method(caller) && name_in(caller, churn_calls[i].callers, 3);
	return true;
}

/*
 * Churn under the walk: threads born and dying by the thousand, exceptions
 * thrown from 200 frames deep, classes loaded into loaders that are then
 * dropped and unloaded with their compiled code, methods deoptimised, a
 * collection every second, in a code cache cut to 2.5 MB (one heap) where
 * freed code is soon reused. Every frame that names one of the workload's
 * methods must be one its thread runs, called from where the workload
 * calls it: a walk that read a freed or reused blob or Method* and named
 * it anyway fails here. Races caught are counted by the summary (printed).
 * The JVM keeps beating throughout, and its threads' samples keep their
 * Java frames.
 */
static void churn_names_only_methods_on_the_stack(void **state)
{
	const struct jdk *jdk = require_java(state);
	uint64_t samples = 0, judged = 0, wrong = 0, throw_samples = 0, throw_java = 0;
	const char *unnamed;
	struct heartbeats hb;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;

	jvm_require(jdk, "Churn");
	jvm_start_opts(&jvm, jdk, (char *[]){ "-XX:ReservedCodeCacheSize=2500k", "-XX:-SegmentedCodeCache", NULL },
		       "Churn", NULL);
	jvm_record_stacks(&jvm, &profiler, "churn.collapsed", (char *[]){ "-F", "997", "-d", "4", "--threads", NULL },
			  1000, &stacks, &hb);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		bool ok = true;

		frames_split(&fr, stacks.stacks[i]);
		samples += stacks.counts[i];
		if (fr.n > 0 && !strncmp(fr.f[0], "[throw tid=", 11)) {
			throw_samples += stacks.counts[i];
			throw_java += find_frame(&fr, 1, "Churn.throwing") >= 0 ? stacks.counts[i] : 0;
		}
		for (int k = 1; k < fr.n; k++) {
			if (!churn_method(fr.f[k]))
				continue;
			judged += stacks.counts[i];
			if (!churn_thread_runs(fr.f[0], fr.f[k]) || !churn_call_known(fr.f[k - 1], fr.f[k])) {
				fprintf(stderr, "  %s: frame %d of %s named wrongly\n", fr.f[k], k, stacks.stacks[i]);
				ok = false;
			}
		}
		wrong += ok ? 0 : stacks.counts[i];
		free(fr.buf);
	}
	unnamed = strstr(profiler.buf, "Java frames not named: ");
	fprintf(stderr, "  %s, Churn: %llu samples, %llu workload frames judged, %llu samples with a wrong one; "
		"%ld beats, longest gap %lld ms; thread throw %.1f%% in Churn.throwing; %.*s\n", jdk->name,
		(unsigned long long)samples, (unsigned long long)judged, (unsigned long long)wrong, hb.beats,
		(long long)hb.longest_ms, harness_percent(throw_java, throw_samples), unnamed ? (int)strcspn(unnamed,
		"\n") : 0,
		unnamed ? unnamed : "");
	jvm_assert_did(&jvm, "the JVM did",
		       (const struct jvm_minimum[]){ { "threads_started", 101 },
						     { "exceptions", 101 },
						     { "plugin_rounds", 1 },
						     { "classes_unloaded", 1 },
						     { NULL, 0 } });
	/* Busy threads for 4 s at 997 Hz: a thousand samples judged at the very least. */
	assert_true(judged >= 1000);
	assert_true(throw_samples >= 300);
	assert_true(throw_java * 100 >= throw_samples * 95);
	assert_int_equal(wrong, 0);
	collapsed_free(&stacks);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }
#define JDK_TESTS(f) JDK_TEST(f, jdk17), JDK_TEST(f, jdk25)

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TESTS(walk_agrees_with_agent),
		JDK_TESTS(deep_inlining_kinds_agree),
		JDK_TESTS(javac_main_thread_reaches_main),
		JDK_TESTS(javac_profiled_from_its_exec),
		JDK_TESTS(jni_calls_back_into_java),
		JDK_TESTS(deep_recursion_cut_and_counted),
		JDK_TESTS(interpreter_only),
		JDK_TESTS(nothing_loaded_into_the_jvm),
		JDK_TESTS(attach_disabled_still_walked),
		JDK_TESTS(all_walks_jvm_started_later),
		JDK_TESTS(churn_names_only_methods_on_the_stack),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("java_walk", tests, NULL, NULL);
}
