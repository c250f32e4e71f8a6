/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The record a uprobe's program builds on its CPU, for the objects whose
 * programs run on uprobes (bpf/nativemem.bpf.c, bpf/vthreads.bpf.c): the
 * header and ips, then the Java frames the walk leaves (bpf/unwind.bpf.h's
 * unwind_sample, which they define by including this).
 *
 * A uprobe's program can be preempted (it runs with migration, not
 * preemption, disabled), and another target thread's probe on the same CPU
 * would then build into the same bytes: busy says one is being built, and
 * a second probe drops its record (counted) rather than share it.
 */
#ifndef JBPF_PROBE_SCRATCH_BPF_H
#define JBPF_PROBE_SCRATCH_BPF_H

#define JAVA_FRAMES_BYTES (JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))

struct scratch {
	__u8 bytes[UNWIND_SCRATCH_IPS_BYTES + JAVA_FRAMES_BYTES];
	__u32 busy;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline struct jbpf_sample *unwind_sample(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&scratch, &zero);
}

/* This CPU's record, now this probe's to build: NULL when another probe's is being built (busy_counter counted). */
static __always_inline struct jbpf_sample *probe_scratch_claim(__u32 busy_counter)
{
	struct scratch *own = (struct scratch *)unwind_sample();

	if (!own)
		return NULL;
	if (own->busy) {
		count(busy_counter);
		return NULL;
	}
	own->busy = 1;
	return (struct jbpf_sample *)own;
}

/* The record claimed is built and sent (or dropped): the next probe may build. */
static __always_inline void probe_scratch_release(struct jbpf_sample *sample)
{
	((struct scratch *)sample)->busy = 0;
}

#endif /* JBPF_PROBE_SCRATCH_BPF_H */
