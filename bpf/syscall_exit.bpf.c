// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * System call exit: what the end of a system call owes a thread, on every
 * system call return of the host (raw_syscalls/sys_exit). The other
 * programs leave it in the thread's `deferred` task storage:
 *
 *   - a Java stack signal (java_seq), from a CPU sample taken inside the
 *     system call (sample.bpf.c) or a JVM thread's wait there
 *     (offcpu.bpf.c): a signal sent during the call could cut a sleep
 *     short, and at its return the Java stack is still the one of the
 *     sample;
 *   - a user stack read (ustack_seq), for a wait in the system call that
 *     was recorded from another thread (offcpu.bpf.c), which could read
 *     only the kernel stack;
 *   - a check that the scheduler program saw the thread come back
 *     (off_since): if not, the wait is ended here (see check_switched_in).
 *
 * The fallback for kernels without BPF task work (before 6.18), where the
 * owing thread's own callback pays the first two instead and no program
 * runs on system calls (bpf/deferral.bpf.h). Its own object, loaded only
 * on such a kernel and only when something can be owed (JVMs to signal, or
 * waits followed), since it costs every system call on the host. Of its
 * two programs userspace loads one: the tracepoint one with JVMs (only it
 * may send the signal), else the cheaper raw tracepoint one. Its maps are
 * the CPU sampler's (shared.bpf.h); only its scratch buffer is its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "late_switch_in.bpf.h"
#include "shared.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * A record being built: a wait (a struct jbpf_sample with user frames
 * only) or a user stack. Not shared with the CPU sampler: its tick, a
 * hard interrupt, may run in the middle of the raw tracepoint program
 * (only the tracepoint one keeps other BPF programs off its CPU).
 */
#define EXIT_RECORD_MAX_SIZE (sizeof(struct jbpf_sample) + JBPF_MAX_STACK_DEPTH * sizeof(__u64))

#define SCRATCH_BYTES EXIT_RECORD_MAX_SIZE
#include "scratch.bpf.h"

/*
 * The user stack of a thread that waited in this system call (see
 * bpf/offcpu.bpf.c): the same as during the wait, since the call does not
 * return to user code in between.
 */
static __always_inline void send_user_stack(void *ctx, __u32 tid, __u64 seq)
{
	struct jbpf_user_stack *record;
	__u32 zero = 0;
	__u64 n;

	record = bpf_map_lookup_elem(&scratch, &zero);
	if (!record)
		return;
	record->type = JBPF_RECORD_USER_STACK;
	record->tid = tid;
	record->seq = seq;
	record->unused = 0;
	n = stack_frames(bpf_get_stack(ctx, record->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK),
			 &record->err);
	record->len = n;
	if (bpf_ringbuf_output(&events, record, sizeof(*record) + n * sizeof(__u64), BPF_RB_NO_WAKEUP))
		count(JBPF_CNT_WAITS_LOST);
}

/*
 * The thread runs, so its last wait is over: if the scheduler program
 * (offcpu.bpf.c) did not see it come back, `waits` still has it off CPU
 * since the same moment. End that wait now, a few microseconds late: an
 * open one with its end, any other sent whole, with the user stack that
 * this system call had (its kernel stack at the wait is gone).
 */
static void check_switched_in(void *ctx, struct jbpf_syscall_pending *pending, __u32 tgid, __u32 tid)
{
	__u64 since = pending->off_since, now = bpf_ktime_get_ns();
	struct jbpf_thread_waits *w;
	struct jbpf_sample *wait;
	__u32 zero = 0;
	__u64 n;

	pending->off_since = 0;
	now = at_or_after(now, since);
	w = late_switch_in(tid, since, now);
	if (!w)
		return;
	if (w->open_wait) {
		send_wait_end(tid, w->open_wait, now, woken_by_run_delay(w, bpf_get_current_task_btf(), since, now));
		w->open_wait = 0;
		return;
	}
	wait = bpf_map_lookup_elem(&scratch, &zero);
	if (!wait)
		return;
	late_wait_init(wait, w, tgid, tid, since, now, woken_by_run_delay(w, bpf_get_current_task_btf(), since, now));
	n = stack_frames(bpf_get_stack(ctx, wait->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK),
			 &wait->ustack_err);
	wait->ustack_len = n;
	late_wait_java(wait, tgid, &pending->java_seq);
	if (bpf_ringbuf_output(&events, wait, sizeof(*wait) + n * sizeof(__u64), BPF_RB_NO_WAKEUP))
		count(JBPF_CNT_WAITS_LOST);
}

/*
 * A system call returns: send what it owes the thread (`deferred`), but
 * for a Java stack signal (see syscall_exit). Records from here never wake
 * the reader, which drains on its timer: a wakeup per system call would
 * cost more than the record. Returns the thread's storage, or NULL for a
 * thread that has none (most threads of the host, at the cost of one
 * lookup).
 */
static __always_inline struct jbpf_syscall_pending *syscall_exit_duties(void *ctx, __u32 tgid, __u32 tid)
{
	struct jbpf_syscall_pending *pending;

	pending = bpf_task_storage_get(&deferred, bpf_get_current_task_btf(), 0, 0);
	if (!pending)
		return NULL;
	if (pending->off_since)
		check_switched_in(ctx, pending, tgid, tid);
	if (pending->ustack_seq) {
		send_user_stack(ctx, tid, pending->ustack_seq);
		pending->ustack_seq = 0;
	}
	return pending;
}

/*
 * With JVMs among the targets: also send the signal for the Java stack of
 * a sample (or wait) inside this system call, now, before the thread runs
 * any more Java code. A tracepoint program, not a raw one: only these may
 * call the kfunc.
 */
SEC("tp/raw_syscalls/sys_exit")
int syscall_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct jbpf_syscall_pending *pending;
	__u64 seq;

	pending = syscall_exit_duties(ctx, tgid, tid);
	if (!pending || !pending->java_seq)
		return 0;
	seq = pending->java_seq;
	pending->java_seq = 0;
	pay_java_signal(tgid, tid, seq);
	return 0;
}

/*
 * Without JVMs no signal is owed, and a raw tracepoint program serves,
 * which costs every system call on the host less: the kernel hands it the
 * arguments as they are instead of filling a trace record first.
 */
SEC("raw_tp/sys_exit")
int syscall_exit_raw(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	syscall_exit_duties(ctx, pid_tgid >> 32, (__u32)pid_tgid);
	return 0;
}
