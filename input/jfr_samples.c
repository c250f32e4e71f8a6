/*
 * jfr_samples: a JFR file's sample events into stacks of the profile (the
 * reader's other half, input/jfr_read.c; contract in input/jfr_read.h): a
 * sample's thread, stack trace and state, each read once per key.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread_state.h"
#include "profile/profile.h"

/* ---- samples --------------------------------------------------------------------------------------- */

/* The kind a frame type's description stands for, and whether its class names it. */
static enum frame_kind kind_of(const char *type, bool has_class)
{
	if (!strcmp(type, "Interpreted"))
		return FRAME_KIND_JAVA_INTERP;
	if (!strcmp(type, "JIT compiled"))
		return FRAME_KIND_JAVA_COMPILED;
	if (!strcmp(type, "Inlined"))
		return FRAME_KIND_JAVA_INLINED;
	if (!strcmp(type, "Kernel"))
		return FRAME_KIND_KERNEL;
	/* A Java method declared native is Java code by its name; C++ and other code without a class is not.
	 */
	return has_class && strcmp(type, "C++") ? FRAME_KIND_JAVA : FRAME_KIND_NATIVE;
}

static const char *const suffixes[FRAME_KIND_NR] = {
    [FRAME_KIND_KERNEL] = "_[k]",
    [FRAME_KIND_JAVA_INTERP] = "_[0]",
    [FRAME_KIND_JAVA_COMPILED] = "_[j]",
    [FRAME_KIND_JAVA_INLINED] = "_[i]",
};

/* The names of method key, from its pool entry: false when it has none. */
static bool method_names(struct reader *r, uint64_t key, char *method_name, char *class_name)
{
	struct cur m = jfr_read__pool_entry(r, r->c_method, key);
	const struct jclass *mc = &r->classes[r->c_method];

	method_name[0] = class_name[0] = '\0';
	for (size_t k = 0; !m.bad && k < mc->nr_fields; k++) {
		const struct jfield *mf = &mc->fields[k];

		if (!strcmp(mf->name, "name")) {
			jfr_read__text(r, &m, mf, method_name, MAX_NAME, 1);
		} else if (!strcmp(mf->name, "type") && mf->pooled && mf->type == r->c_class) {
			struct cur k2 = jfr_read__pool_entry(r, r->c_class, jfr_read__get_long(r, &m));
			const struct jclass *cc = &r->classes[r->c_class];
			int n = jfr_read__field_index(cc, "name");

			for (int j = 0; n >= 0 && !k2.bad && j < n; j++)
				jfr_read__skip_value(r, &k2, &cc->fields[j], 1);
			if (n >= 0 && !k2.bad)
				jfr_read__text(r, &k2, &cc->fields[n], class_name, MAX_NAME, 1);
		} else {
			jfr_read__skip_value(r, &m, mf, 1);
		}
	}
	return !jfr_read__pool_entry(r, r->c_method, key).bad;
}

/* The frames of method key (a new entry, nothing named yet); NULL when out of memory. */
static struct method_frames *method_entry(struct reader *r, uint64_t key)
{
	struct method_frames *m;
	uint64_t index;

	if (jfr_read__map_get(&r->methods, key, &index))
		return &r->method_frames[index];
	if (r->nr_method_frames == r->cap_method_frames) {
		size_t cap = r->cap_method_frames ? r->cap_method_frames * 2 : 256;

		m = realloc(r->method_frames, cap * sizeof(*m));
		if (!m)
			return NULL;
		r->method_frames = m;
		r->cap_method_frames = cap;
	}
	if (jfr_read__map_put(&r->methods, key, r->nr_method_frames))
		return NULL;
	m = &r->method_frames[r->nr_method_frames++];
	for (size_t k = 0; k < FRAME_KIND_NR; k++)
		m->id[k] = -1;
	m->has_class = -1;
	m->base = NULL;
	return m;
}

/* Whether a frame of kind at pos is interned with its position: a Java frame that has one. */
static bool has_position(enum frame_kind kind, const struct frame_position *pos)
{
	return (pos->line != 0 || pos->bci >= 0) && (kind == FRAME_KIND_JAVA || kind == FRAME_KIND_JAVA_INTERP ||
						     kind == FRAME_KIND_JAVA_COMPILED || kind == FRAME_KIND_JAVA_INLINED);
}

/*
 * A frame of a stack trace: its method and type, named and interned; a
 * Java frame with its line and bytecode index (lineNumber, bytecodeIndex)
 * where the file gives them, as pprof keeps lines. A method's name and
 * class are read once a chunk (its base name kept in method_frames:
 * stacks share their methods), and a frame without a position is interned
 * once for each kind of frame its method is met as.
 */
static int64_t frame_id(struct reader *r, struct cur *c)
{
	const struct jclass *fc = &r->classes[r->c_frame];
	char method_name[MAX_NAME], class_name[MAX_NAME], type[64] = "Native", name[2 * MAX_NAME + 8];
	struct frame_position pos = { .line = 0, .bci = -1 };
	struct method_frames *m;
	uint64_t key = 0;
	bool has_key = false;
	enum frame_kind kind;

	for (size_t i = 0; i < fc->nr_fields && !c->bad; i++) {
		const struct jfield *f = &fc->fields[i];

		if (f->word == W_METHOD && f->pooled && f->type == r->c_method && !f->array) {
			key = jfr_read__get_long(r, c);
			has_key = true;
		} else if (f->word == W_TYPE) {
			jfr_read__text(r, c, f, type, sizeof(type), 1);
		} else if ((!strcmp(f->name, "lineNumber") || !strcmp(f->name, "bytecodeIndex")) && !f->pooled &&
			   !f->array && r->classes[f->type].prim == P_INT) {
			/* A Java int: -1 (none) comes as its 32 bits, or sign-extended. */
			int32_t v = (int32_t)(uint32_t)jfr_read__get_int(c, r->compressed, 4);

			*(f->name[0] == 'l' ? &pos.line : &pos.bci) = v < 0 ? (f->name[0] == 'l' ? 0 : -1) : v;
		} else {
			jfr_read__skip_value(r, c, f, 1);
		}
	}
	if (c->bad)
		return -EINVAL;
	if (!has_key) {
		kind = kind_of(type, false);
		snprintf(name, sizeof(name), "[unknown]%s", suffixes[kind] ? suffixes[kind] : "");
		return profile__intern(r->rec->profile, name, kind);
	}
	m = method_entry(r, key);
	if (!m)
		return -ENOMEM;
	if (!m->base) {
		bool has_method = method_names(r, key, method_name, class_name);

		m->has_class = class_name[0] != '\0';
		for (char *s = class_name; *s; s++)
			if (*s == '/')
				*s = '.';
		snprintf(name, sizeof(name), "%s%s%s", class_name, class_name[0] ? "." : "",
			 has_method && method_name[0] ? method_name : "[unknown]");
		m->base = strdup(name);
		if (!m->base)
			return -ENOMEM;
	}
	kind = kind_of(type, m->has_class);
	if (!has_position(kind, &pos) && m->id[kind] >= 0)
		return m->id[kind];
	snprintf(name, sizeof(name), "%s%s", m->base, suffixes[kind] ? suffixes[kind] : "");
	if (has_position(kind, &pos))
		return profile__intern_at(r->rec->profile, name, kind, &pos);
	m->id[kind] = profile__intern(r->rec->profile, name, kind);
	return m->id[kind];
}

/* The frames of stack trace key, leaf first, read once: their offset in stack_ids and count. */
static int stack_frames(struct reader *r, uint64_t key, size_t *first, size_t *depth)
{
	const struct jclass *sc = &r->classes[r->c_stack_trace];
	uint64_t packed;
	struct cur c;
	int ff = jfr_read__field_index(sc, "frames");

	if (jfr_read__map_get(&r->stacks, key, &packed)) {
		*first = (size_t)(packed >> 16);
		*depth = (size_t)(packed & 0xffff);
		return 0;
	}
	c = jfr_read__pool_entry(r, r->c_stack_trace, key);
	if (c.bad || ff < 0 || !sc->fields[ff].array || sc->fields[ff].pooled ||
	    sc->fields[ff].type != r->c_frame)
		return -EINVAL;
	for (int i = 0; i < ff; i++)
		jfr_read__skip_value(r, &c, &sc->fields[i], 0);
	uint64_t count = jfr_read__get_int(&c, r->compressed, 4);

	if (c.bad || count > (uint64_t)(c.end - c.p))
		return -EINVAL;
	*first = r->nr_stack_ids;
	*depth = 0;
	for (uint64_t i = 0; i < count; i++) {
		int64_t id;

		if (*depth == MAX_FRAMES) {
			/* Past what is kept: its root end is cut. */
			jfr_read__skip_object(r, &c, &r->classes[r->c_frame], 1);
			continue;
		}
		id = frame_id(r, &c);
		if (id < 0)
			return (int)id;
		if (r->nr_stack_ids == r->cap_stack_ids) {
			size_t cap = r->cap_stack_ids ? r->cap_stack_ids * 2 : 4096;
			uint32_t *n = realloc(r->stack_ids, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			r->stack_ids = n;
			r->cap_stack_ids = cap;
		}
		r->stack_ids[r->nr_stack_ids++] = (uint32_t)id;
		(*depth)++;
	}
	if (c.bad || *first >= (1ull << 47))
		return -EINVAL;
	return jfr_read__map_put(&r->stacks, key, (uint64_t)*first << 16 | *depth);
}

/* The thread frame of thread key, read once; -1 for none. */
static int64_t thread_id(struct reader *r, uint64_t key)
{
	char java_name[MAX_NAME] = "", os_name[MAX_NAME] = "";
	const struct jclass *tc = r->c_thread == NO_CLASS ? NULL : &r->classes[r->c_thread];
	int64_t tid = -1, id;
	uint64_t known;
	struct cur c;

	if (jfr_read__map_get(&r->threads, key, &known))
		return (int64_t)known;
	c = jfr_read__pool_entry(r, r->c_thread, key);
	if (c.bad || !tc)
		return -1;
	for (size_t i = 0; i < tc->nr_fields && !c.bad; i++) {
		const struct jfield *f = &tc->fields[i];

		if (!strcmp(f->name, "javaName"))
			jfr_read__text(r, &c, f, java_name, sizeof(java_name), 1);
		else if (!strcmp(f->name, "osName"))
			jfr_read__text(r, &c, f, os_name, sizeof(os_name), 1);
		else if (!strcmp(f->name, "osThreadId") && !f->pooled && !f->array &&
		         r->classes[f->type].prim == P_LONG)
			tid = (int64_t)jfr_read__get_long(r, &c);
		else
			jfr_read__skip_value(r, &c, f, 1);
	}
	if (c.bad)
		return -1;
	id = profile__intern_thread(r->rec->profile,
	                            java_name[0] ? java_name
	                            : os_name[0] ? os_name
	                                         : "[unknown]",
	                            tid);
	if (id >= 0 && jfr_read__map_put(&r->threads, key, (uint64_t)id))
		return -1;
	return id;
}

/*
 * The state frame of a waiting thread's state: sleeping for waits, sleeps
 * and parks, blocked for a monitor's entry; -1 for a running thread (the
 * stack then has no state frame, as a CPU profile's) and states not known.
 */
static int64_t state_id(struct reader *r, const struct jfield *f, struct cur *c)
{
	static const char *const sleeping[] = {"STATE_SLEEPING", "STATE_IN_OBJECT_WAIT",
	                                       "STATE_IN_OBJECT_WAIT_TIMED", "STATE_PARKED",
	                                       "STATE_PARKED_TIMED"};
	char name[64];

	if (!jfr_read__text(r, c, f, name, sizeof(name), 1))
		return -1;
	for (size_t i = 0; i < sizeof(sleeping) / sizeof(sleeping[0]); i++)
		if (!strcmp(name, sleeping[i])) {
			r->rec->has_states = true;
			return profile__intern_state(r->rec->profile, JBPF_STATE_SLEEPING);
		}
	if (!strncmp(name, "STATE_BLOCKED", 13)) {
		r->rec->has_states = true;
		return profile__intern_state(r->rec->profile, JBPF_STATE_BLOCKED);
	}
	return -1;
}

/* One sample event of class cl at c: its thread, stack and state, added to the profile. */
int jfr_samples__add(struct reader *r, struct cur *c, const struct jclass *cl)
{
	uint32_t ids[MAX_FRAMES + 2];
	int64_t thread = -1, state = -1;
	size_t first = 0, depth = 0, n = 0;
	bool has_stack = false;
	int err;

	for (size_t i = 0; i < cl->nr_fields && !c->bad; i++) {
		const struct jfield *f = &cl->fields[i];

		if ((f->word == W_SAMPLED_THREAD || f->word == W_EVENT_THREAD) && f->pooled &&
		    f->type == r->c_thread && !f->array) {
			thread = thread_id(r, jfr_read__get_long(r, c));
		} else if (f->word == W_STACK_TRACE && f->pooled && f->type == r->c_stack_trace &&
		           !f->array) {
			err = stack_frames(r, jfr_read__get_long(r, c), &first, &depth);
			if (err == -ENOMEM)
				return err;
			has_stack = !err;
		} else if (f->word == W_STATE && f->type == r->c_state) {
			state = state_id(r, f, c);
		} else {
			jfr_read__skip_value(r, c, f, 1);
		}
	}
	if (c->bad)
		return -EINVAL;
	if (thread >= 0)
		ids[n++] = (uint32_t)thread;
	for (size_t k = depth; has_stack && k-- > 0;)
		ids[n++] = r->stack_ids[first + k];
	if (state >= 0)
		ids[n++] = (uint32_t)state;
	r->samples++;
	err = profile__add(r->rec->profile, ids, n, 1);
	return err == -ENOSPC ? -ENOSPC : err ? -ENOMEM : 0;
}
