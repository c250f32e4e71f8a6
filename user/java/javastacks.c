/*
 * javastacks: one JVM's end-of-recording thread stacks, by host tid
 * (contract in javastacks.h).
 *
 * Two small open-addressing tables of 32-bit keys (tid 0 marks a free
 * slot; no thread has it): the tid map, namespace tid -> host tid (unused
 * for a JVM in our own pid namespace, javastacks__same_tids), and the
 * index, host tid -> the latest stack. Both double when half full, up to
 * JAVASTACKS_MAX_THREADS entries. The stacks themselves are one allocation
 * each, all listed in `all` so that javastacks__free finds those a later
 * stack of the same thread displaced from the index.
 */
#include "javastacks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/proc.h"

struct slot {
	uint32_t key;   /* 0: free */
	uint32_t value; /* host tid, or index into all */
};

struct table {
	struct slot *slots;
	size_t cap, nr; /* cap a power of two, or 0 */
};

struct javastacks {
	struct table tids;     /* namespace tid -> host tid */
	bool same_tids;        /* javastacks__same_tids: tids is not used */
	struct table index;    /* host tid -> index into all */
	struct join_trace **all;
	size_t nr_all, cap_all;
	struct javastacks_stats stats;
};

static size_t hash_u32(uint32_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b1u) & (uint32_t)(cap - 1));
}

static struct slot *table_find(const struct table *t, uint32_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash_u32(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].key == key)
			return &t->slots[i];
		if (!t->slots[i].key)
			return NULL;
	}
}

static int table_grow(struct table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].key)
			continue;
		for (j = hash_u32(t->slots[i].key, cap); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* Sets key's value, adding it if new. key != 0. */
static int table_put(struct table *t, uint32_t key, uint32_t value)
{
	struct slot *s = table_find(t, key);
	size_t i;

	if (s) {
		s->value = value;
		return 0;
	}
	if (t->nr >= JAVASTACKS_MAX_THREADS)
		return -ENOSPC;
	if ((t->nr + 1) * 2 > t->cap && table_grow(t))
		return -ENOMEM;
	for (i = hash_u32(key, t->cap); t->slots[i].key; i = (i + 1) & (t->cap - 1))
		;
	t->slots[i] = (struct slot){ key, value };
	t->nr++;
	return 0;
}

static void table_clear(struct table *t)
{
	if (t->cap)
		memset(t->slots, 0, t->cap * sizeof(*t->slots));
	t->nr = 0;
}

struct javastacks *javastacks__new(void)
{
	return calloc(1, sizeof(struct javastacks));
}

void javastacks__free(struct javastacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_all; i++)
		free(s->all[i]);
	free(s->all);
	free(s->tids.slots);
	free(s->index.slots);
	free(s);
}

/*
 * The tid in the thread's own pid namespace (proc__parse_nspid): the host
 * tid when status has no NSpid line (before Linux 4.1, which has no way
 * to tell), 0 when the line is malformed.
 */
static uint32_t innermost_tid(const char *status, size_t len, uint32_t host_tid)
{
	uint32_t tid;
	int err = proc__parse_nspid(status, len, &tid);

	return err == -ENOENT ? host_tid : err ? 0 : tid;
}

int javastacks__read_tids(struct javastacks *s, const char *proc_root, uint32_t tgid)
{
	char status[PROC_SMALL_MAX];
	struct proc_ids threads;
	uint32_t host_tid;
	int err;

	table_clear(&s->tids);
	s->same_tids = false;
	err = proc__open_threads(&threads, proc_root, tgid);
	if (err)
		return err;
	while ((host_tid = proc__next_id(&threads))) {
		long len = proc__read_thread_file(proc_root, tgid, host_tid, "status", status, sizeof(status));
		uint32_t ns_tid;

		/* A thread that exited since the listing has no stack coming either. */
		if (len < 0)
			continue;
		ns_tid = innermost_tid(status, (size_t)len, host_tid);
		if (ns_tid && (err = table_put(&s->tids, ns_tid, host_tid)))
			break;
	}
	proc__close_ids(&threads);
	return err;
}

void javastacks__same_tids(struct javastacks *s)
{
	table_clear(&s->tids);
	s->same_tids = true;
}

int javastacks__add(struct javastacks *s, const struct jbpf_msg_thread_stack *stack,
		    const struct jbpf_trace_frame *frames, uint64_t now_ns)
{
	const struct slot *mapped = s->same_tids ? NULL : table_find(&s->tids, stack->tid);
	uint32_t host_tid = s->same_tids ? stack->tid : mapped ? mapped->value : 0;
	uint32_t n = stack->frame_count > JBPF_STREAM_MAX_FRAMES ? JBPF_STREAM_MAX_FRAMES : stack->frame_count;
	size_t size = sizeof(struct join_trace) + (size_t)n * sizeof(frames[0]);
	struct join_trace *t;

	if (!host_tid) {
		s->stats.unmapped++;
		return -ENOENT;
	}
	if (s->stats.bytes + size > JAVASTACKS_MAX_BYTES || s->nr_all >= 2 * (size_t)JAVASTACKS_MAX_THREADS ||
	    (!table_find(&s->index, host_tid) && s->index.nr >= JAVASTACKS_MAX_THREADS)) {
		s->stats.dropped++;
		return -ENOSPC;
	}
	if (s->nr_all == s->cap_all) {
		size_t cap = s->cap_all ? s->cap_all * 2 : 64;
		struct join_trace **all = realloc(s->all, cap * sizeof(*all));

		if (!all) {
			s->stats.dropped++;
			return -ENOMEM;
		}
		s->all = all;
		s->cap_all = cap;
	}
	t = malloc(size);
	if (!t || table_put(&s->index, host_tid, (uint32_t)s->nr_all)) {
		free(t);
		s->stats.dropped++;
		return -ENOMEM;
	}
	*t = (struct join_trace){
		.time_ns = now_ns,
		.tid = stack->tid, /* as in a TRACE: the JVM's, which its THREAD names use */
		.status = (int32_t)n,
		.flags = stack->flags & JBPF_TRACE_TRUNCATED,
		.frame_count = n,
	};
	memcpy(t->frames, frames, (size_t)n * sizeof(frames[0]));
	s->all[s->nr_all++] = t;
	s->stats.stored++;
	s->stats.bytes += size;
	return 0;
}

const struct join_trace *javastacks__get(const struct javastacks *s, uint32_t host_tid)
{
	const struct slot *e = host_tid ? table_find(&s->index, host_tid) : NULL;

	return e ? s->all[e->value] : NULL;
}

void javastacks__stats(const struct javastacks *s, struct javastacks_stats *stats)
{
	*stats = s->stats;
}
