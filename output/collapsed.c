/*
 * collapsed: the "folded stacks" text every flame graph tool reads.
 *
 *   root;caller;...;leaf COUNT
 *
 * One line per stack, frames root first, the count after the last space.
 * Lines are sorted bytewise (as strcmp orders them) so that two runs over
 * the same profile give the same file, and diffs between files line up.
 *
 * Names are written as the profile stores them, with two substitutions that
 * keep every line parseable whatever the target's symbol tables hold:
 *
 *   ';'                      becomes ','  (it would split the frame)
 *   bytes 0x00-0x1F and 0x7F become '?'  (a newline would split the line)
 *
 * Spaces stay: a reader takes the count after the last space. After these
 * substitutions two different stacks can print the same text (names that
 * differed only in a ';', or the same name with two kinds, a distinction
 * this format cannot show); such lines are merged into one with the sum of
 * their counts, so every line of the file names a different stack. A stack
 * with no frames prints nothing.
 *
 * Lines are never built in memory: a profile can hold millions of deep
 * stacks. Sorting compares the text of two lines through a cursor that
 * walks the sanitised frame names of each stack.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

struct line {
	const uint32_t *frames;
	size_t depth;
	uint64_t count;
};

/* Walks the bytes of one line: names joined by ';', then " COUNT" if asked. */
struct cursor {
	const char *const *names; /* sanitised name of each frame id */
	const struct line *line;
	size_t next;              /* index of the frame after the current one */
	const char *p;            /* position in the current name, or in tail */
	int with_count, in_tail;
	char tail[24];            /* " COUNT", formatted only when reached */
};

/*
 * Starts c at frame `from` of the line. Equal frame ids print equal text,
 * so a comparison can skip the frames two lines share and start here: at
 * the name of frame 0, or at the ';' before frame `from`.
 */
static void cursor_init(struct cursor *c, const char *const *names, const struct line *l,
			size_t from, int with_count)
{
	c->names = names;
	c->line = l;
	c->with_count = with_count;
	c->in_tail = 0;
	if (from == 0) {
		c->p = names[l->frames[0]];
		c->next = 1;
	} else {
		c->p = "";
		c->next = from;
	}
}

/* The next byte of the line, or -1 at its end. */
static int cursor_next(struct cursor *c)
{
	if (*c->p)
		return (unsigned char)*c->p++;
	if (c->in_tail)
		return -1;
	if (c->next < c->line->depth) {
		c->p = c->names[c->line->frames[c->next++]];
		return ';';
	}
	c->in_tail = 1;
	if (!c->with_count)
		return -1;
	snprintf(c->tail, sizeof(c->tail), " %" PRIu64, c->line->count);
	c->p = c->tail + 1;
	return ' ';
}

struct sort_ctx {
	const char *const *names;
	int with_count;
};

static int line_compare(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;
	const struct line *la = a, *lb = b;
	struct cursor ca, cb;
	size_t same = 0;

	while (same < la->depth && same < lb->depth && la->frames[same] == lb->frames[same])
		same++;
	cursor_init(&ca, ctx->names, la, same, ctx->with_count);
	cursor_init(&cb, ctx->names, lb, same, ctx->with_count);
	for (;;) {
		int x, y;

		/* Inside two names: the common case, kept out of cursor_next. */
		while (*ca.p && *ca.p == *cb.p) {
			ca.p++;
			cb.p++;
		}
		x = cursor_next(&ca);
		y = cursor_next(&cb);

		if (x != y)
			return x < y ? -1 : 1;
		if (x < 0)
			return 0;
	}
}

static int needs_sanitising(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';' || c < 0x20 || c == 0x7F)
			return 1;
	}
	return 0;
}

static char *sanitised_copy(const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == ';')
			*p = ',';
		else if (c < 0x20 || c == 0x7F)
			*p = '?';
	}
	return copy;
}

/*
 * names[i] is frame i's name as printed: the profile's own string, or a
 * sanitised copy listed in owned[] so it can be freed.
 */
static int build_names(const struct profile *profile, const char ***names_out, char ***owned_out,
		       size_t *nr_owned)
{
	size_t nr = profile__frame_count(profile);
	const char **names = calloc(nr ? nr : 1, sizeof(*names));
	char **owned = calloc(nr ? nr : 1, sizeof(*owned));

	*nr_owned = 0;
	if (!names || !owned)
		goto nomem;
	for (size_t i = 0; i < nr; i++) {
		const char *name = profile__frame_name(profile, (uint32_t)i);

		if (needs_sanitising(name)) {
			owned[*nr_owned] = sanitised_copy(name);
			if (!owned[*nr_owned])
				goto nomem;
			name = owned[(*nr_owned)++];
		}
		names[i] = name;
	}
	*names_out = names;
	*owned_out = owned;
	return 0;
nomem:
	for (size_t i = 0; owned && i < *nr_owned; i++)
		free(owned[i]);
	free(owned);
	free(names);
	return -ENOMEM;
}

static void write_line(FILE *out, const char *const *names, const struct line *l)
{
	for (size_t i = 0; i < l->depth; i++) {
		if (i)
			fputc(';', out);
		fputs(names[l->frames[i]], out);
	}
	fprintf(out, " %" PRIu64 "\n", l->count);
}

int output__collapsed_write(const struct profile *profile, FILE *out)
{
	size_t nr_stacks = profile__stack_count(profile), nr_lines = 0, nr_owned = 0;
	struct line *lines = calloc(nr_stacks ? nr_stacks : 1, sizeof(*lines));
	const char **names = NULL;
	char **owned = NULL;
	struct sort_ctx ctx;
	int err;

	if (!lines)
		return -ENOMEM;
	err = build_names(profile, &names, &owned, &nr_owned);
	if (err) {
		free(lines);
		return err;
	}
	for (size_t i = 0; i < nr_stacks; i++) {
		struct line *l = &lines[nr_lines];

		l->frames = profile__stack(profile, i, &l->depth, &l->count);
		/* A stack whose count was never settled (see profile__add_indexed) is not written. */
		if (l->depth && l->count)
			nr_lines++;
	}

	/* Group equal texts, merge each group, then order by the full line. */
	ctx.names = names;
	ctx.with_count = 0;
	qsort_r(lines, nr_lines, sizeof(*lines), line_compare, &ctx);
	size_t merged = 0;

	for (size_t i = 0; i < nr_lines; i++) {
		if (merged && !line_compare(&lines[merged - 1], &lines[i], &ctx))
			lines[merged - 1].count += lines[i].count;
		else
			lines[merged++] = lines[i];
	}
	/*
	 * The full lines are out of that order only where a text is a prefix
	 * of another followed by a space (" 12" against " x..."): rare, so
	 * check before sorting again.
	 */
	ctx.with_count = 1;
	for (size_t i = 1; i < merged; i++) {
		if (line_compare(&lines[i - 1], &lines[i], &ctx) > 0) {
			qsort_r(lines, merged, sizeof(*lines), line_compare, &ctx);
			break;
		}
	}

	emit__begin(out);
	for (size_t i = 0; i < merged && !ferror(out); i++)
		write_line(out, names, &lines[i]);

	for (size_t i = 0; i < nr_owned; i++)
		free(owned[i]);
	free(owned);
	free(names);
	free(lines);
	return emit__finish(out);
}
