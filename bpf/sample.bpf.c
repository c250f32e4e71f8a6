// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPU sampler: runs on every tick of a per-CPU software cpu-clock perf
 * event, and for ticks that land on a target thread sends one variable-length
 * struct jbpf_sample (kernel and user stacks inline) through a ring buffer.
 *
 * Randomised intervals. A fixed sampling period lines up with periodic work:
 * a loop whose cycle equals the period is always sampled at the same phase.
 * Userspace therefore opens the perf event at a base period b chosen at
 * random for each recording, 0.5 to 0.8 of the mean interval 1/F, and this
 * program keeps each tick with probability b*F (keep_threshold / 2^32).
 * Intervals between kept ticks are then geometric multiples of b with mean
 * exactly 1/F, and because b is drawn at random it shares no period with the
 * workload, so tick phases spread evenly over any cycle the workload has.
 *
 * A second program, on the sched_process_exec raw tracepoint, tells
 * userspace when a target replaces its program, so that addresses sampled
 * afterwards are not looked up in the old program's maps.
 *
 * Java stacks. For a thread of a JVM that runs our agent (java_targets),
 * the program also sends the thread a signal carrying a sequence number, and
 * stores that number in the sample; the agent's handler takes the Java stack
 * with AsyncGetCallTrace and tags it with the same number, so userspace
 * joins each Java stack to exactly its sample. A signal must never cut a
 * sleep short, so a sample taken inside a system call does not signal at
 * once: the thread's number waits in `deferred` and a second program sends
 * the signal when the system call returns, where the Java stack is still
 * the one of the sample. Samples taken during one stay in the kernel share
 * that one signal and its Java stack.
 *
 * Stacks are read into a per-CPU scratch buffer, kernel frames first and
 * user frames right after them, and only the captured frames are copied to
 * the ring buffer. Nothing is lost silently: every drop or damaged stack
 * increments a counter in `counters` (enum jbpf_counter).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shared.bpf.h"

/* Set by userspace between open and load; the verifier prunes dead branches. */
const volatile bool filter_by_tgid = false;
const volatile bool thin_ticks = false;
const volatile __u32 keep_threshold = 0; /* keep a tick when prandom < this */
/* [syscall_entry_lo, syscall_entry_hi): do_syscall_64, from kallsyms; 0 when unknown. */
const volatile __u64 syscall_entry_lo = 0;
const volatile __u64 syscall_entry_hi = 0;

/* Next sequence number for a Java stack signal; 0 means none. */
__u64 next_java_seq = 0;

/*
 * Set by userspace when the recording stops and the scheduler program is
 * detached: from then on a thread found off CPU is no missed switch.
 */
bool waits_stopped = false;

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Threads of those JVMs that userspace found to run no Java (GC and
 * compiler threads): signalling them would cost a signal and a stack walk
 * for nothing, so only one sample in JBPF_NO_JAVA_PROBE still asks.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} no_java_tids SEC(".maps");

/*
 * Processes sampled recently. The first sample of a process not in here
 * wakes the reader at once instead of on its timer: the reader reads a
 * process's memory maps when it first sees it, and a short-lived process
 * may be gone by the next timer tick. LRU, so it never fills up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} seen_tgids SEC(".maps");

#define SAMPLE_MAX_SIZE (sizeof(struct jbpf_sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64))

struct scratch {
	__u8 bytes[SAMPLE_MAX_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * Wake the reader when the ring is getting full, or for a process's first
 * sample (see seen_tgids); otherwise it drains on its own timer. One wakeup
 * per sample would cost more than the sample.
 */
static __always_inline __u64 wakeup_flags(__u32 tgid)
{
	__u64 used = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&events, BPF_RB_RING_SIZE);
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&seen_tgids, &tgid)) {
		bpf_map_update_elem(&seen_tgids, &tgid, &one, BPF_ANY);
		return BPF_RB_FORCE_WAKEUP;
	}
	return used > size / 4 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * Reads one stack (flags: 0 kernel, BPF_F_USER_STACK user), at most depth
 * frames, into ips and returns its frame count; a failure is recorded in
 * *error and counted.
 */
static __always_inline __u64 read_stack(struct bpf_perf_event_data *ctx, __u64 *ips, __u32 depth, __u64 flags,
					__s16 *error, __u32 failed_counter)
{
	long bytes;

	if (depth > JBPF_MAX_STACK_DEPTH)
		depth = JBPF_MAX_STACK_DEPTH;
	bytes = bpf_get_stack(ctx, ips, depth * sizeof(__u64), flags);
	__u64 n;

	*error = bytes < 0 ? bytes : 0;
	if (bytes < 0) {
		count(failed_counter);
		return 0;
	}
	n = (__u64)bytes / sizeof(__u64);
	return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
}

/*
 * Asks the JVM's agent for the Java stack of this sample: a signal now, or
 * at the end of the system call the thread is in (see `deferred`).
 */
static __always_inline void request_java_stack(struct jbpf_sample *sample, const struct jbpf_java_target *jt,
					       __u64 kn)
{
	struct jbpf_syscall_pending *pending;
	__u64 seq;

	if (!bpf_send_signal_task)
		return;
	if (bpf_map_lookup_elem(&no_java_tids, &sample->tid) && bpf_get_prandom_u32() % JBPF_NO_JAVA_PROBE) {
		sample->flags |= JBPF_SAMPLE_NO_JAVA;
		return;
	}
	if (kn && stack_in_syscall(sample->ips, kn, syscall_entry_lo, syscall_entry_hi)) {
		sample->flags |= JBPF_SAMPLE_DEFERRED;
		count(JBPF_CNT_JAVA_DEFERRED);
		pending = bpf_task_storage_get(&deferred, bpf_get_current_task_btf(), 0,
					       BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!pending) {
			sample->signal_err = -16; /* EBUSY: the storage could not be had now */
			count(JBPF_CNT_SIGNAL_FAILED);
			return;
		}
		if (!pending->java_seq)
			pending->java_seq = __sync_fetch_and_add(&next_java_seq, 1) + 1;
		sample->java_seq = pending->java_seq;
		return;
	}
	seq = __sync_fetch_and_add(&next_java_seq, 1) + 1;
	signal_for_java_stack(sample, bpf_get_current_task_btf(), jt->signo, seq);
}

SEC("perf_event")
int sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	const struct jbpf_java_target *jt;
	struct jbpf_sample *sample;
	__u32 zero = 0, depth;
	__u64 kn, un, size;

	count(JBPF_CNT_TICKS);
	if (thin_ticks && bpf_get_prandom_u32() >= keep_threshold)
		return 0;
	/* tid 0 is the idle task: a CPU with nothing to run. */
	if (tid == 0)
		return 0;
	if (filter_by_tgid && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	count(JBPF_CNT_SAMPLES);

	sample = bpf_map_lookup_elem(&scratch, &zero);
	if (!sample)
		return 0;
	sample_header__init(sample, JBPF_RECORD_CPU_SAMPLE, bpf_get_smp_processor_id(), bpf_ktime_get_ns(), tgid,
			    tid);
	bpf_get_current_comm(sample->comm, sizeof(sample->comm));

	kn = read_stack(ctx, sample->ips, JBPF_MAX_STACK_DEPTH, 0, &sample->kstack_err, JBPF_CNT_KSTACK_FAILED);
	sample->kstack_len = kn;
	jt = bpf_map_lookup_elem(&java_targets, &tgid);
	if (jt)
		request_java_stack(sample, jt, kn);
	/*
	 * User frames go right after the kernel ones: only used slots are
	 * sent. With a Java stack coming, only the innermost native frames
	 * are wanted (JBPF_JAVA_USER_DEPTH).
	 */
	depth = sample->java_seq ? JBPF_JAVA_USER_DEPTH : JBPF_MAX_STACK_DEPTH;
	un = read_stack(ctx, &sample->ips[kn], depth, BPF_F_USER_STACK, &sample->ustack_err, JBPF_CNT_USTACK_FAILED);
	if (sample->java_seq && un >= JBPF_JAVA_USER_DEPTH)
		sample->flags |= JBPF_SAMPLE_USER_CUT;
	sample->ustack_len = un;
	size = sizeof(*sample) + (kn + un) * sizeof(__u64);
	if (size > SAMPLE_MAX_SIZE)
		return 0;
	if (bpf_ringbuf_output(&events, sample, size, wakeup_flags(tgid)))
		count(JBPF_CNT_RINGBUF_FULL);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int process_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct jbpf_exec *record;

	if (filter_by_tgid && !bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	/* Its next sample wakes the reader, which then reads the new maps. */
	bpf_map_delete_elem(&seen_tgids, &tgid);
	/* The new program has no handler for our signal: it would die of it. */
	bpf_map_delete_elem(&java_targets, &tgid);
	record = bpf_ringbuf_reserve(&events, sizeof(*record), 0);
	if (!record) {
		count(JBPF_CNT_EXEC_LOST);
		return 0;
	}
	record->type = JBPF_RECORD_EXEC;
	record->tgid = tgid;
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * The user stack of a thread that waited in this system call (see
 * bpf/offcpu.bpf.c): the same as during the wait, since the call does not
 * return to user code in between.
 */
static __always_inline void send_user_stack(void *ctx, __u32 tid, __u64 seq)
{
	struct jbpf_user_stack *record;
	__u32 zero = 0;
	long bytes;
	__u64 n;

	record = bpf_map_lookup_elem(&scratch, &zero);
	if (!record)
		return;
	record->type = JBPF_RECORD_USER_STACK;
	record->tid = tid;
	record->seq = seq;
	record->unused = 0;
	bytes = bpf_get_stack(ctx, record->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
	record->err = bytes < 0 ? bytes : 0;
	n = bytes < 0 ? 0 : (__u64)bytes / sizeof(__u64);
	if (n > JBPF_MAX_STACK_DEPTH)
		n = JBPF_MAX_STACK_DEPTH;
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
	struct jbpf_thread_waits *w = bpf_map_lookup_elem(&waits, &tid);
	struct jbpf_wait_end *end;
	struct jbpf_sample *wait;
	__u32 zero = 0;
	long bytes;
	__u64 n;

	pending->off_since = 0;
	if (waits_stopped || !w || w->off_since != since)
		return;
	count(JBPF_CNT_SWITCH_MISSED);
	w->off_since = 0;
	if (w->open_wait) {
		end = bpf_ringbuf_reserve(&events, sizeof(*end), 0);
		if (end) {
			end->type = JBPF_RECORD_WAIT_END;
			end->tid = tid;
			end->wait_id = w->open_wait;
			end->time_ns = now;
			end->woken_ns = w->woken_at >= since && w->woken_at <= now ? w->woken_at : 0;
			bpf_ringbuf_submit(end, BPF_RB_NO_WAKEUP);
		}
		w->open_wait = 0;
		return;
	}
	wait = bpf_map_lookup_elem(&scratch, &zero);
	if (!wait)
		return;
	sample_header__init(wait, JBPF_RECORD_WAIT, bpf_get_smp_processor_id(), now, tgid, tid);
	wait->state = w->state;
	wait->wait_start_ns = since;
	wait->woken_ns = w->woken_at >= since && w->woken_at <= now ? w->woken_at : 0;
	wait->kstack_err = -116; /* ESTALE: the switch was not seen */
	bpf_get_current_comm(wait->comm, sizeof(wait->comm));
	bytes = bpf_get_stack(ctx, wait->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
	wait->ustack_err = bytes < 0 ? bytes : 0;
	n = bytes < 0 ? 0 : (__u64)bytes / sizeof(__u64);
	if (n > JBPF_MAX_STACK_DEPTH)
		n = JBPF_MAX_STACK_DEPTH;
	wait->ustack_len = n;
	if (bpf_map_lookup_elem(&java_targets, &tgid)) {
		if (!pending->java_seq)
			pending->java_seq = __sync_fetch_and_add(&next_java_seq, 1) + 1;
		wait->java_seq = pending->java_seq;
		wait->flags = JBPF_SAMPLE_DEFERRED;
	}
	if (bpf_ringbuf_output(&events, wait, sizeof(*wait) + n * sizeof(__u64), BPF_RB_NO_WAKEUP))
		count(JBPF_CNT_WAITS_LOST);
}

/*
 * A system call returns: send what it owes the thread (`deferred`), but
 * for a Java stack signal (see syscall_exit). Records from here never wake
 * the reader, which drains on its timer: a wakeup per system call would
 * cost more than the record. Returns the thread's storage, or NULL for a thread that has
 * none (most threads of the host, at the cost of one lookup).
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
	const struct jbpf_java_target *jt;
	struct jbpf_signal_lost *lost;
	__u64 seq;
	int err = -3; /* ESRCH: the JVM left java_targets (exec, or the agent went) */

	pending = syscall_exit_duties(ctx, tgid, tid);
	if (!pending || !pending->java_seq)
		return 0;
	seq = pending->java_seq;
	pending->java_seq = 0;
	jt = bpf_map_lookup_elem(&java_targets, &tgid);
	if (jt && bpf_send_signal_task) {
		err = bpf_send_signal_task(bpf_get_current_task_btf(), jt->signo, PIDTYPE_PID, seq);
		if (!err) {
			count(JBPF_CNT_JAVA_SIGNALS);
			return 0;
		}
	}
	count(JBPF_CNT_SIGNAL_FAILED);
	lost = bpf_ringbuf_reserve(&events, sizeof(*lost), 0);
	if (!lost)
		return 0;
	lost->type = JBPF_RECORD_SIGNAL_LOST;
	lost->error = err;
	lost->seq = seq;
	lost->tgid = tgid;
	lost->tid = tid;
	bpf_ringbuf_submit(lost, BPF_RB_NO_WAKEUP);
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
