/*
 * join: each sample leaves exactly once, with the trace that carries its
 * sequence number and no other, whichever arrives first; deferred groups
 * share one trace; what never gets a trace leaves with its reason. A trace
 * joins only samples of the JVM whose agent sent it: another JVM's agent,
 * which can guess the numbers, reaches none of them.
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
/* Two JVMs' tgids: most tests play JVM A alone. */
#define JVM_A 1000u
#define JVM_B 2000u

struct emitted {
	int n;
	uint64_t seq[16];          /* sample's java_seq */
	uint64_t trace_seq[16];    /* the trace's seq, 0 if none */
	int32_t trace_status[16];  /* the trace's status, 0 if none */
	uint32_t tgid[16];         /* sample's tgid */
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
	e->trace_status[e->n] = t ? t->status : 0;
	e->tgid[e->n] = s->tgid;
	e->outcome[e->n] = outcome;
	e->n++;
}

static void add_jvm_sample(struct join *j, uint32_t tgid, uint64_t seq, bool deferred, uint64_t now)
{
	struct jbpf_sample s = { .type = JBPF_RECORD_CPU_SAMPLE, .tgid = tgid, .tid = tgid + 1, .java_seq = seq,
				 .flags = deferred ? JBPF_SAMPLE_DEFERRED : 0 };

	join__add_sample(j, &s, sizeof(s), now);
}

static void add_sample(struct join *j, uint64_t seq, bool deferred, uint64_t now)
{
	add_jvm_sample(j, JVM_A, seq, deferred, now);
}

static void add_jvm_trace(struct join *j, uint32_t tgid, uint64_t seq, int32_t status, uint64_t now)
{
	struct jbpf_msg_trace t = { .seq = seq, .status = status, .frame_count = status > 0 ? 1 : 0,
				    .tid = tgid + 1 };
	struct jbpf_trace_frame f = { .method_id = seq * 10 };

	join__add_trace(j, tgid, &t, &f, now);
}

static void add_trace(struct join *j, uint64_t seq, uint64_t now)
{
	add_jvm_trace(j, JVM_A, seq, 1, now);
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

/* JVM A's agent sends a trace for a number BPF gave JVM B's sample: B's sample waits for B's own. */
static void a_trace_joins_only_its_own_jvm(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);
	struct join_stats st;

	add_jvm_sample(j, JVM_B, 7, false, 0);
	add_jvm_trace(j, JVM_A, 7, 1, 0);
	assert_int_equal(e.n, 0);
	add_jvm_trace(j, JVM_B, 7, 1, 1 * MS);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.tgid[0], JVM_B);
	assert_int_equal(e.outcome[0], JOIN_MATCHED);
	join__finish(j);
	assert_int_equal(e.n, 1);
	join__stats(j, &st);
	assert_int_equal(st.traces_unmatched, 1); /* A's */
	join__free(j);
}

/* Traces sent ahead for numbers still to come reach no other JVM's samples. */
static void traces_sent_ahead_by_another_jvm_are_not_joined(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);

	for (uint64_t seq = 20; seq < 25; seq++)
		add_jvm_trace(j, JVM_A, seq, 1, 0);
	add_jvm_sample(j, JVM_B, 21, false, 1 * MS);
	add_jvm_sample(j, JVM_B, 22, true, 1 * MS);
	assert_int_equal(e.n, 0);
	join__finish(j);
	assert_int_equal(e.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(e.tgid[i], JVM_B);
		assert_int_not_equal(e.outcome[i], JOIN_MATCHED);
		assert_int_equal(e.trace_seq[i], 0);
	}
	join__free(j);
}

/*
 * A "not a Java thread" status from JVM A's agent never lands on JVM B's
 * sample, so it cannot mark B's thread as one to stop signalling.
 */
static void a_status_from_one_jvm_does_not_reach_another(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);

	add_jvm_trace(j, JVM_A, 30, JBPF_TRACE_NOT_JAVA_THREAD, 0);
	add_jvm_sample(j, JVM_B, 30, false, 0);
	add_jvm_sample(j, JVM_A, 30, false, 0);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.tgid[0], JVM_A);
	assert_int_equal(e.trace_status[0], JBPF_TRACE_NOT_JAVA_THREAD);
	join__expire(j, 5000 * MS);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.tgid[1], JVM_B);
	assert_int_equal(e.outcome[1], JOIN_NO_TRACE);
	assert_int_equal(e.trace_status[1], 0);
	join__finish(j);
	join__free(j);
}

/* BPF names a lost signal by number: it ends that number's wait in whichever JVM, over any agent's trace. */
static void a_lost_signal_reaches_the_jvm_that_waits(void **state)
{
	struct emitted e = { 0 };
	struct join *j = join__new(on_emit, &e);

	add_jvm_sample(j, JVM_B, 40, true, 0);
	add_jvm_trace(j, JVM_A, 41, 1, 0);
	join__signal_lost(j, 40, 1 * MS);
	join__signal_lost(j, 41, 1 * MS);
	assert_int_equal(e.n, 1);
	assert_int_equal(e.tgid[0], JVM_B);
	assert_int_equal(e.outcome[0], JOIN_SIGNAL_LOST);
	add_jvm_sample(j, JVM_A, 41, false, 2 * MS);
	assert_int_equal(e.n, 2);
	assert_int_equal(e.outcome[1], JOIN_SIGNAL_LOST);
	join__finish(j);
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
		cmocka_unit_test(a_trace_joins_only_its_own_jvm),
		cmocka_unit_test(traces_sent_ahead_by_another_jvm_are_not_joined),
		cmocka_unit_test(a_status_from_one_jvm_does_not_reach_another),
		cmocka_unit_test(a_lost_signal_reaches_the_jvm_that_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
