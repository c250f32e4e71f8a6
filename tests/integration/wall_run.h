/*
 * wall_run: what tests/integration/test_wall.c records and reads: one
 * recording of tests/workloads/offcpu.c under the profiler (its window,
 * its collapsed stacks) with the clocks read around it, and for the "mix"
 * the long-lived threads' schedstat sampled every 2 ms while it ran; then
 * a collapsed stack's thread, state and frames, and a thread's time in
 * a state.
 */
#ifndef JBPF_WALL_RUN_H
#define JBPF_WALL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* The long-lived threads of "offcpu mix", as it names them. */
enum { SPIN, NANOSLEEP, PIPEREAD, FEEDER, FUTEX, STUCK, CHURN, NR_MIX };

extern const char *const mix_names[NR_MIX];

enum state { RUNNING, RUNNABLE, SLEEPING, BLOCKED, NR_STATES };

/* The long-lived threads' schedstat at one instant. */
struct sched_point {
	int64_t t_ns;                /* CLOCK_MONOTONIC, once all was read */
	int64_t from_ns;             /* CLOCK_MONOTONIC, before anything was read */
	double cpu_ns[NR_MIX];       /* on a CPU since the thread started */
	double runqueue_ns[NR_MIX];  /* waiting on a runqueue since it started (see discount_asleep) */
	double steal_ns;             /* all CPUs' steal time since boot (/proc/stat) */
	char state[NR_MIX];          /* its state letter in /proc/PID/task/TID/stat */
};

/* Points are read about every 2 ms while the profiler runs: 130 s of them. */
#define MAX_POINTS 65536

/* One recording of offcpu, and the clocks the test read around it. */
struct wall_run {
	struct child workload, profiler;
	int profiler_status, workload_status;
	struct collapsed stacks;
	char *dir, *file;
	uint64_t window_us;  /* "window: N us" from the profiler's -v output */
	long tids[NR_MIX];   /* mix only: "tid N name" from the workload */
	int64_t launch_ns;   /* CLOCK_MONOTONIC as the profiler was started, */
	int64_t sampling_ns; /* as its "jbpfprof: sampling" line was read, */
	int64_t end_ns;      /* and once it had exited */
	struct sched_point *points; /* mix only: from launch_ns to end_ns */
	size_t nr_points;
	double asleep_queued_ns[NR_MIX]; /* runqueue time schedstat counted while the thread slept */
};

/* The last point read at or before t, and the first at or after it. */
void points_around(const struct wall_run *r, int64_t t, size_t *before, size_t *after);

/* Field j of thread i at point k: 0 on-CPU, 1 runqueue, 2 both (ns). */
double point_field(const struct wall_run *r, size_t k, int i, int j);

/*
 * Starts offcpu with wargs, profiles it with "-p PID -f FILE" and args
 * (which must include -v, for the window), and loads the collapsed output.
 * For mix, also reads the threads' tids, and their schedstat from the
 * profiler's start to its exit.
 */
void record(struct wall_run *r, char *const wargs[], char *const args[]);

void wall_run_free(struct wall_run *r);

/* ---- reading stacks ------------------------------------------------------ */
/* The tid in a stack's "[<name> tid=<tid>]" first frame; -1 without one. */
long stack_tid(const char *stack);

/* Whether the stack's first frame is "[<name> tid=...]". */
int stack_thread_named(const char *stack, const char *name);

/* The state its last frame names, or NR_STATES if none. */
enum state stack_state(const char *stack);

/* Microseconds of thread tid: all of it, or only in state (NR_STATES: any), with kernel frame part (NULL:
 * any). */
uint64_t thread_us(const struct collapsed *c, long tid, enum state state, const char *part);

/* The stacks of thread tid in state of 1 ms or more, to tell what an account that is off came from. */
void print_thread_stacks(const struct collapsed *c, long tid, enum state state);

#endif /* JBPF_WALL_RUN_H */
