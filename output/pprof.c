/*
 * pprof: the profile as a gzipped pprof profile (proto/profile.proto), the
 * format `go tool pprof` and the fleet profilers read, and the one
 * `jbpfprof convert` re-renders (input/pprof_read.c reads it back).
 *
 * The message is built as protobuf-c structures and packed by protobuf-c,
 * then compressed by zlib as a gzip stream. What goes where:
 *
 *   sample_type   cpu: ("samples", "count") and ("cpu", "nanoseconds"),
 *                 the second being samples times the mean sampling period;
 *                 wall and off-CPU: ("wall" or "offcpu", "nanoseconds");
 *                 allocations: ("alloc_objects", "count") when the profile
 *                 counts objects, and ("alloc_space", "bytes"), the default;
 *                 inuse_objects and inuse_space for what was still
 *                 allocated at the end (-e nativemem --leaks). A recording
 *                 of several events (meta->event "cpu,alloc", each stack
 *                 beginning with its event frame) has each event's types
 *                 in that order, and each sample its values in its own
 *                 event's types, 0 in the others; the first event's main
 *                 type is the default
 *   period        the mean sampling period, ("cpu" or "wall", "nanoseconds");
 *                 none for allocations, ("space", "bytes")
 *   sample        one per stack, locations leaf first; the stack's root
 *                 frames become labels, not locations, from the parts
 *                 the profile keeps of them:
 *                   process frame "program (name, pid N, container C)"
 *                                                 -> "process" (name), "pid",
 *                                                    "service_name" (program,
 *                                                    else name), "container_id"
 *                   thread frame "[name tid=N]"   -> "thread" and "tid"
 *                   state frame "[sleeping]"      -> "state" ("sleeping")
 *   function      one per frame: name without the kind's suffix ("_[k]",
 *                 "_[j]", ...), system_name the frame's exact text;
 *                 filename a Java frame's source file, where its class
 *                 names one (profile__frame_position)
 *   location      one per frame, one line, in the mapping of its kind;
 *                 the line's number a Java frame's source line, where the
 *                 profile kept it (a frame per line of a method)
 *   mapping       one per file native code was seen in, with its path and
 *                 build-id (hex) when the recording noted them (a full
 *                 aggregation does: profile__module); native frames of
 *                 unknown file in "[native]"; and one per other kind of
 *                 frame: "[kernel.kallsyms]", "[jit]", "[java]",
 *                 "[java compiled]", "[java inlined]", "[java interpreted]",
 *                 "[jbpfprof]" (frames standing for what could not be read)
 *                 With a timeline (profile/timeline.h): one sample per
 *                 span instead, its part of its stack's values, with the
 *                 numeric labels "timestamp" (the span's start, ns since
 *                 the epoch) and "duration" (ns, when longer than the
 *                 1 ms tick), both in "nanoseconds"; a stack with no time
 *                 kept is one sample without them
 *   comment       "key: value" lines: the generator, event, title,
 *                 duration, frequency, the summary of what was lost, and
 *                 how the recording's own views rooted stacks in processes
 *
 * The writer keeps no state between calls; memory is proportional to the
 * profile.
 */
#include "output.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "emit.h"
#include "mappings.h"
#include "profile/timeline.h"
#include "proto/profile.pb-c.h"
#include "common/version.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

/* ---- the string table ---------------------------------------------------- */

/*
 * Strings are interned in a profile used as a table: its frame ids are
 * dense, in the order strings were first added, as string_table wants.
 */
struct strings {
	struct profile *interned;
	char **items;       /* built for packing; names owned by interned */
};

/* The index of s in the table, adding it if new; a negative errno. */
static int64_t string_id(struct strings *t, const char *s)
{
	return profile__intern(t->interned, s, FRAME_KIND_NATIVE);
}

/* The table as protobuf-c wants it, items pointing into interned. */
static int strings_pack(struct strings *t, PProfile *msg)
{
	size_t n = profile__frame_count(t->interned);

	t->items = calloc(n ? n : 1, sizeof(*t->items));
	if (!t->items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		t->items[i] = (char *)profile__frame_name(t->interned, (uint32_t)i);
	msg->string_table = t->items;
	msg->n_string_table = n;
	return 0;
}

static void strings_free(struct strings *t)
{
	profile__free(t->interned);
	free(t->items);
}

/* ---- frames ---------------------------------------------------------------- */

/* Code frames are locations; the others become labels. */
static bool is_code(enum frame_kind kind)
{
	return output__kind_mapping(kind) != NULL;
}

/* ---- building the message ------------------------------------------------ */

#define MAX_EVENTS 4
#define MAX_SAMPLE_TYPES (2 * MAX_EVENTS)

/* One event's sample types: where they begin among all, and what they count. */
struct column_group {
	char event[16];         /* "cpu", "wall", "offcpu", "alloc", "nativemem" or "leaks" */
	size_t first;           /* index of its first sample type */
	bool time_weights;      /* wall or offcpu: one type, nanoseconds (counts are microseconds) */
	bool alloc;             /* an allocation event: its space in bytes ... */
	bool objects;           /* ... after its objects, when the profile counts them */
};

struct builder {
	PProfile msg;
	struct strings strings;
	PMapping *mappings, **mapping_ptrs; /* one per kind, then one per module */
	struct mappings mapping_of;                /* a code frame's mapping id */
	PFunction *functions;   /* one per profile frame; only code frames used */
	PFunction **function_ptrs;
	PLocation *locations;
	PLocation **location_ptrs;
	PLine *lines;
	PLine **line_ptrs;
	PSample *samples;
	PSample **sample_ptrs;
	uint64_t *location_ids; /* all samples' ids end to end */
	PLabel *labels;         /* LABELS_PER_SAMPLE per sample */
	PLabel **label_ptrs;
	int64_t *values;        /* msg.n_sample_type per sample */
	uint32_t *sample_of;    /* profile stack -> its sample + 1, 0 none */
	/* With a timeline: one sample per span, each its stack's sample's locations and labels, and its time's */
	PSample *timed;
	PSample **timed_ptrs;
	PLabel *time_labels;    /* 2 per timed sample */
	PLabel **timed_label_ptrs; /* LABELS_PER_SAMPLE + 2 per timed sample */
	int64_t *timed_values;
	int64_t *comments;
	PValueType sample_types[MAX_SAMPLE_TYPES], *sample_type_ptrs[MAX_SAMPLE_TYPES], period_type;
	struct column_group groups[MAX_EVENTS];
	size_t nr_groups;
};

/* A new mapping named filename (and build_id, "" for none); its id, or 0 out of memory (mappings_new_fn). */
static int64_t new_mapping(void *ctx, const char *filename, const char *build_id)
{
	struct builder *b = ctx;
	size_t n = b->msg.n_mapping;
	int64_t name = string_id(&b->strings, filename), id = string_id(&b->strings, build_id);

	if (name < 0 || id < 0)
		return 0;
	perftools__profiles__mapping__init(&b->mappings[n]);
	b->mappings[n].id = n + 1;
	b->mappings[n].filename = name;
	b->mappings[n].build_id = id;
	b->mappings[n].has_functions = true;
	b->mapping_ptrs[n] = &b->mappings[n];
	b->msg.n_mapping = n + 1;
	return n + 1;
}

/* Functions and locations, one each per code frame; id = frame id + 1. */
static int add_frames(struct builder *b, const struct profile *profile)
{
	size_t nr = profile__frame_count(profile), nr_modules = profile__module_count(profile);

	b->mappings = calloc(FRAME_KIND_NR + nr_modules, sizeof(*b->mappings));
	b->mapping_ptrs = calloc(FRAME_KIND_NR + nr_modules, sizeof(*b->mapping_ptrs));
	if (mappings__init(&b->mapping_of, profile, new_mapping, b) || !b->mappings || !b->mapping_ptrs)
		return -ENOMEM;
	b->functions = calloc(nr ? nr : 1, sizeof(*b->functions));
	b->function_ptrs = calloc(nr ? nr : 1, sizeof(*b->function_ptrs));
	b->locations = calloc(nr ? nr : 1, sizeof(*b->locations));
	b->location_ptrs = calloc(nr ? nr : 1, sizeof(*b->location_ptrs));
	b->lines = calloc(nr ? nr : 1, sizeof(*b->lines));
	b->line_ptrs = calloc(nr ? nr : 1, sizeof(*b->line_ptrs));
	if (!b->functions || !b->function_ptrs || !b->locations || !b->location_ptrs || !b->lines || !b->line_ptrs)
		return -ENOMEM;
	b->msg.mapping = b->mapping_ptrs;
	b->msg.function = b->function_ptrs;
	b->msg.location = b->location_ptrs;
	for (size_t i = 0; i < nr; i++) {
		enum frame_kind kind = profile__frame_kind(profile, (uint32_t)i);
		const char *text = profile__frame_name(profile, (uint32_t)i);
		struct frame_position pos = profile__frame_position(profile, (uint32_t)i);
		int64_t exact, plain, file = 0;
		uint64_t mapping;
		size_t n;
		char *name;

		if (!is_code(kind))
			continue;
		mapping = (uint64_t)mappings__of(&b->mapping_of, profile, (uint32_t)i, kind);
		name = output__plain_name(text, kind);
		if (!mapping || !name) {
			free(name);
			return -ENOMEM;
		}
		plain = string_id(&b->strings, name);
		free(name);
		exact = string_id(&b->strings, text);
		if (pos.file)
			file = string_id(&b->strings, pos.file);
		if (plain < 0 || exact < 0 || file < 0)
			return -ENOMEM;
		n = b->msg.n_function;
		perftools__profiles__function__init(&b->functions[n]);
		b->functions[n].id = i + 1;
		b->functions[n].name = plain;
		b->functions[n].system_name = exact;
		b->functions[n].filename = file;
		b->function_ptrs[n] = &b->functions[n];
		perftools__profiles__line__init(&b->lines[n]);
		b->lines[n].function_id = i + 1;
		b->lines[n].line = pos.line > 0 ? pos.line : 0;
		b->line_ptrs[n] = &b->lines[n];
		perftools__profiles__location__init(&b->locations[n]);
		b->locations[n].id = i + 1;
		b->locations[n].mapping_id = mapping;
		b->locations[n].n_line = 1;
		b->locations[n].line = &b->line_ptrs[n];
		b->location_ptrs[n] = &b->locations[n];
		b->msg.n_function = b->msg.n_location = n + 1;
	}
	return 0;
}

/* Labels of one sample at most: a process frame's four, a thread frame's two, a state, a waker's five. */
#define LABELS_PER_SAMPLE 12

/* The most labels a frame of kind adds. */
static size_t labels_of_kind(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KIND_PROCESS:
		return 4;
	case FRAME_KIND_WAKER_PROCESS:
		return 3;
	case FRAME_KIND_THREAD:
	case FRAME_KIND_WAKER_THREAD:
		return 2;
	case FRAME_KIND_STATE:
		return 1;
	default:
		return 0;
	}
}

static int add_label(struct builder *b, PSample *s, const char *key, const char *str, int64_t num)
{
	PLabel *l = &b->labels[(s - b->samples) * LABELS_PER_SAMPLE + s->n_label];
	int64_t k = string_id(&b->strings, key);

	if (k < 0)
		return -ENOMEM;
	perftools__profiles__label__init(l);
	l->key = k;
	if (str) {
		l->str = string_id(&b->strings, str);
		if (l->str < 0)
			return -ENOMEM;
	} else {
		l->num = num;
	}
	s->n_label++;
	return 0;
}

/* The labels a root or state frame stands for, from its parts. */
static int add_frame_labels(struct builder *b, PSample *s, const struct profile *profile, uint32_t frame)
{
	enum frame_kind kind = profile__frame_kind(profile, frame);
	int64_t id = profile__root_id(profile, frame);
	struct process_parts parts;
	int err;

	if (kind == FRAME_KIND_STATE)
		return add_label(b, s, "state", profile__state_name((unsigned)profile__frame_state(profile, frame)), 0);
	/* A waker's (--wakers): its process's name, pid and program, its thread's name and tid. */
	if (kind == FRAME_KIND_WAKER_PROCESS || kind == FRAME_KIND_WAKER_THREAD) {
		bool process = kind == FRAME_KIND_WAKER_PROCESS;

		err = add_label(b, s, process ? "waker_process" : "waker_thread", profile__root_name(profile, frame), 0);
		if (!err && id >= 0)
			err = add_label(b, s, process ? "waker_pid" : "waker_tid", NULL, id);
		if (err || !process)
			return err;
		profile__process_parts(profile, frame, &parts);
		return parts.program ? add_label(b, s, "waker_service", parts.program, 0) : 0;
	}
	if (kind != FRAME_KIND_PROCESS && kind != FRAME_KIND_THREAD)
		return 0;
	err = add_label(b, s, kind == FRAME_KIND_PROCESS ? "process" : "thread", profile__root_name(profile, frame), 0);
	if (!err && id >= 0)
		err = add_label(b, s, kind == FRAME_KIND_PROCESS ? "pid" : "tid", NULL, id);
	if (err || kind != FRAME_KIND_PROCESS)
		return err;
	profile__process_parts(profile, frame, &parts);
	err = add_label(b, s, "service_name", parts.program ? parts.program : parts.name, 0);
	if (!err && parts.container)
		err = add_label(b, s, "container_id", parts.container, 0);
	return err;
}

/* The column group of a stack: its event frame's, or the one event's. */
static const struct column_group *group_of(const struct builder *b, const struct profile *profile,
					   const uint32_t *frames, size_t depth)
{
	if (b->nr_groups > 1 && depth && profile__frame_kind(profile, frames[0]) == FRAME_KIND_EVENT)
		for (size_t g = 0; g < b->nr_groups; g++)
			if (!strcmp(b->groups[g].event, profile__frame_name(profile, frames[0])))
				return &b->groups[g];
	return b->nr_groups == 1 ? &b->groups[0] : NULL;
}

static int add_samples(struct builder *b, const struct profile *profile, uint64_t period_ns)
{
	size_t nr = profile__stack_count(profile), ids = 0, n = 0, types = b->msg.n_sample_type;

	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;

		profile__stack(profile, i, &depth, &count);
		ids += count ? depth : 0;
	}
	b->samples = calloc(nr ? nr : 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(nr ? nr : 1, sizeof(*b->sample_ptrs));
	b->location_ids = calloc(ids ? ids : 1, sizeof(*b->location_ids));
	b->labels = calloc(nr ? nr * LABELS_PER_SAMPLE : 1, sizeof(*b->labels));
	b->label_ptrs = calloc(nr ? nr * LABELS_PER_SAMPLE : 1, sizeof(*b->label_ptrs));
	b->values = calloc(nr ? nr * types : 1, sizeof(*b->values));
	b->sample_of = calloc(nr ? nr : 1, sizeof(*b->sample_of));
	if (!b->samples || !b->sample_ptrs || !b->location_ids || !b->labels || !b->label_ptrs || !b->values ||
	    !b->sample_of)
		return -ENOMEM;
	b->msg.sample = b->sample_ptrs;
	ids = 0;
	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, i, &depth, &count);
		const struct column_group *g = group_of(b, profile, frames, depth);
		PSample *s = &b->samples[n];
		int64_t *v;

		/* A stack of an event the file does not name has nowhere to go. */
		if (!count || !g)
			continue;
		perftools__profiles__sample__init(s);
		s->label = &b->label_ptrs[n * LABELS_PER_SAMPLE];
		s->location_id = &b->location_ids[ids];
		for (size_t k = depth; k-- > 0;) {
			enum frame_kind kind = profile__frame_kind(profile, frames[k]);
			int err;

			if (is_code(kind)) {
				s->location_id[s->n_location_id++] = frames[k] + 1;
				continue;
			}
			/* A stack has one frame of each at most: one more would not fit. */
			if (s->n_label + labels_of_kind(kind) > LABELS_PER_SAMPLE)
				continue;
			err = add_frame_labels(b, s, profile, frames[k]);
			if (err)
				return err;
		}
		for (size_t l = 0; l < s->n_label; l++)
			s->label[l] = &b->labels[n * LABELS_PER_SAMPLE + l];
		ids += s->n_location_id;
		s->value = &b->values[n * types];
		s->n_value = types;
		v = s->value + g->first;
		if (g->time_weights) {
			v[0] = (int64_t)(count * 1000); /* microseconds to nanoseconds */
		} else if (g->objects) {
			v[0] = (int64_t)profile__stack_objects(profile, i);
			v[1] = (int64_t)count; /* bytes */
		} else if (g->alloc) {
			v[0] = (int64_t)count; /* bytes */
		} else {
			v[0] = (int64_t)count;
			v[1] = (int64_t)(count * period_ns);
		}
		b->sample_ptrs[n++] = s;
		b->sample_of[i] = (uint32_t)n;
	}
	b->msg.n_sample = n;
	return 0;
}

/*
 * The unit a value is a whole number of: a time in ns that the profile
 * counts in µs (a wall-clock profile's) is shared out in µs, so that each
 * span's part reads back to a whole number of them and the parts of a
 * stack still add up to its count once read (input/pprof_read.c rounds
 * each sample's ns to µs). Only a value in ns: a count (samples, bytes,
 * objects) of 1000 is 1000 units, not one unit of 1000 to give a single span.
 */
static uint64_t value_unit(uint64_t value, bool in_ns)
{
	return in_ns && value && value % 1000 == 0 ? 1000 : 1;
}

/*
 * With a timeline, the samples again, one per span: its stack's locations
 * and labels, its part of the stack's values (timeline__span_share: the
 * parts of a stack sum to its values), and when: "timestamp", the span's
 * first tick in ns since the epoch, and "duration", its length in ns when
 * longer than a tick. A stack with no span keeps its one sample.
 */
static int add_timed_samples(struct builder *b, const struct profile *profile, int64_t start_unix_ns)
{
	const struct timeline *tl = profile__timeline(profile);
	const struct timeline_span *spans = timeline__spans(tl);
	size_t nr_spans = timeline__count(tl), nr_stacks = profile__stack_count(profile), types = b->msg.n_sample_type;
	size_t n = 0, cap = nr_spans + b->msg.n_sample;
	uint64_t *weights, *carries;
	int64_t timestamp_key, duration_key, unit;
	int err = 0;

	if (!tl)
		return 0;
	timestamp_key = string_id(&b->strings, "timestamp");
	duration_key = string_id(&b->strings, "duration");
	unit = string_id(&b->strings, "nanoseconds");
	weights = timeline__stack_weights(tl, nr_stacks);
	carries = calloc(nr_stacks * types + 1, sizeof(*carries));
	b->timed = calloc(cap + 1, sizeof(*b->timed));
	b->timed_ptrs = calloc(cap + 1, sizeof(*b->timed_ptrs));
	b->time_labels = calloc(2 * cap, sizeof(*b->time_labels));
	b->timed_label_ptrs = calloc((LABELS_PER_SAMPLE + 2) * cap, sizeof(*b->timed_label_ptrs));
	b->timed_values = calloc(types * cap + 1, sizeof(*b->timed_values));
	if (timestamp_key < 0 || duration_key < 0 || unit < 0 || !weights || !carries || !b->timed || !b->timed_ptrs ||
	    !b->time_labels || !b->timed_label_ptrs || !b->timed_values) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr_spans; i++) {
		const struct timeline_span *sp = &spans[i];
		const PSample *of;
		PSample *s = &b->timed[n];
		PLabel *l = &b->time_labels[2 * n];
		bool any = false;

		if (sp->stack >= nr_stacks || !b->sample_of[sp->stack])
			continue;
		of = b->sample_ptrs[b->sample_of[sp->stack] - 1];
		*s = *of;
		s->value = &b->timed_values[n * types];
		for (size_t v = 0; v < types; v++) {
			uint64_t quantum = value_unit((uint64_t)of->value[v], b->msg.sample_type[v]->unit == unit);

			s->value[v] = (int64_t)(quantum * timeline__span_share(sp, (uint64_t)of->value[v] / quantum,
									   weights[sp->stack],
									   &carries[sp->stack * types + v]));
			any |= s->value[v] != 0;
		}
		if (!any)
			continue;
		s->label = &b->timed_label_ptrs[n * (LABELS_PER_SAMPLE + 2)];
		memcpy(s->label, of->label, of->n_label * sizeof(*s->label));
		perftools__profiles__label__init(&l[0]);
		l[0].key = timestamp_key;
		l[0].num = start_unix_ns + (int64_t)sp->first * (int64_t)TIMELINE_TICK_NS;
		l[0].num_unit = unit;
		s->label[s->n_label++] = &l[0];
		if (sp->last > sp->first) {
			perftools__profiles__label__init(&l[1]);
			l[1].key = duration_key;
			l[1].num = (int64_t)(sp->last + 1 - sp->first) * (int64_t)TIMELINE_TICK_NS;
			l[1].num_unit = unit;
			s->label[s->n_label++] = &l[1];
		}
		b->timed_ptrs[n++] = s;
	}
	/* Stacks with no time kept: their one sample, as without a timeline. */
	for (size_t i = 0; i < nr_stacks; i++)
		if (b->sample_of[i] && !weights[i])
			b->timed_ptrs[n++] = b->sample_ptrs[b->sample_of[i] - 1];
	b->msg.sample = b->timed_ptrs;
	b->msg.n_sample = n;
out:
	free(weights);
	free(carries);
	return err;
}

static int add_comment(struct builder *b, const char *key, const char *value)
{
	char *line;
	int64_t id;

	if (!value)
		return 0;
	if (asprintf(&line, "%s: %s", key, value) < 0)
		return -ENOMEM;
	id = string_id(&b->strings, line);
	free(line);
	if (id < 0)
		return -ENOMEM;
	b->comments[b->msg.n_comment++] = id;
	return 0;
}

/* Appends a sample type (type, unit); its index, or a negative errno. */
static int add_sample_type(struct builder *b, const char *type, const char *unit)
{
	size_t i = b->msg.n_sample_type;
	int64_t t = string_id(&b->strings, type), u = string_id(&b->strings, unit);

	if (t < 0 || u < 0)
		return -ENOMEM;
	if (i == MAX_SAMPLE_TYPES)
		return -E2BIG;
	perftools__profiles__value_type__init(&b->sample_types[i]);
	b->sample_types[i].type = t;
	b->sample_types[i].unit = u;
	b->sample_type_ptrs[i] = &b->sample_types[i];
	b->msg.n_sample_type = i + 1;
	return (int)i;
}

/*
 * Each event's sample types (see the header), and the period of the first:
 * its sampling period in time, or for allocations ("space", "bytes") and
 * none. The default sample type is the first event's main one: "cpu",
 * "wall", its space.
 */
static int add_sample_types(struct builder *b, const struct profile *profile, uint64_t period_ns)
{
	bool objects = profile__has_objects(profile);
	int main_type = -1;

	b->msg.sample_type = b->sample_type_ptrs;
	for (size_t i = 0; i < b->nr_groups; i++) {
		struct column_group *g = &b->groups[i];
		const char *ev = g->event;
		int t;

		g->first = b->msg.n_sample_type;
		g->alloc = output__event_allocates(ev);
		g->objects = g->alloc && objects;
		g->time_weights = !g->alloc && strcmp(ev, "cpu");
		/* Allocations, as Go's heap profiles name them: objects then bytes, bytes shown first. */
		if (g->objects && add_sample_type(b, output__objects_type(ev), "count") < 0)
			return -ENOMEM;
		t = add_sample_type(b, g->alloc ? output__space_type(ev) : g->time_weights ? ev : "samples",
				    g->alloc ? "bytes" : g->time_weights ? "nanoseconds" : "count");
		if (t >= 0 && !g->alloc && !g->time_weights)
			t = add_sample_type(b, "cpu", "nanoseconds");
		if (t < 0)
			return t;
		if (main_type < 0)
			main_type = t;
	}
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type = *b->sample_type_ptrs[main_type];
	if (b->groups[0].alloc)
		b->period_type.type = string_id(&b->strings, "space");
	else if (b->groups[0].time_weights)
		b->period_type.type = string_id(&b->strings, "wall");
	if (b->period_type.type < 0)
		return -ENOMEM;
	/* One event, as before: its main type is the default only where it is not the last. */
	if (b->groups[0].objects || b->nr_groups > 1)
		b->msg.default_sample_type = b->sample_types[main_type].type;
	b->msg.period_type = &b->period_type;
	b->msg.period = (int64_t)period_ns;
	return 0;
}

/* meta->event's words ("cpu,alloc"), one group each; -EINVAL for none or too many. */
static int parse_groups(struct builder *b, const char *event)
{
	const char *p = event;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (!len || len >= sizeof(b->groups[0].event) || b->nr_groups == MAX_EVENTS)
			return -EINVAL;
		memcpy(b->groups[b->nr_groups].event, p, len);
		b->groups[b->nr_groups++].event[len] = '\0';
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int add_header(struct builder *b, const struct output_meta *meta, const struct profile *profile,
		      uint64_t period_ns)
{
	const char *event = meta->event ? meta->event : "cpu";
	char duration[64], frequency[32];

	b->comments = calloc(8, sizeof(*b->comments));
	if (!b->comments)
		return -ENOMEM;
	b->msg.comment = b->comments;
	snprintf(duration, sizeof(duration), "%.3f s", meta->duration_s);
	snprintf(frequency, sizeof(frequency), "%u Hz", meta->frequency_hz);
	if (add_comment(b, "generator", "jbpfprof " JBPFPROF_VERSION) || add_comment(b, "event", event) ||
	    add_comment(b, "title", meta->title) || add_comment(b, "duration", duration) ||
	    add_comment(b, "frequency", meta->frequency_hz ? frequency : NULL) ||
	    add_comment(b, "summary", meta->summary) ||
	    add_comment(b, "process roots", meta->process_roots))
		return -ENOMEM;
	if (parse_groups(b, event))
		return -EINVAL;
	b->msg.duration_nanos = (int64_t)(meta->duration_s * 1e9);
	b->msg.time_nanos = meta->start_unix_ns;
	return add_sample_types(b, profile, period_ns);
}

static void builder_free(struct builder *b)
{
	strings_free(&b->strings);
	free(b->mappings);
	free(b->mapping_ptrs);
	mappings__free(&b->mapping_of);
	free(b->functions);
	free(b->function_ptrs);
	free(b->locations);
	free(b->location_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->location_ids);
	free(b->labels);
	free(b->label_ptrs);
	free(b->values);
	free(b->sample_of);
	free(b->timed);
	free(b->timed_ptrs);
	free(b->time_labels);
	free(b->timed_label_ptrs);
	free(b->timed_values);
	free(b->comments);
}

/* Compresses data into a gzip stream on out. */
static int write_gzip(const uint8_t *data, size_t len, FILE *out)
{
	uint8_t chunk[65536];
	z_stream z = { 0 };
	int flush, ret;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	do {
		size_t in = len - (size_t)(z.next_in - data);

		z.avail_in = in > (1u << 30) ? 1u << 30 : (uInt)in;
		flush = in == z.avail_in ? Z_FINISH : Z_NO_FLUSH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			ret = deflate(&z, flush);
			if (ret == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return -EIO;
			}
			fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out);
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
	deflateEnd(&z);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int output__pprof_write(const struct profile *profile, const struct output_meta *meta, FILE *out)
{
	/* Every string the file names: bounded only by what ids can number. */
	const struct profile_limits string_limits = { .max_frames = UINT32_MAX - 2, .max_stacks = 1 };
	/* An allocation profile counts bytes: no sampling period in time. */
	bool alloc = output__event_allocates(meta->event);
	uint64_t period_ns = meta->frequency_hz && !alloc ? 1000000000ull / meta->frequency_hz : 0;
	struct builder b = { 0 };
	uint8_t *packed = NULL;
	size_t len;
	int err;

	perftools__profiles__profile__init(&b.msg);
	emit__begin(out);
	b.strings.interned = profile__new(&string_limits);
	err = !b.strings.interned || string_id(&b.strings, "") < 0 ? -ENOMEM : 0;
	if (!err)
		err = add_header(&b, meta, profile, period_ns);
	if (!err)
		err = add_frames(&b, profile);
	if (!err)
		err = add_samples(&b, profile, period_ns);
	if (!err)
		err = add_timed_samples(&b, profile, meta->start_unix_ns);
	if (!err)
		err = strings_pack(&b.strings, &b.msg);
	if (!err) {
		len = perftools__profiles__profile__get_packed_size(&b.msg);
		packed = malloc(len ? len : 1);
		if (!packed)
			err = -ENOMEM;
	}
	if (!err) {
		perftools__profiles__profile__pack(&b.msg, packed);
		err = write_gzip(packed, len, out);
	}
	free(packed);
	builder_free(&b);
	if (err)
		return err;
	return emit__finish(out);
}
