/*
 * flamegraph_pages DIR: writes the flame graph pages the browser tests
 * open, and what each page must show, into DIR (which must exist).
 *
 * Each page is written by the project's own writers (output__flamegraph_write
 * or output__flamegraph_diff_write) from a profile built here, one page per
 * check of test_flamegraph_page.mjs, named after it. DIR/expected.json holds,
 * under the same check names, the page's file name and the texts and
 * numbers the page must show, computed here from the same profiles: the
 * browser test only drives the page and compares, so every number it checks
 * comes from C, not from the page's own JavaScript.
 *
 * Exits 0 when every page and expected.json are written; otherwise 1, with
 * the reason on stderr (the browser test then fails each check with it).
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "output/output.h"
#include "profile/profile.h"

#define MAX_DEPTH 32   /* deeper than any stack built here */

/* A JSON writer just big enough for expected.json: nesting is written by the caller. */
struct emitter {
	FILE *out;
	bool first;   /* no member written yet in the innermost object or array */
};

static const char *dir;   /* where the pages go: argv[1] */

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("flamegraph_pages: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* s as a JSON string: quotes, backslashes and control bytes escaped, UTF-8 as it is. */
static void emit_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

/* The comma and key before a member; key is NULL inside an array. */
static void emit_key(struct emitter *e, const char *key)
{
	if (!e->first)
		fputc(',', e->out);
	e->first = false;
	fputc('\n', e->out);
	if (key) {
		emit_quoted(e->out, key);
		fputc(':', e->out);
	}
}

static void emit_open(struct emitter *e, const char *key, char bracket)
{
	emit_key(e, key);
	fputc(bracket, e->out);
	e->first = true;
}

static void emit_close(struct emitter *e, char bracket)
{
	fputc(bracket, e->out);
	e->first = false;
}

static void emit_string(struct emitter *e, const char *key, const char *value)
{
	emit_key(e, key);
	emit_quoted(e->out, value);
}

static void emit_u64(struct emitter *e, const char *key, uint64_t value)
{
	emit_key(e, key);
	fprintf(e->out, "%" PRIu64, value);
}

/* Opens one check's object, naming the page it opens. */
static void emit_check(struct emitter *e, const char *check, const char *page)
{
	emit_open(e, check, '{');
	emit_string(e, "page", page);
}

/* Adds count to the stack given as (name, kind) pairs, root first, ending with NULL. */
/*
 * Adds a stack of count, given root first as (name, kind) pairs ending at
 * a NULL name; a thread frame's pair is followed by its tid (int64_t), a
 * state frame's by its enum jbpf_state (int) and its name is not used.
 */
static uint32_t add(struct profile *p, uint64_t count, ...)
{
	uint32_t frames[MAX_DEPTH], index;
	size_t depth = 0;
	const char *name;
	va_list ap;

	va_start(ap, count);
	while ((name = va_arg(ap, const char *))) {
		enum frame_kind kind = (enum frame_kind)va_arg(ap, int);
		int64_t id;

		if (kind == FRAME_KIND_THREAD)
			id = profile__intern_thread(p, name, va_arg(ap, int64_t));
		else if (kind == FRAME_KIND_STATE)
			id = profile__intern_state(p, (unsigned)va_arg(ap, int));
		else
			id = profile__intern(p, name, kind);
		if (id < 0 || depth == MAX_DEPTH)
			die("cannot add frame %s", name);
		frames[depth++] = (uint32_t)id;
	}
	va_end(ap);
	if (profile__add_indexed(p, frames, depth, count, &index))
		die("cannot add a stack of %zu frames", depth);
	return index;
}

static struct profile *new_profile(void)
{
	struct profile *p = profile__new(NULL);

	if (!p)
		die("out of memory");
	return p;
}

/* Writes DIR/file: a diff page when before is not NULL, else a plain one. */
static void write_page(const char *file, const struct profile *before, const struct profile *after,
		       const struct output_meta *meta)
{
	char path[4096];
	FILE *out;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	out = fopen(path, "w");
	if (!out)
		die("%s: %s", path, strerror(errno));
	err = before ? output__flamegraph_diff_write(before, after, meta, out) : output__flamegraph_write(after, meta, out);
	if (fclose(out) || err)
		die("%s: the writer failed", path);
}

/* The page's number formats: en-US grouping, fixed decimals. */
static const char *count_text(uint64_t v, char *buf)
{
	char digits[32];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v), w = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[w++] = ',';
		buf[w++] = digits[i];
	}
	buf[w] = '\0';
	return buf;
}

static const char *percent_text(uint64_t part, uint64_t whole, int digits, char *buf)
{
	sprintf(buf, "%.*f%%", digits, whole ? 100.0 * (double)part / (double)whole : 0.0);
	return buf;
}

/* Total of the stacks with a frame whose name the extended regular expression matches. */
static uint64_t matching_count(const struct profile *p, const char *pattern)
{
	uint64_t sum = 0;
	regex_t re;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB))
		die("bad pattern %s", pattern);
	for (size_t i = 0; i < profile__stack_count(p); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);

		for (size_t d = 0; d < depth; d++) {
			if (!regexec(&re, profile__frame_name(p, frames[d]), 0, NULL, 0)) {
				sum += count;
				break;
			}
		}
	}
	regfree(&re);
	return sum;
}

/* Total of the stacks that pass through a frame named name. */
static uint64_t count_through(const struct profile *p, const char *name)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < profile__stack_count(p); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);

		for (size_t d = 0; d < depth; d++) {
			if (!strcmp(profile__frame_name(p, frames[d]), name)) {
				sum += count;
				break;
			}
		}
	}
	return sum;
}

/* The CPU profile most checks draw: a few functions, one of them reached twice. */
static struct profile *sample_profile(void)
{
	struct profile *p = new_profile();

	add(p, 37, "main", FRAME_KIND_NATIVE, "parse", FRAME_KIND_JAVA, "read_[k]", FRAME_KIND_KERNEL, NULL);
	add(p, 120, "main", FRAME_KIND_NATIVE, "parse", FRAME_KIND_JAVA, "lex", FRAME_KIND_JAVA, NULL);
	add(p, 55, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "lock_wait", FRAME_KIND_NATIVE, NULL);
	add(p, 800, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "hash", FRAME_KIND_JIT, NULL);
	add(p, 90, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "parse", FRAME_KIND_JAVA, NULL);
	add(p, 211, "main", FRAME_KIND_NATIVE, "io_wait", FRAME_KIND_NATIVE, NULL);
	return p;
}

/* The title, and every frame's name: each must be drawn. */
static void page_loads_without_errors(struct emitter *e)
{
	struct profile *p = sample_profile();
	struct output_meta meta = { .title = "CPU profile of pid 42", .duration_s = 10, .frequency_hz = 99 };

	write_page("plain.html", NULL, p, &meta);
	emit_check(e, __func__, "plain.html");
	emit_string(e, "title", meta.title);
	emit_open(e, "frames", '[');
	for (size_t f = 0; f < profile__frame_count(p); f++)
		emit_string(e, NULL, profile__frame_name(p, (uint32_t)f));
	emit_close(e, ']');
	emit_close(e, '}');
	profile__free(p);
}

/* For each pattern: the samples it matches, of how many, and the counter's text. */
static void search_counts_matching_samples(struct emitter *e)
{
	static const char *patterns[] = { "parse|wait", "_\\[k\\]$", "^l" };
	struct profile *p = sample_profile();
	char text[256], num[32], pct[32];

	write_page("search.html", NULL, p, NULL);
	emit_check(e, __func__, "search.html");
	emit_u64(e, "total", profile__total(p));
	emit_open(e, "searches", '[');
	for (size_t i = 0; i < sizeof(patterns) / sizeof(*patterns); i++) {
		uint64_t matched = matching_count(p, patterns[i]);

		snprintf(text, sizeof(text), "Matched: %s (%s samples)", percent_text(matched, profile__total(p), 1, pct),
			 count_text(matched, num));
		emit_open(e, NULL, '{');
		emit_string(e, "pattern", patterns[i]);
		emit_u64(e, "matched", matched);
		emit_string(e, "text", text);
		emit_close(e, '}');
	}
	emit_close(e, ']');
	emit_close(e, '}');
	profile__free(p);
}

static void click_zooms_and_reset_returns(struct emitter *e)
{
	struct profile *p = sample_profile();
	char text[256], pct[32];

	write_page("zoom.html", NULL, p, NULL);
	snprintf(text, sizeof(text), "Zoomed to compute (%s of total)",
		 percent_text(count_through(p, "compute"), profile__total(p), 2, pct));
	emit_check(e, __func__, "zoom.html");
	emit_string(e, "zoominfo", text);
	emit_close(e, '}');
	profile__free(p);
}

static void icicle_toggle_puts_the_root_on_top(struct emitter *e)
{
	struct profile *p = sample_profile();

	write_page("icicle.html", NULL, p, NULL);
	emit_check(e, __func__, "icicle.html");
	emit_close(e, '}');
	profile__free(p);
}

#define SCRIPT_NAME "<script>alert(1)</script>"
#define BREAKOUT_NAME "</script>\"'><img src=x onerror=alert(2)>"

static void hostile_names_are_shown_as_text(struct emitter *e)
{
	struct profile *p = new_profile();
	struct output_meta meta = { .title = "<script>alert(3)</script>", .summary = "<img src=y onerror=alert(4)>" };

	add(p, 40, "main", FRAME_KIND_NATIVE, SCRIPT_NAME, FRAME_KIND_NATIVE, NULL);
	add(p, 60, "main", FRAME_KIND_NATIVE, BREAKOUT_NAME, FRAME_KIND_JIT, "leaf", FRAME_KIND_NATIVE, NULL);
	write_page("hostile.html", NULL, p, &meta);
	emit_check(e, __func__, "hostile.html");
	emit_string(e, "title", meta.title);
	emit_open(e, "names", '[');
	emit_string(e, NULL, SCRIPT_NAME);
	emit_string(e, NULL, BREAKOUT_NAME);
	emit_close(e, ']');
	emit_close(e, '}');
	profile__free(p);
}

/* What the tooltips and the diff line say of grow and gone, from both totals. */
static void diff_page_colours_by_change_of_share(struct emitter *e)
{
	struct profile *before = new_profile(), *after = new_profile();
	struct output_meta meta = { .title = "after against before" };
	char text[512], a[32], b[32], pa[32], pb[32];
	uint64_t bt, at;

	/* Shares of each total: grow 10% -> 50%, shrink 50% -> 20%, same 20% -> 20%, gone 20% -> none. */
	add(before, 10, "main", FRAME_KIND_NATIVE, "grow", FRAME_KIND_NATIVE, NULL);
	add(before, 50, "main", FRAME_KIND_NATIVE, "shrink", FRAME_KIND_NATIVE, NULL);
	add(before, 20, "main", FRAME_KIND_NATIVE, "same", FRAME_KIND_NATIVE, NULL);
	add(before, 20, "main", FRAME_KIND_NATIVE, "gone", FRAME_KIND_NATIVE, NULL);
	add(after, 100, "main", FRAME_KIND_NATIVE, "grow", FRAME_KIND_NATIVE, NULL);
	add(after, 40, "main", FRAME_KIND_NATIVE, "shrink", FRAME_KIND_NATIVE, NULL);
	add(after, 40, "main", FRAME_KIND_NATIVE, "same", FRAME_KIND_NATIVE, NULL);
	add(after, 20, "main", FRAME_KIND_NATIVE, "new", FRAME_KIND_NATIVE, NULL);
	bt = profile__total(before);
	at = profile__total(after);
	write_page("diff.html", before, after, &meta);
	emit_check(e, __func__, "diff.html");

	emit_open(e, "grow_tooltip", '[');
	snprintf(text, sizeof(text), "before: %s samples (%s) \xe2\x86\x92 after: %s samples (%s)",
		 count_text(count_through(before, "grow"), b), percent_text(count_through(before, "grow"), bt, 2, pb),
		 count_text(count_through(after, "grow"), a), percent_text(count_through(after, "grow"), at, 2, pa));
	emit_string(e, NULL, text);
	snprintf(text, sizeof(text), "change: +%.2f points of total",
		 100.0 * ((double)count_through(after, "grow") / (double)at -
			  (double)count_through(before, "grow") / (double)bt));
	emit_string(e, NULL, text);
	emit_close(e, ']');

	snprintf(text, sizeof(text), "only in before, below this frame: %s samples (%s of before)",
		 count_text(count_through(before, "gone"), b), percent_text(count_through(before, "gone"), bt, 2, pb));
	emit_string(e, "main_tooltip", text);

	emit_open(e, "diffinfo", '[');
	snprintf(text, sizeof(text), "Only in before: %s of before (%s samples)",
		 percent_text(count_through(before, "gone"), bt, 2, pb), count_text(count_through(before, "gone"), b));
	emit_string(e, NULL, text);
	emit_string(e, NULL, "main; gone");
	emit_close(e, ']');
	emit_close(e, '}');
	profile__free(before);
	profile__free(after);
}

/* The two threads of the states page: their frames as shown, and as add takes them. */
#define WORKER1 "[worker-1 tid=101]"
#define WORKER2 "[worker-2 tid=102]"
#define ADD_WORKER1 "worker-1", FRAME_KIND_THREAD, (int64_t)101
#define ADD_WORKER2 "worker-2", FRAME_KIND_THREAD, (int64_t)102
#define ADD_STATE(s) "state", FRAME_KIND_STATE, JBPF_STATE_##s

/* The thread and the split by state of one frame, both ending in a state frame. */
static void emit_state_split(struct emitter *e, const char *key, const struct profile *p, const char *frame,
			     const char *thread, const char *state1, uint64_t count1, const char *state2,
			     uint64_t count2)
{
	char text[512], pct1[32], pct2[32];
	uint64_t total = count_through(p, frame);

	emit_open(e, key, '[');
	snprintf(text, sizeof(text), "thread: %s", thread);
	emit_string(e, NULL, text);
	snprintf(text, sizeof(text), "by state: %s %" PRIu64 " (%s) \xc2\xb7 %s %" PRIu64 " (%s)", state1, count1,
		 percent_text(count1, total, 1, pct1), state2, count2, percent_text(count2, total, 1, pct2));
	emit_string(e, NULL, text);
	emit_close(e, ']');
}

static void thread_and_state_are_named(struct emitter *e)
{
	static const char *states[] = { "[runnable]", "[running]", "[sleeping]" }; /* in name order */
	struct profile *p = new_profile();
	struct output_meta meta = { .unit = "us" };
	char legend[512], part[128], pct[32];

	add(p, 300, ADD_WORKER1, "run", FRAME_KIND_JAVA, "poll", FRAME_KIND_NATIVE, ADD_STATE(RUNNING), NULL);
	add(p, 700, ADD_WORKER1, "run", FRAME_KIND_JAVA, "poll", FRAME_KIND_NATIVE, ADD_STATE(SLEEPING), NULL);
	add(p, 500, ADD_WORKER2, "run", FRAME_KIND_JAVA, "compute", FRAME_KIND_JAVA, ADD_STATE(RUNNING), NULL);
	add(p, 110, ADD_WORKER2, "run", FRAME_KIND_JAVA, "compute", FRAME_KIND_JAVA, ADD_STATE(RUNNABLE), NULL);
	write_page("states.html", NULL, p, &meta);
	emit_check(e, __func__, "states.html");
	/* poll's stacks: 300 running, 700 sleeping; compute's: 110 runnable, 500 running. */
	emit_state_split(e, "poll_tooltip", p, "poll", WORKER1, "[running]", 300, "[sleeping]", 700);
	emit_state_split(e, "compute_tooltip", p, "compute", WORKER2, "[runnable]", 110, "[running]", 500);
	/* The legend gives each state's share of the whole profile. */
	strcpy(legend, "States: ");
	for (size_t i = 0; i < 3; i++) {
		snprintf(part, sizeof(part), "%s%s %s", i ? " \xc2\xb7 " : "", states[i],
			 percent_text(count_through(p, states[i]), profile__total(p), 1, pct));
		strcat(legend, part);
	}
	emit_string(e, "legend", legend);
	emit_close(e, '}');
	profile__free(p);
}

/*
 * A page of two events: the first shown at first, with its title and
 * frames; the second when chosen (or named after # in the address), with
 * its own title, unit and frames, and none of the first's.
 */
static void events_page_shows_one_event_at_a_time(struct emitter *e)
{
	struct profile *cpu = new_profile(), *alloc = new_profile();
	const struct output_meta metas[2] = {
		{ .title = "CPU profile of pid 42", .unit = "samples", .duration_s = 10, .frequency_hz = 99, .event = "cpu" },
		{ .title = "Allocation profile of pid 42", .unit = "bytes", .duration_s = 10, .event = "alloc" },
	};
	const struct profile *profiles[2] = { cpu, alloc };
	char path[4096], total[64];
	FILE *out;
	int err;

	add(cpu, 30, "main", FRAME_KIND_NATIVE, "spin", FRAME_KIND_NATIVE, NULL);
	add(alloc, 65536, "Main.fill", FRAME_KIND_JAVA, "long[]", FRAME_KIND_CLASS, NULL);
	snprintf(path, sizeof(path), "%s/events.html", dir);
	out = fopen(path, "w");
	if (!out)
		die("%s: %s", path, strerror(errno));
	err = output__flamegraph_write_events(profiles, metas, 2, out);
	if (fclose(out) || err)
		die("%s: the writer failed", path);
	emit_check(e, __func__, "events.html");
	emit_string(e, "firstTitle", metas[0].title);
	emit_string(e, "firstFrame", "spin");
	emit_string(e, "secondEvent", "alloc");
	emit_string(e, "secondTitle", metas[1].title);
	emit_string(e, "secondFrame", "long[]");
	snprintf(total, sizeof(total), "Total: %" PRIu64 " bytes", profile__total(alloc));
	emit_string(e, "secondTotal", total);
	emit_close(e, '}');
	profile__free(cpu);
	profile__free(alloc);
}

/*
 * A recording shaped like the phases workload's (tests/workloads/phases.c)
 * under --threads at 200 Hz: its thread runs phase_one for the first 5 s
 * and phase_two for the next 5, each sample placed at its own tick, while
 * a second thread ticks every 100 ms throughout. Selecting 5 s to 10 s on
 * the timeline must leave phase_two alone of the two, with the counts
 * computed here; searching phase_one must mark the first half only.
 */
#define PHASES_TICKS 10000
#define PHASES_STEP 5
#define TICKER_STEP 100
#define ADD_PHASES "phases", FRAME_KIND_THREAD, (int64_t)4242
#define ADD_TICKER "ticker", FRAME_KIND_THREAD, (int64_t)4243

static void timeline_selects_a_range(struct emitter *e)
{
	struct profile *p = new_profile();
	struct output_meta meta = { .title = "CPU profile of phases", .duration_s = PHASES_TICKS / 1000.0,
				    .frequency_hz = 1000 / PHASES_STEP };
	uint64_t in_range = 0, phases = 0, ticker = 0;
	char text[256], num[32], all[32];

	for (uint32_t t = 0; t < PHASES_TICKS; t += PHASES_STEP) {
		bool second = t >= PHASES_TICKS / 2;
		uint32_t i = add(p, 1, ADD_PHASES, "main", FRAME_KIND_NATIVE, second ? "phase_two" : "phase_one",
				 FRAME_KIND_NATIVE, NULL);

		if (profile__add_span(p, i, t, t, 1))
			die("cannot add a span");
		phases++;
		in_range += second;
		if (t % TICKER_STEP)
			continue;
		i = add(p, 1, ADD_TICKER, "tick", FRAME_KIND_NATIVE, NULL);
		if (profile__add_span(p, i, t, t, 1))
			die("cannot add a span");
		ticker++;
		in_range += second;
	}
	write_page("phases.html", NULL, p, &meta);
	emit_check(e, __func__, "phases.html");
	emit_string(e, "first", "phase_one");
	emit_string(e, "second", "phase_two");
	emit_u64(e, "from", PHASES_TICKS / 2 / 1000);
	emit_u64(e, "to", PHASES_TICKS / 1000);
	snprintf(text, sizeof(text), "Selected 5.000 s \xe2\x80\x93 10.000 s: %s samples of %s",
		 count_text(in_range, num), count_text(profile__total(p), all));
	emit_string(e, "timeinfo", text);
	emit_string(e, "address", "#t=5.000-10.000");
	/* Rows by count: the phases thread's, then the ticker's. */
	emit_open(e, "rows", '[');
	emit_string(e, NULL, phases > ticker ? "[phases tid=4242]" : "[ticker tid=4243]");
	emit_string(e, NULL, phases > ticker ? "[ticker tid=4243]" : "[phases tid=4242]");
	emit_close(e, ']');
	emit_close(e, '}');
	profile__free(p);
}

/*
 * A recording taller than the window: DEEP_THREADS threads, each with a
 * stack of DEEP_FRAMES frames, every sample timed. The page opens at the
 * flame graph's root; the timeline's bars and its first row must be in
 * view beside it, not scrolled off above.
 */
#define DEEP_THREADS 48
#define DEEP_FRAMES 90
#define DEEP_TICKS 2000

static void deep_page_shows_timeline_and_root(struct emitter *e)
{
	struct profile *p = new_profile();
	struct output_meta meta = { .title = "CPU profile of a deep program", .duration_s = DEEP_TICKS / 1000.0,
				    .frequency_hz = 100 };
	uint32_t frames[DEEP_FRAMES + 1], index;
	char name[64];

	for (int t = 0; t < DEEP_THREADS; t++) {
		int64_t id;

		snprintf(name, sizeof(name), "worker-%d", t);
		id = profile__intern_thread(p, name, 5000 + t);
		if (id < 0)
			die("cannot add thread %s", name);
		frames[0] = (uint32_t)id;
		for (int d = 1; d <= DEEP_FRAMES; d++) {
			snprintf(name, sizeof(name), "level_%d_%d", d, d < DEEP_FRAMES / 2 ? 0 : t);
			id = profile__intern(p, name, FRAME_KIND_JAVA);
			if (id < 0)
				die("cannot add frame %s", name);
			frames[d] = (uint32_t)id;
		}
		for (uint32_t tick = (uint32_t)t; tick < DEEP_TICKS; tick += 10) {
			if (profile__add_indexed(p, frames, DEEP_FRAMES + 1, 1, &index) ||
			    profile__add_span(p, index, tick, tick, 1))
				die("cannot add a sample of thread %d", t);
		}
	}
	write_page("deep.html", NULL, p, &meta);
	emit_check(e, __func__, "deep.html");
	emit_u64(e, "seconds", DEEP_TICKS / 1000);
	emit_close(e, '}');
	profile__free(p);
}

int main(int argc, char **argv)
{
	static void (*const checks[])(struct emitter *) = {
		page_loads_without_errors,      search_counts_matching_samples,
		click_zooms_and_reset_returns,  icicle_toggle_puts_the_root_on_top,
		hostile_names_are_shown_as_text, diff_page_colours_by_change_of_share,
		thread_and_state_are_named,     events_page_shows_one_event_at_a_time,
		timeline_selects_a_range,       deep_page_shows_timeline_and_root,
	};
	char path[4096];
	struct emitter e;

	if (argc != 2)
		die("usage: flamegraph_pages DIR");
	dir = argv[1];
	snprintf(path, sizeof(path), "%s/expected.json", dir);
	e.out = fopen(path, "w");
	if (!e.out)
		die("%s: %s", path, strerror(errno));
	e.first = true;
	fputc('{', e.out);
	for (size_t i = 0; i < sizeof(checks) / sizeof(*checks); i++)
		checks[i](&e);
	fputs("\n}\n", e.out);
	if (fclose(e.out))
		die("%s: %s", path, strerror(errno));
	return 0;
}
