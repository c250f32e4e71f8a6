/*
 * sample_header: a record built in a scratch buffer that still holds the
 * previous record keeps nothing of it. The BPF programs start every CPU
 * sample and wait with sample_header__init (bpf/sample_header.h), compiled
 * here unchanged; the scratch buffer is played by memory filled with a
 * pattern.
 */
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/jbpfprof.h"
#include "bpf/sample_header.h"

#define STALE 0xa5
#define FRAMES 4

struct scratch {
	struct jbpf_sample sample;
	__u64 ips[FRAMES];
};

static void every_field_not_given_is_zero(void **state)
{
	struct scratch scratch;
	struct jbpf_sample expected;
	struct jbpf_sample *s = &scratch.sample;

	memset(&scratch, STALE, sizeof(scratch));
	sample_header__init(s, JBPF_RECORD_CPU_SAMPLE, 3, 123456789, 100, 101);

	assert_int_equal(s->type, JBPF_RECORD_CPU_SAMPLE);
	assert_int_equal(s->cpu, 3);
	assert_int_equal(s->time_ns, 123456789);
	assert_int_equal(s->tgid, 100);
	assert_int_equal(s->tid, 101);
	assert_int_equal(s->state, JBPF_STATE_RUNNING);
	assert_int_equal(s->java_seq, 0);
	assert_int_equal(s->signal_err, 0);
	assert_int_equal(s->flags, 0);
	assert_int_equal(s->wait_start_ns, 0);
	assert_int_equal(s->born_ns, 0);
	assert_int_equal(s->wait_id, 0);
	assert_int_equal(s->ustack_seq, 0);
	assert_int_equal(s->woken_ns, 0);
	/* Every byte, so that a field added later is covered too. */
	memset(&expected, 0, sizeof(expected));
	expected.type = JBPF_RECORD_CPU_SAMPLE;
	expected.cpu = 3;
	expected.time_ns = 123456789;
	expected.tgid = 100;
	expected.tid = 101;
	assert_memory_equal(s, &expected, sizeof(expected));
}

/* The frames after the header hold the stacks, read before or after the header is started. */
static void frames_after_the_header_are_left_alone(void **state)
{
	struct scratch scratch;
	unsigned char stale[sizeof(scratch.ips)];

	memset(&scratch, STALE, sizeof(scratch));
	memset(stale, STALE, sizeof(stale));
	sample_header__init(&scratch.sample, JBPF_RECORD_WAIT, 0, 1, 2, 3);
	assert_memory_equal(scratch.ips, stale, sizeof(stale));
	assert_int_equal(scratch.sample.type, JBPF_RECORD_WAIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_not_given_is_zero),
		cmocka_unit_test(frames_after_the_header_are_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
