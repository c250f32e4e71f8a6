/*
 * The aggregator on hand-made records: frame order (root first), kernel
 * suffixes, process and thread roots, the frames that stand for unreadable
 * stacks, and records that must be refused. User addresses are this test's
 * own functions in the real /proc/self; kernel addresses come from a
 * kallsyms fixture written in setup.
 */
#include <errno.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/jbpfprof.h"
#include "common/sampled_bytes.h"
#include "output/output.h"
#include "user/record/aggregator.h"
#include "user/session/pipeline.h"
#include "symbolizer_fixture.h"

struct fixture {
	char kallsyms[64];
	struct symbolizer *sym;
	struct profile *profile;
};

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

#define KSYM_ENTRY 0xffffffff81000100ull
#define KSYM_HANDLER 0xffffffff81000200ull

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct symbolizer_config config = { 0 };

	if (!f)
		return -1;
	fixture_temp_file(f->kallsyms, sizeof(f->kallsyms), "test-aggregator",
			  "ffffffff81000100 T entry_syscall\nffffffff81000200 T handle_read\n"
			  "ffffffff81000300 T end_marker\n");
	config.kallsyms_path = f->kallsyms;
	f->sym = symbolizer__new(&config);
	f->profile = profile__new(NULL);
	if (!f->sym || !f->profile)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->kallsyms);
	symbolizer__free(f->sym);
	profile__free(f->profile);
	free(f);
	return 0;
}

/* A sample of this process: kernel frames then user frames, innermost first. */
static size_t make_sample(void *buf, const uint64_t *kips, size_t kn, const uint64_t *uips, size_t un)
{
	struct jbpf_sample *s = buf;

	memset(s, 0, sizeof(*s));
	s->type = JBPF_RECORD_CPU_SAMPLE;
	s->tgid = (uint32_t)getpid();
	s->tid = (uint32_t)getpid();
	memcpy(s->comm, "worker-thread", 14);
	s->kstack_len = (uint16_t)kn;
	s->ustack_len = (uint16_t)un;
	if (kn)
		memcpy(s->ips, kips, kn * sizeof(uint64_t));
	if (un)
		memcpy(s->ips + kn, uips, un * sizeof(uint64_t));
	return sizeof(*s) + (kn + un) * sizeof(uint64_t);
}

/* The only stack in the profile, as "a;b;c". */
static void only_stack(const struct profile *p, char *out, size_t size)
{
	size_t depth, used = 0;
	uint64_t count;
	const uint32_t *frames;

	assert_int_equal(profile__stack_count(p), 1);
	frames = profile__stack(p, 0, &depth, &count);
	out[0] = '\0';
	for (size_t i = 0; i < depth; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ";" : "",
					 profile__frame_name(p, frames[i]));
}

/*
 * A well-formed record as the recording hands it on: through the
 * pipeline, which decodes it first and must not find it malformed.
 */
static void add(struct aggregator *agg, const void *data, size_t size)
{
	struct pipeline *p = pipeline__new(agg, NULL);
	struct pipeline_stats stats;

	assert_non_null(p);
	pipeline__record(p, data, size);
	pipeline__stats(p, &stats);
	pipeline__free(p);
	assert_int_equal(stats.malformed, 0);
}

static void user_then_kernel_root_first(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t kips[] = { KSYM_HANDLER + 0x10, KSYM_ENTRY + 0x20 };
	/* Innermost: a pc inside inner_function; then a return address into outer_function. */
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function + 1, (uint64_t)(uintptr_t)outer_function + 4 };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)], stack[512];
	struct aggregator_stats stats;

	add(agg, buf, make_sample(buf, kips, 2, uips, 2));
	only_stack(f->profile, stack, sizeof(stack));
	assert_string_equal(stack, "outer_function;inner_function;entry_syscall_[k];handle_read_[k]");
	aggregator__stats(agg, &stats);
	assert_int_equal(stats.received, 1);
	assert_int_equal(stats.written, 1);
	assert_int_equal(stats.native_remembered, 0);
	/* Same record again: same stack, count 2, its native frames known by their addresses. */
	add(agg, buf, make_sample(buf, kips, 2, uips, 2));
	assert_int_equal(profile__stack_count(f->profile), 1);
	assert_int_equal(profile__total(f->profile), 2);
	aggregator__stats(agg, &stats);
	assert_int_equal(stats.native_remembered, 2);
	aggregator__free(agg);
}

static void kinds_of_frames(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t kips[] = { KSYM_HANDLER };
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)];
	const uint32_t *frames;
	size_t depth;
	uint64_t count;

	add(agg, buf, make_sample(buf, kips, 1, uips, 1));
	frames = profile__stack(f->profile, 0, &depth, &count);
	assert_int_equal(depth, 2);
	assert_int_equal(profile__frame_kind(f->profile, frames[0]), FRAME_KIND_NATIVE);
	assert_int_equal(profile__frame_kind(f->profile, frames[1]), FRAME_KIND_KERNEL);
	aggregator__free(agg);
}

/*
 * A Java frame's position is kept only when the configuration asks: else
 * a method's lines are one frame, and the profile no larger than without.
 */
static void positions_kept_only_when_asked(void **state)
{
	struct fixture *f = *state;
	const struct frame_position at10 = { 10, 1, "A.java" }, at11 = { 11, 5, "A.java" };

	for (int keep = 0; keep < 2; keep++) {
		struct aggregator_config config = { .positions = keep };
		struct profile *p = profile__new(NULL);
		struct aggregator *agg;
		int64_t a, b;

		assert_non_null(p);
		agg = aggregator__new(&config, f->sym, p);
		assert_non_null(agg);
		assert_int_equal(aggregator__keeps_positions(agg), keep);
		a = aggregator__intern_at(agg, "A.run", FRAME_KIND_JAVA, &at10);
		b = aggregator__intern_at(agg, "A.run", FRAME_KIND_JAVA, &at11);
		assert_true(a >= 0 && b >= 0);
		assert_int_equal(a == b, !keep);
		assert_int_equal(profile__has_positions(p), keep);
		assert_int_equal(profile__frame_count(p), keep ? 2 : 1);
		aggregator__free(agg);
		profile__free(p);
	}
}

static void process_and_thread_roots(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { .process_root = VIEW_ROOT_PROCESS, .thread_root = true };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)], stack[512], expected[512];
	const char *pname = symbolizer__process_name(f->sym, (uint32_t)getpid());

	assert_non_null(pname);
	snprintf(expected, sizeof(expected), "%s (pid %d);[worker-thread tid=%d];inner_function", pname,
		 (int)getpid(), (int)getpid());
	add(agg, buf, make_sample(buf, NULL, 0, uips, 1));
	only_stack(f->profile, stack, sizeof(stack));
	assert_string_equal(stack, expected);
	aggregator__free(agg);
}

/* A comm of exactly 16 bytes has no NUL: it must not run into the next field. */
static void full_length_comm(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { .thread_root = true };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)], stack[512], expected[64];
	size_t size = make_sample(buf, NULL, 0, NULL, 0);
	struct jbpf_sample *s = (struct jbpf_sample *)buf;

	memcpy(s->comm, "ABCDEFGHIJKLMNOP", JBPF_COMM_LEN);
	add(agg, buf, size);
	only_stack(f->profile, stack, sizeof(stack));
	snprintf(expected, sizeof(expected), "[ABCDEFGHIJKLMNOP tid=%d]", (int)getpid());
	assert_string_equal(stack, expected);
	aggregator__free(agg);
}

static void unreadable_stacks_become_reason_frames(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)], stack[512];
	uint64_t kips[] = { KSYM_HANDLER };
	size_t size = make_sample(buf, kips, 1, NULL, 0);
	struct aggregator_stats stats;

	((struct jbpf_sample *)buf)->ustack_err = -EFAULT;
	add(agg, buf, size);
	only_stack(f->profile, stack, sizeof(stack));
	assert_string_equal(stack, "[user stack unreadable];handle_read_[k]");
	aggregator__stats(agg, &stats);
	assert_int_equal(stats.no_user_stack, 1);
	assert_int_equal(stats.written, 1);
	aggregator__free(agg);
}

static void malformed_records_are_counted_not_used(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function, 1, 2 };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)];
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	struct aggregator_stats stats;
	struct pipeline_stats pstats;
	struct pipeline *p = pipeline__new(agg, NULL);
	size_t size = make_sample(buf, NULL, 0, uips, 3);

	assert_non_null(p);
	pipeline__record(p, buf, 2);                  /* shorter than a type */
	pipeline__record(p, buf, sizeof(*s) - 1);     /* shorter than a header */
	pipeline__record(p, buf, size - 1);           /* frames run past the end */
	s->ustack_len = JBPF_MAX_STACK_DEPTH + 1;     /* more frames than BPF can send */
	pipeline__record(p, buf, sizeof(buf));
	s->ustack_len = 3;
	s->type = 99;                                 /* unknown record type */
	pipeline__record(p, buf, size);
	pipeline__stats(p, &pstats);
	pipeline__free(p);
	aggregator__stats(agg, &stats);
	assert_int_equal(pstats.records, 5);
	assert_int_equal(pstats.malformed, 5);
	assert_int_equal(stats.received, 0);
	assert_int_equal(stats.written, 0);
	assert_int_equal(profile__stack_count(f->profile), 0);
	aggregator__free(agg);
}

/* An exec record makes the next sample read the process's maps again. */
static void exec_record_forgets_the_process(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)], stack[512];
	struct jbpf_exec exec = { .type = JBPF_RECORD_EXEC, .tgid = (uint32_t)getpid() };
	struct symbolizer_stats before, after;
	struct aggregator_stats stats;

	add(agg, buf, make_sample(buf, NULL, 0, uips, 1));
	symbolizer__stats(f->sym, &before);
	add(agg, &exec, sizeof(exec));
	add(agg, buf, make_sample(buf, NULL, 0, uips, 1));
	symbolizer__stats(f->sym, &after);
	/* Within a second of the first read, only a forgotten process is read again. */
	assert_int_equal(after.processes_loaded, before.processes_loaded + 1);
	only_stack(f->profile, stack, sizeof(stack));
	assert_string_equal(stack, "inner_function");
	aggregator__stats(agg, &stats);
	/* The address was looked up again, in the new program, not named as before. */
	assert_int_equal(stats.native_remembered, 0);
	assert_int_equal(after.lookups, before.lookups + 1);
	assert_int_equal(stats.execs, 1);
	assert_int_equal(stats.received, 2);
	assert_int_equal(stats.written, 2);
	aggregator__free(agg);
}

static void full_profile_is_counted(void **state)
{
	struct fixture *f = *state;
	struct profile_limits limits = { .max_frames = 1 };
	struct profile *small = profile__new(&limits);
	struct aggregator_config config = { 0 };
	struct aggregator *agg = aggregator__new(&config, f->sym, small);
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function, (uint64_t)(uintptr_t)outer_function + 4 };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)];
	struct aggregator_stats stats;

	add(agg, buf, make_sample(buf, NULL, 0, uips, 2));
	aggregator__stats(agg, &stats);
	assert_int_equal(stats.profile_full, 1);
	assert_int_equal(stats.written, 0);
	assert_int_equal(profile__stack_count(small), 0);
	aggregator__free(agg);
	profile__free(small);
}

/*
 * A recording of several events: each stack begins with its event's
 * frame; a native allocation weighs its bytes and calls, a CPU sample one,
 * in a wall-clock profile too (its time weighs time, an allocation bytes),
 * and each is counted under what it counts.
 */
static void event_frames_keep_events_apart(void **state)
{
	struct fixture *f = *state;
	struct aggregator_config config = {
		.time_weights = true,
		.sample_weight_ns = 10000000,
		.state_mask = 1u << JBPF_STATE_RUNNING,
		.alloc_interval = 4096,
		.event_frames = { [AGGREGATOR_TIME] = "wall", [AGGREGATOR_NATIVE] = "nativemem" },
	};
	struct aggregator *agg = aggregator__new(&config, f->sym, f->profile);
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function, (uint64_t)(uintptr_t)outer_function + 4 };
	char buf[sizeof(struct jbpf_sample) + 16 * sizeof(uint64_t)];
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	struct aggregator_stats stats;
	size_t size, depth;
	uint64_t count, wall_us = 0, native_bytes = 0, native_calls = 0;

	assert_non_null(agg);
	size = make_sample(buf, NULL, 0, uips, 2);
	s->state = JBPF_STATE_RUNNING;
	add(agg, buf, size);
	size = make_sample(buf, NULL, 0, uips, 2);
	s->type = JBPF_RECORD_NATIVE_ALLOC;
	/* Half the interval: sampled with probability about 1 - e^-1/2, it stands for 4096 / 0.39 bytes. */
	s->alloc_bytes = 2048;
	s->state = JBPF_STATE_SLEEPING; /* not a state kept: allocations are not filtered by state */
	add(agg, buf, size);
	aggregator__stats(agg, &stats);
	assert_int_equal(stats.written_by[AGGREGATOR_TIME], 1);
	assert_int_equal(stats.written_by[AGGREGATOR_NATIVE], 1);
	assert_int_equal(stats.received_by[AGGREGATOR_NATIVE], 1);
	assert_int_equal(profile__stack_count(f->profile), 2);
	for (size_t i = 0; i < 2; i++) {
		const uint32_t *frames = profile__stack(f->profile, i, &depth, &count);
		const char *event = profile__frame_name(f->profile, frames[0]);

		assert_int_equal(profile__frame_kind(f->profile, frames[0]), FRAME_KIND_EVENT);
		assert_string_equal(profile__frame_name(f->profile, frames[1]), "outer_function");
		if (!strcmp(event, "wall")) {
			assert_int_equal(profile__frame_kind(f->profile, frames[depth - 1]), FRAME_KIND_STATE);
			wall_us = count;
		} else {
			assert_string_equal(event, "nativemem");
			assert_string_equal(profile__frame_name(f->profile, frames[depth - 1]), "inner_function");
			native_bytes = count;
			native_calls = profile__stack_objects(f->profile, i);
		}
	}
	assert_int_equal(wall_us, 10000);
	assert_int_equal(native_bytes, sampled_bytes__of(2048, 4096));
	assert_int_equal(native_calls, sampled_bytes__objects(native_bytes, 2048));
	assert_true(native_bytes > 4096);
	aggregator__free(agg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(user_then_kernel_root_first, setup, teardown),
		cmocka_unit_test_setup_teardown(kinds_of_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(positions_kept_only_when_asked, setup, teardown),
		cmocka_unit_test_setup_teardown(process_and_thread_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(full_length_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_stacks_become_reason_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_records_are_counted_not_used, setup, teardown),
		cmocka_unit_test_setup_teardown(exec_record_forgets_the_process, setup, teardown),
		cmocka_unit_test_setup_teardown(full_profile_is_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(event_frames_keep_events_apart, setup, teardown),
	};

	return cmocka_run_group_tests_name("aggregator", tests, NULL, NULL);
}
