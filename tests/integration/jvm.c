/*
 * jvm: the JDKs the Java integration tests run on, and JVMs started and
 * stopped in directories of their own (contract in jvm.h).
 */
#include "jvm.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct jdk jdk17 = { "JDK 17", "JAVA17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java" };
const struct jdk jdk25 = { "JDK 25", "JAVA25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java" };

const char *jdk_java_path(const struct jdk *jdk)
{
	return harness_getenv(jdk->env, jdk->path);
}

/* Absolute directory of the workload classes; the caller frees it. */
static char *class_dir(void)
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
	char *classes = class_dir(), probe[PATH_MAX];

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

/* The shell only changes directory and execs, so the child's pid is the JVM's. */
void jvm_start(struct jvm *jvm, const struct jdk *jdk, const char *class, char *const args[])
{
	char *classes = class_dir(), *argv[32] = { "/bin/sh", "-c", "cd \"$0\" && exec \"$@\"" };
	size_t n = 3;

	memset(jvm, 0, sizeof(*jvm));
	jvm->dir = harness_tmpdir();
	assert_non_null(jvm->dir);
	assert_non_null(classes);
	argv[n++] = jvm->dir;
	argv[n++] = (char *)jdk_java_path(jdk);
	argv[n++] = "-cp";
	argv[n++] = classes;
	argv[n++] = (char *)class;
	for (size_t i = 0; args && args[i] && n + 1 < 32; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (harness_start_workload(&jvm->out, argv)) {
		fprintf(stderr, "%s %s did not print ready in 10 s; its output:\n%s\n", jdk->name, class, jvm->out.buf);
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

void jvm_stop(struct jvm *jvm)
{
	DIR *d;
	struct dirent *e;

	jvm->status = harness_stop_workload(&jvm->out);
	d = opendir(jvm->dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !is_crash_report(e->d_name))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	jvm_assert_no_crash_report(jvm);
	rmdir(jvm->dir);
	free(jvm->dir);
	jvm->dir = NULL;
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
