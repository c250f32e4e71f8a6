/*
 * --lines and the lines pprof and JFR keep, end to end, on JDK 17 and JDK
 * 25, interpreted (-Xint) and compiled: LineLoops spends its time in two
 * loops, alpha's and beta's, whose lines the test reads from the
 * workload's source (tests/workloads/java/LineLoops.java, or
 * $JAVA_SOURCES): the lines from "loop-begin NAME" to "loop-end NAME".
 * One recording, written three ways:
 *
 *  - collapsed stacks with --lines: of the samples whose innermost
 *    LineLoops frame is alpha (beta), at least 95% name a line of its loop;
 *  - pprof, read back by jbpfprof convert --lines (the project's reader),
 *    the same; and by `go tool pprof -lines` where Go is installed: the
 *    same share of alpha's (beta's) own time on its loop's lines, in the
 *    file LineLoops.java (Function.filename);
 *  - JFR, read by the JDK's own jfr: of the events whose leaf frame is
 *    alpha (beta), at least 95% on its loop's lines.
 *
 * Each method has at least 100 samples (6 s at 499 Hz, on a loaded machine
 * too) and almost all of its time in its loop (a call runs some
 * milliseconds of it), so the expected share is over 99%; 95% is the bound
 * the feature promises, more than three standard errors of a 99% share
 * below it at 100 samples (3.0 points).
 */
#include "harness.h"
#include "jvm.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR_METHODS 2
static const char *const methods[NR_METHODS] = { "alpha", "beta" };
#define MIN_SAMPLES 100
#define MIN_SHARE 95.0

/* A hot loop's lines, from the workload's source. */
struct loop {
	int first, last;
};

/* The lines of each method's loop, read from LineLoops.java; fails the test if they are not marked. */
static void read_loops(struct loop loops[NR_METHODS])
{
	char *path, line[512];
	int n = 0;
	FILE *f;

	if (asprintf(&path, "%s/LineLoops.java", harness_getenv("JAVA_SOURCES", "tests/workloads/java")) < 0)
		fail();
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s: set JAVA_SOURCES to tests/workloads/java", path);
	memset(loops, 0, NR_METHODS * sizeof(*loops));
	while (fgets(line, sizeof(line), f)) {
		n++;
		for (int m = 0; m < NR_METHODS; m++) {
			char begin[64], end[64];

			snprintf(begin, sizeof(begin), "loop-begin %s\n", methods[m]);
			snprintf(end, sizeof(end), "loop-end %s\n", methods[m]);
			if (strstr(line, begin))
				loops[m].first = n;
			if (strstr(line, end))
				loops[m].last = n;
		}
	}
	fclose(f);
	free(path);
	for (int m = 0; m < NR_METHODS; m++)
		if (!loops[m].first || loops[m].last <= loops[m].first)
			fail_msg("LineLoops.java does not mark %s's loop", methods[m]);
}

/* Samples of each method, and of those on its loop's lines. */
struct shares {
	uint64_t total[NR_METHODS], in_loop[NR_METHODS];
};

/* Counts a frame "LineLoops.NAME:LINE" (or "LineLoops.NAME" LINE given apart) of count samples. */
static bool count_frame(struct shares *s, const struct loop loops[NR_METHODS], const char *method, int line,
			uint64_t count)
{
	for (int m = 0; m < NR_METHODS; m++)
		if (!strcmp(method, methods[m])) {
			s->total[m] += count;
			s->in_loop[m] += line >= loops[m].first && line <= loops[m].last ? count : 0;
			return true;
		}
	return false;
}

/* Of collapsed stacks with --lines: each stack's innermost LineLoops frame. */
static void shares_of_collapsed(const struct collapsed *c, const struct loop loops[NR_METHODS], struct shares *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		for (int k = fr.n - 1; k >= 0; k--) {
			char method[64];
			int line = 0;

			if (strncmp(fr.f[k], "LineLoops.", 10))
				continue;
			/* "LineLoops.alpha:23"; a frame without a line counts as off the loop. */
			if (sscanf(fr.f[k] + 10, "%63[^:;]:%d", method, &line) < 1)
				break;
			count_frame(s, loops, method, line, c->counts[i]);
			break;
		}
		free(fr.buf);
	}
}

static void assert_shares(const char *what, const char *mode, const struct jdk *jdk, const struct shares *s,
			  const struct loop loops[NR_METHODS])
{
	for (int m = 0; m < NR_METHODS; m++) {
		double share = harness_percent(s->in_loop[m], s->total[m]);

		fprintf(stderr, "  %s %s, %s: %s: %llu samples, %.1f%% on lines %d-%d\n", jdk->name, mode, what,
			methods[m], (unsigned long long)s->total[m], share, loops[m].first, loops[m].last);
		assert_true(s->total[m] >= MIN_SAMPLES);
		assert_true(share >= MIN_SHARE);
	}
}

/* `go tool pprof -lines -top` of file: each method's own time by line ("LineLoops.alpha LineLoops.java:23"). */
static void shares_of_go_pprof(const char *file, const struct loop loops[NR_METHODS], struct shares *s)
{
	char cmd[1024], line[1024];
	FILE *pipe;

	memset(s, 0, sizeof(*s));
	snprintf(cmd, sizeof(cmd), "go tool pprof -lines -top -nodecount=1000 -unit=ns '%s' 2>/dev/null", file);
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	while (fgets(line, sizeof(line), pipe)) {
		char flat[64], method[64];
		int at = 0, number;
		const char *name;

		/* "  216430000ns 66.67% 66.67%  216430000ns 66.67%  LineLoops.alpha LineLoops.java:22" */
		if (sscanf(line, " %63s %*s %*s %*s %*s %n", flat, &at) < 1 || !at)
			continue;
		name = line + at;
		/* Nanoseconds as samples of the recording's 499 Hz, so the sample bound holds as elsewhere. */
		if (sscanf(name, "LineLoops.%63s LineLoops.java:%d", method, &number) == 2)
			count_frame(s, loops, method, number, strtoull(flat, NULL, 10) * 499 / 1000000000ull);
	}
	assert_int_equal(pclose(pipe), 0);
}

/* The jfr tool beside a JDK's java launcher, into buf. */
static void jfr_tool(const struct jdk *jdk, char *buf, size_t size)
{
	const char *java = jdk_java_path(jdk), *slash = strrchr(java, '/');

	snprintf(buf, size, "%.*s/jfr", slash ? (int)(slash - java) : 0, java);
}

/* `jfr print` of file: each event's leaf frame, "LineLoops.alpha() line: 23". */
static void shares_of_jfr(const struct jdk *jdk, const char *file, const struct loop loops[NR_METHODS],
			  struct shares *s)
{
	char tool[512], cmd[1024], line[1024];
	bool leaf = false;
	FILE *pipe;

	memset(s, 0, sizeof(*s));
	jfr_tool(jdk, tool, sizeof(tool));
	snprintf(cmd, sizeof(cmd), "'%s' print --events jdk.ExecutionSample '%s'", tool, file);
	pipe = popen(cmd, "r");
	assert_non_null(pipe);
	while (fgets(line, sizeof(line), pipe)) {
		char method[64];
		int number = 0;

		if (strstr(line, "stackTrace = [")) {
			leaf = true;
			continue;
		}
		if (!leaf)
			continue;
		leaf = false;
		if (sscanf(line, " LineLoops.%63[^(]() line: %d", method, &number) >= 1)
			count_frame(s, loops, method, number, 1);
	}
	assert_int_equal(pclose(pipe), 0);
}

static bool have_go(void)
{
	return system("go version >/dev/null 2>&1") == 0;
}

static void lines_of_loops(const struct jdk *jdk, const char *mode, char *const jvm_opts[])
{
	struct loop loops[NR_METHODS];
	struct collapsed stacks, converted;
	struct child profiler, convert;
	struct shares s;
	struct jvm jvm;
	char pid[16], *collapsed, *pprof, *jfr, *back;

	read_loops(loops);
	jvm_start_opts(&jvm, jdk, jvm_opts, "LineLoops", NULL);
	collapsed = harness_path(jvm.dir, "lines.collapsed");
	pprof = harness_path(jvm.dir, "lines.pb.gz");
	jfr = harness_path(jvm.dir, "lines.jfr");
	back = harness_path(jvm.dir, "back.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	if (harness_run_profiler(&profiler, (char *[]){ "-p", pid, "-d", "6", "-F", "499", "--lines", "-f", collapsed,
							 "-f", pprof, "-f", jfr, NULL },
				 60)) {
		fprintf(stderr, "the profiler failed; its stderr:\n%s\n", profiler.buf);
		fail();
	}
	/* Read back by the project's reader, before the JVM's directory goes. */
	if (harness_run_profiler(&convert, (char *[]){ "convert", pprof, "--lines", "-o", "collapsed", "-f", back, NULL },
				 60)) {
		fprintf(stderr, "convert failed: %s\n", convert.buf);
		fail();
	}
	assert_int_equal(collapsed_load(collapsed, &stacks), 0);
	shares_of_collapsed(&stacks, loops, &s);
	assert_shares("collapsed --lines", mode, jdk, &s, loops);
	assert_int_equal(collapsed_load(back, &converted), 0);
	shares_of_collapsed(&converted, loops, &s);
	assert_shares("pprof, convert --lines", mode, jdk, &s, loops);
	if (have_go()) {
		shares_of_go_pprof(pprof, loops, &s);
		assert_shares("go tool pprof -lines", mode, jdk, &s, loops);
	} else {
		fprintf(stderr, "  no Go: pprof checked by jbpfprof convert alone\n");
	}
	shares_of_jfr(jdk, jfr, loops, &s);
	assert_shares("jfr print", mode, jdk, &s, loops);
	jvm_stop(&jvm);
	collapsed_free(&stacks);
	collapsed_free(&converted);
	free(collapsed);
	free(pprof);
	free(jfr);
	free(back);
}

static void compiled(void **state)
{
	jvm_require(*state, "LineLoops");
	lines_of_loops(*state, "compiled", NULL);
}

static void interpreted(void **state)
{
	jvm_require(*state, "LineLoops");
	lines_of_loops(*state, "-Xint", (char *[]){ "-Xint", NULL });
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }
#define JDK_TESTS(f) JDK_TEST(f, jdk17), JDK_TEST(f, jdk25)

int main(void)
{
	const struct CMUnitTest tests[] = {
		JDK_TESTS(compiled),
		JDK_TESTS(interpreted),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("lines", tests, NULL, NULL);
}
