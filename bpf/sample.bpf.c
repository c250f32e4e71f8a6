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
 * Stacks are read into a per-CPU scratch buffer, kernel frames first and
 * user frames right after them, and only the captured frames are copied to
 * the ring buffer. Nothing is lost silently: every drop or damaged stack
 * increments a counter in `counters` (enum jbpf_counter).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "jbpfprof.h"

/* Set by userspace between open and load; the verifier prunes dead branches. */
const volatile bool filter_by_tgid = false;
const volatile bool thin_ticks = false;
const volatile __u32 keep_threshold = 0; /* keep a tick when prandom < this */

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JBPF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Resized by userspace before load (bpf_map__set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JBPF_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

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

static __always_inline void count(__u32 which)
{
	__u64 *value = bpf_map_lookup_elem(&counters, &which);

	if (value)
		*value += 1;
}

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
 * Reads one stack (flags: 0 kernel, BPF_F_USER_STACK user) into ips and
 * returns its frame count; a failure is recorded in *error and counted.
 */
static __always_inline __u64 read_stack(struct bpf_perf_event_data *ctx, __u64 *ips, __u64 flags,
					__s16 *error, __u32 failed_counter)
{
	long bytes = bpf_get_stack(ctx, ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), flags);
	__u64 n;

	*error = bytes < 0 ? bytes : 0;
	if (bytes < 0) {
		count(failed_counter);
		return 0;
	}
	n = (__u64)bytes / sizeof(__u64);
	return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
}

SEC("perf_event")
int sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct jbpf_sample *sample;
	__u32 zero = 0;
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
	sample->type = JBPF_RECORD_CPU_SAMPLE;
	sample->cpu = bpf_get_smp_processor_id();
	sample->time_ns = bpf_ktime_get_ns();
	sample->tgid = tgid;
	sample->tid = tid;
	bpf_get_current_comm(sample->comm, sizeof(sample->comm));

	/* User frames go right after the kernel ones: only used slots are sent. */
	kn = read_stack(ctx, sample->ips, 0, &sample->kstack_err, JBPF_CNT_KSTACK_FAILED);
	un = read_stack(ctx, &sample->ips[kn], BPF_F_USER_STACK, &sample->ustack_err, JBPF_CNT_USTACK_FAILED);

	sample->kstack_len = kn;
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
