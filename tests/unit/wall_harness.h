/*
 * wall_harness: what test_wall.c drives user/record/wall.c with: a window
 * of one second and three threads, hand-made scheduler records (waits,
 * their ends, user stacks, CPU samples, thread ends), a real aggregator
 * behind the stage (time weights, every state, thread roots), and the
 * profile read back as text stacks and per-thread totals, in
 * microseconds. A kallsyms fixture names the kernel addresses.
 */
#ifndef JBPF_WALL_HARNESS_H
#define JBPF_WALL_HARNESS_H

#include <errno.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "bpf/jbpfprof.h"
#include "profile/profile.h"
#include "user/record/aggregator.h"
#include "user/record/decode.h"
#include "user/record/wall.h"
#include "symbolizer_fixture.h"

#define MS 1000000ull
#define START (1000ull * 1000 * MS)   /* 1000 s after boot */
#define WINDOW (1000 * MS)
#define END (START + WINDOW)
#define BORN_EARLY (START - 10000 * MS) /* threads alive before the window */
#define ALL_STATES 0xfu

#define KSYM_ENTRY 0xffffffff81000100ull
#define KSYM_HANDLER 0xffffffff81000200ull
#define KSYM_SCHEDULE 0xffffffff81000300ull

/* Threads of this process that do not exist: /proc has nothing for them. */
#define TID_A 3999901u
#define TID_B 3999902u
#define TID_C 3999903u

/* The largest wait record the BPF programs can send: every frame, both stacks. */
#define MAX_WAIT_BYTES (sizeof(struct jbpf_sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64))

/* Room for any record, aligned for the structs. */
typedef uint64_t record_buf[(MAX_WAIT_BYTES + 256) / sizeof(uint64_t)];

/* Two functions whose addresses stand in for a user stack. */
__attribute__((noinline)) int outer_function(int x);
__attribute__((noinline)) int inner_function(int x);

__attribute__((noinline)) int inner_function(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int outer_function(int x)
{
	return inner_function(x) + 2;
}

struct fixture {
	char kallsyms[64];
	struct symbolizer *sym;
	struct profile *profile;
	struct aggregator *agg;
	struct wall *wall;
	uint64_t forwarded;      /* records handed on through config.forward */
	uint64_t end_waits;      /* ... and through config.end_wait */
};

/* What the pipeline's later stages would do with what wall hands on. */
static inline void forward(void *ctx, const struct record *r)
{
	struct fixture *f = ctx;

	f->forwarded++;
	if (r->type == JBPF_RECORD_CPU_SAMPLE || r->type == JBPF_RECORD_WAIT)
		aggregator__add(f->agg, r->sample);
	else if (r->type == JBPF_RECORD_EXEC)
		aggregator__exec(f->agg, r->exec->tgid);
}

static inline void end_wait(void *ctx, const struct jbpf_sample *wait, size_t size)
{
	struct fixture *f = ctx;

	f->end_waits++;
	aggregator__add(f->agg, wait);
}

/*
 * What the end of a recording reads for a thread (bpf/offcpu.bpf.c
 * end_of_waits): its entry in `waits`; with a comm, the thread's name and
 * its kernel stack kips (kn frames); without, a thread gone (no task).
 */
static inline struct jbpf_thread_end *thread_end(struct jbpf_thread_end *end, uint32_t tid, struct jbpf_thread_waits waits,
					  const char *comm, const uint64_t *kips, size_t kn)
{
	memset(end, 0, sizeof(*end));
	end->tid = tid;
	end->waits = waits;
	if (!comm) {
		end->flags = JBPF_THREAD_END_GONE;
		return end;
	}
	snprintf(end->comm, sizeof(end->comm), "%s", comm);
	if (kn)
		memcpy(end->ips, kips, kn * sizeof(*kips));
	end->kstack_len = (__u32)kn;
	return end;
}

/* Records not decoded (user/record/decode.h): the pipeline drops them before wall. */
static uint64_t decode_failures;

/* A record as the pipeline hands it to wall: decoded first. */
static inline void feed(struct wall *wall, const void *data, size_t size)
{
	struct record r;

	if (!decode__record(data, size, &r)) {
		decode_failures++;
		return;
	}
	wall__record(wall, &r);
}

static inline int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct symbolizer_config sconfig = { 0 };
	struct aggregator_config aconfig = { .time_weights = true, .state_mask = ALL_STATES, .thread_root = true };

	if (!f)
		return -1;
	fixture_temp_file(f->kallsyms, sizeof(f->kallsyms), "test-wall",
			  "ffffffff81000100 T entry_syscall\nffffffff81000200 T handle_read\n"
			  "ffffffff81000300 T schedule\nffffffff81000400 T end_marker\n");
	sconfig.kallsyms_path = f->kallsyms;
	f->sym = symbolizer__new(&sconfig);
	f->profile = profile__new(NULL);
	if (!f->sym || !f->profile)
		return -1;
	f->agg = aggregator__new(&aconfig, f->sym, f->profile);
	if (!f->agg)
		return -1;
	decode_failures = 0;
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->kallsyms);
	wall__free(f->wall);
	aggregator__free(f->agg);
	symbolizer__free(f->sym);
	profile__free(f->profile);
	free(f);
	return 0;
}

/* The wall under test, from config plus the fixture's callbacks, its window open. */
static inline struct wall *open_wall(struct fixture *f, struct wall_config config)
{
	config.forward = forward;
	config.ctx = f;
	f->wall = wall__new(&config, f->agg);
	assert_non_null(f->wall);
	wall__start(f->wall, START);
	return f->wall;
}

static inline void close_and_settle(struct fixture *f)
{
	wall__stop(f->wall, END);
	wall__end(f->wall, NULL);
	wall__settle(f->wall);
}

/* ---- records ---- */

static inline size_t make_frames(struct jbpf_sample *s, const uint64_t *kips, size_t kn, const uint64_t *uips, size_t un)
{
	s->kstack_len = (uint16_t)kn;
	s->ustack_len = (uint16_t)un;
	if (kn)
		memcpy(s->ips, kips, kn * sizeof(uint64_t));
	if (un)
		memcpy(s->ips + kn, uips, un * sizeof(uint64_t));
	return sizeof(*s) + (kn + un) * sizeof(uint64_t);
}

/* A wait of thread tid from start to end; the caller sets wait_id, ustack_seq, born_ns. */
static inline size_t make_wait(void *buf, uint32_t tid, enum jbpf_state state, uint64_t start, uint64_t end, uint32_t flags,
			const uint64_t *kips, size_t kn, const uint64_t *uips, size_t un)
{
	struct jbpf_sample *s = buf;

	memset(s, 0, sizeof(*s));
	s->type = JBPF_RECORD_WAIT;
	s->tgid = (uint32_t)getpid();
	s->tid = tid;
	memcpy(s->comm, "waiter", 7);
	s->state = state;
	s->flags = flags;
	s->wait_start_ns = start;
	s->time_ns = end;
	s->born_ns = BORN_EARLY;
	return make_frames(s, kips, kn, uips, un);
}

static inline size_t make_cpu(void *buf, uint32_t tid, uint64_t time, const uint64_t *kips, size_t kn, const uint64_t *uips,
		       size_t un)
{
	struct jbpf_sample *s = buf;

	memset(s, 0, sizeof(*s));
	s->type = JBPF_RECORD_CPU_SAMPLE;
	s->tgid = (uint32_t)getpid();
	s->tid = tid;
	memcpy(s->comm, "waiter", 7);
	s->state = JBPF_STATE_RUNNING;
	s->time_ns = time;
	return make_frames(s, kips, kn, uips, un);
}

static inline size_t make_user_stack(void *buf, uint32_t tid, uint64_t seq, const uint64_t *uips, size_t un, int16_t err)
{
	struct jbpf_user_stack *u = buf;

	memset(u, 0, sizeof(*u));
	u->type = JBPF_RECORD_USER_STACK;
	u->tid = tid;
	u->seq = seq;
	u->len = (uint16_t)un;
	u->err = err;
	if (un)
		memcpy(u->ips, uips, un * sizeof(uint64_t));
	return sizeof(*u) + un * sizeof(uint64_t);
}

static inline void send_wait_end(struct wall *wall, uint32_t tid, uint64_t wait_id, uint64_t time)
{
	struct jbpf_wait_end e = { .type = JBPF_RECORD_WAIT_END, .tid = tid, .wait_id = wait_id, .time_ns = time };

	feed(wall, &e, sizeof(e));
}

static inline void send_cpu(struct wall *wall, uint32_t tid, uint64_t time, const uint64_t *kips, size_t kn,
		     const uint64_t *uips, size_t un)
{
	record_buf buf;

	feed(wall, buf, make_cpu(buf, tid, time, kips, kn, uips, un));
}

static inline uint64_t us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/* ---- reading the profile ---- */

static inline void stack_string(const struct profile *p, size_t i, char *out, size_t size, uint64_t *count)
{
	size_t depth, used = 0;
	const uint32_t *frames = profile__stack(p, i, &depth, count);

	out[0] = '\0';
	for (size_t j = 0; j < depth && used < size; j++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", j ? ";" : "",
					 profile__frame_name(p, frames[j]));
}

/* The count of the stack written "a;b;c"; fails the test when there is none. */
static inline uint64_t count_of(const struct profile *p, const char *want)
{
	char got[2048];
	uint64_t count;

	for (size_t i = 0; i < profile__stack_count(p); i++) {
		stack_string(p, i, got, sizeof(got), &count);
		if (!strcmp(got, want))
			return count;
	}
	for (size_t i = 0; i < profile__stack_count(p); i++) {
		stack_string(p, i, got, sizeof(got), &count);
		print_message("  have %s %llu\n", got, (unsigned long long)count);
	}
	fail_msg("no stack %s", want);
	return 0;
}

static inline bool has_stack(const struct profile *p, const char *want)
{
	char got[2048];
	uint64_t count;

	for (size_t i = 0; i < profile__stack_count(p); i++) {
		stack_string(p, i, got, sizeof(got), &count);
		if (!strcmp(got, want))
			return true;
	}
	return false;
}

/* Sum over every stack rooted in thread tid's frame; *nr_stacks of them with a count. */
static inline uint64_t thread_total(const struct profile *p, uint32_t tid, size_t *nr_stacks)
{
	char suffix[32];
	uint64_t total = 0;
	size_t n = 0, len;

	len = (size_t)snprintf(suffix, sizeof(suffix), " tid=%u]", tid);
	for (size_t i = 0; i < profile__stack_count(p); i++) {
		size_t depth, name_len;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);
		const char *root;

		if (!depth || profile__frame_kind(p, frames[0]) != FRAME_KIND_THREAD)
			continue;
		root = profile__frame_name(p, frames[0]);
		name_len = strlen(root);
		if (name_len < len || strcmp(root + name_len - len, suffix))
			continue;
		total += count;
		n += count != 0;
	}
	if (nr_stacks)
		*nr_stacks = n;
	return total;
}

/* total within ±1 µs per stack of want_ns. */
static inline void assert_total_near(const struct profile *p, uint32_t tid, uint64_t want_ns)
{
	size_t n;
	uint64_t total = thread_total(p, tid, &n), want = us(want_ns);
	uint64_t diff = total > want ? total - want : want - total;

	if (diff > n)
		fail_msg("thread %u: total %llu us over %zu stacks, want %llu us", tid, (unsigned long long)total, n,
			 (unsigned long long)want);
}

#endif /* JBPF_WALL_HARNESS_H */
