/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Waits of JVMs whose Java frames BPF walks (bpf/hotspot.bpf.h): the walk
 * of a thread's user stack and Java frames at its switch-out, kept per
 * thread until its wait takes them. Part of bpf/offcpu.bpf.c, included
 * where what it uses is defined; see docs/architecture.md, "Waits of JVMs
 * walked by BPF".
 */
#ifndef JBPF_OFFCPU_WALK_BPF_H
#define JBPF_OFFCPU_WALK_BPF_H

/*
 * The user stack and Java frames of a thread of a JVM whose Java frames BPF
 * walks, walked at its last switch-out (walk_at_switch_out), for the wait
 * that began there: a recorded wait gets them at its switch-in, and a wait
 * still going on at the end of the recording from end_of_waits, since the
 * thread has run no user code since. off_since names the switch-out; a
 * wait that began at another moment (a switch-out not seen, rebuilt) does
 * not take them. Task storage: it goes with the thread, about 9 KiB each,
 * made at a thread's first switch-out.
 */
struct user_walk {
	__u64 off_since;     /* the switch-out it was walked at; 0: none */
	__u64 lock_klass;    /* the class of the monitor it waits for (contended_klass), or 0 */
	__u16 ustack_len;
	__u16 java_len;
	__u32 unused;
	__u64 ips[JBPF_MAX_STACK_DEPTH];
	struct jbpf_java_frame java[JBPF_MAX_JAVA_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct user_walk);
} user_walks SEC(".maps");

/*
 * The class (Klass *) of the monitor the current thread, tid of a walked
 * JVM, waits to enter or waits on: its JavaThread (java_threads) names
 * the monitor, the monitor its object, the object its compressed class.
 * 0 when it waits for none, or any of it cannot be read.
 */
const volatile bool lock_classes = false; /* -e lock: read contended_klass */

static __always_inline __u64 contended_klass(const struct jbpf_hotspot_jvm *jvm, __u32 tid)
{
	__u64 *jt, monitor = 0, handle = 0, oop = 0;
	__u32 narrow = 0;

	if (!lock_classes || !(jvm->flags & JBPF_HOTSPOT_LOCKS))
		return 0;
	jt = bpf_map_lookup_elem(&java_threads, &tid);
	if (!jt)
		return 0;
	if (bpf_probe_read_user(&monitor, sizeof(monitor), (void *)(*jt + jvm->thread_pending_monitor)) || !monitor)
		if (bpf_probe_read_user(&monitor, sizeof(monitor), (void *)(*jt + jvm->thread_waiting_monitor)) ||
		    !monitor)
			return 0;
	if (bpf_probe_read_user(&handle, sizeof(handle), (void *)(monitor + jvm->monitor_object)) || !handle ||
	    bpf_probe_read_user(&oop, sizeof(oop), (void *)handle) || !oop ||
	    bpf_probe_read_user(&narrow, sizeof(narrow), (void *)(oop + jvm->oop_klass)) || !narrow)
		return 0;
	return jvm->klass_base + ((__u64)narrow << (jvm->klass_shift & 63));
}

/*
 * The current thread, of process tgid, switches out at now: if its JVM's
 * Java frames are walked by BPF (hotspot_jvms, and no agent: a JVM with
 * one keeps the signal), its user stack is walked now, from the user
 * registers it saved when it entered the kernel, by unwind tables and
 * through HotSpot's frames, into its user_walks entry. The switch-out is
 * the one moment its own address space is loaded while the wait lasts:
 * no signal, no deferral. A global function, for the verifier.
 */
__noinline int walk_at_switch_out(__u32 tgid, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct jbpf_sample *sample = unwind_sample();
	const struct jbpf_hotspot_jvm *jvm;
	struct java_frames *jf;
	struct user_walk *uw;
	__u32 zero = 0, jn, reason;
	__u64 java_bytes;
	long n;

	if (!hotspot_walk || !unwind_tables || !sample)
		return 0;
	jvm = unwind_jvm(task, tgid);
	if (!jvm || java_target_of(tgid, task))
		return 0;
	uw = bpf_task_storage_get(&user_walks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!uw)
		return 0;
	uw->off_since = 0;
	/* Into the scratch record's ips from 0: nothing is being built there now. */
	n = unwind_task_stack(task, tgid, jvm, 0, JBPF_MAX_STACK_DEPTH, &jn, &reason);
	if (n < 0)
		return 0;
	/* Checked where they are used, whatever copies clang keeps: the verifier follows these. */
	barrier_var(n);
	if (n > JBPF_MAX_STACK_DEPTH)
		return 0;
	java_bytes = (__u64)jn * sizeof(struct jbpf_java_frame);
	barrier_var(java_bytes);
	if (java_bytes > JAVA_FRAMES_BYTES)
		return 0;
	jf = bpf_map_lookup_elem(&java_scratch, &zero);
	if (!jf || bpf_probe_read_kernel(uw->ips, n * sizeof(__u64), sample->ips) ||
	    bpf_probe_read_kernel(uw->java, java_bytes, jf))
		return 0;
	uw->ustack_len = n;
	uw->java_len = jn;
	uw->lock_klass = contended_klass(jvm, (__u32)bpf_get_current_pid_tgid());
	uw->off_since = now;
	return 1;
}

/*
 * The wait being built in the scratch record, of thread tid, from since,
 * with kn kernel frames: the user stack and Java frames walked at its
 * switch-out, put after the kernel frames. The record's size, or 0 when
 * the thread has none for that switch-out (the caller reads its user stack
 * the other ways). A global function, for the verifier.
 */
__noinline __u32 walked_user_stack(__u32 tid, __u64 since, __u32 kn)
{
	struct jbpf_sample *wait = unwind_sample();
	struct task_struct *task;
	struct user_walk *uw;
	__u64 un, jn, offset, java_bytes;

	if (!hotspot_walk || !unwind_tables || !wait || !since || kn > JBPF_MAX_STACK_DEPTH)
		return 0;
	task = switching_task_get(tid);
	if (!task)
		return 0;
	uw = bpf_task_storage_get(&user_walks, task, 0, 0);
	switching_task_put(task);
	if (!uw || uw->off_since != since)
		return 0;
	/* Checks and masks the verifier follows, whatever copies of the values clang keeps. */
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
	if (bpf_probe_read_kernel(&wait->ips[kn], un * sizeof(__u64), uw->ips))
		return 0;
	offset = sizeof(*wait) + (kn + un) * sizeof(__u64);
	barrier_var(offset);
	offset &= UNWIND_SCRATCH_IPS_BYTES - 1;
	if (bpf_probe_read_kernel((void *)wait + offset, java_bytes, uw->java))
		return 0;
	wait->ustack_len = un;
	wait->ustack_err = 0;
	wait->java_len = jn;
	wait->lock_klass = uw->lock_klass;
	return offset + java_bytes;
}

/*
 * The current thread of a walked JVM is back in user mode while `waits`
 * still has it off CPU since since: its switch-in was not seen
 * (check_switched_in). Its wait is sent from here, straight into the ring
 * buffer (a task work callback may be preempted: the per-CPU scratch is
 * not its own), with the user stack and Java frames walked at that
 * switch-out and no kernel stack. false when it has none for that
 * switch-out: the caller reads its user stack itself.
 */
static bool walked_wait_at_return(__u32 tgid, __u32 tid, __u64 since, __u64 now, __u64 woken, __u32 state)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct jbpf_sample *wait;
	struct user_walk *uw;
	__u64 un, jn, offset, java_bytes;

	if (!hotspot_walk || !unwind_tables || !since)
		return false;
	uw = bpf_task_storage_get(&user_walks, task, 0, 0);
	if (!uw || uw->off_since != since)
		return false;
	un = uw->ustack_len;
	barrier_var(un);
	jn = uw->java_len;
	barrier_var(jn);
	if (un > JBPF_MAX_STACK_DEPTH || jn > JBPF_MAX_JAVA_FRAMES)
		return false;
	java_bytes = jn * sizeof(struct jbpf_java_frame);
	barrier_var(java_bytes);
	if (java_bytes > JAVA_FRAMES_BYTES)
		return false;
	/* Reserved at full size: the verifier follows constant sizes only. */
	wait = reserve_counted(WAIT_MAX_SIZE, JBPF_CNT_WAITS_LOST);
	if (!wait)
		return true;
	sample_header__init(wait, JBPF_RECORD_WAIT, bpf_get_smp_processor_id(), now, tgid, tid);
	wait->state = state;
	wait->wait_start_ns = since;
	wait->woken_ns = woken;
	wait->kstack_err = -116; /* ESTALE: the switch was not seen */
	bpf_get_current_comm(wait->comm, sizeof(wait->comm));
	offset = sizeof(*wait) + un * sizeof(__u64);
	barrier_var(offset);
	offset &= UNWIND_SCRATCH_IPS_BYTES - 1;
	if (bpf_probe_read_kernel(wait->ips, un * sizeof(__u64), uw->ips) ||
	    bpf_probe_read_kernel((void *)wait + offset, java_bytes, uw->java)) {
		wait->ustack_err = -14; /* EFAULT */
	} else {
		wait->ustack_len = un;
		wait->java_len = jn;
		wait->lock_klass = uw->lock_klass;
	}
	bpf_ringbuf_submit(wait, BPF_RB_NO_WAKEUP);
	count(JBPF_CNT_WAITS_SENT);
	return true;
}

#endif /* JBPF_OFFCPU_WALK_BPF_H */
