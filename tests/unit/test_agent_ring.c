/*
 * agent ring (jvmti-stub/ring.c): a full ring refuses a claim rather than
 * wait, the consumer stops at a claimed but unpublished slot, and
 * producers racing the consumer lose nothing: every value comes out once,
 * in its producer's order, or was counted as dropped for a full ring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "jvmti-stub/ring.h"

static void ring_drops_when_full_and_keeps_order(void **state)
{
	struct ring *r = ring__create(4);
	struct ring_slot *s, *pending;

	assert_null(ring__create(3));
	assert_non_null(r);
	assert_true(ring__idle(r));
	for (uint64_t i = 1; i <= 4; i++) {
		s = ring__claim(r);
		assert_non_null(s);
		s->seq = i;
		ring__publish(r, s);
	}
	assert_null(ring__claim(r));
	assert_int_equal(ring__used(r), 4);
	/* A claimed, unpublished slot stops the consumer there, and the ring is not idle. */
	s = ring__peek(r);
	assert_int_equal(s->seq, 1);
	ring__pop(r);
	pending = ring__claim(r);
	assert_non_null(pending);
	pending->seq = 5;
	for (uint64_t i = 2; i <= 4; i++) {
		s = ring__peek(r);
		assert_non_null(s);
		assert_int_equal(s->seq, i);
		ring__pop(r);
	}
	assert_null(ring__peek(r));
	assert_false(ring__idle(r));
	ring__publish(r, pending);
	s = ring__peek(r);
	assert_non_null(s);
	assert_int_equal(s->seq, 5);
	ring__pop(r);
	assert_true(ring__idle(r));
}

/* Producers racing the consumer: every value comes out once, or was counted as dropped. */
#define RACE_PRODUCERS 4
#define RACE_EACH 200000

struct race {
	struct ring *ring;
	unsigned int id;
	uint64_t dropped;
	_Atomic int *finished;
};

static void *race_producer(void *arg)
{
	struct race *p = arg;

	for (uint64_t i = 0; i < RACE_EACH; i++) {
		struct ring_slot *s = ring__claim(p->ring);

		if (!s) {
			p->dropped++;
			sched_yield(); /* let the consumer run: two CPUs are enough for this test */
			continue;
		}
		s->seq = (uint64_t)p->id << 32 | i;
		s->tid = p->id;
		ring__publish(p->ring, s);
	}
	atomic_fetch_add(p->finished, 1);
	return NULL;
}

static void ring_loses_nothing_under_contention(void **state)
{
	struct race producers[RACE_PRODUCERS];
	pthread_t threads[RACE_PRODUCERS];
	uint64_t next[RACE_PRODUCERS] = { 0 }, received = 0, dropped = 0;
	struct ring *r = ring__create(64);
	_Atomic int finished = 0;

	assert_non_null(r);
	for (unsigned int i = 0; i < RACE_PRODUCERS; i++) {
		producers[i] = (struct race){ .ring = r, .id = i, .finished = &finished };
		assert_int_equal(pthread_create(&threads[i], NULL, race_producer, &producers[i]), 0);
	}
	while (atomic_load(&finished) < RACE_PRODUCERS || !ring__idle(r)) {
		struct ring_slot *s = ring__peek(r);

		if (!s)
			continue;
		/* One producer's values come out in its order, with gaps only for its drops. */
		assert_true((s->seq & 0xffffffff) >= next[s->tid]);
		next[s->tid] = (s->seq & 0xffffffff) + 1;
		assert_int_equal(s->seq >> 32, s->tid);
		received++;
		ring__pop(r);
	}
	for (unsigned int i = 0; i < RACE_PRODUCERS; i++) {
		pthread_join(threads[i], NULL);
		dropped += producers[i].dropped;
	}
	fprintf(stderr, "  %llu received, %llu dropped for a full ring\n", (unsigned long long)received,
		(unsigned long long)dropped);
	assert_int_equal(received + dropped, (uint64_t)RACE_PRODUCERS * RACE_EACH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_drops_when_full_and_keeps_order),
		cmocka_unit_test(ring_loses_nothing_under_contention),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
