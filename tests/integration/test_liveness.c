/*
 * Liveness: a JVM profiled with Java frames keeps running. The workload is
 * Churn (tests/workloads/java/Churn.java): threads that live under a
 * millisecond, allocation, deep exceptions, class loaders made and dropped,
 * deoptimisation, full collections, all at once, with a heartbeat that
 * needs thread creation and allocation to work. Most runs are the agent's
 * (--java-stacks agent), where a profiling signal can land anywhere in
 * that: inside malloc, in a thread not yet attached to the JVM or already
 * leaving it, in a VM transition. The BPF walk, the default, sends no
 * signal and loads nothing into the JVM; it is run at 10 kHz too, where
 * only the cost of its walks could slow the JVM down.
 *
 * Each run starts a fresh JVM, records it with -p for RECORD_S seconds at
 * one rate, and watches its heartbeat during the recording and for AFTER_MS
 * after. A run in which STALL_BOUND_MS pass without a beat has stalled
 * (where the JVM's threads were is printed) and its JVM is killed; the
 * others still run, so that the count of stalled runs is known, and the
 * test fails if there was any, or if a JVM crashed. A hung JVM is still a
 * process; only beats that keep coming show it works.
 *
 * Runs per JDK and rate: $JBPF_LIVENESS_RUNS (default 3). Each run prints
 * its beats and its longest stall, the figures docs/architecture.md quotes.
 */
#include "harness.h"
#include "jvm.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_S 6
#define AFTER_MS 2000
/*
 * Beats come every 50 ms; a young collection, a full one (System.gc every
 * second) and a 10 kHz profiler on two busy CPUs stretch that to a few
 * hundred ms at worst. A hung JVM never beats again.
 */
#define STALL_BOUND_MS 2000

static int runs(void)
{
	const char *v = getenv("JBPF_LIVENESS_RUNS");
	int n = v ? atoi(v) : 0;

	return n > 0 ? n : 3;
}

/* Churn recorded at hz, with the agent (agent) or the default BPF walk. */
static void churn_at(void **state, const char *hz, bool agent)
{
	const struct jdk *jdk = *state;
	int n = runs(), stalled = 0;
	int64_t longest = 0;

	jvm_require(jdk, "Churn");
	for (int run = 1; run <= n; run++) {
		char seconds[16], *file;
		const char *busy;
		unsigned long long joined, on_jvm;
		double walked_pct;
		struct heartbeats hb;
		struct child profiler;
		struct jvm jvm;
		int status;

		jvm_start(&jvm, jdk, "Churn", NULL);
		file = harness_path(jvm.dir, "churn.collapsed");
		snprintf(seconds, sizeof(seconds), "%d", RECORD_S);
		status = jvm_record_watched(&jvm, &profiler, file,
					    (char *[]){ "-v", "-F", (char *)hz, "-d", seconds, "--java-stacks",
							agent ? "agent" : "bpf", NULL },
					    RECORD_S + 60, STALL_BOUND_MS, AFTER_MS, &hb);
		if (hb.longest_ms > longest)
			longest = hb.longest_ms;
		if (hb.stalled) {
			fprintf(stderr, "  %s at %s Hz, run %d of %d: STALLED after %ld beats\n", jdk->name, hz, run, n,
				hb.beats);
			stalled++;
			jvm_kill(&jvm);
			unlink(file);
			free(file);
			continue;
		}
		if (status != 0)
			fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
		assert_int_equal(status, 0);
		if (agent)
			jvm_assert_agent_loaded(&profiler);
		jvm_stop(&jvm);
		assert_int_equal(agent ? jvm_java_summary(&profiler, &joined, &on_jvm)
				       : jvm_walk_summary(&profiler, &joined, &on_jvm, &walked_pct, NULL),
				 0);
		fprintf(stderr, "  %s at %s Hz, run %d of %d: %ld beats, longest stall %lld ms; %llu of %llu JVM samples %s",
			jdk->name, hz, run, n, hb.beats, (long long)hb.longest_ms, joined, on_jvm,
			agent ? "joined" : "with Java frames walked");
		/* A thread still handling its last signal is not sent another (-v): how often that came. */
		busy = agent ? strstr(profiler.buf, " not sent to a thread that had one waiting") : NULL;
		while (busy && busy > profiler.buf && busy[-1] >= '0' && busy[-1] <= '9')
			busy--;
		if (busy)
			fprintf(stderr, "; signals %.*s", (int)strcspn(busy, "\n"), busy);
		fprintf(stderr, "\n");
		/* The handler or the walk still did its job, and the churn happened while it did. */
		assert_true(joined > 0);
		jvm_assert_did(&jvm, "the JVM did",
			       (const struct jvm_minimum[]){ { "threads_started", 101 },
							     { "exceptions", 101 },
							     { "classes_unloaded", 1 },
							     { NULL, 0 } });
		unlink(file);
		free(file);
	}
	fprintf(stderr, "  %s at %s Hz: %d runs, %d stalled, longest stall %lld ms\n", jdk->name, hz, n, stalled,
		(long long)longest);
	assert_int_equal(stalled, 0);
}

static void churn_at_99_hz(void **state)
{
	churn_at(state, "99", true);
}

static void churn_at_1_khz(void **state)
{
	churn_at(state, "1000", true);
}

static void churn_at_10_khz(void **state)
{
	churn_at(state, "10000", true);
}

static void churn_walked_at_10_khz(void **state)
{
	churn_at(state, "10000", false);
}

/*
 * A JVM that stops answering while it is recorded (SIGSTOP here; a hang
 * looks the same from outside): the profiler says so in one line and stops
 * signalling it, keeps recording, and once the JVM runs again (SIGCONT) and
 * its agent talks, says so and signals it again, so most of the recording
 * still has Java frames.
 */
static void stopped_jvm_is_no_longer_signalled(void **state)
{
	const struct jdk *jdk = *state;
	unsigned long long joined, on_jvm;
	char pid[16], *file;
	struct child profiler;
	struct jvm jvm;

	jvm_require(jdk, "CpuSplit");
	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "1", "-b", NULL });
	file = harness_path(jvm.dir, "stopped.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-F", "499", "-d", "20", "--java-stacks",
									"agent", "-f", file, NULL }),
			 0);
	assert_int_equal(harness_wait_for(&profiler, "sampling", 30), 0);
	jvm_assert_agent_loaded(&profiler);
	assert_int_equal(harness_wait_for(&jvm.out, "alive 10\n", 10), 0);
	kill(jvm.out.pid, SIGSTOP);
	if (harness_wait_for(&profiler, "stopped answering", 15)) {
		kill(jvm.out.pid, SIGCONT);
		fprintf(stderr, "the profiler did not notice the stopped JVM; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	kill(jvm.out.pid, SIGCONT);
	if (harness_wait_for(&profiler, "answers again", 10)) {
		fprintf(stderr, "the profiler did not notice the JVM run again; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	assert_int_equal(harness_finish(&profiler, 60), 0);
	jvm_stop(&jvm);
	assert_int_equal(jvm_java_summary(&profiler, &joined, &on_jvm), 0);
	fprintf(stderr, "  %s: %llu of %llu JVM samples joined\n", jdk->name, joined, on_jvm);
	/* About 2 s before the stop and 11 s after the JVM answers again: most samples have Java frames. */
	assert_true(on_jvm > 1000);
	assert_true(joined * 100 >= on_jvm * 60);
	unlink(file);
	free(file);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }
#define JDK_TESTS(f) JDK_TEST(f, jdk17), JDK_TEST(f, jdk25)

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TESTS(churn_at_99_hz),
		JDK_TESTS(churn_at_1_khz),
		JDK_TESTS(churn_at_10_khz),
		JDK_TESTS(churn_walked_at_10_khz),
		JDK_TESTS(stopped_jvm_is_no_longer_signalled),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("liveness", tests, NULL, NULL);
}
