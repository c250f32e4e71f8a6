/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Wakers (--wakers): who woke each recorded wait, and from where. Part of
 * bpf/offcpu.bpf.c, included where what it uses is defined; see
 * docs/architecture.md, "Wakers".
 *
 * A wakeup runs in the waker's own context: the thread that unlocks,
 * signals or writes calls try_to_wake_up itself, which fires sched_waking
 * (not sched_wakeup, which may fire later, on the woken thread's CPU, in
 * whatever runs there). There, with the waker current, its stacks are
 * read as a CPU sample's would be: kernel frames, user frames by unwind
 * tables (frame pointers for a process without them) and a walked JVM's
 * Java frames. A wakeup from an interrupt (a timer, a device, a softirq,
 * whether on an interrupt stack or in ksoftirqd) is told by the kernel
 * stack: a frame in the interrupt entry code or in handle_softirqs. Its
 * kernel frames are kept up to that frame and no user stack is read: the
 * task it interrupted has nothing to do with the wait.
 *
 * Which waits are recorded is decided here, at the wakeup, rather than at
 * the switch-in (switched_in uses the decision): the stack is worth
 * reading only for a wait that will be recorded. The rule is the same, by
 * the length asleep so far, which is the whole sleep: a wait at least
 * full_wait_ns long is recorded, a shorter one with probability length /
 * full_wait_ns. Only sleeping waits have wakers: a preempted thread is
 * not woken, and a blocked one (JBPF_WAIT_OPEN, disk I/O) is recorded at
 * its switch-out.
 *
 * sched_waking fires inside try_to_wake_up with interrupts off, so the
 * program is not preempted while it builds its record in the per-CPU
 * scratch (see send_waker).
 */
#ifndef JBPF_OFFCPU_WAKER_BPF_H
#define JBPF_OFFCPU_WAKER_BPF_H

const volatile bool follow_wakers = false;
/* Where the kernel enters an interrupt (__irqentry_text) and runs softirqs (handle_softirqs); 0: unknown. */
const volatile __u64 irq_entry_lo = 0, irq_entry_hi = 0;
const volatile __u64 softirq_lo = 0, softirq_hi = 0;

struct interrupt_search {
	const __u64 *ips;
	__u32 n;
	__u32 found; /* the interrupt's outermost frame + 1, or 0 */
};

static long find_interrupt_frame(__u64 i, void *ctx)
{
	struct interrupt_search *s = ctx;
	__u64 ip;

	if (i >= s->n || i >= JBPF_MAX_STACK_DEPTH)
		return 1;
	ip = s->ips[i & JBPF_MAX_STACK_DEPTH];
	if ((ip >= irq_entry_lo && ip < irq_entry_hi) || (ip >= softirq_lo && ip < softirq_hi)) {
		s->found = i + 1;
		return 1;
	}
	return 0;
}

/*
 * The kernel frames (kn of them) of an interrupt's wakeup end at its entry:
 * their number then, or 0 for none. Without bpf_loop (before Linux 5.17) a
 * plain bounded loop, which the verifier walks frame by frame.
 */
static __always_inline __u32 interrupt_frames(const __u64 *ips, __u32 kn)
{
	struct interrupt_search s = { .ips = ips, .n = kn };

	if (have_bpf_loop) {
		bpf_loop(JBPF_MAX_STACK_DEPTH, find_interrupt_frame, &s, 0);
		return s.found;
	}
	for (__u32 i = 0; i < JBPF_MAX_STACK_DEPTH; i++)
		if (find_interrupt_frame(i, &s))
			break;
	return s.found;
}

#define WAKER_KERNEL_SIZE (sizeof(struct jbpf_sample) + JBPF_MAX_STACK_DEPTH * sizeof(__u64))

/* The waker's header, into record. */
static __always_inline void waker_header(struct jbpf_sample *record, __u64 seq, __u64 since, __u64 now)
{
	struct task_struct *current = bpf_get_current_task_btf();
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	sample_header__init(record, JBPF_RECORD_WAKER, bpf_get_smp_processor_id(), now, pid_tgid >> 32,
			    (__u32)pid_tgid);
	bpf_get_current_comm(record->comm, sizeof(record->comm));
	record->wait_start_ns = since;
	record->wait_id = seq;
	record->born_ns = current->start_time;
}

/*
 * The rest of a task's waker, whose kn kernel frames are in the scratch
 * record: its user stack and Java frames, and the record sent. A global
 * function, for the verifier.
 */
__noinline int send_task_waker(struct bpf_raw_tracepoint_args *ctx, __u32 kn)
{
	struct task_struct *current = bpf_get_current_task_btf();
	struct jbpf_sample *waker = unwind_sample();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, jn = 0, reason;
	long un = -1;
	__u64 size;

	if (!ctx || !waker || kn > JBPF_MAX_STACK_DEPTH)
		return 0;
	if (unwind_tables)
		un = unwind_task_stack(current, tgid, unwind_jvm(current, tgid), kn, JBPF_MAX_STACK_DEPTH, &jn, &reason);
	if (un < 0) {
		jn = 0;
		barrier_var(kn);
		kn &= JBPF_MAX_STACK_DEPTH;
		un = stack_frames(bpf_get_stack(ctx, &waker->ips[kn], JBPF_MAX_STACK_DEPTH * sizeof(__u64),
						BPF_F_USER_STACK),
				  &waker->ustack_err);
	}
	if (un > JBPF_MAX_STACK_DEPTH)
		un = JBPF_MAX_STACK_DEPTH;
	waker->ustack_len = un;
	waker->java_len = jn;
	size = sizeof(*waker) + (kn + un) * sizeof(__u64);
	size += java_frames_after_ips(size);
	barrier_var(size);
	if (size > WAIT_MAX_SIZE || bpf_ringbuf_output(&events, waker, size, wakeup_flags()))
		count(JBPF_CNT_WAKERS_LOST);
	else
		count(JBPF_CNT_WAKERS_SENT);
	return 0;
}

/*
 * Sends the waker of the wait from since that seq joins it to, woken now
 * by the current thread. Its kernel stack is read into a ring buffer
 * reservation: from an interrupt that is the whole record, and nothing
 * else is touched (the interrupt may have stopped another program of this
 * file halfway through the per-CPU scratch record); from a task, it is
 * copied to the scratch record, where the user stack is walked.
 * try_to_wake_up runs with interrupts off, so nothing stops this program
 * halfway; like the scheduler program, it may still overwrite the scratch
 * record of a program of this file that was preempted while it used it
 * (thread_exit, rebuilding a wait whose switch-in was missed: rare).
 */
static __always_inline void send_waker(struct bpf_raw_tracepoint_args *ctx, __u64 seq, __u64 since, __u64 now)
{
	struct jbpf_sample *record = reserve_counted(WAKER_KERNEL_SIZE, JBPF_CNT_WAKERS_LOST), *waker;
	__u32 in_irq, kn;

	if (!record)
		return;
	waker_header(record, seq, since, now);
	kn = stack_frames(bpf_get_stack(ctx, record->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), 0),
			  &record->kstack_err);
	if (kn > JBPF_MAX_STACK_DEPTH)
		kn = 0;
	in_irq = interrupt_frames(record->ips, kn);
	if (in_irq || !record->tgid) {
		record->flags = JBPF_WAKER_INTERRUPT;
		record->kstack_len = in_irq ? in_irq : kn;
		count(JBPF_CNT_WAKERS_INTERRUPT);
		count(JBPF_CNT_WAKERS_SENT);
		bpf_ringbuf_submit(record, wakeup_flags());
		return;
	}
	waker = unwind_sample();
	if (!waker || bpf_probe_read_kernel(waker, WAKER_KERNEL_SIZE, record)) {
		bpf_ringbuf_discard(record, 0);
		count(JBPF_CNT_WAKERS_LOST);
		return;
	}
	bpf_ringbuf_discard(record, BPF_RB_NO_WAKEUP);
	waker->kstack_len = kn;
	send_task_waker(ctx, kn);
}

/*
 * A thread is being woken. If it is a target's, asleep in a wait that
 * began where the program saw it (or before the thread was seen), the
 * wait is picked or passed over now, and a picked one's waker is sent.
 */
SEC("raw_tp/sched_waking")
int sched_waking(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(p, pid);
	struct jbpf_thread_waits *w;
	__u64 now, length;
	char comm[JBPF_COMM_LEN];

	if (!follow_wakers || !tid || !maybe_followed(tid))
		return 0;
	w = bpf_map_lookup_elem(&waits, &tid);
	if (!w || w->state != JBPF_STATE_SLEEPING || w->open_wait ||
	    (w->flags & (JBPF_THREAD_EXITING | JBPF_THREAD_NEW | JBPF_THREAD_WAKER_PICKED | JBPF_THREAD_WAKER_PASSED)))
		return 0;
	if (!w->off_since && !(w->flags & JBPF_THREAD_SINCE_START))
		return 0;
	now = at_or_after(bpf_ktime_get_ns(), w->off_since);
	/*
	 * As switched_in decides; a wait that began before the thread was seen
	 * is always recorded. The agent's thread's name is read only for a
	 * wait picked: most wakeups are of short waits, passed over.
	 */
	length = now - w->off_since;
	if (!(w->flags & JBPF_THREAD_SINCE_START) && length < full_wait_ns &&
	    (((__u64)bpf_get_prandom_u32() * full_wait_ns) >> 32) >= length) {
		w->flags |= JBPF_THREAD_WAKER_PASSED;
		return 0;
	}
	BPF_CORE_READ_INTO(&comm, p, comm);
	if (is_agent_thread(comm)) {
		w->flags |= JBPF_THREAD_WAKER_PASSED;
		return 0;
	}
	w->flags |= JBPF_THREAD_WAKER_PICKED;
	if (!(w->flags & JBPF_THREAD_SINCE_START) && length < full_wait_ns)
		w->flags |= JBPF_THREAD_WAKER_CHANCE;
	w->waker_seq = new_seq();
	send_waker(ctx, w->waker_seq, w->off_since, now);
	return 0;
}

#endif /* JBPF_OFFCPU_WAKER_BPF_H */
