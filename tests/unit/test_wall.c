/*
 * Unit tests for user/wall.c on hand-made scheduler records, with no
 * sampler: wall__stop then wall__end(wall, NULL) skips the BPF map, and the test calls
 * wall__end_thread itself for what the map's iterator would have given. Records go on
 * to a real aggregator (time weights, every state kept, thread roots), so
 * the test reads its answers back from the profile, in microseconds.
 *
 * Every expected count is computed here from the records' own times. The
 * window is [START, END), one second; thread ids are ones no process uses,
 * in this process so that user
 * addresses name this test's functions. Kernel addresses come from a
 * kallsyms fixture written in setup.
 */
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
#include "wall_harness.h"

/* ---- waits that wait for a piece ---- */

static void user_stack_completes_the_waits_of_its_call(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER + 0x10 }, entry[] = { KSYM_ENTRY + 0x10 };
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function + 1, (uint64_t)(uintptr_t)outer_function + 4 };
	uint64_t w1_start = START + 100 * MS, w1_end = START + 130 * MS + 250;
	uint64_t w2_start = START + 140 * MS, w2_end = START + 145 * MS + 700;
	record_buf buf;
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	struct wall_stats stats;
	size_t size;

	/* Two waits of one system call: both wait for the call's user stack. */
	size = make_wait(buf, TID_A, JBPF_STATE_SLEEPING, w1_start, w1_end, 0, handler, 1, NULL, 0);
	s->ustack_seq = 5;
	feed(wall, buf, size);
	size = make_wait(buf, TID_A, JBPF_STATE_SLEEPING, w2_start, w2_end, 0, entry, 1, NULL, 0);
	s->ustack_seq = 5;
	feed(wall, buf, size);
	assert_int_equal(f->forwarded, 0);
	assert_int_equal(profile__stack_count(f->profile), 0);

	/* Another call's user stack completes neither. */
	feed(wall, buf, make_user_stack(buf, TID_A, 6, uips, 2, 0));
	assert_int_equal(f->forwarded, 0);

	feed(wall, buf, make_user_stack(buf, TID_A, 5, uips, 2, 0));
	assert_int_equal(f->forwarded, 2);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];outer_function;inner_function;handle_read_[k];[sleeping]"),
			 us(w1_end - w1_start));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];outer_function;inner_function;entry_syscall_[k];[sleeping]"),
			 us(w2_end - w2_start));

	/* The same user stack again finds nothing left waiting. */
	feed(wall, buf, make_user_stack(buf, TID_A, 5, uips, 2, 0));
	assert_int_equal(f->forwarded, 2);
	wall__stats(wall, &stats);
	assert_int_equal(stats.waits, 2);
	assert_int_equal(stats.no_user_stack, 0);
	assert_int_equal(decode_failures, 0);
}

static void unreadable_user_stack_is_named(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER };
	uint64_t start = START + 10 * MS, end = START + 20 * MS;
	record_buf buf;
	size_t size = make_wait(buf, TID_A, JBPF_STATE_SLEEPING, start, end, 0, handler, 1, NULL, 0);

	((struct jbpf_sample *)buf)->ustack_seq = 7;
	feed(wall, buf, size);
	feed(wall, buf, make_user_stack(buf, TID_A, 7, NULL, 0, -EFAULT));
	assert_int_equal(f->forwarded, 1);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];[user stack unreadable];handle_read_[k];[sleeping]"),
			 us(end - start));
}

static void open_wait_counts_when_it_ends(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t sched[] = { KSYM_SCHEDULE + 8 };
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function + 1, (uint64_t)(uintptr_t)outer_function + 4 };
	uint64_t r_start = START + 200 * MS, r_end = r_start + 12345678;
	uint64_t b_start = START + 300 * MS, b_end = b_start + 40 * MS + 499;
	record_buf buf;
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	struct wall_stats stats;
	size_t size;

	/* Open waits carry both stacks (taken at switch-out) and end later. */
	size = make_wait(buf, TID_A, JBPF_STATE_RUNNABLE, r_start, r_start, JBPF_WAIT_OPEN, sched, 1, uips, 2);
	s->wait_id = 77;
	feed(wall, buf, size);
	size = make_wait(buf, TID_B, JBPF_STATE_BLOCKED, b_start, b_start, JBPF_WAIT_OPEN, sched, 1, NULL, 0);
	s->wait_id = 78;
	feed(wall, buf, size);
	assert_int_equal(f->forwarded, 0);

	send_wait_end(wall, TID_A, 99, r_end); /* no such wait: nothing */
	assert_int_equal(f->forwarded, 0);
	send_wait_end(wall, TID_B, 78, b_end);
	assert_int_equal(f->forwarded, 1);
	send_wait_end(wall, TID_A, 77, r_end);
	assert_int_equal(f->forwarded, 2);

	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];outer_function;inner_function;schedule_[k];[runnable]"),
			 us(r_end - r_start));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999902];schedule_[k];[blocked]"), us(b_end - b_start));
	/* An end record that came twice ends nothing the second time. */
	send_wait_end(wall, TID_A, 77, r_end + MS);
	assert_int_equal(f->forwarded, 2);
	wall__stats(wall, &stats);
	assert_int_equal(stats.waits, 2);
	assert_int_equal(stats.ends_lost, 0);
}

static void wait_of_unknown_start_counts_from_window_or_birth(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t sched[] = { KSYM_SCHEDULE };
	uint64_t a_end = START + 30 * MS, b_born = START + 10 * MS, b_end = START + 50 * MS;
	uint64_t c_end = START + 20 * MS + 600;
	record_buf buf;
	size_t size;

	/* A: off CPU since before the window (born long before). */
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, 0, a_end, JBPF_WAIT_UNKNOWN_START, sched, 1,
					  NULL, 0));
	/* B: born inside the window, start not known. */
	size = make_wait(buf, TID_B, JBPF_STATE_SLEEPING, 0, b_end, JBPF_WAIT_UNKNOWN_START, sched, 1, NULL, 0);
	((struct jbpf_sample *)buf)->born_ns = b_born;
	feed(wall, buf, size);
	/* C: a known start, but before the window opened: clipped to it. */
	feed(wall, buf, make_wait(buf, TID_C, JBPF_STATE_SLEEPING, START - 500 * MS, c_end, 0, sched, 1, NULL, 0));
	assert_int_equal(f->forwarded, 3);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];schedule_[k];[sleeping]"), us(a_end - START));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999902];schedule_[k];[sleeping]"), us(b_end - b_born));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999903];schedule_[k];[sleeping]"), us(c_end - START));

	/* B's life starts at its birth: its total is the rest of the window. */
	close_and_settle(f);
	assert_total_near(f->profile, TID_A, WINDOW);
	assert_total_near(f->profile, TID_B, END - b_born);
	assert_total_near(f->profile, TID_C, WINDOW);
}

/* ---- settling ---- */

static void running_time_is_split_by_cpu_samples(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER + 4 }, sched[] = { KSYM_SCHEDULE };
	uint64_t uips[] = { (uint64_t)(uintptr_t)inner_function + 1, (uint64_t)(uintptr_t)outer_function + 4 };
	uint64_t s_start = START + 100 * MS, s_end = s_start + 100 * MS + 400;
	uint64_t b_start = START + 600 * MS, b_end = b_start + 50 * MS + 123;
	uint64_t off = (s_end - s_start) + (b_end - b_start), running = us(WINDOW - off), one, three;
	record_buf buf;
	size_t size;
	struct wall_stats stats;

	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, s_start, s_end, 0, sched, 1, NULL, 0));
	size = make_wait(buf, TID_A, JBPF_STATE_BLOCKED, b_start, b_start, JBPF_WAIT_OPEN, sched, 1, NULL, 0);
	((struct jbpf_sample *)buf)->wait_id = 1;
	feed(wall, buf, size);
	send_wait_end(wall, TID_A, 1, b_end);
	/* CPU samples 1 : 3 on two stacks. */
	send_cpu(wall, TID_A, START + 10 * MS, handler, 1, NULL, 0);
	for (int i = 0; i < 3; i++)
		send_cpu(wall, TID_A, START + (300 + i) * MS, NULL, 0, uips, 2);
	assert_int_equal(f->forwarded, 2 + 4);
	/* Before settling the samples hold nothing. */
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[running]"), 0);

	close_and_settle(f);
	assert_int_equal(wall__window_ns(wall), WINDOW);
	one = count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[running]");
	three = count_of(f->profile, "[waiter tid=3999901];outer_function;inner_function;[running]");
	assert_int_equal(one + three, running);
	/* one is within 1 of running / 4. */
	assert_true(one * 4 + 4 > running && one * 4 < running + 4);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];schedule_[k];[sleeping]"), us(s_end - s_start));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];schedule_[k];[blocked]"), us(b_end - b_start));
	assert_total_near(f->profile, TID_A, WINDOW);
	wall__stats(wall, &stats);
	assert_int_equal(stats.threads, 1);
	assert_int_equal(stats.waits, 2);
}

/* The same with several threads: each one's total is the window, none borrows another's. */
static void each_thread_is_settled_on_its_own(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER + 4 }, sched[] = { KSYM_SCHEDULE };
	uint64_t a_off = 700 * MS + 3, b_off = 20 * MS;
	record_buf buf;

	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + MS, START + MS + a_off, 0, sched, 1,
					  NULL, 0));
	feed(wall, buf, make_wait(buf, TID_B, JBPF_STATE_SLEEPING, START + MS, START + MS + b_off, 0, sched, 1,
					  NULL, 0));
	/* The same CPU stack for both: the threads' roots keep their shares apart. */
	send_cpu(wall, TID_A, START + 900 * MS, handler, 1, NULL, 0);
	send_cpu(wall, TID_B, START + 900 * MS, handler, 1, NULL, 0);
	send_cpu(wall, TID_B, START + 901 * MS, handler, 1, NULL, 0);
	close_and_settle(f);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[running]"), us(WINDOW - a_off));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999902];handle_read_[k];[running]"), us(WINDOW - b_off));
	assert_total_near(f->profile, TID_A, WINDOW);
	assert_total_near(f->profile, TID_B, WINDOW);
}

static void sampled_waits_share_the_short_wait_total(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER }, entry[] = { KSYM_ENTRY };
	uint64_t l1 = 3 * MS, l2 = 1 * MS, sampled_out = 6 * MS + 1234, shorts, first;
	struct jbpf_thread_waits waits = { .tgid = (uint32_t)getpid() };
	struct jbpf_thread_end end;
	record_buf buf;

	waits.sampled_out_ns[JBPF_STATE_SLEEPING] = sampled_out;

	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + 100 * MS, START + 100 * MS + l1,
					  JBPF_WAIT_SAMPLED, handler, 1, NULL, 0));
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + 300 * MS, START + 300 * MS + l2,
					  JBPF_WAIT_SAMPLED, entry, 1, NULL, 0));
	send_cpu(wall, TID_A, START + 500 * MS, NULL, 0, NULL, 0);
	assert_int_equal(f->forwarded, 3);
	/* Sampled waits are shares: nothing counted before the settle. */
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[sleeping]"), 0);

	wall__stop(wall, END);
	wall__end(wall, NULL);
	/* What the scheduler program held for the thread, running at the end. */
	wall__end_thread(wall, thread_end(&end, TID_A, waits, NULL, NULL, 0));
	wall__settle(wall);

	/* One wait each: the short-wait total splits 1 : 1, whatever their own lengths. */
	shorts = us(l1 + l2 + sampled_out);
	first = count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[sleeping]");
	assert_int_equal(first + count_of(f->profile, "[waiter tid=3999901];entry_syscall_[k];[sleeping]"), shorts);
	assert_true(first == shorts / 2 || first == (shorts + 1) / 2);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];[running]"), us(WINDOW - (l1 + l2 + sampled_out)));
	assert_total_near(f->profile, TID_A, WINDOW);
}

static void thread_exit_ends_its_life(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER }, sched[] = { KSYM_SCHEDULE };
	uint64_t w_start = START + 100 * MS, w_end = START + 200 * MS + 77;
	uint64_t sampled_len = 2 * MS, sampled_out = 8 * MS, exit_ns = START + 400 * MS + 999;
	struct jbpf_thread_exit e = { .type = JBPF_RECORD_THREAD_EXIT, .tid = TID_A, .tgid = (uint32_t)getpid(),
				      .time_ns = exit_ns };
	record_buf buf;

	e.waits.tgid = (uint32_t)getpid();
	e.waits.sampled_out_ns[JBPF_STATE_SLEEPING] = sampled_out;
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, w_start, w_end, 0, sched, 1, NULL, 0));
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + 250 * MS,
					  START + 250 * MS + sampled_len, JBPF_WAIT_SAMPLED, handler, 1, NULL, 0));
	send_cpu(wall, TID_A, START + 50 * MS, handler, 1, NULL, 0);
	send_cpu(wall, TID_A, START + 350 * MS, handler, 1, NULL, 0);
	feed(wall, &e, sizeof(e));
	assert_int_equal(f->forwarded, 4); /* the exit record is not handed on */
	close_and_settle(f);

	assert_total_near(f->profile, TID_A, exit_ns - START);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[sleeping]"), us(sampled_len + sampled_out));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[running]"),
			 us(exit_ns - START - (w_end - w_start) - sampled_len - sampled_out));
}

/* A thread created in the window: its life is from creation to its exit, its first wait runnable. */
static void new_thread_lives_from_its_creation(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER };
	uint64_t created = START + 200 * MS + 11, first_run = START + 250 * MS + 3, exit_ns = START + 700 * MS;
	struct jbpf_thread_exit e = { .type = JBPF_RECORD_THREAD_EXIT, .tid = TID_C, .tgid = (uint32_t)getpid(),
				      .time_ns = exit_ns };
	struct wall_stats stats;
	record_buf buf;
	size_t size;

	size = make_wait(buf, TID_C, JBPF_STATE_RUNNABLE, created, first_run, JBPF_WAIT_NEW_THREAD, NULL, 0, NULL, 0);
	((struct jbpf_sample *)buf)->born_ns = created;
	feed(wall, buf, size);
	send_cpu(wall, TID_C, START + 300 * MS, handler, 1, NULL, 0);
	feed(wall, &e, sizeof(e));
	close_and_settle(f);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999903];[new thread, before its first run];[runnable]"),
			 us(first_run - created));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999903];handle_read_[k];[running]"),
			 us(exit_ns - first_run));
	assert_total_near(f->profile, TID_C, exit_ns - created);
	wall__stats(wall, &stats);
	assert_int_equal(stats.waits, 1);
}

/* A thread created in the window that never ran: its life is from creation to the end. */
static void new_thread_waiting_at_the_end(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t created = START + 600 * MS + 5;
	struct jbpf_thread_waits waits = { .tgid = (uint32_t)getpid(), .off_since = created,
					   .state = JBPF_STATE_RUNNABLE, .flags = JBPF_THREAD_NEW };
	struct jbpf_thread_end end;

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_B, waits, "newborn", NULL, 0));
	wall__settle(wall);
	/* Named as it was at the end. */
	assert_int_equal(count_of(f->profile, "[newborn tid=3999902];[new thread, before its first run];[runnable]"),
			 us(END - created));
	assert_total_near(f->profile, TID_B, END - created);
}

/* Seeded at the start, never switched: it slept throughout, or ran throughout. */
static void threads_unchanged_all_window(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	struct jbpf_thread_waits sleeper = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_SLEEPING,
					     .flags = JBPF_THREAD_SINCE_START };
	struct jbpf_thread_waits runner = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_RUNNABLE,
					    .flags = JBPF_THREAD_SINCE_START };
	struct jbpf_thread_end end;
	struct wall_stats stats;

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_A, sleeper, NULL, NULL, 0));
	wall__end_thread(wall, thread_end(&end, TID_B, runner, NULL, NULL, 0));
	wall__settle(wall);
	/* Gone by the end: no kernel stack, and no user stack at the end. */
	assert_int_equal(count_of(f->profile,
				  "[ tid=3999901];[user stack: still waiting at the end];[kernel stack failed];[sleeping]"),
			 us(WINDOW));
	assert_total_near(f->profile, TID_A, WINDOW);
	assert_int_equal(count_of(f->profile, "[ tid=3999902];[on CPU, no sample taken];[running]"), us(WINDOW));
	assert_total_near(f->profile, TID_B, WINDOW);
	wall__stats(wall, &stats);
	assert_int_equal(stats.waits_at_end, 1);
	assert_int_equal(f->forwarded, 1);
}

/* With an end_wait callback, waits still going on at the end go there, not to forward. */
static void waits_at_the_end_go_to_end_wait(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ .end_wait = end_wait });
	uint64_t since = START + 700 * MS;
	struct jbpf_thread_waits w = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_BLOCKED, .off_since = since };
	struct jbpf_thread_end end;

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_A, w, NULL, NULL, 0));
	assert_int_equal(f->end_waits, 1);
	assert_int_equal(f->forwarded, 0);
	wall__settle(wall);
	assert_int_equal(count_of(f->profile,
				  "[ tid=3999901];[user stack: still waiting at the end];[kernel stack failed];[blocked]"),
			 us(END - since));
	assert_total_near(f->profile, TID_A, WINDOW);
}

/*
 * A wait still going on at the end carries what the end read: the thread's
 * name then and its kernel stack (innermost first), the start of the wait
 * from the entry, and no user stack.
 */
static void wait_at_the_end_has_the_stack_read_at_the_end(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t since = START + 250 * MS, kips[] = { KSYM_SCHEDULE + 8, KSYM_HANDLER + 4, KSYM_ENTRY + 1 };
	struct jbpf_thread_waits sleeper = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_SLEEPING,
					     .off_since = since };
	struct jbpf_thread_waits seeded = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_BLOCKED,
					    .flags = JBPF_THREAD_SINCE_START };
	struct jbpf_thread_end end;

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_A, sleeper, "sleeper", kips, 3));
	wall__end_thread(wall, thread_end(&end, TID_B, seeded, "disk reader", kips + 1, 2));
	wall__settle(wall);
	assert_int_equal(count_of(f->profile, "[sleeper tid=3999901];[user stack: still waiting at the end];"
					      "entry_syscall_[k];handle_read_[k];schedule_[k];[sleeping]"),
			 us(END - since));
	assert_total_near(f->profile, TID_A, WINDOW);
	assert_int_equal(count_of(f->profile, "[disk reader tid=3999902];[user stack: still waiting at the end];"
					      "entry_syscall_[k];handle_read_[k];[blocked]"),
			 us(WINDOW));
	assert_total_near(f->profile, TID_B, WINDOW);
}

/*
 * The end's iterator tells a thread that left its CPU unseen from its CPU
 * time (bpf/offcpu.bpf.c left_unseen); one that left after the window's
 * end has its wait start past the end, and ran throughout: no wait, and
 * no [sleeping] frame of any length.
 */
static void wait_from_past_the_end_counts_nothing(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t kips[] = { KSYM_SCHEDULE + 8 };
	struct jbpf_thread_waits late = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_SLEEPING,
					  .off_since = END + 3 * MS, .on_since = START + 100 * MS };
	struct jbpf_thread_end end;

	send_cpu(wall, TID_A, START + 200 * MS, NULL, 0, NULL, 0);
	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_A, late, "late", kips, 1));
	wall__settle(wall);
	assert_false(has_stack(f->profile, "[late tid=3999901];[user stack: still waiting at the end];"
					   "schedule_[k];[sleeping]"));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];[running]"), us(WINDOW));
}

/*
 * A thread the end's iterator finds back on a CPU while the entry still
 * has it off (end_of_waits' came_back_unseen) waited until it came back,
 * at the latest moment its CPU time allows, without stacks; it ran from
 * there. One back only after the end waited to the end.
 */
static void wait_of_a_thread_back_unseen_ends_when_it_came_back(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t since = START + 400 * MS, back = START + 450 * MS;
	struct jbpf_thread_waits preempted = { .tgid = (uint32_t)getpid(), .state = JBPF_STATE_RUNNABLE,
					       .off_since = since };
	struct jbpf_thread_end end;

	send_cpu(wall, TID_A, START + 200 * MS, NULL, 0, NULL, 0);
	send_cpu(wall, TID_B, START + 200 * MS, NULL, 0, NULL, 0);
	wall__stop(wall, END);
	wall__end(wall, NULL);
	thread_end(&end, TID_A, preempted, "spin", NULL, 0);
	end.flags = JBPF_THREAD_END_CAME_BACK;
	end.back_ns = back;
	end.kstack_err = -ESTALE;
	wall__end_thread(wall, &end);
	thread_end(&end, TID_B, preempted, "late", NULL, 0);
	end.flags = JBPF_THREAD_END_CAME_BACK;
	end.back_ns = END + 5 * MS;
	end.kstack_err = -ESTALE;
	wall__end_thread(wall, &end);
	wall__settle(wall);
	assert_int_equal(count_of(f->profile, "[spin tid=3999901];[user stack: its context switch was not seen];"
					      "[kernel stack: its context switch was not seen];[runnable]"),
			 us(back - since));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];[running]"), us(WINDOW - (back - since)));
	assert_int_equal(count_of(f->profile, "[late tid=3999902];[user stack: its context switch was not seen];"
					      "[kernel stack: its context switch was not seen];[runnable]"),
			 us(END - since));
	assert_total_near(f->profile, TID_A, WINDOW);
	assert_total_near(f->profile, TID_B, WINDOW);
}

/* A thread the scheduler program never followed: its running time is samples times the period. */
static void unfollowed_thread_counts_samples_times_period(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER }, period = 10 * MS + 1;

	wall__set_sample_period(wall, period);
	for (int i = 0; i < 3; i++)
		send_cpu(wall, TID_C, START + (uint64_t)i * 100 * MS, handler, 1, NULL, 0);
	close_and_settle(f);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999903];handle_read_[k];[running]"), us(3 * period));
}

/* ---- filters and loose ends ---- */

static void min_block_drops_short_waits_from_running_too(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ .min_block_ns = MS });
	uint64_t sched[] = { KSYM_SCHEDULE }, handler[] = { KSYM_HANDLER };
	uint64_t short_open = 400 * 1000 + 17, short_sleep = 500 * 1000, kept = 2 * MS + 300, bpf_filtered = 3 * MS;
	uint64_t t = START + 100 * MS;
	struct jbpf_thread_waits waits = { .tgid = (uint32_t)getpid(), .filtered_ns = bpf_filtered };
	struct jbpf_thread_end end;
	struct wall_stats stats;
	record_buf buf;
	size_t size;

	size = make_wait(buf, TID_A, JBPF_STATE_BLOCKED, t, t, JBPF_WAIT_OPEN, sched, 1, NULL, 0);
	((struct jbpf_sample *)buf)->wait_id = 10;
	feed(wall, buf, size);
	send_wait_end(wall, TID_A, 10, t + short_open);
	assert_int_equal(f->forwarded, 0);
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + 200 * MS,
					  START + 200 * MS + short_sleep, 0, sched, 1, NULL, 0));
	assert_int_equal(f->forwarded, 0);
	size = make_wait(buf, TID_A, JBPF_STATE_RUNNABLE, START + 300 * MS, START + 300 * MS, JBPF_WAIT_OPEN, sched, 1,
			 NULL, 0);
	((struct jbpf_sample *)buf)->wait_id = 11;
	feed(wall, buf, size);
	send_wait_end(wall, TID_A, 11, START + 300 * MS + kept);
	assert_int_equal(f->forwarded, 1);
	send_cpu(wall, TID_A, START + 500 * MS, handler, 1, NULL, 0);

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_thread(wall, thread_end(&end, TID_A, waits, NULL, NULL, 0)); /* the BPF side filtered some too */
	wall__settle(wall);
	wall__stats(wall, &stats);
	assert_int_equal(stats.filtered, 2);
	assert_int_equal(stats.waits, 1);
	assert_false(has_stack(f->profile, "[waiter tid=3999901];schedule_[k];[blocked]"));
	assert_false(has_stack(f->profile, "[waiter tid=3999901];schedule_[k];[sleeping]"));
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];schedule_[k];[runnable]"), us(kept));
	/* Filtered time is nobody's: running is what is left of the window without it. */
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[running]"),
			 us(WINDOW - kept - short_open - short_sleep - bpf_filtered));
	assert_total_near(f->profile, TID_A, WINDOW - short_open - short_sleep - bpf_filtered);
}

static void max_block_drops_long_waits(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ .max_block_ns = 100 * MS });
	uint64_t sched[] = { KSYM_SCHEDULE };
	struct wall_stats stats;
	record_buf buf;

	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + MS, START + 101 * MS + 1, 0, sched, 1,
					  NULL, 0));
	feed(wall, buf, make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + 200 * MS, START + 300 * MS, 0, sched, 1,
					  NULL, 0));
	wall__stats(wall, &stats);
	assert_int_equal(stats.filtered, 1);
	assert_int_equal(f->forwarded, 1);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];schedule_[k];[sleeping]"), us(100 * MS));
}

static void loose_ends_at_the_end(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t handler[] = { KSYM_HANDLER }, sched[] = { KSYM_SCHEDULE };
	/* Its record came before the end, but it ended after the window closed. */
	uint64_t held_start = START + 900 * MS, held_end = END + 5 * MS;
	struct wall_stats stats;
	record_buf buf;
	size_t size;

	/* Its system call has not returned by the end: it goes on without the user stack. */
	size = make_wait(buf, TID_A, JBPF_STATE_SLEEPING, held_start, held_end, 0, handler, 1, NULL, 0);
	((struct jbpf_sample *)buf)->ustack_seq = 9;
	feed(wall, buf, size);
	/* Its end record was lost: dropped. */
	size = make_wait(buf, TID_B, JBPF_STATE_BLOCKED, START + 10 * MS, START + 10 * MS, JBPF_WAIT_OPEN, sched, 1,
			 NULL, 0);
	((struct jbpf_sample *)buf)->wait_id = 12;
	feed(wall, buf, size);
	assert_int_equal(f->forwarded, 0);

	wall__stop(wall, END);
	wall__end(wall, NULL);
	assert_int_equal(f->forwarded, 1);
	wall__stats(wall, &stats);
	assert_int_equal(stats.no_user_stack, 1);
	assert_int_equal(stats.ends_lost, 1);
	assert_int_equal(stats.waits, 1);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];[user stack: the system call had not returned];"
					      "handle_read_[k];[sleeping]"),
			 us(END - held_start));
	/* A user stack after the end finds nothing waiting. */
	feed(wall, buf, make_user_stack(buf, TID_A, 9, NULL, 0, 0));
	assert_int_equal(f->forwarded, 1);
}

static void other_records_go_on_untouched(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	struct jbpf_exec exec = { .type = JBPF_RECORD_EXEC, .tgid = (uint32_t)getpid() };
	struct aggregator_stats astats;

	feed(wall, &exec, sizeof(exec));
	assert_int_equal(f->forwarded, 1);
	aggregator__stats(f->agg, &astats);
	assert_int_equal(astats.execs, 1);
}

static void malformed_records_are_counted(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ 0 });
	uint64_t kips[] = { KSYM_HANDLER, KSYM_ENTRY, KSYM_SCHEDULE };
	struct jbpf_wait_end end = { .type = JBPF_RECORD_WAIT_END, .wait_id = 1 };
	struct jbpf_thread_exit exit_record = { .type = JBPF_RECORD_THREAD_EXIT, .tid = TID_A };
	struct wall_stats stats;
	record_buf buf;
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	struct jbpf_user_stack *u = (struct jbpf_user_stack *)buf;
	size_t size, expected = 0;

	/* An open wait for the malformed end below to miss. */
	size = make_wait(buf, TID_A, JBPF_STATE_BLOCKED, START + MS, START + MS, JBPF_WAIT_OPEN, kips, 1, NULL, 0);
	s->wait_id = 1;
	feed(wall, buf, size);

	feed(wall, buf, 2), expected++;                      /* shorter than a type */
	size = make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START, START + MS, 0, kips, 3, NULL, 0);
	feed(wall, buf, sizeof(*s) - 1), expected++;         /* shorter than a wait */
	feed(wall, buf, size - 1), expected++;               /* frames past the end */
	s->kstack_len = JBPF_MAX_STACK_DEPTH + 1;                    /* more frames than BPF sends */
	feed(wall, buf, sizeof(buf)), expected++;
	s->kstack_len = 3;
	s->ustack_len = 2;                                           /* user frames past the end */
	feed(wall, buf, size), expected++;
	s->ustack_len = 0;
	s->ustack_seq = 3;                                           /* a held wait, frames past the end */
	feed(wall, buf, size - 8), expected++;

	size = make_user_stack(buf, TID_A, 3, kips, 3, 0);
	feed(wall, buf, sizeof(*u) - 1), expected++;         /* shorter than a user stack */
	feed(wall, buf, size - 1), expected++;               /* frames past the end */
	u->len = JBPF_MAX_STACK_DEPTH + 1;
	feed(wall, buf, sizeof(buf)), expected++;

	feed(wall, &end, sizeof(end) - 1), expected++;
	feed(wall, &exit_record, sizeof(exit_record) - 1), expected++;

	wall__stats(wall, &stats);
	assert_int_equal(decode_failures, expected);
	assert_int_equal(f->forwarded, 0);
	assert_int_equal(stats.waits, 0);
	/* The open wait is still there for its real end. */
	send_wait_end(wall, TID_A, 1, START + 3 * MS);
	assert_int_equal(f->forwarded, 1);
	assert_int_equal(count_of(f->profile, "[waiter tid=3999901];handle_read_[k];[blocked]"), us(2 * MS));
}

/*
 * A wait record longer than its frames need (trailing bytes) passes
 * validation. Run in a child: a sanitizer report there is this test's
 * failure, not the end of the whole program.
 */
/* A virtual thread's time unmounted, as bpf/vthreads.bpf.c sends it: mounted again by carrier TID_A at end. */
static size_t make_vthread_wait(void *buf, enum jbpf_state state, uint64_t start, uint64_t end, uint32_t flags,
				const uint64_t *uips, size_t un)
{
	struct jbpf_sample *s = buf;
	size_t size = make_wait(buf, TID_A, state, start, end, flags, NULL, 0, uips, un);

	s->type = JBPF_RECORD_VTHREAD_WAIT;
	return size;
}

/*
 * A virtual thread's wait goes on as its own, under [unmounted], not as
 * its carrier's (whose accounting it leaves alone): clipped to the
 * window, from the window's start when it began before the probes, and
 * a short one picked by chance weighing the wait interval.
 */
static void virtual_thread_waits_are_their_own(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ .full_wait_ns = 50 * MS });
	uint64_t uips[2] = { (uint64_t)(uintptr_t)inner_function, (uint64_t)(uintptr_t)outer_function + 1 };
	struct wall_stats st;
	record_buf buf;

	feed(wall, buf, make_vthread_wait(buf, JBPF_STATE_SLEEPING, START + 100 * MS, START + 300 * MS, 0, uips, 2));
	feed(wall, buf, make_vthread_wait(buf, JBPF_STATE_RUNNABLE, START + 500 * MS, START + 502 * MS,
					  JBPF_WAIT_SAMPLED, uips, 2));
	feed(wall, buf, make_vthread_wait(buf, JBPF_STATE_SLEEPING, 0, START + 400 * MS, JBPF_WAIT_UNKNOWN_START,
					  uips, 1));
	wall__stop(wall, END);
	feed(wall, buf, make_vthread_wait(buf, JBPF_STATE_SLEEPING, END - 30 * MS, END + 70 * MS, 0, uips, 1));
	wall__end(wall, NULL);
	wall__settle(wall);
	assert_int_equal(decode_failures, 0);
	assert_int_equal(count_of(f->profile, "[unmounted];outer_function;inner_function;[sleeping]"), us(200 * MS));
	assert_int_equal(count_of(f->profile, "[unmounted];outer_function;inner_function;[runnable]"), us(50 * MS));
	assert_int_equal(count_of(f->profile, "[unmounted];inner_function;[sleeping]"), us(400 * MS) + us(30 * MS));
	assert_int_equal(thread_total(f->profile, TID_A, NULL), 0);
	wall__stats(wall, &st);
	assert_int_equal(st.vthread_waits, 4);
	assert_int_equal(st.vthread_ns, (200 + 50 + 400 + 30) * MS);
	assert_int_equal(st.waits, 0);
}

/*
 * One still unmounted at the end counts from its unmount to the end,
 * under its marker (its id), with why its frames are missing; one that
 * unmounted before the window from the window's start.
 */
static void virtual_thread_unmounted_at_the_end(void **state)
{
	struct fixture *f = *state;
	struct wall *wall = open_wall(f, (struct wall_config){ .full_wait_ns = 50 * MS });
	struct wall_stats st;

	wall__stop(wall, END);
	wall__end(wall, NULL);
	wall__end_unmounted(wall, (uint32_t)getpid(), 42, END - 100 * MS, JBPF_STATE_SLEEPING);
	wall__end_unmounted(wall, (uint32_t)getpid(), 43, START - 100 * MS, JBPF_STATE_RUNNABLE);
	wall__settle(wall);
	assert_int_equal(count_of(f->profile, "[unmounted];[user stack: still waiting at the end];[sleeping]"),
			 us(100 * MS));
	assert_int_equal(count_of(f->profile, "[unmounted];[user stack: still waiting at the end];[runnable]"),
			 us(WINDOW));
	wall__stats(wall, &st);
	assert_int_equal(st.vthread_waits, 2);
}

static void oversized_records(struct fixture *f, bool held)
{
	/* One frame's worth of bytes more than the largest record BPF sends. */
	uint64_t buf[MAX_WAIT_BYTES / sizeof(uint64_t) + 1] = { 0 };
	struct jbpf_sample *s = (struct jbpf_sample *)buf;
	uint64_t kips[] = { KSYM_HANDLER };
	struct wall_stats stats;
	int status;
	pid_t child;

	make_wait(buf, TID_A, JBPF_STATE_SLEEPING, START + MS, START + 2 * MS, 0, kips, 1, NULL, 0);
	if (held)
		s->ustack_seq = 4;
	fflush(NULL);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		feed(f->wall, buf, sizeof(buf));
		if (held)
			wall__stop(f->wall, END);
		wall__end(f->wall, NULL);
		wall__stats(f->wall, &stats);
		/* Either handed on or counted as damaged: never lost without a trace. */
		_exit(f->forwarded == 1 || decode_failures == 1 ? 0 : 3);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("a %zu-byte wait record%s: the child %s %d", sizeof(buf),
			 held ? " waiting for its user stack" : "", WIFEXITED(status) ? "exited with" : "died of signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void oversized_wait_is_not_lost(void **state)
{
	struct fixture *f = *state;

	open_wall(f, (struct wall_config){ 0 });
	oversized_records(f, false);
}

static void oversized_held_wait_does_not_overflow(void **state)
{
	struct fixture *f = *state;

	open_wall(f, (struct wall_config){ 0 });
	oversized_records(f, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(user_stack_completes_the_waits_of_its_call, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable_user_stack_is_named, setup, teardown),
		cmocka_unit_test_setup_teardown(open_wait_counts_when_it_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(wait_of_unknown_start_counts_from_window_or_birth, setup, teardown),
		cmocka_unit_test_setup_teardown(running_time_is_split_by_cpu_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(each_thread_is_settled_on_its_own, setup, teardown),
		cmocka_unit_test_setup_teardown(sampled_waits_share_the_short_wait_total, setup, teardown),
		cmocka_unit_test_setup_teardown(thread_exit_ends_its_life, setup, teardown),
		cmocka_unit_test_setup_teardown(new_thread_lives_from_its_creation, setup, teardown),
		cmocka_unit_test_setup_teardown(new_thread_waiting_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(threads_unchanged_all_window, setup, teardown),
		cmocka_unit_test_setup_teardown(waits_at_the_end_go_to_end_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(wait_from_past_the_end_counts_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(wait_of_a_thread_back_unseen_ends_when_it_came_back, setup, teardown),
		cmocka_unit_test_setup_teardown(wait_at_the_end_has_the_stack_read_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(unfollowed_thread_counts_samples_times_period, setup, teardown),
		cmocka_unit_test_setup_teardown(min_block_drops_short_waits_from_running_too, setup, teardown),
		cmocka_unit_test_setup_teardown(max_block_drops_long_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(virtual_thread_waits_are_their_own, setup, teardown),
		cmocka_unit_test_setup_teardown(virtual_thread_unmounted_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(loose_ends_at_the_end, setup, teardown),
		cmocka_unit_test_setup_teardown(other_records_go_on_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_records_are_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_wait_is_not_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_held_wait_does_not_overflow, setup, teardown),
	};

	return cmocka_run_group_tests_name("wall", tests, NULL, NULL);
}
