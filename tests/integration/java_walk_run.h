/*
 * java_walk_run: how tests/integration/test_java_walk.c records a JVM:
 * the JDK required, one recording of a JVM's collapsed stacks, and
 * --java-stacks both's agreement line (BPF's walk against the agent's
 * AsyncGetCallTrace) parsed and checked for a workload.
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

/* The test's JDK (its state), once jvm_require lets it run; WalkShapes stands for the built classes. */
const struct jdk *require_java(void **state);

/*
 * Records the JVM: the profiler with "-p PID -f FILE" and args, to the end.
 * Fails unless it exits 0 and FILE parses.
 */
void record(struct child *profiler, struct collapsed *stacks, pid_t pid, const char *dir, char *const args[],
	    int timeout_s);

/* One workload under --java-stacks both: the walk agrees with the agent on 99% of samples. */
void agrees(const struct jdk *jdk, const char *what, char *const jvm_opts[], const char *class,
	    char *const args[]);

/* The path of the JNI library WalkShapes loads (caller frees). */
char *walkjni_path(void);

#endif /* JBPF_JAVA_WALK_RUN_H */
