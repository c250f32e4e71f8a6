/*
 * aggregator: sample records to profile stacks (contract in aggregator.h).
 * --wakers' slots are user/record/wakers.c, -e lock's class guess
 * user/record/lock_class.c; what stays here is building a stack, and the
 * monitor waits -e lock --wakers holds for their releaser.
 */
#include "aggregator.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"
#include "common/sampled_bytes.h"
#include "jvmti-stub/stream.h"
#include "profile/shares.h"
#include "user/record/addr_ids.h"
#include "user/record/lock_class.h"
#include "user/record/process_roots.h"
#include "user/record/wakers.h"

/*
 * Frames of one stack: two roots, two full perf stacks, a Java stack, two
 * reason frames.
 */
#define MAX_FRAMES (2 + 2 * JBPF_MAX_STACK_DEPTH + JBPF_STREAM_MAX_FRAMES + 2)
#define NAME_MAX_LEN 512

struct aggregator {
	struct aggregator_config config;
	struct symbolizer *sym;
	struct profile *profile;
	struct aggregator_stats stats;
	uint32_t frames[MAX_FRAMES];  /* the stack being built */
	size_t depth;
	bool failed;                  /* a push found the profile full */
	struct shares *shares;        /* with time_weights */
	struct addr_ids *addr_ids;    /* native frames' ids by address */
	struct process_roots *roots;  /* with a process_root: each process's root frame */
	enum aggregator_event event;  /* what the sample being added counts */
	/* --wakers: a waker's stack is being captured (aggregator__capture_waker), not added */
	bool capturing;
	uint32_t captured[MAX_FRAMES];
	size_t captured_depth;
	struct wakers *wakers;        /* made at the first waker kept */
	const struct waker *joined;   /* the waker of the wait being added, or NULL */
	char lock_class[NAME_MAX_LEN];   /* -e lock: the monitor's class of the sample being built, or "" */
	struct deferred_wait *deferred;  /* -e lock --wakers: monitor waits a timer ended, held (defer_wait) */
	size_t nr_deferred;
};

/*
 * -e lock --wakers: a thread alone in contending for a monitor (HotSpot's
 * "responsible" thread, on JDK 17) parks with a timeout and looks again,
 * so its acquire is several waits, all but the last ended by its own
 * timer. Such a wait is held here until the thread's next lock wait
 * ended by a thread: the holder that released the lock is the waker of
 * the whole acquire. At most DEFERRED_MAX are held; one past that, or
 * still held at the end (aggregator__flush_waits), keeps its timer.
 */
#define DEFERRED_MAX 4096

struct deferred_wait {
	struct deferred_wait *next;
	struct jbpf_sample s;       /* the wait's header: its thread, times, state */
	size_t depth, timer_depth;  /* its frames, then its timer waker's */
	uint32_t frames[];
};

struct aggregator *aggregator__new(const struct aggregator_config *config, struct symbolizer *sym,
				   struct profile *profile)
{
	struct aggregator *agg = calloc(1, sizeof(*agg));

	if (!agg)
		return NULL;
	agg->config = *config;
	agg->sym = sym;
	agg->profile = profile;
	agg->addr_ids = addr_ids__new();
	if (config->process_root != VIEW_ROOT_NONE)
		agg->roots = process_roots__new(config->process_root);
	if (!agg->addr_ids || (config->process_root != VIEW_ROOT_NONE && !agg->roots)) {
		aggregator__free(agg);
		return NULL;
	}
	if (config->time_weights && !config->sample_weight_ns) {
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
		while (agg->deferred) {
			struct deferred_wait *d = agg->deferred;

			agg->deferred = d->next;
			free(d);
		}
		wakers__free(agg->wakers);
		shares__free(agg->shares);
		addr_ids__free(agg->addr_ids);
		process_roots__free(agg->roots);
	}
	free(agg);
}

void aggregator__stats(const struct aggregator *agg, struct aggregator_stats *stats)
{
	*stats = agg->stats;
}

int aggregator__set_profile(struct aggregator *agg, struct profile *profile)
{
	if (agg->shares)
		return -EBUSY;
	agg->profile = profile;
	/* The ids remembered name frames of the old profile: so do the wakers kept for their waits. */
	addr_ids__clear(agg->addr_ids);
	wakers__clear(agg->wakers);
	if (agg->roots)
		process_roots__clear(agg->roots);
	return 0;
}

bool aggregator__settles(const struct aggregator *agg)
{
	return agg->shares != NULL;
}

/* The comm the kernel gave us, which the target chose: NUL-terminate it. */
static void copy_comm(char *dst, const char comm[JBPF_COMM_LEN])
{
	memcpy(dst, comm, JBPF_COMM_LEN);
	dst[JBPF_COMM_LEN] = '\0';
}

/* Appends a frame interned elsewhere (id: its id or a negative errno); false when the profile is full. */
static bool push_id(struct aggregator *agg, size_t *depth, int64_t id)
{
	if (*depth >= MAX_FRAMES)
		return true;
	if (id < 0)
		return false;
	agg->frames[(*depth)++] = (uint32_t)id;
	return true;
}

/*
 * Appends one frame; returns false when the profile is full (the caller
 * drops the whole sample rather than keep a stack missing frames).
 */
static bool push(struct aggregator *agg, size_t *depth, const char *name, enum frame_kind kind)
{
	if (*depth >= MAX_FRAMES)
		return true;
	return push_id(agg, depth, profile__intern(agg->profile, name, kind));
}

/*
 * The id of a user frame at addr, interned: a native frame seen for the
 * first time is given the file it lies in (with config.modules), for pprof
 * mappings. < 0 when the profile is full.
 */
static int64_t intern_user(struct aggregator *agg, const char *name, enum frame_kind kind, uint32_t tgid,
			   uint64_t addr)
{
	size_t known = profile__frame_count(agg->profile);
	int64_t id = profile__intern(agg->profile, name, kind);
	struct sym_module m;
	char hex[2 * sizeof(m.build_id) + 1];

	if (id < 0 || !agg->config.modules || kind != FRAME_KIND_NATIVE ||
	    profile__frame_count(agg->profile) == known || symbolizer__user_module(agg->sym, tgid, addr, &m))
		return id;
	for (size_t i = 0; i < m.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m.build_id[i]);
	hex[2 * m.build_id_len] = '\0';
	profile__set_frame_module(agg->profile, (uint32_t)id, profile__module(agg->profile, m.path, hex));
	return id;
}

/* push, for a user frame at addr named by the caller. */
static bool push_user(struct aggregator *agg, size_t *depth, const char *name, enum frame_kind kind,
		      uint32_t tgid, uint64_t addr)
{
	if (*depth >= MAX_FRAMES)
		return true;
	return push_id(agg, depth, intern_user(agg, name, kind, tgid, addr));
}

/*
 * push, for the native frame of process tgid at addr (one byte back from a
 * return address already): named by the symbolizer, or by the id its
 * address was given before while the symbolizer's answer for it lasts.
 */
static bool push_native(struct aggregator *agg, size_t *depth, uint32_t tgid, uint64_t addr)
{
	int64_t id = addr_ids__get(agg->addr_ids, symbolizer__generation(agg->sym), tgid, addr);
	char name[NAME_MAX_LEN];
	enum sym_status status;
	bool lasting;

	if (*depth >= MAX_FRAMES)
		return true;
	if (id >= 0) {
		agg->stats.native_remembered++;
		return push_id(agg, depth, id);
	}
	status = symbolizer__user_lasting(agg->sym, tgid, addr, name, sizeof(name), &lasting);
	id = intern_user(agg, name, status == SYM_JIT ? FRAME_KIND_JIT : FRAME_KIND_NATIVE, tgid, addr);
	/* Under the generation after the lookup: it may have read the maps again. */
	if (id >= 0 && lasting)
		addr_ids__put(agg->addr_ids, symbolizer__generation(agg->sym), tgid, addr, (uint32_t)id);
	return push_id(agg, depth, id);
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
	/* Set by bpf/vthreads.bpf.c for a virtual thread whose frozen frames were not found. */
	case ENOENT:
		return user ? "[user stack: no frozen frames found]" : "[kernel stack failed]";
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
	const char *event_frame = agg->capturing ? NULL : agg->config.event_frames[agg->event];
	char comm[JBPF_COMM_LEN + 1];

	if (event_frame && !push(agg, depth, event_frame, FRAME_KIND_EVENT))
		return false;
	copy_comm(comm, s->comm);
	if (agg->roots &&
	    !push_id(agg, depth, process_roots__frame(agg->roots, agg->profile, agg->sym, s->tgid, comm)))
		return false;
	/* A virtual thread's time unmounted is no carrier's: the thread its marker names, on none. */
	if (agg->config.thread_root && s->type == JBPF_RECORD_WAIT && (s->flags & JBPF_WAIT_UNMOUNTED))
		return push_id(agg, depth, profile__intern_thread(agg->profile, "unmounted", -1));
	if (agg->config.thread_root &&
	    !push_id(agg, depth, profile__intern_thread(agg->profile, thread_name ? thread_name : comm, s->tid)))
		return false;
	return true;
}

static bool add_user_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	const __u64 *ips = s->ips + s->kstack_len;

	if (s->ustack_err && !s->ustack_len)
		return push(agg, depth, stack_error_reason(s->ustack_err, true), FRAME_KIND_LOST);
	/* ips[0] is where the thread was; the rest are return addresses. */
	for (size_t i = s->ustack_len; i-- > 0;)
		if (!push_native(agg, depth, s->tgid, i == 0 ? ips[i] : ips[i] - 1))
			return false;
	return true;
}

/*
 * The innermost kernel frames of a waker that are the profiler's own: its
 * program, and the kernel's code that ran it for the tracepoint.
 */
static size_t profiler_frames(struct aggregator *agg, const struct jbpf_sample *s)
{
	char name[NAME_MAX_LEN];
	size_t i = 0;

	if (s->type != JBPF_RECORD_WAKER)
		return 0;
	for (; i < s->kstack_len; i++) {
		symbolizer__kernel(agg->sym, i == 0 ? s->ips[i] : s->ips[i] - 1, name, sizeof(name));
		if (strncmp(name, "bpf_prog_", 9) && strncmp(name, "bpf_trace_run", 13) && strncmp(name, "__bpf_trace_", 12))
			break;
	}
	return i;
}

static bool add_kernel_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	char name[NAME_MAX_LEN];
	size_t len, own = profiler_frames(agg, s);

	if (s->kstack_err && !s->kstack_len)
		return push(agg, depth, stack_error_reason(s->kstack_err, false), FRAME_KIND_LOST);
	for (size_t i = s->kstack_len; i-- > own;) {
		uint64_t addr = i == 0 ? s->ips[i] : s->ips[i] - 1;

		symbolizer__kernel(agg->sym, addr, name, sizeof(name) - 4);
		len = strlen(name);
		memcpy(name + len, "_[k]", 5);
		if (!push(agg, depth, name, FRAME_KIND_KERNEL))
			return false;
	}
	return true;
}

/* What a record counts, by its type: a native allocation, else time. */
static enum aggregator_event event_of(const struct jbpf_sample *s)
{
	return s->type == JBPF_RECORD_NATIVE_ALLOC ? AGGREGATOR_NATIVE : AGGREGATOR_TIME;
}

/* Counts a sample received as event, and its damage. */
static void accept_sample(struct aggregator *agg, const struct jbpf_sample *s, enum aggregator_event event)
{
	agg->event = event;
	/* A waker's stack is part of its wait's sample. */
	if (agg->capturing)
		return;
	agg->stats.received++;
	agg->stats.received_by[event]++;
	if (s->ustack_err && !s->ustack_len)
		agg->stats.no_user_stack++;
	if (s->kstack_err && !s->kstack_len)
		agg->stats.no_kernel_stack++;
}

static uint64_t share_key(uint32_t tid, enum jbpf_state state)
{
	return (uint64_t)tid << 8 | (unsigned)state;
}

static uint64_t ns_to_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/*
 * Places weight of stack index between from_ns and to_ns (the records'
 * clock) on the profile's timeline; a span with no room is counted.
 */
static void note_time(struct aggregator *agg, uint32_t index, uint64_t from_ns, uint64_t to_ns, uint64_t weight)
{
	if (agg->capturing || !from_ns)
		return;
	if (profile__add_time(agg->profile, index, from_ns, to_ns, weight))
		agg->stats.times_lost++;
}

/* Whether a sample's state is among those kept (always, without time weights, and for allocations). */
static bool state_kept(struct aggregator *agg, const struct jbpf_sample *s)
{
	if (!agg->config.time_weights || agg->event != AGGREGATOR_TIME || agg->capturing)
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
			 bool share, uint64_t count, uint64_t from_ns, uint64_t to_ns)
{
	uint32_t index;

	if (state >= JBPF_STATE_NR || !(agg->config.state_mask & (1u << state)))
		return true;
	/* A full stack takes no state frame, and does not intern one. */
	if (depth < MAX_FRAMES && !push_id(agg, &depth, profile__intern_state(agg->profile, state)))
		return false;
	/* Its waker woke it from its sleep: the time runnable after is not the waker's doing. */
	if (agg->joined && state != JBPF_STATE_RUNNABLE)
		for (uint32_t i = 0; i < agg->joined->depth && depth < MAX_FRAMES; i++)
			agg->frames[depth++] = agg->joined->frames[i];
	if (profile__add_indexed(agg->profile, agg->frames, depth, share ? 0 : count, &index))
		return false;
	if (share && shares__add(agg->shares, share_key(s->tid, state), index, 1))
		agg->stats.shares_lost++;
	/* A share is settled later: its sample places it in time, one unit each. */
	note_time(agg, index, from_ns, to_ns, share ? 1 : count);
	return true;
}

/*
 * Adds the stack built in agg->frames[0..depth) for sample s, with the
 * weight the header describes. A wait whose thread was woken before it ran
 * again is two stacks: asleep until then, runnable after. Without time
 * weights the stack counts weight (1: one sample) and objects beside it
 * (an allocation's). False when the profile is full.
 */
static bool add_weighted(struct aggregator *agg, const struct jbpf_sample *s, size_t depth, uint64_t weight,
			 uint64_t objects)
{
	bool share = s->type == JBPF_RECORD_CPU_SAMPLE || (s->flags & JBPF_WAIT_SAMPLED);
	uint64_t start = s->wait_start_ns, end = s->time_ns, woken = s->woken_ns;
	uint32_t index;

	if (agg->event != AGGREGATOR_TIME || !agg->config.time_weights) {
		if (profile__add_objects_indexed(agg->profile, agg->frames, depth, weight, objects, &index))
			return false;
		/* A sample is a moment: the one it was taken at. */
		note_time(agg, index, s->time_ns, s->time_ns, 1);
		return true;
	}
	/* No share to settle: the sample weighs one period, in its state. */
	if (share && agg->config.sample_weight_ns)
		return add_in_state(agg, s, depth, s->state, false, ns_to_us(agg->config.sample_weight_ns), end, end);
	/* A share (a CPU sample, a sampled wait) is placed at the moment it was taken, a wait over its length. */
	if (s->type == JBPF_RECORD_WAIT && woken > start && woken < end)
		return add_in_state(agg, s, depth, s->state, share, ns_to_us(woken - start), share ? end : start,
				    share ? end : woken) &&
		       add_in_state(agg, s, depth, JBPF_STATE_RUNNABLE, share, ns_to_us(end - woken), share ? end : woken,
				    end);
	return add_in_state(agg, s, depth, s->state, share, end > start ? ns_to_us(end - start) : 0,
			    share ? end : start, end);
}

void aggregator__set_lock_class(struct aggregator *agg, const char *name)
{
	snprintf(agg->lock_class, sizeof(agg->lock_class), "%s", name ? name : "");
}

/* Holds wait s, its stack agg->frames[0..depth), and its timer waker w: true, or false when it cannot be held. */
static bool defer_wait(struct aggregator *agg, const struct jbpf_sample *s, size_t depth, const struct waker *w)
{
	struct deferred_wait *d;

	if (agg->nr_deferred >= DEFERRED_MAX ||
	    !(d = malloc(sizeof(*d) + (depth + w->depth) * sizeof(d->frames[0]))))
		return false;
	d->s = *s;
	d->depth = depth;
	d->timer_depth = w->depth;
	memcpy(d->frames, agg->frames, depth * sizeof(d->frames[0]));
	memcpy(d->frames + depth, w->frames, w->depth * sizeof(d->frames[0]));
	d->next = agg->deferred;
	agg->deferred = d;
	agg->nr_deferred++;
	return true;
}

/*
 * The waits held for thread tid (all, with tid 0) added, joined with waker
 * (NULL: each with its own timer). agg->frames is theirs meanwhile: the
 * caller's stack is kept aside and put back.
 */
static void add_deferred(struct aggregator *agg, uint32_t tid, const struct waker *waker)
{
	uint32_t kept[MAX_FRAMES];
	size_t kept_depth = agg->depth;
	const struct waker *joined = agg->joined;
	struct deferred_wait **at = &agg->deferred;

	memcpy(kept, agg->frames, sizeof(kept));
	while (*at) {
		struct deferred_wait *d = *at;
		struct waker own = { .depth = (uint32_t)d->timer_depth, .frames = d->frames + d->depth };

		if (tid && d->s.tid != tid) {
			at = &d->next;
			continue;
		}
		memcpy(agg->frames, d->frames, d->depth * sizeof(d->frames[0]));
		agg->joined = waker ? waker : &own;
		if (add_weighted(agg, &d->s, d->depth, 1, 0)) {
			agg->stats.written++;
			agg->stats.written_by[AGGREGATOR_TIME]++;
		} else {
			agg->stats.profile_full++;
		}
		*at = d->next;
		agg->nr_deferred--;
		free(d);
	}
	memcpy(agg->frames, kept, sizeof(kept));
	agg->depth = kept_depth;
	agg->joined = joined;
}

void aggregator__flush_waits(struct aggregator *agg)
{
	if (agg->deferred)
		add_deferred(agg, 0, NULL);
}

/* Done with the waker joined to wait s: its slot emptied (a waker is of one wait), agg->joined cleared. */
static void release_joined(struct aggregator *agg, const struct jbpf_sample *s)
{
	wakers__release(agg->wakers, agg->joined, s->wait_id);
	agg->joined = NULL;
}

/* As add_weighted; a wait with a waker (--wakers) gets its waker's frames after its state's. */
static bool finish_stack(struct aggregator *agg, const struct jbpf_sample *s, size_t depth, uint64_t weight,
			 uint64_t objects)
{
	bool added;

	if (agg->capturing) {
		memcpy(agg->captured, agg->frames, depth * sizeof(agg->frames[0]));
		agg->captured_depth = depth;
		return true;
	}
	agg->joined = NULL;
	if (s->type == JBPF_RECORD_WAIT && (s->flags & JBPF_WAIT_WAKER)) {
		bool missing;

		agg->joined = wakers__of(agg->wakers, agg->profile, s->wait_id, &missing);
		agg->stats.wakers_missing += missing;
	}
	if (agg->config.lock_view && agg->event == AGGREGATOR_TIME) {
		char lock[NAME_MAX_LEN];
		bool monitor, is_lock = lock_class__of(agg->profile, agg->frames, depth, agg->lock_class, lock,
						       sizeof(lock), &monitor);

		agg->lock_class[0] = '\0';
		if (!is_lock) {
			/* Its acquire is over: what it held keeps its timers. */
			if (agg->deferred)
				add_deferred(agg, s->tid, NULL);
			release_joined(agg, s);
			agg->stats.not_locks++;
			return true;
		}
		if (!push(agg, &depth, lock, FRAME_KIND_CLASS)) {
			release_joined(agg, s);
			return false;
		}
		/* A monitor's timed re-check waits for the holder's release; a release takes the held ones along. */
		if (monitor && agg->joined && wakers__is_timer(agg->profile, agg->joined) &&
		    defer_wait(agg, s, depth, agg->joined)) {
			release_joined(agg, s);
			return true;
		}
		if (agg->deferred && agg->joined && !wakers__is_timer(agg->profile, agg->joined))
			add_deferred(agg, s->tid, agg->joined);
	}
	added = add_weighted(agg, s, depth, weight, objects);
	release_joined(agg, s);
	if (!added)
		return false;
	agg->stats.written++;
	agg->stats.written_by[agg->event]++;
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
	agg->event = AGGREGATOR_TIME;
	if (!state_kept(agg, &s) || !ns_to_us(ns))
		return;
	if (!add_roots(agg, &s, thread_name, &depth) || !push(agg, &depth, reason, FRAME_KIND_LOST) ||
	    !finish_stack(agg, &s, depth, 1, 0))
		agg->stats.profile_full++;
}

void aggregator__exec(struct aggregator *agg, uint32_t tgid)
{
	agg->stats.execs++;
	symbolizer__forget_process(agg->sym, tgid);
	if (agg->roots)
		process_roots__forget(agg->roots, tgid);
}

/* A sample's weight: one, or a sampled allocation's bytes (and its allocations, into *objects). */
static uint64_t weight_of(const struct aggregator *agg, const struct jbpf_sample *s, uint64_t *objects)
{
	uint64_t bytes;

	*objects = 0;
	if (s->type != JBPF_RECORD_NATIVE_ALLOC)
		return 1;
	bytes = sampled_bytes__of(s->alloc_bytes, agg->config.alloc_interval);
	*objects = sampled_bytes__objects(bytes, s->alloc_bytes);
	return bytes ? bytes : 1;
}

/*
 * A waker from an interrupt stands for no task: its kernel frames, up to
 * the interrupt's entry, under what woke the wait: its timer (the wait
 * timed out, or was a timed sleep) or another interrupt.
 */
static const char *interrupt_waker(struct aggregator *agg, const struct jbpf_sample *s)
{
	char name[NAME_MAX_LEN];

	for (size_t i = 0; i < s->kstack_len; i++) {
		symbolizer__kernel(agg->sym, i == 0 ? s->ips[i] : s->ips[i] - 1, name, sizeof(name));
		if (!strcmp(name, "hrtimer_wakeup") || !strcmp(name, "process_timeout"))
			return "[timed out]";
	}
	return "[interrupt]";
}

void aggregator__add(struct aggregator *agg, const struct jbpf_sample *s)
{
	uint64_t objects, weight = weight_of(agg, s, &objects);
	size_t depth = 0;

	accept_sample(agg, s, event_of(s));
	if (!state_kept(agg, s))
		return;
	if (s->type == JBPF_RECORD_WAKER && (s->flags & JBPF_WAKER_INTERRUPT)) {
		if (!push(agg, &depth, interrupt_waker(agg, s), FRAME_KIND_WAKER) || !add_kernel_frames(agg, s, &depth) ||
		    !finish_stack(agg, s, depth, weight, objects))
			agg->stats.profile_full++;
		return;
	}
	if (!add_roots(agg, s, NULL, &depth) || !add_user_frames(agg, s, &depth) ||
	    !add_kernel_frames(agg, s, &depth) || !finish_stack(agg, s, depth, weight, objects))
		agg->stats.profile_full++;
}

/* ---- wakers (--wakers) ---- */

void aggregator__capture_waker(struct aggregator *agg)
{
	agg->capturing = true;
	agg->captured_depth = 0;
}

void aggregator__keep_waker(struct aggregator *agg, const struct jbpf_sample *waker)
{
	bool replaced = false;

	agg->capturing = false;
	if (!agg->wakers && !(agg->wakers = wakers__new()))
		return;
	if (!wakers__keep(agg->wakers, agg->profile, waker->wait_id, agg->captured, agg->captured_depth, &replaced))
		agg->stats.wakers++;
	agg->stats.wakers_replaced += replaced;
}

/* ---- a stack built by another stage ---- */

bool aggregator__begin(struct aggregator *agg, const struct jbpf_sample *s, const char *thread_name)
{
	return aggregator__begin_event(agg, s, thread_name, event_of(s));
}

bool aggregator__begin_event(struct aggregator *agg, const struct jbpf_sample *s, const char *thread_name,
			     enum aggregator_event event)
{
	accept_sample(agg, s, event);
	if (!state_kept(agg, s))
		return false;
	agg->depth = 0;
	agg->failed = !add_roots(agg, s, thread_name, &agg->depth);
	return true;
}

void aggregator__push(struct aggregator *agg, const char *name, enum frame_kind kind)
{
	if (!agg->failed)
		agg->failed = !push(agg, &agg->depth, name, kind);
}

void aggregator__push_user(struct aggregator *agg, const char *name, enum frame_kind kind, uint32_t tgid,
			   uint64_t addr)
{
	if (!agg->failed)
		agg->failed = !push_user(agg, &agg->depth, name, kind, tgid, addr);
}

void aggregator__push_native(struct aggregator *agg, uint32_t tgid, uint64_t addr)
{
	if (!agg->failed)
		agg->failed = !push_native(agg, &agg->depth, tgid, addr);
}

void aggregator__push_user_error(struct aggregator *agg, const struct jbpf_sample *s)
{
	aggregator__push(agg, stack_error_reason(s->ustack_err, true), FRAME_KIND_LOST);
}

int64_t aggregator__intern(struct aggregator *agg, const char *name, enum frame_kind kind)
{
	return aggregator__intern_at(agg, name, kind, NULL);
}

int64_t aggregator__intern_at(struct aggregator *agg, const char *name, enum frame_kind kind,
			      const struct frame_position *pos)
{
	int64_t id = profile__intern_at(agg->profile, name, kind, agg->config.positions ? pos : NULL);

	if (id < 0)
		agg->failed = true;
	return id;
}

bool aggregator__keeps_positions(const struct aggregator *agg)
{
	return agg->config.positions;
}

void aggregator__push_id(struct aggregator *agg, int64_t id)
{
	if (!agg->failed && id >= 0 && agg->depth < MAX_FRAMES)
		agg->frames[agg->depth++] = (uint32_t)id;
}

bool aggregator__annotates(const struct aggregator *agg)
{
	return agg->config.annotate;
}

bool aggregator__has_thread_roots(const struct aggregator *agg)
{
	return agg->config.thread_root;
}

void aggregator__end_weighted(struct aggregator *agg, const struct jbpf_sample *s, uint64_t weight,
			      uint64_t objects)
{
	if (agg->failed || !add_kernel_frames(agg, s, &agg->depth) || !finish_stack(agg, s, agg->depth, weight, objects))
		agg->stats.profile_full++;
}

void aggregator__end(struct aggregator *agg, const struct jbpf_sample *s)
{
	uint64_t objects, weight = weight_of(agg, s, &objects);

	aggregator__end_weighted(agg, s, weight, objects);
}
