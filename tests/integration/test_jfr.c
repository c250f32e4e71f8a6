/*
 * -o jfr, read by the JDK's own jfr tool (JDK 17's and JDK 25's): a CPU and
 * a wall-clock recording of CpuSplit, each written at once as collapsed
 * stacks and as a JFR file, and `jfr print --json` of the file.
 *
 *   - jfr reads every event without an error (exit 0, a JSON document);
 *   - the events are the recording's samples: as many as the collapsed
 *     stacks count for CPU; for wall-clock time, one per sampling period
 *     of each stack's microseconds (at least one), computed here from the
 *     collapsed stacks the same way (written with --threads and
 *     --annotate, so that they are the stacks the file is made of);
 *   - the share of events in CpuSplit.share50 is the collapsed stacks'
 *     share within half a point.
 *
 * A C program's recording (by pid, and with -a), which has no Java frame
 * and so no package, class name or Java method, is read by both JDKs' jfr
 * too, every event of it.
 *
 * And the other way: the JDK's own JFR recording of CpuSplit (JDK 17's
 * execution sampler, JDK 25's CPU-time sampler) converted by jbpfprof has
 * the samples the JDK's own jfr reads in it, as many in share50; and the
 * CPU-time sampler's holds CpuSplit's split, share50 half of its three
 * methods' samples, within what that many samples allow.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

/* The jfr tool beside a JDK's java launcher. */
static void jfr_tool(const struct jdk *jdk, char *buf, size_t size)
{
	const char *java = jdk_java_path(jdk), *slash = strrchr(java, '/');

	snprintf(buf, size, "%.*s/jfr", slash ? (int)(slash - java) : 0, java);
}

/* `jfr print --json file` read whole; fails the test unless jfr exits 0 with a JSON document. */
/* Not inlined: GCC then takes the text for a pointer to the local it was read through. */
__attribute__((noinline)) static char *jfr_json(const char *tool, const char *file)
{
	char cmd[1024], *text = NULL;
	size_t len = 0;
	FILE *pipe, *out = open_memstream(&text, &len);
	int c, status;

	assert_non_null(out);
	/* Every frame: jfr prints the first 5 of a stack unless told. */
	snprintf(cmd, sizeof(cmd), "'%s' print --json --stack-depth 4096 '%s' 2>&1", tool, file);
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	while ((c = fgetc(pipe)) != EOF)
		fputc(c, out);
	status = pclose(pipe);
	assert_int_equal(fclose(out), 0);
	if (status != 0 || text[0] != '{')
		fail_msg("%s print --json failed (%d): %.2000s", tool, status, text);
	return text;
}

/*
 * Sample events in the JSON (execution, native method and CPU-time
 * samples), and those whose stack holds method (a "name" of a method).
 */
static void count_events(const char *json, const char *method, uint64_t *events, uint64_t *with)
{
	static const char *const samples[] = { "jdk.ExecutionSample\"", "jdk.NativeMethodSample\"",
					       "jdk.CPUTimeSample\"" };
	const char *marker = "\"type\": \"jdk.";
	char name[128];
	const char *at = strstr(json, marker);

	snprintf(name, sizeof(name), "\"name\": \"%s\"", method);
	*events = *with = 0;
	while (at) {
		const char *next = strstr(at + 1, marker), *type = at + strlen(marker) - 4;
		size_t span = next ? (size_t)(next - at) : strlen(at);
		bool sample = false;

		for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
			sample |= !strncmp(type, samples[i], strlen(samples[i]));
		if (sample) {
			(*events)++;
			*with += memmem(at, span, name, strlen(name)) != NULL;
		}
		at = next;
	}
}

/* The collapsed stacks' events as the writer makes them (period_us 0: one per sample), and those with frame.
 */
static void count_collapsed(const struct collapsed *c, const char *frame, uint64_t period_us,
                            uint64_t *events, uint64_t *with)
{
	*events = *with = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		uint64_t n = c->counts[i];

		if (period_us) {
			n = (n + period_us / 2) / period_us;
			n = n ? n : 1;
		}
		frames_split(&fr, c->stacks[i]);
		*events += n;
		*with += find_frame(&fr, 0, frame) >= 0 ? n : 0;
		free(fr.buf);
	}
}

static void check(const struct jdk *jdk, const char *event)
{
	char *dir, *collapsed, *jfr, *json, tool[512];
	bool wall = strcmp(event, "cpu");
	uint64_t period_us = wall ? 1000000 / 499 : 0, events, with, want_events, want_with;
	struct child profiler;
	struct collapsed c;
	struct jvm jvm;
	char pid[16];
	double got_share, want_share;

	jvm_require(jdk, "CpuSplit");
	jfr_tool(jdk, tool, sizeof(tool));
	if (access(tool, X_OK))
		skip();
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "rec.collapsed");
	jfr = harness_path(dir, "rec.jfr");
	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){"-t", "2", NULL});
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	/* With threads and how Java frames ran, the collapsed stacks are the very stacks the JFR file is made
	 * of. */
	assert_int_equal(
	    harness_run_profiler(&profiler,
	                         (char *[]){"-p", pid, "-e", (char *)event, "-F", "499", "-d", "3",
	                                    "--threads", "--annotate", "-f", collapsed, "-f", jfr, NULL},
	                         60),
	    0);
	jvm_stop(&jvm);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	json = jfr_json(tool, jfr);
	count_events(json, "share50", &events, &with);
	count_collapsed(&c, "CpuSplit.share50", period_us, &want_events, &want_with);
	got_share = events ? 100.0 * (double)with / (double)events : 0;
	want_share = want_events ? 100.0 * (double)want_with / (double)want_events : 0;
	fprintf(stderr, "  %s, %s: %" PRIu64 " events, %.2f%% in share50; collapsed: %" PRIu64 ", %.2f%%\n",
	        jdk->name, event, events, got_share, want_events, want_share);
	/* Two busy threads for 3 s at 499 Hz: some 3000 samples. */
	assert_true(want_events > 500);
	assert_int_equal(events, want_events);
	assert_true(fabs(got_share - want_share) <= 0.5);
	free(json);
	collapsed_free(&c);
	unlink(collapsed);
	unlink(jfr);
	rmdir(dir);
	free(collapsed);
	free(jfr);
	free(dir);
}

/*
 * CpuSplit (two threads, -b: a heartbeat) recorded by the JDK's own JFR
 * with jfr_options until its 30th beat, converted to collapsed stacks by
 * jbpfprof: share50's share of the samples in the three methods.
 */
static void jdk_recording_converts(const struct jdk *jdk, const char *jfr_options, bool cpu_time)
{
	char *dir, *jfr, *collapsed, option[1024], tool[512], *json;
	uint64_t share50, all = 0, total = 0, events, with, ours_with = 0;
	struct child convert;
	struct collapsed c;
	struct jvm jvm;
	double share, sigma;

	jvm_require(jdk, "CpuSplit");
	jfr_tool(jdk, tool, sizeof(tool));
	dir = harness_tmpdir();
	jfr = harness_path(dir, "jdk.jfr");
	collapsed = harness_path(dir, "jdk.collapsed");
	snprintf(option, sizeof(option), "-XX:StartFlightRecording=filename=%s,%s", jfr, jfr_options);
	jvm_start_opts(&jvm, jdk, (char *[]){ option, NULL }, "CpuSplit", (char *[]){ "-t", "2", "-b", NULL });
	/* Three seconds of work, counted by the workload's own beats. */
	if (harness_wait_for(&jvm.out, "alive 30\n", 60))
		fail_msg("CpuSplit did not beat 30 times: %s", jvm.out.buf);
	/* JFR writes the file as the JVM exits. */
	jvm_stop(&jvm);
	assert_int_equal(harness_run_profiler(&convert, (char *[]){ "convert", jfr, "-o", "collapsed", "-f", collapsed,
								    NULL },
					      60),
			 0);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	/* The same samples as the JDK's own reading of the file, the same of them in share50. */
	json = jfr_json(tool, jfr);
	count_events(json, "share50", &events, &with);
	for (size_t i = 0; i < c.n; i++) {
		struct frames fr;

		frames_split(&fr, c.stacks[i]);
		total += c.counts[i];
		ours_with += find_frame(&fr, 0, "CpuSplit.share50") >= 0 ? c.counts[i] : 0;
		free(fr.buf);
	}
	fprintf(stderr, "  %s's JFR: %" PRIu64 " samples, %" PRIu64 " in share50; the JDK's jfr: %" PRIu64 ", %" PRIu64 "\n",
		jdk->name, total, ours_with, events, with);
	assert_int_equal(total, events);
	assert_int_equal(ours_with, with);
	/* And, sampled by CPU time, CpuSplit's split: three standard deviations of a binomial share, and a point. */
	share50 = collapsed_count_frame(&c, "CpuSplit.share50");
	all = share50 + collapsed_count_frame(&c, "CpuSplit.share30") + collapsed_count_frame(&c, "CpuSplit.share20");
	share = all ? 100.0 * (double)share50 / (double)all : 0;
	sigma = all ? 100.0 * sqrt(0.25 / (double)all) : 100;
	fprintf(stderr, "  %" PRIu64 " samples in the three methods, share50 %.1f%% (50 +- %.1f%s)\n", all, share,
		3 * sigma + 1, cpu_time ? "" : ": not asked of the execution sampler");
	assert_true(all >= 100);
	if (cpu_time)
		assert_true(fabs(share - 50.0) <= 3 * sigma + 1);
	free(json);
	harness_output_free(&c, collapsed, NULL);
	unlink(jfr);
	rmdir(dir);
	free(jfr);
	free(dir);
}

/*
 * The execution sampler takes threads in Java code (not in native code or
 * the VM) at a wall-clock period: not CPU time, so not CpuSplit's split
 * (39 to 48% in share50 measured here beside two fuzzers). For it, the
 * check is the agreement with the JDK's own reading of the file.
 */
static void jdk17_execution_samples_convert(void **state)
{
	jdk_recording_converts(&jdk17, "settings=profile,jdk.ExecutionSample#period=2ms,jdk.NativeMethodSample#period=2ms",
			       false);
}

static void jdk25_cpu_time_samples_convert(void **state)
{
	jdk_recording_converts(&jdk25,
			       "jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=2ms,jdk.ExecutionSample#enabled=false",
			       true);
}

/*
 * A process with no Java frames (cpu_split, C), profiled by pid or with the
 * whole host (-a), written at once as collapsed stacks and as a JFR file:
 * both JDKs' jfr read every event of the file, as many as the collapsed
 * stacks count, as many in share_50.
 */
static void native_check(bool all)
{
	char *workload = harness_workload("cpu_split"), *dir, *collapsed, *jfr, tool[2][512], pid[16];
	const struct jdk *jdks[2] = { &jdk17, &jdk25 };
	struct child target, profiler;
	struct collapsed c;
	uint64_t want_events, want_with;
	size_t tools = 0;

	harness_require_root();
	for (size_t i = 0; i < 2; i++) {
		jfr_tool(jdks[i], tool[tools], sizeof(tool[tools]));
		if (!access(tool[tools], X_OK))
			tools++;
		else
			fprintf(stderr, "  no %s: %s not read by it\n", tool[tools], jdks[i]->name);
	}
	if (!tools)
		skip();
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "rec.collapsed");
	jfr = harness_path(dir, "rec.jfr");
	assert_int_equal(harness_start_workload(&target, (char *[]){ workload, "-t", "1", NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)target.pid);
	assert_int_equal(harness_run_profiler(&profiler,
					      all ? (char *[]){ "-a", "-F", "199", "-d", "2", "--threads", "--annotate",
								"-f", collapsed, "-f", jfr, NULL }
						  : (char *[]){ "-p", pid, "-F", "199", "-d", "2", "--threads", "--annotate",
								"-f", collapsed, "-f", jfr, NULL },
					      60),
			 0);
	harness_stop_workload(&target);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	count_collapsed(&c, "share_50", 0, &want_events, &want_with);
	/* One busy thread for 2 s at 199 Hz: some 400 samples, half of them in share_50. */
	assert_true(want_with > 50);
	for (size_t i = 0; i < tools; i++) {
		char *json = jfr_json(tool[i], jfr);
		uint64_t events, with;

		count_events(json, "share_50", &events, &with);
		fprintf(stderr, "  %s %s: %" PRIu64 " events, %" PRIu64 " in share_50; collapsed: %" PRIu64 ", %" PRIu64 "\n",
			tool[i], all ? "-a" : "-p", events, with, want_events, want_with);
		assert_int_equal(events, want_events);
		assert_int_equal(with, want_with);
		free(json);
	}
	collapsed_free(&c);
	unlink(collapsed);
	unlink(jfr);
	rmdir(dir);
	free(collapsed);
	free(jfr);
	free(dir);
	free(workload);
}

static void native_pid(void **state)
{
	native_check(false);
}

static void native_all(void **state)
{
	native_check(true);
}

static void cpu_jdk17(void **state)
{
	check(&jdk17, "cpu");
}

static void wall_jdk17(void **state)
{
	check(&jdk17, "wall");
}

static void offcpu_jdk17(void **state)
{
	check(&jdk17, "offcpu");
}

static void cpu_jdk25(void **state)
{
	check(&jdk25, "cpu");
}

static void wall_jdk25(void **state)
{
	check(&jdk25, "wall");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    HARNESS_TEST(native_pid),
	    HARNESS_TEST(native_all),
	    HARNESS_TEST(cpu_jdk17),
	    HARNESS_TEST(wall_jdk17),
	    HARNESS_TEST(offcpu_jdk17),
	    HARNESS_TEST(cpu_jdk25),
	    HARNESS_TEST(wall_jdk25),
	    HARNESS_TEST(jdk17_execution_samples_convert),
	    HARNESS_TEST(jdk25_cpu_time_samples_convert),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("jfr files: ours read by the JDK, the JDK's read by us", tests,
	                                   NULL, NULL);
}
