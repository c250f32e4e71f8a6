/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Deferral: what a thread is owed when it leaves the kernel, for the
 * programs that find a debt (sample.bpf.c, offcpu.bpf.c). Two debts:
 *
 *   - a Java stack signal (java_seq), for a CPU sample or a wait taken
 *     while a JVM thread is inside a system call: sent during the call, a
 *     signal could cut a sleep short (EINTR, or a nanosleep that returns
 *     early); sent on the way out, it interrupts nothing and the Java stack
 *     is still the one of the sample;
 *   - a user stack read (ustack_seq), for a wait inside a system call that
 *     the scheduler program recorded from another thread, which can read
 *     only the kernel stack: it cannot change before the call returns;
 *   - a check that the scheduler program saw the thread come back
 *     (off_since), owed from its switch-out: some kernels do not report
 *     every context switch (on this project's test machine about 1% of one
 *     CPU's switches fire no sched_switch tracepoint at all: ftrace's own
 *     event shows the same gaps, mostly a switch from the idle task or a
 *     virtual machine agent's threads), and a wait whose switch-in nobody
 *     saw is ended when the thread is back in user mode, with its user
 *     stack and Java signal, which are still the wait's (check_switched_in).
 *
 * Who pays, chosen by userspace at start-up (defer_by_task_work):
 *
 *   - task work (Linux 6.18, bpf_task_work_schedule_resume): the debt goes
 *     into the thread's entry in `owed` and a callback is scheduled on the
 *     thread itself; the kernel runs it when the thread next returns to user
 *     mode (TWA_RESUME: it does not wake or interrupt the thread), in the
 *     thread's own context. Only threads with a debt pay anything, once per
 *     debt, however many system calls the host makes;
 *   - else the system call exit program (syscall_exit.bpf.c), on every
 *     system call return of the host, reads the debt from the `deferred`
 *     task storage (the check included: there it is made at the return of
 *     the system call the thread waited in).
 *
 * Debts share numbers: a sample taken while a thread already owes a signal
 * gets that signal's number (JBPF_SAMPLE_DEFERRED groups), since the Java
 * stack at the return is the same for all of them.
 *
 * Concurrency of one `owed` entry: it is written by its own thread (the CPU
 * sampler's tick, the callback, the scheduler program at its switch-out) or
 * by the scheduler program at its switch-in, on the CPU it is about to run
 * on; only a tick can come in the middle of the callback. Hence the
 * callback pays, clears `scheduled`, and pays again: a debt added before the
 * clear is paid by the second pass, one added after schedules anew (and, in
 * the few instructions before the kernel lets the work be scheduled again,
 * fails with EBUSY, which is counted like any failed signal).
 */
#ifndef JBPF_DEFERRAL_BPF_H
#define JBPF_DEFERRAL_BPF_H

#include "late_switch_in.bpf.h"
#include "shared.bpf.h"

/* Set by userspace between open and load: pay debts by task work, else at system call exit. */
const volatile bool defer_by_task_work = false;

/*
 * Runs callback in task's context when it next returns to user mode
 * (Linux 6.18; the _impl name is the one that takes aux__prog, NULL, which
 * the verifier fills in). Weak: on a kernel without it the objects still
 * load, and userspace, which probed for it, leaves defer_by_task_work off.
 */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
					      bpf_task_work_callback_t callback, void *aux__prog) __ksym __weak;

/* The records debts are paid with, at their largest: a user stack, a wait with user frames only. */
#define OWED_USER_STACK_SIZE (sizeof(struct jbpf_user_stack) + JBPF_MAX_STACK_DEPTH * sizeof(__u64))
#define OWED_WAIT_SIZE (sizeof(struct jbpf_sample) + JBPF_MAX_STACK_DEPTH * sizeof(__u64))

/*
 * The current thread's user stack, for the wait numbered seq. Read with
 * bpf_get_task_stack from the registers saved at its kernel entry (the
 * callback has no program context), straight into the ring buffer: the
 * callback may be preempted, so a per-CPU scratch buffer is not its own.
 * The record keeps its full size; userspace reads len frames.
 */
static __always_inline void pay_user_stack(__u32 tid, __u64 seq)
{
	struct jbpf_user_stack *record = reserve_counted(OWED_USER_STACK_SIZE, JBPF_CNT_WAITS_LOST);

	if (!record)
		return;
	record->type = JBPF_RECORD_USER_STACK;
	record->tid = tid;
	record->seq = seq;
	record->unused = 0;
	record->len = stack_frames(bpf_get_task_stack(bpf_get_current_task_btf(), record->ips,
						      JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK),
				   &record->err);
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
}

/*
 * The current thread is back in user mode. If `waits` still has it off
 * CPU since the switch-out that owed this check, its switch-in was never
 * reported: the wait is ended now, a few microseconds late (the callback
 * runs on the way to user mode), an open one with its end, any other sent
 * whole with the user stack it had (the thread has run no user code
 * since) and, for a JVM thread, a share of the Java signal paid right
 * after; only its kernel stack is gone. Counted as a missed switch.
 */
static __always_inline void check_switched_in(struct jbpf_owed *o, __u32 tgid, __u32 tid)
{
	__u64 since = o->what.off_since, now = bpf_ktime_get_ns(), woken;
	struct jbpf_thread_waits *w;
	struct jbpf_sample *wait;

	o->what.off_since = 0;
	now = at_or_after(now, since);
	w = late_switch_in(tid, since, now);
	if (!w)
		return;
	w->check_in = 1;
	woken = woken_by_run_delay(w, bpf_get_current_task_btf(), since, now);
	if (w->open_wait) {
		send_wait_end(tid, w->open_wait, now, woken);
		w->open_wait = 0;
		return;
	}
#ifdef JBPF_DEFERRAL_WALKED_WAITS
	/* A walked JVM's thread: the stacks walked at its switch-out (offcpu.bpf.c). */
	if (walked_wait_at_return(tgid, tid, since, now, woken, w->state))
		return;
#endif
	wait = reserve_counted(OWED_WAIT_SIZE, JBPF_CNT_WAITS_LOST);
	if (!wait)
		return;
	late_wait_init(wait, w, tgid, tid, since, now, woken);
	wait->ustack_len = stack_frames(bpf_get_task_stack(bpf_get_current_task_btf(), wait->ips,
							   JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK),
					&wait->ustack_err);
	late_wait_java(wait, tgid, &o->what.java_seq);
	bpf_ringbuf_submit(wait, BPF_RB_NO_WAKEUP);
	count(JBPF_CNT_WAITS_SENT);
}

/* Pays and clears every debt of the current thread's entry. */
static __always_inline void pay_debts(struct jbpf_owed *o)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u64 seq;

	if (o->what.off_since)
		check_switched_in(o, tgid, tid);
	seq = o->what.ustack_seq;
	if (seq) {
		o->what.ustack_seq = 0;
		pay_user_stack(tid, seq);
	}
	seq = o->what.java_seq;
	if (seq) {
		o->what.java_seq = 0;
		pay_java_signal(tgid, tid, seq);
	}
}

/* The task work callback, in the owing thread's context (see the header comment for the two passes). */
static int pay_owed(struct bpf_map *map, void *key, void *value)
{
	struct jbpf_owed *o = value;

	pay_debts(o);
	o->scheduled = 0;
	pay_debts(o);
	return 0;
}

/*
 * task's debts: its `owed` entry (made, or taken over from an earlier
 * thread with its tid) with task work, else its `deferred` task storage.
 * *entry is the `owed` entry, NULL without task work. NULL when there is
 * no room.
 */
static __always_inline struct jbpf_syscall_pending *debts_of(struct task_struct *task, struct jbpf_owed **entry)
{
	struct jbpf_owed fresh = {}, *o;
	__u32 tid = task->pid;

	*entry = NULL;
	if (!defer_by_task_work)
		return bpf_task_storage_get(&deferred, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	o = bpf_map_lookup_elem(&owed, &tid);
	if (!o) {
		fresh.task_start = task->start_time;
		bpf_map_update_elem(&owed, &tid, &fresh, BPF_NOEXIST);
		o = bpf_map_lookup_elem(&owed, &tid);
		if (!o)
			return NULL;
	}
	if (o->task_start != task->start_time) {
		/* A thread that had this tid: its debts died with it. */
		o->what.java_seq = 0;
		o->what.ustack_seq = 0;
		o->scheduled = 0;
		o->task_start = task->start_time;
	}
	*entry = o;
	return &o->what;
}

/*
 * Makes sure entry's debts get paid: schedules the callback on task unless
 * one is scheduled. 0 or -errno; nothing to do without task work (entry
 * NULL: the system call exit program pays).
 */
static __always_inline int debts_due(struct task_struct *task, struct jbpf_owed *entry)
{
	int err;

	if (!entry || entry->scheduled)
		return 0;
	if (!bpf_task_work_schedule_resume_impl)
		return -95; /* EOPNOTSUPP: userspace probed for it; not reached */
	err = bpf_task_work_schedule_resume_impl(task, &entry->work, &owed, pay_owed, NULL);
	if (!err)
		entry->scheduled = 1;
	return err;
}

/*
 * Owes task one debt, its Java stack signal or the read of its user stack
 * (user_stack): *seq gets the number already owed for it, or fresh. 0 or
 * -errno, and then nothing is owed for it.
 */
static __always_inline int owe(struct task_struct *task, bool user_stack, __u64 fresh, __u64 *seq)
{
	struct jbpf_syscall_pending *pending;
	struct jbpf_owed *entry;
	bool added = false;
	__u64 *owed;
	int err;

	pending = debts_of(task, &entry);
	if (!pending)
		return -16; /* EBUSY: no storage for it now */
	owed = user_stack ? &pending->ustack_seq : &pending->java_seq;
	if (!*owed) {
		*owed = fresh;
		added = true;
	}
	err = debts_due(task, entry);
	if (err) {
		if (added)
			*owed = 0;
		return err;
	}
	*seq = *owed;
	return 0;
}

/*
 * Owes the current thread, switching out at since, the check that its
 * switch-in is seen (check_switched_in), with task work only: the system
 * call exit program makes it from the `deferred` task storage itself. A
 * later switch-out before the check replaces since. 0 or -errno.
 */
static __always_inline int owe_switch_in_check(struct task_struct *task, __u64 since)
{
	struct jbpf_syscall_pending *pending;
	struct jbpf_owed *entry;
	int err;

	pending = debts_of(task, &entry);
	if (!pending)
		return -16; /* EBUSY: no storage for it now */
	pending->off_since = since;
	err = debts_due(task, entry);
	if (err)
		pending->off_since = 0;
	return err;
}

static __always_inline int owe_java_signal(struct task_struct *task, __u64 fresh, __u64 *seq)
{
	return owe(task, false, fresh, seq);
}

static __always_inline int owe_user_stack(struct task_struct *task, __u64 fresh, __u64 *seq)
{
	return owe(task, true, fresh, seq);
}

#endif /* JBPF_DEFERRAL_BPF_H */
