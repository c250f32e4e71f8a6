/*
 * The agent loaded at start-up (java -agentpath:libjbpfagent.so), on JDK
 * 17 and JDK 25: dormant until a profiler connects (no agent thread, no
 * handler on the real-time signals it would take, no copy of the agent in
 * the JVM's /tmp), then connected twice in a row, each recording with
 * Java frames while the JVM's heartbeat goes on. On JDK 25 with
 * -XX:-EnableDynamicAgentLoading: without the agent, one line naming
 * -agentpath and a non-zero exit under --java; with it, a recording with
 * Java frames.
 *
 * Environment, as the top Makefile sets it: AGENT (default
 * build/libjbpfagent.so), and what jvm.h and harness.h read.
 */
#include "jvm.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_S "3"
/* The workload beats every 100 ms; a second without one is a stall. */
#define STALL_BOUND_MS 2000
#define AFTER_MS 1000

/* The comm the agent's thread ("jbpfprof agent") gets, as the kernel keeps it. */
#define AGENT_THREAD_COMM "jbpfprof agent"

static const char *agent_path(void)
{
	static char path[4096];

	if (!realpath(harness_getenv("AGENT", "build/libjbpfagent.so"), path)) {
		fprintf(stderr, "no agent library: set AGENT or build it (make)\n");
		fail();
	}
	return path;
}

/* Whether a thread of pid has the comm name. */
static int has_thread(pid_t pid, const char *name)
{
	char dir[64], path[384], comm[64];
	struct dirent *e;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			found = !strcmp(comm, name);
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * Whether pid catches any of the real-time signals the agent's handler may
 * take (SIGRTMIN+4 to SIGRTMAX-4, jvmti-stub/handler.h): SigCgt of its status.
 */
static int catches_agent_signal(pid_t pid)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigCgt:", 7) && sscanf(line + 7, "%llx", &mask) == 1)
			found = 1;
	fclose(f);
	assert_true(found);
	for (int sig = SIGRTMIN + 4; sig <= SIGRTMAX - 4; sig++)
		if (mask & (1ull << (sig - 1)))
			return 1;
	return 0;
}

/* Whether pid maps a file whose name contains text. */
static int maps_file(pid_t pid, const char *text)
{
	char path[64], line[4352];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

/* One recording of jvm, watched: the heartbeat never stops, and CpuSplit's own frames are there. */
static void record_with_java_frames(struct jvm *jvm, const struct jdk *jdk, const char *label)
{
	unsigned long long joined, on_jvm;
	struct collapsed stacks;
	struct child profiler;
	struct heartbeats hb;
	char *file = harness_path(jvm->dir, "startup.collapsed");
	int status;

	status = jvm_record_watched(jvm, &profiler, file,
				    (char *[]){ "--java", "--java-stacks", "agent", "-F", "499", "-d", RECORD_S, NULL }, 60,
				    STALL_BOUND_MS, AFTER_MS, &hb);
	if (hb.stalled) {
		fprintf(stderr, "  %s, %s: the JVM stopped beating (longest gap %lld ms)\n", jdk->name, label,
			(long long)hb.longest_ms);
		jvm_kill(jvm);
		fail();
	}
	if (status)
		fprintf(stderr, "profiler's stderr:\n%s\n", profiler.buf);
	assert_int_equal(status, 0);
	jvm_assert_agent_loaded(&profiler);
	assert_int_equal(jvm_java_summary(&profiler, &joined, &on_jvm), 0);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	fprintf(stderr, "  %s, %s: %llu of %llu JVM samples joined, %llu in CpuSplit.work, %ld beats, longest gap %lld ms\n",
		jdk->name, label, joined, on_jvm, (unsigned long long)collapsed_count_frame(&stacks, "CpuSplit.work"),
		hb.beats, (long long)hb.longest_ms);
	assert_true(on_jvm > 100);
	/* Most samples of a JVM spinning in Java: its Java frames came, so the agent answered. */
	assert_true(joined * 100 >= on_jvm * 50);
	assert_true(collapsed_count_frame(&stacks, "CpuSplit.work") > 0);
	assert_true(hb.beats > 0);
	collapsed_free(&stacks);
	unlink(file);
	free(file);
}

static void start_with_agent(struct jvm *jvm, const struct jdk *jdk, const char *extra_flag)
{
	char agent_arg[4200];

	snprintf(agent_arg, sizeof(agent_arg), "-agentpath:%s", agent_path());
	jvm_start_opts(jvm, jdk, (char *[]){ agent_arg, (char *)extra_flag, NULL }, "CpuSplit",
		       (char *[]){ "-t", "1", "-b", NULL });
}

/*
 * Dormant, then two recordings in a row on the same JVM; no copy of the
 * agent loaded beside it (the copy's name is jbpfagent-<hash>-<uid>.so).
 */
static void dormant_then_connected_twice(void **state)
{
	const struct jdk *jdk = *state;
	struct jvm jvm;

	jvm_require(jdk, "CpuSplit");
	start_with_agent(&jvm, jdk, NULL);
	assert_true(maps_file(jvm.out.pid, "/libjbpfagent.so"));
	assert_int_equal(harness_wait_for(&jvm.out, "alive 5\n", 10), 0);
	assert_false(has_thread(jvm.out.pid, AGENT_THREAD_COMM));
	assert_false(catches_agent_signal(jvm.out.pid));
	record_with_java_frames(&jvm, jdk, "first recording");
	/* Woken: its thread and handler stay for the next recording. */
	assert_true(has_thread(jvm.out.pid, AGENT_THREAD_COMM));
	assert_true(catches_agent_signal(jvm.out.pid));
	record_with_java_frames(&jvm, jdk, "second recording");
	assert_false(maps_file(jvm.out.pid, "/jbpfagent-"));
	jvm_stop(&jvm);
}

/* JDK 21+ refuse a dynamic load here; the agent at start-up is woken all the same. */
static void dynamic_loading_disabled_with_agent(void **state)
{
	const struct jdk *jdk = *state;
	struct jvm jvm;

	jvm_require(jdk, "CpuSplit");
	start_with_agent(&jvm, jdk, "-XX:-EnableDynamicAgentLoading");
	record_with_java_frames(&jvm, jdk, "dynamic loading disabled");
	jvm_stop(&jvm);
}

/* The number of lines in s that start with "jbpfprof: ". */
static int message_lines(const char *s)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, "jbpfprof: ", 10);
	return n;
}

/* Without the agent: one line naming the flag that lets jbpfprof in, and --java fails. */
static void dynamic_loading_disabled_without_agent(void **state)
{
	const struct jdk *jdk = *state;
	struct child profiler;
	char pid[16];
	struct jvm jvm;
	int status;

	jvm_require(jdk, "CpuSplit");
	jvm_start_opts(&jvm, jdk, (char *[]){ "-XX:-EnableDynamicAgentLoading", NULL }, "CpuSplit",
		       (char *[]){ "-t", "1", NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	status = harness_run_profiler(&profiler,
				      (char *[]){ "--java", "--java-stacks", "agent", "-p", pid, "-d", "1", "-o", "collapsed",
						  "-f", "/dev/null", NULL },
				      60);
	fprintf(stderr, "  %s: exit %d: %s", jdk->name, status, profiler.buf);
	assert_int_not_equal(status, 0);
	assert_int_equal(message_lines(profiler.buf), 1);
	assert_non_null(strstr(profiler.buf, "-XX:-EnableDynamicAgentLoading"));
	assert_non_null(strstr(profiler.buf, "start it with -agentpath:/"));
	jvm_stop(&jvm);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TEST(dormant_then_connected_twice, jdk17),
		JDK_TEST(dormant_then_connected_twice, jdk25),
		/* -XX:EnableDynamicAgentLoading exists from JDK 21 on. */
		JDK_TEST(dynamic_loading_disabled_with_agent, jdk25),
		JDK_TEST(dynamic_loading_disabled_without_agent, jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("agent at start-up", tests, NULL, NULL);
}
