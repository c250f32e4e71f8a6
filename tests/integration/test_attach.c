/*
 * Attach refusals, through the real profiler: what jbpfprof must never do
 * to a process it cannot or may not attach to.
 *
 *   - A process that is not a JVM never receives SIGQUIT, whose default
 *     action kills it: with --java the run fails with "is not a Java
 *     virtual machine"; without, it is profiled as a native process. Either
 *     way it is alive afterwards and stops on its own terms.
 *   - A JVM started with -XX:+DisableAttachMechanism is refused before it
 *     is signalled: with --java the run fails with "attach is disabled",
 *     the JVM keeps running and prints no thread dump (what a SIGQUIT
 *     without a listener to start makes it do), and no trigger file is
 *     left in /tmp. It is checked on JDK 17 both with its hsperfdata file
 *     (the JVM's own answer) and with -XX:-UsePerfData (only the command
 *     line tells), and on JDK 25 when present.
 *
 * A SIGQUIT sent by the profiler is pending or acted on before the test
 * sends its SIGTERM (the profiler has exited by then, and lower signal
 * numbers are taken first), so the exit statuses checked here are
 * deterministic, not a race.
 *
 * The JVM runs a class compiled here, at test time, from a source written
 * into a temporary directory ($JAVA17 and $JAVA25 override the launchers,
 * $JAVAC the compiler; by default the javac beside JDK 17's java).
 */
#include "harness.h"
#include "jvm.h"

#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Prints "ready" once main runs, then sleeps until stopped. */
static const char sleeper_source[] =
	"public class AttachSleeper {\n"
	"    public static void main(String[] args) throws Exception {\n"
	"        System.out.println(\"ready\");\n"
	"        System.out.flush();\n"
	"        Thread.sleep(Long.MAX_VALUE);\n"
	"    }\n"
	"}\n";

/* The directory holding AttachSleeper.class, compiled on first use. */
static char *classes;

/* Compiles AttachSleeper once; skips the test when there is no JDK to do it. */
static const char *sleeper_classes(void)
{
	char javac[PATH_MAX], *copy, *src;
	struct child c;
	FILE *f;

	if (classes)
		return classes;
	copy = strdup(jdk_java_path(&jdk17));
	snprintf(javac, sizeof(javac), "%s", harness_getenv("JAVAC", ""));
	if (!javac[0])
		snprintf(javac, sizeof(javac), "%s/javac", dirname(copy));
	free(copy);
	if (access(javac, X_OK)) {
		fprintf(stderr, "SKIPPED: no javac at %s (set JAVAC, or JAVA17 to a JDK's bin/java)\n", javac);
		skip();
	}
	classes = harness_tmpdir();
	assert_non_null(classes);
	src = harness_path(classes, "AttachSleeper.java");
	f = fopen(src, "w");
	assert_non_null(f);
	assert_int_equal(fputs(sleeper_source, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(harness_start_command(&c, (char *[]){ javac, "-d", classes, src, NULL }, 2), 0);
	if (harness_finish(&c, 120) != 0)
		fail_msg("javac failed: %s", c.buf);
	unlink(src);
	free(src);
	return classes;
}

/*
 * Starts "java FLAGS... -cp CLASSES AttachSleeper" in the classes directory
 * (so a crash report lands there) and waits for its "ready". The shell
 * only changes directory and execs: the child's pid is the JVM's.
 */
static void start_jvm(struct child *jvm, const char *java, char *const flags[])
{
	char *argv[16] = { "/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", (char *)sleeper_classes(), (char *)java };
	size_t n = 5;

	for (size_t i = 0; flags[i]; i++)
		argv[n++] = flags[i];
	argv[n++] = "-cp";
	argv[n++] = classes;
	argv[n++] = "AttachSleeper";
	argv[n] = NULL;
	if (harness_start_workload(jvm, argv))
		fail_msg("%s did not start (or print ready within 10 s)", java);
}

static int still_running(pid_t pid)
{
	int status;

	return waitpid(pid, &status, WNOHANG) == 0;
}

/* With --java, a process that is no JVM ends the run, and lives on. */
static void not_a_jvm_fails_and_is_not_signalled(void **state)
{
	char *workload = harness_workload("cpu_split"), pid[16];
	struct child w, prof;
	int status;

	harness_require_root();
	assert_int_equal(harness_start_workload(&w, (char *[]){ workload, "-t", "1", NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "-p", pid, "-d", "1", NULL }, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 1);
	assert_non_null(strstr(prof.buf, "is not a Java virtual machine"));
	assert_true(still_running(w.pid));
	/* Killed by a SIGQUIT, it would not exit 0 on SIGTERM. */
	assert_int_equal(harness_stop_workload(&w), 0);
	free(workload);
}

/* Without --java a non-JVM is profiled natively: the attempt must not signal it either. */
static void not_a_jvm_is_profiled_without_java(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *file, pid[16];
	struct child w, prof;
	int status;

	harness_require_root();
	file = harness_path(dir, "native.collapsed");
	assert_int_equal(harness_start_workload(&w, (char *[]){ workload, "-t", "1", NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	status = harness_run_profiler(&prof, (char *[]){ "-p", pid, "-d", "1", "-f", file, NULL }, 60);
	assert_int_equal(status, 0);
	assert_true(still_running(w.pid));
	assert_int_equal(harness_stop_workload(&w), 0);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

/* --java on a JVM with attach disabled: refused before any signal. */
static void disabled_jvm_is_refused(const char *java, char *const flags[])
{
	char pid[16], trigger[64], expect[96];
	struct child jvm, prof;
	int status;

	harness_require_root();
	if (access(java, X_OK)) {
		fprintf(stderr, "SKIPPED: no java at %s\n", java);
		skip();
	}
	start_jvm(&jvm, java, flags);
	snprintf(pid, sizeof(pid), "%d", (int)jvm.pid);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", pid, "-d", "1", NULL },
				      60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 1);
	snprintf(expect, sizeof(expect), "attach is disabled in JVM pid %s", pid);
	assert_non_null(strstr(prof.buf, expect));
	assert_true(still_running(jvm.pid));
	/* Not containerised: the JVM's pid is its nspid. */
	snprintf(trigger, sizeof(trigger), "/tmp/.attach_pid%s", pid);
	assert_int_equal(access(trigger, F_OK), -1);
	/* A JVM ends on SIGTERM through its shutdown hooks: 128 + 15. */
	assert_int_equal(harness_stop_workload(&jvm), 143);
	if (strstr(jvm.buf, "Full thread dump"))
		fail_msg("the JVM printed a thread dump: it was sent SIGQUIT");
}

static void disabled_jdk17(void **state)
{
	disabled_jvm_is_refused(jdk_java_path(&jdk17), (char *[]){ "-XX:+DisableAttachMechanism", NULL });
}

/* No hsperfdata file: the command line alone must tell. */
static void disabled_jdk17_without_perfdata(void **state)
{
	disabled_jvm_is_refused(jdk_java_path(&jdk17),
				(char *[]){ "-XX:-UsePerfData", "-XX:+DisableAttachMechanism", NULL });
}

static void disabled_jdk25(void **state)
{
	disabled_jvm_is_refused(jdk_java_path(&jdk25), (char *[]){ "-XX:+DisableAttachMechanism", NULL });
}

/*
 * Without --java, a JVM that refuses the agent is still profiled, without
 * Java frames, and the reason is given once.
 */
static void disabled_jvm_falls_back(void **state)
{
	const char *java = jdk_java_path(&jdk17), *jc = getenv("JAVA_CLASSES");
	char *dir, *file, pid[16], expect[128], *first;
	struct collapsed stacks;
	struct child jvm, prof;
	int status;

	harness_require_root();
	if (access(java, X_OK) || !jc) {
		fprintf(stderr, "SKIPPED: needs java at %s and JAVA_CLASSES (the built Java workloads)\n", java);
		skip();
	}
	dir = harness_tmpdir();
	file = harness_path(dir, "fallback.collapsed");
	if (harness_start_workload(&jvm, (char *[]){ (char *)java, "-XX:+DisableAttachMechanism", "-cp", (char *)jc,
						     "CpuSplit", "-t", "1", NULL }))
		fail_msg("%s CpuSplit did not start", java);
	snprintf(pid, sizeof(pid), "%d", (int)jvm.pid);
	status = harness_run_profiler(&prof, (char *[]){ "-p", pid, "-d", "2", "--java-stacks", "agent", "-f", file, NULL },
				      60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 0);
	snprintf(expect, sizeof(expect), "cannot load the agent into pid %s: attach is disabled", pid);
	first = strstr(prof.buf, expect);
	assert_non_null(first);
	assert_null(strstr(first + 1, "cannot load the agent"));
	assert_null(strstr(prof.buf, "with Java frames"));
	assert_int_equal(collapsed_load(file, &stacks), 0);
	assert_true(stacks.total > 0);
	/* Frame pointers alone do not name the Java methods. */
	assert_int_equal(collapsed_count_frame(&stacks, "CpuSplit.share50"), 0);
	collapsed_free(&stacks);
	assert_true(still_running(jvm.pid));
	harness_stop_workload(&jvm);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
}

static int remove_classes(void **state)
{
	if (classes) {
		char *cls = harness_path(classes, "AttachSleeper.class");

		unlink(cls);
		rmdir(classes);
		free(cls);
		free(classes);
		classes = NULL;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(not_a_jvm_fails_and_is_not_signalled),
		HARNESS_TEST(not_a_jvm_is_profiled_without_java),
		HARNESS_TEST(disabled_jdk17),
		HARNESS_TEST(disabled_jdk17_without_perfdata),
		HARNESS_TEST(disabled_jdk25),
		HARNESS_TEST(disabled_jvm_falls_back),
	};

	return cmocka_run_group_tests_name("attach refusals", tests, NULL, remove_classes);
}
