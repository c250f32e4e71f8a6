/*
 * java_walk_run: how tests/integration/test_java_walk.c records a JVM:
 * the JDK required, one recording of a JVM's collapsed stacks, and
 * --java-stacks both's agreement line (BPF's walk against the agent's
 * AsyncGetCallTrace) parsed, summed over recordings and checked for a
 * workload, each share less three standard errors of its count.
 */
#ifndef JBPF_JAVA_WALK_RUN_H
#define JBPF_JAVA_WALK_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"
#include "jvm.h"

/* Recordings a test makes at most while it gathers the samples it judges by: a machine ten times too slow. */
#define RECORD_ROUNDS 10

/* The figures of the summary's "BPF walk against the agent: ..." part. */
struct agreement {
	unsigned long long samples, none, stopped, bci_pairs, kind_pairs;
	double methods, bci, kinds;
};

/*
 * The comparisons of several recordings, summed: each share the summary
 * prints (to a tenth of a point) weighted back into a count, which loses
 * less than 0.05 points of the whole.
 */
struct agreement_sum {
	double samples, methods, bci_pairs, bci, kind_pairs, kinds;
	int rounds;
};

/*
 * Samples compared per workload, over as many 4 s recordings as it takes
 * (RECORD_ROUNDS at most); fewer than AGREE_FEWEST then are too few to judge.
 */
#define AGREE_SAMPLES 1000
#define AGREE_FEWEST 300

/* The test's JDK (its state), once jvm_require lets it run; WalkShapes stands for the built classes. */
const struct jdk *require_java(void **state);

/*
 * Records the JVM: the profiler with "-p PID -f FILE" and args, to the end.
 * Fails unless it exits 0 and FILE parses.
 */
void record(struct child *profiler, struct collapsed *stacks, pid_t pid, const char *dir, char *const args[],
	    int timeout_s);

/*
 * How far below its aim a share measured over n trials may fall: three
 * standard errors of the aim, in points (99.5% over 3,000 samples: 0.39).
 */
double three_errors(double aim_percent, double n);

/* part as a percentage of whole; 0 for no whole. */
double share_of(double part, double whole);

/*
 * One recording of jvm under args (which ask for --java-stacks both), its
 * comparison added to sum and printed as "what round N", its stacks into
 * *stacks (the caller frees them).
 */
void compare_once(struct jvm *jvm, const struct jdk *jdk, const char *what, char *const args[],
		  struct agreement_sum *sum, struct collapsed *stacks);

/*
 * One workload under --java-stacks both: the walk agrees with the agent
 * on 99% of samples' methods, bytecode indexes and kinds, each less three
 * standard errors of its count.
 */
void agrees(const struct jdk *jdk, const char *what, char *const jvm_opts[], const char *class,
	    char *const args[]);

/* The path of the JNI library WalkShapes loads (caller frees). */
char *walkjni_path(void);

/* Samples of threads whose root frame starts with "[prefix", and of those with a frame named frame. */
void count_thread_frame(const struct collapsed *c, const char *prefix, const char *frame, uint64_t *on_threads,
			uint64_t *with_frame);

/*
 * The thread root ("[name tid=N]", --threads) with the most samples that
 * have a frame named frame, into root (size bytes, without the '['), in
 * one pass: the thread that runs it. Without the agent a Java thread is named by its comm, which for the
 * thread running main() is the launcher's "java", so the name cannot tell.
 */
void thread_running(const struct collapsed *c, const char *frame, char *root, size_t size);

/*
 * Samples of thread tid (its roots "[any name tid=TID]": named by the kernel
 * until the JVM's name is read) outside the JVM's creation and the
 * launcher's loading of the main class, and of those the ones that reach
 * frame.
 */
void count_tid_frame(const struct collapsed *c, const char *tid_suffix, const char *frame, uint64_t *on_tid,
		     uint64_t *with_frame);

/*
 * The " tid=N]" of the thread root with the most samples that reach frame,
 * into out, in one pass (the recordings have thousands of stacks): "" when
 * none does.
 */
void busiest_tid(const struct collapsed *c, const char *frame, char *out, size_t size);

/*
 * Samples of DeepInline's workers (threads "inline-*") with a frame of its
 * own ("DeepInline..."), and of those the ones whose loop, DeepInline.run,
 * ran compiled (--annotate: "DeepInline.run_[j]", its OSR nmethod).
 */
void count_loop_compiled(const struct collapsed *c, uint64_t *with_java, uint64_t *compiled);

#endif /* JBPF_JAVA_WALK_RUN_H */
