/*
 * Integration tests of pprof recordings and jbpfprof convert: one recording
 * written both as pprof and as collapsed stacks converts back to the same
 * collapsed stacks; `go tool pprof` (Debian's golang-go) reads our file and
 * finds the shares the workload measured; --include, --exclude, --state and
 * --reverse do what they say; bad input gives one line and exit 1. An OTLP
 * file written by the same recording, decoded with the code generated from
 * the vendored OpenTelemetry protos, holds the same stacks and counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/* The whole of a file, NUL-terminated; NULL if it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Runs `jbpfprof convert ARGS...`; returns its exit status, stderr in child->buf. */
static int convert(struct child *child, char *const args[])
{
	char *argv[32];
	size_t n = 0;

	argv[n++] = "convert";
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return harness_run_profiler(child, argv, 60);
}

/* One workload profiled once into collapsed stacks (r->file) and a pprof file (*pprof). */
static void record_both(struct profiled *r, const char *workload, char *const wargs[], char *const args[],
			char **pprof)
{
	char *all[24];
	size_t n = 0;
	char *dir = harness_tmpdir();

	*pprof = harness_path(dir, "rec.pb.gz");
	for (size_t i = 0; args[i] && n < 20; i++)
		all[n++] = args[i];
	all[n++] = "-f";
	all[n++] = *pprof;
	all[n] = NULL;
	harness_profile(r, workload, wargs, all, 1, 60);
	if (r->profiler_status != 0)
		fprintf(stderr, "  profiler said:\n%s\n", r->profiler.buf);
	assert_int_equal(r->profiler_status, 0);
	free(dir);
}

/* Removes a pprof file record_both made, and its directory. */
static void drop_pprof(char *pprof)
{
	char *slash = strrchr(pprof, '/');

	unlink(pprof);
	if (slash) {
		*slash = '\0';
		rmdir(pprof);
	}
	free(pprof);
}

/* Converts pprof with args into a fresh collapsed file and checks it equals expected byte for byte. */
static void check_converts_to(const char *pprof, char *const args[], const char *expected_path)
{
	char *dir = harness_tmpdir(), *out = harness_path(dir, "conv.collapsed");
	char *argv[24], *expected, *got;
	size_t n = 0, expected_len, got_len;
	struct child c;

	argv[n++] = (char *)pprof;
	for (size_t i = 0; args[i] && n < 20; i++)
		argv[n++] = args[i];
	argv[n++] = "-f";
	argv[n++] = out;
	argv[n] = NULL;
	assert_int_equal(convert(&c, argv), 0);
	expected = slurp(expected_path, &expected_len);
	got = slurp(out, &got_len);
	assert_non_null(expected);
	assert_non_null(got);
	fprintf(stderr, "  converted: %zu bytes, recorded: %zu bytes\n", got_len, expected_len);
	assert_true(expected_len > 0);
	assert_int_equal(got_len, expected_len);
	assert_memory_equal(got, expected, expected_len);
	free(expected);
	free(got);
	unlink(out);
	rmdir(dir);
	free(out);
	free(dir);
}

/* CPU: the collapsed stacks written by the recording and converted from its pprof file are equal. */
static void cpu_round_trip(void **state)
{
	struct profiled r;
	char *pprof;

	harness_require_root();
	record_both(&r, "cpu_split", (char *[]){ "-t", "2", NULL }, (char *[]){ "-d", "2", "-F", "499", NULL },
		    &pprof);
	assert_true(r.stacks.n > 3);
	check_converts_to(pprof, (char *[]){ NULL }, r.file);
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

/* The same with --threads, both when recording and when converting. */
static void threads_round_trip(void **state)
{
	struct profiled r;
	char *pprof;

	harness_require_root();
	record_both(&r, "cpu_split", (char *[]){ "-t", "2", NULL },
		    (char *[]){ "-d", "1", "-F", "499", "--threads", NULL }, &pprof);
	assert_true(r.stacks.n > 3);
	check_converts_to(pprof, (char *[]){ "--threads", NULL }, r.file);
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

/* Adds count to key's line in c (a table of distinct lines), adding it if new. */
static void tally(struct collapsed *c, const char *key, uint64_t count)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->stacks[i], key)) {
			c->counts[i] += count;
			c->total += count;
			return;
		}
	c->stacks = realloc(c->stacks, (c->n + 1) * sizeof(*c->stacks));
	c->counts = realloc(c->counts, (c->n + 1) * sizeof(*c->counts));
	assert_non_null(c->stacks);
	assert_non_null(c->counts);
	c->stacks[c->n] = strdup(key);
	assert_non_null(c->stacks[c->n]);
	c->counts[c->n++] = count;
	c->total += count;
}

/*
 * The OTLP file's samples (the first profile of each resource: samples,
 * count) as "TID;frame;...;frame" lines, root first, frames by their system
 * names (the frames' text); the workload's resource must name it by pid.
 */
static void otlp_stacks(const char *path, pid_t pid, struct collapsed *out)
{
	size_t len;
	char *data = slurp(path, &len);
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req;
	const Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d;
	bool named = false;

	assert_non_null(data);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, (const uint8_t *)data);
	assert_non_null(req);
	d = req->dictionary;
	memset(out, 0, sizeof(*out));
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Resource__V1__Resource *res = req->resource_profiles[r]->resource;
		const Opentelemetry__Proto__Profiles__V1development__Profile *p =
			req->resource_profiles[r]->scope_profiles[0]->profiles[0];

		for (size_t a = 0; res && a < res->n_attributes; a++)
			named |= !strcmp(res->attributes[a]->key, "process.pid") &&
				 res->attributes[a]->value->int_value == pid;
		assert_string_equal(d->string_table[p->sample_type->type_strindex], "samples");
		for (size_t i = 0; i < p->n_samples; i++) {
			const Opentelemetry__Proto__Profiles__V1development__Sample *s = p->samples[i];
			const Opentelemetry__Proto__Profiles__V1development__Stack *st = d->stack_table[s->stack_index];
			char *line = NULL;
			size_t line_len = 0;
			FILE *f = open_memstream(&line, &line_len);
			long long tid = -1;

			assert_non_null(f);
			for (size_t a = 0; a < s->n_attribute_indices; a++) {
				const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *kv =
					d->attribute_table[s->attribute_indices[a]];

				if (!strcmp(d->string_table[kv->key_strindex], "thread.id"))
					tid = kv->value->int_value;
			}
			fprintf(f, "%lld", tid);
			for (size_t k = st->n_location_indices; k-- > 0;) {
				const Opentelemetry__Proto__Profiles__V1development__Location *loc =
					d->location_table[st->location_indices[k]];

				fprintf(f, ";%s",
					d->string_table[d->function_table[loc->lines[0]->function_index]->system_name_strindex]);
			}
			assert_int_equal(fclose(f), 0);
			/* A sample's values: one for each of its timestamps, when it has times. */
			for (size_t v = 0; v < s->n_values; v++)
				tally(out, line, (uint64_t)s->values[v]);
			free(line);
		}
	}
	assert_true(named);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	free(data);
}

/* Collapsed lines "[name tid=N];frames COUNT" as "N;frames" (the thread frame first). */
static void by_tid(const struct collapsed *c, struct collapsed *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < c->n; i++) {
		const char *tid = strstr(c->stacks[i], " tid="), *rest = strstr(c->stacks[i], "];");
		char key[8192];

		assert_true(c->stacks[i][0] == '[' && tid && rest && tid < rest);
		snprintf(key, sizeof(key), "%lld;%s", atoll(tid + 5), rest + 2);
		tally(out, key, c->counts[i]);
	}
}

/* One recording to pprof and OTLP: the OTLP file holds the stacks and counts the pprof file gives. */
static void otlp_holds_what_pprof_holds(void **state)
{
	char *dir = harness_tmpdir(), *pprof = harness_path(dir, "rec.pb.gz"), *otlp = harness_path(dir, "rec.otlp");
	char *from_pprof = harness_path(dir, "pprof.collapsed");
	struct collapsed pprof_lines, a, b;
	struct profiled r;
	struct child c;

	harness_require_root();
	/* 4 s of CPU at 499 Hz: some 2,000 samples. */
	harness_profile_cpu(&r, "cpu_split", (char *[]){ "-t", "2", NULL },
			    (char *[]){ "-F", "499", "-f", pprof, "-f", otlp, NULL }, 1, 4000, 600);
	assert_int_equal(r.profiler_status, 0);
	assert_int_equal(convert(&c, (char *[]){ pprof, "--group-by", "none", "--threads", "--annotate", "-o",
						  "collapsed", "-f", from_pprof, NULL }),
			 0);
	assert_int_equal(collapsed_load(from_pprof, &pprof_lines), 0);
	by_tid(&pprof_lines, &a);
	otlp_stacks(otlp, r.workload.pid, &b);
	fprintf(stderr, "  pprof: %zu stacks, %" PRIu64 " samples; OTLP: %zu stacks, %" PRIu64 " samples\n", a.n,
		a.total, b.n, b.total);
	assert_true(a.total > 500);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.total, b.total);
	for (size_t i = 0; i < a.n; i++) {
		size_t j = 0;

		while (j < b.n && strcmp(a.stacks[i], b.stacks[j]))
			j++;
		if (j == b.n || a.counts[i] != b.counts[j])
			fail_msg("not the same in the OTLP file: %s (%" PRIu64 ")", a.stacks[i], a.counts[i]);
	}
	collapsed_free(&a);
	collapsed_free(&b);
	collapsed_free(&pprof_lines);
	unlink(pprof);
	unlink(otlp);
	unlink(from_pprof);
	free(pprof);
	free(otlp);
	free(from_pprof);
	harness_profiled_free(&r);
	rmdir(dir);
	free(dir);
}

/* Whether a collapsed line's last frame is frame. */
static int ends_with_frame(const char *stack, const char *frame)
{
	size_t n = strlen(stack), f = strlen(frame);

	return n > f && stack[n - f - 1] == ';' && !strcmp(stack + n - f, frame);
}

/*
 * Wall: the round trip holds, and --state running of the wall recording is
 * its [running] lines, nothing else: one recording serves both views.
 */
static void wall_round_trip_and_cpu_view(void **state)
{
	struct profiled r;
	struct collapsed running;
	char *pprof, *dir, *out;
	uint64_t expected = 0;
	struct child c;

	harness_require_root();
	record_both(&r, "offcpu", (char *[]){ "mix", NULL }, (char *[]){ "-e", "wall", "-d", "2", NULL }, &pprof);
	check_converts_to(pprof, (char *[]){ NULL }, r.file);

	dir = harness_tmpdir();
	out = harness_path(dir, "running.collapsed");
	assert_int_equal(convert(&c, (char *[]){ pprof, "--state", "running", "-f", out, NULL }), 0);
	assert_int_equal(collapsed_load(out, &running), 0);
	for (size_t i = 0; i < r.stacks.n; i++)
		if (ends_with_frame(r.stacks.stacks[i], "[running]"))
			expected += r.stacks.counts[i];
	fprintf(stderr, "  --state running: %zu stacks, %" PRIu64 " us; [running] in the recording: %" PRIu64 " us\n",
		running.n, running.total, expected);
	assert_true(expected > 0);
	assert_int_equal(running.total, expected);
	for (size_t i = 0; i < running.n; i++)
		assert_true(ends_with_frame(running.stacks[i], "[running]"));
	harness_output_free(&running, out, dir);
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

/* A collapsed line's frames in the other order. */
static char *reversed(const char *stack)
{
	size_t n = strlen(stack), used = 0;
	char *out = malloc(n + 1);
	const char *end = stack + n;

	assert_non_null(out);
	while (end > stack) {
		const char *start = end;

		while (start > stack && start[-1] != ';')
			start--;
		if (used)
			out[used++] = ';';
		memcpy(out + used, start, (size_t)(end - start));
		used += (size_t)(end - start);
		end = start > stack ? start - 1 : stack;
	}
	out[used] = '\0';
	return out;
}

/* --reverse gives every recorded stack leaf first, with its count. */
static void reverse_is_leaf_first(void **state)
{
	struct profiled r;
	struct collapsed rev;
	char *pprof, *dir, *out;
	struct child c;

	harness_require_root();
	record_both(&r, "cpu_split", (char *[]){ "-t", "2", NULL }, (char *[]){ "-d", "1", "-F", "499", NULL },
		    &pprof);
	dir = harness_tmpdir();
	out = harness_path(dir, "rev.collapsed");
	assert_int_equal(convert(&c, (char *[]){ pprof, "--reverse", "-f", out, NULL }), 0);
	assert_int_equal(collapsed_load(out, &rev), 0);
	assert_int_equal(rev.n, r.stacks.n);
	assert_int_equal(rev.total, r.stacks.total);
	for (size_t i = 0; i < r.stacks.n; i++) {
		char *want = reversed(r.stacks.stacks[i]);
		int found = 0;

		for (size_t j = 0; j < rev.n && !found; j++)
			found = !strcmp(rev.stacks[j], want) && rev.counts[j] == r.stacks.counts[i];
		if (!found)
			fprintf(stderr, "  not in the reversed profile: %s %" PRIu64 "\n", want, r.stacks.counts[i]);
		assert_true(found);
		free(want);
	}
	harness_output_free(&rev, out, dir);
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

/* Whether some frame of the stack matches re. */
static int has_frame_matching(const char *stack, const regex_t *re)
{
	char *copy = strdup(stack), *save = NULL;
	int found = 0;

	assert_non_null(copy);
	for (char *f = strtok_r(copy, ";", &save); f && !found; f = strtok_r(NULL, ";", &save))
		found = !regexec(re, f, 0, NULL, 0);
	free(copy);
	return found;
}

/* --include and --exclude when recording, and when converting the same recording. */
static void include_and_exclude(void **state)
{
	struct profiled inc, exc;
	struct collapsed conv;
	char *pprof, *dir, *out;
	uint64_t with = 0;
	struct child c;
	regex_t re;

	harness_require_root();
	assert_int_equal(regcomp(&re, "^share_(50|20)$", REG_EXTENDED | REG_NOSUB), 0);
	harness_profile(&inc, "cpu_split", (char *[]){ "-t", "2", NULL },
			(char *[]){ "-d", "1", "-F", "499", "--include", "^share_(50|20)$", NULL }, 1, 60);
	assert_int_equal(inc.profiler_status, 0);
	assert_true(inc.stacks.n > 0);
	for (size_t i = 0; i < inc.stacks.n; i++)
		assert_true(has_frame_matching(inc.stacks.stacks[i], &re));

	record_both(&exc, "cpu_split", (char *[]){ "-t", "2", NULL },
		    (char *[]){ "-d", "1", "-F", "499", "--exclude", "^share_(50|20)$", NULL }, &pprof);
	assert_true(exc.stacks.n > 0);
	assert_true(collapsed_count_frame(&exc.stacks, "share_30") > 0);
	for (size_t i = 0; i < exc.stacks.n; i++)
		assert_false(has_frame_matching(exc.stacks.stacks[i], &re));
	/* The pprof file of that recording holds only what the filter kept. */
	check_converts_to(pprof, (char *[]){ NULL }, exc.file);
	dir = harness_tmpdir();
	out = harness_path(dir, "inc.collapsed");
	assert_int_equal(convert(&c, (char *[]){ pprof, "--include", "share_30", "-f", out, NULL }), 0);
	assert_int_equal(collapsed_load(out, &conv), 0);
	for (size_t i = 0; i < exc.stacks.n; i++)
		if (strstr(exc.stacks.stacks[i], "share_30"))
			with += exc.stacks.counts[i];
	assert_int_equal(conv.total, with);
	harness_output_free(&conv, out, dir);
	regfree(&re);
	drop_pprof(pprof);
	harness_profiled_free(&inc);
	harness_profiled_free(&exc);
}

/* The cumulative percentage `go tool pprof -top` prints for function name, or -1. */
static double top_cum_percent(const char *top, const char *name)
{
	for (const char *line = top; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char flat[32], flat_pct[32], sum_pct[32], cum[32], cum_pct[32], fn[256];
		double pct;

		if (sscanf(line, "%31s %31s %31s %31s %31s %255s", flat, flat_pct, sum_pct, cum, cum_pct, fn) != 6)
			continue;
		if (strcmp(fn, name) || sscanf(cum_pct, "%lf%%", &pct) != 1)
			continue;
		return pct;
	}
	return -1.0;
}

/*
 * go tool pprof reads our file: -top shows share_50, share_30 and share_20
 * (cumulative: the samples inside them are often in the clock_gettime they
 * call) in the proportions the workload measured of its own CPU time,
 * within 5 points (about 1200 samples: 3.5 standard deviations).
 */
static void go_pprof_reads_the_shares(void **state)
{
	static const char *const names[3] = { "share_50", "share_30", "share_20" };
	char *go = "/usr/bin/go", *argv[] = { go, "tool", "pprof", "-top", "-nodecount=40", NULL, NULL };
	struct profiled r;
	struct child c;
	double cum[3], cum_sum = 0, truth[3], truth_sum = 0;
	char *pprof;

	harness_require_root();
	if (access(go, X_OK)) {
		fprintf(stderr, "  %s is missing: install Debian's golang-go (install-deps.sh does)\n", go);
		fail();
	}
	record_both(&r, "cpu_split", (char *[]){ "-t", "2", NULL }, (char *[]){ "-d", "3", "-F", "199", NULL }, &pprof);
	argv[5] = pprof;
	assert_int_equal(harness_start_command(&c, argv, 1), 0);
	assert_int_equal(harness_finish(&c, 120), 0);
	fprintf(stderr, "%s", c.buf);
	for (int i = 0; i < 3; i++) {
		cum[i] = top_cum_percent(c.buf, names[i]);
		truth[i] = (double)harness_truth(&r.workload, names[i]);
		assert_true(cum[i] > 0);
		assert_true(truth[i] > 0);
		cum_sum += cum[i];
		truth_sum += truth[i];
	}
	for (int i = 0; i < 3; i++) {
		double got = 100.0 * cum[i] / cum_sum, want = 100.0 * truth[i] / truth_sum;

		fprintf(stderr, "  %s: %.1f%% of the three in go tool pprof, %.1f%% measured by the workload\n",
			names[i], got, want);
		assert_true(fabs(got - want) <= 5.0);
	}
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

/*
 * diff: a page comparing a recording with one made without share_50. The
 * page is a diff page; comparing a CPU recording with a wall one, or a
 * missing file, is one line and exit 1. (The page's colours are checked in
 * Chromium, tests/browser.)
 */
static void diff_draws_a_page(void **state)
{
	struct profiled all, without, wall;
	char *before, *after, *walled, *dir = harness_tmpdir(), *page = harness_path(dir, "diff.html"), *html;
	struct child c;

	harness_require_root();
	record_both(&all, "cpu_split", (char *[]){ "-t", "2", NULL }, (char *[]){ "-d", "1", "-F", "499", NULL }, &before);
	record_both(&without, "cpu_split", (char *[]){ "-t", "2", NULL },
		    (char *[]){ "-d", "1", "-F", "499", "--exclude", "^share_50$", NULL }, &after);
	record_both(&wall, "offcpu", (char *[]){ "mix", NULL }, (char *[]){ "-e", "wall", "-d", "1", NULL }, &walled);
	assert_int_equal(harness_run_profiler(&c, (char *[]){ "diff", before, after, "-f", page, NULL }, 60), 0);
	html = slurp(page, NULL);
	assert_non_null(html);
	assert_non_null(strstr(html, "\"diff\":true"));
	assert_non_null(strstr(html, "share_50"));   /* gone from AFTER, still named */
	free(html);
	assert_int_equal(harness_run_profiler(&c, (char *[]){ "diff", before, walled, "-f", page, NULL }, 60), 1);
	assert_non_null(strstr(c.buf, "compare recordings of one kind"));
	assert_int_equal(harness_run_profiler(&c, (char *[]){ "diff", before, "/nonexistent.pb.gz", "-f", page, NULL },
					      60), 1);
	assert_non_null(strstr(c.buf, "No such file"));
	unlink(page);
	rmdir(dir);
	free(page);
	free(dir);
	drop_pprof(before);
	drop_pprof(after);
	drop_pprof(walled);
	harness_profiled_free(&all);
	harness_profiled_free(&without);
	harness_profiled_free(&wall);
}

/* Exit status 1 and one line, "jbpfprof convert: FILE: reason", containing reason_part. */
static int rejects(const char *path, const char *reason_part)
{
	struct child c;
	int status = convert(&c, (char *[]){ (char *)path, "-o", "collapsed", "-f", "/dev/null", NULL });
	size_t lines = 0;

	for (const char *p = c.buf; *p; p++)
		lines += *p == '\n';
	if (status != 1 || lines != 1 || !strstr(c.buf, "jbpfprof convert: ") || !strstr(c.buf, reason_part)) {
		fprintf(stderr, "  %s: expected exit 1 and one line with \"%s\"; got %d and:\n%s", path, reason_part,
			status, c.buf);
		return 0;
	}
	fprintf(stderr, "  %s", c.buf);
	return 1;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* Not a profile, an empty file, a truncated gzip, a corrupted one, a directory: one clear line each. */
static void convert_rejects_bad_input(void **state)
{
	struct profiled r;
	char *pprof, *dir = harness_tmpdir(), *text = harness_path(dir, "text.pb.gz"),
	     *empty = harness_path(dir, "empty.pb.gz"), *cut = harness_path(dir, "cut.pb.gz"),
	     *flipped = harness_path(dir, "flipped.pb.gz");
	char *data;
	size_t len;
	int ok = 1;

	harness_require_root();
	record_both(&r, "cpu_split", (char *[]){ NULL }, (char *[]){ "-d", "1", NULL }, &pprof);
	data = slurp(pprof, &len);
	assert_non_null(data);
	assert_true(len > 100);
	write_file(text, "root;main 12\n", 13);
	write_file(empty, "", 0);
	write_file(cut, data, len / 2);
	data[len / 2] ^= 0x55;
	write_file(flipped, data, len);
	ok &= rejects(text, "not a pprof profile");
	ok &= rejects(empty, "empty file");
	ok &= rejects(cut, "truncated gzip data");
	ok &= rejects(flipped, "gzip");
	ok &= rejects(dir, "not a regular file");
	ok &= rejects("/nonexistent/rec.pb.gz", "No such file");
	assert_true(ok);
	free(data);
	unlink(text);
	unlink(empty);
	unlink(cut);
	unlink(flipped);
	rmdir(dir);
	free(text);
	free(empty);
	free(cut);
	free(flipped);
	free(dir);
	drop_pprof(pprof);
	harness_profiled_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(cpu_round_trip),
		HARNESS_TEST(threads_round_trip),
		HARNESS_TEST(wall_round_trip_and_cpu_view),
		HARNESS_TEST(reverse_is_leaf_first),
		HARNESS_TEST(include_and_exclude),
		HARNESS_TEST(go_pprof_reads_the_shares),
		HARNESS_TEST(otlp_holds_what_pprof_holds),
		HARNESS_TEST(diff_draws_a_page),
		HARNESS_TEST(convert_rejects_bad_input),
	};

	harness_filter_tests();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
