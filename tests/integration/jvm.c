/*
 * jvm: the JDKs the Java integration tests run on, and JVMs started and
 * stopped in directories of their own (contract in jvm.h).
 */
#include "jvm.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const struct jdk jdk17 = { "JDK 17", "JAVA17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java" };
const struct jdk jdk25 = { "JDK 25", "JAVA25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java" };

const char *jdk_java_path(const struct jdk *jdk)
{
	return harness_getenv(jdk->env, jdk->path);
}

/* Absolute directory of the workload classes; the caller frees it. */
char *jvm_class_dir(void)
{
	const char *dir = getenv("JAVA_CLASSES"), *workloads = getenv("WORKLOAD_DIR");
	char path[PATH_MAX], *copy = NULL, *abs;

	if (!dir && workloads) {
		copy = strdup(workloads);
		snprintf(path, sizeof(path), "%s/java", dirname(copy));
		dir = path;
	}
	abs = realpath(dir ? dir : "build/java", NULL);
	free(copy);
	return abs;
}

void jvm_require(const struct jdk *jdk, const char *probe_class)
{
	char *classes = jvm_class_dir(), probe[PATH_MAX];

	harness_require_root();
	if (access(jdk_java_path(jdk), X_OK)) {
		fprintf(stderr, "SKIPPED: no %s at %s (set %s to its bin/java)\n", jdk->name, jdk_java_path(jdk),
			jdk->env);
		skip();
	}
	snprintf(probe, sizeof(probe), "%s/%s.class", classes ? classes : "build/java", probe_class);
	if (access(probe, R_OK)) {
		fprintf(stderr, "no %s: make compiles the Java workloads (tests/workloads/java/java.mk)\n", probe);
		fail();
	}
	free(classes);
}

void jvm_start(struct jvm *jvm, const struct jdk *jdk, const char *class, char *const args[])
{
	jvm_start_opts(jvm, jdk, NULL, class, args);
}

/* The shell only changes directory and execs, so the child's pid is the JVM's. */
void jvm_start_opts(struct jvm *jvm, const struct jdk *jdk, char *const jvm_opts[], const char *class,
		    char *const args[])
{
	char *classes = jvm_class_dir(), *argv[32] = { "/bin/sh", "-c", "cd \"$0\" && exec \"$@\"" };
	size_t n = 3;

	memset(jvm, 0, sizeof(*jvm));
	jvm->dir = harness_tmpdir();
	assert_non_null(jvm->dir);
	assert_non_null(classes);
	argv[n++] = jvm->dir;
	argv[n++] = (char *)jdk_java_path(jdk);
	for (size_t i = 0; jvm_opts && jvm_opts[i] && n + 1 < 24; i++)
		argv[n++] = jvm_opts[i];
	argv[n++] = "-cp";
	argv[n++] = classes;
	argv[n++] = (char *)class;
	for (size_t i = 0; args && args[i] && n + 1 < 32; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (harness_start_workload(&jvm->out, argv)) {
		fprintf(stderr, "%s %s did not print ready in time; its output:\n%s\n", jdk->name, class, jvm->out.buf);
		fail();
	}
	free(classes);
}

static int is_crash_report(const char *name)
{
	return !strncmp(name, "hs_err_pid", 10);
}

void jvm_assert_no_crash_report(const struct jvm *jvm)
{
	DIR *d = opendir(jvm->dir);
	struct dirent *e;
	int found = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (is_crash_report(e->d_name)) {
			fprintf(stderr, "the JVM crashed: %s/%s (left in place)\n", jvm->dir, e->d_name);
			found = 1;
		}
	closedir(d);
	assert_false(found);
}

/* Empties the JVM's directory but for a crash report, fails on one, and removes the directory. */
static void remove_dir(struct jvm *jvm)
{
	DIR *d = opendir(jvm->dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_crash_report(e->d_name))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	jvm_assert_no_crash_report(jvm);
	rmdir(jvm->dir);
	free(jvm->dir);
	jvm->dir = NULL;
}

void jvm_stop(struct jvm *jvm)
{
	jvm->status = harness_stop_workload(&jvm->out);
	remove_dir(jvm);
	if (jvm->status != 143)
		fprintf(stderr, "the JVM exited with %d, not 143 (SIGTERM after its shutdown hooks); output:\n%s\n",
			jvm->status, jvm->out.buf);
	assert_int_equal(jvm->status, 143);
}

void jvm_assert_agent_loaded(const struct child *profiler)
{
	if (strstr(profiler->buf, "jbpfprof: cannot load the agent")) {
		fprintf(stderr, "the agent did not load; the profiler's stderr:\n%s\n", profiler->buf);
		fail();
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Counts the complete "alive N" lines output has gained since the last call. */
static void read_beats(const struct child *out, struct heartbeats *hb)
{
	const char *end;

	while ((end = memchr(out->buf + hb->parsed, '\n', out->len - hb->parsed))) {
		const char *line = out->buf + hb->parsed;

		if (!strncmp(line, "alive ", 6)) {
			int64_t now = now_ms();

			if (now - hb->last_ms > hb->longest_ms)
				hb->longest_ms = now - hb->last_ms;
			hb->last_ms = now;
			hb->beats++;
		}
		hb->parsed = (size_t)(end - out->buf) + 1;
	}
}

/*
 * Where the JVM's threads are: each thread's state letter and wait channel
 * (/proc/PID/task/TID/stat and wchan), counted. A JVM hung on a lock shows
 * every thread in S with futex_wait... and no R.
 */
static void print_threads(pid_t pid)
{
	char path[320], buf[512], seen[64][80];
	int counts[64] = { 0 }, kinds = 0, threads = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char key[80], wchan[64] = "?", *rparen;
		FILE *f;
		int i;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		buf[0] = '\0';
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		rparen = strrchr(buf, ')');
		/* A running thread is named: which of the JVM's threads kept the CPU is the first clue. */
		if (rparen && rparen[1] && rparen[2] == 'R' && strchr(buf, '(')) {
			char *lparen = strchr(buf, '(');

			*rparen = '\0';
			snprintf(wchan, sizeof(wchan), "(%.15s)", lparen + 1);
			*rparen = ')';
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid, e->d_name);
		f = wchan[0] == '(' ? NULL : fopen(path, "r");
		if (f) {
			if (!fgets(wchan, sizeof(wchan), f))
				snprintf(wchan, sizeof(wchan), "?");
			fclose(f);
		}
		snprintf(key, sizeof(key), "%c %s", rparen && rparen[1] ? rparen[2] : '?', wchan);
		threads++;
		for (i = 0; i < kinds && strcmp(seen[i], key); i++)
			;
		if (i == kinds && kinds < 64)
			snprintf(seen[kinds++], sizeof(seen[0]), "%s", key);
		if (i < kinds)
			counts[i]++;
	}
	closedir(d);
	fprintf(stderr, "  its %d threads, by state and wait channel:", threads);
	for (int i = 0; i < kinds; i++)
		fprintf(stderr, " %s x%d;", seen[i], counts[i]);
	fprintf(stderr, "\n");
}

/*
 * After a stall, with the profiler gone: whether the JVM beats again
 * within RECOVER_MS (a JVM the profiling starved, which the stall still
 * fails) or not (hung: its threads' stacks are printed with gdb, when
 * there is one, for whoever reads the failure).
 */
#define RECOVER_MS 5000

static void after_stall(struct jvm *jvm, struct heartbeats *hb)
{
	int64_t since = now_ms();
	long beats = hb->beats;
	char cmd[256];

	while (hb->beats == beats && now_ms() - since < RECOVER_MS) {
		int got = harness_read_some(&jvm->out, (int)(RECOVER_MS - (now_ms() - since)));

		if (got == 1)
			break; /* its output ended */
		if (got == 0)
			read_beats(&jvm->out, hb);
	}
	if (hb->beats != beats) {
		fprintf(stderr, "  with the profiler stopped, the JVM beat again %lld ms later\n",
			(long long)(now_ms() - since));
		return;
	}
	fprintf(stderr, "  with the profiler stopped, the JVM did not beat again in %d ms: its threads' stacks\n",
		RECOVER_MS);
	snprintf(cmd, sizeof(cmd),
		 "command -v gdb >/dev/null && timeout 60 gdb -q -batch -p %d -ex 'thread apply all bt 12' 2>&1 | "
		 "grep -E '^(Thread|#)' >&2",
		 (int)jvm->out.pid);
	if (system(cmd) == -1)
		fprintf(stderr, "  (gdb could not be run)\n");
}

void jvm_record_stacks(struct jvm *jvm, struct child *profiler, const char *name, char *const args[], int after_ms,
		       struct collapsed *stacks, struct heartbeats *hb)
{
	char *file = harness_path(jvm->dir, name);
	struct heartbeats own;
	int status;

	if (!hb)
		hb = &own;
	status = jvm_record_watched(jvm, profiler, file, args, 60, 2000, after_ms, hb);
	if (hb->stalled) {
		jvm_kill(jvm);
		fail_msg("the JVM stopped beating after %ld beats", hb->beats);
	}
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler->buf);
	assert_int_equal(status, 0);
	assert_int_equal(collapsed_load(file, stacks), 0);
	unlink(file);
	free(file);
}

int jvm_record_watched(struct jvm *jvm, struct child *profiler, char *file, char *const args[], int timeout_s,
		       int bound_ms, int after_ms, struct heartbeats *hb)
{
	int64_t start = now_ms(), watch_until = -1;
	int64_t stop_at = start + harness_deadline_ms((int64_t)timeout_s * 1000);
	int status = -1, profiling = 1;
	char pid[16], *argv[48];

	bound_ms = (int)harness_deadline_ms(bound_ms);
	memset(hb, 0, sizeof(*hb));
	hb->parsed = jvm->out.len;
	hb->last_ms = start;
	snprintf(pid, sizeof(pid), "%d", (int)jvm->out.pid);
	assert_int_equal(harness_start_profiler(profiler, harness_profiler_args(argv, 48, pid, file, args)), 0);
	for (;;) {
		struct pollfd p[2] = { { .fd = jvm->out.out_fd, .events = POLLIN },
				       { .fd = profiler->out_fd, .events = POLLIN } };
		int64_t now = now_ms(), wait = hb->last_ms + bound_ms - now;

		if (wait < 0) {
			hb->longest_ms = now - hb->last_ms;
			hb->stalled = 1;
			fprintf(stderr, "the JVM stopped: no heartbeat for %lld ms (bound %d ms), %s; %ld beats before\n",
				(long long)hb->longest_ms, bound_ms,
				profiling ? "during the recording" : "after the recording", hb->beats);
			print_threads(jvm->out.pid);
			if (profiling)
				status = harness_finish(profiler, 0);
			fprintf(stderr, "  the profiler's stderr:\n%s\n", profiler->buf);
			after_stall(jvm, hb);
			return status;
		}
		if (profiling && now >= stop_at) {
			status = harness_finish(profiler, 0);
			profiling = 0;
			watch_until = now + after_ms;
		}
		if (!profiling && now >= watch_until)
			return status;
		if (profiling && stop_at - now < wait)
			wait = stop_at - now;
		if (!profiling && watch_until - now < wait)
			wait = watch_until - now;
		if (poll(p, profiling ? 2 : 1, (int)wait) < 0)
			continue;
		if (p[0].revents) {
			if (harness_read_some(&jvm->out, 0) == 1) {
				fprintf(stderr, "the JVM's output ended %s; it printed:\n%s\n",
					profiling ? "during the recording" : "after the recording", jvm->out.buf);
				fail();
			}
			read_beats(&jvm->out, hb);
		}
		if (profiling && p[1].revents && harness_read_some(profiler, 0) == 1) {
			status = harness_finish(profiler, 10);
			profiling = 0;
			watch_until = now_ms() + after_ms;
		}
	}
}

void jvm_kill(struct jvm *jvm)
{
	kill(jvm->out.pid, SIGKILL);
	jvm->status = harness_finish(&jvm->out, 10);
	remove_dir(jvm);
}

int jvm_java_summary(const struct child *profiler, unsigned long long *joined, unsigned long long *on_jvm)
{
	const char *p = strstr(profiler->buf, "Java stacks: ");

	if (!p || sscanf(p, "Java stacks: %llu of %llu joined", joined, on_jvm) != 2)
		return -1;
	return 0;
}

int jvm_walk_summary(const struct child *profiler, unsigned long long *with_java, unsigned long long *on_jvm,
		     double *walked_pct, const char **line)
{
	const char *p = strstr(profiler->buf, " JVM thread samples with Java frames, ");

	if (!p)
		return -1;
	while (p > profiler->buf && p[-1] != ';' && p[-1] != ':' && p[-1] != '\n')
		p--;
	if (sscanf(p, " %llu of %llu JVM thread samples with Java frames, %lf%%", with_java, on_jvm, walked_pct) != 3)
		return -1;
	if (line)
		*line = p;
	return 0;
}

void jvm_assert_did(const struct jvm *jvm, const char *label, const struct jvm_minimum minimums[])
{
	int short_of = 0;

	fprintf(stderr, "  %s:", label);
	for (size_t i = 0; minimums[i].name; i++) {
		long long value = harness_truth(&jvm->out, minimums[i].name);

		fprintf(stderr, "%s %s %lld", i ? "," : "", minimums[i].name, value);
		if (value < minimums[i].least)
			short_of = 1;
	}
	fprintf(stderr, "\n");
	for (size_t i = 0; short_of && minimums[i].name; i++)
		if (harness_truth(&jvm->out, minimums[i].name) < minimums[i].least)
			fprintf(stderr, "  the workload did too little: %s below %lld\n", minimums[i].name,
				minimums[i].least);
	assert_false(short_of);
}
