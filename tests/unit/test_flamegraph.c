/*
 * Unit tests for output/flamegraph.c, output/flametree.c and the escaping
 * in output/emit.c: the page is self-contained, carries the tree (and for a
 * diff, BEFORE's counts on AFTER's paths), and no name from the target can
 * inject markup or break the JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include "output/emit.h"
#include "output/output.h"
#include "profile/profile.h"

#define SCRIPT_INJECTION "</script><script>alert(1)</script>"
#define IMG_INJECTION "<img src=x onerror=alert(1)>"

static char *page_of(const struct profile *p, const struct output_meta *meta, size_t *len)
{
	char *text = written(OUTPUT_FLAMEGRAPH, p, meta, 0, len);

	assert_int_equal(strlen(text), *len);
	return text;
}

static char *diff_page_of(const struct profile *before, const struct profile *after,
			  const struct output_meta *meta, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	assert_non_null(out);
	assert_int_equal(output__flamegraph_diff_write(before, after, meta, out), 0);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(strlen(text), *len);
	return text;
}

/* Removes the line breaks the writer may put between numbers. */
static void squeeze(char *s)
{
	char *w = s;

	for (; *s; s++)
		if (*s != '\n')
			*w++ = *s;
	*w = '\0';
}

static size_t count_of(const char *haystack, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The text between the JSON script element's tags. */
static char *data_of(const char *page)
{
	static const char open[] = "<script type=\"application/json\" id=\"profile-data\">";
	const char *start = strstr(page, open), *end;

	assert_non_null(start);
	start += strlen(open);
	end = strstr(start, "</script>");
	assert_non_null(end);
	return strndup(start, (size_t)(end - start));
}

static void page_is_one_document_without_external_references(void **state)
{
	struct profile *p = profile__new(NULL);
	struct output_meta meta = { .title = "CPU profile of pid 42", .duration_s = 2.5, .frequency_hz = 99 };
	uint32_t id;
	size_t len;
	char *page;

	assert_non_null(p);
	id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &id, 1, 1), 0);
	page = page_of(p, &meta, &len);

	assert_int_equal(strncmp(page, "<!DOCTYPE html>", 15), 0);
	assert_int_equal(count_of(page, "<!DOCTYPE"), 1);
	assert_int_equal(count_of(page, "<html"), 1);
	assert_int_equal(count_of(page, "</html>"), 1);
	assert_string_equal(page + len - strlen("</html>\n"), "</html>\n");
	assert_null(strstr(page, "<link"));
	assert_null(strstr(page, "src="));
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	assert_null(strstr(page, "@import"));
	assert_null(strstr(page, "url("));
	/* Every marker was filled in. */
	assert_null(strstr(page, "@@"));
	assert_non_null(strstr(page, "<title>CPU profile of pid 42</title>"));
	assert_non_null(strstr(page, "Duration: 2.5 s"));
	assert_non_null(strstr(page, "Frequency: 99 Hz"));
	free(page);
	profile__free(p);
}

static void page_carries_the_merged_tree(void **state)
{
	struct profile *p = profile__new(NULL);
	struct output_meta meta = { .unit = "ns" };
	uint32_t main_id, work, rd, s[3];
	char expected[512], *page, *data;
	size_t len;

	assert_non_null(p);
	main_id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	work = intern_ok(p, "work", FRAME_KIND_JIT);
	rd = intern_ok(p, "ksys_read_[k]", FRAME_KIND_KERNEL);
	s[0] = main_id, s[1] = work, s[2] = rd;
	assert_int_equal(profile__add(p, s, 3, 3), 0);
	s[0] = main_id, s[1] = rd;
	assert_int_equal(profile__add(p, s, 2, 2), 0);
	s[0] = main_id;
	assert_int_equal(profile__add(p, s, 1, 1), 0);
	s[0] = main_id, s[1] = work;
	assert_int_equal(profile__add(p, s, 2, 4), 0);

	page = page_of(p, &meta, &len);
	data = data_of(page);

	assert_non_null(strstr(data, "\"unit\":\"ns\""));
	assert_non_null(strstr(data, "\"total\":10,"));
	assert_non_null(strstr(data, "\"diff\":false"));
	assert_null(strstr(data, "\"before\""));
	snprintf(expected, sizeof(expected), "\"%s\"", profile__frame_kind_name(FRAME_KIND_KERNEL));
	assert_non_null(strstr(data, expected));
	assert_non_null(strstr(data, "\"main\""));
	assert_non_null(strstr(data, "\"ksys_read_[k]\""));

	/*
	 * Preorder, children by name ("ksys_read_[k]" < "work"):
	 *   all 10 / main 10 (self 1) / read 2 (self 2), work 7 (self 4) / read 3
	 */
	snprintf(expected, sizeof(expected),
		 "\"nodes\":[-1,0,%d,0,%" PRIu32 ",1,%d,%d,%" PRIu32 ",2,%d,%d,%" PRIu32 ",2,%d,%d,"
		 "%" PRIu32 ",3,%d,%d]",
		 3 + 2 + 1 + 4, main_id, 3 + 2 + 1 + 4, 1, rd, 2, 2, work, 3 + 4, 4, rd, 3, 3);
	squeeze(data);
	assert_non_null(strstr(data, expected));
	snprintf(expected, sizeof(expected), "\"frameKinds\":[%d,%d,%d]", FRAME_KIND_NATIVE, FRAME_KIND_JIT,
		 FRAME_KIND_KERNEL);
	assert_non_null(strstr(data, expected));
	free(data);
	free(page);
	profile__free(p);
}

static void hostile_names_never_appear_unescaped(void **state)
{
	struct profile *p = profile__new(NULL);
	struct output_meta meta = { .title = "t " SCRIPT_INJECTION, .summary = IMG_INJECTION " & more",
				    .unit = "s\"<b>" };
	uint32_t a, b, c, s[3];
	char *page, *data;
	size_t len;

	assert_non_null(p);
	a = intern_ok(p, SCRIPT_INJECTION, FRAME_KIND_NATIVE);
	b = intern_ok(p, IMG_INJECTION, FRAME_KIND_JIT);
	c = intern_ok(p, "<!-- \"quote\" \\ back\x01slash -->\xe2\x80\xa8\xe2\x80\xa9", FRAME_KIND_NATIVE);
	s[0] = a, s[1] = b, s[2] = c;
	assert_int_equal(profile__add(p, s, 3, 1), 0);
	page = page_of(p, &meta, &len);

	assert_null(strstr(page, SCRIPT_INJECTION));
	assert_null(strstr(page, "<script>alert"));
	assert_null(strstr(page, "<img"));
	assert_null(strstr(page, "<b>"));
	assert_null(strstr(page, "<!-- \""));
	/* U+2028 and U+2029 only as escapes. */
	assert_null(strstr(page, "\xe2\x80\xa8"));
	assert_null(strstr(page, "\xe2\x80\xa9"));
	/* The template's own script elements, and no others. */
	assert_int_equal(count_of(page, "<script"), 2);
	assert_int_equal(count_of(page, "</script"), 2);

	/* The names are there, escaped. */
	data = data_of(page);
	assert_non_null(strstr(data, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\""));
	assert_non_null(strstr(data, "\"\\u003cimg src=x onerror=alert(1)\\u003e\""));
	assert_non_null(strstr(data, "\\u003c!-- \\\"quote\\\" \\\\ back\\u0001slash --\\u003e\\u2028\\u2029\""));
	assert_non_null(strstr(data, "\"unit\":\"s\\\"\\u003cb\\u003e\""));
	free(data);
	assert_non_null(strstr(page, "<title>t &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>"));
	assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt; &amp; more"));
	free(page);
	/* Writing did not touch the profile. */
	assert_string_equal(profile__frame_name(p, a), SCRIPT_INJECTION);
	assert_int_equal(profile__total(p), 1);
	profile__free(p);
}

static void invalid_utf8_is_replaced(void **state)
{
	struct profile *p = profile__new(NULL);
	struct output_meta meta = { .title = "bad\xff title" };
	uint32_t id;
	char *page, *data;
	size_t len;

	assert_non_null(p);
	/* A stray byte, an overlong NUL, a surrogate, a truncated sequence. */
	id = intern_ok(p, "x\xff" "a\xc0\x80" "b\xed\xa0\x80" "c\xe2\x82", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &id, 1, 1), 0);
	id = intern_ok(p, "caf\xc3\xa9 \xf0\x9f\x94\xa5", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &id, 1, 1), 0);
	page = page_of(p, &meta, &len);
	data = data_of(page);

	assert_non_null(strstr(data, "\"x\\ufffda\\ufffd\\ufffdb\\ufffd\\ufffd\\ufffdc\\ufffd\\ufffd\""));
	/* Valid multibyte text passes unchanged. */
	assert_non_null(strstr(data, "\"caf\xc3\xa9 \xf0\x9f\x94\xa5\""));
	assert_non_null(strstr(page, "bad\xef\xbf\xbd title"));
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)page[i];

		assert_true(ch != 0xff && ch != 0xc0);
	}
	free(data);
	free(page);
	profile__free(p);
}

static void utf8_length_follows_rfc3629(void **state)
{
	assert_int_equal(emit__utf8_length("a"), 1);
	assert_int_equal(emit__utf8_length("\xc3\xa9"), 2);
	assert_int_equal(emit__utf8_length("\xe2\x82\xac"), 3);
	assert_int_equal(emit__utf8_length("\xf0\x9f\x94\xa5"), 4);
	assert_int_equal(emit__utf8_length("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
	assert_int_equal(emit__utf8_length("\x80"), 0);              /* continuation */
	assert_int_equal(emit__utf8_length("\xc1\xbf"), 0);          /* overlong */
	assert_int_equal(emit__utf8_length("\xe0\x9f\xbf"), 0);      /* overlong */
	assert_int_equal(emit__utf8_length("\xf0\x8f\xbf\xbf"), 0);  /* overlong */
	assert_int_equal(emit__utf8_length("\xed\xa0\x80"), 0);      /* surrogate */
	assert_int_equal(emit__utf8_length("\xf4\x90\x80\x80"), 0);  /* past U+10FFFF */
	assert_int_equal(emit__utf8_length("\xf5\x80\x80\x80"), 0);
	assert_int_equal(emit__utf8_length("\xe2\x82"), 0);          /* truncated at NUL */
	assert_int_equal(emit__utf8_length("\xc3" "a"), 0);
}

static void empty_profile_still_gives_a_page(void **state)
{
	struct profile *p = profile__new(NULL);
	char *page, *data;
	size_t len;

	assert_non_null(p);
	page = page_of(p, NULL, &len);
	data = data_of(page);
	assert_non_null(strstr(data, "\"unit\":\"samples\""));
	assert_non_null(strstr(data, "\"nodes\":[-1,0,0,0]"));
	assert_non_null(strstr(data, "\"names\":[]"));
	assert_non_null(strstr(page, "<title>Flame graph</title>"));
	free(data);
	free(page);
	profile__free(p);
}

static void failed_write_is_reported(void **state)
{
	struct profile *p = profile__new(NULL);
	char small[256];
	uint32_t id;
	FILE *out;

	assert_non_null(p);
	id = intern_ok(p, "main", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(p, &id, 1, 1), 0);

	out = fopen("/dev/full", "w");
	assert_non_null(out);
	assert_int_equal(output__flamegraph_write(p, NULL, out), -ENOSPC);
	fclose(out);

	/* A memory stream smaller than the page. */
	out = fmemopen(small, sizeof(small), "w");
	assert_non_null(out);
	assert_true(output__flamegraph_write(p, NULL, out) < 0);
	fclose(out);
	profile__free(p);
}

/* Many distinct stacks: the tree is written with one node per distinct prefix. */
static void many_stacks_share_prefix_nodes(void **state)
{
	enum { FANOUT = 100 };
	struct profile *p = profile__new(NULL);
	uint32_t root, mid[FANOUT], leaf[FANOUT];
	char name[32], *page, *data, *nodes;
	size_t len, numbers = 0;

	assert_non_null(p);
	root = frame_ok(p, "root", FRAME_KIND_PROCESS, -1);
	for (int i = 0; i < FANOUT; i++) {
		snprintf(name, sizeof(name), "mid%d", i);
		mid[i] = intern_ok(p, name, FRAME_KIND_NATIVE);
		snprintf(name, sizeof(name), "leaf%d", i);
		leaf[i] = intern_ok(p, name, FRAME_KIND_KERNEL);
	}
	for (int i = 0; i < FANOUT; i++) {
		for (int j = 0; j < FANOUT; j++) {
			uint32_t s[3] = { root, mid[i], leaf[j] };

			assert_int_equal(profile__add(p, s, 3, 1), 0);
		}
	}
	page = page_of(p, NULL, &len);
	data = data_of(page);
	nodes = strstr(data, "\"nodes\":[");
	assert_non_null(nodes);
	for (char *c = nodes; *c && *c != ']'; c++)
		numbers += *c == ',';
	/* all, root, FANOUT mids, FANOUT*FANOUT leaves; four numbers each. */
	assert_int_equal(numbers + 1, 4 * (1 + 1 + FANOUT + FANOUT * FANOUT));
	free(data);
	free(page);
	profile__free(p);
}

static void add_stack(struct profile *p, uint64_t count, const char *a, enum frame_kind ka, const char *b,
		      enum frame_kind kb)
{
	uint32_t s[2] = { intern_ok(p, a, ka), intern_ok(p, b, kb) };

	assert_int_equal(profile__add(p, s, 2, count), 0);
}

/*
 * Paths match by (name, kind) from the root: a frame of the same name but
 * another kind is another path. Paths only BEFORE has stay in the tree with
 * an AFTER total of 0, their frames appended to the frame table.
 */
static void diff_matches_paths_by_name_and_kind(void **state)
{
	struct profile *before = profile__new(NULL), *after = profile__new(NULL);
	struct output_meta meta = { .title = "after vs before" };
	char expected[512], *page, *data;
	size_t len;

	assert_non_null(before);
	assert_non_null(after);
	add_stack(before, 3, "main", FRAME_KIND_NATIVE, "a", FRAME_KIND_NATIVE);
	add_stack(before, 1, "main", FRAME_KIND_NATIVE, "b", FRAME_KIND_NATIVE);
	add_stack(before, 2, "main", FRAME_KIND_NATIVE, "x", FRAME_KIND_NATIVE);
	add_stack(after, 2, "main", FRAME_KIND_NATIVE, "a", FRAME_KIND_NATIVE);
	add_stack(after, 6, "main", FRAME_KIND_NATIVE, "c", FRAME_KIND_NATIVE);
	add_stack(after, 4, "main", FRAME_KIND_NATIVE, "x", FRAME_KIND_JIT);

	page = diff_page_of(before, after, &meta, &len);
	data = data_of(page);
	squeeze(data);
	assert_non_null(strstr(data, "\"total\":12,\"diff\":true,\"beforeTotal\":6,"));
	/* AFTER's frames in its order (main, a, c, x), then b and native x from BEFORE. */
	assert_non_null(strstr(data, "\"names\":[\"main\",\"a\",\"c\",\"x\",\"b\",\"x\"]"));
	snprintf(expected, sizeof(expected), "\"frameKinds\":[%d,%d,%d,%d,%d,%d]", FRAME_KIND_NATIVE,
		 FRAME_KIND_NATIVE, FRAME_KIND_NATIVE, FRAME_KIND_JIT, FRAME_KIND_NATIVE, FRAME_KIND_NATIVE);
	assert_non_null(strstr(data, expected));
	/*
	 * Children of main by name, then kind (native before jit):
	 *   a (after 2, before 3), b (0, 1), c (6, 0), x native (0, 2), x jit (4, 0)
	 */
	snprintf(expected, sizeof(expected),
		 "\"nodes\":[-1,0,%d,0,0,1,%d,0,1,2,2,2,4,2,0,0,2,2,6,6,5,2,0,0,3,2,4,4],"
		 "\"before\":[%d,%d,3,1,0,2,0]}",
		 2 + 6 + 4, 2 + 6 + 4, 3 + 1 + 2, 3 + 1 + 2);
	assert_non_null(strstr(data, expected));
	assert_non_null(strstr(page, "Before: 6 samples \xc2\xb7 After: 12 samples"));
	assert_non_null(strstr(page, "<title>after vs before</title>"));
	free(data);
	free(page);
	profile__free(before);
	profile__free(after);
}

/* Shares, not counts, are what the page compares: a profile against itself scaled. */
static void diff_of_a_scaled_profile_keeps_every_share(void **state)
{
	struct profile *before = profile__new(NULL), *after = profile__new(NULL);
	char *page, *data, *nodes, *bef;
	uint64_t after_totals[16], before_totals[16];
	size_t len, nr_nodes = 0, nr_before = 0;

	assert_non_null(before);
	assert_non_null(after);
	add_stack(before, 1, "main", FRAME_KIND_NATIVE, "work", FRAME_KIND_JAVA);
	add_stack(before, 3, "main", FRAME_KIND_NATIVE, "read_[k]", FRAME_KIND_KERNEL);
	add_stack(after, 10, "main", FRAME_KIND_NATIVE, "work", FRAME_KIND_JAVA);
	add_stack(after, 30, "main", FRAME_KIND_NATIVE, "read_[k]", FRAME_KIND_KERNEL);

	page = diff_page_of(before, after, NULL, &len);
	assert_non_null(strstr(page, "<title>Differential flame graph</title>"));
	data = data_of(page);
	squeeze(data);
	nodes = strstr(data, "\"nodes\":[");
	bef = strstr(data, "\"before\":[");
	assert_non_null(nodes);
	assert_non_null(bef);
	for (char *c = nodes + strlen("\"nodes\":["); *c != ']'; nr_nodes++) {
		long long v[4];
		int used = 0;

		assert_true(nr_nodes < 16);
		assert_int_equal(sscanf(c, "%lld,%lld,%lld,%lld%n", &v[0], &v[1], &v[2], &v[3], &used), 4);
		after_totals[nr_nodes] = (uint64_t)v[2];
		c += used;
		if (*c == ',')
			c++;
	}
	for (char *c = bef + strlen("\"before\":["); *c != ']'; nr_before++) {
		char *next;

		assert_true(nr_before < 16);
		before_totals[nr_before] = strtoull(c, &next, 10);
		c = *next == ',' ? next + 1 : next;
	}
	/* all, main, read, work: one before count per node, each a tenth of after's. */
	assert_int_equal(nr_nodes, 4);
	assert_int_equal(nr_before, nr_nodes);
	for (size_t i = 0; i < nr_nodes; i++)
		assert_int_equal(after_totals[i], 10 * before_totals[i]);
	assert_int_equal(before_totals[0], 4);
	free(data);
	free(page);
	profile__free(before);
	profile__free(after);
}

static void diff_escapes_names_only_before_has(void **state)
{
	struct profile *before = profile__new(NULL), *after = profile__new(NULL);
	char *page, *data;
	size_t len;

	assert_non_null(before);
	assert_non_null(after);
	add_stack(before, 1, "main", FRAME_KIND_NATIVE, SCRIPT_INJECTION, FRAME_KIND_NATIVE);
	add_stack(after, 1, "main", FRAME_KIND_NATIVE, "safe", FRAME_KIND_NATIVE);
	page = diff_page_of(before, after, NULL, &len);
	assert_null(strstr(page, SCRIPT_INJECTION));
	assert_int_equal(count_of(page, "<script"), 2);
	data = data_of(page);
	assert_non_null(strstr(data, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\""));
	free(data);
	free(page);
	profile__free(before);
	profile__free(after);
}

static void diff_with_an_empty_side(void **state)
{
	struct profile *before = profile__new(NULL), *after = profile__new(NULL);
	char *page, *data;
	size_t len;

	assert_non_null(before);
	assert_non_null(after);
	add_stack(before, 5, "main", FRAME_KIND_NATIVE, "gone", FRAME_KIND_NATIVE);
	page = diff_page_of(before, after, NULL, &len);
	data = data_of(page);
	squeeze(data);
	assert_non_null(strstr(data, "\"nodes\":[-1,0,0,0,0,1,0,0,1,2,0,0],\"before\":[5,5,5]}"));
	free(data);
	free(page);
	page = diff_page_of(after, before, NULL, &len);
	data = data_of(page);
	squeeze(data);
	assert_non_null(strstr(data, "\"beforeTotal\":0,"));
	assert_non_null(strstr(data, "\"before\":[0,0,0]}"));
	free(data);
	free(page);
	profile__free(before);
	profile__free(after);
}

/*
 * A page of several events: each event's own tree, title, unit and
 * summary lines in {"events":[...]}, in the order given; the page's
 * markers filled from the first; a hostile title escaped in both places.
 */
static void page_of_several_events(void **state)
{
	struct profile *cpu = profile__new(NULL), *alloc = profile__new(NULL);
	const struct output_meta metas[2] = {
		{ .title = "CPU profile of app", .unit = "samples", .duration_s = 2, .frequency_hz = 99, .event = "cpu",
		  .summary = "3 samples taken" },
		{ .title = "Allocation profile of " SCRIPT_INJECTION, .unit = "bytes", .duration_s = 2, .event = "alloc" },
	};
	const struct profile *profiles[2] = { cpu, alloc };
	static const char cpu_first[] = "{\"events\":[{\"event\":\"cpu\",\"title\":\"CPU profile of app\","
					"\"summary\":[\"Total: 3 samples \xc2\xb7 Duration: 2.0 s \xc2\xb7 Frequency: 99 Hz\","
					"\"3 samples taken\"],";
	uint32_t ids[2];
	char *page = NULL, *data;
	size_t len;
	FILE *out = open_memstream(&page, &len);

	(void)state;
	assert_non_null(out);
	ids[0] = intern_ok(cpu, "main", FRAME_KIND_NATIVE);
	ids[1] = intern_ok(cpu, "spin", FRAME_KIND_NATIVE);
	assert_int_equal(profile__add(cpu, ids, 2, 3), 0);
	ids[0] = intern_ok(alloc, "Main.fill", FRAME_KIND_JAVA);
	ids[1] = intern_ok(alloc, "long[]", FRAME_KIND_CLASS);
	assert_int_equal(profile__add_objects(alloc, ids, 2, 65536, 8), 0);
	assert_int_equal(output__flamegraph_write_events(profiles, metas, 2, out), 0);
	assert_int_equal(fclose(out), 0);
	data = data_of(page);
	squeeze(data);
	assert_int_equal(strncmp(data, cpu_first, strlen(cpu_first)), 0);
	assert_non_null(strstr(data, "\"unit\":\"samples\",\"total\":3,"));
	assert_non_null(strstr(data, "},{\"event\":\"alloc\",\"title\":\"Allocation profile of "));
	assert_non_null(strstr(data, "\"summary\":[\"Total: 65536 bytes \xc2\xb7 Duration: 2.0 s\"],"));
	assert_non_null(strstr(data, "\"unit\":\"bytes\",\"total\":65536,"));
	assert_non_null(strstr(data, "\"names\":[\"Main.fill\",\"long[]\"]"));
	assert_int_equal(data[strlen(data) - 1], '}');
	assert_int_equal(count_of(page, SCRIPT_INJECTION), 0);
	assert_non_null(strstr(page, "<title>CPU profile of app</title>"));
	free(data);
	free(page);
	profile__free(cpu);
	profile__free(alloc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(page_is_one_document_without_external_references),
		cmocka_unit_test(page_carries_the_merged_tree),
		cmocka_unit_test(hostile_names_never_appear_unescaped),
		cmocka_unit_test(invalid_utf8_is_replaced),
		cmocka_unit_test(utf8_length_follows_rfc3629),
		cmocka_unit_test(empty_profile_still_gives_a_page),
		cmocka_unit_test(failed_write_is_reported),
		cmocka_unit_test(many_stacks_share_prefix_nodes),
		cmocka_unit_test(diff_matches_paths_by_name_and_kind),
		cmocka_unit_test(diff_of_a_scaled_profile_keeps_every_share),
		cmocka_unit_test(diff_escapes_names_only_before_has),
		cmocka_unit_test(diff_with_an_empty_side),
		cmocka_unit_test(page_of_several_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
