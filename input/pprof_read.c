/*
 * pprof_read: a pprof file back into a profile (contract in pprof_read.h).
 *
 * Three stages, each refusing what it cannot vouch for: the bytes and the
 * message (input/pprof_unpack.c), the meaning (every string index, id and
 * label checked before use: here).
 */
#include "pprof_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/refuse.h"
#include "common/thread_state.h"
#include "output/output.h"
#include "proto/profile.pb-c.h"
#include "profile/timeline.h"
#include "input/jfr_read.h"
#include "input/pprof_unpack.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Location PLocation;

/* Frames kept of one sample, leaf first; the profile cuts further at its own limit. */
#define MAX_READ_DEPTH 4096

/* ---- meaning ------------------------------------------------------------------ */

struct id_index {
	uint64_t id;
	size_t index;
};

static int id_compare(const void *a, const void *b)
{
	uint64_t x = ((const struct id_index *)a)->id, y = ((const struct id_index *)b)->id;

	return x < y ? -1 : x > y;
}

/* The index of the item with this id, or -1. */
static ssize_t find_id(const struct id_index *ids, size_t n, uint64_t id)
{
	struct id_index key = { id, 0 }, *hit = bsearch(&key, ids, n, sizeof(*ids), id_compare);

	return hit ? (ssize_t)hit->index : -1;
}

struct reader {
	const PProfile *msg;
	struct pprof_recording *rec;
	struct id_index *functions, *locations, *mappings;
	int64_t *location_frames;   /* per location, its first frame in frames_flat */
	uint32_t *frames_flat;      /* each location's frames, root first */
	size_t value_index;
	bool value_ns;              /* values are nanoseconds, counted in microseconds */
	ssize_t objects_index;      /* an allocation profile's alloc_objects, or -1 */
	const char *want_event;     /* the event asked for, or NULL */
	bool several;               /* the file holds several events: read those of rec->event */
	char *err;
	size_t err_size;
};

static const char *string_at(const struct reader *r, int64_t index)
{
	if (index < 0 || (uint64_t)index >= r->msg->n_string_table)
		return NULL;
	return r->msg->string_table[index];
}

static int sorted_ids(struct reader *r, const char *what, size_t n, uint64_t (*id_of)(const PProfile *, size_t),
		      struct id_index **out)
{
	struct id_index *ids = calloc(n ? n : 1, sizeof(*ids));

	if (!ids)
		return refuse__say(r->err, r->err_size, "out of memory");
	for (size_t i = 0; i < n; i++) {
		ids[i].id = id_of(r->msg, i);
		ids[i].index = i;
		if (!ids[i].id) {
			free(ids);
			return refuse__say(r->err, r->err_size, "%s %zu has id 0", what, i);
		}
	}
	qsort(ids, n, sizeof(*ids), id_compare);
	for (size_t i = 1; i < n; i++)
		if (ids[i].id == ids[i - 1].id) {
			uint64_t dup = ids[i].id;

			free(ids);
			return refuse__say(r->err, r->err_size, "two %ss have id %" PRIu64, what, dup);
		}
	*out = ids;
	return 0;
}

static uint64_t function_id(const PProfile *m, size_t i)
{
	return m->function[i]->id;
}

static uint64_t location_id(const PProfile *m, size_t i)
{
	return m->location[i]->id;
}

static uint64_t mapping_id(const PProfile *m, size_t i)
{
	return m->mapping[i]->id;
}

/* The kind a location's mapping stands for: one of our pseudo-mappings, else native code. */
static enum frame_kind kind_of_mapping(const char *filename)
{
	for (int k = 0; k < FRAME_KIND_NR; k++) {
		const char *name = output__kind_mapping((enum frame_kind)k);

		if (name && filename && !strcmp(name, filename))
			return (enum frame_kind)k;
	}
	return FRAME_KIND_NATIVE;
}

/* Whether frames of kind are Java methods, whose lines a profile may keep. */
static bool is_java_kind(enum frame_kind kind)
{
	return kind == FRAME_KIND_JAVA || kind == FRAME_KIND_JAVA_COMPILED || kind == FRAME_KIND_JAVA_INLINED ||
	       kind == FRAME_KIND_JAVA_INTERP;
}

/* The module a native mapping names (its file and build-id), or 0 for none. */
static uint32_t module_of(struct reader *r, const Perftools__Profiles__Mapping *mapping)
{
	const char *file = string_at(r, mapping->filename), *build_id = string_at(r, mapping->build_id);

	if (!file || !*file || !strcmp(file, output__kind_mapping(FRAME_KIND_NATIVE)))
		return 0;
	return profile__module(r->rec->profile, file, build_id ? build_id : "");
}

/* Every location's frames, interned once: lines are innermost first, frames root first. */
static int intern_locations(struct reader *r)
{
	const PProfile *m = r->msg;
	size_t total = 0, at = 0;

	for (size_t i = 0; i < m->n_mapping; i++)
		if (!string_at(r, m->mapping[i]->filename) || !string_at(r, m->mapping[i]->build_id))
			return refuse__say(r->err, r->err_size, "mapping %" PRIu64 " has a file name or build-id outside the string table",
				    m->mapping[i]->id);
	for (size_t i = 0; i < m->n_location; i++) {
		if (m->location[i]->n_line > MAX_READ_DEPTH)
			return refuse__say(r->err, r->err_size, "location %" PRIu64 " has %zu lines", m->location[i]->id,
				    m->location[i]->n_line);
		total += m->location[i]->n_line;
	}
	r->location_frames = calloc(m->n_location + 1, sizeof(*r->location_frames));
	r->frames_flat = calloc(total ? total : 1, sizeof(*r->frames_flat));
	if (!r->location_frames || !r->frames_flat)
		return refuse__say(r->err, r->err_size, "out of memory");
	for (size_t i = 0; i < m->n_location; i++) {
		const PLocation *loc = m->location[i];
		enum frame_kind kind = FRAME_KIND_NATIVE;
		uint32_t module = 0;

		if (loc->mapping_id) {
			ssize_t mi = find_id(r->mappings, m->n_mapping, loc->mapping_id);

			if (mi < 0)
				return refuse__say(r->err, r->err_size, "location %" PRIu64 " names mapping %" PRIu64
					    ", which does not exist", loc->id, loc->mapping_id);
			kind = kind_of_mapping(string_at(r, m->mapping[mi]->filename));
			module = kind == FRAME_KIND_NATIVE ? module_of(r, m->mapping[mi]) : 0;
		}
		r->location_frames[i] = (int64_t)at;
		for (size_t l = loc->n_line; l-- > 0;) {
			ssize_t fi = find_id(r->functions, m->n_function, loc->line[l]->function_id);
			const char *name, *exact, *file;
			struct frame_position pos = { .line = 0, .bci = -1 };
			int64_t id;

			if (fi < 0)
				return refuse__say(r->err, r->err_size, "location %" PRIu64 " names function %" PRIu64
					    ", which does not exist", loc->id, loc->line[l]->function_id);
			name = string_at(r, m->function[fi]->name);
			exact = string_at(r, m->function[fi]->system_name);
			file = string_at(r, m->function[fi]->filename);
			if (!name || !exact || !file)
				return refuse__say(r->err, r->err_size, "function %" PRIu64 " has a name outside the string table",
					    m->function[fi]->id);
			/* A Java frame's line, and its class's file: the recording's (or any Java profile's) position. */
			if (is_java_kind(kind) && loc->line[l]->line > 0 && loc->line[l]->line <= INT32_MAX) {
				pos.line = (int32_t)loc->line[l]->line;
				pos.file = file;
			}
			id = profile__intern_at(r->rec->profile, *exact ? exact : *name ? name : "[unnamed]", kind, &pos);
			if (id < 0)
				return refuse__say(r->err, r->err_size, "too many distinct frames");
			profile__set_frame_module(r->rec->profile, (uint32_t)id, module);
			r->frames_flat[at++] = (uint32_t)id;
		}
	}
	r->location_frames[m->n_location] = (int64_t)at;
	return 0;
}

/* ---- labels ---------------------------------------------------------------- */

/*
 * Up to 40 bytes of a string from the file, fit for a one-line message:
 * control characters (a newline, an escape sequence) become '?'.
 */
static const char *quoted(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; s[n] && n < 40 && n + 1 < size; n++)
		buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
	buf[n] = '\0';
	return buf;
}

struct sample_labels {
	const char *process, *thread;
	const char *service, *container; /* a process's program and container; NULL when absent */
	int64_t pid, tid;      /* -1 when absent */
	int state;             /* enum jbpf_state, -1 when absent */
	/* --wakers: the waker's process (name, program) and thread, and their ids (-1 when absent) */
	const char *waker_process, *waker_service, *waker_thread;
	int64_t waker_pid, waker_tid;
	/* When (output/pprof.c's "timestamp" and "duration", in ns): timed is false without a timestamp */
	bool timed;
	int64_t timestamp, duration;
};

/*
 * A "timestamp" or "duration" label: ours when it is a number in
 * nanoseconds (or of no unit), into out; 1 for another tool's, not ours
 * to judge; -1 for a duration below 0.
 */
static int read_time_label(struct reader *r, size_t n, const PLabel *l, const char *key, struct sample_labels *out)
{
	const char *unit = string_at(r, l->num_unit);

	if (l->str || !unit || (unit[0] && strcmp(unit, "nanoseconds")))
		return 1;
	if (key[0] == 't') {
		out->timestamp = l->num;
		out->timed = true;
		return 0;
	}
	if (l->num < 0)
		return refuse__say(r->err, r->err_size, "sample %zu: label duration is %" PRId64 " ns, below 0", n,
			      l->num);
	out->duration = l->num;
	return 0;
}

/* A waker's label (waker_*), into out. 0, or -1 for one that contradicts its kind. */
static int read_waker_label(struct reader *r, size_t n, const PLabel *l, const char *key, const char *str,
			    struct sample_labels *out)
{
	const char *what = key + strlen("waker_");

	if (!strcmp(what, "pid") || !strcmp(what, "tid")) {
		if (l->str || l->num < 0 || l->num > UINT32_MAX)
			return refuse__say(r->err, r->err_size, "sample %zu: label %s must be a process or thread id",
				      n, key);
		*(what[0] == 'p' ? &out->waker_pid : &out->waker_tid) = l->num;
		return 0;
	}
	if (strcmp(what, "process") && strcmp(what, "thread") && strcmp(what, "service"))
		return 0; /* another tool's label: not ours to judge */
	if (!l->str && l->num)
		return refuse__say(r->err, r->err_size, "sample %zu: label %s must be a string, not a number", n, key);
	*(what[0] == 'p' ? &out->waker_process : what[0] == 's' ? &out->waker_service : &out->waker_thread) = str;
	return 0;
}

static int read_labels(struct reader *r, size_t n, const PSample *s, struct sample_labels *out)
{
	out->process = out->thread = out->service = out->container = NULL;
	out->waker_process = out->waker_service = out->waker_thread = NULL;
	out->pid = out->tid = out->waker_pid = out->waker_tid = -1;
	out->state = -1;
	out->timed = false;
	out->timestamp = out->duration = 0;
	for (size_t i = 0; i < s->n_label; i++) {
		const PLabel *l = s->label[i];
		const char *key = string_at(r, l->key), *str = string_at(r, l->str);
		char shown[41];
		bool numeric;

		if (!key || !str)
			return refuse__say(r->err, r->err_size, "sample %zu: a label refers outside the string table", n);
		if (!strncmp(key, "waker_", strlen("waker_"))) {
			if (read_waker_label(r, n, l, key, str, out))
				return -1;
			continue;
		}
		if (!strcmp(key, "timestamp") || !strcmp(key, "duration")) {
			if (read_time_label(r, n, l, key, out) < 0)
				return -1;
			continue;
		}
		numeric = !strcmp(key, "pid") || !strcmp(key, "tid");
		if (numeric) {
			if (l->str)
				return refuse__say(r->err, r->err_size, "sample %zu: label %s must be a number, not \"%s\"", n,
					    key, quoted(str, shown, sizeof(shown)));
			if (l->num < 0 || l->num > UINT32_MAX)
				return refuse__say(r->err, r->err_size, "sample %zu: label %s is %" PRId64
					    ", not a process or thread id", n, key, l->num);
			*(key[0] == 'p' ? &out->pid : &out->tid) = l->num;
			continue;
		}
		if (!strcmp(key, "service_name") || !strcmp(key, "container_id")) {
			/* Strings where they are ours; a number, another tool's, is not ours to judge. */
			if (l->str)
				*(key[0] == 's' ? &out->service : &out->container) = str;
			continue;
		}
		if (strcmp(key, "process") && strcmp(key, "thread") && strcmp(key, "state"))
			continue; /* another tool's label: not ours to judge */
		if (!l->str && l->num)
			return refuse__say(r->err, r->err_size, "sample %zu: label %s must be a string, not a number", n, key);
		if (!strcmp(key, "state")) {
			out->state = -1;
			for (int st = 0; st < JBPF_STATE_NR; st++)
				if (!strcmp(str, profile__state_name((unsigned)st)))
					out->state = st;
			if (out->state < 0)
				return refuse__say(r->err, r->err_size, "sample %zu: label state is \"%s\", not one of "
					    "running, runnable, sleeping, blocked", n, quoted(str, shown, sizeof(shown)));
		} else {
			*(key[0] == 'p' ? &out->process : &out->thread) = str;
		}
	}
	return 0;
}

/* ---- samples ---------------------------------------------------------------- */

static int push_id(struct reader *r, uint32_t *stack, size_t *depth, int64_t id)
{
	if (id < 0)
		return refuse__say(r->err, r->err_size, "too many distinct frames");
	stack[(*depth)++] = (uint32_t)id;
	return 0;
}

static int push_state(struct reader *r, uint32_t *stack, size_t *depth, int state)
{
	r->rec->has_states = true;
	return push_id(r, stack, depth, profile__intern_state(r->rec->profile, (unsigned)state));
}

/* Ticks since the recording's start of a time in ns since the epoch: 0 before it, saturating after 2^32. */
static uint32_t tick_of(const struct reader *r, int64_t ns)
{
	uint64_t ticks;

	if (ns <= r->rec->start_unix_ns)
		return 0;
	ticks = ((uint64_t)ns - (uint64_t)r->rec->start_unix_ns) / TIMELINE_TICK_NS;
	return ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

/* A timed sample's span: from its timestamp, one tick or its duration long, weighing its count. */
static int add_time(struct reader *r, uint32_t index, const struct sample_labels *labels, uint64_t count)
{
	uint64_t first = tick_of(r, labels->timestamp), ticks = (uint64_t)labels->duration / TIMELINE_TICK_NS;
	uint64_t last = first + (ticks ? ticks - 1 : 0);

	return profile__add_span(r->rec->profile, index, (uint32_t)first, last > UINT32_MAX ? UINT32_MAX : (uint32_t)last,
				 count);
}

static int add_sample(struct reader *r, size_t n, uint32_t *stack)
{
	uint32_t index;
	const PSample *s = r->msg->sample[n];
	struct sample_labels labels;
	size_t depth = 0, frames = 0, first_location = 0;
	int64_t value, objects;
	uint64_t count;
	int err;

	if (s->n_value != r->msg->n_sample_type)
		return refuse__say(r->err, r->err_size, "sample %zu has %zu values for %zu sample types", n, s->n_value,
			    r->msg->n_sample_type);
	value = s->value[r->value_index];
	if (value < 0)
		return refuse__say(r->err, r->err_size, "sample %zu has a negative value", n);
	count = r->value_ns ? ((uint64_t)value + 500) / 1000 : (uint64_t)value;
	objects = r->objects_index >= 0 ? s->value[r->objects_index] : 0;
	if (objects < 0)
		return refuse__say(r->err, r->err_size, "sample %zu has a negative value", n);
	/* In a file of several events, a sample of another one has nothing in this one's types. */
	if (r->several && !value && !objects)
		return 0;
	if (read_labels(r, n, s, &labels))
		return -1;
	/* Frames of the locations, leaf first, keeping the leafmost MAX_READ_DEPTH. */
	for (size_t i = 0; i < s->n_location_id; i++) {
		ssize_t li = find_id(r->locations, r->msg->n_location, s->location_id[i]);

		if (li < 0)
			return refuse__say(r->err, r->err_size, "sample %zu names location %" PRIu64 ", which does not exist",
				    n, s->location_id[i]);
		frames += (size_t)(r->location_frames[li + 1] - r->location_frames[li]);
		if (frames > MAX_READ_DEPTH)
			break;
		first_location = i + 1;
	}
	if ((labels.process || labels.pid >= 0) &&
	    push_id(r, stack, &depth,
		    profile__intern_process_parts(r->rec->profile,
						  &(struct process_parts){
							  .name = labels.process ? labels.process : "[unknown]",
							  .program = labels.service,
							  .container = labels.container,
							  .pid = labels.pid,
						  })))
		return -1;
	if ((labels.thread || labels.tid >= 0) &&
	    push_id(r, stack, &depth, profile__intern_thread(r->rec->profile,
							      labels.thread ? labels.thread : "[unknown]", labels.tid)))
		return -1;
	for (size_t i = first_location; i-- > 0;) {
		ssize_t li = find_id(r->locations, r->msg->n_location, s->location_id[i]);

		for (int64_t f = r->location_frames[li]; f < r->location_frames[li + 1]; f++) {
			/* A wait's state ends its own frames: its waker's (--wakers) come after it. */
			if (labels.state >= 0 && profile__frame_kind(r->rec->profile, r->frames_flat[f]) == FRAME_KIND_WAKER) {
				if (push_state(r, stack, &depth, labels.state))
					return -1;
				labels.state = -1;
			}
			stack[depth++] = r->frames_flat[f];
		}
	}
	if (labels.state >= 0 && push_state(r, stack, &depth, labels.state))
		return -1;
	/* A waker's roots end its part, outermost last: its thread, then its process. */
	if ((labels.waker_thread || labels.waker_tid >= 0) &&
	    push_id(r, stack, &depth,
		    profile__intern_waker_thread(r->rec->profile, labels.waker_thread ? labels.waker_thread : "[unknown]",
						 labels.waker_tid)))
		return -1;
	if ((labels.waker_process || labels.waker_pid >= 0) &&
	    push_id(r, stack, &depth,
		    profile__intern_waker_process_parts(r->rec->profile,
							&(struct process_parts){
								.name = labels.waker_process ? labels.waker_process
											     : "[unknown]",
								.program = labels.waker_service,
								.pid = labels.waker_pid,
							})))
		return -1;
	err = profile__add_objects_indexed(r->rec->profile, stack, depth, count, (uint64_t)objects, &index);
	if (err == -ENOSPC)
		return refuse__say(r->err, r->err_size, "too many distinct stacks");
	/* A span full is counted by the timeline; the recording reads on. */
	if (!err && labels.timed)
		err = add_time(r, index, &labels, count) == -ENOMEM ? -ENOMEM : 0;
	if (err)
		return refuse__say(r->err, r->err_size, "out of memory");
	return 0;
}

/* ---- the header --------------------------------------------------------------- */

static char *comment_value(const struct reader *r, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < r->msg->n_comment; i++) {
		const char *c = string_at(r, r->msg->comment[i]);

		if (c && !strncmp(c, key, klen) && c[klen] == ':' && c[klen + 1] == ' ')
			return strdup(c + klen + 2);
	}
	return NULL;
}

/* Whether sample type type is one of event's in a file of several (output/pprof.c names them). */
static bool type_of_event(const char *type, const char *event)
{
	if (!strcmp(event, "cpu"))
		return !strcmp(type, "samples") || !strcmp(type, "cpu");
	/* Named as the writer names them (output/output.h). */
	if (output__event_allocates(event))
		return !strcmp(type, output__space_type(event)) || !strcmp(type, output__objects_type(event));
	return !strcmp(type, event);
}

/* The words of events a file of several may list (output/pprof.c). */
static bool known_event(const char *word, size_t len)
{
	static const char *const words[] = { "cpu", "wall", "offcpu", "alloc", "nativemem", "leaks", "lock" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == len && !strncmp(words[i], word, len))
			return true;
	return false;
}

/*
 * The event comment of a file of several ("cpu,alloc"): rec->events, and
 * rec->event the one to read (r->want_event, or the first). Each word
 * must be an event's: the list is printed. An event asked for that the
 * file has not is refused, naming those it has.
 */
static int choose_event(struct reader *r)
{
	struct pprof_recording *rec = r->rec;
	const char *want = r->want_event, *chosen = NULL;
	char shown[64], asked[64];
	size_t len, chosen_len = 0;

	if (!rec->event || !strchr(rec->event, ',')) {
		if (want && rec->event && strcmp(want, rec->event))
			return refuse__say(r->err, r->err_size, "a recording of %s alone: it has no event %s",
				      quoted(rec->event, shown, sizeof(shown)), quoted(want, asked, sizeof(asked)));
		return 0;
	}
	/* Every word checked, the one asked for (or the first) noted. */
	for (const char *p = rec->event;; p += len + 1) {
		len = strcspn(p, ",");
		if (!known_event(p, len))
			return refuse__say(r->err, r->err_size, "its event comment \"%s\" names no event of ours",
				      quoted(rec->event, shown, sizeof(shown)));
		if (!chosen && (!want || (strlen(want) == len && !strncmp(p, want, len)))) {
			chosen = p;
			chosen_len = len;
		}
		if (!p[len])
			break;
	}
	if (!chosen)
		return refuse__say(r->err, r->err_size, "a recording of %s: it has no event %s",
			      quoted(rec->event, shown, sizeof(shown)), quoted(want, asked, sizeof(asked)));
	rec->events = rec->event;
	rec->event = strndup(chosen, chosen_len);
	r->several = true;
	return rec->event ? 0 : refuse__say(r->err, r->err_size, "out of memory");
}

static int read_header(struct reader *r)
{
	struct pprof_recording *rec = r->rec;
	const PProfile *m = r->msg;
	char *text;
	ssize_t samples = -1, time = -1, space = -1, objects = -1;

	for (size_t i = 0; i < m->n_comment; i++)
		if (!string_at(r, m->comment[i]))
			return refuse__say(r->err, r->err_size, "comment %zu refers outside the string table", i);
	rec->event = comment_value(r, "event");
	if (choose_event(r))
		return -1;
	for (size_t i = 0; i < m->n_sample_type; i++) {
		const char *type = string_at(r, m->sample_type[i]->type), *unit = string_at(r, m->sample_type[i]->unit);

		if (!type || !unit)
			return refuse__say(r->err, r->err_size, "sample type %zu refers outside the string table", i);
		/* Another event's types are not this reading's. */
		if (r->several && !type_of_event(type, rec->event))
			continue;
		if (samples < 0 && (!strcmp(type, "samples") || !strcmp(unit, "count")))
			samples = (ssize_t)i;
		if (time < 0 && (!strcmp(type, "wall") || !strcmp(type, "offcpu") || !strcmp(type, "lock")) &&
		    !strcmp(unit, "nanoseconds"))
			time = (ssize_t)i;
		if (space < 0 && (!strcmp(type, "alloc_space") || !strcmp(type, "inuse_space")) && !strcmp(unit, "bytes"))
			space = (ssize_t)i;
		if (objects < 0 && (!strcmp(type, "alloc_objects") || !strcmp(type, "inuse_objects")) &&
		    !strcmp(unit, "count"))
			objects = (ssize_t)i;
	}
	r->objects_index = -1;
	if (!m->n_sample_type)
		return refuse__say(r->err, r->err_size, "the profile has no sample type");
	if (r->several && samples < 0 && time < 0 && space < 0)
		return refuse__say(r->err, r->err_size, "event %s has no sample type of its own", rec->event);
	if (space >= 0 && time < 0 && (samples < 0 || samples == objects)) {
		r->value_index = (size_t)space;
		r->objects_index = objects;
		rec->bytes = true;
		if (!rec->event)
			rec->event = strdup(strcmp(string_at(r, m->sample_type[space]->type), "inuse_space") ? "alloc" : "leaks");
	} else if (time >= 0 && (samples < 0 || (rec->event && strcmp(rec->event, "cpu")))) {
		r->value_index = (size_t)time;
		r->value_ns = true;
		rec->time_weights = true;
	} else if (samples >= 0) {
		r->value_index = (size_t)samples;
	} else {
		r->value_index = m->default_sample_type > 0 ? 0 : m->n_sample_type - 1;
		for (size_t i = 0; i < m->n_sample_type; i++)
			if (m->default_sample_type && m->sample_type[i]->type == m->default_sample_type)
				r->value_index = i;
	}
	if (!rec->event)
		rec->event = strdup(string_at(r, m->sample_type[r->value_index]->type));
	rec->title = comment_value(r, "title");
	rec->summary = comment_value(r, "summary");
	rec->process_roots = comment_value(r, "process roots");
	text = comment_value(r, "frequency");
	if (text && sscanf(text, "%u", &rec->frequency_hz) != 1)
		rec->frequency_hz = 0;
	free(text);
	if (!rec->frequency_hz && m->period > 0 && m->period <= 1000000000)
		rec->frequency_hz = (unsigned)(1000000000 / m->period);
	rec->duration_s = m->duration_nanos > 0 ? (double)m->duration_nanos / 1e9 : 0.0;
	rec->start_unix_ns = m->time_nanos;
	if (!rec->event)
		return refuse__say(r->err, r->err_size, "out of memory");
	return 0;
}

static int read_message(struct reader *r)
{
	const PProfile *m = r->msg;
	uint32_t *stack;
	int err;

	if (!m->n_string_table || m->string_table[0][0])
		return refuse__say(r->err, r->err_size, "not a pprof profile: its string table does not start with \"\"");
	if (read_header(r) || sorted_ids(r, "function", m->n_function, function_id, &r->functions) ||
	    sorted_ids(r, "location", m->n_location, location_id, &r->locations) ||
	    sorted_ids(r, "mapping", m->n_mapping, mapping_id, &r->mappings) || intern_locations(r))
		return -1;
	stack = malloc((MAX_READ_DEPTH * 2 + 4) * sizeof(*stack));
	if (!stack)
		return refuse__say(r->err, r->err_size, "out of memory");
	err = 0;
	for (size_t i = 0; !err && i < m->n_sample; i++)
		err = add_sample(r, i, stack);
	free(stack);
	return err;
}

int pprof_read__buffer(const uint8_t *data, size_t len, struct pprof_recording *rec, char *err, size_t err_size)
{
	return pprof_read__buffer_event(data, len, NULL, rec, err, err_size);
}

int pprof_read__buffer_event(const uint8_t *data, size_t len, const char *event, struct pprof_recording *rec,
			    char *err, size_t err_size)
{
	struct reader r = { .rec = rec, .want_event = event, .err = err, .err_size = err_size };
	struct pprof_unpacked unpacked;
	int ret;

	memset(rec, 0, sizeof(*rec));
	/* A JDK Flight Recorder file reads as the same recording (input/jfr_read.h). */
	if (jfr_read__looks_like(data, len)) {
		ret = jfr_read__buffer(data, len, rec, err, err_size);
		if (!ret && event && strcmp(event, rec->event)) {
			char shown[64], asked[64];

			ret = refuse__say(err, err_size, "a recording of %s alone: it has no event %s",
				     quoted(rec->event, shown, sizeof(shown)), quoted(event, asked, sizeof(asked)));
			pprof_recording__free(rec);
		}
		return ret;
	}
	if (pprof_unpack__open(&unpacked, data, len, err, err_size))
		return -1;
	rec->profile = profile__new(NULL);
	r.msg = unpacked.msg;
	ret = rec->profile ? read_message(&r) : refuse__say(err, err_size, "out of memory");
	pprof_unpack__close(&unpacked);
	free(r.functions);
	free(r.locations);
	free(r.mappings);
	free(r.location_frames);
	free(r.frames_flat);
	if (ret)
		pprof_recording__free(rec);
	return ret;
}

int pprof_read__file(const char *path, struct pprof_recording *rec, char *err, size_t err_size)
{
	return pprof_read__file_event(path, NULL, rec, err, err_size);
}

int pprof_read__file_event(const char *path, const char *event, struct pprof_recording *rec, char *err, size_t err_size)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	uint8_t *data;
	size_t got = 0;
	struct stat st;
	int ret;

	memset(rec, 0, sizeof(*rec));
	if (fd < 0)
		return refuse__say(err, err_size, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return refuse__say(err, err_size, "not a regular file");
	}
	if ((uint64_t)st.st_size > PPROF_MAX_FILE_BYTES) {
		close(fd);
		return refuse__say(err, err_size, "larger than %u MiB", PPROF_MAX_FILE_BYTES >> 20);
	}
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		close(fd);
		return refuse__say(err, err_size, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			free(data);
			close(fd);
			return refuse__say(err, err_size, "cannot read: %s", strerror(e));
		}
		got += (size_t)n;
	}
	close(fd);
	if (!got) {
		free(data);
		return refuse__say(err, err_size, "empty file, not a pprof profile");
	}
	ret = pprof_read__buffer_event(data, got, event, rec, err, err_size);
	free(data);
	return ret;
}

void pprof_recording__free(struct pprof_recording *rec)
{
	profile__free(rec->profile);
	free(rec->event);
	free(rec->events);
	free(rec->title);
	free(rec->summary);
	free(rec->process_roots);
	memset(rec, 0, sizeof(*rec));
}
