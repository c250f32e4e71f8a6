/*
 * profile: interned frames and counted stacks (contract in profile.h).
 *
 * Layout:
 *   frames[]      one entry per distinct (name, kind, line, bci), indexed by frame id
 *   frame_index   open-addressing hash table of frame ids, keyed by the same
 *   stack_ids     all stacks' frame ids end to end; stacks[i] points into it
 *   stack_index   open-addressing hash table of stack numbers, keyed by ids
 *
 * Both hash tables hold indices + 1 (0 marks an empty slot), stay at most
 * half full, and double when they would not; lookups are linear probes.
 */
#include "profile.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread_state.h"
#include "timeline.h"

#define DEFAULT_MAX_FRAMES (1u << 20)
#define DEFAULT_MAX_STACKS (4u << 20)
/* 127 kernel + 127 user frames (perf's limit each) plus roots, with room. */
#define DEFAULT_MAX_DEPTH 512

struct frame {
	char *name;
	enum frame_kind kind;
	char *root_name;  /* a process or thread frame's name alone, else NULL */
	char *program;    /* a process frame's program, else NULL (struct process_parts) */
	char *container;  /* a process frame's container id, else NULL */
	int64_t number;   /* its pid or tid, a state frame's state; -1: none */
	uint32_t module;  /* 0: none, else index + 1 in modules */
	int32_t line;     /* a Java frame's position (struct frame_position): 0 none */
	int32_t bci;      /* -1 none */
	char *file;       /* NULL none */
	uint64_t hash;
};

struct module {
	char *path;
	char *build_id;
};

/* Modules are few (the files code runs from); more than this are not named. */
#define MAX_MODULES 65536

struct stack {
	size_t first;   /* offset of the first id in stack_ids */
	uint32_t depth;
	uint64_t count;
	uint64_t objects;  /* an allocation profile's: see profile__add_objects */
	uint64_t hash;
};

struct profile {
	struct profile_limits limits;
	struct frame *frames;
	size_t nr_frames, cap_frames;
	struct module *modules;
	size_t nr_modules, cap_modules;
	uint32_t *frame_index;
	size_t frame_index_cap;

	uint32_t *stack_ids;
	size_t nr_stack_ids, cap_stack_ids;
	struct stack *stacks;
	size_t nr_stacks, cap_stacks;
	uint32_t *stack_index;
	size_t stack_index_cap;

	uint64_t total;
	bool has_objects;

	struct timeline *timeline; /* made at the first span */
	uint64_t time_origin_ns;
	bool has_time_origin;
};

static const char *const kind_names[FRAME_KIND_NR] = {
	[FRAME_KIND_NATIVE] = "native",
	[FRAME_KIND_KERNEL] = "kernel",
	[FRAME_KIND_JIT] = "jit",
	[FRAME_KIND_JAVA] = "java",
	[FRAME_KIND_JAVA_INLINED] = "inlined",
	[FRAME_KIND_JAVA_INTERP] = "interpreted",
	[FRAME_KIND_JAVA_COMPILED] = "compiled",
	[FRAME_KIND_THREAD] = "thread",
	[FRAME_KIND_PROCESS] = "process",
	[FRAME_KIND_LOST] = "lost",
	[FRAME_KIND_STATE] = "state",
	[FRAME_KIND_CLASS] = "class",
	[FRAME_KIND_EVENT] = "event",
	[FRAME_KIND_WAKER] = "waker",
	[FRAME_KIND_WAKER_THREAD] = "waker-thread",
	[FRAME_KIND_WAKER_PROCESS] = "waker-process",
	[FRAME_KIND_CARRIER] = "carrier",
};

static const char *const state_frames[JBPF_STATE_NR] = {
	[JBPF_STATE_RUNNING] = "[running]",
	[JBPF_STATE_RUNNABLE] = "[runnable]",
	[JBPF_STATE_SLEEPING] = "[sleeping]",
	[JBPF_STATE_BLOCKED] = "[blocked]",
};

static const char *const state_names[JBPF_STATE_NR] = {
	[JBPF_STATE_RUNNING] = "running",
	[JBPF_STATE_RUNNABLE] = "runnable",
	[JBPF_STATE_SLEEPING] = "sleeping",
	[JBPF_STATE_BLOCKED] = "blocked",
};

const char *profile__state_frame(unsigned state)
{
	return state < JBPF_STATE_NR ? state_frames[state] : "[unknown state]";
}

const char *profile__state_name(unsigned state)
{
	return state < JBPF_STATE_NR ? state_names[state] : "unknown state";
}

const char *profile__frame_kind_name(enum frame_kind kind)
{
	if ((unsigned)kind >= FRAME_KIND_NR)
		return "unknown";
	return kind_names[kind];
}

/* FNV-1a, then a final mix so that low bits (the probe index) are good. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t hash_finish(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

struct profile *profile__new(const struct profile_limits *limits)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (limits)
		p->limits = *limits;
	if (!p->limits.max_frames)
		p->limits.max_frames = DEFAULT_MAX_FRAMES;
	if (!p->limits.max_stacks)
		p->limits.max_stacks = DEFAULT_MAX_STACKS;
	if (!p->limits.max_depth)
		p->limits.max_depth = DEFAULT_MAX_DEPTH;
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_frames; i++) {
		free(p->frames[i].name);
		free(p->frames[i].root_name);
		free(p->frames[i].program);
		free(p->frames[i].container);
		free(p->frames[i].file);
	}
	free(p->frames);
	for (size_t i = 0; i < p->nr_modules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	free(p->modules);
	free(p->frame_index);
	free(p->stack_ids);
	free(p->stacks);
	free(p->stack_index);
	timeline__free(p->timeline);
	free(p);
}

/* Grows *array so it holds at least need elements of size elem. */
static int reserve(void **array, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		ncap *= 2;
	}
	n = realloc(*array, ncap * elem);
	if (!n)
		return -ENOMEM;
	*array = n;
	*cap = ncap;
	return 0;
}

/*
 * Rebuilds a hash index of nr entries at twice the capacity. hash_of gives
 * entry i's hash; entries are stored as i + 1.
 */
static int index_grow(uint32_t **index, size_t *cap, size_t nr,
		      uint64_t (*hash_of)(const struct profile *, size_t), const struct profile *p)
{
	size_t ncap = *cap ? *cap * 2 : 256;
	uint32_t *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		size_t slot = hash_of(p, i) & (ncap - 1);

		while (n[slot])
			slot = (slot + 1) & (ncap - 1);
		n[slot] = (uint32_t)(i + 1);
	}
	free(*index);
	*index = n;
	*cap = ncap;
	return 0;
}

static uint64_t frame_hash_of(const struct profile *p, size_t i)
{
	return p->frames[i].hash;
}

static uint64_t stack_hash_of(const struct profile *p, size_t i)
{
	return p->stacks[i].hash;
}

static bool has_position(const struct frame_position *pos)
{
	return pos && (pos->line || pos->bci != -1);
}

/*
 * The id of the frame (name, kind, pos's line and bci), adding it if new
 * with its parts: root_name (copied, may be NULL), number, pos's file
 * (copied; pos may be NULL: no position).
 */
static int64_t intern_with(struct profile *p, const char *name, enum frame_kind kind, const char *root_name,
			   int64_t number, const struct frame_position *pos)
{
	uint64_t h = hash_bytes(hash_bytes(HASH_SEED, &kind, sizeof(kind)), name, strlen(name));
	int32_t line = has_position(pos) ? pos->line : 0, bci = has_position(pos) ? pos->bci : -1;
	size_t slot;
	int err;

	/* Frames without a position hash as before positions existed. */
	if (has_position(pos)) {
		h = hash_bytes(h, &line, sizeof(line));
		h = hash_bytes(h, &bci, sizeof(bci));
	}
	h = hash_finish(h);
	if (p->frame_index_cap) {
		slot = h & (p->frame_index_cap - 1);
		while (p->frame_index[slot]) {
			const struct frame *f = &p->frames[p->frame_index[slot] - 1];

			if (f->hash == h && f->kind == kind && f->line == line && f->bci == bci && !strcmp(f->name, name))
				return p->frame_index[slot] - 1;
			slot = (slot + 1) & (p->frame_index_cap - 1);
		}
	}
	if (p->nr_frames >= p->limits.max_frames || p->nr_frames >= UINT32_MAX - 1)
		return -ENOSPC;
	err = reserve((void **)&p->frames, &p->cap_frames, p->nr_frames + 1, sizeof(*p->frames));
	if (err)
		return err;
	if ((p->nr_frames + 1) * 2 > p->frame_index_cap) {
		err = index_grow(&p->frame_index, &p->frame_index_cap, p->nr_frames, frame_hash_of, p);
		if (err)
			return err;
	}
	struct frame *f = &p->frames[p->nr_frames];

	f->name = strdup(name);
	f->root_name = root_name ? strdup(root_name) : NULL;
	f->file = has_position(pos) && pos->file && *pos->file ? strdup(pos->file) : NULL;
	if (!f->name || (root_name && !f->root_name) || (has_position(pos) && pos->file && *pos->file && !f->file)) {
		free(f->name);
		free(f->root_name);
		free(f->file);
		return -ENOMEM;
	}
	f->line = line;
	f->bci = bci;
	f->kind = kind;
	f->number = number;
	f->program = f->container = NULL;
	f->module = 0;
	f->hash = h;
	slot = h & (p->frame_index_cap - 1);
	while (p->frame_index[slot])
		slot = (slot + 1) & (p->frame_index_cap - 1);
	p->frame_index[slot] = (uint32_t)(p->nr_frames + 1);
	return (int64_t)p->nr_frames++;
}

static int64_t intern(struct profile *p, const char *name, enum frame_kind kind, const char *root_name,
		      int64_t number)
{
	return intern_with(p, name, kind, root_name, number, NULL);
}

int64_t profile__intern(struct profile *p, const char *name, enum frame_kind kind)
{
	return profile__intern_at(p, name, kind, NULL);
}

int64_t profile__intern_at(struct profile *p, const char *name, enum frame_kind kind,
			   const struct frame_position *pos)
{
	if (kind == FRAME_KIND_PROCESS || kind == FRAME_KIND_THREAD || kind == FRAME_KIND_STATE ||
	    kind == FRAME_KIND_WAKER_PROCESS || kind == FRAME_KIND_WAKER_THREAD)
		return -EINVAL;
	return intern_with(p, name, kind, NULL, -1, pos);
}

struct frame_position profile__frame_position(const struct profile *p, uint32_t frame)
{
	if (frame >= p->nr_frames)
		return (struct frame_position){ .line = 0, .bci = -1 };
	return (struct frame_position){ .line = p->frames[frame].line, .bci = p->frames[frame].bci,
					.file = p->frames[frame].file };
}

bool profile__has_positions(const struct profile *p)
{
	for (size_t i = 0; i < p->nr_frames; i++)
		if (p->frames[i].line || p->frames[i].bci != -1)
			return true;
	return false;
}

/*
 * Interns a frame whose text is made by format from the arguments: in a
 * buffer on the stack, or in one from the heap for a long name.
 */
static int64_t intern_formatted(struct profile *p, enum frame_kind kind, const char *root_name, int64_t number,
				const char *format, ...) __attribute__((format(printf, 5, 6)));
static int64_t intern_formatted(struct profile *p, enum frame_kind kind, const char *root_name, int64_t number,
				const char *format, ...)
{
	char buf[256], *text = buf;
	va_list ap;
	int64_t id;
	int len;

	va_start(ap, format);
	len = vsnprintf(buf, sizeof(buf), format, ap);
	va_end(ap);
	if (len < 0)
		return -EINVAL;
	if ((size_t)len >= sizeof(buf)) {
		va_start(ap, format);
		len = vasprintf(&text, format, ap);
		va_end(ap);
		if (len < 0)
			return -ENOMEM;
	}
	id = intern(p, text, kind, root_name, number);
	if (text != buf)
		free(text);
	return id;
}

/* A part worth showing: set and not empty. */
static bool given(const char *part)
{
	return part && *part;
}

static int64_t intern_process_parts(struct profile *p, const struct process_parts *parts, enum frame_kind kind)
{
	const char *name = parts->name ? parts->name : "";
	bool program = given(parts->program) && strcmp(parts->program, name);
	bool container = given(parts->container), pid = parts->pid >= 0;
	char pid_text[32] = "", container_text[32] = "";
	char *kept_program = program ? strdup(parts->program) : NULL;
	char *kept_container = container ? strdup(parts->container) : NULL;
	size_t before = p->nr_frames;
	int64_t id;

	if ((program && !kept_program) || (container && !kept_container)) {
		free(kept_program);
		free(kept_container);
		return -ENOMEM;
	}

	if (pid)
		snprintf(pid_text, sizeof(pid_text), "%spid %" PRId64, program ? ", " : "", parts->pid);
	if (container)
		snprintf(container_text, sizeof(container_text), "%scontainer %.*s", program || pid ? ", " : "",
			 PROCESS_CONTAINER_SHOWN, parts->container);
	if (program)
		id = intern_formatted(p, kind, name, parts->pid, "%s (%s%s%s)", parts->program, name, pid_text,
				      container_text);
	else if (pid || container)
		id = intern_formatted(p, kind, name, parts->pid, "%s (%s%s)", name, pid_text, container_text);
	else
		id = intern(p, name, kind, name, -1);
	/* A frame that was new keeps these parts; one already there, those it was made with. */
	if (id >= 0 && p->nr_frames > before) {
		p->frames[id].program = kept_program;
		p->frames[id].container = kept_container;
	} else {
		free(kept_program);
		free(kept_container);
	}
	return id;
}

int64_t profile__intern_process_parts(struct profile *p, const struct process_parts *parts)
{
	return intern_process_parts(p, parts, FRAME_KIND_PROCESS);
}

int64_t profile__intern_waker_process_parts(struct profile *p, const struct process_parts *parts)
{
	return intern_process_parts(p, parts, FRAME_KIND_WAKER_PROCESS);
}

int64_t profile__intern_process(struct profile *p, const char *name, int64_t pid)
{
	return profile__intern_process_parts(p, &(struct process_parts){ .name = name, .pid = pid });
}

static int64_t intern_thread(struct profile *p, const char *name, int64_t tid, enum frame_kind kind)
{
	if (tid < 0)
		return intern_formatted(p, kind, name, -1, "[%s]", name);
	return intern_formatted(p, kind, name, tid, "[%s tid=%" PRId64 "]", name, tid);
}

int64_t profile__intern_thread(struct profile *p, const char *name, int64_t tid)
{
	return intern_thread(p, name, tid, FRAME_KIND_THREAD);
}

int64_t profile__intern_waker_thread(struct profile *p, const char *name, int64_t tid)
{
	return intern_thread(p, name, tid, FRAME_KIND_WAKER_THREAD);
}

int64_t profile__intern_state(struct profile *p, unsigned state)
{
	return intern(p, profile__state_frame(state), FRAME_KIND_STATE, NULL, state < JBPF_STATE_NR ? (int64_t)state : -1);
}

int profile__add(struct profile *p, const uint32_t *frames, size_t depth, uint64_t count)
{
	return profile__add_indexed(p, frames, depth, count, NULL);
}

void profile__add_to(struct profile *p, uint32_t index, uint64_t count)
{
	if (index >= p->nr_stacks)
		return;
	p->stacks[index].count += count;
	p->total += count;
}

int profile__add_indexed(struct profile *p, const uint32_t *frames, size_t depth, uint64_t count, uint32_t *index)
{
	uint64_t h;
	size_t slot;
	int err;

	if (depth > p->limits.max_depth) {
		/* Keep the leaf end: that is where the time was spent. */
		frames += depth - p->limits.max_depth;
		depth = p->limits.max_depth;
	}
	for (size_t i = 0; i < depth; i++)
		if (frames[i] >= p->nr_frames)
			return -EINVAL;
	h = hash_finish(hash_bytes(HASH_SEED, frames, depth * sizeof(*frames)));
	if (p->stack_index_cap) {
		slot = h & (p->stack_index_cap - 1);
		while (p->stack_index[slot]) {
			struct stack *s = &p->stacks[p->stack_index[slot] - 1];

			/* With no frames stack_ids may still be NULL: memcmp must not see it. */
			if (s->hash == h && s->depth == depth &&
			    (!depth || !memcmp(&p->stack_ids[s->first], frames, depth * sizeof(*frames)))) {
				s->count += count;
				p->total += count;
				if (index)
					*index = p->stack_index[slot] - 1;
				return 0;
			}
			slot = (slot + 1) & (p->stack_index_cap - 1);
		}
	}
	if (p->nr_stacks >= p->limits.max_stacks || p->nr_stacks >= UINT32_MAX - 1)
		return -ENOSPC;
	err = reserve((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks));
	if (!err)
		err = reserve((void **)&p->stack_ids, &p->cap_stack_ids, p->nr_stack_ids + depth,
			      sizeof(*p->stack_ids));
	if (!err && (p->nr_stacks + 1) * 2 > p->stack_index_cap)
		err = index_grow(&p->stack_index, &p->stack_index_cap, p->nr_stacks, stack_hash_of, p);
	if (err)
		return err;

	struct stack *s = &p->stacks[p->nr_stacks];

	s->first = p->nr_stack_ids;
	s->depth = (uint32_t)depth;
	s->count = count;
	s->objects = 0;
	s->hash = h;
	if (depth)
		memcpy(&p->stack_ids[p->nr_stack_ids], frames, depth * sizeof(*frames));
	p->nr_stack_ids += depth;
	slot = h & (p->stack_index_cap - 1);
	while (p->stack_index[slot])
		slot = (slot + 1) & (p->stack_index_cap - 1);
	p->stack_index[slot] = (uint32_t)(p->nr_stacks + 1);
	if (index)
		*index = (uint32_t)p->nr_stacks;
	p->nr_stacks++;
	p->total += count;
	return 0;
}

size_t profile__frame_count(const struct profile *p)
{
	return p->nr_frames;
}

const char *profile__frame_name(const struct profile *p, uint32_t frame)
{
	return frame < p->nr_frames ? p->frames[frame].name : "[invalid]";
}

enum frame_kind profile__frame_kind(const struct profile *p, uint32_t frame)
{
	return frame < p->nr_frames ? p->frames[frame].kind : FRAME_KIND_LOST;
}

const char *profile__root_name(const struct profile *p, uint32_t frame)
{
	return frame < p->nr_frames ? p->frames[frame].root_name : NULL;
}

void profile__process_parts(const struct profile *p, uint32_t frame, struct process_parts *parts)
{
	const struct frame *f = frame < p->nr_frames && (p->frames[frame].kind == FRAME_KIND_PROCESS ||
							 p->frames[frame].kind == FRAME_KIND_WAKER_PROCESS)
					? &p->frames[frame] : NULL;

	parts->name = f ? f->root_name : NULL;
	parts->program = f ? f->program : NULL;
	parts->container = f ? f->container : NULL;
	parts->pid = f ? f->number : -1;
}

int64_t profile__root_id(const struct profile *p, uint32_t frame)
{
	if (frame >= p->nr_frames || !p->frames[frame].root_name)
		return -1;
	return p->frames[frame].number;
}

int profile__frame_state(const struct profile *p, uint32_t frame)
{
	if (frame >= p->nr_frames || p->frames[frame].kind != FRAME_KIND_STATE)
		return -1;
	return (int)p->frames[frame].number;
}

int profile__add_objects(struct profile *p, const uint32_t *frames, size_t depth, uint64_t count, uint64_t objects)
{
	return profile__add_objects_indexed(p, frames, depth, count, objects, NULL);
}

int profile__add_objects_indexed(struct profile *p, const uint32_t *frames, size_t depth, uint64_t count,
				 uint64_t objects, uint32_t *index_out)
{
	uint32_t index;
	int err = profile__add_indexed(p, frames, depth, count, &index);

	if (!err && index_out)
		*index_out = index;

	if (!err && objects) {
		p->stacks[index].objects += objects;
		p->has_objects = true;
	}
	return err;
}

void profile__set_time_origin(struct profile *p, uint64_t origin_ns)
{
	p->time_origin_ns = origin_ns;
	p->has_time_origin = true;
}

/* A time on the origin's clock as ticks since the origin, the start for earlier ones, saturating late. */
static uint32_t tick_of(const struct profile *p, uint64_t ns)
{
	uint64_t ticks = ns > p->time_origin_ns ? (ns - p->time_origin_ns) / TIMELINE_TICK_NS : 0;

	return ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

int profile__add_time(struct profile *p, uint32_t index, uint64_t from_ns, uint64_t to_ns, uint64_t weight)
{
	if (!p->has_time_origin)
		return 0;
	return profile__add_span(p, index, tick_of(p, from_ns), tick_of(p, to_ns), weight);
}

int profile__add_span(struct profile *p, uint32_t index, uint32_t first, uint32_t last, uint64_t weight)
{
	if (index >= p->nr_stacks)
		return 0;
	if (!p->timeline && !(p->timeline = timeline__new(p->limits.max_spans)))
		return -ENOMEM;
	return timeline__add(p->timeline, index, first, last, weight);
}

const struct timeline *profile__timeline(const struct profile *p)
{
	return timeline__count(p->timeline) ? p->timeline : NULL;
}

bool profile__has_objects(const struct profile *p)
{
	return p->has_objects;
}

uint64_t profile__stack_objects(const struct profile *p, size_t i)
{
	return i < p->nr_stacks ? p->stacks[i].objects : 0;
}

size_t profile__stack_count(const struct profile *p)
{
	return p->nr_stacks;
}

const uint32_t *profile__stack(const struct profile *p, size_t i, size_t *depth, uint64_t *count)
{
	if (i >= p->nr_stacks) {
		*depth = 0;
		*count = 0;
		return NULL;
	}
	*depth = p->stacks[i].depth;
	*count = p->stacks[i].count;
	return &p->stack_ids[p->stacks[i].first];
}

uint64_t profile__total(const struct profile *p)
{
	return p->total;
}

uint32_t profile__module(struct profile *p, const char *path, const char *build_id)
{
	struct module *m;

	for (size_t i = 0; i < p->nr_modules; i++)
		if (!strcmp(p->modules[i].path, path) && !strcmp(p->modules[i].build_id, build_id))
			return (uint32_t)(i + 1);
	if (p->nr_modules >= MAX_MODULES ||
	    reserve((void **)&p->modules, &p->cap_modules, p->nr_modules + 1, sizeof(*p->modules)))
		return 0;
	m = &p->modules[p->nr_modules];
	m->path = strdup(path);
	m->build_id = strdup(build_id);
	if (!m->path || !m->build_id) {
		free(m->path);
		free(m->build_id);
		return 0;
	}
	return (uint32_t)++p->nr_modules;
}

void profile__set_frame_module(struct profile *p, uint32_t frame, uint32_t module)
{
	if (frame < p->nr_frames && module <= p->nr_modules && !p->frames[frame].module)
		p->frames[frame].module = module;
}

uint32_t profile__frame_module(const struct profile *p, uint32_t frame)
{
	return frame < p->nr_frames ? p->frames[frame].module : 0;
}

size_t profile__module_count(const struct profile *p)
{
	return p->nr_modules;
}

const char *profile__module_path(const struct profile *p, uint32_t module)
{
	return module && module <= p->nr_modules ? p->modules[module - 1].path : NULL;
}

const char *profile__module_build_id(const struct profile *p, uint32_t module)
{
	return module && module <= p->nr_modules ? p->modules[module - 1].build_id : NULL;
}
