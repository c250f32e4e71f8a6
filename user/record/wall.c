/*
 * wall: see wall.h. Threads live in an open-addressing table keyed by tid;
 * waits missing a piece sit in two short lists, one for waits whose user
 * stack comes with their system call's exit (keyed by ustack_seq, which
 * every wait of one system call shares) and one for waits whose end comes
 * later (keyed by wait_id). The ring buffer keeps each CPU's records in
 * order, and a piece always follows its wait on the same thread, so a
 * piece with nothing waiting for it was for a wait that was lost.
 */
#include "user/record/wall.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS (1u << 20)
/*
 * Waits held at once. Each takes what its record uses: at most 2.1 KiB
 * (the header and two stacks of 127 frames), or 10.3 KiB with 256 Java
 * frames walked by BPF; one waiting for its user stack takes room for it
 * too. Waits of walked JVMs never wait for a user stack, and wait for an
 * end only when blocked (JBPF_WAIT_OPEN), which is short.
 */
#define MAX_PENDING 65536
#define IPS_BYTES (2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64))
#define WAIT_BYTES (sizeof(struct jbpf_sample) + IPS_BYTES + JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))

struct thread {
	uint32_t tid;            /* 0: empty slot */
	uint32_t tgid;
	uint64_t born_ns;        /* after the start: born during the window; else 0 */
	uint64_t exit_ns;        /* 0: alive at the end */
	uint64_t off_ns;         /* waits counted at their own length */
	uint64_t sampled_ns[JBPF_STATE_NR];     /* by state, lengths of the short waits recorded by chance */
	uint64_t sampled_out_ns[JBPF_STATE_NR]; /* by state, short waits not recorded (the BPF program's count) */
	uint64_t bpf_filtered_ns;
	uint64_t filtered_ns;
	uint64_t cpu_samples;
	uint64_t new_ns;         /* created and not yet run: added at the end, under the thread's last name */
	bool followed;           /* the scheduler program knew it */
	char comm[JBPF_COMM_LEN];
};

struct pending {
	struct pending *next;
	uint64_t key;
	size_t size;
	struct jbpf_sample wait; /* followed by its frames, and room for a user stack to come */
};

struct wall {
	struct wall_config config;
	struct aggregator *agg;
	uint64_t start_ns, end_ns;
	bool ended;
	struct thread *threads;
	size_t cap, nr;
	struct pending *by_ustack, *by_end;
	size_t nr_pending;
	uint64_t sample_period_ns;
	struct wall_stats stats;
};

struct wall *wall__new(const struct wall_config *config, struct aggregator *agg)
{
	struct wall *wall = calloc(1, sizeof(*wall));

	if (!wall)
		return NULL;
	wall->config = *config;
	wall->agg = agg;
	return wall;
}

static void free_list(struct pending *p)
{
	while (p) {
		struct pending *next = p->next;

		free(p);
		p = next;
	}
}

void wall__free(struct wall *wall)
{
	if (!wall)
		return;
	free_list(wall->by_ustack);
	free_list(wall->by_end);
	free(wall->threads);
	free(wall);
}

void wall__start(struct wall *wall, uint64_t start_ns)
{
	wall->start_ns = start_ns;
}

void wall__set_sample_period(struct wall *wall, uint64_t period_ns)
{
	wall->sample_period_ns = period_ns;
}

uint64_t wall__window_ns(const struct wall *wall)
{
	return wall->ended && wall->end_ns > wall->start_ns ? wall->end_ns - wall->start_ns : 0;
}

void wall__stats(const struct wall *wall, struct wall_stats *stats)
{
	*stats = wall->stats;
	stats->threads = wall->nr;
}

/* ---- threads ---- */

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)(tid * 0x9e3779b1u) & (cap - 1);
}

/*
 * Moves the threads into a new table of cap slots (a power of two), leaving
 * out those that exited when drop_exited; false on out of memory, with the
 * table unchanged.
 */
static bool rehash(struct wall *wall, size_t cap, bool drop_exited)
{
	struct thread *threads = calloc(cap, sizeof(*threads));
	size_t kept = 0;

	if (!threads)
		return false;
	for (size_t i = 0; i < wall->cap; i++) {
		size_t j;

		if (!wall->threads[i].tid || (drop_exited && wall->threads[i].exit_ns))
			continue;
		for (j = slot_of(wall->threads[i].tid, cap); threads[j].tid; j = (j + 1) & (cap - 1))
			;
		threads[j] = wall->threads[i];
		kept++;
	}
	free(wall->threads);
	wall->threads = threads;
	wall->cap = cap;
	wall->nr = kept;
	return true;
}

static bool grow(struct wall *wall)
{
	return rehash(wall, wall->cap ? wall->cap * 2 : 1024, false);
}

size_t wall__forget_exited(struct wall *wall)
{
	size_t kept = 0, cap = 1024, before = wall->nr;

	for (size_t i = 0; i < wall->cap; i++)
		kept += wall->threads[i].tid && !wall->threads[i].exit_ns;
	if (kept == before)
		return 0;
	while ((kept + 1) * 2 > cap)
		cap *= 2;
	return rehash(wall, cap, true) ? before - kept : 0;
}

/* The thread tid, added if new; NULL when the table is full. */
static struct thread *thread_of(struct wall *wall, uint32_t tid, uint32_t tgid)
{
	size_t i;

	if (!tid)
		return NULL;
	if (wall->cap) {
		for (i = slot_of(tid, wall->cap); wall->threads[i].tid; i = (i + 1) & (wall->cap - 1))
			if (wall->threads[i].tid == tid)
				return &wall->threads[i];
	}
	if (wall->nr >= MAX_THREADS || ((wall->nr + 1) * 2 > wall->cap && !grow(wall))) {
		wall->stats.threads_full++;
		return NULL;
	}
	for (i = slot_of(tid, wall->cap); wall->threads[i].tid; i = (i + 1) & (wall->cap - 1))
		;
	wall->threads[i].tid = tid;
	wall->threads[i].tgid = tgid;
	wall->nr++;
	return &wall->threads[i];
}

/* ---- waits ---- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/*
 * A complete wait: clipped to the window, counted in its thread, then
 * handed on (through end_wait for one still going on at the end).
 */
static void finish_wait(struct wall *wall, struct jbpf_sample *w, size_t size, bool at_end)
{
	struct thread *t = thread_of(wall, w->tid, w->tgid);
	uint64_t start = w->wait_start_ns, end = w->time_ns, length;

	if (!t)
		return;
	t->followed = true;
	memcpy(t->comm, w->comm, sizeof(t->comm));
	if (w->born_ns > wall->start_ns && !t->born_ns)
		t->born_ns = w->born_ns;
	if ((w->flags & JBPF_WAIT_UNKNOWN_START) || start < wall->start_ns)
		start = max_u64(wall->start_ns, w->born_ns);
	if (wall->ended && end > wall->end_ns)
		end = wall->end_ns;
	if (wall->ended && start > wall->end_ns)
		start = wall->end_ns;
	length = end > start ? end - start : 0;
	w->wait_start_ns = start;
	w->time_ns = end;
	/* Woken before the window, or after its end: asleep throughout, as far as the window goes. */
	if (w->woken_ns <= start || w->woken_ns >= end || w->state == JBPF_STATE_RUNNABLE)
		w->woken_ns = 0;
	if (w->flags & JBPF_WAIT_NEW_THREAD) {
		t->born_ns = max_u64(start, wall->start_ns);
		t->off_ns += length;
		t->new_ns += length;
		wall->stats.waits++;
		return;
	}
	/*
	 * --min-block and --max-block. A wait whose start or end lies outside
	 * the window is longer than what is seen of it: only a length already
	 * past --max-block says which side it falls on.
	 */
	if (!(w->flags & JBPF_WAIT_SAMPLED) &&
	    ((wall->config.max_block_ns && length > wall->config.max_block_ns) ||
	     (!(w->flags & JBPF_WAIT_UNKNOWN_START) && !at_end && length < wall->config.min_block_ns))) {
		t->filtered_ns += length;
		wall->stats.filtered++;
		return;
	}
	if ((w->flags & JBPF_WAIT_SAMPLED) && w->state < JBPF_STATE_NR) {
		if (w->woken_ns) {
			t->sampled_ns[JBPF_STATE_RUNNABLE] += end - w->woken_ns;
			t->sampled_ns[w->state] += w->woken_ns - start;
		} else {
			t->sampled_ns[w->state] += length;
		}
	} else
		t->off_ns += length;
	wall->stats.waits++;
	if (at_end)
		wall->stats.waits_at_end++;
	if (at_end && wall->config.end_wait) {
		wall->config.end_wait(wall->config.ctx, w, size);
	} else {
		struct record r = { .type = JBPF_RECORD_WAIT, .size = size, .sample = w };

		wall->config.forward(wall->config.ctx, &r);
	}
}

/*
 * Keeps a wait until its missing piece comes. With no room, a wait missing
 * its user stack goes on without it; one missing its end is dropped, since
 * its length is not known (both counted).
 */
static void hold(struct wall *wall, struct pending **list, uint64_t key, const struct jbpf_sample *w)
{
	size_t size = decode__sample_used_size(w); /* never more than WAIT_BYTES */
	size_t room = size + (list == &wall->by_ustack ? JBPF_MAX_STACK_DEPTH * sizeof(__u64) : 0);
	struct pending *p;

	if (wall->nr_pending >= MAX_PENDING || !(p = malloc(sizeof(*p) - sizeof(p->wait) + room))) {
		struct jbpf_sample *copy;

		wall->stats.pending_full++;
		if (list == &wall->by_end || !(copy = malloc(WAIT_BYTES)))
			return;
		memcpy(copy, w, size);
		copy->ustack_err = -EINPROGRESS;
		copy->ustack_seq = 0;
		wall->stats.no_user_stack++;
		finish_wait(wall, copy, size, false);
		free(copy);
		return;
	}
	p->key = key;
	p->size = size;
	memcpy(&p->wait, w, size);
	p->next = *list;
	*list = p;
	wall->nr_pending++;
}

static struct pending *take(struct wall *wall, struct pending **list, uint64_t key)
{
	for (struct pending **at = list; *at; at = &(*at)->next) {
		struct pending *p = *at;

		if (p->key == key) {
			*at = p->next;
			wall->nr_pending--;
			return p;
		}
	}
	return NULL;
}

/* The user stack of a system call: every wait of that call that waited for it. */
static void user_stack(struct wall *wall, const struct jbpf_user_stack *u)
{
	struct pending *p;

	while ((p = take(wall, &wall->by_ustack, u->seq))) {
		struct jbpf_sample *w = &p->wait;
		size_t java_bytes = (size_t)w->java_len * sizeof(struct jbpf_java_frame);

		/* Any Java frames after the ips move up past the user stack (the room hold made). */
		memmove(&w->ips[w->kstack_len + u->len], &w->ips[w->kstack_len + w->ustack_len], java_bytes);
		memcpy(&w->ips[w->kstack_len], u->ips, u->len * sizeof(__u64));
		w->ustack_len = u->len;
		w->ustack_err = u->err;
		w->ustack_seq = 0;
		finish_wait(wall, w, decode__sample_used_size(w), false);
		free(p);
	}
}

static void wait_end(struct wall *wall, const struct jbpf_wait_end *e)
{
	struct pending *p;

	p = take(wall, &wall->by_end, e->wait_id);
	if (!p)
		return;
	if (!e->time_ns) {
		/* The switch that ended it was missed (see bpf/offcpu.bpf.c). */
		wall->stats.ends_lost++;
		free(p);
		return;
	}
	p->wait.time_ns = e->time_ns;
	p->wait.woken_ns = e->woken_ns;
	p->wait.flags &= ~JBPF_WAIT_OPEN;
	finish_wait(wall, &p->wait, p->size, false);
	free(p);
}

static void thread_exit(struct wall *wall, const struct jbpf_thread_exit *e)
{
	struct thread *t;

	t = thread_of(wall, e->tid, e->tgid);
	if (!t)
		return;
	t->followed = true;
	t->exit_ns = e->time_ns;
	memcpy(t->sampled_out_ns, e->waits.sampled_out_ns, sizeof(t->sampled_out_ns));
	t->bpf_filtered_ns = e->waits.filtered_ns;
}

/*
 * A virtual thread's time unmounted: its own wait, not its carrier's
 * (which ran other work meanwhile), so no thread's accounting takes it.
 * Its start is the window's when it was unmounted before the probes, and
 * a short one picked by chance stands for the wait interval: it was
 * picked with probability its length / interval (bpf/vthreads.bpf.c).
 */
static void vthread_wait(struct wall *wall, const struct record *r)
{
	const struct jbpf_sample *s = r->sample;
	struct jbpf_sample *copy;
	struct record on = *r;
	uint64_t end = s->time_ns, start = s->flags & JBPF_WAIT_UNKNOWN_START ? 0 : s->wait_start_ns;

	if (wall->ended && end > wall->end_ns)
		end = wall->end_ns;
	if (s->flags & JBPF_WAIT_SAMPLED)
		start = end > wall->config.full_wait_ns ? end - wall->config.full_wait_ns : 0;
	if (start < wall->start_ns)
		start = wall->start_ns;
	if (end <= start)
		return;
	copy = malloc(r->size);
	if (!copy) {
		wall->stats.pending_full++;
		return;
	}
	memcpy(copy, s, r->size);
	copy->type = JBPF_RECORD_WAIT;
	copy->wait_start_ns = start;
	copy->time_ns = end;
	copy->flags = (copy->flags & ~(JBPF_WAIT_SAMPLED | JBPF_WAIT_UNKNOWN_START)) | JBPF_WAIT_UNMOUNTED;
	on.type = JBPF_RECORD_WAIT;
	on.sample = copy;
	wall->stats.vthread_waits++;
	wall->stats.vthread_ns += end - start;
	wall->config.forward(wall->config.ctx, &on);
	free(copy);
}

void wall__record(struct wall *wall, const struct record *r)
{
	const struct jbpf_sample *s = r->sample;
	struct thread *t;

	switch (r->type) {
	case JBPF_RECORD_WAIT:
		if (s->flags & JBPF_WAIT_OPEN)
			hold(wall, &wall->by_end, s->wait_id, s);
		else if (s->ustack_seq)
			hold(wall, &wall->by_ustack, s->ustack_seq, s);
		else {
			struct jbpf_sample *copy = malloc(WAIT_BYTES);

			if (!copy) {
				wall->stats.pending_full++;
				return;
			}
			memcpy(copy, s, decode__sample_used_size(s));
			finish_wait(wall, copy, decode__sample_used_size(s), false);
			free(copy);
		}
		return;
	case JBPF_RECORD_USER_STACK:
		user_stack(wall, r->user_stack);
		return;
	case JBPF_RECORD_WAIT_END:
		wait_end(wall, r->wait_end);
		return;
	case JBPF_RECORD_VTHREAD_WAIT:
		vthread_wait(wall, r);
		return;
	case JBPF_RECORD_THREAD_EXIT:
		thread_exit(wall, r->thread_exit);
		return;
	case JBPF_RECORD_CPU_SAMPLE:
		if ((t = thread_of(wall, s->tid, s->tgid))) {
			t->cpu_samples++;
			memcpy(t->comm, s->comm, sizeof(t->comm));
		}
		break;
	default:
		break;
	}
	wall->config.forward(wall->config.ctx, r);
}

/* ---- the end ---- */

/*
 * A thread off CPU since `since` (0: since before the start) and still at
 * the end: one wait up to the end, with the kernel stack the end of the
 * recording read (bpf/offcpu.bpf.c end_of_waits). One that came back
 * unseen waits until it came back, if that is before the end, without
 * stacks (end_of_waits' came_back_unseen). Nothing when `since` is at or
 * past the end (a thread whose switch-out came after it, told from its CPU
 * time: end_of_waits' left_unseen).
 */
static void wait_at_end(struct wall *wall, const struct jbpf_thread_end *end, uint64_t since)
{
	const struct jbpf_thread_waits *tw = &end->waits;
	bool came_back = end->flags & JBPF_THREAD_END_CAME_BACK;
	uint64_t until = came_back && end->back_ns < wall->end_ns ? end->back_ns : wall->end_ns;
	struct jbpf_sample *w;
	const struct thread *t = thread_of(wall, end->tid, tw->tgid);

	if (since >= until)
		return;
	w = calloc(1, WAIT_BYTES);
	if (!w)
		return;
	w->type = JBPF_RECORD_WAIT;
	w->tgid = tw->tgid;
	w->tid = end->tid;
	w->state = tw->state;
	w->wait_start_ns = since;
	w->time_ns = until;
	w->flags = since ? 0 : JBPF_WAIT_UNKNOWN_START;
	memcpy(w->comm, end->comm, sizeof(w->comm));
	if (!w->comm[0] && t)
		memcpy(w->comm, t->comm, sizeof(w->comm)); /* exited since: the last name seen */
	w->kstack_len = (uint16_t)(end->kstack_len <= JBPF_MAX_STACK_DEPTH ? end->kstack_len : 0);
	w->kstack_err = (__s16)(end->flags & JBPF_THREAD_END_GONE ? -ENOENT : end->kstack_err);
	w->ustack_err = came_back ? -ESTALE : -ESRCH;
	/* A walked JVM's thread: the user stack and Java frames of its switch-out (see jbpf_thread_end). */
	if (end->ustack_len <= JBPF_MAX_STACK_DEPTH && end->java_len <= JBPF_MAX_JAVA_FRAMES &&
	    (end->ustack_len || end->java_len)) {
		w->ustack_len = end->ustack_len;
		w->java_len = end->java_len;
		w->lock_klass = end->lock_klass;
		w->ustack_err = 0;
	}
	/* The kernel stack, then what follows it in end: the same layout as a wait's. */
	memcpy(w->ips, end->ips, decode__sample_used_size(w) - sizeof(*w));
	if (w->java_len && !decode__sample_is_valid(w, decode__sample_used_size(w))) {
		w->ustack_len = 0;
		w->java_len = 0;
		w->ustack_err = -EINVAL;
	}
	finish_wait(wall, w, decode__sample_used_size(w), true);
	free(w);
}

void wall__end_thread(struct wall *wall, const struct jbpf_thread_end *end)
{
	const struct jbpf_thread_waits *w = &end->waits;
	uint32_t tid = end->tid;
	struct thread *t = thread_of(wall, tid, w->tgid);
	struct pending *p;

	/* An exiting thread's life ended with its exit record. */
	if (!t || (w->flags & JBPF_THREAD_EXITING))
		return;
	t->followed = true;
	memcpy(t->sampled_out_ns, w->sampled_out_ns, sizeof(t->sampled_out_ns));
	t->bpf_filtered_ns = w->filtered_ns;
	if (w->open_wait) {
		p = take(wall, &wall->by_end, w->open_wait);
		if (p) {
			p->wait.time_ns = wall->end_ns;
			p->wait.flags &= ~JBPF_WAIT_OPEN;
			finish_wait(wall, &p->wait, p->size, true);
			free(p);
		}
	} else if (w->flags & JBPF_THREAD_NEW) {
		uint64_t length = wall->end_ns > w->off_since ? wall->end_ns - w->off_since : 0;

		if (end->comm[0])
			memcpy(t->comm, end->comm, sizeof(t->comm));
		t->born_ns = max_u64(w->off_since, wall->start_ns);
		t->off_ns += length;
		t->new_ns += length;
	} else if (w->flags & JBPF_THREAD_SINCE_START) {
		/* Never switched during the window: it ran throughout, or waited throughout. */
		if (w->state != JBPF_STATE_RUNNABLE)
			wait_at_end(wall, end, 0);
	} else if (w->off_since) {
		wait_at_end(wall, end, w->off_since);
	}
}

static void end_thread_cb(void *ctx, const struct jbpf_thread_end *end)
{
	wall__end_thread(ctx, end);
}

void wall__stop(struct wall *wall, uint64_t end_ns)
{
	wall->end_ns = end_ns;
	wall->ended = true;
}

/*
 * A virtual thread unmounted at the end: its wait up to the end, its
 * frames not read (only a mount's thaw reads them), under its marker.
 */
void wall__end_unmounted(struct wall *wall, uint32_t tgid, uint64_t id, uint64_t since, uint32_t state)
{
	struct {
		struct jbpf_sample s;
		struct jbpf_java_frame marker;
	} w = { .s = { .type = JBPF_RECORD_VTHREAD_WAIT, .tgid = tgid, .time_ns = wall->end_ns,
		       .wait_start_ns = since, .state = state, .java_len = 1, .ustack_err = -ESRCH },
		.marker = { .kind = JBPF_JAVA_CARRIER, .reason = JBPF_JAVA_CARRIER_WHOLE, .ptr = id } };
	struct record r = { .type = JBPF_RECORD_VTHREAD_WAIT, .size = sizeof(w), .sample = &w.s };

	vthread_wait(wall, &r);
}

static void end_unmounted_cb(void *ctx, uint32_t tgid, uint64_t id, uint64_t since, uint32_t state)
{
	wall__end_unmounted(ctx, tgid, id, since, state);
}

void wall__end(struct wall *wall, struct sampler *sampler)
{
	struct pending *p;

	if (sampler) {
		sampler__for_each_thread(sampler, end_thread_cb, wall);
		sampler__for_each_unmounted(sampler, end_unmounted_cb, wall);
	}
	/* Runnable or blocked waits whose end never came: their end record was lost. */
	while ((p = wall->by_end)) {
		wall->by_end = p->next;
		wall->nr_pending--;
		wall->stats.ends_lost++;
		free(p);
	}
	/* Waits whose system call had not returned: on without their user stack. */
	while ((p = wall->by_ustack)) {
		wall->by_ustack = p->next;
		wall->nr_pending--;
		p->wait.ustack_err = -EINPROGRESS;
		p->wait.ustack_seq = 0;
		wall->stats.no_user_stack++;
		finish_wait(wall, &p->wait, p->size, false);
		free(p);
	}
}

/* ---- settling ---- */

static uint64_t sub_clamped(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The name a thread's stacks carry: the caller's (a Java name), else its comm. */
static const char *name_of(struct wall *wall, const struct thread *t)
{
	return wall->config.thread_name ? wall->config.thread_name(wall->config.ctx, t->tgid, t->tid) : NULL;
}

static void settle_thread(struct wall *wall, struct thread *t)
{
	uint64_t start = max_u64(wall->start_ns, t->born_ns);
	uint64_t end = t->exit_ns && t->exit_ns < wall->end_ns ? t->exit_ns : wall->end_ns;
	uint64_t life = sub_clamped(end, start), running, short_waits[JBPF_STATE_NR] = { 0 }, waited;

	if (!t->followed) {
		/* Not followed by the scheduler program (its table was full): samples times the period. */
		running = t->cpu_samples * wall->sample_period_ns;
	} else {
		waited = t->off_ns + t->filtered_ns + t->bpf_filtered_ns;
		for (int state = 0; state < JBPF_STATE_NR; state++) {
			short_waits[state] = t->sampled_ns[state] + t->sampled_out_ns[state];
			waited += short_waits[state];
		}
		running = sub_clamped(life, waited);
	}
	if (t->new_ns)
		aggregator__add_placeholder(wall->agg, t->tgid, t->tid, t->comm, name_of(wall, t), JBPF_STATE_RUNNABLE,
					    "[new thread, before its first run]", t->new_ns);
	if (!wall->config.offcpu_only && running &&
	    !aggregator__settle(wall->agg, t->tid, JBPF_STATE_RUNNING, running))
		aggregator__add_placeholder(wall->agg, t->tgid, t->tid, t->comm, name_of(wall, t), JBPF_STATE_RUNNING,
					    "[on CPU, no sample taken]", running);
	for (int state = JBPF_STATE_RUNNABLE; state < JBPF_STATE_NR; state++)
		if (short_waits[state] && !aggregator__settle(wall->agg, t->tid, state, short_waits[state]))
			aggregator__add_placeholder(wall->agg, t->tgid, t->tid, t->comm, name_of(wall, t), state,
						    "[short waits, none recorded]", short_waits[state]);
}

void wall__settle(struct wall *wall)
{
	for (size_t i = 0; i < wall->cap; i++)
		if (wall->threads[i].tid)
			settle_thread(wall, &wall->threads[i]);
}
