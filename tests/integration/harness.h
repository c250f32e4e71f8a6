/*
 * harness: what the integration tests share. They run the real profiler
 * ($JBPFPROF) against real workloads ($WORKLOAD_DIR) and read its output.
 *
 * Synchronisation is by pipes, never by sleeping: a workload prints "ready"
 * when it runs, and the profiler's stderr is read until it says it samples.
 * Every wait has a deadline, so a hung profiler fails a test instead of
 * hanging the suite.
 */
#ifndef JBPF_HARNESS_H
#define JBPF_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <sys/types.h>

#include <cmocka.h>

/* cmocka teardown for every test: kills and reaps children a failed test left. */
int harness_teardown(void **state);
/* $JBPF_TEST_FILTER, when set: only the tests whose names match this cmocka pattern run. Call before the run. */
void harness_filter_tests(void);
#define HARNESS_TEST(f) cmocka_unit_test_teardown(f, harness_teardown)

/* Skips the calling test unless root and the profiler binary are there. */
void harness_require_root(void);

/*
 * ms scaled by $JBPF_TIMEOUT_SCALE (a number, default 1): the harness's deadlines (waits for a line, for an
 * exit, for a JVM's heartbeat) stretched for a machine far slower than the one they were chosen on, such as
 * a kernel emulated by qemu (tests/kernels/). Deadlines only, never a result's tolerance.
 */
int64_t harness_deadline_ms(int64_t ms);

const char *harness_profiler(void);
/* The variable's value, or fallback when it is unset or empty. */
const char *harness_getenv(const char *name, const char *fallback);
/* Path of workload name; the returned string is owned by the caller. */
char *harness_workload(const char *name);

struct child {
	pid_t pid;
	int out_fd;  /* the child's stdout (workloads) or stderr (the profiler) */
	char buf[65536];
	size_t len;  /* bytes of output read so far, NUL-terminated in buf */
};

/* CPU time in ms of process pid and of the children it reaped (/proc/PID/stat); -1 if it cannot be read. */
long long harness_process_cpu_ms(pid_t pid);
/*
 * Waits until process pid has used cpu_ms more CPU time than at the call,
 * reading profiler's stderr meanwhile. -1 if it did not within timeout_s
 * (scaled), if it is gone, or if the profiler's stderr ended.
 */
int harness_wait_cpu(struct child *profiler, pid_t pid, long long cpu_ms, int timeout_s);

/* Starts argv with stdout piped and waits (10 s at most, scaled) for its "ready" line. */
int harness_start_workload(struct child *child, char *const argv[]);
/* SIGTERM, then reads the rest of its stdout and reaps it. Returns its exit status. */
int harness_stop_workload(struct child *child);

/* Starts argv (argv[0] a path) with its descriptor fd (1 or 2) piped. */
int harness_start_command(struct child *child, char *const argv[], int fd);
/* Starts the profiler with args (argv[0] is added) and stderr piped. */
int harness_start_profiler(struct child *child, char *const args[]);
/*
 * Reads what the child's pipe holds, waiting up to timeout_ms for some:
 * 0 read some, 1 EOF (or its buffer is full), -1 nothing came in time.
 */
int harness_read_some(struct child *child, int timeout_ms);
/* Reads the child's pipe until text appears; -1 after timeout_s (scaled) or EOF. */
int harness_wait_for(struct child *child, const char *text, int timeout_s);
/*
 * Reads to EOF (timeout_s at most, scaled, then SIGKILL) and reaps. Returns the exit status, -1 if killed.
 * With $JBPF_NOTES_FILE set, appends the output's "jbpfprof: fallback: " and "jbpfprof: unavailable: "
 * lines to that file; with $JBPF_OUTPUT_LOG set, all of the output to that one.
 */
int harness_finish(struct child *child, int timeout_s);
/* Starts the profiler and finishes it: exit status, stderr in child->buf. */
int harness_run_profiler(struct child *child, char *const args[], int timeout_s);
/*
 * Starts the profiler (args without -d), waits for it to sample, then until
 * process target has used cpu_ms of CPU time (harness_wait_cpu: timeout_s,
 * scaled), stops it with SIGINT and finishes it (harness_finish). A test
 * that needs so many samples gets them however loaded the machine is:
 * slower, never short.
 */
int harness_run_profiler_cpu(struct child *child, char *const args[], pid_t target, long long cpu_ms, int timeout_s);
/* One event of a pprof recording of several as collapsed stacks (jbpfprof convert --event); fails the test if not. */
void harness_convert_event(const char *pprof, const char *event, const char *collapsed);

/* Collapsed stacks read back: one entry per line. */
struct collapsed {
	char **stacks;
	uint64_t *counts;
	size_t n;
	uint64_t total;
};

int collapsed_load(const char *path, struct collapsed *c);
/* part as a percentage of whole; 0 when whole is 0. */
double harness_percent(uint64_t part, uint64_t whole);

void collapsed_free(struct collapsed *c);
/* Samples whose stack has a frame exactly equal to frame. */
uint64_t collapsed_count_frame(const struct collapsed *c, const char *frame);
/*
 * Whether the len bytes at frame (one frame of a stack, which need not end
 * there) are name, alone or with an --annotate suffix such as _[j].
 */
int collapsed_frame_is(const char *frame, size_t len, const char *name);

/* Deepest stack read back: 127 kernel + 127 native + 256 Java frames, and roots. */
#define MAX_FRAMES 1024

/* One collapsed stack split into frames (names point into buf, which the caller frees). */
struct frames {
	char *buf;
	const char *f[MAX_FRAMES];
	int n;
};

/* Splits stack (frames separated by ';') into fr; fails the test when out of memory. */
void frames_split(struct frames *fr, const char *stack);
/* Index of the first frame at or after from that is name (as collapsed_frame_is), or -1. */
int find_frame(const struct frames *fr, int from, const char *name);

/*
 * The workload's truth: the value printed after "name " in its output, or
 * -1 if absent.
 */
long long harness_truth(const struct child *child, const char *name);

/*
 * The steal time of all CPUs since boot, in ns: time the hypervisor gave
 * our virtual CPUs' host CPUs to others. /proc/stat counts it in clock ticks.
 */
double harness_steal_ns(void);

/*
 * Statistical checks of shares (percentages of samples against a workload's
 * truth): the error allowed in percentage points is floor_pp, or 4.5
 * standard errors of the widest share (50%) over the samples there are,
 * whichever is more. A fixed recording gets fewer samples when the machine
 * leaves the workload less CPU: a wider allowance, never a failure. Below
 * HARNESS_MIN_SHARE_SAMPLES the allowance (over 11 points) would no longer
 * tell a sampler that aliases from one that does not.
 */
#define HARNESS_MIN_SHARE_SAMPLES 400
double harness_share_tolerance(uint64_t samples, double floor_pp);

/* One workload profiled once, and what the test reads back. */
struct profiled {
	struct child workload;  /* its output: the truth it printed when stopped */
	struct child profiler;  /* the profiler's stderr */
	int workload_status;    /* exit status of each */
	int profiler_status;
	struct collapsed stacks;
	char *dir, *file;
};

/*
 * Fills argv (max entries, at least 5) with "-p PID" when pid is not NULL,
 * "-f FILE", then args, NULL-terminated: a profiler command line.
 */
char **harness_profiler_args(char **argv, size_t max, const char *pid, char *file, char *const args[]);

/*
 * Starts the workload name with wargs, runs the profiler with args plus
 * "-f FILE" (a fresh collapsed file) and, when by_pid, "-p PID", then stops
 * the workload (SIGTERM; one that already exited is just reaped) and loads
 * FILE. Fails the test if the workload does not start or FILE does not
 * parse; the profiler's status is left for the test to check.
 */
void harness_profile(struct profiled *r, const char *name, char *const wargs[], char *const args[], int by_pid,
		     int timeout_s);
/*
 * As harness_profile, but the recording (args without -d) lasts until the
 * workload has used cpu_ms of CPU time (its threads and the children it
 * reaped) after the profiler said it samples (harness_run_profiler_cpu).
 * A workload that has not used them within timeout_s (scaled) is stopped
 * all the same, and the test's own checks fail on what was recorded.
 */
void harness_profile_cpu(struct profiled *r, const char *name, char *const wargs[], char *const args[], int by_pid,
			 long long cpu_ms, int timeout_s);
void harness_profiled_free(struct profiled *r);
/* Frees stacks, removes file and then its directory dir, and frees both names (each may be NULL). */
void harness_output_free(struct collapsed *stacks, char *file, char *dir);

/* A fresh temporary directory (caller frees the string) and a path in it. */
char *harness_tmpdir(void);
/*
 * Removes dir and everything under it, symbolic links as links (a tree may
 * hold what a hostile user put there). What cannot be removed stays; the
 * walk goes on.
 */
void harness_remove_tree(const char *dir);
char *harness_path(const char *dir, const char *file);

#endif /* JBPF_HARNESS_H */
