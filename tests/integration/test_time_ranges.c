/*
 * Time ranges: phases (C) runs phase_one for 5 s, then phase_two for 5 s,
 * started as the profiler begins sampling; one recording of 11 s, as
 * pprof and as JFR.
 *
 *   - convert --from 1 --to 4 keeps phase_one, --from 6 --to 9 phase_two:
 *     at least 95% of the samples of the two functions in each range, in
 *     collapsed stacks, the text report, a pprof file cut and read back,
 *     a JFR file cut and read by the JDK's jfr;
 *   - the same ranges cut as OTLP, read here by the OTLP schema's own
 *     decoder: the samples' values;
 *   - pprof round-trips the times: the recording written again by convert
 *     cuts to exactly the counts the recording itself cuts to;
 *   - diff of the recording against itself, BEFORE cut to 1 s to 4 s by
 *     --base-from/--base-to and AFTER to 6 s to 9 s by --from/--to: each
 *     side's total is what convert cuts that range to;
 *   - the whole recording as OTLP: every timestamp of a phase_one sample
 *     precedes every phase_two's, and each is a time of day;
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
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

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

/*
 * An OTLP file's phase_one and phase_two samples (the values of the
 * profiles counting samples), and the latest timestamp of a phase_one
 * sample and the earliest of a phase_two one, ns since the epoch; every
 * timestamp at least *earliest.
 */
static struct split split_of_otlp(const char *path, uint64_t *last_one, uint64_t *first_two, uint64_t *earliest)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req;
	const Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d;
	FILE *f = fopen(path, "r");
	static uint8_t data[64 << 20];
	size_t len;
	struct split s = { 0, 0 };

	assert_non_null(f);
	len = fread(data, 1, sizeof(data), f);
	assert_true(len > 0 && len < sizeof(data));
	fclose(f);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(NULL, len,
														  data);
	assert_non_null(req);
	d = req->dictionary;
	*last_one = 0;
	*first_two = UINT64_MAX;
	*earliest = UINT64_MAX;
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__Profile *p =
			req->resource_profiles[r]->scope_profiles[0]->profiles[0];

		assert_string_equal(d->string_table[p->sample_type->type_strindex], "samples");
		for (size_t i = 0; i < p->n_samples; i++) {
			const Opentelemetry__Proto__Profiles__V1development__Sample *sm = p->samples[i];
			const Opentelemetry__Proto__Profiles__V1development__Stack *st = d->stack_table[sm->stack_index];
			int phase = 0;

			for (size_t k = 0; k < st->n_location_indices; k++) {
				const Opentelemetry__Proto__Profiles__V1development__Location *loc =
					d->location_table[st->location_indices[k]];
				const char *name;

				if (!loc->n_lines)
					continue;
				name = d->string_table[d->function_table[loc->lines[0]->function_index]->name_strindex];
				phase = !strcmp(name, "phase_one") ? 1 : !strcmp(name, "phase_two") ? 2 : phase;
			}
			/* One value per timestamp when the times are kept, else one in all. */
			for (size_t v = 0; v < sm->n_values; v++) {
				if (phase == 1)
					s.one += (uint64_t)sm->values[v];
				if (phase == 2)
					s.two += (uint64_t)sm->values[v];
			}
			for (size_t t = 0; t < sm->n_timestamps_unix_nano; t++) {
				uint64_t ts = sm->timestamps_unix_nano[t];

				*earliest = ts < *earliest ? ts : *earliest;
				if (phase == 1 && ts > *last_one)
					*last_one = ts;
				if (phase == 2 && ts < *first_two)
					*first_two = ts;
			}
		}
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	return s;
}

/* The count of all samples in collapsed stacks. */
static uint64_t total_of_collapsed(const char *path)
{
	struct collapsed c;
	uint64_t total;

	assert_int_equal(collapsed_load(path, &c), 0);
	total = c.total;
	collapsed_free(&c);
	return total;
}

/* The diff page's "before: N samples, ...; after: M samples, ..." line. */
static void totals_of_diff(const char *path, uint64_t *before, uint64_t *after)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, "before: ");
		unsigned long long b, a;

		if (at && sscanf(at, "before: %llu samples, %*[^;]; after: %llu samples", &b, &a) == 2) {
			*before = b;
			*after = a;
			found = true;
		}
	}
	fclose(f);
	if (!found)
		fail_msg("%s: no before/after totals", path);
}

/* The line at line (up to its end), after who; nothing when line is NULL. */
static void print_line(const char *who, const char *line)
{
	if (line)
		fprintf(stderr, "  %s: %.*s\n", who, (int)strcspn(line, "\n"), line);
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
	     *cut_jfr = harness_path(dir, "cut.jfr"), *otlp = harness_path(dir, "out.otlp"),
	     *diff = harness_path(dir, "diff.html");
	uint64_t totals[2], otlp_last_one, otlp_first_two, earliest, diff_before, diff_after;
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
	/* When the phases switched and ended, and what the profiler recorded: the clues if a range misses. */
	print_line("phases", strstr(target.buf, "switch "));
	print_line("phases", strstr(target.buf, "done "));
	print_line("profiler", strstr(profiler.buf, "jbpfprof: recorded "));
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
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-o", "otlp", "-f", otlp, NULL });
		check_share("OTLP", range, split_of_otlp(otlp, &otlp_last_one, &otlp_first_two, &earliest), r == 0);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-o", "collapsed", "-f", out,
				NULL });
		totals[r] = total_of_collapsed(out);
		run((char *[]){ "convert", pprof, "--from", (char *)from, "--to", (char *)to, "-f", cut_jfr, NULL });
		for (size_t t = 0; t < tools; t++) {
			int64_t last_one, first_two;

			check_share(tool[t], range, split_of_jfr(tool[t], cut_jfr, &last_one, &first_two), r == 0);
		}
	}
	/* Two ranges of one recording compared: each side is its own range's cut. */
	run((char *[]){ "diff", pprof, pprof, "--base-from", (char *)ranges[0][0], "--base-to", (char *)ranges[0][1],
			"--from", (char *)ranges[1][0], "--to", (char *)ranges[1][1], "-f", diff, NULL });
	totals_of_diff(diff, &diff_before, &diff_after);
	fprintf(stderr, "  diff: before (1 s to 4 s) %" PRIu64 " samples, after (6 s to 9 s) %" PRIu64 "\n", diff_before,
		diff_after);
	assert_int_equal(diff_before, totals[0]);
	assert_int_equal(diff_after, totals[1]);
	/* The whole recording as OTLP: phase_one's timestamps all before phase_two's, each a time of day (after 2001). */
	run((char *[]){ "convert", pprof, "-o", "otlp", "-f", otlp, NULL });
	{
		struct split s = split_of_otlp(otlp, &otlp_last_one, &otlp_first_two, &earliest);

		fprintf(stderr, "  OTLP: %" PRIu64 " phase_one samples, the last %.3f s before the first of %" PRIu64
			" phase_two\n", s.one, (double)(otlp_first_two - otlp_last_one) / 1e9, s.two);
		assert_true(s.one >= 100 && s.two >= 100);
		assert_true(otlp_last_one < otlp_first_two);
		assert_true(earliest > 1000000000ull * 1000000000ull);
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
	unlink(otlp);
	unlink(diff);
	rmdir(dir);
	free(go);
	free(pprof);
	free(jfr);
	free(again);
	free(out);
	free(out2);
	free(cut_jfr);
	free(otlp);
	free(diff);
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
