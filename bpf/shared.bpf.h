/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Maps and helpers that every BPF object of the profiler shares. Each
 * object declares these maps from this one definition; userspace creates
 * them with the first object (sample.bpf.c) and hands the same maps to the
 * others (bpf_map__reuse_fd) before they load, so all programs see one
 * filter, one ring buffer, one Java stack numbering and one set of
 * counters. The list of shared maps is repeated in user/record/loader.c.
 */
#ifndef JBPF_SHARED_BPF_H
#define JBPF_SHARED_BPF_H

#include <bpf/bpf_core_read.h>

#include "jbpfprof.h"
#include "sample_header.h"

/*
 * Processes to follow (with -p); empty and unused with -a. Userspace
 * removes a target when it exits; until then, and in case it is late, a
 * task counts only if its process started when the target did (see
 * is_target_task).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JBPF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct jbpf_target);
} targets SEC(".maps");

/* JVMs whose agent handles our signal: tgid to the signal it chose (see java_target_of). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JBPF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct jbpf_java_target);
} java_targets SEC(".maps");

/*
 * Threads of those JVMs that userspace found to run no Java (GC and
 * compiler threads, the VM's periodic task): signalling them would cost a
 * signal and a stack walk for nothing, so only one CPU sample or wait in
 * JBPF_NO_JAVA_PROBE still asks (runs_no_java).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} no_java_tids SEC(".maps");

/*
 * Whether the thread of sample (a CPU sample or a wait) runs no Java, as
 * far as is known: then it is marked JBPF_SAMPLE_NO_JAVA and not
 * signalled, but for one probe in JBPF_NO_JAVA_PROBE, in case it starts to.
 */
static __always_inline bool runs_no_java(struct jbpf_sample *sample)
{
	/* A key on the stack: Linux 6.1 takes none from a global function's argument. */
	__u32 tid = sample->tid;

	if (!bpf_map_lookup_elem(&no_java_tids, &tid) || !(bpf_get_prandom_u32() % JBPF_NO_JAVA_PROBE))
		return false;
	sample->flags |= JBPF_SAMPLE_NO_JAVA;
	return true;
}

/*
 * Whether the scheduler's run-queue times of task's wait of w say nothing
 * of its wakeup: with EEVDF's delayed dequeue a thread that sleeps stays
 * on its run queue, asleep, until picked or woken, and if the load
 * balancer moves it meanwhile, the move starts its run-queue clock
 * (sched_info.last_queued) while it sleeps. Such a wait (delayed at the
 * switch-out, moved since) is taken as woken at its end: its runnable
 * tail, microseconds, is lost rather than its sleep counted runnable.
 */
static __always_inline bool queue_time_unknown(const struct jbpf_thread_waits *w, struct task_struct *task)
{
	return w->delayed_migrations != ~0ull && task->se.nr_migrations != w->delayed_migrations;
}

/*
 * When a thread back on a CPU (task, the current one) was woken from its
 * wait of w, from since to end: 0 for a wait runnable throughout. The
 * scheduler adds to sched_info.run_delay every stretch a task spends on a
 * run queue when the stretch ends, so its growth since the switch-out is
 * the wait's runnable tail, and no program on sched_wakeup is needed.
 */
static __always_inline __u64 woken_by_run_delay(const struct jbpf_thread_waits *w, struct task_struct *task,
						 __u64 since, __u64 end)
{
	__u64 queued = task->sched_info.run_delay - w->run_delay_at_out;

	if (w->state == JBPF_STATE_RUNNABLE || end < since)
		return 0;
	if (queue_time_unknown(w, task))
		return end;
	return queued < end - since ? end - queued : since;
}

/*
 * When task's process started, in the unit of /proc/PID/stat (see
 * JBPF_CLOCK_TICK_NS). The group leader's: every thread of a process has
 * it, and an exec from another thread hands the leader's start on.
 */
static __always_inline __u64 process_start_ticks(struct task_struct *task)
{
	return BPF_CORE_READ(task, group_leader, start_boottime) / JBPF_CLOCK_TICK_NS;
}

/*
 * Whether task, of process tgid, is of a target: tgid is in `targets` and
 * its process is the one that had tgid when the target was named, not a
 * later process that got the pid after it exited.
 */
static __always_inline bool is_target_task(__u32 tgid, struct task_struct *task)
{
	const struct jbpf_target *target = bpf_map_lookup_elem(&targets, &tgid);

	return target && target->start_ticks == process_start_ticks(task);
}

/*
 * The signal for task's JVM, or NULL: the same check as is_target_task.
 * A process that got a JVM's pid after it exited would die of the signal.
 */
static __always_inline const struct jbpf_java_target *java_target_of(__u32 tgid, struct task_struct *task)
{
	const struct jbpf_java_target *jt = bpf_map_lookup_elem(&java_targets, &tgid);

	return jt && jt->start_ticks == process_start_ticks(task) ? jt : NULL;
}

/*
 * What the end of the current system call owes a thread (a Java stack
 * signal, a user stack read). Task storage, not a hash map: the system
 * call exit program runs for every thread on the host, and for a thread
 * without storage the lookup ends at once; the storage goes with the thread.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct jbpf_syscall_pending);
} deferred SEC(".maps");

/*
 * The same debts on a kernel with BPF task work (6.18 and later; see
 * bpf/deferral.bpf.h), by tid: a task work item must live in a hash,
 * LRU hash or array map value, not in task storage. LRU, so that the
 * entries of threads long gone make room by themselves; task_start tells
 * a thread from a later one given its tid. Only sample.bpf.c and
 * offcpu.bpf.c schedule the work; every object declares the map, like
 * every shared map.
 */
struct jbpf_owed {
	struct jbpf_syscall_pending what; /* java_seq and ustack_seq (off_since is unused here) */
	__u64 task_start;                 /* the thread's start_time: another thread's entry if it differs */
	__u32 scheduled;                  /* a callback is scheduled and has not yet made its last check */
	__u32 unused;
	struct bpf_task_work work;
};

/* Threads with a debt at once, before the oldest entry is reused. */
#define JBPF_OWED_MAX 16384

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JBPF_OWED_MAX);
	__type(key, __u32);
	__type(value, struct jbpf_owed);
} owed SEC(".maps");

/*
 * The scheduler program's view of each target thread, by tid (see
 * offcpu.bpf.c); the system call exit program reads it to catch a switch
 * the scheduler program missed. Resized by userspace before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct jbpf_thread_waits);
} waits SEC(".maps");

/* Resized by userspace before load (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JBPF_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * now, or start if now is before it: the end of a wait that began at
 * start. The scheduler program's times come from the run queue's clock
 * (offcpu.bpf.c, switch_time_ns) and can be a little ahead of
 * bpf_ktime_get_ns, or of another CPU's.
 */
static __always_inline __u64 at_or_after(__u64 now, __u64 start)
{
	return now > start ? now : start;
}

static __always_inline void count(__u32 which)
{
	__u64 *value = bpf_map_lookup_elem(&counters, &which);

	if (value)
		*value += 1;
}

/* size bytes of the ring buffer, or NULL with lost_counter counted: no record is lost without a count. */
static __always_inline void *reserve_counted(__u64 size, __u32 lost_counter)
{
	void *record = bpf_ringbuf_reserve(&events, size, 0);

	if (!record)
		count(lost_counter);
	return record;
}

/* A wait's end, sent for a wait that began with JBPF_WAIT_OPEN. */
static __always_inline void send_wait_end(__u32 tid, __u64 wait_id, __u64 now, __u64 woken)
{
	struct jbpf_wait_end *end = reserve_counted(sizeof(*end), JBPF_CNT_WAITS_LOST);

	if (!end)
		return;
	end->type = JBPF_RECORD_WAIT_END;
	end->tid = tid;
	end->wait_id = wait_id;
	end->time_ns = now;
	end->woken_ns = woken;
	bpf_ringbuf_submit(end, BPF_RB_NO_WAKEUP);
}

/*
 * The last number given to a Java stack signal. A map rather than a
 * global: globals are each object's own, and the CPU sampler and the
 * system call exit program (separate objects) number from one sequence.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} java_seqs SEC(".maps");

/*
 * A new number for a Java stack signal. Never 0, which means none: the
 * lookup of an array's only slot cannot fail, the verifier just wants
 * the check.
 */
static __always_inline __u64 new_java_seq(void)
{
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&java_seqs, &zero);

	return last ? __sync_fetch_and_add(last, 1) + 1 : 0;
}

/*
 * Set by userspace between open and load, from kallsyms; 0 when unknown.
 * [syscall_entry_lo, syscall_entry_hi): do_syscall_64, through which every
 * system call runs; [entry_text_lo, entry_text_hi): the kernel's entry
 * code, where every stack of a thread that entered from user mode ends.
 */
const volatile __u64 syscall_entry_lo = 0;
const volatile __u64 syscall_entry_hi = 0;
const volatile __u64 entry_text_lo = 0;
const volatile __u64 entry_text_hi = 0;

/* The outermost frames of a kernel stack (innermost first) that can hold do_syscall_64. */
#define SYSCALL_FRAMES_AT_BOTTOM 3

/*
 * Whether task, in the kernel with kernel stack ips[0..kn), is inside a
 * system call, where a signal now could cut a sleep short (EINTR): its
 * signal must wait for the call's return (bpf/deferral.bpf.h).
 *
 * The stack tells when it reaches the entry code: a system call's passes
 * through do_syscall_64 just above it, an interrupt's or a fault's does
 * not. But the kernel's unwinder gives up inside code it has no unwind
 * data for (BPF programs, retpoline thunks: a sample of a thread running
 * one of this profiler's raw tracepoint programs inside its own system
 * call), and then the stack is one or two frames long and tells nothing.
 * The register frame of the task's kernel entry tells then: the kernel
 * keeps the system call's number in orig_ax for the whole call, and -1
 * for an interrupt. A fault's error code reads like a number too: such a
 * thread is taken as inside a call, so its signal comes later, never
 * early.
 */
static __always_inline bool in_system_call(struct task_struct *task, const __u64 *ips, __u64 kn)
{
	struct pt_regs *entry;
	__u64 bottom = 0;

	for (int i = 1; i <= SYSCALL_FRAMES_AT_BOTTOM; i++) {
		__u64 at;

		if (kn < (__u64)i)
			break;
		at = kn - i;
		barrier_var(at); /* keeps the bound check on the index itself, for the verifier */
		if (at >= JBPF_MAX_STACK_DEPTH)
			break;
		if (ips[at] >= syscall_entry_lo && ips[at] < syscall_entry_hi)
			return true;
		if (i == 1)
			bottom = ips[at];
	}
	if (bottom >= entry_text_lo && bottom < entry_text_hi)
		return false;
	entry = (struct pt_regs *)bpf_task_pt_regs(task);
	return entry && (long)BPF_CORE_READ(entry, orig_ax) >= 0;
}

/*
 * Sends sig to one thread with a value (kernel 6.13 and later). Weak: on a
 * kernel without it the programs still load, and userspace, which checks
 * for it before attaching an agent, never fills java_targets. Only
 * tracepoint and perf_event programs may call it.
 */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, __u64 value) __ksym __weak;

/*
 * Sends the Java stack signal signo to task, unless task has one pending
 * or is in its handler (where the signal is blocked): -JBPF_EBUSY then,
 * counted. A real-time signal queues, so without this a thread whose
 * handler ran longer than the sampling period (a deep stack, cold caches,
 * a loaded machine) would be signalled faster than it handles signals,
 * never get back to its own code, and hold up every safepoint of its JVM.
 * With it, a thread has at most one signal waiting.
 */
static __always_inline int send_java_signal(struct task_struct *task, __u32 signo, __u64 seq)
{
	__u64 bit = 1ull << ((signo - 1) & 63);

	if ((BPF_CORE_READ(task, blocked.sig[0]) | BPF_CORE_READ(task, pending.signal.sig[0])) & bit) {
		count(JBPF_CNT_SIGNAL_BUSY);
		return -JBPF_EBUSY;
	}
	return bpf_send_signal_task(task, signo, PIDTYPE_PID, seq);
}

/*
 * Signals task now for the Java stack of sample (a CPU sample or a wait):
 * the agent's handler tags its trace with seq, which the sample keeps; on
 * failure the sample keeps the error instead. Both are counted.
 */
static __always_inline void signal_for_java_stack(struct jbpf_sample *sample, struct task_struct *task, __u32 signo,
						  __u64 seq)
{
	int err = send_java_signal(task, signo, seq);

	if (err) {
		sample->signal_err = err;
		if (err != -JBPF_EBUSY)
			count(JBPF_CNT_SIGNAL_FAILED);
		return;
	}
	sample->java_seq = seq;
	count(JBPF_CNT_JAVA_SIGNALS);
}

/*
 * Pays a deferred Java stack signal: called in the thread's own context
 * on its way back to user mode (the system call exit program, or the task
 * work callback), where the Java stack is still the one of the sample and
 * no system call is left to interrupt. A signal that cannot be sent is
 * counted and reported (JBPF_RECORD_SIGNAL_LOST), so that its samples
 * leave the join at once with the reason.
 */
static __always_inline void pay_java_signal(__u32 tgid, __u32 tid, __u64 seq)
{
	struct task_struct *current = bpf_get_current_task_btf();
	const struct jbpf_java_target *jt = java_target_of(tgid, current);
	struct jbpf_signal_lost *lost;
	int err = -3; /* ESRCH: the JVM left java_targets (exec, exit, or the agent went) */

	if (jt && bpf_send_signal_task) {
		err = send_java_signal(current, jt->signo, seq);
		if (!err) {
			count(JBPF_CNT_JAVA_SIGNALS);
			return;
		}
	}
	if (err != -JBPF_EBUSY)
		count(JBPF_CNT_SIGNAL_FAILED);
	lost = bpf_ringbuf_reserve(&events, sizeof(*lost), 0);
	if (!lost)
		return;
	lost->type = JBPF_RECORD_SIGNAL_LOST;
	lost->error = err;
	lost->seq = seq;
	lost->tgid = tgid;
	lost->tid = tid;
	bpf_ringbuf_submit(lost, BPF_RB_NO_WAKEUP);
}

/*
 * The frames bpf_get_stack wrote, from what it returned (bytes, or a
 * negative errno, which goes to *error), at most JBPF_MAX_STACK_DEPTH.
 */
static __always_inline __u64 stack_frames(long bytes, __s16 *error)
{
	__u64 n;

	*error = bytes < 0 ? bytes : 0;
	if (bytes < 0)
		return 0;
	n = (__u64)bytes / sizeof(__u64);
	return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
}

#endif /* JBPF_SHARED_BPF_H */
