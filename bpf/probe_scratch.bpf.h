/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The record a uprobe's program builds on its CPU, for the objects whose
 * programs run on uprobes (bpf/nativemem.bpf.c, bpf/vthreads.bpf.c): the
 * header and ips, then the Java frames the walk leaves (bpf/scratch.bpf.h,
 * with its busy flag).
 *
 * A uprobe's program can be preempted (it runs with migration, not
 * preemption, disabled), and another target thread's probe on the same CPU
 * would then build into the same bytes: busy says one is being built, and
 * a second probe drops its record (counted) rather than share it.
 */
#ifndef JBPF_PROBE_SCRATCH_BPF_H
#define JBPF_PROBE_SCRATCH_BPF_H

#define SCRATCH_BUSY
#include "scratch.bpf.h"

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
