/*
 * jvm: what the Java integration tests share: the JDKs they run on, and a
 * JVM started for one test and stopped with a check for a crash report.
 *
 * A JDK's launcher is the path its variable names ($JAVA17, $JAVA25) or,
 * when that is unset or empty, its default. The workload classes
 * (tests/workloads/java/java.mk) are in $JAVA_CLASSES, by default the java/
 * directory beside $WORKLOAD_DIR, else build/java.
 *
 * Each JVM runs in a temporary directory of its own, so a crash report
 * (hs_err_pid*.log) it writes is found there. These functions report by
 * failing or skipping the calling cmocka test, never by returning an error.
 */
#ifndef JBPF_JVM_H
#define JBPF_JVM_H

#include "harness.h"

#include <stdint.h>

struct jdk {
	const char *name; /* for messages */
	const char *env;  /* variable that overrides path */
	const char *path; /* the java launcher */
};

/* Debian's OpenJDK 17 ($JAVA17) and Temurin 25 ($JAVA25). */
extern const struct jdk jdk17, jdk25;

/* The JDK's java launcher: $<env>, or its default path. */
const char *jdk_java_path(const struct jdk *jdk);

/*
 * Skips the test unless root, the profiler and the JDK are there; fails it
 * if probe_class (a workload class such as "CpuSplit", standing for all of
 * them) is not built.
 */
void jvm_require(const struct jdk *jdk, const char *probe_class);

/* The workload classes' directory, absolute (caller frees); NULL if it cannot be resolved. */
char *jvm_class_dir(void);

/* A JVM running one workload, in a directory of its own. */
struct jvm {
	struct child out; /* its stdout: ready, then what the workload prints */
	char *dir;        /* its working directory, until jvm_stop removes it */
	int status;       /* exit status once stopped */
};

/*
 * Starts "java -cp CLASSES class args..." (args NULL-terminated, or NULL) in
 * a fresh directory and waits for its "ready"; fails the test if it does
 * not come in 10 s. jvm->out.pid is the JVM's pid.
 */
void jvm_start(struct jvm *jvm, const struct jdk *jdk, const char *class, char *const args[]);
/* The same with options for the JVM itself (jvm_opts NULL-terminated, or NULL) before -cp. */
void jvm_start_opts(struct jvm *jvm, const struct jdk *jdk, char *const jvm_opts[], const char *class,
		    char *const args[]);
/* Fails the test if the JVM left a crash report in its directory (left in place). */
void jvm_assert_no_crash_report(const struct jvm *jvm);
/*
 * SIGTERM: the workload prints its truth from a shutdown hook, and the JVM
 * exits with 143 (128 + SIGTERM) after running it. Empties the directory but
 * for a crash report, fails on one, removes the directory, then fails
 * unless the status is 143. jvm->out keeps the JVM's output.
 */
void jvm_stop(struct jvm *jvm);

/*
 * Liveness: a JVM whose workload prints "alive N" lines (a heartbeat, from a
 * thread that needs the rest of the JVM to work) is watched while the
 * profiler records it, and for a while after. A JVM that hangs is still
 * there, so being alive proves nothing; beats that keep coming do.
 */
struct heartbeats {
	size_t parsed;      /* bytes of the JVM's output already looked at */
	int64_t last_ms;    /* when the latest beat was read (CLOCK_MONOTONIC) */
	int64_t longest_ms; /* longest time without a beat, watching included */
	long beats;         /* beats read while watching */
	int stalled;        /* no beat came for the bound: the JVM stopped */
};

/*
 * Starts the profiler with "-p PID -f FILE" and args, reads the JVM's heartbeats until the
 * profiler exits (timeout_s at most, scaled, then it is killed) and for after_ms
 * more. Returns the profiler's exit status (-1 if killed), its stderr in
 * profiler->buf, the beats in hb. As soon as bound_ms (scaled) pass without a beat,
 * prints where the JVM's threads are, kills the profiler if it still runs,
 * sets hb->stalled and returns: the caller reports, and jvm_kill()s the JVM.
 * Fails the test if the JVM's output ends (it exited or crashed).
 */
int jvm_record_watched(struct jvm *jvm, struct child *profiler, char *file, char *const args[], int timeout_s,
		       int bound_ms, int after_ms, struct heartbeats *hb);

/*
 * jvm_record_watched's common case: a recording of at most 60 s into
 * collapsed stacks (name, in the JVM's directory), a stall of 2 s, the
 * JVM watched after_ms more. Fails the test (the JVM killed) if it
 * stalled, or if the profiler failed (its stderr printed); else the stacks
 * into *stacks, the file gone, the profiler's stderr in profiler->buf,
 * and the beats in *hb unless hb is NULL.
 */
void jvm_record_stacks(struct jvm *jvm, struct child *profiler, const char *name, char *const args[], int after_ms,
		       struct collapsed *stacks, struct heartbeats *hb);

/*
 * J and N of the profiler's summary "Java stacks: J of N joined" (its
 * stderr in profiler): 0, or -1 when the summary has no such part.
 */
int jvm_java_summary(const struct child *profiler, unsigned long long *joined, unsigned long long *on_jvm);

/*
 * W, N and X of the BPF walk's summary "W of N JVM thread samples with Java
 * frames, X% of them walked to the root" (the profiler's stderr in
 * profiler), and where that part starts (line; NULL to skip): 0, or -1
 * when the summary has no such part.
 */
int jvm_walk_summary(const struct child *profiler, unsigned long long *with_java, unsigned long long *on_jvm,
		     double *walked_pct, const char **line);

/* A quantity a stopped workload printed (its truth), and the least it must be. */
struct jvm_minimum {
	const char *name;
	long long least;
};

/*
 * After jvm_stop: prints "  label: name value, ..." for each of minimums
 * (ended by a NULL name), then fails the test if any value is below its
 * least or was not printed: shows that the work the test needs happened.
 */
void jvm_assert_did(const struct jvm *jvm, const char *label, const struct jvm_minimum minimums[]);

/* SIGKILL, for a JVM that stopped answering; then as jvm_stop, whatever the status. */
void jvm_kill(struct jvm *jvm);

/* Fails the test if the profiler (its stderr in profiler) said it could not load its agent. */
void jvm_assert_agent_loaded(const struct child *profiler);

#endif /* JBPF_JVM_H */
