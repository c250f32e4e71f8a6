/*
 * join: samples and Java traces paired by JVM and sequence number
 * (contract in join.h).
 *
 * A slot per (tgid, sequence number) holds the samples waiting for it and,
 * once it came, its trace. Slots hash by sequence number alone, so all the
 * slots of one number share a bucket: a lost signal, which BPF reports by
 * number, finds every JVM's samples of that number there, and its marker
 * waits in a slot of tgid 0, which no JVM has. Three lists in arrival order drive the time limits:
 * samples signalled at once, samples deferred to a system call's exit, and
 * traces kept for late samples of a deferred group.
 */
#include "join.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

/*
 * The agent sends traces within 100 ms (CHANNEL_IDLE_MS) and the sampler
 * is drained every 100 ms: a trace later than this is not coming.
 */
#define SAMPLE_WAIT_NS (2000 * NS_PER_MS)
/* A thread sampled in a system call may then sleep in it for long. */
#define DEFERRED_WAIT_NS (30000 * NS_PER_MS)
/* How long a deferred group's trace waits for the group's later samples. */
#define TRACE_KEEP_NS (2000 * NS_PER_MS)
#define MAX_WAITING_BYTES (64u << 20)
/* Traces kept for samples still to come; the agent is not trusted to be brief. */
#define MAX_TRACE_BYTES (64u << 20)
#define NR_BUCKETS 65536
/* status of a slot's stand-in trace when the signal was never sent */
#define STATUS_SIGNAL_LOST INT32_MIN
/* The tgid of the slot holding that stand-in: BPF names the number, not the JVM. */
#define LOST_TGID 0u

struct slot;

struct link {
	struct link *prev, *next;
};

struct list {
	struct link head; /* circular; head.next is the oldest */
};

struct pending {
	struct link order;      /* in join.immediate or join.deferred */
	struct pending *next;   /* in its slot */
	struct slot *slot;
	uint64_t arrival_ns;
	size_t size;
	_Alignas(8) uint8_t data[];
};

struct slot {
	uint32_t tgid;          /* the JVM; 0 for a lost signal's marker */
	uint64_t seq;
	struct slot *hash_next;
	struct pending *samples;
	struct join_trace *trace;
	struct link trace_order; /* in join.traces while trace is kept */
	uint64_t trace_arrival_ns;
	bool matched;
};

struct join {
	join_emit_fn emit;
	void *ctx;
	struct slot *buckets[NR_BUCKETS];
	struct list immediate, deferred, traces;
	size_t waiting_bytes, trace_bytes;
	struct join_stats stats;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static void list_init(struct list *l)
{
	l->head.prev = l->head.next = &l->head;
}

static bool list_empty(const struct list *l)
{
	return l->head.next == &l->head;
}

static void list_append(struct list *l, struct link *e)
{
	e->prev = l->head.prev;
	e->next = &l->head;
	l->head.prev->next = e;
	l->head.prev = e;
}

static void list_remove(struct link *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->prev = e->next = e;
}

struct join *join__new(join_emit_fn emit, void *ctx)
{
	struct join *join = calloc(1, sizeof(*join));

	if (!join)
		return NULL;
	join->emit = emit;
	join->ctx = ctx;
	list_init(&join->immediate);
	list_init(&join->deferred);
	list_init(&join->traces);
	return join;
}

static size_t bucket_of(uint64_t seq)
{
	return (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 48) & (NR_BUCKETS - 1);
}

static struct slot *slot_find(struct join *join, uint32_t tgid, uint64_t seq, bool create)
{
	struct slot **head = &join->buckets[bucket_of(seq)], *s;

	for (s = *head; s; s = s->hash_next)
		if (s->seq == seq && s->tgid == tgid)
			return s;
	if (!create)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->tgid = tgid;
	s->seq = seq;
	s->trace_order.prev = s->trace_order.next = &s->trace_order;
	s->hash_next = *head;
	*head = s;
	return s;
}

/* Frees the slot once nothing waits in it and no trace is kept. */
static void slot_release_if_empty(struct join *join, struct slot *s)
{
	struct slot **p;

	if (s->samples || s->trace)
		return;
	for (p = &join->buckets[bucket_of(s->seq)]; *p; p = &(*p)->hash_next) {
		if (*p == s) {
			*p = s->hash_next;
			break;
		}
	}
	free(s);
}

static void drop_trace(struct join *join, struct slot *s)
{
	if (!s->trace)
		return;
	if (!s->matched && s->trace->status != STATUS_SIGNAL_LOST)
		join->stats.traces_unmatched++;
	list_remove(&s->trace_order);
	join->trace_bytes -= sizeof(*s->trace) + s->trace->frame_count * sizeof(s->trace->frames[0]);
	free(s->trace);
	s->trace = NULL;
}

/* Emits one waiting sample and forgets it. */
static void emit_pending(struct join *join, struct pending *p, enum join_outcome outcome)
{
	struct slot *s = p->slot;
	struct pending **q;

	for (q = &s->samples; *q; q = &(*q)->next) {
		if (*q == p) {
			*q = p->next;
			break;
		}
	}
	list_remove(&p->order);
	join->waiting_bytes -= p->size;
	join->stats.waiting--;
	join->stats.outcomes[outcome]++;
	join->emit(join->ctx, (const struct jbpf_sample *)p->data, p->size,
		   outcome == JOIN_MATCHED ? s->trace : NULL, outcome);
	free(p);
}

/* A slot that has its trace: pass it to every sample waiting there. */
static void match_slot(struct join *join, struct slot *s)
{
	enum join_outcome outcome = s->trace->status == STATUS_SIGNAL_LOST ? JOIN_SIGNAL_LOST : JOIN_MATCHED;

	while (s->samples) {
		if (outcome == JOIN_MATCHED)
			s->matched = true;
		emit_pending(join, s->samples, outcome);
	}
}

void join__add_sample(struct join *join, const struct jbpf_sample *sample, size_t size, uint64_t now_ns)
{
	bool deferred = sample->flags & JBPF_SAMPLE_DEFERRED;
	struct slot *s = slot_find(join, LOST_TGID, sample->java_seq, false);
	struct pending *p;

	/* The signal was never sent: whatever a JVM sent for that number is not this sample's. */
	if (s && s->trace) {
		join->stats.outcomes[JOIN_SIGNAL_LOST]++;
		join->emit(join->ctx, sample, size, NULL, JOIN_SIGNAL_LOST);
		return;
	}
	if (join->waiting_bytes + size > MAX_WAITING_BYTES ||
	    !(s = slot_find(join, sample->tgid, sample->java_seq, true))) {
		join->stats.outcomes[JOIN_QUEUE_FULL]++;
		join->emit(join->ctx, sample, size, NULL, JOIN_QUEUE_FULL);
		return;
	}
	if (s->trace) {
		enum join_outcome outcome =
			s->trace->status == STATUS_SIGNAL_LOST ? JOIN_SIGNAL_LOST : JOIN_MATCHED;

		if (outcome == JOIN_MATCHED)
			s->matched = true;
		join->stats.outcomes[outcome]++;
		join->emit(join->ctx, sample, size, outcome == JOIN_MATCHED ? s->trace : NULL, outcome);
		/* Only a deferred group has more samples to come for one number. */
		if (!deferred) {
			drop_trace(join, s);
			slot_release_if_empty(join, s);
		}
		return;
	}
	p = malloc(sizeof(*p) + size);
	if (!p) {
		slot_release_if_empty(join, s);
		join->stats.outcomes[JOIN_QUEUE_FULL]++;
		join->emit(join->ctx, sample, size, NULL, JOIN_QUEUE_FULL);
		return;
	}
	memcpy(p->data, sample, size);
	p->size = size;
	p->slot = s;
	p->arrival_ns = now_ns;
	p->next = s->samples;
	s->samples = p;
	list_append(deferred ? &join->deferred : &join->immediate, &p->order);
	join->waiting_bytes += size;
	join->stats.waiting++;
}

/* A lost signal's marker came: the samples of every JVM that wait for its number get none. */
static void give_up_number(struct join *join, uint64_t seq)
{
	struct slot *s = join->buckets[bucket_of(seq)], *next;

	for (; s; s = next) {
		next = s->hash_next;
		if (s->seq != seq || s->tgid == LOST_TGID)
			continue;
		while (s->samples)
			emit_pending(join, s->samples, JOIN_SIGNAL_LOST);
		slot_release_if_empty(join, s);
	}
}

static void keep_trace(struct join *join, uint32_t tgid, uint64_t seq, struct join_trace *trace, uint64_t now_ns)
{
	struct slot *s = slot_find(join, tgid, seq, true);
	bool deferred_group;

	if (!s || s->trace) {
		/* Out of memory, or a second trace for one number: the first stands. */
		if (s)
			join->stats.traces_unmatched++;
		free(trace);
		return;
	}
	s->trace = trace;
	join->trace_bytes += sizeof(*trace) + trace->frame_count * sizeof(trace->frames[0]);
	s->trace_arrival_ns = now_ns;
	list_append(&join->traces, &s->trace_order);
	if (tgid == LOST_TGID)
		give_up_number(join, seq);
	deferred_group = s->samples && (((const struct jbpf_sample *)s->samples->data)->flags & JBPF_SAMPLE_DEFERRED);
	match_slot(join, s);
	if (s->matched && !deferred_group) {
		drop_trace(join, s);
		slot_release_if_empty(join, s);
	}
}

void join__add_trace(struct join *join, uint32_t tgid, const struct jbpf_msg_trace *msg,
		     const struct jbpf_trace_frame *frames, uint64_t now_ns)
{
	size_t n = msg->frame_count <= JBPF_STREAM_MAX_FRAMES ? msg->frame_count : JBPF_STREAM_MAX_FRAMES;
	size_t bytes = sizeof(struct join_trace) + n * sizeof(struct jbpf_trace_frame);
	struct join_trace *trace;

	join->stats.traces++;
	if (join->trace_bytes + bytes > MAX_TRACE_BYTES || !(trace = malloc(bytes))) {
		join->stats.traces_unmatched++;
		return;
	}
	trace->seq = msg->seq;
	trace->time_ns = msg->time_ns;
	trace->tid = msg->tid;
	trace->status = msg->status;
	trace->flags = msg->flags;
	trace->frame_count = (uint32_t)n;
	memcpy(trace->frames, frames, n * sizeof(trace->frames[0]));
	if (tgid == LOST_TGID) { /* not a JVM */
		join->stats.traces_unmatched++;
		free(trace);
		return;
	}
	keep_trace(join, tgid, msg->seq, trace, now_ns);
}

void join__signal_lost(struct join *join, uint64_t seq, uint64_t now_ns)
{
	struct join_trace *marker = calloc(1, sizeof(*marker));

	if (!marker)
		return;
	marker->seq = seq;
	marker->status = STATUS_SIGNAL_LOST;
	keep_trace(join, LOST_TGID, seq, marker, now_ns);
}

static void expire_list(struct join *join, struct list *l, uint64_t now_ns, uint64_t wait_ns,
			enum join_outcome outcome)
{
	while (!list_empty(l)) {
		struct pending *p = container_of(l->head.next, struct pending, order);
		struct slot *s = p->slot;

		if (now_ns - p->arrival_ns < wait_ns)
			break;
		emit_pending(join, p, outcome);
		slot_release_if_empty(join, s);
	}
}

void join__expire(struct join *join, uint64_t now_ns)
{
	expire_list(join, &join->immediate, now_ns, SAMPLE_WAIT_NS, JOIN_NO_TRACE);
	expire_list(join, &join->deferred, now_ns, DEFERRED_WAIT_NS, JOIN_IN_SYSCALL);
	while (!list_empty(&join->traces)) {
		struct slot *s = container_of(join->traces.head.next, struct slot, trace_order);

		if (now_ns - s->trace_arrival_ns < TRACE_KEEP_NS)
			break;
		drop_trace(join, s);
		slot_release_if_empty(join, s);
	}
}

/* Emits every sample of tgid waiting on list l, with outcome. */
static void forget_list(struct join *join, struct list *l, uint32_t tgid, enum join_outcome outcome)
{
	struct link *e = l->head.next;

	while (e != &l->head) {
		struct pending *p = container_of(e, struct pending, order);
		struct slot *s = p->slot;

		e = e->next;
		if (s->tgid != tgid)
			continue;
		emit_pending(join, p, outcome);
		slot_release_if_empty(join, s);
	}
}

void join__forget_tgid(struct join *join, uint32_t tgid)
{
	struct link *e;

	forget_list(join, &join->immediate, tgid, JOIN_NO_TRACE);
	forget_list(join, &join->deferred, tgid, JOIN_IN_SYSCALL);
	e = join->traces.head.next;
	while (e != &join->traces.head) {
		struct slot *s = container_of(e, struct slot, trace_order);

		e = e->next;
		if (s->tgid != tgid)
			continue;
		drop_trace(join, s);
		slot_release_if_empty(join, s);
	}
}

void join__finish(struct join *join)
{
	join__expire(join, UINT64_MAX);
}

void join__free(struct join *join)
{
	if (!join)
		return;
	for (size_t b = 0; b < NR_BUCKETS; b++) {
		while (join->buckets[b]) {
			struct slot *s = join->buckets[b];

			join->buckets[b] = s->hash_next;
			while (s->samples) {
				struct pending *p = s->samples;

				s->samples = p->next;
				free(p);
			}
			free(s->trace);
			free(s);
		}
	}
	free(join);
}

void join__stats(const struct join *join, struct join_stats *stats)
{
	*stats = join->stats;
}
