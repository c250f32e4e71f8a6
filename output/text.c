/*
 * text: a report for a terminal, the quickest answer to "where did the
 * time go".
 *
 *   title
 *   Duration: 30.0 s   Frequency: 99 Hz   Total: 2970 samples
 *   summary
 *
 *   Processes by samples              (when stacks begin with a process)
 *     COUNT  PERCENT  PROCESS
 *      2010   67.68%  org.example.Main (java, pid 12)
 *   ...
 *   Allocation sites by bytes         (when stacks end in a class allocated,
 *                                      or, in native memory, in malloc or its kin)
 *     COUNT  PERCENT  SITE
 *   ...
 *   Top 30 functions by self samples
 *     SELF  PERCENT  FUNCTION
 *     1234   41.55%  crc32_z
 *   ...
 *   Top 30 functions by total samples
 *   ...
 *   Top 10 wakers by microseconds      (with --wakers)
 *     COUNT  PERCENT
 *      2001   50.30%  waits in  pthread_cond_wait < wait_ready < waiter < ...
 *                     woken by  pthread_cond_signal < signal_ready < ...
 *   ...
 *
 * A function is a frame name: frames with the same name and different kinds
 * (a Java method seen both interpreted and compiled, say) are one row.
 * Process, thread and state frames are not functions: a wall-clock
 * stack's self time goes to its innermost function, not to "[sleeping]".
 * Self counts the samples whose stack ends in the function; total those
 * whose stack contains it anywhere, each sample once even when the
 * function recurses, so a total never exceeds 100%. Percentages are of the
 * profile's total. In an allocation profile the class frames are the
 * functions (so the self table is by class), and the sites table counts
 * each stack under the frame that allocated. A wait joined with its waker
 * (--wakers) counts in the function tables by its own frames only; the
 * wakers table lists the most counted waits with their wakers, each by
 * its innermost frames that are not the kernel's (WAKER_FRAMES of each:
 * where it waited, and from where it was woken). Rows with a count of zero
 * are left out; ties are broken by name so the report is the same on
 * every run.
 *
 * Names are printed in full, never cut, in the last column so that long
 * C++ and Java names do not break the alignment. Control characters in
 * names become '?' (see emit.h): a name must not be able to move the
 * cursor or retitle the terminal.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

#define DEFAULT_TOP 30

struct function {
	const char *name;
	uint64_t self;
	uint64_t total;
	size_t last_stack; /* stack number + 1 that last added to total */
};

struct functions {
	struct function *items;
	size_t nr;
	uint32_t *of_frame; /* frame id -> index in items */
};

static int frame_name_compare(const void *a, const void *b, void *arg)
{
	const struct profile *profile = arg;

	return strcmp(profile__frame_name(profile, *(const uint32_t *)a),
		      profile__frame_name(profile, *(const uint32_t *)b));
}

/*
 * The frames that name code, or stand for code that could not be read:
 * not the process, thread and state frames around a stack, which are not
 * places in a program.
 */
static bool is_function(enum frame_kind kind)
{
	return kind != FRAME_KIND_PROCESS && kind != FRAME_KIND_THREAD && kind != FRAME_KIND_STATE &&
	       kind != FRAME_KIND_WAKER_PROCESS && kind != FRAME_KIND_WAKER_THREAD;
}

/* A stack's own frames: those before its waker's (--wakers), if it has one. */
static size_t own_depth(const struct profile *profile, const uint32_t *frames, size_t depth)
{
	for (size_t d = 0; d < depth; d++)
		if (profile__frame_kind(profile, frames[d]) == FRAME_KIND_WAKER)
			return d;
	return depth;
}

/* Groups frames by name; each group becomes one function. */
static int functions_build(const struct profile *profile, struct functions *fns)
{
	size_t nr_frames = profile__frame_count(profile);
	uint32_t *by_name = malloc((nr_frames ? nr_frames : 1) * sizeof(*by_name));

	fns->nr = 0;
	fns->items = calloc(nr_frames ? nr_frames : 1, sizeof(*fns->items));
	fns->of_frame = malloc((nr_frames ? nr_frames : 1) * sizeof(*fns->of_frame));
	if (!by_name || !fns->items || !fns->of_frame) {
		free(by_name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr_frames; i++)
		by_name[i] = (uint32_t)i;
	qsort_r(by_name, nr_frames, sizeof(*by_name), frame_name_compare, (void *)profile);
	for (size_t i = 0; i < nr_frames; i++) {
		const char *name = profile__frame_name(profile, by_name[i]);

		if (!fns->nr || strcmp(fns->items[fns->nr - 1].name, name))
			fns->items[fns->nr++].name = name;
		fns->of_frame[by_name[i]] = (uint32_t)(fns->nr - 1);
	}
	free(by_name);

	for (size_t s = 0; s < profile__stack_count(profile); s++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, s, &depth, &count);
		size_t leaf;

		depth = own_depth(profile, frames, depth);
		leaf = depth;
		if (!depth || !count)
			continue;
		while (leaf > 0 && !is_function(profile__frame_kind(profile, frames[leaf - 1])))
			leaf--;
		if (leaf)
			fns->items[fns->of_frame[frames[leaf - 1]]].self += count;
		for (size_t d = 0; d < depth; d++) {
			struct function *f = &fns->items[fns->of_frame[frames[d]]];

			if (!is_function(profile__frame_kind(profile, frames[d])))
				continue;

			if (f->last_stack != s + 1) {
				f->last_stack = s + 1;
				f->total += count;
			}
		}
	}
	return 0;
}

static void functions_free(struct functions *fns)
{
	free(fns->items);
	free(fns->of_frame);
}

static int compare_counts(uint64_t a, uint64_t b, const char *name_a, const char *name_b)
{
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(name_a, name_b);
}

static int by_self(const void *a, const void *b)
{
	const struct function *fa = *(struct function *const *)a, *fb = *(struct function *const *)b;

	return compare_counts(fa->self, fb->self, fa->name, fb->name);
}

static int by_total(const void *a, const void *b)
{
	const struct function *fa = *(struct function *const *)a, *fb = *(struct function *const *)b;

	return compare_counts(fa->total, fb->total, fa->name, fb->name);
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int decimal_width(uint64_t v)
{
	int w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

static void write_table(FILE *out, const struct functions *fns, struct function **sorted, size_t top,
			int use_total, const char *unit, uint64_t grand_total)
{
	const char *column = use_total ? "TOTAL" : "SELF";
	size_t rows = 0;
	int width = (int)strlen(column);

	qsort(sorted, fns->nr, sizeof(*sorted), use_total ? by_total : by_self);
	while (rows < top && rows < fns->nr && (use_total ? sorted[rows]->total : sorted[rows]->self))
		rows++;
	for (size_t i = 0; i < rows; i++) {
		int w = decimal_width(use_total ? sorted[i]->total : sorted[i]->self);

		if (w > width)
			width = w;
	}

	fprintf(out, "\nTop %zu functions by %s ", top, use_total ? "total" : "self");
	emit__terminal(out, unit);
	fputc('\n', out);
	if (!rows) {
		fputs("  (none)\n", out);
		return;
	}
	fprintf(out, "  %*s  %7s  FUNCTION\n", width, column, "PERCENT");
	for (size_t i = 0; i < rows; i++) {
		uint64_t v = use_total ? sorted[i]->total : sorted[i]->self;

		fprintf(out, "  %*" PRIu64 "  %6.2f%%  ", width, v, percent(v, grand_total));
		emit__terminal(out, sorted[i]->name);
		fputc('\n', out);
	}
}

struct process_row {
	uint32_t frame;
	uint64_t count;
};

static int by_count(const void *a, const void *b, void *arg)
{
	const struct process_row *ra = a, *rb = b;

	return compare_counts(ra->count, rb->count, profile__frame_name(arg, ra->frame),
			      profile__frame_name(arg, rb->frame));
}

/* The frame a table counts a stack under, or -1 for a stack it leaves out. */
typedef int64_t (*row_of_fn)(const struct profile *profile, const uint32_t *frames, size_t depth);

/* A stack that begins with a process frame: that frame. */
static int64_t process_of(const struct profile *profile, const uint32_t *frames, size_t depth)
{
	return depth && profile__frame_kind(profile, frames[0]) == FRAME_KIND_PROCESS ? (int64_t)frames[0] : -1;
}

/* An allocation's stack (ending in the class allocated): the frame that allocated it. */
static int64_t site_of(const struct profile *profile, const uint32_t *frames, size_t depth)
{
	if (depth < 2 || profile__frame_kind(profile, frames[depth - 1]) != FRAME_KIND_CLASS)
		return -1;
	return frames[depth - 2];
}

/* A native allocation's stack (ending in malloc or its kin): the frame that called it. */
static int64_t caller_of(const struct profile *profile, const uint32_t *frames, size_t depth)
{
	(void)profile;
	return depth < 2 ? -1 : (int64_t)frames[depth - 2];
}

/*
 * A table of the frames row_of picks, most counted first, under heading
 * ("Processes by") and column ("PROCESS"); nothing when it picks none.
 */
static int write_rows(FILE *out, const struct profile *profile, size_t top, const char *unit, uint64_t grand_total,
		      row_of_fn row_of, const char *heading, const char *column, const char *others)
{
	size_t nr_frames = profile__frame_count(profile), nr = 0, width = strlen("COUNT");
	uint64_t *counts = calloc(nr_frames ? nr_frames : 1, sizeof(*counts)), rest = 0;
	struct process_row *rows;

	if (!counts)
		return -ENOMEM;
	for (size_t i = 0; i < profile__stack_count(profile); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, i, &depth, &count);
		int64_t row = row_of(profile, frames, depth);

		if (row >= 0 && (size_t)row < nr_frames)
			counts[row] += count;
	}
	rows = malloc((nr_frames ? nr_frames : 1) * sizeof(*rows));
	if (!rows) {
		free(counts);
		return -ENOMEM;
	}
	for (size_t f = 0; f < nr_frames; f++)
		if (counts[f])
			rows[nr++] = (struct process_row){ .frame = (uint32_t)f, .count = counts[f] };
	free(counts);
	if (nr) {
		qsort_r(rows, nr, sizeof(*rows), by_count, (void *)profile);
		for (size_t i = top; i < nr; i++)
			rest += rows[i].count;
		if (nr > top)
			nr = top;
		for (size_t i = 0; i < nr; i++)
			if ((size_t)decimal_width(rows[i].count) > width)
				width = (size_t)decimal_width(rows[i].count);
		fprintf(out, "\n%s ", heading);
		emit__terminal(out, unit);
		fprintf(out, "\n  %*s  %7s  %s\n", (int)width, "COUNT", "PERCENT", column);
		for (size_t i = 0; i < nr; i++) {
			fprintf(out, "  %*" PRIu64 "  %6.2f%%  ", (int)width, rows[i].count,
				percent(rows[i].count, grand_total));
			emit__terminal(out, profile__frame_name(profile, rows[i].frame));
			fputc('\n', out);
		}
		if (rest)
			fprintf(out, "  %*" PRIu64 "  %6.2f%%  (%s)\n", (int)width, rest, percent(rest, grand_total),
				others);
	}
	free(rows);
	return 0;
}

/* Frames of a waiting stack, and of its waker, that the wakers table shows. */
#define WAKER_FRAMES 5
#define WAKER_ROWS 10

static bool is_kernel_frame(const struct profile *profile, uint32_t frame)
{
	const char *name = profile__frame_name(profile, frame);
	size_t len = strlen(name);

	return profile__frame_kind(profile, frame) == FRAME_KIND_KERNEL ||
	       (len > 4 && !strcmp(name + len - 4, "_[k]"));
}

/*
 * Up to WAKER_FRAMES frames, not the kernel's, walking frames from `from`
 * by step (+1 or -1) while within [lo, hi), joined by " < " (each called
 * by the next), after label.
 */
static void write_frames(FILE *out, const struct profile *profile, const uint32_t *frames, ptrdiff_t from,
			 ptrdiff_t step, ptrdiff_t lo, ptrdiff_t hi, const char *label)
{
	int shown = 0;

	fprintf(out, "%s", label);
	for (ptrdiff_t d = from; d >= lo && d < hi && shown < WAKER_FRAMES; d += step) {
		enum frame_kind kind = profile__frame_kind(profile, frames[d]);

		if (is_kernel_frame(profile, frames[d]) || !is_function(kind))
			continue;
		fputs(shown++ ? " < " : "  ", out);
		emit__terminal(out, profile__frame_name(profile, frames[d]));
	}
	if (!shown)
		fputs("  (kernel frames only)", out);
	fputc('\n', out);
}

static int by_stack_count(const void *a, const void *b, void *arg)
{
	size_t da, db;
	uint64_t ca, cb;

	profile__stack(arg, *(const size_t *)a, &da, &ca);
	profile__stack(arg, *(const size_t *)b, &db, &cb);
	return ca < cb ? 1 : ca > cb ? -1 : (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* The waits joined with a waker (--wakers), most counted first; nothing without any. */
static int write_wakers(FILE *out, const struct profile *profile, const char *unit, uint64_t grand_total)
{
	size_t nr_stacks = profile__stack_count(profile), nr = 0;
	size_t *rows = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	for (size_t s = 0; s < nr_stacks; s++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, s, &depth, &count);

		if (count && own_depth(profile, frames, depth) < depth)
			rows[nr++] = s;
	}
	if (nr) {
		qsort_r(rows, nr, sizeof(*rows), by_stack_count, (void *)profile);
		fprintf(out, "\nTop %d wakers by ", WAKER_ROWS);
		emit__terminal(out, unit);
		fputc('\n', out);
		for (size_t i = 0; i < nr && i < WAKER_ROWS; i++) {
			size_t depth, own;
			uint64_t count;
			const uint32_t *frames = profile__stack(profile, rows[i], &depth, &count);

			own = own_depth(profile, frames, depth);
			fprintf(out, "  %" PRIu64 "  %6.2f%%\n", count, percent(count, grand_total));
			write_frames(out, profile, frames, (ptrdiff_t)own - 1, -1, 0, (ptrdiff_t)own, "    waits in");
			write_frames(out, profile, frames, (ptrdiff_t)own + 1, 1, 0, (ptrdiff_t)depth, "    woken by");
		}
	}
	free(rows);
	return 0;
}

int output__text_write(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	const char *unit = meta && meta->unit ? meta->unit : "samples";
	const char *event = meta && meta->event ? meta->event : "cpu";
	uint64_t grand_total = profile__total(profile);
	struct functions fns = { 0 };
	struct function **sorted;
	int err;

	if (!top)
		top = DEFAULT_TOP;
	err = functions_build(profile, &fns);
	if (err) {
		functions_free(&fns);
		return err;
	}
	sorted = malloc((fns.nr ? fns.nr : 1) * sizeof(*sorted));
	if (!sorted) {
		functions_free(&fns);
		return -ENOMEM;
	}
	for (size_t i = 0; i < fns.nr; i++)
		sorted[i] = &fns.items[i];

	emit__begin(out);
	emit__terminal(out, meta && meta->title && *meta->title ? meta->title : "Profile");
	fputc('\n', out);
	if (meta && meta->duration_s > 0)
		fprintf(out, "Duration: %.1f s   ", meta->duration_s);
	if (meta && meta->frequency_hz)
		fprintf(out, "Frequency: %u Hz   ", meta->frequency_hz);
	fprintf(out, "Total: %" PRIu64 " ", grand_total);
	emit__terminal(out, unit);
	fputc('\n', out);
	if (meta && meta->summary && *meta->summary) {
		emit__terminal(out, meta->summary);
		fputc('\n', out);
	}

	err = write_rows(out, profile, top, unit, grand_total, process_of, "Processes by", "PROCESS",
			 "the other processes");
	if (!err)
		err = write_rows(out, profile, top, unit, grand_total,
				 output__event_allocates(event) && strcmp(event, "alloc") ? caller_of : site_of,
				 "Allocation sites by", "SITE", "the other sites");
	if (!err) {
		write_table(out, &fns, sorted, top, 0, unit, grand_total);
		write_table(out, &fns, sorted, top, 1, unit, grand_total);
		err = write_wakers(out, profile, unit, grand_total);
	}

	free(sorted);
	functions_free(&fns);
	return err ? err : emit__finish(out);
}
