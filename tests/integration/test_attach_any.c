/*
 * Attach at any moment, through the real profiler, on JDK 17 and JDK 25:
 *
 *   - the profiler started in the same instant as a JVM (before it is
 *     live, or before its launcher has even loaded libjvm.so), three times
 *     in a row: every try gets Java frames;
 *   - -p on a wrapper script that sleeps, then execs java: the exec record
 *     makes the profiler watch the new program, and the JVM gets Java frames;
 *   - threads named longer than the kernel's 15 bytes, started before the
 *     attach, carry their whole Java names in --threads output;
 *   - -a: a JVM busy in Java code has Java frames on at least 90% of its
 *     threads' samples, and a JVM started during the recording gets them;
 *     a JVM stopped by a signal is not tried, and attached once it runs.
 *
 * These are the agent's ways (--java-stacks agent): the BPF walk, the
 * default, needs no attach (tests/integration/test_java_walk.c).
 *
 * Every JVM runs CpuSplit with its heartbeat (-b); each test checks that
 * beats came after the recording and that the JVM stops cleanly, without a
 * crash report. Under -a the profiler attaches every JVM on the host; the
 * test's own are told apart by their thread names (-n PREFIX).
 */
#include "harness.h"
#include "jvm.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Absolute: the JVM runs in a directory of its own. */
static char *classes_dir(void)
{
	const char *dir = getenv("JAVA_CLASSES");
	char *path = realpath(dir && dir[0] ? dir : "build/java", NULL);

	assert_non_null(path);
	return path;
}

/*
 * Starts "java -cp CLASSES CpuSplit -b -n PREFIX" through /bin/sh, which
 * first runs wrapper (a shell command, "" for none) and then execs java,
 * without waiting for "ready": the test profiles it from its first instant.
 */
static void start_now(struct jvm *jvm, const struct jdk *jdk, const char *wrapper, const char *prefix)
{
	char script[256], *classes = classes_dir();

	memset(jvm, 0, sizeof(*jvm));
	jvm->dir = harness_tmpdir();
	assert_non_null(jvm->dir);
	snprintf(script, sizeof(script), "cd \"$0\" && %s%sexec \"$@\"", wrapper, wrapper[0] ? " && " : "");
	assert_int_equal(harness_start_command(&jvm->out,
					       (char *[]){ "/bin/sh", "-c", script, jvm->dir,
							   (char *)jdk_java_path(jdk), "-cp", classes, "CpuSplit",
							   "-b", "-n", (char *)prefix, NULL },
					       1),
			 0);
	free(classes);
}

/* Samples of the threads named prefix..., and of them those with a CpuSplit frame. */
static void count_threads(const struct collapsed *c, const char *prefix, uint64_t *on_threads, uint64_t *with_java)
{
	char root[64];

	/* First with -p, after the process's name with -a. */
	snprintf(root, sizeof(root), "[%s", prefix);
	*on_threads = *with_java = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *at = strstr(c->stacks[i], root);

		if (!at || (at != c->stacks[i] && at[-1] != ';'))
			continue;
		*on_threads += c->counts[i];
		if (strstr(c->stacks[i], ";CpuSplit."))
			*with_java += c->counts[i];
	}
}

/* The JVM kept beating after the recording, then stops cleanly. */
static void assert_alive_and_stop(struct jvm *jvm)
{
	size_t before = jvm->out.len;

	while (harness_read_some(&jvm->out, 2000) == 0 && !strstr(jvm->out.buf + before, "alive"))
		;
	if (!strstr(jvm->out.buf + before, "alive"))
		fail_msg("the JVM printed no heartbeat after the recording: %s", jvm->out.buf);
	jvm_stop(jvm);
}

/* Runs the profiler with args and "--threads -f FILE" and reads FILE back. */
static void record(struct child *profiler, struct collapsed *stacks, char **dir, char **file, char *const args[])
{
	char *argv[28];
	size_t n = 0;

	*dir = harness_tmpdir();
	*file = harness_path(*dir, "out.collapsed");
	while (args[n] && n < 20) {
		argv[n] = args[n];
		n++;
	}
	argv[n++] = "--threads";
	argv[n++] = "--java-stacks";
	argv[n++] = "agent";
	argv[n++] = "-f";
	argv[n++] = *file;
	argv[n] = NULL;
	if (harness_run_profiler(profiler, argv, 120) != 0)
		fail_msg("the profiler failed: %s", profiler->buf);
	assert_int_equal(collapsed_load(*file, stacks), 0);
}

/* -p on a JVM (or its wrapper) from its first instant: Java frames on most of its threads' samples. */
static void profile_from_start(const struct jdk *jdk, const char *wrapper, const char *label)
{
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	uint64_t on_threads, with_java;
	char pid[16], *dir, *file;

	start_now(&jvm, jdk, wrapper, "split-");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	record(&profiler, &stacks, &dir, &file, (char *[]){ "-p", pid, "-F", "199", "-d", "5", NULL });
	count_threads(&stacks, "split-", &on_threads, &with_java);
	fprintf(stderr, "  %s %s: %llu samples of the split threads, %.1f%% with Java frames\n", jdk->name, label,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	if (on_threads < 50 || harness_percent(with_java, on_threads) < 80.0)
		fail_msg("too few Java frames; the profiler said:\n%s", profiler.buf);
	assert_alive_and_stop(&jvm);
	harness_output_free(&stacks, file, dir);
}

static void same_instant(const struct jdk *jdk)
{
	jvm_require(jdk, "CpuSplit");
	for (int i = 0; i < 3; i++)
		profile_from_start(jdk, "", "started with the profiler");
}

static void same_instant_jdk17(void **state)
{
	(void)state;
	same_instant(&jdk17);
}

static void same_instant_jdk25(void **state)
{
	(void)state;
	same_instant(&jdk25);
}

static void wrapper_script(const struct jdk *jdk)
{
	jvm_require(jdk, "CpuSplit");
	profile_from_start(jdk, "sleep 1", "exec'd by a wrapper script");
}

static void wrapper_script_jdk17(void **state)
{
	(void)state;
	wrapper_script(&jdk17);
}

static void wrapper_script_jdk25(void **state)
{
	(void)state;
	wrapper_script(&jdk25);
}

/* Threads named longer than 15 bytes, running before the attach, keep their whole names. */
static void long_thread_names(const struct jdk *jdk)
{
	static const char prefix[] = "worker-with-a-long-name-";
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	uint64_t named, named_java, cut, cut_java;
	char pid[16], kernel_name[16], *dir, *file;

	jvm_require(jdk, "CpuSplit");
	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-b", "-n", (char *)prefix, NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	record(&profiler, &stacks, &dir, &file, (char *[]){ "-p", pid, "-F", "199", "-d", "3", NULL });
	/* The kernel's name is the first 15 bytes: "worker-with-a-l". */
	memcpy(kernel_name, prefix, sizeof(kernel_name) - 1);
	kernel_name[sizeof(kernel_name) - 1] = '\0';
	count_threads(&stacks, prefix, &named, &named_java);
	count_threads(&stacks, kernel_name, &cut, &cut_java);
	fprintf(stderr, "  %s: %llu samples under the whole Java name, %llu under any name starting %s\n", jdk->name,
		(unsigned long long)named, (unsigned long long)cut, kernel_name);
	assert_true(named >= 20);
	assert_int_equal(named, cut);
	assert_alive_and_stop(&jvm);
	harness_output_free(&stacks, file, dir);
}

static void long_thread_names_jdk17(void **state)
{
	(void)state;
	long_thread_names(&jdk17);
}

static void long_thread_names_jdk25(void **state)
{
	(void)state;
	long_thread_names(&jdk25);
}

/* -a: a JVM present at the start, busy in Java, has Java frames on at least 90% of its threads' samples. */
static void all_busy_jvm(void **state)
{
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	uint64_t on_threads, with_java;
	char *dir, *file;

	(void)state;
	jvm_require(&jdk17, "CpuSplit");
	jvm_start(&jvm, &jdk17, "CpuSplit", (char *[]){ "-b", "-n", "allmode-busy-", NULL });
	record(&profiler, &stacks, &dir, &file, (char *[]){ "-a", "-F", "199", "-d", "3", NULL });
	count_threads(&stacks, "allmode-busy-", &on_threads, &with_java);
	fprintf(stderr, "  -a, JDK 17 busy: %llu samples of its threads, %.1f%% with Java frames\n",
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	if (on_threads < 100 || harness_percent(with_java, on_threads) < 90.0)
		fail_msg("too few Java frames; the profiler said:\n%s", profiler.buf);
	assert_non_null(strstr(profiler.buf, "JVMs: "));
	assert_alive_and_stop(&jvm);
	harness_output_free(&stacks, file, dir);
}

/* -a: a JVM started during the recording is attached when it is live. */
/*
 * Reads the profiler's stderr until it says the agent is in JVM pid (-v
 * prints it for every attach during the recording); fails the test after
 * timeout_s.
 */
static void wait_attached(struct child *profiler, int pid, int timeout_s)
{
	char line[64];

	snprintf(line, sizeof(line), "agent loaded into JVM pid %d,", pid);
	if (harness_wait_for(profiler, line, timeout_s))
		fail_msg("the profiler did not attach JVM pid %d: %s", pid, profiler->buf);
}

/*
 * Reads n heartbeats of the JVM printed from now on: it ran (and was
 * sampled) for that long. What its pipe holds already is read first and
 * not counted: beats printed while the test waited elsewhere (for the
 * attach, say) came before now.
 */
static void read_beats(struct jvm *jvm, int n)
{
	while (harness_read_some(&jvm->out, 0) == 0)
		;
	for (int seen = 0; seen < n;) {
		size_t before = jvm->out.len;

		if (harness_read_some(&jvm->out, 5000) != 0)
			fail_msg("the JVM stopped beating: %s", jvm->out.buf);
		for (const char *at = jvm->out.buf + before; (at = strstr(at, "alive")); at++)
			seen++;
	}
}

/* Stops the profiler as Ctrl-C does, and reads its output back. */
static void stop_profiler(struct child *profiler, const char *file, struct collapsed *stacks)
{
	kill(profiler->pid, SIGINT);
	if (harness_finish(profiler, 60) != 0)
		fail_msg("the profiler failed: %s", profiler->buf);
	assert_int_equal(collapsed_load(file, stacks), 0);
}

static void assert_java_share(const struct collapsed *stacks, const char *prefix, const char *what,
			      const struct child *profiler)
{
	uint64_t on_threads, with_java;

	count_threads(stacks, prefix, &on_threads, &with_java);
	fprintf(stderr, "  -a, %s: %llu samples of its threads, %.1f%% with Java frames\n", what,
		(unsigned long long)on_threads, harness_percent(with_java, on_threads));
	if (on_threads < 50 || harness_percent(with_java, on_threads) < 50.0) {
		/* The summary is at the end; under -a -v much comes before it. */
		fprintf(stderr, "the profiler's last words:\n%s\n",
			profiler->len > 4000 ? profiler->buf + profiler->len - 4000 : profiler->buf);
		fail_msg("too few Java frames for %s", what);
	}
}

/*
 * -a, a JVM started during the recording: the profiler attaches it while
 * it records (the attach runs beside the recording loop, so other JVMs on
 * the host that are slow to answer hold nothing up); the test records
 * until the attach is reported and the JVM beat for a second after it.
 */
static void all_jvm_started_later(void **state)
{
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	char *dir = harness_tmpdir(), *file = harness_path(dir, "out.collapsed");

	(void)state;
	jvm_require(&jdk25, "CpuSplit");
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-a", "-v", "-F", "199", "--threads",
									"--java-stacks", "agent", "-f", file,
								      NULL }),
			 0);
	if (harness_wait_for(&profiler, "sampling all processes", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	jvm_start(&jvm, &jdk25, "CpuSplit", (char *[]){ "-b", "-n", "allmode-late-", NULL });
	wait_attached(&profiler, jvm.out.pid, 30);
	read_beats(&jvm, 50);
	stop_profiler(&profiler, file, &stacks);
	assert_java_share(&stacks, "allmode-late-", "JDK 25 started during the recording", &profiler);
	assert_non_null(strstr(profiler.buf, "during the recording"));
	assert_alive_and_stop(&jvm);
	harness_output_free(&stacks, file, dir);
}

/*
 * -a, a JVM that exits during the recording frees its slot (the profiler
 * says so with -v), and a JVM started afterwards is attached too: both
 * have Java frames, and the summary counts both attaches.
 */
static void all_jvm_exits_then_another(void **state)
{
	struct child profiler;
	struct collapsed stacks;
	struct jvm first, second;
	unsigned long long joined, on_jvm;
	char *dir = harness_tmpdir(), *file = harness_path(dir, "out.collapsed"), freed[96];

	(void)state;
	jvm_require(&jdk17, "CpuSplit");
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-a", "-v", "-F", "199", "--threads",
									"--java-stacks", "agent", "-f", file,
								      NULL }),
			 0);
	if (harness_wait_for(&profiler, "sampling all processes", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	jvm_start(&first, &jdk17, "CpuSplit", (char *[]){ "-b", "-n", "allmode-first-", NULL });
	wait_attached(&profiler, first.out.pid, 30);
	read_beats(&first, 50);
	snprintf(freed, sizeof(freed), "JVM pid %d has exited; its slot is free", first.out.pid);
	jvm_stop(&first);
	if (harness_wait_for(&profiler, freed, 30))
		fail_msg("the exited JVM's slot was not freed: %s", profiler.buf);
	jvm_start(&second, &jdk17, "CpuSplit", (char *[]){ "-b", "-n", "allmode-second-", NULL });
	wait_attached(&profiler, second.out.pid, 30);
	read_beats(&second, 50);
	stop_profiler(&profiler, file, &stacks);
	assert_java_share(&stacks, "allmode-first-", "JDK 17 that exited during the recording", &profiler);
	assert_java_share(&stacks, "allmode-second-", "JDK 17 started after it exited", &profiler);
	if (jvm_java_summary(&profiler, &joined, &on_jvm) || !joined || joined > on_jvm)
		fail_msg("no consistent Java summary: %s", profiler.buf);
	{
		const char *at = strstr(profiler.buf, "; JVMs: ");
		unsigned long long attached = 0, late = 0;

		/* Other JVMs on the host may be attached too: at least these two. */
		if (!at || sscanf(at, "; JVMs: %llu attached (%llu during the recording)", &attached, &late) != 2 ||
		    late < 2 || attached < late)
			fail_msg("the summary does not count both attaches: %s", profiler.buf);
	}
	assert_alive_and_stop(&second);
	harness_output_free(&stacks, file, dir);
}

/*
 * -a, a JVM stopped by SIGSTOP when the recording starts: it is not tried
 * (a try would wait the whole load timeout for an answer), the profiler
 * says it is stopped, and once it runs again (SIGCONT) it is attached
 * during the recording and gets Java frames.
 */
static void all_stopped_jvm(void **state)
{
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	char *dir = harness_tmpdir(), *file = harness_path(dir, "out.collapsed"), said[96];

	(void)state;
	jvm_require(&jdk17, "CpuSplit");
	jvm_start(&jvm, &jdk17, "CpuSplit", (char *[]){ "-b", "-n", "allmode-stopped-", NULL });
	assert_int_equal(kill(jvm.out.pid, SIGSTOP), 0);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-a", "-v", "-F", "199", "--threads",
									"--java-stacks", "agent", "-f", file,
								      NULL }),
			 0);
	snprintf(said, sizeof(said), "JVM pid %d is stopped (by a signal)", jvm.out.pid);
	if (harness_wait_for(&profiler, said, 60))
		fail_msg("the profiler did not say the JVM is stopped: %s", profiler.buf);
	assert_int_equal(kill(jvm.out.pid, SIGCONT), 0);
	wait_attached(&profiler, jvm.out.pid, 30);
	read_beats(&jvm, 50);
	stop_profiler(&profiler, file, &stacks);
	assert_java_share(&stacks, "allmode-stopped-", "JDK 17 stopped, then running again", &profiler);
	assert_alive_and_stop(&jvm);
	harness_output_free(&stacks, file, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(same_instant_jdk17),
		HARNESS_TEST(same_instant_jdk25),
		HARNESS_TEST(wrapper_script_jdk17),
		HARNESS_TEST(wrapper_script_jdk25),
		HARNESS_TEST(long_thread_names_jdk17),
		HARNESS_TEST(long_thread_names_jdk25),
		HARNESS_TEST(all_busy_jvm),
		HARNESS_TEST(all_jvm_started_later),
		HARNESS_TEST(all_jvm_exits_then_another),
		HARNESS_TEST(all_stopped_jvm),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("attach at any moment", tests, NULL, NULL);
}
