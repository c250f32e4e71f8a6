/*
 * view: a recording's profile seen with a given set of options (contract in
 * view.h).
 *
 * Each source frame is mapped once to the frame the view shows (or to none)
 * and, for the patterns, to whether its shown name matches; a stack is then
 * a walk over ids, with no string work per sample.
 */
#include "view.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"


#define NO_FRAME UINT32_MAX

/* How the view shows one source frame. */
struct shown {
	uint32_t id;       /* frame id in the view's profile, or NO_FRAME */
	int state;         /* enum jbpf_state of a state frame, else -1 */
	bool included;     /* its shown name matches the include pattern */
	bool excluded;     /* ... the exclude pattern */
	bool other_event;  /* an event frame not of config.event: its stacks are left out */
	enum frame_kind kind; /* the source frame's */
};

static const char *const java_suffixes[FRAME_KIND_NR] = {
	[FRAME_KIND_JAVA_COMPILED] = "_[j]",
	[FRAME_KIND_JAVA_INLINED] = "_[i]",
	[FRAME_KIND_JAVA_INTERP] = "_[0]",
};

static const char *const root_words[VIEW_ROOT_NR] = {
	[VIEW_ROOT_NONE] = "none",
	[VIEW_ROOT_EXECUTABLE] = "executable",
	[VIEW_ROOT_SERVICE] = "service",
	[VIEW_ROOT_PROCESS] = "process",
};

const char *view__root_word(enum view_process_root root)
{
	return (unsigned)root < VIEW_ROOT_NR ? root_words[root] : "none";
}

int view__root_of_word(const char *word)
{
	for (int i = 0; i < VIEW_ROOT_NR; i++)
		if (!strcmp(word, root_words[i]))
			return i;
	/* What pprof files said before services had a grouping of their own. */
	if (!strcmp(word, "name"))
		return VIEW_ROOT_EXECUTABLE;
	if (!strcmp(word, "pid"))
		return VIEW_ROOT_PROCESS;
	return -1;
}

/* The parts of a process frame that root shows (none with VIEW_ROOT_NONE). */
static struct process_parts shown_parts(const struct process_parts *parts, enum view_process_root root)
{
	struct process_parts shown = { .name = parts->name, .pid = -1 };

	switch (root) {
	case VIEW_ROOT_NONE:
	case VIEW_ROOT_EXECUTABLE:
		break;
	case VIEW_ROOT_SERVICE:
		shown.program = parts->program;
		break;
	default:
		shown = *parts;
		break;
	}
	return shown;
}

int64_t view__process_frame(struct profile *to, const struct process_parts *parts, enum view_process_root root)
{
	struct process_parts shown;

	if (root == VIEW_ROOT_NONE)
		return -EINVAL;
	shown = shown_parts(parts, root);
	return profile__intern_process_parts(to, &shown);
}

/*
 * A virtual thread's marker without its id and name: "[virtual thread #12
 * req-7, ...]" as "[virtual thread, ...]".
 */
static int64_t intern_without_id(struct profile *to, const char *name)
{
	const char *id = strstr(name, " #");
	size_t digits;
	int64_t shown;
	char *plain;

	if (!id)
		return profile__intern(to, name, FRAME_KIND_CARRIER);
	/* The id's digits, and a name after them up to the suffix or the bracket. */
	digits = strcspn(id + 2, ",]");
	plain = malloc(strlen(name) + 1);
	if (!plain)
		return -ENOMEM;
	memcpy(plain, name, (size_t)(id - name));
	strcpy(plain + (id - name), id + 2 + digits);
	shown = profile__intern(to, plain, FRAME_KIND_CARRIER);
	free(plain);
	return shown;
}

/*
 * A Java frame as the view shows it: its suffix ("_[j]") kept with
 * annotate, else a plain Java frame; its position dropped, shown in its
 * name ("name:LINE" before the suffix), or kept. Its id in to, or a
 * negative errno.
 */
static int64_t show_java(const struct profile *from, uint32_t i, const struct view_config *config, struct profile *to)
{
	enum frame_kind kind = profile__frame_kind(from, i);
	const char *name = profile__frame_name(from, i);
	struct frame_position pos = profile__frame_position(from, i);
	const char *suffix = java_suffixes[kind] ? java_suffixes[kind] : "";
	size_t len = strlen(name), cut = strlen(suffix);
	char line[16] = "";
	char *text;
	int64_t shown;

	if (!cut || len < cut || strcmp(name + len - cut, suffix))
		suffix = "", cut = 0;
	if (config->lines == VIEW_LINES_SHOW && pos.line > 0)
		snprintf(line, sizeof(line), ":%d", pos.line);
	if (asprintf(&text, "%.*s%s%s", (int)(len - cut), name, line, config->annotate ? suffix : "") < 0)
		return -ENOMEM;
	shown = profile__intern_at(to, text, config->annotate ? kind : FRAME_KIND_JAVA,
				   config->lines == VIEW_LINES_KEEP ? &pos : NULL);
	free(text);
	return shown;
}

/*
 * The frame the view shows for source frame i, interned in to: *id, or
 * NO_FRAME when the view leaves it out. 0 or a negative errno.
 */
static int show_frame(const struct profile *from, uint32_t i, const struct view_config *config,
		      struct profile *to, uint32_t *id)
{
	enum frame_kind kind = profile__frame_kind(from, i);
	const char *name = profile__frame_name(from, i);
	struct process_parts parts;
	int64_t shown;

	*id = NO_FRAME;
	switch (kind) {
	case FRAME_KIND_PROCESS:
		if (config->process_root == VIEW_ROOT_NONE)
			return 0;
		profile__process_parts(from, i, &parts);
		shown = view__process_frame(to, &parts, config->process_root);
		break;
	case FRAME_KIND_THREAD:
		if (!config->threads)
			return 0;
		shown = profile__intern_thread(to, profile__root_name(from, i), profile__root_id(from, i));
		break;
	/* A waker's roots (--wakers) are shown as the stack's own are. */
	case FRAME_KIND_WAKER_PROCESS:
		if (config->process_root == VIEW_ROOT_NONE || config->no_wakers)
			return 0;
		profile__process_parts(from, i, &parts);
		parts = shown_parts(&parts, config->process_root);
		shown = profile__intern_waker_process_parts(to, &parts);
		break;
	case FRAME_KIND_WAKER_THREAD:
		if (!config->threads || config->no_wakers)
			return 0;
		shown = profile__intern_waker_thread(to, profile__root_name(from, i), profile__root_id(from, i));
		break;
	case FRAME_KIND_WAKER:
		if (config->no_wakers)
			return 0;
		shown = profile__intern(to, name, kind);
		break;
	case FRAME_KIND_STATE:
		shown = profile__intern_state(to, (unsigned)profile__frame_state(from, i));
		break;
	case FRAME_KIND_CARRIER:
		shown = config->virtual_thread_ids ? profile__intern(to, name, kind) : intern_without_id(to, name);
		break;
	case FRAME_KIND_EVENT:
		if (config->event)
			return 0;
		shown = profile__intern(to, name, kind);
		break;
	case FRAME_KIND_JAVA:
	case FRAME_KIND_JAVA_COMPILED:
	case FRAME_KIND_JAVA_INLINED:
	case FRAME_KIND_JAVA_INTERP:
		shown = show_java(from, i, config, to);
		break;
	default:
		shown = profile__intern(to, name, kind);
		break;
	}
	if (shown < 0)
		return (int)shown;
	*id = (uint32_t)shown;
	return 0;
}

static void copy_module(const struct profile *from, uint32_t frame, struct profile *to, uint32_t to_frame)
{
	uint32_t module = profile__frame_module(from, frame);

	if (module)
		profile__set_frame_module(to, to_frame, profile__module(to, profile__module_path(from, module),
									  profile__module_build_id(from, module)));
}

static int map_frames(const struct profile *from, const struct view_config *config, struct profile *to,
		      struct shown *shown)
{
	size_t nr = profile__frame_count(from);

	for (size_t i = 0; i < nr; i++) {
		const char *name;
		int err = show_frame(from, (uint32_t)i, config, to, &shown[i].id);

		if (err)
			return err;
		shown[i].state = profile__frame_state(from, (uint32_t)i);
		shown[i].kind = profile__frame_kind(from, (uint32_t)i);
		shown[i].included = shown[i].excluded = false;
		shown[i].other_event = config->event && profile__frame_kind(from, (uint32_t)i) == FRAME_KIND_EVENT &&
				       strcmp(profile__frame_name(from, (uint32_t)i), config->event);
		if (shown[i].id == NO_FRAME)
			continue;
		copy_module(from, (uint32_t)i, to, shown[i].id);
		name = profile__frame_name(to, shown[i].id);
		shown[i].included = config->include && !regexec(config->include, name, 0, NULL, 0);
		shown[i].excluded = config->exclude && !regexec(config->exclude, name, 0, NULL, 0);
	}
	return 0;
}

static bool is_root(enum frame_kind kind)
{
	return kind == FRAME_KIND_PROCESS || kind == FRAME_KIND_THREAD || kind == FRAME_KIND_EVENT;
}

/*
 * The shown ids of a stack of depth source frames into ids: their order,
 * but for a virtual thread's (one with a marker): its carrier's frames
 * left out unless carrier_frames, and with threads its marker first among
 * the thread roots, so that stacks group by virtual thread, then carrier.
 * Their number.
 */
static size_t stack_ids(const struct shown *shown, const uint32_t *frames, size_t depth,
			const struct view_config *config, uint32_t *ids)
{
	size_t n = 0, marker = depth, thread = depth;

	for (size_t k = 0; k < depth && marker == depth; k++)
		if (shown[frames[k]].kind == FRAME_KIND_CARRIER)
			marker = k;
		else if (shown[frames[k]].kind == FRAME_KIND_THREAD && shown[frames[k]].id != NO_FRAME)
			thread = k;
	/*
	 * Without its carrier's frames, the marker moves before a shown thread
	 * frame (--threads); with them, every frame stays where it is.
	 */
	if (marker == depth || config->carrier_frames)
		thread = depth;
	for (size_t k = 0; k < depth; k++) {
		const struct shown *s = &shown[frames[k]];

		if (k == thread && shown[frames[marker]].id != NO_FRAME)
			ids[n++] = shown[frames[marker]].id;
		if (k == marker && thread < marker)
			continue;
		if (k < marker && marker < depth && !is_root(s->kind) && !config->carrier_frames)
			continue;
		if (s->id != NO_FRAME)
			ids[n++] = s->id;
	}
	return n;
}

int view__apply(const struct profile *from, const struct view_config *config, struct profile *to,
		struct view_stats *stats)
{
	size_t nr_frames = profile__frame_count(from), nr_stacks = profile__stack_count(from), cap = 0;
	struct shown *shown = calloc(nr_frames ? nr_frames : 1, sizeof(*shown));
	const struct timeline *tl = profile__timeline(from);
	uint32_t *ids = NULL, *to_index = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*to_index));
	uint64_t *weights = timeline__stack_weights(tl, nr_stacks);
	double *in_range = config->time_range ? timeline__range_weights(tl, nr_stacks, config->from_tick,
									config->to_tick)
					      : NULL;
	int err;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!shown || !to_index || !weights || (config->time_range && !in_range)) {
		free(shown);
		free(to_index);
		free(weights);
		free(in_range);
		return -ENOMEM;
	}
	memset(to_index, 0xff, (nr_stacks ? nr_stacks : 1) * sizeof(*to_index));
	err = map_frames(from, config, to, shown);
	for (size_t i = 0; !err && i < nr_stacks; i++) {
		size_t depth, n = 0;
		uint64_t count, objects = profile__stack_objects(from, i), whole;
		const uint32_t *frames = profile__stack(from, i, &depth, &count);
		bool included = !config->include, excluded = false, state_kept = true, other_event = false;

		if (!count)
			continue;
		/* In a time range, the part of the stack's count its spans place there. */
		if (config->time_range) {
			if (!weights[i]) {
				if (stats)
					stats->untimed++;
				continue;
			}
			whole = count;
			count = (uint64_t)llround((double)count * (in_range[i] / (double)weights[i]));
			objects = (uint64_t)llround((double)objects * (in_range[i] / (double)weights[i]));
			if (stats)
				stats->count_outside += whole - (count < whole ? count : whole);
			if (!count)
				continue;
		}
		if (depth > cap) {
			uint32_t *grown = realloc(ids, depth * sizeof(*ids));

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			ids = grown;
			cap = depth;
		}
		for (size_t k = 0; k < depth; k++) {
			const struct shown *s = &shown[frames[k]];

			if (s->state >= 0 && config->state_mask && !(config->state_mask & (1u << s->state)))
				state_kept = false;
			other_event |= s->other_event;
			if (s->id == NO_FRAME)
				continue;
			included |= s->included;
			excluded |= s->excluded;
		}
		n = stack_ids(shown, frames, depth, config, ids);
		/* Another event's stack is not this view's at all: not counted as dropped. */
		if (other_event)
			continue;
		if (!state_kept || !included || excluded) {
			if (stats) {
				stats->stacks_dropped++;
				stats->count_dropped += count;
			}
			continue;
		}
		if (config->reverse)
			for (size_t a = 0, b = n; a + 1 < b; a++, b--) {
				uint32_t t = ids[a];

				ids[a] = ids[b - 1];
				ids[b - 1] = t;
			}
		err = profile__add_objects_indexed(to, ids, n, count, objects, &to_index[i]);
	}
	/* Each span with its stack, cut to the range. */
	for (size_t i = 0; !err && i < timeline__count(tl); i++) {
		const struct timeline_span *sp = &timeline__spans(tl)[i];
		uint64_t first = sp->first, last = sp->last, weight = sp->weight;

		if (sp->stack >= nr_stacks || to_index[sp->stack] == UINT32_MAX)
			continue;
		if (config->time_range) {
			double part = timeline__span_part(sp, config->from_tick, config->to_tick);

			if (part <= 0)
				continue;
			first = first > config->from_tick ? first : config->from_tick;
			last = last < config->to_tick - 1 ? last : config->to_tick - 1;
			weight = (uint64_t)llround((double)weight * part);
			weight = weight ? weight : 1;
		}
		/* A span that finds no room is counted lost by the timeline; the view goes on. */
		if (profile__add_span(to, to_index[sp->stack], (uint32_t)first, (uint32_t)last, weight) == -ENOMEM)
			err = -ENOMEM;
	}
	free(ids);
	free(shown);
	free(to_index);
	free(weights);
	free(in_range);
	return err;
}
