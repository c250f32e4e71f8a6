// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Off-CPU time from the scheduler, for wall-clock and off-CPU profiles.
 *
 * On every context switch of a target thread the program notes when and
 * why the thread left the CPU (`waits`, by tid), and when it comes back it
 * knows the wait's exact length. A thread that sleeps ten seconds costs two
 * context switches, not a thousand samples.
 *
 * Stacks are the expensive part (a kernel stack costs microseconds here,
 * as much as a short context switch), so most are taken only once the
 * wait is over and its length is known:
 *
 *   - A sleeping or runnable wait at least full_wait_ns long is always
 *     recorded; a shorter one with probability length / full_wait_ns
 *     (JBPF_WAIT_SAMPLED). Waits not
 *     picked cost no stack and no record: their time is only added to the
 *     thread's sampled_out_ns, which userspace spreads over the ones that
 *     were, so the time per thread stays exact. full_wait_ns is the
 *     wait interval (--wait-interval, 50 ms unless given): one recorded
 *     wait per that much of a thread's waiting. Each recorded wait costs
 *     a kernel stack, task work and often a Java stack, so this, not the
 *     number of switches, sets the cost on a busy server.
 *     The kernel stack is read from the waking thread's saved state, and
 *     when the wait was in a system call the user stack is read when the
 *     thread leaves it (bpf/deferral.bpf.h), where it is still the same,
 *     together with the Java stack signal for a JVM thread: a signal never
 *     reaches a sleeping thread. A thread preempted in user code has no
 *     system call to return from: it is about to return to user mode, and
 *     a JVM thread is signalled now (the handler runs before its next
 *     instruction); a native one's user stack is not read, since only the
 *     thread itself could read it.
 *   - An uninterruptible (blocked) wait, typically disk I/O, is rarer and
 *     may happen outside any system call (a page fault), so its stacks are
 *     read at switch-out, from the thread itself (JBPF_WAIT_OPEN; its end
 *     follows in a jbpf_wait_end).
 *
 * A tracepoint program rather than a raw one: reading the stacks and task
 * storage of the threads switching needs trusted pointers to them
 * (switching_task_get), and the deferral's kfuncs are not available to
 * raw tracepoint programs.
 *
 * Missed switches. The kernel does not report every context switch: on
 * this project's test machine (a virtual machine, Linux 6.18) about 1% of
 * one CPU's switches fire no sched_switch tracepoint at all, mostly the
 * switch from the idle task or from the machine agent's threads; ftrace's
 * own sched_switch event has the same gaps, the programs' recursion_misses
 * stay 0, and a raw tracepoint program on the same event misses the same
 * switches. (bench/switch_gaps.sh counts them on any machine.) So every
 * switch-out owes the thread a check at its return to user mode
 * (bpf/deferral.bpf.h check_switched_in, or the system call exit program
 * without task work): a thread still off CPU in `waits` then came back
 * unseen, and its wait is sent from there, ending then, with its user
 * stack and Java signal but without its kernel stack. A thread found off
 * CPU when it switches out again (the check could not be owed) has its
 * wait sent without stacks; a wait whose end was missed is ended with time
 * 0 and dropped by userspace, and a wait whose start was missed is not
 * recorded. All are counted (JBPF_CNT_SWITCH_MISSED, and of those
 * JBPF_CNT_SWITCH_IN_LATE and JBPF_CNT_WAIT_NO_STACKS), and the time of
 * the dropped ones counts as running.
 *
 * Wakeups. A sleeping or blocked wait ends when the thread runs again, but
 * from its wakeup on it is runnable, waiting for a CPU, and the wait is
 * split there: asleep until woken, runnable after. The moment comes from
 * the scheduler's own run-queue accounting (woken_at_switch_in), read at the
 * switch-in: no program runs on sched_wakeup, which would cost every
 * wakeup of the host a run (bench/pingpong.sh: 5 points of a ping-pong's
 * round trips).
 *
 * Thread lifetimes: userspace seeds `waits` with the threads alive at the
 * start (JBPF_THREAD_SINCE_START, with the state /proc gave), a new thread
 * is added when created (sched_process_fork), its life ends when it exits
 * (sched_process_exit, a jbpf_thread_exit record), and its entry leaves at
 * its last switch-out.
 *
 * Switches and wakeups of other processes' threads are turned away by
 * bitmaps before any lookup (see the filters below). Per switch of target
 * threads, the common case costs two hash lookups
 * in `waits` (the thread leaving, by which it is known as a target's
 * without the targets lookup; the thread coming in), a per-CPU counter,
 * the leaving thread's task storage (for syscall_exit.bpf.c) and, when
 * the wait just ended is short, a random number. The JVM agent's own thread (JBPF_AGENT_THREAD_COMM) is
 * followed like any other, but none of its waits is recorded: they are
 * the profiler's ticks, not the application's time.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/*
 * A wait whose switch-in was not seen, ended at the thread's return to
 * user mode (bpf/deferral.bpf.h check_switched_in): a walked JVM's thread
 * sends it with the stacks walked at its switch-out (offcpu_walk.bpf.h).
 */
#define JBPF_DEFERRAL_WALKED_WAITS
static bool walked_wait_at_return(__u32 tgid, __u32 tid, __u64 since, __u64 now, __u64 woken, __u32 state);

#include "deferral.bpf.h"
#include "shared.bpf.h"
#include "unwind.bpf.h"

/* Set by userspace between open and load. */
/* Set by userspace before load: programs may call bpf_loop (Linux 5.17). */
const volatile bool have_bpf_loop = true;
const volatile bool filter_by_tgid = false;
const volatile __u64 full_wait_ns = 10000000;
/* A wait at least this long (full_wait_ns / 4: recorded at least one time in four) owes the next a check. */
const volatile __u64 check_in_min_ns = 2500000;
const volatile __u64 min_block_ns = 0;
const volatile __u64 max_block_ns = ~0ull;

/*
 * Filters in front of the hash lookups, for the switches and wakeups of
 * other processes' threads, most of a busy host's: a bit per target
 * process (by tgid, set by userspace before load: the targets are known
 * at the start) and a bit per thread given an entry in `waits` (by tid,
 * set before the entry is made, never cleared). Both are taken modulo
 * their size: a clear bit says "not followed" for one load from global
 * data, where a hash lookup that finds nothing costs a call, a hash and,
 * on a mostly idle host, cache misses; a set bit may be another's, and
 * the lookup decides as before. With -a every thread is followed and the
 * filters are not used.
 */
#define TGID_BIT_WORDS 512  /* 32768 bits */
#define TID_BIT_WORDS 1024  /* 65536 bits */
const volatile __u64 target_tgid_bits[TGID_BIT_WORDS];
__u64 followed_tid_bits[TID_BIT_WORDS];

/* Wait numbers; the top bit keeps them apart from the CPU sampler's. */
__u64 next_seq = 0;

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The kernel's task state report bits, as the sched_switch tracepoint gives them. */
#define REPORT_UNINTERRUPTIBLE 0x2
#define REPORT_EXIT_DEAD 0x10
#define REPORT_EXIT_ZOMBIE 0x20
#define REPORT_MAX 0x100 /* preempted, whatever the state */

/* Linux 6.2: where they are missing, switching_task_get does without and end_of_waits is not loaded. */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

#define WAIT_MAX_SIZE                                                                                      \
	(sizeof(struct jbpf_sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64) +                          \
	 JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))

#include "scratch.bpf.h"

/*
 * The header and ips of a record fit under 4096 bytes (a mask the verifier
 * follows), its Java frames after them.
 */
_Static_assert(WAIT_MAX_SIZE - JAVA_FRAMES_BYTES <= UNWIND_SCRATCH_IPS_BYTES, "the ips part of a wait fits the mask");
_Static_assert(__builtin_offsetof(struct jbpf_thread_end, ips) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64) <= UNWIND_SCRATCH_IPS_BYTES,
	       "the ips part of a jbpf_thread_end fits the mask");
/* end_of_waits builds its records there too. */
_Static_assert(sizeof(struct jbpf_thread_end) <= sizeof(struct scratch), "scratch too small for a jbpf_thread_end");


/*
 * The time of a context switch, in bpf_ktime_get_ns's clock (CLOCK_MONOTONIC),
 * read from the run queue's clock. The kernel reads the clock once per
 * switch (update_rq_clock in __schedule) and charges the thread leaving its
 * CPU time up to that instant; bpf_ktime_get_ns would read it again, and on
 * a virtual machine that costs about as much as the rest of the program
 * (bench/pingpong.sh: 25 of 100 ns a switch). The two clocks tick alike
 * (both from the TSC on x86) but from different origins, so each CPU keeps
 * the pair (run-queue clock, bpf_ktime_get_ns) read at one switch and
 * refreshes it once the run-queue clock is a millisecond past it: in
 * between, times are the pair's ktime plus the run-queue clock's progress.
 * A refresh's ktime is read a little after its switch (the kernel picks
 * the next thread in between), so times can be that much ahead of
 * bpf_ktime_get_ns, and those of two CPUs that much apart; the clocks'
 * drift over a millisecond is far smaller. Every length taken between two
 * times is guarded against an end before its start (at_or_after, in
 * shared.bpf.h).
 */
#define SWITCH_CLOCK_REFRESH_NS 1000000

struct switch_clock {
	__u64 rq_clock;
	__u64 ktime;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct switch_clock);
} switch_clocks SEC(".maps");

/*
 * The run queue of this CPU's sched_switch, reached from the thread
 * leaving: it is attached to its CPU's root fair queue, even the idle task
 * (the per-CPU `runqueues` has no address a program can be given where
 * kallsyms lists no variables). NULL without group scheduling, which
 * distributions build in.
 */
static __always_inline struct rq *switch_rq(void)
{
	if (!bpf_core_field_exists(struct cfs_rq, rq))
		return NULL;
	return bpf_get_current_task_btf()->se.cfs_rq->rq;
}

/* Thread tid if it is the one coming in at this sched_switch: rq's curr names it already. */
static __always_inline struct task_struct *incoming_task(struct rq *rq, __u32 tid)
{
	struct task_struct *next = rq ? rq->curr : NULL;

	return next && next->pid == tid ? next : NULL;
}

/* Without the run queue (switch_rq), bpf_ktime_get_ns. */
static __always_inline __u64 switch_time_ns(void)
{
	struct switch_clock *c;
	__u32 zero = 0;
	struct rq *rq;
	__u64 rq_clock;

	c = bpf_map_lookup_elem(&switch_clocks, &zero);
	rq = c ? switch_rq() : NULL;
	if (!rq)
		return bpf_ktime_get_ns();
	rq_clock = rq->clock;
	/* Unsigned: a run-queue clock behind the pair's (never expected) refreshes too. */
	if (rq_clock - c->rq_clock < SWITCH_CLOCK_REFRESH_NS)
		return c->ktime + (rq_clock - c->rq_clock);
	c->rq_clock = rq_clock;
	c->ktime = bpf_ktime_get_ns();
	return c->ktime;
}

static __always_inline __u64 new_seq(void)
{
	return (__sync_fetch_and_add(&next_seq, 1) + 1) | (1ull << 63);
}

static __always_inline bool maybe_target_process(__u32 tgid)
{
	return (target_tgid_bits[(tgid >> 6) & (TGID_BIT_WORDS - 1)] >> (tgid & 63)) & 1;
}

static __always_inline bool is_target(__u32 tgid, struct task_struct *task)
{
	return !filter_by_tgid || (maybe_target_process(tgid) && is_target_task(tgid, task));
}

/* Whether thread tid may have an entry in `waits` (see the filters above). */
static __always_inline bool maybe_followed(__u32 tid)
{
	return !filter_by_tgid || (followed_tid_bits[(tid >> 6) & (TID_BIT_WORDS - 1)] >> (tid & 63)) & 1;
}

/* Before thread tid is given an entry in `waits`. */
static __always_inline void note_followed(__u32 tid)
{
	if (filter_by_tgid)
		__sync_fetch_and_or(&followed_tid_bits[(tid >> 6) & (TID_BIT_WORDS - 1)], 1ull << (tid & 63));
}

/*
 * Whether a comm (NUL-padded to 16 bytes: a tracepoint's or a task's) is the
 * agent's own thread (JBPF_AGENT_THREAD_COMM). Its waits are the agent's
 * ticks, about a hundred a second: recording them would cost a stack read,
 * a Java stack signal to the agent itself and a trace each, all overhead
 * of the profiler shown as the application's time. Asked only when a wait
 * is about to be recorded, so other switches do not pay for it.
 */
static __always_inline bool is_agent_thread(const char *comm)
{
	static const char agent[JBPF_COMM_LEN] = JBPF_AGENT_THREAD_COMM;
	__u64 c[2] = {}, a[2];

	/* Copied, not read in place: the verifier allows the context only fixed-offset loads. */
	bpf_probe_read_kernel(c, sizeof(c), comm);
	__builtin_memcpy(a, agent, sizeof(a));
	return c[0] == a[0] && c[1] == a[1];
}

/*
 * Thread tid, one of the two a sched_switch is about: the thread leaving
 * (current) or the one coming in; NULL for any other. A reference the
 * caller gives back with switching_task_put. Where the kernel has
 * bpf_task_from_pid (Linux 6.2), from it: 6.18's verifier gives a helper
 * no task pointer read from kernel memory. On 6.1, the thread coming in
 * is its run queue's curr (incoming_task), taken without a reference: the
 * scheduler holds
 * both threads while the tracepoint runs.
 */
static __always_inline struct task_struct *switching_task_get(__u32 tid)
{
	struct task_struct *current;

	if (bpf_task_from_pid)
		return bpf_task_from_pid(tid);
	current = bpf_get_current_task_btf();
	return current->pid == tid ? current : incoming_task(switch_rq(), tid);
}

static __always_inline void switching_task_put(struct task_struct *task)
{
	if (bpf_task_from_pid && task)
		bpf_task_release(task);
}

/* Whether thread tid, switching in or out, is the agent's own (is_agent_thread), by its task's name. */
static __always_inline bool is_agent_task(__u32 tid)
{
	struct task_struct *task = switching_task_get(tid);
	bool agent;

	if (!task)
		return false;
	agent = is_agent_thread(task->comm);
	switching_task_put(task);
	return agent;
}

/* Wake the reader only when the ring is filling up; it drains on a timer anyway. */
static __always_inline __u64 wakeup_flags(void)
{
	__u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);

	return used > size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void send(void *record, __u64 size)
{
	/* One register for the check and the use, whatever copies clang would keep. */
	barrier_var(size);
	if (size > WAIT_MAX_SIZE || bpf_ringbuf_output(&events, record, size, wakeup_flags()))
		count(JBPF_CNT_WAITS_LOST);
	else
		count(JBPF_CNT_WAITS_SENT);
}

static __always_inline struct jbpf_sample *new_wait(__u32 tgid, __u32 tid, const char *comm, __u64 now)
{
	struct jbpf_sample *wait;
	__u32 zero = 0;

	wait = bpf_map_lookup_elem(&scratch, &zero);
	if (!wait)
		return NULL;
	sample_header__init(wait, JBPF_RECORD_WAIT, bpf_get_smp_processor_id(), now, tgid, tid);
	bpf_probe_read_kernel(wait->comm, sizeof(wait->comm), comm);
	return wait;
}

/*
 * The Java stack of a JVM thread's wait inside a system call: the signal
 * waits for the call to return (bpf/deferral.bpf.h), and a CPU sample
 * already waiting there shares its number.
 */
static __always_inline void want_java_stack(struct jbpf_sample *wait, struct task_struct *task)
{
	__u64 seq;
	int err;

	if (!java_target_of(wait->tgid, task) || runs_no_java(wait))
		return;
	err = owe_java_signal(task, new_seq(), &seq);
	if (err) {
		wait->signal_err = err;
		count(JBPF_CNT_SIGNAL_FAILED);
		return;
	}
	wait->java_seq = seq;
	wait->flags |= JBPF_SAMPLE_DEFERRED;
}

/*
 * The Java stack of a JVM thread that waits outside a system call
 * (preempted in user code, or faulting): the signal is delivered when the
 * thread next returns to user mode, before it runs another instruction, so
 * its handler sees the stack of the wait. No system call is under way, so
 * nothing can be interrupted.
 */
static __always_inline void signal_java_now(struct jbpf_sample *wait, struct task_struct *task)
{
	const struct jbpf_java_target *jt = java_target_of(wait->tgid, task);

	if (jt && bpf_send_signal_task && !runs_no_java(wait))
		signal_for_java_stack(wait, task, jt->signo, new_seq());
}

/*
 * The Java stack of the current thread's wait (in a system call or not):
 * a global function, for the verifier (see switched_in).
 */
__noinline int java_stack_of_current(struct jbpf_sample *wait, int in_syscall)
{
	if (!wait)
		return 0;
	if (in_syscall)
		want_java_stack(wait, bpf_get_current_task_btf());
	else
		signal_java_now(wait, bpf_get_current_task_btf());
	return 0;
}

#include "offcpu_walk.bpf.h"
#include "offcpu_waker.bpf.h"

/*
 * A runnable or blocked thread leaves the CPU: its stacks now, from the
 * thread itself, and the wait's end later.
 */
static void send_open_wait(struct trace_event_raw_sched_switch *ctx, struct jbpf_thread_waits *w, __u32 tid,
			   __u64 now)
{
	struct jbpf_sample *wait;
	__u64 kn, un, size;

	wait = new_wait(w->tgid, tid, ctx->prev_comm, now);
	if (!wait)
		return;
	wait->state = w->state;
	wait->wait_start_ns = now;
	wait->born_ns = BPF_CORE_READ(bpf_get_current_task_btf(), start_time);
	wait->wait_id = new_seq();
	wait->flags = JBPF_WAIT_OPEN;
	kn = stack_frames(bpf_get_stack(ctx, wait->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), 0), &wait->kstack_err);
	wait->kstack_len = kn;
	if (kn > JBPF_MAX_STACK_DEPTH)
		return;
	w->open_wait = wait->wait_id;
	/* A walked JVM's thread: its user stack was just walked (walk_at_switch_out). */
	size = walked_user_stack(tid, now, kn);
	if (size) {
		send(wait, size);
		return;
	}
	un = stack_frames(bpf_get_stack(ctx, &wait->ips[kn], JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK),
			  &wait->ustack_err);
	wait->ustack_len = un;
	java_stack_of_current(wait, in_system_call(bpf_get_current_task_btf(), wait->ips, kn));
	send(wait, sizeof(*wait) + (kn + un) * sizeof(__u64));
}

/*
 * A wait from w->off_since to end, woken at woken (0: not seen), that is
 * not recorded: its time goes to the thread's sampled_out_ns, asleep
 * until woken and runnable after.
 */
static __always_inline void count_unrecorded(struct jbpf_thread_waits *w, __u64 end, __u64 woken)
{
	__u64 length = end - w->off_since;

	if (woken) {
		w->sampled_out_ns[JBPF_STATE_RUNNABLE] += end - woken;
		length = woken - w->off_since;
	}
	if (w->state < JBPF_STATE_NR)
		w->sampled_out_ns[w->state] += length;
}

/*
 * A thread switches out while `waits` still has it off CPU: the switch
 * that brought it back was missed. Its CPU time tells how long it ran since
 * (runtime - runtime_at_out), so the wait's length is exact: it ended that
 * long ago. Its stacks are gone; a wait whose end was awaited is ended
 * with the same time.
 */
__noinline int missed_switch_in(struct jbpf_thread_waits *w, __u32 tid, __u64 now, __u64 runtime)
{
	struct jbpf_sample *wait;
	__u64 ran, end, length, woken;

	if (!w)
		return 0;
	now = at_or_after(now, w->off_since);
	ran = runtime > w->runtime_at_out ? runtime - w->runtime_at_out : 0;
	end = now - w->off_since > ran ? now - ran : w->off_since;

	count(JBPF_CNT_SWITCH_MISSED);
	w->check_in = 1;
	if (w->open_wait) {
		send_wait_end(tid, w->open_wait, end, 0);
		return 0;
	}
	if (!w->runtime_at_out)
		return 0;
	/* Picked like a wait seen (switched_in); not picked, it needs no stacks. */
	length = end - w->off_since;
	woken = woken_by_run_delay(w, bpf_get_current_task_btf(), w->off_since, end);
	if (length < full_wait_ns && (((__u64)bpf_get_prandom_u32() * full_wait_ns) >> 32) >= length) {
		count_unrecorded(w, end, woken);
		return 0;
	}
	wait = new_wait(w->tgid, tid, bpf_get_current_task_btf()->comm, end);
	if (!wait)
		return 0;
	wait->state = w->state;
	wait->wait_start_ns = w->off_since;
	wait->woken_ns = woken;
	if (length < full_wait_ns)
		wait->flags = JBPF_WAIT_SAMPLED;
	wait->kstack_err = -116; /* ESTALE: the switch was not seen */
	wait->ustack_err = -116;
	count(JBPF_CNT_WAIT_NO_STACKS);
	send(wait, sizeof(*wait));
	return 0;
}

/* owe_switch_in_check for the current thread: a global function, for the verifier (see switched_in). */
__noinline int owe_current_switch_in_check(__u64 since)
{
	return owe_switch_in_check(bpf_get_current_task_btf(), since);
}

/*
 * A thread's first entry in `waits` is built here, not on the stack: its
 * 120 bytes in switched_out's frame, with the walk's frames under it
 * (walk_at_switch_out), pass the 512 bytes a program's nested calls may
 * use in all before Linux 6.13. sched_switch never runs inside itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jbpf_thread_waits);
} fresh_waits SEC(".maps");

static void switched_out(struct trace_event_raw_sched_switch *ctx, __u64 now)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0;
	struct jbpf_thread_waits *w, *fresh;
	struct task_struct *current = bpf_get_current_task_btf();
	long report = ctx->prev_state;
	__u64 runtime;

	if (tid == 0)
		return;
	/*
	 * A thread in `waits` is a target's: entries are made only for
	 * targets' threads and leave when the thread exits, so the targets
	 * lookup is needed only for a thread not seen yet (or an entry left
	 * by an exit whose switch was missed, whose tid another process reuses).
	 */
	w = maybe_followed(tid) ? bpf_map_lookup_elem(&waits, &tid) : NULL;
	if (w && w->tgid != tgid)
		w = NULL;
	if (!w && !is_target(tgid, current))
		return;
	count(JBPF_CNT_SWITCHES);
	if (report & (REPORT_EXIT_DEAD | REPORT_EXIT_ZOMBIE)) {
		bpf_map_delete_elem(&waits, &tid);
		return;
	}
	if (w && (w->flags & JBPF_THREAD_EXITING))
		return;
	if (!w) {
		fresh = bpf_map_lookup_elem(&fresh_waits, &zero);
		if (!fresh)
			return;
		__builtin_memset(fresh, 0, sizeof(*fresh));
		fresh->tgid = tgid;
		note_followed(tid);
		bpf_map_update_elem(&waits, &tid, fresh, BPF_ANY);
		w = bpf_map_lookup_elem(&waits, &tid);
		if (!w) {
			count(JBPF_CNT_THREADS_FULL);
			return;
		}
	}
	runtime = current->se.sum_exec_runtime;
	if (w->off_since && !(w->flags & (JBPF_THREAD_SINCE_START | JBPF_THREAD_NEW)))
		missed_switch_in(w, tid, now, runtime);
	/*
	 * The check that its switch-in is seen (bpf/deferral.bpf.h), at its
	 * return to user mode: where the kernel does not report the switch-in,
	 * the wait is ended there with its user stack, where the next
	 * switch-out (missed_switch_in) would have none. Scheduling task work
	 * costs microseconds (bench/pingpong.sh: 80% of a ping-pong's round
	 * trips when owed at every switch), so it is owed only where a lost
	 * stack would matter: after a long wait (check_in), or for a thread
	 * whose waits are not known yet. Short waits are recorded with a small
	 * probability and lose little.
	 */
	if (!defer_by_task_work || w->check_in || (w->flags & (JBPF_THREAD_SINCE_START | JBPF_THREAD_NEW)))
		owe_current_switch_in_check(now);
	w->off_since = now;
	w->runtime_at_out = runtime;
	w->run_delay_at_out = current->sched_info.run_delay;
	w->nvcsw_at_out = current->nvcsw;
	w->delayed_migrations = ~0ull;
	if (bpf_core_field_exists(struct sched_entity, sched_delayed) && current->se.sched_delayed)
		w->delayed_migrations = current->se.nr_migrations;
	w->flags = 0;
	w->open_wait = 0;
	if (report == 0 || report >= REPORT_MAX)
		w->state = JBPF_STATE_RUNNABLE;
	else if (report & REPORT_UNINTERRUPTIBLE)
		w->state = JBPF_STATE_BLOCKED;
	else
		w->state = JBPF_STATE_SLEEPING;
	/* Before the open wait is built: the walk uses the scratch record. */
	if (hotspot_walk)
		walk_at_switch_out(tgid, now);
	if (w->state == JBPF_STATE_BLOCKED && !is_agent_thread(ctx->prev_comm))
		send_open_wait(ctx, w, tid, now);
}

/*
 * A sleeping wait (or one that began before the thread was seen) is over:
 * record it with the waking thread's kernel stack, and ask its system
 * call's exit for the user stack.
 */
static void send_wait(struct jbpf_thread_waits *w, __u32 tid, __u64 now, __u32 flags, __u64 woken)
{
	static const char no_name[JBPF_COMM_LEN];
	struct task_struct *task = switching_task_get(tid);
	struct jbpf_sample *wait;
	__u64 kn = 0, size = 0;

	wait = new_wait(w->tgid, tid, task ? task->comm : no_name, now);
	if (!wait) {
		switching_task_put(task);
		return;
	}
	wait->state = w->state;
	wait->wait_start_ns = w->off_since;
	wait->woken_ns = woken;
	wait->flags = flags;
	if (flags & JBPF_WAIT_WAKER)
		wait->wait_id = w->waker_seq;
	if (!task) {
		wait->flags |= JBPF_WAIT_NO_TASK;
		send(wait, sizeof(*wait));
		return;
	}
	wait->born_ns = task->start_time;
	if (!(flags & JBPF_WAIT_NEW_THREAD)) {
		kn = stack_frames(bpf_get_task_stack(task, wait->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), 0),
				  &wait->kstack_err);
		wait->kstack_len = kn;
		/* A walked JVM's thread: its stacks from its switch-out, no deferral, no signal. */
		size = walked_user_stack(tid, w->off_since, kn);
		if (size)
			;
		else if (in_system_call(task, wait->ips, kn)) {
			int err = owe_user_stack(task, new_seq(), &wait->ustack_seq);

			if (err)
				wait->ustack_err = err;
			want_java_stack(wait, task);
		} else {
			/* Preempted in user code: only the thread itself could read its user stack. */
			wait->ustack_err = -95; /* EOPNOTSUPP */
			signal_java_now(wait, task);
		}
	}
	switching_task_put(task);
	if (kn > JBPF_MAX_STACK_DEPTH)
		return;
	send(wait, size ? size : sizeof(*wait) + kn * sizeof(__u64));
}

/*
 * When thread tid, switching in on this CPU now, was woken from its wait
 * of w: 0 for a wait runnable throughout. At sched_switch the CPU's run
 * queue already names the thread coming in as curr, and its clock was
 * read for this switch (switch_rq; without it, no split). The thread went
 * on a run queue at
 * sched_info.last_queued (that queue's clock) when woken, and a stretch
 * on another CPU's queue before it was moved here is in run_delay: its
 * growth since the switch-out. A wait rebuilt after a missed switch-out
 * (rebuilt) has in run_delay the stretch before the missed run too, so
 * only this queue's stretch counts.
 */
static __always_inline __u64 woken_at_switch_in(const struct jbpf_thread_waits *w, __u32 tid, __u64 now,
						bool rebuilt)
{
	__u64 queued = 0, last_queued, clock, run_delay;
	struct task_struct *next;
	struct rq *rq;

	if (w->state == JBPF_STATE_RUNNABLE)
		return 0;
	rq = switch_rq();
	next = incoming_task(rq, tid);
	if (!rq || !next)
		return 0;
	if (queue_time_unknown(w, next))
		return now;
	last_queued = next->sched_info.last_queued;
	clock = rq->clock;
	if (last_queued && clock > last_queued)
		queued = clock - last_queued;
	run_delay = next->sched_info.run_delay;
	if (!rebuilt && run_delay > w->run_delay_at_out)
		queued += run_delay - w->run_delay_at_out;
	return queued < now - w->off_since ? now - queued : w->off_since;
}

/*
 * A thread switches in while `waits` has it on a CPU: the switch that took
 * it off was missed. Its CPU time since its last switch-out seen is the
 * time it ran after its last switch-in seen (on_since), so the rest, up to
 * now, it was off CPU: the wait is rebuilt to end now, asleep if a wakeup
 * was seen, else preempted, and then recorded like any other, with the
 * stacks it still has. False when it cannot be told.
 */
static bool missed_switch_out(struct jbpf_thread_waits *w, __u32 tid, __u64 now)
{
	struct task_struct *task;
	__u64 ran, off;

	count(JBPF_CNT_SWITCH_MISSED);
	if (!w->on_since || !w->runtime_at_out)
		return false;
	task = switching_task_get(tid);
	if (!task)
		return false;
	ran = task->se.sum_exec_runtime > w->runtime_at_out ? task->se.sum_exec_runtime - w->runtime_at_out : 0;
	/* The kernel counts the missed switch-out as voluntary (asleep) or not (preempted). */
	w->state = task->nvcsw != w->nvcsw_at_out ? JBPF_STATE_SLEEPING : JBPF_STATE_RUNNABLE;
	switching_task_put(task);
	now = at_or_after(now, w->on_since);
	off = now - w->on_since > ran ? now - w->on_since - ran : 0;
	if (!off)
		return false;
	w->off_since = now - off;
	return true;
}

/*
 * A global function, checked by the verifier once on its own rather than
 * once for each of the many ways switched_out can end: the two halves'
 * paths multiply otherwise (bench/wall_idle_java.sh: 33 ms to load this
 * program, most of a short recording's start-up, against 12 ms). Hence
 * scalars only, no context: the thread's name is read from its task when
 * a wait is recorded.
 */
__noinline int switched_in(__u32 tid, __u64 now)
{
	struct jbpf_thread_waits *w;
	__u32 flags = 0;
	__u64 length, woken;
	bool rebuilt = false;

	if (tid == 0 || !maybe_followed(tid))
		return 0;
	/* Only target threads have an entry: no filter lookup needed. */
	w = bpf_map_lookup_elem(&waits, &tid);
	if (!w || (w->flags & JBPF_THREAD_EXITING))
		return 0;
	if (!w->off_since && !w->open_wait && !(w->flags & (JBPF_THREAD_NEW | JBPF_THREAD_SINCE_START))) {
		if (!missed_switch_out(w, tid, now)) {
			w->on_since = now;
			return 0;
		}
		rebuilt = true;
	}
	now = at_or_after(now, w->off_since);
	w->on_since = now;
	woken = woken_at_switch_in(w, tid, now, rebuilt);
	if (w->open_wait) {
		send_wait_end(tid, w->open_wait, now, w->off_since ? woken : 0);
		w->open_wait = 0;
		w->off_since = 0;
		return 0;
	}
	if (w->flags & JBPF_THREAD_NEW) {
		flags = JBPF_WAIT_NEW_THREAD;
		/*
		 * Its CPU time is 0 at its first run (the kernel zeroes it at
		 * fork), so a missed first switch-out can be told
		 * (missed_switch_out); 1 ns marks it known.
		 */
		w->runtime_at_out = 1;
	} else if (w->flags & JBPF_THREAD_SINCE_START) {
		flags = JBPF_WAIT_UNKNOWN_START;
	} else {
		length = now - w->off_since;
		w->check_in = length >= check_in_min_ns;
		if (length < min_block_ns || length > max_block_ns) {
			w->filtered_ns += length;
			w->off_since = 0;
			return 0;
		}
		/* With --wakers a woken wait was picked or passed over at its wakeup (offcpu_waker.bpf.h). */
		if ((w->flags & JBPF_THREAD_WAKER_PASSED) ||
		    (!(w->flags & JBPF_THREAD_WAKER_PICKED) &&
		     ((length < full_wait_ns && (((__u64)bpf_get_prandom_u32() * full_wait_ns) >> 32) >= length) ||
		      is_agent_task(tid)))) {
			count_unrecorded(w, now, woken);
			w->off_since = 0;
			return 0;
		}
		if (w->flags & JBPF_THREAD_WAKER_PICKED ? w->flags & JBPF_THREAD_WAKER_CHANCE : length < full_wait_ns)
			flags = JBPF_WAIT_SAMPLED;
	}
	if (w->flags & JBPF_THREAD_WAKER_PICKED)
		flags |= JBPF_WAIT_WAKER;
	send_wait(w, tid, now, flags, woken);
	w->flags = 0;
	w->off_since = 0;
	return 0;
}

SEC("tp/sched/sched_switch")
int sched_switch(struct trace_event_raw_sched_switch *ctx)
{
	__u64 now = switch_time_ns();

	switched_out(ctx, now);
	switched_in(ctx->next_pid, now);
	return 0;
}

#include "offcpu_threads.bpf.h"
#include "offcpu_end.bpf.h"
