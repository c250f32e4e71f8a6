// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPU sampler: runs on every tick of a per-CPU software cpu-clock perf
 * event, and for ticks that land on a target thread sends one variable-length
 * struct jbpf_sample (kernel and user stacks inline) through a ring buffer.
 *
 * Randomised intervals. A fixed sampling period lines up with periodic work:
 * a loop whose cycle equals the period is always sampled at the same phase.
 * Userspace therefore opens the perf event at a base period b chosen at
 * random for each recording, 0.9 to 0.97 of the mean interval 1/F, and this
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
 * once: the thread owes it (bpf/deferral.bpf.h), and it is sent when the
 * thread leaves the system call, by a task work callback of this program
 * or, on kernels without BPF task work, by the system call exit program
 * (syscall_exit.bpf.c); the Java stack is still the one of the sample
 * then. Samples taken during one stay in the kernel share that one signal
 * and its Java stack.
 *
 * User stacks. With --unwind tables (the default) the user stack is walked
 * by the unwind tables userspace built from each mapped file's .eh_frame
 * (unwind.bpf.h), with a frame-pointer step wherever code has no table;
 * a process whose tables are not in yet, and every process with
 * --unwind fp, gets bpf_get_stack's frame-pointer walk. The kernel stack
 * is always bpf_get_stack's.
 *
 * Stacks are read into a per-CPU scratch buffer, kernel frames first and
 * user frames right after them, and only the captured frames are copied to
 * the ring buffer. Nothing is lost silently: every drop or damaged stack
 * increments a counter in `counters` (enum jbpf_counter).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "deferral.bpf.h"
#include "shared.bpf.h"
#include "unwind.bpf.h"

/* Set by userspace between open and load; the verifier prunes dead branches. */
const volatile bool filter_by_tgid = false;
const volatile bool thin_ticks = false;
const volatile __u32 keep_threshold = 0; /* keep a tick when prandom < this */
const volatile __u64 base_period_ns = 0;

/*
 * When this CPU's timer last ticked. The timer fires every base period
 * while the CPU runs; a gap of more means it could not: the hypervisor
 * ran something else (steal time) or interrupts were off. The tick that
 * ends the gap samples where the thread stood before it, which says
 * nothing of the time in between, so such samples are counted
 * (JBPF_CNT_SAMPLES_LATE) and the summary reports them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_tick SEC(".maps");

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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

#define SAMPLE_MAX_SIZE                                                                                    \
	(sizeof(struct jbpf_sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64) +                          \
	 JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))

/* The header and ips fit under 4096 bytes (a mask the verifier follows), the Java frames after them. */
_Static_assert(SAMPLE_MAX_SIZE - JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame) <= UNWIND_SCRATCH_IPS_BYTES,
	       "the ips part of a record fits the mask");

#include "scratch.bpf.h"

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
	if (bytes < 0)
		count(failed_counter);
	return stack_frames(bytes, error);
}

/*
 * The user stack into sample->ips after the kn kernel frames: by unwind
 * tables when asked for and the process has them, else by frame pointers.
 */
static __always_inline __u64 read_user_stack(struct bpf_perf_event_data *ctx, struct task_struct *task,
					     struct jbpf_sample *sample, __u32 tgid, __u64 kn, __u32 depth)
{
	__u32 java_len;
	long n;

	if (kn > JBPF_MAX_STACK_DEPTH)
		return 0;
	if (unwind_tables) {
		n = unwind_user_stack(ctx, task, tgid, kn, depth, &java_len);
		sample->java_len = java_len;
		if (n >= 0)
			return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
	}
	return read_stack(ctx, &sample->ips[kn], depth, BPF_F_USER_STACK, &sample->ustack_err,
			  JBPF_CNT_USTACK_FAILED);
}

/*
 * read_user_stack for the sample being built (the per-CPU scratch), as a
 * global function: the verifier checks it once on its own rather than once
 * for each way the program can reach it, whose paths multiply with the
 * unwinder's (24 ms to load the program against 8 ms).
 */
__noinline int user_stack(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 kn, int java_stack_coming)
{
	struct jbpf_sample *sample = unwind_sample();
	/* Constants: the verifier follows each exactly. */
	__u32 depth = java_stack_coming ? JBPF_JAVA_USER_DEPTH : JBPF_MAX_STACK_DEPTH;

	if (!sample || kn > JBPF_MAX_STACK_DEPTH)
		return 0;
	/* No change to kn: a bound the verifier sees on every later use, whatever copies clang keeps. */
	kn &= JBPF_MAX_STACK_DEPTH;
	barrier_var(kn);
	return read_user_stack(ctx, bpf_get_current_task_btf(), sample, tgid, kn, depth);
}

/*
 * Asks the JVM's agent for the Java stack of this sample: a signal now,
 * or when the thread leaves the system call it is in (bpf/deferral.bpf.h).
 */
static __always_inline void request_java_stack(struct jbpf_sample *sample, const struct jbpf_java_target *jt,
					       __u64 kn)
{
	__u64 seq;
	int err;

	if (!bpf_send_signal_task)
		return;
	if (runs_no_java(sample))
		return;
	if (in_system_call(bpf_get_current_task_btf(), sample->ips, kn)) {
		sample->flags |= JBPF_SAMPLE_DEFERRED;
		count(JBPF_CNT_JAVA_DEFERRED);
		err = owe_java_signal(bpf_get_current_task_btf(), new_java_seq(), &seq);
		if (err) {
			sample->signal_err = err;
			count(JBPF_CNT_SIGNAL_FAILED);
			return;
		}
		sample->java_seq = seq;
		return;
	}
	seq = new_java_seq();
	signal_for_java_stack(sample, bpf_get_current_task_btf(), jt->signo, seq);
}

/* Whether this tick came more than half a base period after its time; notes it as the last. */
static __always_inline bool tick_late(void)
{
	__u64 now = bpf_ktime_get_ns(), *last;
	__u32 zero = 0;
	bool late;

	last = bpf_map_lookup_elem(&last_tick, &zero);
	if (!last)
		return false;
	late = *last && now - *last > base_period_ns + base_period_ns / 2;
	*last = now;
	return late;
}

SEC("perf_event")
int sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *current = bpf_get_current_task_btf();
	const struct jbpf_java_target *jt;
	struct jbpf_sample *sample;
	__u32 zero = 0;
	__u64 kn, un, size;
	bool late = tick_late();

	count(JBPF_CNT_TICKS);
	if (thin_ticks && bpf_get_prandom_u32() >= keep_threshold) {
		count(JBPF_CNT_TICKS_THINNED);
		return 0;
	}
	/* tid 0 is the idle task: a CPU with nothing to run. */
	if (tid == 0)
		return 0;
	if (filter_by_tgid && !is_target_task(tgid, current))
		return 0;
	count(JBPF_CNT_SAMPLES);
	if (late)
		count(JBPF_CNT_SAMPLES_LATE);

	sample = bpf_map_lookup_elem(&scratch, &zero);
	if (!sample)
		return 0;
	sample_header__init(sample, JBPF_RECORD_CPU_SAMPLE, bpf_get_smp_processor_id(), bpf_ktime_get_ns(), tgid,
			    tid);
	bpf_get_current_comm(sample->comm, sizeof(sample->comm));

	kn = read_stack(ctx, sample->ips, JBPF_MAX_STACK_DEPTH, 0, &sample->kstack_err, JBPF_CNT_KSTACK_FAILED);
	sample->kstack_len = kn;
	jt = java_target_of(tgid, current);
	if (jt)
		request_java_stack(sample, jt, kn);
	/*
	 * User frames go right after the kernel ones: only used slots are
	 * sent. With a Java stack coming, only the innermost native frames
	 * are wanted (JBPF_JAVA_USER_DEPTH).
	 */
	un = user_stack(ctx, tgid, kn, sample->java_seq != 0);
	if (sample->java_seq && un >= JBPF_JAVA_USER_DEPTH)
		sample->flags |= JBPF_SAMPLE_USER_CUT;
	sample->ustack_len = un;
	size = sizeof(*sample) + (kn + un) * sizeof(__u64);
	if (size > SAMPLE_MAX_SIZE - JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))
		return 0;
	size += java_frames_after_ips(size);
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

	if (filter_by_tgid && !is_target_task(tgid, bpf_get_current_task_btf()))
		return 0;
	/* Its next sample wakes the reader, which then reads the new maps. */
	bpf_map_delete_elem(&seen_tgids, &tgid);
	/* Its unwind tables are the old program's: frame pointers until userspace reads the new maps. */
	bpf_map_delete_elem(&unwind_procs, &tgid);
	/* The new program is another JVM, or none: userspace reads it again. */
	bpf_map_delete_elem(&hotspot_jvms, &tgid);
	/* The new program has no handler for our signal: it would die of it. */
	bpf_map_delete_elem(&java_targets, &tgid);
	record = reserve_counted(sizeof(*record), JBPF_CNT_EXEC_LOST);
	if (!record)
		return 0;
	record->type = JBPF_RECORD_EXEC;
	record->tgid = tgid;
	bpf_ringbuf_submit(record, BPF_RB_NO_WAKEUP);
	return 0;
}
