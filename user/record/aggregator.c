/*
 * aggregator: sample records to profile stacks (contract in aggregator.h).
 */
#include "aggregator.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"
#include "user/java/javamap.h"
#include "user/java/join.h"
#include "profile/shares.h"

/*
 * Frames of one stack: two roots, two full perf stacks, a Java stack, two
 * reason frames.
 */
#define MAX_FRAMES (2 + 2 * JBPF_MAX_STACK_DEPTH + JBPF_STREAM_MAX_FRAMES + 2)
#define NAME_MAX_LEN 512

/* One user frame of a JVM thread, named and classified. */
struct jvm_frame {
	char name[NAME_MAX_LEN];
	enum frame_kind kind;
	bool generated;          /* in the JVM's generated code, or unknown memory */
	bool have_blob;
	struct javamap_code blob;
};

struct aggregator {
	struct aggregator_config config;
	struct symbolizer *sym;
	struct profile *profile;
	struct aggregator_stats stats;
	uint32_t frames[MAX_FRAMES];
	struct jvm_frame *jvm_frames; /* JBPF_MAX_STACK_DEPTH, for JVM threads */
	struct shares *shares;        /* with time_weights */
};

struct aggregator *aggregator__new(const struct aggregator_config *config, struct symbolizer *sym,
				   struct profile *profile)
{
	struct aggregator *agg = calloc(1, sizeof(*agg));

	if (!agg)
		return NULL;
	agg->jvm_frames = calloc(JBPF_MAX_STACK_DEPTH, sizeof(*agg->jvm_frames));
	if (!agg->jvm_frames) {
		free(agg);
		return NULL;
	}
	agg->config = *config;
	agg->sym = sym;
	agg->profile = profile;
	if (config->time_weights) {
		agg->shares = shares__new(0);
		if (!agg->shares) {
			aggregator__free(agg);
			return NULL;
		}
	}
	return agg;
}

void aggregator__free(struct aggregator *agg)
{
	if (agg) {
		free(agg->jvm_frames);
		shares__free(agg->shares);
	}
	free(agg);
}

void aggregator__stats(const struct aggregator *agg, struct aggregator_stats *stats)
{
	*stats = agg->stats;
}

/* The comm the kernel gave us, which the target chose: NUL-terminate it. */
static void copy_comm(char *dst, const char comm[JBPF_COMM_LEN])
{
	memcpy(dst, comm, JBPF_COMM_LEN);
	dst[JBPF_COMM_LEN] = '\0';
}

/*
 * Appends one frame; returns false when the profile is full (the caller
 * drops the whole sample rather than keep a stack missing frames).
 */
static bool push(struct aggregator *agg, size_t *depth, const char *name, enum frame_kind kind)
{
	int64_t id;

	if (*depth >= MAX_FRAMES)
		return true;
	id = profile__intern(agg->profile, name, kind);
	if (id < 0)
		return false;
	agg->frames[(*depth)++] = (uint32_t)id;
	return true;
}

/*
 * push, for a user frame at addr: a native frame seen for the first time
 * is given the file it lies in (with config.modules), for pprof mappings.
 */
static bool push_user(struct aggregator *agg, size_t *depth, const char *name, enum frame_kind kind,
		      uint32_t tgid, uint64_t addr)
{
	size_t known = profile__frame_count(agg->profile);
	struct sym_module m;
	char hex[2 * sizeof(m.build_id) + 1];

	if (!push(agg, depth, name, kind))
		return false;
	if (!agg->config.modules || kind != FRAME_KIND_NATIVE || profile__frame_count(agg->profile) == known ||
	    symbolizer__user_module(agg->sym, tgid, addr, &m))
		return true;
	for (size_t i = 0; i < m.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m.build_id[i]);
	hex[2 * m.build_id_len] = '\0';
	profile__set_frame_module(agg->profile, agg->frames[*depth - 1], profile__module(agg->profile, m.path, hex));
	return true;
}

static const char *stack_error_reason(int error, bool user)
{
	switch (-error) {
	case EFAULT:
		return user ? "[user stack unreadable]" : "[kernel stack unreadable]";
	case ENOMEM:
	case ENOSPC:
		return "[stack too deep]";
	/* Set by user/wall.c for waits whose user stack never came. */
	case EINPROGRESS:
		return "[user stack: the system call had not returned]";
	case ESRCH:
		return "[user stack: still waiting at the end]";
	case ENODATA:
		return "[user stack: lost]";
	/* Set by bpf/offcpu.bpf.c: only the thread could read it, and it is not running. */
	case EOPNOTSUPP:
		return "[user stack: not read outside a system call]";
	/* Set by bpf/sample.bpf.c for a wait whose switch back to the CPU was missed. */
	case ESTALE:
		return user ? "[user stack: its context switch was not seen]"
			    : "[kernel stack: its context switch was not seen]";
	default:
		return user ? "[user stack failed]" : "[kernel stack failed]";
	}
}

static bool add_roots(struct aggregator *agg, const struct jbpf_sample *s, const char *thread_name,
		      size_t *depth)
{
	char comm[JBPF_COMM_LEN + 1], name[NAME_MAX_LEN];

	copy_comm(comm, s->comm);
	if (agg->config.process_root != AGGREGATOR_ROOT_NONE) {
		const char *pname = symbolizer__process_name(agg->sym, s->tgid);

		if (!pname)
			pname = comm;
		if (agg->config.process_root == AGGREGATOR_ROOT_PROCESS_PID)
			snprintf(name, sizeof(name), "%s (pid %u)", pname, s->tgid);
		else
			snprintf(name, sizeof(name), "%s", pname);
		if (!push(agg, depth, name, FRAME_KIND_PROCESS))
			return false;
	}
	if (agg->config.thread_root) {
		snprintf(name, sizeof(name), "[%s tid=%u]", thread_name ? thread_name : comm, s->tid);
		if (!push(agg, depth, name, FRAME_KIND_THREAD))
			return false;
	}
	return true;
}

static bool add_user_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	const __u64 *ips = s->ips + s->kstack_len;
	char name[NAME_MAX_LEN];

	if (s->ustack_err && !s->ustack_len)
		return push(agg, depth, stack_error_reason(s->ustack_err, true), FRAME_KIND_LOST);
	for (size_t i = s->ustack_len; i-- > 0;) {
		/* ips[0] is where the thread was; the rest are return addresses. */
		uint64_t addr = i == 0 ? ips[i] : ips[i] - 1;
		enum sym_status status = symbolizer__user(agg->sym, s->tgid, addr, name, sizeof(name));

		if (!push_user(agg, depth, name, status == SYM_JIT ? FRAME_KIND_JIT : FRAME_KIND_NATIVE, s->tgid, addr))
			return false;
	}
	return true;
}

static bool add_kernel_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	char name[NAME_MAX_LEN];
	size_t len;

	if (s->kstack_err && !s->kstack_len)
		return push(agg, depth, stack_error_reason(s->kstack_err, false), FRAME_KIND_LOST);
	for (size_t i = s->kstack_len; i-- > 0;) {
		uint64_t addr = i == 0 ? s->ips[i] : s->ips[i] - 1;

		symbolizer__kernel(agg->sym, addr, name, sizeof(name) - 4);
		len = strlen(name);
		memcpy(name + len, "_[k]", 5);
		if (!push(agg, depth, name, FRAME_KIND_KERNEL))
			return false;
	}
	return true;
}

bool aggregator__sample_is_valid(const void *record, size_t size)
{
	const struct jbpf_sample *s = record;

	if (size < sizeof(*s) || (s->type != JBPF_RECORD_CPU_SAMPLE && s->type != JBPF_RECORD_WAIT))
		return false;
	if (s->kstack_len > JBPF_MAX_STACK_DEPTH || s->ustack_len > JBPF_MAX_STACK_DEPTH)
		return false;
	return size >= sizeof(*s) + ((size_t)s->kstack_len + s->ustack_len) * sizeof(__u64);
}

/* Counts a sample received, and its damage; false for a malformed one. */
static bool accept_sample(struct aggregator *agg, const struct jbpf_sample *s, size_t size)
{
	agg->stats.received++;
	if (!aggregator__sample_is_valid(s, size)) {
		agg->stats.malformed++;
		return false;
	}
	if (s->ustack_err && !s->ustack_len)
		agg->stats.no_user_stack++;
	if (s->kstack_err && !s->kstack_len)
		agg->stats.no_kernel_stack++;
	return true;
}

static uint64_t share_key(uint32_t tid, enum jbpf_state state)
{
	return (uint64_t)tid << 8 | (unsigned)state;
}

static uint64_t ns_to_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/* Whether a sample's state is among those kept (always, without time weights). */
static bool state_kept(struct aggregator *agg, const struct jbpf_sample *s)
{
	if (!agg->config.time_weights)
		return true;
	if (s->state < JBPF_STATE_NR && (agg->config.state_mask & (1u << s->state)))
		return true;
	if (s->type == JBPF_RECORD_WAIT && s->woken_ns && (agg->config.state_mask & (1u << JBPF_STATE_RUNNABLE)))
		return true;
	agg->stats.state_filtered++;
	return false;
}

/*
 * Adds the stack in agg->frames[0..depth) once more, ending in state's
 * frame: count microseconds, or one share of the thread's time in state.
 */
static bool add_in_state(struct aggregator *agg, const struct jbpf_sample *s, size_t depth, enum jbpf_state state,
			 bool share, uint64_t count)
{
	uint32_t index;

	if (state >= JBPF_STATE_NR || !(agg->config.state_mask & (1u << state)))
		return true;
	if (!push(agg, &depth, profile_state_frame(state), FRAME_KIND_STATE) ||
	    profile__add_indexed(agg->profile, agg->frames, depth, share ? 0 : count, &index))
		return false;
	if (share && shares__add(agg->shares, share_key(s->tid, state), index, 1))
		agg->stats.shares_lost++;
	return true;
}

/*
 * Adds the stack built in agg->frames[0..depth) for sample s, with the
 * weight the header describes. A wait whose thread was woken before it ran
 * again is two stacks: asleep until then, runnable after. False when the
 * profile is full.
 */
static bool finish_stack(struct aggregator *agg, const struct jbpf_sample *s, size_t depth)
{
	bool share = s->type == JBPF_RECORD_CPU_SAMPLE || (s->flags & JBPF_WAIT_SAMPLED);
	uint64_t start = s->wait_start_ns, end = s->time_ns, woken = s->woken_ns;

	if (!agg->config.time_weights) {
		if (profile__add(agg->profile, agg->frames, depth, 1))
			return false;
	} else if (s->type == JBPF_RECORD_WAIT && woken > start && woken < end) {
		if (!add_in_state(agg, s, depth, s->state, share, ns_to_us(woken - start)) ||
		    !add_in_state(agg, s, depth, JBPF_STATE_RUNNABLE, share, ns_to_us(end - woken)))
			return false;
	} else if (!add_in_state(agg, s, depth, s->state, share, end > start ? ns_to_us(end - start) : 0)) {
		return false;
	}
	agg->stats.written++;
	return true;
}

bool aggregator__settle(struct aggregator *agg, uint32_t tid, enum jbpf_state state, uint64_t total_ns)
{
	if (!agg->shares)
		return false;
	return shares__settle(agg->shares, share_key(tid, state), ns_to_us(total_ns), agg->profile);
}

void aggregator__add_placeholder(struct aggregator *agg, uint32_t tgid, uint32_t tid, const char comm[JBPF_COMM_LEN],
				 const char *thread_name, enum jbpf_state state, const char *reason, uint64_t ns)
{
	struct jbpf_sample s = { .type = JBPF_RECORD_WAIT, .tgid = tgid, .tid = tid, .state = state };
	size_t depth = 0;

	memcpy(s.comm, comm, JBPF_COMM_LEN);
	s.time_ns = ns;
	if (!state_kept(agg, &s) || !ns_to_us(ns))
		return;
	if (!add_roots(agg, &s, thread_name, &depth) || !push(agg, &depth, reason, FRAME_KIND_LOST) ||
	    !finish_stack(agg, &s, depth))
		agg->stats.profile_full++;
}

void aggregator__add(struct aggregator *agg, const void *record, size_t size)
{
	const struct jbpf_sample *s = record;
	size_t depth = 0;

	if (size >= sizeof(struct jbpf_exec) && s->type == JBPF_RECORD_EXEC) {
		agg->stats.execs++;
		symbolizer__forget_process(agg->sym, ((const struct jbpf_exec *)record)->tgid);
		return;
	}
	if (!accept_sample(agg, s, size) || !state_kept(agg, s))
		return;
	if (!add_roots(agg, s, NULL, &depth) || !add_user_frames(agg, s, &depth) ||
	    !add_kernel_frames(agg, s, &depth) || !finish_stack(agg, s, depth))
		agg->stats.profile_full++;
}

/* ---- JVM threads ---- */


/*
 * Names user frame i (0 the innermost) of a JVM thread. Code the JVM
 * generated lives in anonymous memory: the symbolizer calls it [anon] (or
 * names it from a perf map), and the agent's code map says what it is.
 */
static void jvm_user_frame(struct aggregator *agg, const struct jbpf_sample *s, struct javamap *map, size_t i,
			   struct jvm_frame *f)
{
	const __u64 *ips = s->ips + s->kstack_len;
	uint64_t addr = i == 0 ? ips[i] : ips[i] - 1;
	enum sym_status status = symbolizer__user(agg->sym, s->tgid, addr, f->name, sizeof(f->name));

	f->kind = status == SYM_JIT ? FRAME_KIND_JIT : FRAME_KIND_NATIVE;
	f->generated = status == SYM_JIT || status == SYM_UNKNOWN ||
		       (status == SYM_OFFSET && !strcmp(f->name, "[anon]"));
	f->have_blob = f->generated && map && javamap__code_at(map, addr, s->time_ns, &f->blob);
	if (f->have_blob && f->blob.name) {
		snprintf(f->name, sizeof(f->name), "%s", f->blob.name);
		f->kind = f->blob.kind == JBPF_CODE_NMETHOD ? FRAME_KIND_JAVA : FRAME_KIND_JIT;
	}
}

bool aggregator__in_generated_code(struct aggregator *agg, const struct jbpf_sample *s, struct javamap *map)
{
	for (size_t i = 0; i < s->ustack_len; i++) {
		jvm_user_frame(agg, s, map, i, &agg->jvm_frames[0]);
		if (agg->jvm_frames[0].generated)
			return true;
	}
	return false;
}

static const char *const annotations[FRAME_KIND_NR] = {
	[FRAME_KIND_JAVA_COMPILED] = "_[j]",
	[FRAME_KIND_JAVA_INLINED] = "_[i]",
	[FRAME_KIND_JAVA_INTERP] = "_[0]",
};

/*
 * How each Java frame ran. The generated code the native stack shows is
 * exact, walked from the innermost: a frame in compiled method M means the
 * trace's frames down to M's are inlined into M and M is compiled; an
 * interpreter frame is one interpreted Java frame. The walk goes on only
 * through code that keeps the frame pointer (the interpreter, native
 * method wrappers, stubs): compiled Java code does not, so the address
 * read above it may belong to any frame further out. Frames the walk did
 * not reach are inferred: compiled if their method has live compiled
 * code, interpreted if not (a method can have both).
 */
static void java_frame_kinds(struct aggregator *agg, const struct jbpf_sample *s, struct javamap *map,
			     const struct join_trace *t, size_t cut, enum frame_kind *kinds)
{
	uint32_t n = t->frame_count, pos = 0;

	for (uint32_t k = 0; k < n; k++)
		kinds[k] = javamap__is_compiled(map, t->frames[k].method_id) ? FRAME_KIND_JAVA_COMPILED
										 : FRAME_KIND_JAVA_INTERP;
	for (size_t i = cut; i < s->ustack_len && pos < n; i++) {
		const struct jvm_frame *f = &agg->jvm_frames[i];
		uint32_t flags = 0, j;

		/* Frames past the cut are named only as far as this walk needs. */
		if (i > cut)
			jvm_user_frame(agg, s, map, i, &agg->jvm_frames[i]);
		if (!f->generated || !f->have_blob)
			break;
		if (f->blob.kind == JBPF_CODE_STUB) {
			if (f->blob.name && !strcmp(f->blob.name, "Interpreter"))
				kinds[pos++] = FRAME_KIND_JAVA_INTERP;
			continue;
		}
		for (j = pos; j < n && t->frames[j].method_id != f->blob.method_id; j++)
			;
		if (j == n)
			break;
		for (uint32_t k = pos; k < j; k++)
			kinds[k] = FRAME_KIND_JAVA_INLINED;
		kinds[j] = FRAME_KIND_JAVA_COMPILED;
		pos = j + 1;
		if (!javamap__method(map, f->blob.method_id, &flags) || !(flags & JBPF_METHOD_NATIVE))
			break;
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
static bool push_java(struct aggregator *agg, struct javamap *map, uint64_t method_id, enum frame_kind kind,
		      size_t *depth)
{
	int64_t *slots = javamap__frame_slots(map, method_id), id;
	char name[NAME_MAX_LEN];

	if (slots && slots[kind_slot(kind)] >= 0) {
		if (*depth < MAX_FRAMES)
			agg->frames[(*depth)++] = (uint32_t)slots[kind_slot(kind)];
		return true;
	}
	snprintf(name, sizeof(name), "%s%s", slots ? javamap__method(map, method_id, NULL) : "[unknown Java method]",
		 agg->config.annotate && annotations[kind] ? annotations[kind] : "");
	id = profile__intern(agg->profile, name, kind);
	if (id < 0)
		return false;
	if (slots)
		slots[kind_slot(kind)] = id;
	if (*depth < MAX_FRAMES)
		agg->frames[(*depth)++] = (uint32_t)id;
	return true;
}

static bool add_java_frames(struct aggregator *agg, const struct jbpf_sample *s, struct javamap *map,
			    const struct join_trace *t, size_t cut, size_t *depth)
{
	enum frame_kind kinds[JBPF_STREAM_MAX_FRAMES];

	if (agg->config.annotate)
		java_frame_kinds(agg, s, map, t, cut, kinds);
	if ((t->flags & JBPF_TRACE_TRUNCATED) && !push(agg, depth, "[Java stack truncated]", FRAME_KIND_LOST))
		return false;
	for (uint32_t k = t->frame_count; k-- > 0;)
		if (!push_java(agg, map, t->frames[k].method_id, agg->config.annotate ? kinds[k] : FRAME_KIND_JAVA,
			       depth))
			return false;
	return true;
}

void aggregator__add_java(struct aggregator *agg, const struct jbpf_sample *s, size_t size,
			  const struct aggregator_java *java)
{
	const struct join_trace *t = java->trace && java->trace->status > 0 ? java->trace : NULL;
	struct jvm_frame *frames = agg->jvm_frames;
	size_t depth = 0, nr = 0, cut;

	if (!accept_sample(agg, s, size) || !state_kept(agg, s))
		return;
	/*
	 * With Java frames, the native ones end where generated code begins:
	 * frames beyond it are replaced, so they are not even named.
	 */
	for (; nr < s->ustack_len; nr++) {
		jvm_user_frame(agg, s, java->map, nr, &frames[nr]);
		if (t && frames[nr].generated) {
			nr++;
			break;
		}
	}
	cut = t && nr && frames[nr - 1].generated ? nr - 1 : nr;
	if (!add_roots(agg, s, java->thread_name, &depth))
		goto full;
	if (t) {
		if (!add_java_frames(agg, s, java->map, t, cut, &depth))
			goto full;
		/* A stub the Java code called (arraycopy and the like) is a frame of its own. */
		if (cut < nr && frames[cut].have_blob && frames[cut].blob.kind == JBPF_CODE_STUB &&
		    frames[cut].blob.name && strcmp(frames[cut].blob.name, "Interpreter") &&
		    !push(agg, &depth, frames[cut].name, FRAME_KIND_JIT))
			goto full;
		/* The native frames read end before Java began: say that some are missing. */
		if (cut == nr && (s->flags & JBPF_SAMPLE_USER_CUT) &&
		    !push(agg, &depth, "[more native frames]", FRAME_KIND_LOST))
			goto full;
	} else {
		if (java->reason && !push(agg, &depth, java->reason, FRAME_KIND_LOST))
			goto full;
		if (s->flags & JBPF_SAMPLE_USER_CUT && !push(agg, &depth, "[more native frames]", FRAME_KIND_LOST))
			goto full;
		if (s->ustack_err && !s->ustack_len &&
		    !push(agg, &depth, stack_error_reason(s->ustack_err, true), FRAME_KIND_LOST))
			goto full;
	}
	for (size_t i = cut; i-- > 0;) {
		const __u64 *ips = s->ips + s->kstack_len;

		if (!push_user(agg, &depth, frames[i].name, frames[i].kind, s->tgid, i == 0 ? ips[i] : ips[i] - 1))
			goto full;
	}
	if (!add_kernel_frames(agg, s, &depth) || !finish_stack(agg, s, depth))
		goto full;
	return;
full:
	agg->stats.profile_full++;
}
