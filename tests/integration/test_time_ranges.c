/*
 * Time ranges: phases (C) runs phase_one for 5 s, then phase_two for 5 s,
 * started as the profiler begins sampling; one recording of 11 s, as
 * pprof and as JFR.
 *
 *   - convert --from 1 --to 4 keeps phase_one, --from 6 --to 9 phase_two:
 *     at least 95% of the samples of the two functions in each range, in
 *     collapsed stacks, the text report, a pprof file cut and read back,
 *     a JFR file cut and read by the JDK's jfr;
 *   - pprof round-trips the times: the recording written again by convert
 *     cuts to exactly the counts the recording itself cuts to;
 *   - the JFR recording, read by JDK 17's and JDK 25's jfr print --json:
 *     every startTime of a phase_one sample precedes every phase_two's.
 *
 * 95% leaves room for the samples the phases' own edges (the go file seen
 * within a millisecond) and the 1 ms ticks can blur: none of them lies
 * within a second of either range.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

struct split {
	uint64_t one, two;
};

static void run(char *const args[])
{
	struct child c;

	if (harness_run_profiler(&c, args, 60))
		fail_msg("jbpfprof %s %s failed: %s", args[0], args[1], c.buf);
}

/* The samples of the two phases in collapsed stacks. */
static struct split split_of_collapsed(const char *path)
{
	struct collapsed c;
	struct split s;

	assert_int_equal(collapsed_load(path, &c), 0);
	s.one = collapsed_count_frame(&c, "phase_one");
	s.two = collapsed_count_frame(&c, "phase_two");
	collapsed_free(&c);
	return s;
}

/* The two phases' totals in a text report: the first number of their rows in the table by total. */
static struct split split_of_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool totals = false;
	struct split s = { 0, 0 };

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;
		char name[256];

		if (strstr(line, "functions by total"))
			totals = true;
		if (totals && sscanf(line, " %llu %*s %255s", &n, name) == 2) {
			if (!strcmp(name, "phase_one"))
				s.one = n;
			if (!strcmp(name, "phase_two"))
				s.two = n;
		}
	}
	fclose(f);
	return s;
}

/* "2026-01-02T03:04:05.123Z" as ns since the epoch; 0 if it is not one. */
static int64_t instant_ns(const char *text)
{
	struct tm tm = { 0 };
	const char *rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	int64_t ns = 0, scale = 100000000;

	if (!rest)
		return 0;
	if (*rest == '.')
		for (rest++; *rest >= '0' && *rest <= '9'; rest++, scale /= 10)
			ns += (*rest - '0') * scale;
	return (int64_t)timegm(&tm) * 1000000000 + ns;
}

/* The JDK's jfr tool beside a JDK's java. */
static bool jfr_tool(const struct jdk *jdk, char *buf, size_t size)
{
	const char *java = jdk_java_path(jdk), *slash = strrchr(java, '/');

	snprintf(buf, size, "%.*s/jfr", slash ? (int)(slash - java) : 0, java);
	return !access(buf, X_OK);
}

/*
 * jfr print --json of path: the execution samples in each phase, and the
 * latest phase_one and earliest phase_two startTime.
 */
static struct split split_of_jfr(const char *tool, const char *path, int64_t *last_one, int64_t *first_two)
{
	char cmd[2048], *text = NULL, *at;
	size_t len = 0;
	FILE *pipe, *out = open_memstream(&text, &len);
	struct split s = { 0, 0 };
	int c;

	assert_non_null(out);
	snprintf(cmd, sizeof(cmd), "'%s' print --json --stack-depth 4096 --events jdk.ExecutionSample '%s' 2>&1", tool,
		 path);
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	while ((c = fgetc(pipe)) != EOF)
		fputc(c, out);
	c = pclose(pipe);
	assert_int_equal(fclose(out), 0);
	if (c != 0 || text[0] != '{')
		fail_msg("%s print failed (%d): %.2000s", tool, c, text);
	*last_one = 0;
	*first_two = INT64_MAX;
	for (at = strstr(text, "\"startTime\": \""); at;) {
		char *next = strstr(at + 1, "\"startTime\": \"");
		size_t span = next ? (size_t)(next - at) : strlen(at);
		int64_t t = instant_ns(at + strlen("\"startTime\": \""));

		assert_true(t > 0);
		if (memmem(at, span, "\"name\": \"phase_one\"", 19)) {
			s.one++;
			*last_one = t > *last_one ? t : *last_one;
		} else if (memmem(at, span, "\"name\": \"phase_two\"", 19)) {
			s.two++;
			*first_two = t < *first_two ? t : *first_two;
		}
		at = next;
	}
	free(text);
	return s;
}

/* Whether want holds at least 95% of the two phases' samples, which must be some. */
static void check_share(const char *what, const char *range, struct split s, bool one)
{
	uint64_t want = one ? s.one : s.two, all = s.one + s.two;

	fprintf(stderr, "  %s, %s: phase_one %" PRIu64 ", phase_two %" PRIu64 "\n", what, range, s.one, s.two);
	assert_true(all >= 100);
	assert_true(want * 100 >= all * 95);
}

static void phases_cut(void **state)
{
	char *workload = harness_workload("phases"), *dir = harness_tmpdir(), pid[16], tool[2][512];
	char *go = harness_path(dir, "go"), *pprof = harness_path(dir, "rec.pb.gz"), *jfr = harness_path(dir, "rec.jfr");
	char *again = harness_path(dir, "again.pb.gz"), *out = harness_path(dir, "out"), *out2 = harness_path(dir, "out2"),
	     *cut_jfr = harness_path(dir, "cut.jfr");
	const char *ranges[2][2] = { { "1", "4" }, { "6", "9" } };
	const struct jdk *jdks[2] = { &jdk17, &jdk25 };
	struct child target, profiler;
	size_t tools = 0;
	FILE *f;

	(void)state;
	harness_require_root();
	for (size_t i = 0; i < 2; i++)
		tools += jfr_tool(jdks[i], tool[tools], sizeof(tool[tools]));
	assert_int_equal(harness_start_workload(&target, (char *[]){ workload, "-s", "5", "-g", go, NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)target.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-F", "199", "-d", "11", "-f", pprof,
									 "-f", jfr, NULL }),
			 0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	/* The phases begin now that samples are taken. */
	f = fopen(go, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	if (harness_wait_for(&target, "done", 30))
		fail_msg("phases did not finish: %s", target.buf);
	harness_stop_workload(&target);
	run((char *[]){ "convert", pprof, "-f", again, NULL });
	for (size_t r = 0; r < 2; r++) {
		const char *from = ranges[r][0], *to = ranges[r][1];
		char range[32];
		struct split s, rewritten;

		snprintf(range, sizeof(range), "%s s to %s s", from, to);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-o", "collapsed", "-f", out,
				NULL });
		s = split_of_collapsed(out);
		check_share("collapsed", range, s, r == 0);
		/* The times round-trip through pprof: the rewritten recording cuts the same. */
		run((char *[]){ "convert", again, "--from", (char *)from, "--to", (char *)to, "-o", "collapsed", "-f", out,
				NULL });
		rewritten = split_of_collapsed(out);
		assert_int_equal(rewritten.one, s.one);
		assert_int_equal(rewritten.two, s.two);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-o", "text", "--top", "100",
				"-f", out, NULL });
		check_share("text", range, split_of_text(out), r == 0);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-o", "pprof", "-f", out, NULL });
		run((char *[]){ "convert", out, "-o", "collapsed", "-f", out2, NULL });
		check_share("pprof, read back", range, split_of_collapsed(out2), r == 0);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-f", cut_jfr, NULL });
		for (size_t t = 0; t < tools; t++) {
			int64_t last_one, first_two;

			check_share(tool[t], range, split_of_jfr(tool[t], cut_jfr, &last_one, &first_two), r == 0);
		}
	}
	/* The whole recording's JFR events: phase_one's all before phase_two's. */
	for (size_t t = 0; t < tools; t++) {
		int64_t last_one, first_two;
		struct split s = split_of_jfr(tool[t], jfr, &last_one, &first_two);

		fprintf(stderr, "  %s: %" PRIu64 " phase_one samples, the last %.3f s before the first of %" PRIu64
			" phase_two\n", tool[t], s.one, (double)(first_two - last_one) / 1e9, s.two);
		assert_true(s.one >= 100 && s.two >= 100);
		assert_true(last_one < first_two);
	}
	if (!tools)
		fprintf(stderr, "  no JDK's jfr: the JFR files not read\n");
	unlink(go);
	unlink(pprof);
	unlink(jfr);
	unlink(again);
	unlink(out);
	unlink(out2);
	unlink(cut_jfr);
	rmdir(dir);
	free(go);
	free(pprof);
	free(jfr);
	free(again);
	free(out);
	free(out2);
	free(cut_jfr);
	free(dir);
	free(workload);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(phases_cut),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("time ranges: convert --from/--to in every output, JFR's times", tests,
					   NULL, NULL);
}
