/*
 * flametree: call trees for flame graphs (contract in flametree.h).
 *
 * A tree is built without a hash table: stacks are sorted by the names of
 * their frames, root first, so consecutive stacks share their longest common
 * prefix and each new node is appended exactly where preorder wants it.
 *
 * A diff tree is a merge of two such trees. Both list each node's children
 * in the same order, (name, kind), so the children of two matching nodes are
 * matched like the lines of two sorted files: one pass, no lookups. Frames
 * are compared by name and kind, never by id, since the two profiles intern
 * their frames independently.
 */
#include "flametree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int tree_append(struct flame_tree *t, struct flame_node node)
{
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct flame_node *n;

		if (ncap > SIZE_MAX / sizeof(*n))
			return -ENOMEM;
		n = realloc(t->nodes, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->nodes = n;
		t->cap = ncap;
	}
	t->nodes[t->nr++] = node;
	return 0;
}

struct order_ctx {
	const struct profile *profile;
	const uint32_t *rank; /* frame id -> position in name order */
};

/* The order of siblings: name, then kind. Frames of different profiles compare alike. */
static int frame_order(const struct profile *pa, uint32_t fa, const struct profile *pb, uint32_t fb)
{
	int c = strcmp(profile__frame_name(pa, fa), profile__frame_name(pb, fb));

	if (c)
		return c;
	return (int)profile__frame_kind(pa, fa) - (int)profile__frame_kind(pb, fb);
}

static int frame_compare(const void *a, const void *b, void *arg)
{
	const struct profile *profile = arg;

	return frame_order(profile, *(const uint32_t *)a, profile, *(const uint32_t *)b);
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

int flame_tree__build(const struct profile *profile, struct flame_tree *t)
{
	size_t nr = profile__stack_count(profile), max_depth = 0;
	size_t *order = malloc((nr ? nr : 1) * sizeof(*order));
	size_t *path = NULL; /* path[l]: node at level l of the previous stack */
	uint32_t *rank = rank_frames(profile);
	const uint32_t *prev = NULL;
	size_t prev_depth = 0;
	int err = -ENOMEM;

	t->stack_node = malloc((nr ? nr : 1) * sizeof(*t->stack_node));
	if (!order || !rank || !t->stack_node)
		goto out;
	t->nr_stacks = nr;
	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;

		t->stack_node[i] = FLAME_NO_NODE;
		profile__stack(profile, i, &depth, &count);
		if (depth > max_depth)
			max_depth = depth;
		order[i] = i;
	}
	path = malloc((max_depth + 1) * sizeof(*path));
	if (!path)
		goto out;
	qsort_r(order, nr, sizeof(*order), stack_compare, &(struct order_ctx){ profile, rank });

	err = tree_append(t, (struct flame_node){ .frame = FLAME_ROOT_FRAME });
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
			err = tree_append(t, (struct flame_node){ .frame = frames[l], .level = (uint32_t)(l + 1) });
			if (err)
				goto out;
			path[l + 1] = t->nr - 1;
		}
		for (size_t l = 0; l <= depth; l++)
			t->nodes[path[l]].total += count;
		t->nodes[path[depth]].self += count;
		t->stack_node[order[i]] = (uint32_t)path[depth];
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

/* end[i]: one past the last node of i's subtree. */
static size_t *subtree_ends(const struct flame_tree *t)
{
	size_t *end = malloc((t->nr ? t->nr : 1) * sizeof(*end));
	size_t *open = malloc((t->nr ? t->nr : 1) * sizeof(*open)), nr_open = 0;

	if (!end || !open) {
		free(end);
		free(open);
		return NULL;
	}
	for (size_t i = 0; i < t->nr; i++) {
		while (nr_open && t->nodes[open[nr_open - 1]].level >= t->nodes[i].level)
			end[open[--nr_open]] = i;
		open[nr_open++] = i;
	}
	while (nr_open)
		end[open[--nr_open]] = t->nr;
	free(open);
	return end;
}

#define NO_NODE SIZE_MAX

struct diff_ctx {
	const struct profile *before, *after;
	const struct flame_tree *b, *a;
	const size_t *b_end, *a_end;
	uint32_t *extra_id; /* BEFORE frame id -> its id in the diff tree, or UINT32_MAX */
	struct flame_tree *out;
};

/* The diff tree's id for BEFORE's frame: a new id past AFTER's on first use. */
static int extra_frame(struct diff_ctx *ctx, uint32_t before_frame, uint32_t *id)
{
	struct flame_tree *t = ctx->out;

	if (ctx->extra_id[before_frame] == UINT32_MAX) {
		if (t->nr_extra == t->cap_extra) {
			size_t ncap = t->cap_extra ? t->cap_extra * 2 : 256;
			uint32_t *n = realloc(t->extra, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			t->extra = n;
			t->cap_extra = ncap;
		}
		t->extra[t->nr_extra] = before_frame;
		ctx->extra_id[before_frame] = (uint32_t)(profile__frame_count(ctx->after) + t->nr_extra);
		t->nr_extra++;
	}
	*id = ctx->extra_id[before_frame];
	return 0;
}

/*
 * Appends the node for AFTER's node ai and BEFORE's node bi (either may be
 * NO_NODE, not both), then its children, matched by (name, kind).
 * Recursion is as deep as the deepest stack, which the profile bounds
 * (profile_limits.max_depth).
 */
static int diff_merge(struct diff_ctx *ctx, size_t ai, size_t bi)
{
	const struct flame_node *an = ai != NO_NODE ? &ctx->a->nodes[ai] : NULL;
	const struct flame_node *bn = bi != NO_NODE ? &ctx->b->nodes[bi] : NULL;
	struct flame_node node = { .level = an ? an->level : bn->level };
	size_t ca = 0, a_stop = 0, cb = 0, b_stop = 0;
	int err;

	if (an) {
		node.frame = an->frame;
		node.total = an->total;
		node.self = an->self;
		ca = ai + 1;
		a_stop = ctx->a_end[ai];
	} else {
		err = extra_frame(ctx, bn->frame, &node.frame);
		if (err)
			return err;
	}
	if (bn) {
		node.before = bn->total;
		cb = bi + 1;
		b_stop = ctx->b_end[bi];
	}
	err = tree_append(ctx->out, node);
	while (!err && (ca < a_stop || cb < b_stop)) {
		int c;

		if (ca >= a_stop)
			c = 1;
		else if (cb >= b_stop)
			c = -1;
		else
			c = frame_order(ctx->after, ctx->a->nodes[ca].frame, ctx->before, ctx->b->nodes[cb].frame);
		if (c < 0) {
			err = diff_merge(ctx, ca, NO_NODE);
			ca = ctx->a_end[ca];
		} else if (c > 0) {
			err = diff_merge(ctx, NO_NODE, cb);
			cb = ctx->b_end[cb];
		} else {
			err = diff_merge(ctx, ca, cb);
			ca = ctx->a_end[ca];
			cb = ctx->b_end[cb];
		}
	}
	return err;
}

int flame_tree__diff(const struct profile *before, const struct profile *after, struct flame_tree *tree)
{
	struct flame_tree a = { 0 }, b = { 0 };
	size_t nr_before = profile__frame_count(before);
	struct diff_ctx ctx = { .before = before, .after = after, .a = &a, .b = &b, .out = tree };
	size_t *a_end = NULL, *b_end = NULL;
	int err;

	err = flame_tree__build(after, &a);
	if (!err)
		err = flame_tree__build(before, &b);
	if (err)
		goto out;
	err = -ENOMEM;
	a_end = subtree_ends(&a);
	b_end = subtree_ends(&b);
	ctx.extra_id = malloc((nr_before ? nr_before : 1) * sizeof(*ctx.extra_id));
	if (!a_end || !b_end || !ctx.extra_id)
		goto out;
	memset(ctx.extra_id, 0xff, (nr_before ? nr_before : 1) * sizeof(*ctx.extra_id));
	ctx.a_end = a_end;
	ctx.b_end = b_end;
	/* Both roots are node 0, the root, which always matches. */
	err = diff_merge(&ctx, 0, 0);
out:
	free(ctx.extra_id);
	free(a_end);
	free(b_end);
	flame_tree__free(&a);
	flame_tree__free(&b);
	return err;
}

void flame_tree__free(struct flame_tree *tree)
{
	free(tree->nodes);
	free(tree->extra);
	free(tree->stack_node);
	*tree = (struct flame_tree){ 0 };
}
