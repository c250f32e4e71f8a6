/*
 * merge: one stack from a JVM thread's native sample and the Java stack
 * its agent took (contract in merge.h).
 */
#include "merge.h"

#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/java/join.h"

#define NAME_MAX_LEN 512

/* One user frame of a JVM thread, named and classified. */
struct jvm_frame {
	char name[NAME_MAX_LEN];
	enum frame_kind kind;
	bool generated;          /* in the JVM's generated code, or unknown memory */
	bool have_blob;
	struct javamap_code blob;
};

struct merge {
	struct aggregator *agg;
	struct symbolizer *sym;
	struct jvm_frame frames[JBPF_MAX_STACK_DEPTH];
	struct merge_kind_counts kinds;
};

struct merge *merge__new(struct aggregator *agg, struct symbolizer *sym)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (m) {
		m->agg = agg;
		m->sym = sym;
	}
	return m;
}

void merge__kind_counts(const struct merge *m, struct merge_kind_counts *out)
{
	*out = m->kinds;
}

void merge__free(struct merge *m)
{
	free(m);
}

/*
 * Names user frame i (0 the innermost) of a JVM thread. Code the JVM
 * generated lives in anonymous memory: the symbolizer calls it [anon] (or
 * names it from a perf map), and the agent's code map says what it is.
 */
static void jvm_user_frame(struct merge *m, const struct jbpf_sample *s, struct javamap *map, size_t i,
			   struct jvm_frame *f)
{
	const __u64 *ips = s->ips + s->kstack_len;
	uint64_t addr = i == 0 ? ips[i] : ips[i] - 1;
	enum sym_status status = symbolizer__user(m->sym, s->tgid, addr, f->name, sizeof(f->name));

	f->kind = status == SYM_JIT ? FRAME_KIND_JIT : FRAME_KIND_NATIVE;
	f->generated = status == SYM_JIT || status == SYM_UNKNOWN ||
		       (status == SYM_OFFSET && !strcmp(f->name, "[anon]"));
	f->have_blob = f->generated && map && javamap__code_at(map, addr, s->time_ns, &f->blob);
	if (f->have_blob && f->blob.name) {
		snprintf(f->name, sizeof(f->name), "%s", f->blob.name);
		f->kind = f->blob.kind == JBPF_CODE_NMETHOD ? FRAME_KIND_JAVA : FRAME_KIND_JIT;
	}
}

bool merge__in_generated_code(struct merge *m, const struct jbpf_sample *s, struct javamap *map)
{
	for (size_t i = 0; i < s->ustack_len; i++) {
		jvm_user_frame(m, s, map, i, &m->frames[0]);
		if (m->frames[0].generated)
			return true;
	}
	return false;
}

static const char *const annotations[FRAME_KIND_NR] = {
	[FRAME_KIND_JAVA_COMPILED] = "_[j]",
	[FRAME_KIND_JAVA_INLINED] = "_[i]",
	[FRAME_KIND_JAVA_INTERP] = "_[0]",
};

/* The profile's kind for a trace frame's JBPF_FRAME_* kind, FRAME_KIND_JAVA when the agent did not know. */
static enum frame_kind agent_kind(uint32_t kind)
{
	switch (kind & JBPF_FRAME_KIND_MASK) {
	case JBPF_FRAME_COMPILED:
		return FRAME_KIND_JAVA_COMPILED;
	case JBPF_FRAME_INLINED:
		return FRAME_KIND_JAVA_INLINED;
	case JBPF_FRAME_INTERPRETED:
		return FRAME_KIND_JAVA_INTERP;
	default:
		return FRAME_KIND_JAVA;
	}
}

/*
 * How each Java frame ran, where the native stack shows it: the generated
 * code it passes through is exact, walked from the innermost: a frame in
 * compiled method M means the trace's frames down to M's are inlined into
 * M and M is compiled; an interpreter frame is one interpreted Java frame.
 * The walk goes on only through code that keeps the frame pointer (the
 * interpreter, native method wrappers, stubs): compiled Java code does
 * not, so the address read above it may belong to any frame further out.
 * Sets exact[k] for each frame it reached.
 */
static void native_frame_kinds(struct merge *m, const struct jbpf_sample *s, struct javamap *map,
			       const struct join_trace *t, size_t cut, enum frame_kind *kinds, bool *exact)
{
	uint32_t n = t->frame_count, pos = 0;

	for (size_t i = cut; i < s->ustack_len && pos < n; i++) {
		const struct jvm_frame *f = &m->frames[i];
		uint32_t flags = 0, j;

		/* Frames past the cut are named only as far as this walk needs. */
		if (i > cut)
			jvm_user_frame(m, s, map, i, &m->frames[i]);
		if (!f->generated || !f->have_blob)
			break;
		if (f->blob.kind == JBPF_CODE_STUB) {
			if (f->blob.name && !strcmp(f->blob.name, "Interpreter")) {
				exact[pos] = true;
				kinds[pos++] = FRAME_KIND_JAVA_INTERP;
			}
			continue;
		}
		for (j = pos; j < n && t->frames[j].method_id != f->blob.method_id; j++)
			;
		if (j == n)
			break;
		for (uint32_t k = pos; k < j; k++) {
			exact[k] = true;
			kinds[k] = FRAME_KIND_JAVA_INLINED;
		}
		exact[j] = true;
		kinds[j] = FRAME_KIND_JAVA_COMPILED;
		pos = j + 1;
		if (!javamap__method(map, f->blob.method_id, &flags) || !(flags & JBPF_METHOD_NATIVE))
			break;
	}
}

/*
 * How each Java frame ran. Exact where the agent's walk of HotSpot's
 * frames knew (the trace's per-frame kinds), else where the native stack
 * shows it (native_frame_kinds, only needed when the agent's walk stopped
 * short). Frames neither reached are inferred: compiled if their method
 * has live compiled code, interpreted if not (a method can have both).
 */
static void java_frame_kinds(struct merge *m, const struct jbpf_sample *s, struct javamap *map,
			     const struct join_trace *t, size_t cut, enum frame_kind *kinds)
{
	bool exact[JBPF_STREAM_MAX_FRAMES] = { false };
	uint32_t n = t->frame_count, known = 0;

	for (uint32_t k = 0; k < n; k++)
		kinds[k] = javamap__is_compiled(map, t->frames[k].method_id) ? FRAME_KIND_JAVA_COMPILED
										 : FRAME_KIND_JAVA_INTERP;
	/* The agent's walk starts at the innermost frame: known frames come first. */
	while (known < n && agent_kind(t->frames[known].kind) != FRAME_KIND_JAVA)
		known++;
	if (known < n)
		native_frame_kinds(m, s, map, t, cut, kinds, exact);
	for (uint32_t k = 0; k < n; k++) {
		enum frame_kind kind = agent_kind(t->frames[k].kind);

		if (kind != FRAME_KIND_JAVA) {
			kinds[k] = kind;
			m->kinds.by_agent++;
		} else if (exact[k]) {
			m->kinds.by_native++;
		} else {
			m->kinds.inferred++;
		}
	}
}

/* Where a Java frame's id is kept in its method's slots (javamap__frame_slots). */
static int kind_slot(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KIND_JAVA_COMPILED:
		return 1;
	case FRAME_KIND_JAVA_INLINED:
		return 2;
	case FRAME_KIND_JAVA_INTERP:
		return 3;
	default:
		return 0;
	}
}

/*
 * One Java frame. Its profile id is kept in the method's slot for its
 * kind, so a method met again costs no formatting and no hashing.
 */
static void push_java(struct merge *m, struct javamap *map, uint64_t method_id, enum frame_kind kind)
{
	int64_t *slots = javamap__frame_slots(map, method_id), id;
	char name[NAME_MAX_LEN];

	if (slots && slots[kind_slot(kind)] >= 0) {
		aggregator__push_id(m->agg, slots[kind_slot(kind)]);
		return;
	}
	snprintf(name, sizeof(name), "%s%s", slots ? javamap__method(map, method_id, NULL) : "[unknown Java method]",
		 aggregator__annotates(m->agg) && annotations[kind] ? annotations[kind] : "");
	id = aggregator__intern(m->agg, name, kind);
	if (id < 0)
		return;
	if (slots)
		slots[kind_slot(kind)] = id;
	aggregator__push_id(m->agg, id);
}

static void add_java_frames(struct merge *m, const struct jbpf_sample *s, struct javamap *map,
			    const struct join_trace *t, size_t cut)
{
	enum frame_kind kinds[JBPF_STREAM_MAX_FRAMES];
	bool annotate = aggregator__annotates(m->agg);

	if (annotate)
		java_frame_kinds(m, s, map, t, cut, kinds);
	if (t->flags & JBPF_TRACE_TRUNCATED)
		aggregator__push(m->agg, "[Java stack truncated]", FRAME_KIND_LOST);
	for (uint32_t k = t->frame_count; k-- > 0;)
		push_java(m, map, t->frames[k].method_id, annotate ? kinds[k] : FRAME_KIND_JAVA);
}

void merge__add(struct merge *m, const struct jbpf_sample *s, const struct merge_java *java)
{
	const struct join_trace *t = java->trace && java->trace->status > 0 ? java->trace : NULL;
	struct jvm_frame *frames = m->frames;
	struct aggregator *agg = m->agg;
	const __u64 *ips = s->ips + s->kstack_len;
	size_t nr = 0, cut;
	/* A stack that ends in the class allocated counts a Java heap allocation (user/java/java_alloc.c). */
	bool began = java->leaf ? aggregator__begin_event(agg, s, java->thread_name, AGGREGATOR_HEAP)
				: aggregator__begin(agg, s, java->thread_name);

	if (!began)
		return;
	/*
	 * With Java frames, the native ones end where generated code begins:
	 * frames beyond it are replaced, so they are not even named.
	 */
	for (; nr < s->ustack_len; nr++) {
		jvm_user_frame(m, s, java->map, nr, &frames[nr]);
		if (t && frames[nr].generated) {
			nr++;
			break;
		}
	}
	cut = t && nr && frames[nr - 1].generated ? nr - 1 : nr;
	if (t) {
		add_java_frames(m, s, java->map, t, cut);
		/* A stub the Java code called (arraycopy and the like) is a frame of its own. */
		if (cut < nr && frames[cut].have_blob && frames[cut].blob.kind == JBPF_CODE_STUB &&
		    frames[cut].blob.name && strcmp(frames[cut].blob.name, "Interpreter"))
			aggregator__push(agg, frames[cut].name, FRAME_KIND_JIT);
		/* The native frames read end before Java began: say that some are missing. */
		if (cut == nr && (s->flags & JBPF_SAMPLE_USER_CUT))
			aggregator__push(agg, "[more native frames]", FRAME_KIND_LOST);
	} else {
		if (java->reason)
			aggregator__push(agg, java->reason, FRAME_KIND_LOST);
		if (s->flags & JBPF_SAMPLE_USER_CUT)
			aggregator__push(agg, "[more native frames]", FRAME_KIND_LOST);
		if (s->ustack_err && !s->ustack_len)
			aggregator__push_user_error(agg, s);
	}
	for (size_t i = cut; i-- > 0;)
		aggregator__push_user(agg, frames[i].name, frames[i].kind, s->tgid, i == 0 ? ips[i] : ips[i] - 1);
	if (java->leaf)
		aggregator__push(agg, java->leaf, FRAME_KIND_CLASS);
	aggregator__end_weighted(agg, s, java->weight ? java->weight : 1, java->objects);
}
