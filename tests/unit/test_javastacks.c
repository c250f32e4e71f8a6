/*
 * javastacks: the stacks an agent sends at the end of a wall-clock
 * recording are filed by host tid, through the JVM's threads as a (fake)
 * /proc tree shows them: a JVM in a container names its threads by other
 * numbers. A stack with no frames is kept; unknown tids and stacks past
 * the bounds are dropped and counted, and a stack once returned stays
 * valid.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "symbolizer_fixture.h"
#include "user/java/javastacks.h"

/* <tree>/<tgid>/task/<tid>/status with this NSpid line ("" for none). */
static void fake_task(const char *tree, uint32_t tgid, uint32_t tid, const char *nspid_line)
{
	char path[PATH_MAX], text[256];

	snprintf(path, sizeof(path), "%s/%u/task/%u", tree, tgid, tid);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/%u/task/%u/status", tree, tgid, tid);
	snprintf(text, sizeof(text), "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%u\n%sPPid:\t1\n", tgid,
		 nspid_line);
	fixture_write_str(path, text);
}

static int add(struct javastacks *s, uint32_t tid, uint32_t frame_count, uint64_t first_method)
{
	static struct jbpf_trace_frame frames[JBPF_STREAM_MAX_FRAMES];
	struct jbpf_msg_thread_stack m = { .tid = tid, .jvmti_state = 0x191, .frame_count = frame_count };

	for (uint32_t i = 0; i < frame_count; i++)
		frames[i] = (struct jbpf_trace_frame){ .method_id = first_method + i, .bci = (int32_t)i };
	return javastacks__add(s, &m, frames, 1000);
}

static void container_tids_map_to_host_tids(void **state)
{
	char tree[PATH_MAX];
	struct javastacks *s = javastacks__new();
	struct javastacks_stats st;
	const struct join_trace *t;

	assert_non_null(s);
	fixture_tmpdir(tree, sizeof(tree));
	/* Host tids 5000.. are 1.. in the JVM's namespace, one level down. */
	fake_task(tree, 5000, 5000, "NSpid:\t5000\t1\n");
	fake_task(tree, 5000, 5001, "NSpid:\t5001\t7\n");
	fake_task(tree, 5000, 5002, "NSpid:\t5002 \t 8\n");
	fake_task(tree, 5000, 5003, "NSpid:\t5003\tbad\n");
	assert_int_equal(javastacks__read_tids(s, tree, 5000), 0);

	assert_int_equal(add(s, 7, 3, 100), 0);
	assert_int_equal(add(s, 8, 0, 0), 0);
	t = javastacks__get(s, 5001);
	assert_non_null(t);
	assert_int_equal(t->tid, 7); /* the JVM's, as in a TRACE */
	assert_int_equal(t->status, 3);
	assert_int_equal(t->frame_count, 3);
	assert_int_equal(t->flags, 0);
	assert_int_equal(t->frames[0].method_id, 100);
	assert_int_equal(t->frames[2].method_id, 102);
	assert_int_equal(t->frames[2].bci, 2);
	assert_int_equal(t->time_ns, 1000);
	/* No Java frames: kept, status 0. */
	t = javastacks__get(s, 5002);
	assert_non_null(t);
	assert_int_equal(t->status, 0);
	assert_int_equal(t->frame_count, 0);
	/* Looked up by the JVM's number, or one no thread has: nothing. */
	assert_null(javastacks__get(s, 7));
	assert_null(javastacks__get(s, 5000));
	assert_null(javastacks__get(s, 0));
	/* 5003's line is malformed and 9 is nobody's: dropped, counted. */
	assert_int_equal(add(s, 9, 1, 1), -ENOENT);
	assert_int_equal(add(s, 5003, 1, 1), -ENOENT);
	javastacks__stats(s, &st);
	assert_int_equal(st.stored, 2);
	assert_int_equal(st.unmapped, 2);
	assert_int_equal(st.dropped, 0);
	javastacks__free(s);
	fixture_rmtree(tree);
}

static void same_namespace_and_old_kernels_map_to_themselves(void **state)
{
	char tree[PATH_MAX];
	struct javastacks *s = javastacks__new();

	assert_non_null(s);
	fixture_tmpdir(tree, sizeof(tree));
	fake_task(tree, 300, 300, "NSpid:\t300\n");
	fake_task(tree, 300, 301, ""); /* before Linux 4.1: no NSpid at all */
	assert_int_equal(javastacks__read_tids(s, tree, 300), 0);
	assert_int_equal(add(s, 300, 1, 1), 0);
	assert_int_equal(add(s, 301, 1, 2), 0);
	assert_non_null(javastacks__get(s, 300));
	assert_int_equal(javastacks__get(s, 301)->frames[0].method_id, 2);
	/* A process that is gone: an error, and an empty map. */
	assert_int_equal(javastacks__read_tids(s, tree, 999), -ENOENT);
	assert_int_equal(add(s, 300, 1, 1), -ENOENT);
	javastacks__free(s);
	fixture_rmtree(tree);
}

static void own_namespace_reads_no_proc_file(void **state)
{
	char tree[PATH_MAX];
	struct javastacks *s = javastacks__new();

	assert_non_null(s);
	fixture_tmpdir(tree, sizeof(tree));
	fake_task(tree, 400, 400, "NSpid:\t400\t1\n");
	assert_int_equal(javastacks__read_tids(s, tree, 400), 0);
	/* Same tids: the map read before is dropped, a tid files under itself. */
	javastacks__same_tids(s);
	assert_int_equal(add(s, 400, 1, 3), 0);
	assert_int_equal(add(s, 1, 1, 4), 0);
	assert_int_equal(javastacks__get(s, 400)->frames[0].method_id, 3);
	assert_int_equal(javastacks__get(s, 1)->frames[0].method_id, 4);
	assert_int_equal(add(s, 0, 1, 5), -ENOENT);
	/* A later read of /proc maps again. */
	assert_int_equal(javastacks__read_tids(s, tree, 400), 0);
	assert_int_equal(add(s, 401, 1, 6), -ENOENT);
	assert_int_equal(add(s, 1, 1, 7), 0);
	assert_int_equal(javastacks__get(s, 400)->frames[0].method_id, 7);
	javastacks__free(s);
	fixture_rmtree(tree);
}

static void later_stack_wins_and_earlier_stays_valid(void **state)
{
	char tree[PATH_MAX];
	struct javastacks *s = javastacks__new();
	const struct join_trace *first, *second;
	struct jbpf_msg_thread_stack cut = { .tid = 42, .frame_count = 1, .flags = JBPF_TRACE_TRUNCATED | 0x80 };
	struct jbpf_trace_frame frame = { .method_id = 9 };

	assert_non_null(s);
	fixture_tmpdir(tree, sizeof(tree));
	fake_task(tree, 42, 42, "NSpid:\t42\n");
	assert_int_equal(javastacks__read_tids(s, tree, 42), 0);
	assert_int_equal(add(s, 42, 2, 10), 0);
	first = javastacks__get(s, 42);
	assert_int_equal(javastacks__add(s, &cut, &frame, 2000), 0);
	second = javastacks__get(s, 42);
	assert_ptr_not_equal(first, second);
	assert_int_equal(second->frames[0].method_id, 9);
	/* Only the flag the stream defines is passed on. */
	assert_int_equal(second->flags, JBPF_TRACE_TRUNCATED);
	assert_int_equal(first->frames[1].method_id, 11);
	javastacks__free(s);
	fixture_rmtree(tree);
}

static void bytes_are_bounded(void **state)
{
	char tree[PATH_MAX];
	struct javastacks *s = javastacks__new();
	struct javastacks_stats st;
	const struct join_trace *kept;
	size_t full = sizeof(struct join_trace) + JBPF_STREAM_MAX_FRAMES * sizeof(struct jbpf_trace_frame);
	size_t fit = JAVASTACKS_MAX_BYTES / full;

	assert_non_null(s);
	fixture_tmpdir(tree, sizeof(tree));
	fake_task(tree, 77, 77, "NSpid:\t77\n");
	fake_task(tree, 77, 78, "NSpid:\t78\n");
	assert_int_equal(javastacks__read_tids(s, tree, 77), 0);
	for (size_t i = 0; i < fit; i++)
		assert_int_equal(add(s, 77, JBPF_STREAM_MAX_FRAMES, i), 0);
	kept = javastacks__get(s, 77);
	assert_int_equal(add(s, 77, JBPF_STREAM_MAX_FRAMES, 0), -ENOSPC);
	/* What is left still takes a small one. */
	assert_int_equal(add(s, 78, 1, 5), 0);
	assert_ptr_equal(javastacks__get(s, 77), kept);
	javastacks__stats(s, &st);
	assert_int_equal(st.stored, fit + 1);
	assert_int_equal(st.dropped, 1);
	assert_true(st.bytes <= JAVASTACKS_MAX_BYTES);
	javastacks__free(s);
	fixture_rmtree(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(container_tids_map_to_host_tids),
		cmocka_unit_test(same_namespace_and_old_kernels_map_to_themselves),
		cmocka_unit_test(own_namespace_reads_no_proc_file),
		cmocka_unit_test(later_stack_wins_and_earlier_stays_valid),
		cmocka_unit_test(bytes_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
