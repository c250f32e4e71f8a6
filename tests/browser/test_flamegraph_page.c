/*
 * Browser tests of the flame graph page: pages written by
 * output_flamegraph_write and output_flamegraph_diff_write from profiles
 * built here are opened from file:// in Debian's headless Chromium, driven
 * through the DevTools protocol (cdp.h) with real mouse and keyboard input,
 * and checked against numbers computed here from the same profiles.
 *
 * Each test starts its own browser and teardown ends it, pass or fail, and
 * frees what the test built. The browser is $CHROMIUM, /usr/bin/chromium by
 * default; when it is not there every test fails and says how to install
 * it. Screenshots go to
 * $ARTIFACT_DIR (build/artifacts by default).
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cdp.h"
#include "json.h"
#include "output/output.h"
#include "profile/profile.h"

#define WAIT_MS 5000

struct page_test {
	struct cdp cdp;
	char dir[256];             /* the pages written for the test */
	struct profile *before;    /* the profiles drawn, freed by teardown */
	struct profile *after;
};

struct rect {
	double x, y, width, height;
};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static int setup(void **state)
{
	struct page_test *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/jbpf-pages-XXXXXX");
	if (!mkdtemp(t->dir)) {
		print_error("mkdtemp: %s\n", strerror(errno));
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct page_test *t = *state;

	cdp_stop(&t->cdp);
	nftw(t->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	profile__free(t->before);
	profile__free(t->after);
	free(t);
	return 0;
}

/* Started in the test, not in setup, so that a missing browser fails each test with its reason. */
static void start_browser(struct page_test *t)
{
	const char *chromium = getenv("CHROMIUM") && *getenv("CHROMIUM") ? getenv("CHROMIUM") : "/usr/bin/chromium";

	if (!t->cdp.pid && cdp_start(&t->cdp, chromium))
		fail_msg("cannot start the browser: %s", t->cdp.error);
}

/* Adds count to the stack given as (name, kind) pairs, root first, ending with NULL. */
static void add(struct profile *p, uint64_t count, ...)
{
	uint32_t frames[32];
	size_t depth = 0;
	const char *name;
	va_list ap;

	va_start(ap, count);
	while ((name = va_arg(ap, const char *))) {
		int64_t id = profile__intern(p, name, (enum frame_kind)va_arg(ap, int));

		assert_true(id >= 0 && depth < 32);
		frames[depth++] = (uint32_t)id;
	}
	va_end(ap);
	assert_int_equal(profile__add(p, frames, depth, count), 0);
}

static void no_page_errors(struct page_test *t)
{
	if (t->cdp.nr_errors || t->cdp.dialogs)
		fail_msg("the page reported %zu error(s), %d dialog(s):\n%s", t->cdp.nr_errors, t->cdp.dialogs,
			 t->cdp.errors);
}

/* Writes the page (a diff when before is not NULL) and opens it; fails the test on any error. */
static void open_page(struct page_test *t, const char *file, const struct profile *before,
		      const struct profile *after, const struct output_meta *meta)
{
	char path[512], url[600];
	FILE *out;

	start_browser(t);
	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	out = fopen(path, "w");
	assert_non_null(out);
	if (before)
		assert_int_equal(output_flamegraph_diff_write(before, after, meta, out), 0);
	else
		assert_int_equal(output_flamegraph_write(after, meta, out), 0);
	assert_int_equal(fclose(out), 0);
	snprintf(url, sizeof(url), "file://%s", path);
	if (cdp_navigate(&t->cdp, url))
		fail_msg("%s", t->cdp.error);
	no_page_errors(t);
}

static char *eval(struct page_test *t, const char *fmt, ...)
{
	char expr[4096];
	char *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(expr, sizeof(expr), fmt, ap);
	va_end(ap);
	v = cdp_eval(&t->cdp, expr);
	if (!v)
		fail_msg("%s", t->cdp.error);
	return v;
}

static void wait_true(struct page_test *t, const char *expr)
{
	if (cdp_wait_true(&t->cdp, expr, WAIT_MS))
		fail_msg("%s", t->cdp.error);
}

/* A JavaScript string literal of s. */
static const char *quoted(const char *s)
{
	static char buf[1024];

	buf[0] = '\0';
	assert_true(json_quote(buf, sizeof(buf), s));
	return buf;
}

/* Where the page drew the frame named name; false when it is not drawn. */
static bool frame_rect(struct page_test *t, const char *name, struct rect *r)
{
	char *v = eval(t, "JSON.stringify(flamegraphPage.frameRect(%s))", quoted(name));
	struct json *j = json_parse(v, strlen(v));
	bool found = false;

	assert_non_null(j);
	if (j->type == JSON_OBJECT) {
		const struct json *x = json_at(j, "x"), *y = json_at(j, "y"), *w = json_at(j, "width"),
				  *h = json_at(j, "height");

		assert_true(x && y && w && h);
		*r = (struct rect){ x->number, y->number, w->number, h->number };
		found = true;
	}
	json_free(j);
	free(v);
	return found;
}

static struct rect drawn_frame(struct page_test *t, const char *name)
{
	struct rect r;

	if (!frame_rect(t, name, &r))
		fail_msg("the page drew no frame named %s", name);
	assert_true(r.width >= 4);
	return r;
}

static void click(struct page_test *t, double x, double y)
{
	if (cdp_click(&t->cdp, x, y))
		fail_msg("%s", t->cdp.error);
}

static void hover(struct page_test *t, const struct rect *r)
{
	/* Away first, so the page sees a move even onto the same spot. */
	if (cdp_mouse(&t->cdp, "mouseMoved", 0, 0) ||
	    cdp_mouse(&t->cdp, "mouseMoved", r->x + r->width / 2, r->y + r->height / 2))
		fail_msg("%s", t->cdp.error);
	wait_true(t, "!document.getElementById('tooltip').hidden");
}

static struct rect element_rect(struct page_test *t, const char *id)
{
	char *v = eval(t, "(function(){var r=document.getElementById(%s).getBoundingClientRect();"
		       "return r.left+','+r.top+','+r.width+','+r.height;})()", quoted(id));
	struct rect r;

	assert_int_equal(sscanf(v, "%lf,%lf,%lf,%lf", &r.x, &r.y, &r.width, &r.height), 4);
	free(v);
	return r;
}

static char *text_of(struct page_test *t, const char *id)
{
	return eval(t, "document.getElementById(%s).textContent", quoted(id));
}

/* Saves the viewport as file in $ARTIFACT_DIR, and says where. */
static void save_screenshot(struct page_test *t, const char *file, const char *what)
{
	const char *dir = getenv("ARTIFACT_DIR") && *getenv("ARTIFACT_DIR") ? getenv("ARTIFACT_DIR") : "build/artifacts";
	char path[512];

	if (mkdir(dir, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (cdp_screenshot(&t->cdp, path))
		fail_msg("%s", t->cdp.error);
	print_message("screenshot of %s: %s\n", what, path);
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

static void assert_contains(const char *haystack, const char *needle)
{
	if (!strstr(haystack, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, haystack);
}

/* The CPU profile most tests draw: a few functions, one of them reached twice. */
static struct profile *sample_profile(void)
{
	struct profile *p = profile__new(NULL);

	assert_non_null(p);
	add(p, 37, "main", FRAME_KIND_NATIVE, "parse", FRAME_KIND_JAVA, "read_[k]", FRAME_KIND_KERNEL, NULL);
	add(p, 120, "main", FRAME_KIND_NATIVE, "parse", FRAME_KIND_JAVA, "lex", FRAME_KIND_JAVA, NULL);
	add(p, 55, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "lock_wait", FRAME_KIND_NATIVE, NULL);
	add(p, 800, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "hash", FRAME_KIND_JIT, NULL);
	add(p, 90, "main", FRAME_KIND_NATIVE, "compute", FRAME_KIND_JAVA, "parse", FRAME_KIND_JAVA, NULL);
	add(p, 211, "main", FRAME_KIND_NATIVE, "io_wait", FRAME_KIND_NATIVE, NULL);
	return p;
}

/* Total of the stacks with a frame whose name the extended regular expression matches. */
static uint64_t matching_count(const struct profile *p, const char *pattern)
{
	uint64_t sum = 0;
	regex_t re;

	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
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

static void page_loads_without_errors(void **state)
{
	struct page_test *t = *state;
	struct profile *p = t->after = sample_profile();
	struct output_meta meta = { .title = "CPU profile of pid 42", .duration_s = 10, .frequency_hz = 99 };
	char *v;

	open_page(t, "plain.html", NULL, p, &meta);
	v = eval(t, "document.title");
	assert_string_equal(v, meta.title);
	free(v);
	/* Every frame of the profile is wide enough to be drawn in 1200 pixels. */
	for (size_t f = 0; f < profile__frame_count(p); f++)
		drawn_frame(t, profile__frame_name(p, (uint32_t)f));
	no_page_errors(t);
}

static void search_counts_matching_samples(void **state)
{
	static const char *patterns[] = { "parse|wait", "_\\[k\\]$", "^l" };
	struct page_test *t = *state;
	struct profile *p = t->after = sample_profile();
	char expected[256], num[32], pct[32], *v;

	open_page(t, "search.html", NULL, p, NULL);
	for (size_t i = 0; i < sizeof(patterns) / sizeof(*patterns); i++) {
		uint64_t matched = matching_count(p, patterns[i]);

		assert_true(matched > 0 && matched < profile__total(p));
		/* Typed, as a person would: focus the box, clear it, insert the text. */
		free(eval(t, "(function(){var s=document.getElementById('search');s.focus();s.value='';return 1;})()"));
		{
			char params[256] = "{\"text\":";
			struct json *msg;

			assert_true(json_quote(params, sizeof(params) - 1, patterns[i]));
			strcat(params, "}");
			if (!cdp_call(&t->cdp, true, "Input.insertText", params, &msg))
				fail_msg("%s", t->cdp.error);
			json_free(msg);
		}
		snprintf(expected, sizeof(expected), "Matched: %s (%s samples)",
			 percent_text(matched, profile__total(p), 1, pct), count_text(matched, num));
		wait_true(t, "document.getElementById('search').value.length > 0 && "
			  "document.getElementById('matched').textContent.length > 0");
		v = text_of(t, "matched");
		if (strcmp(v, expected))
			fail_msg("search %s: the page says \"%s\", expected \"%s\"", patterns[i], v, expected);
		free(v);
	}
	no_page_errors(t);
}

static void click_zooms_and_reset_returns(void **state)
{
	struct page_test *t = *state;
	struct profile *p = t->after = sample_profile();
	char expected[256], pct[32], *v;
	struct rect r, button;

	open_page(t, "zoom.html", NULL, p, NULL);
	r = drawn_frame(t, "compute");
	drawn_frame(t, "io_wait");
	click(t, r.x + r.width / 2, r.y + r.height / 2);
	snprintf(expected, sizeof(expected), "Zoomed to compute (%s of total)",
		 percent_text(count_through(p, "compute"), profile__total(p), 2, pct));
	wait_true(t, "document.getElementById('zoominfo').textContent.length > 0");
	v = text_of(t, "zoominfo");
	assert_contains(v, expected);
	free(v);
	/* Zoomed: compute spans the width, and io_wait, beside it, is gone. */
	assert_false(frame_rect(t, "io_wait", &r));
	assert_true(drawn_frame(t, "compute").width > drawn_frame(t, "main").width - 2);

	save_screenshot(t, "flamegraph-zoomed.png", "the zoomed page");

	button = element_rect(t, "reset");
	click(t, button.x + button.width / 2, button.y + button.height / 2);
	wait_true(t, "document.getElementById('zoominfo').textContent === ''");
	drawn_frame(t, "io_wait");
	no_page_errors(t);
}

static void icicle_toggle_puts_the_root_on_top(void **state)
{
	struct page_test *t = *state;
	struct profile *p = t->after = sample_profile();
	struct rect root, leaf, box;

	open_page(t, "icicle.html", NULL, p, NULL);
	root = drawn_frame(t, "all");
	leaf = drawn_frame(t, "lex");
	assert_true(root.y > leaf.y);

	box = element_rect(t, "invert");
	click(t, box.x + box.width / 2, box.y + box.height / 2);
	wait_true(t, "document.getElementById('invert').checked");
	root = drawn_frame(t, "all");
	leaf = drawn_frame(t, "lex");
	assert_true(root.y < leaf.y);
	/* Zoom and reset work the same way up. */
	click(t, leaf.x + leaf.width / 2, leaf.y + leaf.height / 2);
	wait_true(t, "document.getElementById('zoominfo').textContent.indexOf('Zoomed to lex') === 0");
	assert_false(frame_rect(t, "hash", &box));
	free(eval(t, "document.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}))"));
	wait_true(t, "document.getElementById('zoominfo').textContent === ''");
	drawn_frame(t, "hash");
	no_page_errors(t);
}

#define SCRIPT_NAME "<script>alert(1)</script>"
#define BREAKOUT_NAME "</script>\"'><img src=x onerror=alert(2)>"

static void hostile_names_are_shown_as_text(void **state)
{
	static const char *names[] = { SCRIPT_NAME, BREAKOUT_NAME };
	struct page_test *t = *state;
	struct profile *p = t->after = profile__new(NULL);
	struct output_meta meta = { .title = "<script>alert(3)</script>", .summary = "<img src=y onerror=alert(4)>" };
	char *v;

	assert_non_null(p);
	add(p, 40, "main", FRAME_KIND_NATIVE, SCRIPT_NAME, FRAME_KIND_NATIVE, NULL);
	add(p, 60, "main", FRAME_KIND_NATIVE, BREAKOUT_NAME, FRAME_KIND_JIT, "leaf", FRAME_KIND_NATIVE, NULL);
	open_page(t, "hostile.html", NULL, p, &meta);

	/* The page's own two script elements, its JSON data first, and no image. */
	v = eval(t, "(function(){var s=document.getElementsByTagName('script');return s.length+','+s[0].id+','+"
		 "s[0].type+','+document.getElementsByTagName('img').length;})()");
	assert_string_equal(v, "2,profile-data,application/json,0");
	free(v);
	v = eval(t, "document.title");
	assert_string_equal(v, meta.title);
	free(v);
	for (size_t i = 0; i < 2; i++) {
		struct rect r = drawn_frame(t, names[i]);

		hover(t, &r);
		v = eval(t, "document.querySelector('#tooltip .name').textContent");
		assert_string_equal(v, names[i]);
		free(v);
		click(t, r.x + r.width / 2, r.y + r.height / 2);
		wait_true(t, "document.getElementById('zoominfo').textContent.length > 0");
		v = text_of(t, "zoominfo");
		assert_contains(v, names[i]);
		free(v);
		free(eval(t, "document.getElementById('reset').click()"));
	}
	assert_int_equal(t->cdp.dialogs, 0);
	no_page_errors(t);
}

/* The colour of the canvas pixel just inside the top left corner of the frame's box, as r,g,b. */
static void pixel_of(struct page_test *t, const char *name, int rgb[3])
{
	char *v = eval(t, "(function(){var r=flamegraphPage.frameRect(%s),c=document.getElementById('canvas'),"
		       "b=c.getBoundingClientRect(),k=c.width/b.width,d=c.getContext('2d').getImageData("
		       "Math.floor((r.x-b.left+1)*k),Math.floor((r.y-b.top+1)*k),1,1).data;"
		       "return d[0]+','+d[1]+','+d[2];})()", quoted(name));

	assert_int_equal(sscanf(v, "%d,%d,%d", &rgb[0], &rgb[1], &rgb[2]), 3);
	free(v);
}

static void diff_page_colours_by_change_of_share(void **state)
{
	struct page_test *t = *state;
	struct profile *before = t->before = profile__new(NULL), *after = t->after = profile__new(NULL);
	struct output_meta meta = { .title = "after against before" };
	char expected[512], a[32], b[32], pa[32], pb[32], *v;
	uint64_t bt, at;
	int rgb[3];
	struct rect r;

	assert_non_null(before);
	assert_non_null(after);
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
	open_page(t, "diff.html", before, after, &meta);

	pixel_of(t, "grow", rgb);
	if (!(rgb[0] > rgb[2] + 40))
		fail_msg("grow is drawn rgb(%d,%d,%d), not red", rgb[0], rgb[1], rgb[2]);
	pixel_of(t, "new", rgb);
	if (!(rgb[0] > rgb[2] + 40))
		fail_msg("new is drawn rgb(%d,%d,%d), not red", rgb[0], rgb[1], rgb[2]);
	pixel_of(t, "shrink", rgb);
	if (!(rgb[2] > rgb[0] + 40))
		fail_msg("shrink is drawn rgb(%d,%d,%d), not blue", rgb[0], rgb[1], rgb[2]);
	pixel_of(t, "same", rgb);
	if (abs(rgb[0] - rgb[2]) > 8 || abs(rgb[0] - rgb[1]) > 8)
		fail_msg("same is drawn rgb(%d,%d,%d), not grey", rgb[0], rgb[1], rgb[2]);
	/* A frame only before has is not drawn, but named with its share of before. */
	assert_false(frame_rect(t, "gone", &r));

	r = drawn_frame(t, "grow");
	hover(t, &r);
	save_screenshot(t, "flamegraph-diff.png", "the diff page");
	v = text_of(t, "tooltip");
	snprintf(expected, sizeof(expected), "before: %s samples (%s) \xe2\x86\x92 after: %s samples (%s)",
		 count_text(count_through(before, "grow"), b), percent_text(count_through(before, "grow"), bt, 2, pb),
		 count_text(count_through(after, "grow"), a), percent_text(count_through(after, "grow"), at, 2, pa));
	assert_contains(v, expected);
	snprintf(expected, sizeof(expected), "change: +%.2f points of total",
		 100.0 * ((double)count_through(after, "grow") / (double)at -
			  (double)count_through(before, "grow") / (double)bt));
	assert_contains(v, expected);
	free(v);

	r = drawn_frame(t, "main");
	hover(t, &r);
	v = text_of(t, "tooltip");
	snprintf(expected, sizeof(expected), "only in before, below this frame: %s samples (%s of before)",
		 count_text(count_through(before, "gone"), b), percent_text(count_through(before, "gone"), bt, 2, pb));
	assert_contains(v, expected);
	free(v);

	v = text_of(t, "diffinfo");
	snprintf(expected, sizeof(expected), "Only in before: %s of before (%s samples)",
		 percent_text(count_through(before, "gone"), bt, 2, pb), count_text(count_through(before, "gone"), b));
	assert_contains(v, expected);
	assert_contains(v, "main; gone");
	free(v);
	v = text_of(t, "legend");
	assert_contains(v, "grew");
	assert_contains(v, "shrank");
	free(v);
	no_page_errors(t);
}

#define WORKER1 "[worker-1 tid=101]"
#define WORKER2 "[worker-2 tid=102]"

static void thread_and_state_are_named(void **state)
{
	static const char *states[] = { "[runnable]", "[running]", "[sleeping]" }; /* in name order */
	struct page_test *t = *state;
	struct profile *p = t->after = profile__new(NULL);
	struct output_meta meta = { .unit = "us" };
	char expected[512], part[128], num[32], pct[32], *v;
	uint64_t poll_total, compute_total;
	struct rect r;

	assert_non_null(p);
	add(p, 300, WORKER1, FRAME_KIND_THREAD, "run", FRAME_KIND_JAVA, "poll", FRAME_KIND_NATIVE, "[running]",
	    FRAME_KIND_STATE, NULL);
	add(p, 700, WORKER1, FRAME_KIND_THREAD, "run", FRAME_KIND_JAVA, "poll", FRAME_KIND_NATIVE, "[sleeping]",
	    FRAME_KIND_STATE, NULL);
	add(p, 500, WORKER2, FRAME_KIND_THREAD, "run", FRAME_KIND_JAVA, "compute", FRAME_KIND_JAVA, "[running]",
	    FRAME_KIND_STATE, NULL);
	add(p, 110, WORKER2, FRAME_KIND_THREAD, "run", FRAME_KIND_JAVA, "compute", FRAME_KIND_JAVA, "[runnable]",
	    FRAME_KIND_STATE, NULL);
	poll_total = count_through(p, "poll");
	compute_total = count_through(p, "compute");
	open_page(t, "states.html", NULL, p, &meta);

	r = drawn_frame(t, "poll");
	hover(t, &r);
	v = text_of(t, "tooltip");
	assert_contains(v, "thread: " WORKER1);
	/* poll's stacks: 300 running, 700 sleeping, each ending in its state frame. */
	snprintf(expected, sizeof(expected), "by state: [running] 300 (%s) \xc2\xb7 [sleeping] 700 (%s)",
		 percent_text(300, poll_total, 1, pct), percent_text(700, poll_total, 1, num));
	assert_contains(v, expected);
	free(v);

	r = drawn_frame(t, "compute");
	hover(t, &r);
	v = text_of(t, "tooltip");
	assert_contains(v, "thread: " WORKER2);
	snprintf(expected, sizeof(expected), "by state: [runnable] 110 (%s) \xc2\xb7 [running] 500 (%s)",
		 percent_text(110, compute_total, 1, pct), percent_text(500, compute_total, 1, num));
	assert_contains(v, expected);
	free(v);

	/* The legend gives each state's share of the whole profile. */
	strcpy(expected, "States: ");
	for (size_t i = 0; i < 3; i++) {
		snprintf(part, sizeof(part), "%s%s %s", i ? " \xc2\xb7 " : "", states[i],
			 percent_text(count_through(p, states[i]), profile__total(p), 1, pct));
		strcat(expected, part);
	}
	v = text_of(t, "legend");
	assert_contains(v, expected);
	free(v);
	no_page_errors(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(page_loads_without_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(search_counts_matching_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(click_zooms_and_reset_returns, setup, teardown),
		cmocka_unit_test_setup_teardown(icicle_toggle_puts_the_root_on_top, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_names_are_shown_as_text, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_page_colours_by_change_of_share, setup, teardown),
		cmocka_unit_test_setup_teardown(thread_and_state_are_named, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
