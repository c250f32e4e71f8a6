/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The end of a recording of waits: each thread `waits` follows, as it
 * stands then (bpf/jbpfprof.h, struct jbpf_thread_end), with what the
 * scheduler program missed rebuilt from the thread's CPU time, and a
 * walked JVM's thread with the stacks of its last switch-out. Part of
 * bpf/offcpu.bpf.c, included where what it uses is defined.
 */
#ifndef JBPF_OFFCPU_END_BPF_H
#define JBPF_OFFCPU_END_BPF_H

/*
 * At the end, a thread `waits` has on a CPU that is on none: its last
 * switch-out was missed (or came after the programs were detached). As at
 * a missed switch-out found at the next switch-in (missed_switch_out), its
 * CPU time since its last switch-out seen is how long it ran after its
 * last switch-in seen; it left then, and waits since, in the state it is
 * in now. Without this it was counted running up to the end (in one
 * test_wall run of ten, 48 ms running for 2 ms by schedstat). A thread
 * that left after the end is sent off CPU since a moment past it, and
 * userspace counts no wait (wall.c wait_at_end).
 */
static bool left_unseen(struct jbpf_thread_waits *w, const struct task_struct *task)
{
	__u64 runtime = task->se.sum_exec_runtime;

	if (w->off_since || w->open_wait ||
	    (w->flags & (JBPF_THREAD_EXITING | JBPF_THREAD_NEW | JBPF_THREAD_SINCE_START)))
		return false;
	if (!w->on_since || !w->runtime_at_out || task->on_cpu)
		return false;
	w->off_since = w->on_since + (runtime > w->runtime_at_out ? runtime - w->runtime_at_out : 0);
	w->state = state_as_proc(task);
	count(JBPF_CNT_SWITCH_MISSED);
	return true;
}

/*
 * At the end, a thread `waits` has off CPU whose CPU time grew since its
 * switch-out: the switch that brought it back was missed (or came after
 * the programs were detached). It has run `ran` since, so it came back
 * `ran` before now at the latest; the wait ends there, or at the window's
 * end if that is earlier (wall.c), without stacks: the thread has moved on
 * from both. Without this a thread back unseen and not switched out again
 * seen was counted waiting up to the end (in one test_wall run of forty,
 * a spinning thread 316 ms runnable for 20 to 41 ms by schedstat).
 */
static void came_back_unseen(struct jbpf_thread_end *end, const struct task_struct *task)
{
	const struct jbpf_thread_waits *w = &end->waits;
	__u64 runtime = task->se.sum_exec_runtime, now = bpf_ktime_get_ns(), ran;

	if (!w->off_since || w->open_wait ||
	    (w->flags & (JBPF_THREAD_EXITING | JBPF_THREAD_NEW | JBPF_THREAD_SINCE_START)))
		return;
	if (!w->runtime_at_out || runtime <= w->runtime_at_out)
		return;
	ran = runtime - w->runtime_at_out;
	now = at_or_after(now, w->off_since);
	end->back_ns = now - w->off_since > ran ? now - ran : w->off_since;
	end->flags |= JBPF_THREAD_END_CAME_BACK;
	end->kstack_err = -116; /* ESTALE: the switch was not seen */
	count(JBPF_CNT_SWITCH_MISSED);
}

/*
 * A thread of a walked JVM off CPU at the end since its switch-out at
 * since (or until it came back unseen, came_back_unseen): the user stack
 * and Java frames walked there (user_walks) are its wait's, since it ran
 * no user code in it; put after the kn kernel frames of end. The record's
 * size, or 0 when it has none.
 */
static __always_inline __u64 walked_stack_at_end(struct jbpf_thread_end *end, struct task_struct *task, __u64 since,
						 __u64 kn)
{
	struct user_walk *uw;
	__u64 un, jn, offset, java_bytes;

	if (!hotspot_walk || !unwind_tables)
		return 0;
	uw = bpf_task_storage_get(&user_walks, task, 0, 0);
	if (!uw || uw->off_since != since)
		return 0;
	un = uw->ustack_len;
	barrier_var(un);
	jn = uw->java_len;
	barrier_var(jn);
	if (un > JBPF_MAX_STACK_DEPTH || jn > JBPF_MAX_JAVA_FRAMES)
		return 0;
	java_bytes = jn * sizeof(struct jbpf_java_frame);
	barrier_var(java_bytes);
	if (java_bytes > JAVA_FRAMES_BYTES)
		return 0;
	barrier_var(kn);
	kn &= JBPF_MAX_STACK_DEPTH;
	if (bpf_probe_read_kernel(&end->ips[kn], un * sizeof(__u64), uw->ips))
		return 0;
	offset = offsetof(struct jbpf_thread_end, ips) + (kn + un) * sizeof(__u64);
	barrier_var(offset);
	offset &= UNWIND_SCRATCH_IPS_BYTES - 1;
	if (bpf_probe_read_kernel((void *)end + offset, java_bytes, uw->java))
		return 0;
	end->ustack_len = un;
	end->java_len = jn;
	end->lock_klass = uw->lock_klass;
	return offset + java_bytes;
}

/*
 * Writes thread tid's entry w of `waits` at the end of the recording to
 * seq, with the thread's name and, when the entry has it off CPU in a wait
 * not otherwise ended, its kernel stack (struct jbpf_thread_end): what
 * userspace needs to close the waits still open, without reading /proc for
 * each thread. task is the thread, or NULL when it is gone. A thread that
 * left its CPU unseen is sent off CPU since then (left_unseen); one that
 * came back unseen, with the latest moment it can have come back
 * (came_back_unseen).
 */
static __always_inline void write_thread_end(struct seq_file *seq, __u32 tid, const struct jbpf_thread_waits *w,
					     struct task_struct *task)
{
	struct jbpf_thread_end *end;
	__u32 zero = 0;
	long kn = 0;
	__u64 size = 0;

	end = bpf_map_lookup_elem(&scratch, &zero);
	if (!end)
		return;
	end->tid = tid;
	end->flags = 0;
	end->waits = *w;
	end->kstack_err = 0;
	end->kstack_len = 0;
	end->ustack_len = 0;
	end->java_len = 0;
	end->lock_klass = 0;
	end->unused = 0;
	end->back_ns = 0;
	__builtin_memset(end->comm, 0, sizeof(end->comm));
	if (!task) {
		end->flags = JBPF_THREAD_END_GONE;
	} else {
		bpf_probe_read_kernel_str(end->comm, sizeof(end->comm), task->comm);
		/* One or the other: the first makes a wait the second would take for one still open. */
		if (!left_unseen(&end->waits, task))
			came_back_unseen(end, task);
		w = &end->waits;
		if (!(end->flags & JBPF_THREAD_END_CAME_BACK) && !w->open_wait &&
		    !(w->flags & (JBPF_THREAD_EXITING | JBPF_THREAD_NEW)) &&
		    (w->off_since || ((w->flags & JBPF_THREAD_SINCE_START) && w->state != JBPF_STATE_RUNNABLE))) {
			kn = bpf_get_task_stack(task, end->ips, sizeof(end->ips), 0);
			if (kn < 0) {
				end->kstack_err = kn;
				kn = 0;
			}
			kn /= sizeof(__u64);
			if (kn > JBPF_MAX_STACK_DEPTH)
				kn = JBPF_MAX_STACK_DEPTH;
			end->kstack_len = kn;
		}
		/* Back unseen too: until it came back it ran no user code. */
		if (w->off_since && !w->open_wait && !(w->flags & (JBPF_THREAD_EXITING | JBPF_THREAD_NEW)))
			size = walked_stack_at_end(end, task, w->off_since, kn);
	}
	if (!size)
		size = offsetof(struct jbpf_thread_end, ips) + kn * sizeof(__u64);
	if (size <= sizeof(struct scratch))
		bpf_seq_write(seq, end, size);
}

/* Every entry of `waits`, by the map's iterator (Linux 6.2: bpf_task_from_pid). */
SEC("iter/bpf_map_elem")
int end_of_waits(struct bpf_iter__bpf_map_elem *ctx)
{
	const __u32 *key = ctx->key;
	const struct jbpf_thread_waits *w = ctx->value;
	struct task_struct *task;

	if (!key || !w)
		return 0;
	task = bpf_task_from_pid(*key);
	if (task && task->tgid != w->tgid) {
		bpf_task_release(task);
		task = NULL;
	}
	write_thread_end(ctx->meta->seq, *key, w, task);
	if (task)
		bpf_task_release(task);
	return 0;
}

/*
 * The same, by the task iterator, for kernels without bpf_task_from_pid
 * or that refuse a map iterator: every live thread with an entry. The
 * entries of threads gone are read from user space (offcpu.c).
 */
SEC("iter/task")
int end_of_waits_by_task(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	const struct jbpf_thread_waits *w;
	__u32 tid;

	if (!task)
		return 0;
	tid = task->pid;
	w = bpf_map_lookup_elem(&waits, &tid);
	if (!w || w->tgid != task->tgid)
		return 0;
	write_thread_end(ctx->meta->seq, tid, w, task);
	return 0;
}

#endif /* JBPF_OFFCPU_END_BPF_H */
