/*
 * flamegraph: one self-contained HTML page that draws a profile, or the
 * change between two profiles.
 *
 * The page itself (markup, style, script) is output/flamegraph.html, and
 * its timeline's part of the script output/flamegraph_timeline.js, both
 * embedded into the binary below with .incbin so that they can be edited
 * as ordinary files. This code copies the page to the output and replaces
 * its markers:
 *
 *   @@TIMELINE@@ output/flamegraph_timeline.js, as it is
 *   @@TITLE@@    the title, HTML-escaped
 *   @@SUMMARY@@  duration, frequency, total(s) and meta->summary, HTML-escaped
 *   @@DATA@@     the profile as JSON, inside <script type="application/json">
 *
 * The JSON holds a frame table and the merged call tree (output/flametree.h):
 *
 *   {"version":1, "unit":"samples", "total":N, "diff":false,
 *    "kinds":["native","kernel",...],      profile__frame_kind_name() of each kind
 *    "names":["main","read_[k]",...],      frame id -> name
 *    "frameKinds":[0,1,...],               frame id -> index into kinds
 *    "nodes":[frame,level,total,self, ...]}
 *
 * nodes lists the tree in preorder, four numbers per node. Node 0 is the
 * root ("all", frame -1, level 0); a node at level L is a child of the
 * nearest preceding node at level L-1. total counts the samples whose stack
 * passes through the node, self those whose stack ends there. Siblings are
 * ordered by name, so the page needs no sorting.
 *
 * A diff page (output__flamegraph_diff_write) has "diff":true and two more
 * members:
 *
 *   "beforeTotal":M,                       BEFORE's total
 *   "before":[b0,b1,...]                   per node: BEFORE's total on the same path
 *
 * Its tree is AFTER's, with paths matched to BEFORE's by (name, kind) from
 * the root; total and self are AFTER's counts. A path only BEFORE has is a
 * node with total 0, so it takes no width, but its before count is there:
 * the page lists the largest such paths and says how much of BEFORE they
 * hold, and a frame's tooltip says how much of BEFORE vanished below it.
 * Their frames follow AFTER's in names and frameKinds. The page compares
 * shares, count / total of its own profile, so recordings of different
 * lengths compare.
 *
 * A page that is not a diff, of a profile that keeps its times
 * (profile/timeline.h), has one more member, its timeline
 * (output/flametime.h):
 *
 *   "timeline":{"bucketMs":50, "buckets":200, "startMs":1767225600000,
 *               "untimed":0, "cells":[node,bucket,count, ...]}
 *
 * each cell the part of a stack's count (the node where it ends) that
 * falls in that bucket; startMs is when the recording began (ms since the
 * epoch, 0 unknown), untimed the count of stacks whose time is not known.
 * The page sums the cells of a range of buckets to draw that range alone.
 * When the cells would pass their bound even in wide buckets, the member
 * is {"omitted":true} and the page says so.
 *
 * A page of several events (output__flamegraph_write_events) has
 *
 *   {"events":[{"event":"cpu", "title":"...", "summary":["Total: ...", "..."],
 *               "version":1, "unit":..., ...}, ...]}
 *
 * one member per event, each an ordinary page's data with its event's
 * name, title and summary lines first; the page shows one at a time (the
 * one its address names after #, else the first) and offers the others.
 *
 * Each name goes through emit__json_string, so no frame name can end the
 * script element or break the JSON.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "flametime.h"
#include "flametree.h"

/*
 * The page, NUL-terminated. The assembler resolves the path from the
 * directory the compiler runs in, the repository root.
 */
__asm__(".section .rodata\n"
	".global jbpf_flamegraph_html\n"
	"jbpf_flamegraph_html:\n"
	".incbin \"output/flamegraph.html\"\n"
	".byte 0\n"
	".global jbpf_flamegraph_timeline_js\n"
	"jbpf_flamegraph_timeline_js:\n"
	".incbin \"output/flamegraph_timeline.js\"\n"
	".byte 0\n"
	".previous\n");
extern const char jbpf_flamegraph_html[];
extern const char jbpf_flamegraph_timeline_js[];

/* What one page shows. */
struct page {
	const struct profile *profile;   /* the profile drawn: AFTER on a diff page */
	const struct profile *before;    /* NULL unless a diff page */
	const struct output_meta *meta;  /* may be NULL */
	const struct flame_tree *tree;
	const struct flame_time *time;   /* NULL on a diff page */
};

static const char *page_unit(const struct page *pg)
{
	return pg->meta && pg->meta->unit ? pg->meta->unit : "samples";
}

/* The name and kind of frame id f of the page's tree (see flametree.h for ids past AFTER's). */
static void page_frame(const struct page *pg, size_t f, const char **name, unsigned *kind)
{
	size_t nr = profile__frame_count(pg->profile);

	if (f < nr) {
		*name = profile__frame_name(pg->profile, (uint32_t)f);
		*kind = profile__frame_kind(pg->profile, (uint32_t)f);
	} else {
		uint32_t bf = pg->tree->extra[f - nr];

		*name = profile__frame_name(pg->before, bf);
		*kind = profile__frame_kind(pg->before, bf);
	}
	if (*kind >= FRAME_KIND_NR)
		*kind = FRAME_KIND_LOST;
}

static void summary_line(const struct page *pg, char *buf, size_t size);

static void write_timeline(FILE *out, const struct page *pg)
{
	const struct flame_time *ft = pg->time;
	int64_t start_ms = pg->meta && pg->meta->start_unix_ns > 0 ? pg->meta->start_unix_ns / 1000000 : 0;

	if (!ft || (!ft->bucket_ms && !ft->omitted))
		return;
	if (ft->omitted) {
		fputs(",\n\"timeline\":{\"omitted\":true}", out);
		return;
	}
	fprintf(out, ",\n\"timeline\":{\"bucketMs\":%" PRIu64 ",\"buckets\":%" PRIu32 ",\"startMs\":%" PRId64
		",\"untimed\":%" PRIu64 ",\"cells\":[", ft->bucket_ms, ft->buckets, start_ms, ft->untimed);
	for (size_t i = 0; i < ft->nr; i++) {
		if (i % 4096 == 0 && ferror(out))
			return;
		fprintf(out, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu64, i ? (i % 8 ? "," : ",\n") : "", ft->cells[i].node,
			ft->cells[i].bucket, ft->cells[i].count);
	}
	fputs("]}", out);
}

/*
 * One page's data (see the header); with event, one event's among
 * several, which names itself and carries its own title and summary.
 */
static void write_data(FILE *out, const struct page *pg, const char *event)
{
	const struct flame_tree *t = pg->tree;
	size_t nr_frames = profile__frame_count(pg->profile) + t->nr_extra;
	const char *name;
	unsigned kind;

	fputc('{', out);
	if (event) {
		char line[512];

		summary_line(pg, line, sizeof(line));
		fputs("\"event\":", out);
		emit__json_string(out, event);
		fputs(",\"title\":", out);
		emit__json_string(out, pg->meta && pg->meta->title ? pg->meta->title : event);
		fputs(",\"summary\":[", out);
		emit__json_string(out, line);
		if (pg->meta && pg->meta->summary && *pg->meta->summary) {
			fputc(',', out);
			emit__json_string(out, pg->meta->summary);
		}
		fputs("],\n", out);
	}
	fprintf(out, "\"version\":1,\"unit\":");
	emit__json_string(out, page_unit(pg));
	fprintf(out, ",\"total\":%" PRIu64 ",\"diff\":%s", profile__total(pg->profile), pg->before ? "true" : "false");
	if (pg->before)
		fprintf(out, ",\"beforeTotal\":%" PRIu64, profile__total(pg->before));
	fputs(",\n\"kinds\":[", out);
	for (int k = 0; k < FRAME_KIND_NR; k++) {
		if (k)
			fputc(',', out);
		emit__json_string(out, profile__frame_kind_name((enum frame_kind)k));
	}
	fputs("],\n\"names\":[", out);
	for (size_t i = 0; i < nr_frames; i++) {
		if (i % 4096 == 0 && ferror(out))
			return; /* no use writing on into a failed stream */
		if (i)
			fputs(i % 16 ? "," : ",\n", out);
		page_frame(pg, i, &name, &kind);
		emit__json_string(out, name);
	}
	fputs("],\n\"frameKinds\":[", out);
	for (size_t i = 0; i < nr_frames; i++) {
		page_frame(pg, i, &name, &kind);
		fprintf(out, i ? ",%u" : "%u", kind);
	}
	fputs("],\n\"nodes\":[", out);
	for (size_t i = 0; i < t->nr; i++) {
		const struct flame_node *n = &t->nodes[i];

		if (i % 4096 == 0 && ferror(out))
			return;
		if (i)
			fputs(i % 8 ? "," : ",\n", out);
		if (n->frame == FLAME_ROOT_FRAME)
			fputs("-1", out);
		else
			fprintf(out, "%" PRIu32, n->frame);
		fprintf(out, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64, n->level, n->total, n->self);
	}
	fputc(']', out);
	if (pg->before) {
		fputs(",\n\"before\":[", out);
		for (size_t i = 0; i < t->nr; i++) {
			if (i % 4096 == 0 && ferror(out))
				return;
			if (i)
				fputs(i % 16 ? "," : ",\n", out);
			fprintf(out, "%" PRIu64, t->nodes[i].before);
		}
		fputc(']', out);
	}
	write_timeline(out, pg);
	fputc('}', out);
}

/* "Total: 12 samples · Duration: 1.0 s · Frequency: 99 Hz" (on a diff page "Before: ... · After: ..."). */
static void summary_line(const struct page *pg, char *buf, size_t size)
{
	const struct output_meta *meta = pg->meta;
	size_t used;

	if (pg->before)
		used = (size_t)snprintf(buf, size, "Before: %" PRIu64 " %s \xc2\xb7 After: %" PRIu64 " %s",
					profile__total(pg->before), page_unit(pg), profile__total(pg->profile), page_unit(pg));
	else
		used = (size_t)snprintf(buf, size, "Total: %" PRIu64 " %s", profile__total(pg->profile), page_unit(pg));
	if (meta && meta->duration_s > 0 && used < size)
		used += (size_t)snprintf(buf + used, size - used, " \xc2\xb7 Duration: %.1f s", meta->duration_s);
	if (meta && meta->frequency_hz && used < size)
		snprintf(buf + used, size - used, " \xc2\xb7 Frequency: %u Hz", meta->frequency_hz);
}

static void write_summary(FILE *out, const struct page *pg)
{
	const struct output_meta *meta = pg->meta;
	char line[512];

	summary_line(pg, line, sizeof(line));
	emit__html_text(out, line);
	if (meta && meta->summary && *meta->summary) {
		fputs("<br>", out);
		emit__html_text(out, meta->summary);
	}
}

/*
 * The page of pages[0..nr): one page's data as it is, several as
 * {"events":[...]}, each as write_data writes one event's.
 */
static void write_page(FILE *out, const struct page *pages, size_t nr)
{
	const struct page *pg = &pages[0];
	const struct output_meta *meta = pg->meta;
	const char *title = meta && meta->title && *meta->title ? meta->title
			    : pg->before ? "Differential flame graph" : "Flame graph";
	const char *p = jbpf_flamegraph_html;

	for (;;) {
		const char *open = strstr(p, "@@"), *close;
		size_t name_len;

		if (!open) {
			fputs(p, out);
			return;
		}
		close = strstr(open + 2, "@@");
		if (!close) {
			fputs(p, out);
			return;
		}
		fwrite(p, 1, (size_t)(open - p), out);
		name_len = (size_t)(close - open - 2);
		if (name_len == 5 && !memcmp(open + 2, "TITLE", 5)) {
			emit__html_text(out, title);
		} else if (name_len == 8 && !memcmp(open + 2, "TIMELINE", 8)) {
			fputs(jbpf_flamegraph_timeline_js, out);
		} else if (name_len == 7 && !memcmp(open + 2, "SUMMARY", 7)) {
			write_summary(out, pg);
		} else if (name_len == 4 && !memcmp(open + 2, "DATA", 4) && nr == 1) {
			write_data(out, pg, NULL);
		} else if (name_len == 4 && !memcmp(open + 2, "DATA", 4)) {
			fputs("{\"events\":[", out);
			for (size_t i = 0; i < nr; i++) {
				if (i)
					fputs(",\n", out);
				write_data(out, &pages[i], pages[i].meta->event);
			}
			fputs("]}", out);
		} else {
			/* Not a marker: keep the first "@@" and look again after it. */
			fwrite(open, 1, 2, out);
			p = open + 2;
			continue;
		}
		p = close + 2;
	}
}

static int page_write(const struct page *pages, size_t nr, FILE *out)
{
	emit__begin(out);
	write_page(out, pages, nr);
	return emit__finish(out);
}

int output__flamegraph_write(const struct profile *profile, const struct output_meta *meta, FILE *out)
{
	struct flame_tree t = { 0 };
	struct flame_time ft = { 0 };
	struct page pg = { .profile = profile, .meta = meta, .tree = &t, .time = &ft };
	int err = flame_tree__build(profile, &t);

	if (!err)
		err = flame_time__build(profile, &t, meta ? meta->duration_s : 0, &ft);
	if (!err)
		err = page_write(&pg, 1, out);
	flame_time__free(&ft);
	flame_tree__free(&t);
	return err;
}

int output__flamegraph_write_events(const struct profile *const *profiles, const struct output_meta *metas, size_t nr,
				   FILE *out)
{
	struct flame_tree trees[OUTPUT_MAX_EVENTS] = { 0 };
	struct flame_time times[OUTPUT_MAX_EVENTS] = { 0 };
	struct page pages[OUTPUT_MAX_EVENTS];
	int err = nr && nr <= OUTPUT_MAX_EVENTS ? 0 : -EINVAL;

	for (size_t i = 0; !err && i < nr; i++) {
		pages[i] = (struct page){ .profile = profiles[i], .meta = &metas[i], .tree = &trees[i], .time = &times[i] };
		err = flame_tree__build(profiles[i], &trees[i]);
		if (!err)
			err = flame_time__build(profiles[i], &trees[i], metas[i].duration_s, &times[i]);
	}
	if (!err)
		err = page_write(pages, nr, out);
	for (size_t i = 0; i < nr && i < OUTPUT_MAX_EVENTS; i++) {
		flame_time__free(&times[i]);
		flame_tree__free(&trees[i]);
	}
	return err;
}

int output__flamegraph_diff_write(const struct profile *before, const struct profile *after,
				 const struct output_meta *meta, FILE *out)
{
	struct flame_tree t = { 0 };
	struct page pg = { .profile = after, .before = before, .meta = meta, .tree = &t };
	int err = flame_tree__diff(before, after, &t);

	if (!err)
		err = page_write(&pg, 1, out);
	flame_tree__free(&t);
	return err;
}
