/*
 * wall_run: one recording of offcpu and the kernel's clocks around it
 * (contract in wall_run.h).
 */
#include "wall_run.h"

#include "harness.h"
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const mix_names[NR_MIX] = { "spin", "nanosleep", "piperead", "feeder",
						"futex", "stuck", "churn" };

static const char *const state_frames[NR_STATES] = { "[running]", "[runnable]", "[sleeping]", "[blocked]" };

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The state letter of a thread (R, S, D...) from /proc/PID/task/TID/stat. */
static char thread_state(pid_t pid, long tid)
{
	char path[64], line[512], *paren;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	/* The name, in parentheses, may hold anything: the state follows the last ')'. */
	paren = strrchr(line, ')');
	assert_true(paren && paren[1] == ' ' && paren[2]);
	return paren[2];
}

/*
 * Appends the long-lived threads' schedstat now (first two fields: on-CPU
 * and runqueue ns), and their state.
 */
static void read_schedstats(struct wall_run *r)
{
	struct sched_point *point;

	if (r->nr_points == MAX_POINTS)
		r->nr_points--; /* full: the last point moves on, so the end is still read */
	point = &r->points[r->nr_points++];
	point->from_ns = monotonic_ns();
	for (int i = 0; i < NR_MIX; i++) {
		unsigned long long cpu, wait;
		char path[64];
		FILE *f;
		int n;

		point->state[i] = thread_state(r->workload.pid, r->tids[i]);
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/schedstat", (int)r->workload.pid, r->tids[i]);
		f = fopen(path, "r");
		assert_non_null(f);
		n = fscanf(f, "%llu %llu", &cpu, &wait);
		fclose(f);
		assert_int_equal(n, 2);
		point->cpu_ns[i] = (double)cpu;
		point->runqueue_ns[i] = (double)wait;
	}
	point->steal_ns = harness_steal_ns();
	point->t_ns = monotonic_ns();
}

/*
 * Takes out of the runqueue counts what the kernel counted there while the
 * thread slept. EEVDF keeps a thread that goes to sleep having run more
 * than its share on its runqueue, marked delayed, until it is picked or
 * woken (DELAY_DEQUEUE), and the load balancer may move it to another CPU
 * meanwhile. The move enqueues it there, which starts its schedstat
 * runqueue clock (sched_info_enqueue), asleep as it is; its wakeup leaves
 * that clock running, and when it runs the whole time since the move is
 * added as a wait for a CPU. The churn thread, asleep in pthread_join()
 * while a short thread lives, was seen so counted 97 ms "on a runqueue"
 * that it spent asleep but for the last 21 us (sched_migrate_task while
 * its sched_switch said S, then sched_wakeup 21 us before it ran).
 *
 * A thread read in any state but R cannot be waiting for a CPU then. So
 * what the count gained up to a read k, from waits that all ended after
 * read k-1, began no earlier than the last read before k that found the
 * thread not runnable: the gain is at most the time since that read
 * started, and the excess is taken out here (and noted for the report).
 */
static void discount_asleep(struct wall_run *r)
{
	for (int i = 0; i < NR_MIX; i++) {
		double taken = 0.0;
		int64_t asleep_at = -1; /* start of the last read that found it not runnable */

		for (size_t k = 1; k < r->nr_points; k++) {
			struct sched_point *prev = &r->points[k - 1], *point = &r->points[k];
			/* prev is already discounted, by taken; point not yet. */
			double gain = point->runqueue_ns[i] - (prev->runqueue_ns[i] + taken);

			if (prev->state[i] != 'R')
				asleep_at = prev->from_ns;
			if (asleep_at >= 0 && gain > (double)(point->t_ns - asleep_at))
				taken += gain - (double)(point->t_ns - asleep_at);
			point->runqueue_ns[i] -= taken;
		}
		r->asleep_queued_ns[i] = taken;
	}
}

void points_around(const struct wall_run *r, int64_t t, size_t *before, size_t *after)
{
	size_t k = 0;

	while (k + 1 < r->nr_points && r->points[k + 1].t_ns <= t)
		k++;
	*before = k;
	*after = r->points[k].t_ns >= t || k + 1 == r->nr_points ? k : k + 1;
}

double point_field(const struct wall_run *r, size_t k, int i, int j)
{
	const struct sched_point *point = &r->points[k];

	if (j < 2)
		return j == 0 ? point->cpu_ns[i] : point->runqueue_ns[i];
	return point->cpu_ns[i] + point->runqueue_ns[i];
}

/*
 * Reads the profiler's stderr to its end, noting when it says it samples;
 * for mix, reads the long-lived threads' schedstat every 2 ms meanwhile.
 */
static void follow_profiler(struct wall_run *r, int mix)
{
	int64_t deadline = monotonic_ns() + 120 * 1000000000LL;
	struct child *p = &r->profiler;

	for (;;) {
		struct pollfd pfd = { .fd = p->out_fd, .events = POLLIN };
		int ready = poll(&pfd, 1, 2);

		if (mix)
			read_schedstats(r);
		if (ready > 0) {
			ssize_t n = read(p->out_fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len);

			if (n <= 0)
				break;
			p->len += (size_t)n;
			p->buf[p->len] = '\0';
			if (!r->sampling_ns && strstr(p->buf, "jbpfprof: sampling"))
				r->sampling_ns = monotonic_ns();
		}
		if (monotonic_ns() > deadline || p->len + 1 >= sizeof(p->buf))
			break;
	}
	/* At EOF already, unless the deadline passed: then it is killed. */
	r->profiler_status = harness_finish(p, 1);
	r->end_ns = monotonic_ns();
	if (mix)
		read_schedstats(r);
}

/* "tid <tid> <name>" printed by offcpu mix; -1 if absent. */
static long mix_tid(const struct child *workload, const char *name)
{
	for (const char *p = workload->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char line_name[32];
		long tid;

		if (sscanf(p, "tid %ld %31s", &tid, line_name) == 2 && !strcmp(line_name, name))
			return tid;
	}
	return -1;
}

/* The number after "window: " in the profiler's stderr; 0 if absent. */
static uint64_t parse_window_us(const char *stderr_text)
{
	const char *p = strstr(stderr_text, "window: ");

	return p ? strtoull(p + strlen("window: "), NULL, 10) : 0;
}

void record(struct wall_run *r, char *const wargs[], char *const args[])
{
	char *wargv[8] = { harness_workload("offcpu") }, *pargs[48], pid[16];
	int mix = !strcmp(wargs[0], "mix");

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; wargs[i] && i + 2 < 8; i++)
		wargv[i + 1] = wargs[i];
	r->dir = harness_tmpdir();
	assert_non_null(r->dir);
	r->file = harness_path(r->dir, "wall.collapsed");
	assert_int_equal(harness_start_workload(&r->workload, wargv), 0);
	free(wargv[0]);
	for (int i = 0; mix && i < NR_MIX; i++) {
		r->tids[i] = mix_tid(&r->workload, mix_names[i]);
		assert_true(r->tids[i] > 0);
	}
	snprintf(pid, sizeof(pid), "%d", (int)r->workload.pid);
	harness_profiler_args(pargs, 48, pid, r->file, args);

	if (mix) {
		r->points = calloc(MAX_POINTS, sizeof(*r->points));
		assert_non_null(r->points);
		read_schedstats(r);
	}
	r->launch_ns = monotonic_ns();
	assert_int_equal(harness_start_profiler(&r->profiler, pargs), 0);
	follow_profiler(r, mix);
	if (!r->sampling_ns) {
		fprintf(stderr, "the profiler did not start sampling (status %d); its stderr:\n%s\n",
			r->profiler_status, r->profiler.buf);
		harness_stop_workload(&r->workload);
		fail();
	}
	r->workload_status = harness_stop_workload(&r->workload);
	if (mix)
		discount_asleep(r);
	if (r->profiler_status != 0)
		fprintf(stderr, "profiler exited with %d; its stderr:\n%s\n", r->profiler_status,
			r->profiler.buf);
	assert_int_equal(r->profiler_status, 0);
	assert_int_equal(r->workload_status, 0);
	assert_int_equal(collapsed_load(r->file, &r->stacks), 0);
	r->window_us = parse_window_us(r->profiler.buf);
	if (!r->window_us)
		fprintf(stderr, "no \"window: N us\" line in the profiler's stderr:\n%s\n", r->profiler.buf);
	assert_true(r->window_us > 0);
	fprintf(stderr,
		"  window %" PRIu64 " us; profiler start to sampling %.0f ms, exit %.0f ms after sampling\n",
		r->window_us, (double)(r->sampling_ns - r->launch_ns) / 1e6,
		(double)(r->end_ns - r->sampling_ns) / 1e6);
}

void wall_run_free(struct wall_run *r)
{
	harness_output_free(&r->stacks, r->file, r->dir);
	free(r->points);
}

long stack_tid(const char *stack)
{
	const char *end = strchr(stack, ';'), *tid;

	if (stack[0] != '[')
		return -1;
	tid = strstr(stack, " tid=");
	if (!tid || (end && tid > end))
		return -1;
	return strtol(tid + strlen(" tid="), NULL, 10);
}

int stack_thread_named(const char *stack, const char *name)
{
	size_t len = strlen(name);

	return stack[0] == '[' && !strncmp(stack + 1, name, len) && !strncmp(stack + 1 + len, " tid=", 5);
}

enum state stack_state(const char *stack)
{
	const char *last = strrchr(stack, ';');

	last = last ? last + 1 : stack;
	for (int s = 0; s < NR_STATES; s++)
		if (!strcmp(last, state_frames[s]))
			return (enum state)s;
	return NR_STATES;
}

/* Whether a kernel frame ("..._[k]") of the stack contains part. */
static int stack_has_kernel_frame(const char *stack, const char *part)
{
	for (const char *f = stack; f; f = strchr(f, ';') ? strchr(f, ';') + 1 : NULL) {
		const char *end = strchr(f, ';'), *hit = strstr(f, part);
		size_t len = end ? (size_t)(end - f) : strlen(f);

		if (len > 4 && !strncmp(f + len - 4, "_[k]", 4) && hit && hit + strlen(part) <= f + len)
			return 1;
	}
	return 0;
}

uint64_t thread_us(const struct collapsed *c, long tid, enum state state, const char *part)
{
	uint64_t us = 0;

	for (size_t i = 0; i < c->n; i++)
		if (stack_tid(c->stacks[i]) == tid &&
			(state == NR_STATES || stack_state(c->stacks[i]) == state) &&
			(!part || stack_has_kernel_frame(c->stacks[i], part)))
			us += c->counts[i];
	return us;
}

void print_thread_stacks(const struct collapsed *c, long tid, enum state state)
{
	for (size_t i = 0; i < c->n; i++)
		if (stack_tid(c->stacks[i]) == tid && stack_state(c->stacks[i]) == state && c->counts[i] >= 1000)
			fprintf(stderr, "    %s %" PRIu64 "\n", c->stacks[i], c->counts[i]);
}
