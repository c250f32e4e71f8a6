/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Threads' lives, for the recording of waits: a target thread's exit (its
 * totals sent), a new thread of a target (followed from its creation), and
 * the iterator that seeds `waits` with the threads already there when the
 * recording starts. Part of bpf/offcpu.bpf.c, included where what it uses
 * is defined.
 */
#ifndef JBPF_OFFCPU_THREADS_BPF_H
#define JBPF_OFFCPU_THREADS_BPF_H

/*
 * A target thread exits: its life ends here, before the kernel tears it
 * down, and its totals go to userspace. Its entry stays, marked, until its
 * last switch-out, so that the teardown is not taken for a new thread.
 */
SEC("raw_tp/sched_process_exit")
int thread_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(task, pid);
	struct jbpf_thread_waits *w = maybe_followed(tid) ? bpf_map_lookup_elem(&waits, &tid) : NULL;
	struct jbpf_thread_exit *exit;

	if (!w)
		return 0;
	/*
	 * Still off CPU by `waits`: the switch that brought it back was missed
	 * and, with the switch-in check owed only after long waits, nothing
	 * else ended the wait. It ends where its CPU time says, as at a switch-out.
	 */
	if (w->off_since && !(w->flags & (JBPF_THREAD_SINCE_START | JBPF_THREAD_NEW | JBPF_THREAD_EXITING))) {
		struct task_struct *current = bpf_get_current_task_btf();

		missed_switch_in(w, tid, bpf_ktime_get_ns(), current->se.sum_exec_runtime);
		w->off_since = 0;
		w->open_wait = 0;
	}
	w->flags |= JBPF_THREAD_EXITING;
	exit = reserve_counted(sizeof(*exit), JBPF_CNT_WAITS_LOST);
	if (!exit)
		return 0;
	exit->type = JBPF_RECORD_THREAD_EXIT;
	exit->tid = tid;
	exit->tgid = w->tgid;
	exit->unused = 0;
	exit->time_ns = bpf_ktime_get_ns();
	exit->waits = *w;
	bpf_ringbuf_submit(exit, BPF_RB_NO_WAKEUP);
	return 0;
}

/* A target creates a thread (or, with -a, anything is created): follow it from now. */
SEC("raw_tp/sched_process_fork")
int process_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct jbpf_thread_waits fresh = {};
	__u32 tid = BPF_CORE_READ(child, pid);

	fresh.tgid = BPF_CORE_READ(child, tgid);
	if (!is_target(fresh.tgid, child))
		return 0;
	fresh.off_since = bpf_ktime_get_ns();
	fresh.state = JBPF_STATE_RUNNABLE;
	fresh.flags = JBPF_THREAD_NEW;
	fresh.delayed_migrations = ~0ull;
	note_followed(tid);
	if (bpf_map_update_elem(&waits, &tid, &fresh, BPF_ANY))
		count(JBPF_CNT_THREADS_FULL);
	return 0;
}

/* The kernel's task state bits that /proc reports (TASK_REPORT), and TASK_NOLOAD. */
#define TASK_REPORT_BITS 0x7f
#define TASK_NOLOAD_BIT 0x400

/* A thread's state as /proc would show it: R runnable, D (not idle) blocked, anything else sleeping. */
static enum jbpf_state state_as_proc(const struct task_struct *task)
{
	unsigned int state = task->__state, report = (state | task->exit_state) & TASK_REPORT_BITS;

	if (!report)
		return JBPF_STATE_RUNNABLE;
	if (report == REPORT_UNINTERRUPTIBLE && !(state & TASK_NOLOAD_BIT))
		return JBPF_STATE_BLOCKED;
	return JBPF_STATE_SLEEPING;
}

/*
 * The threads alive at the start, each seeded into `waits` with its state
 * (JBPF_THREAD_SINCE_START) as /proc would show it: R runnable, D (not
 * idle) blocked, anything else sleeping; zombies and dead threads are
 * left out. An iterator rather than /proc: one read for all the threads of
 * a process, where /proc costs two files per thread (a JVM has hundreds).
 * Userspace gets each seeded tid; one already in `waits` (seen by the
 * scheduler program first) is kept as it is.
 */
SEC("iter/task")
int seed_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct jbpf_thread_waits seed = { .flags = JBPF_THREAD_SINCE_START };
	__u32 tid;

	if (!task)
		return 0;
	seed.tgid = task->tgid;
	tid = task->pid;
	if (!tid || !is_target(seed.tgid, task))
		return 0;
	if ((task->__state | task->exit_state) & (REPORT_EXIT_DEAD | REPORT_EXIT_ZOMBIE))
		return 0;
	seed.state = state_as_proc(task);
	seed.run_delay_at_out = task->sched_info.run_delay;
	seed.nvcsw_at_out = task->nvcsw;
	seed.delayed_migrations = ~0ull;
	note_followed(tid);
	if (!bpf_map_update_elem(&waits, &tid, &seed, BPF_NOEXIST))
		bpf_seq_write(ctx->meta->seq, &tid, sizeof(tid));
	return 0;
}

#endif /* JBPF_OFFCPU_THREADS_BPF_H */
