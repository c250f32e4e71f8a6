/*
 * harness: process plumbing and collapsed-stack parsing for the integration
 * tests (contract in harness.h).
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *harness_profiler(void)
{
	const char *path = getenv("JBPFPROF");

	return path ? path : "build/asan/jbpfprof";
}

const char *harness_getenv(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

char *harness_workload(const char *name)
{
	const char *dir = getenv("WORKLOAD_DIR");
	char *path;

	if (asprintf(&path, "%s/%s", dir ? dir : "build/workloads", name) < 0)
		return NULL;
	return path;
}

void harness_require_root(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIPPED: integration tests load BPF programs and need root\n");
		skip();
	}
	if (access(harness_profiler(), X_OK)) {
		fprintf(stderr, "SKIPPED: no profiler at %s (run make first)\n", harness_profiler());
		skip();
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t harness_deadline_ms(int64_t ms)
{
	const char *v = getenv("JBPF_TIMEOUT_SCALE");
	double scale = v && *v ? atof(v) : 1.0;

	return scale > 1.0 ? (int64_t)((double)ms * scale) : ms;
}

/*
 * Children not reaped yet. A failed assertion leaves a test through longjmp,
 * past its own clean-up; harness_teardown kills what it left running.
 */
#define MAX_LIVE 32
static pid_t live[MAX_LIVE];

static void track(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (!live[i]) {
			live[i] = pid;
			return;
		}
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live[i] == pid)
			live[i] = 0;
}

void harness_filter_tests(void)
{
	if (getenv("JBPF_TEST_FILTER"))
		cmocka_set_test_filter(getenv("JBPF_TEST_FILTER"));
}

int harness_teardown(void **state)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (!live[i])
			continue;
		kill(live[i], SIGKILL);
		waitpid(live[i], NULL, 0);
		live[i] = 0;
	}
	return 0;
}

/* Forks argv with its fd target_fd (1 or 2) on a pipe we read. */
static int spawn(struct child *child, char *const argv[], int target_fd)
{
	int fds[2];

	memset(child, 0, sizeof(*child));
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	child->pid = fork();
	if (child->pid < 0)
		return -1;
	if (child->pid == 0) {
		/* Should the test program die, its children go with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], target_fd);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	child->out_fd = fds[0];
	track(child->pid);
	return 0;
}

int harness_read_some(struct child *child, int timeout_ms)
{
	struct pollfd p = { .fd = child->out_fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	n = read(child->out_fd, child->buf + child->len, sizeof(child->buf) - 1 - child->len);
	if (n <= 0)
		return 1;
	child->len += (size_t)n;
	child->buf[child->len] = '\0';
	return 0;
}

int harness_wait_for(struct child *child, const char *text, int timeout_s)
{
	int64_t deadline = now_ms() + harness_deadline_ms(timeout_s * 1000);

	while (!strstr(child->buf, text)) {
		int64_t left = deadline - now_ms();

		if (left <= 0 || child->len + 1 >= sizeof(child->buf) || harness_read_some(child, (int)left))
			return -1;
	}
	return 0;
}

long long harness_process_cpu_ms(pid_t pid)
{
	unsigned long long utime, stime;
	long long cutime, cstime;
	char path[64], buf[1024], *fields;
	long ticks = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || ticks <= 0)
		return -1;
	buf[n] = '\0';
	/* The name in parentheses may hold spaces: the fields start after the last ')'. */
	fields = strrchr(buf, ')');
	if (!fields || sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &utime,
			      &stime, &cutime, &cstime) != 4)
		return -1;
	return (long long)(utime + stime) * 1000 / ticks + (cutime + cstime) * 1000 / ticks;
}

int harness_wait_cpu(struct child *profiler, pid_t pid, long long cpu_ms, int timeout_s)
{
	int64_t deadline = now_ms() + harness_deadline_ms(timeout_s * 1000);
	long long start = harness_process_cpu_ms(pid), used;

	if (start < 0)
		return -1;
	for (;;) {
		used = harness_process_cpu_ms(pid);
		if (used < 0)
			return -1;
		if (used - start >= cpu_ms)
			return 0;
		if (now_ms() >= deadline) {
			fprintf(stderr, "harness: pid %d used %lld of %lld ms of CPU in %d s\n", (int)pid, used - start,
				cpu_ms, timeout_s);
			return -1;
		}
		/* The profiler's stderr is drained meanwhile, so that it never blocks on a full pipe. */
		if (harness_read_some(profiler, 20) == 1)
			return -1;
	}
}

int harness_start_workload(struct child *child, char *const argv[])
{
	if (spawn(child, argv, STDOUT_FILENO))
		return -1;
	if (harness_wait_for(child, "ready\n", 10)) {
		kill(child->pid, SIGKILL);
		waitpid(child->pid, NULL, 0);
		untrack(child->pid);
		return -1;
	}
	return 0;
}

static FILE *open_append(const char *var)
{
	const char *path = getenv(var);
	FILE *f;

	if (!path || !*path)
		return NULL;
	f = fopen(path, "a");
	if (!f)
		fprintf(stderr, "harness: cannot append to %s (%s): %s\n", path, var, strerror(errno));
	return f;
}

/*
 * What a finished child said, kept for the kernel matrix (tests/kernels/),
 * which reports it next to each test's pass or fail: $JBPF_NOTES_FILE gets
 * the profiler's one-line notes of a feature it goes on without ("jbpfprof:
 * fallback: ") or of a part it refuses ("jbpfprof: unavailable: "), from
 * any child's output (the prefixes are the profiler's alone, however the
 * test started it); $JBPF_OUTPUT_LOG gets all of it, after a line with its
 * pid and status, so a failure's cause is there even when the test does
 * not print it.
 */
static void keep_output(const struct child *child, int status)
{
	FILE *notes = open_append("JBPF_NOTES_FILE"), *log = open_append("JBPF_OUTPUT_LOG");

	for (const char *line = child->buf; notes && *line;) {
		size_t len = strcspn(line, "\n");

		if (!strncmp(line, "jbpfprof: fallback: ", 20) || !strncmp(line, "jbpfprof: unavailable: ", 23))
			fprintf(notes, "%.*s\n", (int)len, line);
		line += len;
		if (*line == '\n')
			line++;
	}
	if (log)
		fprintf(log, "== pid %d exited with %d ==\n%s%s", (int)child->pid, status, child->buf,
			child->len && child->buf[child->len - 1] != '\n' ? "\n" : "");
	if (notes)
		fclose(notes);
	if (log)
		fclose(log);
}

int harness_finish(struct child *child, int timeout_s)
{
	int64_t deadline = now_ms() + harness_deadline_ms(timeout_s * 1000);
	int status, killed = 0;

	for (;;) {
		int64_t left = deadline - now_ms();
		int r = left > 0 && child->len + 1 < sizeof(child->buf) ? harness_read_some(child, (int)left) : -1;

		if (r == 1)
			break;
		if (r == -1) {
			kill(child->pid, SIGKILL);
			killed = 1;
			break;
		}
	}
	close(child->out_fd);
	waitpid(child->pid, &status, 0);
	untrack(child->pid);
	if (killed)
		fprintf(stderr, "harness: pid %d did not finish in %d s and was killed; output:\n%s\n",
			(int)child->pid, timeout_s, child->buf);
	status = killed || !WIFEXITED(status) ? -1 : WEXITSTATUS(status);
	keep_output(child, status);
	return status;
}

int harness_stop_workload(struct child *child)
{
	kill(child->pid, SIGTERM);
	return harness_finish(child, 10);
}

int harness_start_command(struct child *child, char *const argv[], int fd)
{
	return spawn(child, argv, fd);
}

int harness_start_profiler(struct child *child, char *const args[])
{
	char *argv[64];
	size_t n = 0;

	argv[n++] = (char *)harness_profiler();
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return spawn(child, argv, STDERR_FILENO);
}

int harness_run_profiler(struct child *child, char *const args[], int timeout_s)
{
	if (harness_start_profiler(child, args))
		return -1;
	return harness_finish(child, timeout_s);
}

int harness_run_profiler_cpu(struct child *child, char *const args[], pid_t target, long long cpu_ms, int timeout_s)
{
	if (harness_start_profiler(child, args))
		return -1;
	if (harness_wait_for(child, "jbpfprof: sampling", 60) || harness_wait_cpu(child, target, cpu_ms, timeout_s))
		fprintf(stderr, "harness: the recording did not start or its target did not run; profiler:\n%s\n",
			child->buf);
	kill(child->pid, SIGINT);
	return harness_finish(child, 60);
}

void harness_convert_event(const char *pprof, const char *event, const char *collapsed)
{
	struct child c;

	if (harness_run_profiler(&c, (char *[]){ "convert", (char *)pprof, "--event", (char *)event, "-o", "collapsed",
						 "-f", (char *)collapsed, NULL },
				 120))
		fail_msg("convert --event %s failed: %s", event, c.buf);
}

void frames_split(struct frames *fr, const char *stack)
{
	char *save = NULL;

	fr->buf = strdup(stack);
	assert_non_null(fr->buf);
	fr->n = 0;
	for (char *f = strtok_r(fr->buf, ";", &save); f && fr->n < MAX_FRAMES; f = strtok_r(NULL, ";", &save))
		fr->f[fr->n++] = f;
}

int find_frame(const struct frames *fr, int from, const char *name)
{
	for (int i = from; i < fr->n; i++)
		if (collapsed_frame_is(fr->f[i], strlen(fr->f[i]), name))
			return i;
	return -1;
}

int collapsed_load(const char *path, struct collapsed *c)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	while ((len = getline(&line, &cap, f)) > 0) {
		char *space, *end;
		unsigned long long count;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		space = strrchr(line, ' ');
		if (!space)
			goto bad;
		count = strtoull(space + 1, &end, 10);
		if (*end || end == space + 1)
			goto bad;
		*space = '\0';
		c->stacks = realloc(c->stacks, (c->n + 1) * sizeof(*c->stacks));
		c->counts = realloc(c->counts, (c->n + 1) * sizeof(*c->counts));
		c->stacks[c->n] = strdup(line);
		c->counts[c->n] = count;
		c->total += count;
		c->n++;
	}
	free(line);
	fclose(f);
	return 0;
bad:
	fprintf(stderr, "harness: malformed collapsed line in %s: %s\n", path, line);
	free(line);
	fclose(f);
	return -1;
}

void collapsed_free(struct collapsed *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->stacks[i]);
	free(c->stacks);
	free(c->counts);
	memset(c, 0, sizeof(*c));
}

/* Whether the ';'-separated stack has a frame equal to frame. */
static int stack_has_frame(const char *stack, const char *frame)
{
	size_t len = strlen(frame);

	for (const char *p = stack; p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
		if (!strncmp(p, frame, len) && (p[len] == ';' || p[len] == '\0'))
			return 1;
	return 0;
}

uint64_t collapsed_count_frame(const struct collapsed *c, const char *frame)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (stack_has_frame(c->stacks[i], frame))
			n += c->counts[i];
	return n;
}

int collapsed_frame_is(const char *frame, size_t len, const char *name)
{
	size_t name_len = strlen(name);

	if (len < name_len || strncmp(frame, name, name_len))
		return 0;
	frame += name_len;
	len -= name_len;
	return len == 0 || (len == 4 && frame[0] == '_' && frame[1] == '[' && frame[3] == ']');
}

long long harness_truth(const struct child *child, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = child->buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return atoll(p + len + 1);
	return -1;
}

char *harness_tmpdir(void)
{
	char *dir = strdup("/tmp/jbpfprof-test-XXXXXX");

	if (dir && !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void harness_remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *harness_path(const char *dir, const char *file)
{
	char *path;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return NULL;
	return path;
}

char **harness_profiler_args(char **argv, size_t max, const char *pid, char *file, char *const args[])
{
	size_t n = 0;

	if (pid) {
		argv[n++] = "-p";
		argv[n++] = (char *)pid;
	}
	argv[n++] = "-f";
	argv[n++] = file;
	for (size_t i = 0; args[i] && n + 1 < max; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return argv;
}

/*
 * harness_profile's body: cpu_ms 0 runs the profiler to its own end (args'
 * -d), more stops it once the workload used that much CPU.
 */
static void profile(struct profiled *r, const char *name, char *const wargs[], char *const args[], int by_pid,
		    long long cpu_ms, int timeout_s)
{
	char *workload = harness_workload(name), *wargv[32] = { workload }, *pargs[48], pid[16];

	memset(r, 0, sizeof(*r));
	r->dir = harness_tmpdir();
	assert_non_null(r->dir);
	r->file = harness_path(r->dir, "profile.collapsed");
	for (size_t i = 0; wargs && wargs[i] && i + 2 < 32; i++)
		wargv[i + 1] = wargs[i];
	assert_int_equal(harness_start_workload(&r->workload, wargv), 0);
	free(workload);
	snprintf(pid, sizeof(pid), "%d", (int)r->workload.pid);
	harness_profiler_args(pargs, 48, by_pid ? pid : NULL, r->file, args);
	r->profiler_status = cpu_ms ? harness_run_profiler_cpu(&r->profiler, pargs, r->workload.pid, cpu_ms, timeout_s)
				    : harness_run_profiler(&r->profiler, pargs, timeout_s);
	r->workload_status = harness_stop_workload(&r->workload);
	if (r->profiler_status != 0)
		fprintf(stderr, "profiler exited with %d; its stderr:\n%s\n", r->profiler_status, r->profiler.buf);
	assert_int_equal(collapsed_load(r->file, &r->stacks), 0);
}

void harness_profile(struct profiled *r, const char *name, char *const wargs[], char *const args[], int by_pid,
		     int timeout_s)
{
	profile(r, name, wargs, args, by_pid, 0, timeout_s);
}

void harness_profile_cpu(struct profiled *r, const char *name, char *const wargs[], char *const args[], int by_pid,
			 long long cpu_ms, int timeout_s)
{
	profile(r, name, wargs, args, by_pid, cpu_ms > 0 ? cpu_ms : 1, timeout_s);
}

void harness_output_free(struct collapsed *stacks, char *file, char *dir)
{
	collapsed_free(stacks);
	if (file)
		unlink(file);
	if (dir)
		rmdir(dir);
	free(file);
	free(dir);
}

void harness_profiled_free(struct profiled *r)
{
	harness_output_free(&r->stacks, r->file, r->dir);
}

double harness_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

double harness_steal_ns(void)
{
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
	FILE *f = fopen("/proc/stat", "r");
	int n;

	assert_non_null(f);
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
		   &irq, &softirq, &steal);
	fclose(f);
	assert_int_equal(n, 8);
	return (double)steal * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

double harness_share_tolerance(uint64_t samples, double floor_pp)
{
	double allowed = samples ? fmax(floor_pp, 4.5 * 100.0 * sqrt(0.25 / (double)samples)) : floor_pp;

	fprintf(stderr, "  %llu samples: %.2f pp allowed\n", (unsigned long long)samples, allowed);
	return allowed;
}
