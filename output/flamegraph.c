/*
 * flamegraph: one self-contained HTML page that draws the profile.
 *
 * The page itself (markup, style, script) is output/flamegraph.html,
 * embedded into the binary below with .incbin so that it can be edited and
 * opened as an ordinary file. This code copies it to the output and replaces
 * its markers:
 *
 *   @@TITLE@@    the title, HTML-escaped
 *   @@SUMMARY@@  duration, frequency, total and meta->summary, HTML-escaped
 *   @@DATA@@     the profile as JSON, inside <script type="application/json">
 *
 * The JSON holds a frame table and the merged call tree:
 *
 *   {"version":1, "unit":"samples", "total":N,
 *    "kinds":["native","kernel",...],      frame_kind_name() of each kind
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
 * The tree is built without a hash table: stacks are sorted by the names of
 * their frames, root first, so consecutive stacks share their longest common
 * prefix and each new node is appended exactly where preorder wants it.
 * Each name goes through emit__json_string, so no frame name can end the
 * script element or break the JSON.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/*
 * The page, NUL-terminated. The assembler resolves the path from the
 * directory the compiler runs in, the repository root.
 */
__asm__(".section .rodata\n"
	".global jbpf_flamegraph_html\n"
	"jbpf_flamegraph_html:\n"
	".incbin \"output/flamegraph.html\"\n"
	".byte 0\n"
	".previous\n");
extern const char jbpf_flamegraph_html[];

#define ROOT_FRAME UINT32_MAX

struct node {
	uint32_t frame; /* ROOT_FRAME for the root */
	uint32_t level;
	uint64_t total;
	uint64_t self;
};

struct tree {
	struct node *nodes;
	size_t nr, cap;
};

static int tree_append(struct tree *t, uint32_t frame, uint32_t level)
{
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct node *n;

		if (ncap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(t->nodes, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nodes = n;
		t->cap = ncap;
	}
	t->nodes[t->nr++] = (struct node){ .frame = frame, .level = level };
	return 0;
}

struct order_ctx {
	const struct profile *profile;
	const uint32_t *rank; /* frame id -> position in name order */
};

static int frame_compare(const void *a, const void *b, void *arg)
{
	const struct profile *profile = arg;
	uint32_t fa = *(const uint32_t *)a, fb = *(const uint32_t *)b;
	int c = strcmp(profile__frame_name(profile, fa), profile__frame_name(profile, fb));

	if (c)
		return c;
	return (int)profile__frame_kind(profile, fa) - (int)profile__frame_kind(profile, fb);
}

static int stack_compare(const void *a, const void *b, void *arg)
{
	const struct order_ctx *ctx = arg;
	size_t da, db;
	uint64_t ca, cb;
	const uint32_t *sa = profile__stack(ctx->profile, *(const size_t *)a, &da, &ca);
	const uint32_t *sb = profile__stack(ctx->profile, *(const size_t *)b, &db, &cb);

	for (size_t i = 0; i < da && i < db; i++) {
		uint32_t ra = ctx->rank[sa[i]], rb = ctx->rank[sb[i]];

		if (ra != rb)
			return ra < rb ? -1 : 1;
	}
	return da < db ? -1 : da > db;
}

/* rank[frame]: frames ordered by name, then kind, so children come out sorted. */
static uint32_t *rank_frames(const struct profile *profile)
{
	size_t nr = profile__frame_count(profile);
	uint32_t *by_name = malloc((nr ? nr : 1) * sizeof(*by_name));
	uint32_t *rank = malloc((nr ? nr : 1) * sizeof(*rank));

	if (!by_name || !rank) {
		free(by_name);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++)
		by_name[i] = (uint32_t)i;
	qsort_r(by_name, nr, sizeof(*by_name), frame_compare, (void *)profile);
	for (size_t i = 0; i < nr; i++)
		rank[by_name[i]] = (uint32_t)i;
	free(by_name);
	return rank;
}

static int build_tree(const struct profile *profile, struct tree *t)
{
	size_t nr = profile__stack_count(profile), max_depth = 0;
	size_t *order = malloc((nr ? nr : 1) * sizeof(*order));
	size_t *path = NULL; /* path[l]: node at level l of the previous stack */
	uint32_t *rank = rank_frames(profile);
	const uint32_t *prev = NULL;
	size_t prev_depth = 0;
	int err = -ENOMEM;

	if (!order || !rank)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;

		profile__stack(profile, i, &depth, &count);
		if (depth > max_depth)
			max_depth = depth;
		order[i] = i;
	}
	path = malloc((max_depth + 1) * sizeof(*path));
	if (!path)
		goto out;
	qsort_r(order, nr, sizeof(*order), stack_compare, &(struct order_ctx){ profile, rank });

	err = tree_append(t, ROOT_FRAME, 0);
	if (err)
		goto out;
	path[0] = 0;
	for (size_t i = 0; i < nr; i++) {
		size_t depth, common = 0;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, order[i], &depth, &count);

		/* A stack whose count was never settled (see profile__add_indexed) is not drawn. */
		if (!count)
			continue;
		while (common < depth && common < prev_depth && frames[common] == prev[common])
			common++;
		for (size_t l = common; l < depth; l++) {
			err = tree_append(t, frames[l], (uint32_t)(l + 1));
			if (err)
				goto out;
			path[l + 1] = t->nr - 1;
		}
		for (size_t l = 0; l <= depth; l++)
			t->nodes[path[l]].total += count;
		t->nodes[path[depth]].self += count;
		prev = frames;
		prev_depth = depth;
	}
	err = 0;
out:
	free(path);
	free(rank);
	free(order);
	return err;
}

static void write_data(FILE *out, const struct profile *profile, const struct output_meta *meta,
		       const struct tree *t)
{
	size_t nr_frames = profile__frame_count(profile);

	fprintf(out, "{\"version\":1,\"unit\":");
	emit__json_string(out, meta && meta->unit ? meta->unit : "samples");
	fprintf(out, ",\"total\":%" PRIu64 ",\n\"kinds\":[", profile__total(profile));
	for (int k = 0; k < FRAME_KIND_NR; k++) {
		if (k)
			fputc(',', out);
		emit__json_string(out, frame_kind_name((enum frame_kind)k));
	}
	fputs("],\n\"names\":[", out);
	for (size_t i = 0; i < nr_frames; i++) {
		if (i % 4096 == 0 && ferror(out))
			return; /* no use writing on into a failed stream */
		if (i)
			fputs(i % 16 ? "," : ",\n", out);
		emit__json_string(out, profile__frame_name(profile, (uint32_t)i));
	}
	fputs("],\n\"frameKinds\":[", out);
	for (size_t i = 0; i < nr_frames; i++) {
		unsigned kind = profile__frame_kind(profile, (uint32_t)i);

		fprintf(out, i ? ",%u" : "%u", kind < FRAME_KIND_NR ? kind : FRAME_KIND_LOST);
	}
	fputs("],\n\"nodes\":[", out);
	for (size_t i = 0; i < t->nr; i++) {
		const struct node *n = &t->nodes[i];

		if (i % 4096 == 0 && ferror(out))
			return;
		if (i)
			fputs(i % 8 ? "," : ",\n", out);
		if (n->frame == ROOT_FRAME)
			fputs("-1", out);
		else
			fprintf(out, "%" PRIu32, n->frame);
		fprintf(out, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64, n->level, n->total, n->self);
	}
	fputs("]}", out);
}

static void write_summary(FILE *out, const struct profile *profile, const struct output_meta *meta)
{
	const char *unit = meta && meta->unit ? meta->unit : "samples";

	fprintf(out, "Total: %" PRIu64 " ", profile__total(profile));
	emit__html_text(out, unit);
	if (meta && meta->duration_s > 0)
		fprintf(out, " &middot; Duration: %.1f s", meta->duration_s);
	if (meta && meta->frequency_hz)
		fprintf(out, " &middot; Frequency: %u Hz", meta->frequency_hz);
	if (meta && meta->summary && *meta->summary) {
		fputs("<br>", out);
		emit__html_text(out, meta->summary);
	}
}

static void write_page(FILE *out, const struct profile *profile, const struct output_meta *meta,
		       const struct tree *t)
{
	const char *title = meta && meta->title && *meta->title ? meta->title : "Flame graph";
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
		} else if (name_len == 7 && !memcmp(open + 2, "SUMMARY", 7)) {
			write_summary(out, profile, meta);
		} else if (name_len == 4 && !memcmp(open + 2, "DATA", 4)) {
			write_data(out, profile, meta, t);
		} else {
			/* Not a marker: keep the first "@@" and look again after it. */
			fwrite(open, 1, 2, out);
			p = open + 2;
			continue;
		}
		p = close + 2;
	}
}

int output_flamegraph_write(const struct profile *profile, const struct output_meta *meta, FILE *out)
{
	struct tree t = { 0 };
	int err = build_tree(profile, &t);

	if (!err) {
		emit__begin(out);
		write_page(out, profile, meta, &t);
		err = emit__finish(out);
	}
	free(t.nodes);
	return err;
}
