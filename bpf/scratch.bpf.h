/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The record being built on this CPU: one per BPF object, a per-CPU array
 * of one entry, since a record is larger than a program's 512 bytes of
 * stack. A program builds the record there and copies the used part into
 * the ring buffer. Programs of one object do not run inside each other on
 * a CPU; the uprobe programs, which can be preempted, guard theirs with a
 * busy flag (bpf/probe_scratch.bpf.h).
 *
 * The includer chooses the size: SCRATCH_BYTES, by default the header and
 * ips within UNWIND_SCRATCH_IPS_BYTES (a mask the verifier follows, from
 * bpf/unwind.bpf.h, included before this) and the Java frames after them;
 * SCRATCH_BUSY adds the busy flag after the bytes.
 */
#ifndef JBPF_SCRATCH_BPF_H
#define JBPF_SCRATCH_BPF_H

#define JAVA_FRAMES_BYTES (JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))

#ifndef SCRATCH_BYTES
#define SCRATCH_BYTES (UNWIND_SCRATCH_IPS_BYTES + JAVA_FRAMES_BYTES)
#endif

struct scratch {
	__u8 bytes[SCRATCH_BYTES];
#ifdef SCRATCH_BUSY
	__u32 busy;
#endif
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* The record being built on this CPU: the walker's too (bpf/unwind.bpf.h). */
static __always_inline struct jbpf_sample *unwind_sample(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

#endif /* JBPF_SCRATCH_BPF_H */
