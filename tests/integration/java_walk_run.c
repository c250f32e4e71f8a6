/*
 * java_walk_run: a JVM recorded, and the walk checked against the agent
 * (contract in java_walk_run.h).
 */
#include "java_walk_run.h"

#include "harness.h"
#include "jvm.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct jdk *require_java(void **state)
{
	jvm_require(*state, "WalkShapes");
	return *state;
}

void record(struct child *profiler, struct collapsed *stacks, pid_t pid, const char *dir, char *const args[],
	    int timeout_s)
{
	char pid_text[16], *file = harness_path(dir, "walk.collapsed"), *argv[48];
	int status;

	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	harness_profiler_args(argv, 48, pid_text, file, args);
	status = harness_run_profiler(profiler, argv, timeout_s);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler->buf);
	assert_int_equal(status, 0);
	assert_int_equal(collapsed_load(file, stacks), 0);
	unlink(file);
	free(file);
}

static int parse_agreement(const char *text, struct agreement *a)
{
	const char *p = strstr(text, "BPF walk against the agent: ");

	return p && sscanf(p,
			   "BPF walk against the agent: %llu samples, %lf%% the same methods (%llu without Java "
			   "frames, %llu ended early), %lf%% of %llu bytecode indexes and %lf%% of %llu kinds",
			   &a->samples, &a->methods, &a->none, &a->stopped, &a->bci, &a->bci_pairs, &a->kinds,
			   &a->kind_pairs) == 8
		       ? 0
		       : -1;
}

void agrees(const struct jdk *jdk, const char *what, char *const jvm_opts[], const char *class,
	    char *const args[])
{
	struct child profiler;
	struct collapsed stacks;
	struct agreement a;
	struct jvm jvm;

	jvm_start_opts(&jvm, jdk, jvm_opts, class, args);
	record(&profiler, &stacks, jvm.out.pid, jvm.dir,
	       (char *[]){ "-F", "997", "-d", "4", "--java-stacks", "both", NULL }, 60);
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	if (parse_agreement(profiler.buf, &a)) {
		fprintf(stderr, "no comparison in the summary; the profiler's stderr:\n%s\n", profiler.buf);
		fail();
	}
	fprintf(stderr, "  %s, %s: %llu samples, %.1f%% the same methods, %.1f%% of %llu bcis, %.1f%% of %llu kinds\n",
		jdk->name, what, a.samples, a.methods, a.bci, a.bci_pairs, a.kinds, a.kind_pairs);
	/* Busy threads for 4 s at 997 Hz: 1,000 samples measure 99% to a tenth of a point. */
	assert_true(a.samples >= 1000);
	assert_true(a.methods >= 99.0);
	assert_true(a.bci_pairs >= a.samples && a.bci >= 99.0);
	assert_true(a.kind_pairs >= a.samples / 2 && a.kinds >= 99.0);
	collapsed_free(&stacks);
}

char *walkjni_path(void)
{
	char *dir = realpath(harness_getenv("WORKLOAD_DIR", "build/workloads"), NULL), *path;

	assert_non_null(dir);
	path = harness_path(dir, "libwalkjni.so");
	free(dir);
	return path;
}
