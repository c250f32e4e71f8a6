/*
 * join: each sample leaves exactly once, with the trace that carries its
 * sequence number and no other, whichever arrives first; deferred groups
 * share one trace; what never gets a trace leaves with its reason.
 */
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>

#include "user/java/join.h"

#define MS 1000000ull

struct emitted {
	int n;
	uint64_t seq[16];          /* sample's java_seq */
	uint64_t trace_seq[16];    /* the trace's seq, 0 if none */
	enum join_outcome outcome[16];
};

static void on_emit(void *ctx, const struct jbpf_sample *s, size_t size, const struct join_trace *t,
		    enum join_outcome outcome)
{
	struct emitted *e = ctx;

	assert_true(e->n < 16);
	assert_int_equal(size, sizeof(*s));
	e->seq[e->n] = s->java_seq;
	e->trace_seq[e->n] = t ? t->seq : 0;
	e->outcome[e->n] = outcome;
	e->n++;
}

static void add_sample(struct join *j, uint64_t seq, bool deferred, uint64_t now)
{
	struct jbpf_sample s = { .type = JBPF_RECORD_CPU_SAMPLE, .java_seq = seq,
				 .flags = deferred ? JBPF_SAMPLE_DEFERRED : 0 };

	join__add_sample(j, &s, sizeof(s), now);
}

static void add_trace(struct join *j, uint64_t seq, uint64_t now)
{
	struct jbpf_msg_trace t = { .seq = seq, .status = 1, .frame_count = 1 };
	struct jbpf_trace_frame f = { .method_id = seq * 10 };

	join__add_trace(j, &t, &f, now);
}

static void either_order_matches_exactly(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);
	struct join_stats st;

	add_sample(j, 1, false, 0);
	add_trace(j, 2, 0); /* someone else's: must not join sample 1 */
	assert_int_equal(e.n, 0);
	add_trace(j, 1, 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.trace_seq[0], 1);
	assert_int_equal(e.outcome[0], JOIN_MATCHED);
	add_sample(j, 2, false, 0);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.seq[1], 2);
	assert_int_equal(e.trace_seq[1], 2);
	join__finish(j);
	assert_int_equal(e.n, 2);
	join__stats(j, &st);
	assert_int_equal(st.outcomes[JOIN_MATCHED], 2);
	assert_int_equal(st.traces_unmatched, 0);
	assert_int_equal(st.waiting, 0);
	join__free(j);
}

static void deferred_group_shares_one_trace(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);

	add_sample(j, 5, true, 0);
	add_sample(j, 5, true, 1 * MS);
	add_trace(j, 5, 2 * MS);
	assert_int_equal(e.n, 2);
	/* A sample of the group read from the ring after the trace came. */
	add_sample(j, 5, true, 3 * MS);
	assert_int_equal(e.n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(e.outcome[i], JOIN_MATCHED);
		assert_int_equal(e.trace_seq[i], 5);
	}
	join__finish(j);
	assert_int_equal(e.n, 3);
	join__free(j);
}

static void waits_end_with_their_reason(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);
	struct join_stats st;

	add_sample(j, 1, false, 0);
	add_sample(j, 2, true, 0);
	join__expire(j, 100 * MS);
	assert_int_equal(e.n, 0);
	/* Long enough for a signalled sample, not for one in a system call. */
	join__expire(j, 5000 * MS);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.seq[0], 1);
	assert_int_equal(e.outcome[0], JOIN_NO_TRACE);
	add_trace(j, 3, 5000 * MS); /* never claimed */
	join__finish(j);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.seq[1], 2);
	assert_int_equal(e.outcome[1], JOIN_IN_SYSCALL);
	join__stats(j, &st);
	assert_int_equal(st.traces_unmatched, 1);
	assert_int_equal(st.waiting, 0);
	join__free(j);
}

static void lost_signal_releases_its_group(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);

	add_sample(j, 9, true, 0);
	join__signal_lost(j, 9, 1 * MS);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.outcome[0], JOIN_SIGNAL_LOST);
	add_sample(j, 9, true, 2 * MS);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.outcome[1], JOIN_SIGNAL_LOST);
	assert_int_equal(e.trace_seq[1], 0);
	join__finish(j);
	join__free(j);
}

static void a_second_trace_for_one_number_is_ignored(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);
	struct join_stats st;

	add_trace(j, 4, 0);
	add_trace(j, 4, 0);
	add_sample(j, 4, false, 0);
	assert_int_equal(e.n, 1);
	join__finish(j);
	join__stats(j, &st);
	assert_int_equal(st.traces, 2);
	assert_int_equal(st.traces_unmatched, 1);
	join__free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(either_order_matches_exactly),
		cmocka_unit_test(deferred_group_shares_one_trace),
		cmocka_unit_test(waits_end_with_their_reason),
		cmocka_unit_test(lost_signal_releases_its_group),
		cmocka_unit_test(a_second_trace_for_one_number_is_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
