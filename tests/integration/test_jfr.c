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

/* Events in the JSON, and those whose stack holds method (a "name" of a method object). */
static void count_events(const char *json, const char *method, uint64_t *events, uint64_t *with)
{
	const char *marker = "\"type\": \"jdk.ExecutionSample\"";
	char name[128];
	const char *at = strstr(json, marker);

	snprintf(name, sizeof(name), "\"name\": \"%s\"", method);
	*events = *with = 0;
	while (at) {
		const char *next = strstr(at + 1, marker);
		size_t span = next ? (size_t)(next - at) : strlen(at);

		(*events)++;
		*with += memmem(at, span, name, strlen(name)) != NULL;
		at = next;
	}
}

/* The collapsed stacks' events as the writer makes them (period_us 0: one per sample), and those with frame. */
static void count_collapsed(const struct collapsed *c, const char *frame, uint64_t period_us, uint64_t *events,
			    uint64_t *with)
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
	bool wall = !strcmp(event, "wall");
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
	jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "2", NULL });
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	/* With threads and how Java frames ran, the collapsed stacks are the very stacks the JFR file is made of. */
	assert_int_equal(harness_run_profiler(&profiler, (char *[]){ "-p", pid, "-e", (char *)event, "-F", "499", "-d",
								     "3", "--threads", "--annotate", "-f", collapsed,
								     "-f", jfr, NULL },
					      60),
			 0);
	jvm_stop(&jvm);
	assert_int_equal(collapsed_load(collapsed, &c), 0);
	json = jfr_json(tool, jfr);
	count_events(json, "share50", &events, &with);
	count_collapsed(&c, "CpuSplit.share50", period_us, &want_events, &want_with);
	got_share = events ? 100.0 * (double)with / (double)events : 0;
	want_share = want_events ? 100.0 * (double)want_with / (double)want_events : 0;
	fprintf(stderr, "  %s, %s: %" PRIu64 " events, %.2f%% in share50; collapsed: %" PRIu64 ", %.2f%%\n", jdk->name,
		event, events, got_share, want_events, want_share);
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

static void cpu_jdk17(void **state)
{
	check(&jdk17, "cpu");
}

static void wall_jdk17(void **state)
{
	check(&jdk17, "wall");
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
		HARNESS_TEST(cpu_jdk17),
		HARNESS_TEST(wall_jdk17),
		HARNESS_TEST(cpu_jdk25),
		HARNESS_TEST(wall_jdk25),
	};

	return cmocka_run_group_tests_name("jfr files read by the JDK's jfr", tests, NULL, NULL);
}
