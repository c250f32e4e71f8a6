/*
 * record_java: the Java frames a sample carries (user/record/decode.c's
 * decode__sample_is_valid), as BPF's walk writes them after the stack's
 * ips: kinds and stop reasons in range, a stop only last, and at most one
 * carrier marker (where a virtual thread's frames meet its carrier's),
 * with a reason of its own.
 */
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/hotspot.h"
#include "bpf/jbpfprof.h"
#include "user/java/walked.h"
#include "user/record/decode.h"

#define USER_FRAMES 2

struct record_buf {
	struct jbpf_sample sample;
	__u64 ips[USER_FRAMES];
	struct jbpf_java_frame java[4];
};

/* A CPU sample of USER_FRAMES native frames and the n Java frames given, all innermost of native frame 1. */
static bool valid(const struct jbpf_java_frame *java, unsigned n)
{
	struct record_buf r;

	memset(&r, 0, sizeof(r));
	r.sample.type = JBPF_RECORD_CPU_SAMPLE;
	r.sample.ustack_len = USER_FRAMES;
	r.sample.java_len = n;
	memcpy(r.java, java, n * sizeof(*java));
	for (unsigned i = 0; i < n; i++)
		r.java[i].native_before = 1;
	return decode__sample_is_valid(&r, decode__sample_used_size(&r.sample));
}

#define FRAME(k, r) { .ptr = 0x1000, .pc = 0x2000, .kind = (k), .reason = (r) }

static void carrier_marker_between_frames(void **state)
{
	const struct jbpf_java_frame whole[] = { FRAME(JBPF_JAVA_COMPILED, 0),
						 FRAME(JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_WHOLE),
						 FRAME(JBPF_JAVA_INTERPRETED, 0) };
	const struct jbpf_java_frame frozen_then_stop[] = { FRAME(JBPF_JAVA_COMPILED, 0),
							    FRAME(JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_FROZEN),
							    FRAME(JBPF_JAVA_STOP, JBPF_JAVA_STOP_READ) };

	(void)state;
	assert_true(valid(whole, 3));
	assert_true(valid(frozen_then_stop, 3));
}

static void second_marker_or_unknown_reason_refused(void **state)
{
	const struct jbpf_java_frame two[] = { FRAME(JBPF_JAVA_CARRIER, 0), FRAME(JBPF_JAVA_COMPILED, 0),
					       FRAME(JBPF_JAVA_CARRIER, 0) };
	const struct jbpf_java_frame reason[] = { FRAME(JBPF_JAVA_COMPILED, 0),
						  FRAME(JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_NR) };
	const struct jbpf_java_frame kind[] = { FRAME(JBPF_JAVA_CARRIER + 1, 0) };

	(void)state;
	assert_false(valid(two, 3));
	assert_false(valid(reason, 2));
	assert_false(valid(kind, 1));
}

static void stop_only_last_with_a_reason(void **state)
{
	const struct jbpf_java_frame early[] = { FRAME(JBPF_JAVA_STOP, JBPF_JAVA_STOP_FRAME),
						 FRAME(JBPF_JAVA_COMPILED, 0) };
	const struct jbpf_java_frame no_reason[] = { FRAME(JBPF_JAVA_COMPILED, 0), FRAME(JBPF_JAVA_STOP, 0) };
	const struct jbpf_java_frame reason_on_frame[] = { FRAME(JBPF_JAVA_COMPILED, JBPF_JAVA_STOP_READ) };

	(void)state;
	assert_false(valid(early, 2));
	assert_false(valid(no_reason, 2));
	assert_false(valid(reason_on_frame, 1));
}

/* A marker's name, the target's bytes: cut at 16, at a NUL, and nothing that would split or close a frame. */
static void virtual_thread_name_is_tamed(void **state)
{
	struct jbpf_java_frame f = { .kind = JBPF_JAVA_CARRIER };
	char name[WALKED_VIRTUAL_NAME + 1];

	(void)state;
	assert_false(walked__virtual_name(&f, name));
	memcpy(&f.pc, "req-12", 6);
	assert_true(walked__virtual_name(&f, name));
	assert_string_equal(name, "req-12");
	memcpy(&f.pc, "a;b]c d,e\nf[g#h/i", 16);
	assert_true(walked__virtual_name(&f, name));
	assert_string_equal(name, "a?b?c?d?e?f?g#h/");
}

/*
 * A virtual thread's wait (bpf/vthreads.bpf.c): no ips, its frozen frames
 * down to its marker, all before the first native frame; checked as any
 * sample's, and a record type past the last known is refused.
 */
static void virtual_thread_wait_is_a_sample(void **state)
{
	struct {
		struct jbpf_sample sample;
		struct jbpf_java_frame java[2];
	} r = { .java = { FRAME(JBPF_JAVA_COMPILED, 0), FRAME(JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_WHOLE) } };
	struct record decoded;
	size_t size;

	(void)state;
	r.sample.type = JBPF_RECORD_VTHREAD_WAIT;
	r.sample.java_len = 2;
	size = decode__sample_used_size(&r.sample);
	assert_int_equal(size, sizeof(r));
	assert_true(decode__record(&r, size, &decoded));
	assert_int_equal(decoded.type, JBPF_RECORD_VTHREAD_WAIT);
	assert_false(decode__record(&r, size - 1, &decoded));
	r.sample.type = JBPF_RECORD_VTHREAD_WAIT + 1;
	assert_false(decode__record(&r, size, &decoded));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(carrier_marker_between_frames),
		cmocka_unit_test(second_marker_or_unknown_reason_refused),
		cmocka_unit_test(stop_only_last_with_a_reason),
		cmocka_unit_test(virtual_thread_name_is_tamed),
		cmocka_unit_test(virtual_thread_wait_is_a_sample),
	};

	return cmocka_run_group_tests_name("record_java", tests, NULL, NULL);
}
