/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A switch-in the scheduler program did not see, found on the thread's
 * way back to user mode: by the task-work callback (bpf/deferral.bpf.h)
 * or, on kernels without task work, at system call exit
 * (bpf/syscall_exit.bpf.c). The switch-out owed the thread this check
 * (off_since); if `waits` still has it off CPU since then, its switch-in
 * was never reported, and the wait is ended here, a few microseconds
 * late. What both ways share is here; how each reads the user stack and
 * sends the record is its own.
 */
#ifndef JBPF_LATE_SWITCH_IN_BPF_H
#define JBPF_LATE_SWITCH_IN_BPF_H

#include "shared.bpf.h"

/*
 * Set by userspace when the recording stops and the scheduler program is
 * detached: from then on a thread found off CPU is no missed switch.
 */
bool waits_stopped = false;

/*
 * Thread tid's entry in `waits` if it is still off CPU since since: its
 * wait now ended at now (at_or_after since), counted as a missed switch
 * seen late. NULL when there is nothing to end.
 */
static __always_inline struct jbpf_thread_waits *late_switch_in(__u32 tid, __u64 since, __u64 now)
{
	struct jbpf_thread_waits *w = bpf_map_lookup_elem(&waits, &tid);

	if (waits_stopped || !w || w->off_since != since)
		return NULL;
	count(JBPF_CNT_SWITCH_MISSED);
	count(JBPF_CNT_SWITCH_IN_LATE);
	w->off_since = 0;
	/* On a CPU since about now: a later missed switch-out counts its run from here. */
	w->on_since = now;
	return w;
}

/* The record of w's wait, from since to now: its header, state, times and comm; no kernel stack (gone). */
static __always_inline void late_wait_init(struct jbpf_sample *wait, const struct jbpf_thread_waits *w, __u32 tgid,
					   __u32 tid, __u64 since, __u64 now, __u64 woken)
{
	sample_header__init(wait, JBPF_RECORD_WAIT, bpf_get_smp_processor_id(), now, tgid, tid);
	wait->state = w->state;
	wait->wait_start_ns = since;
	wait->woken_ns = woken;
	wait->kstack_err = -116; /* ESTALE: the switch was not seen */
	bpf_get_current_comm(wait->comm, sizeof(wait->comm));
}

/* A JVM thread's late wait shares the Java signal the thread is owed (*java_seq, numbered if none yet). */
static __always_inline void late_wait_java(struct jbpf_sample *wait, __u32 tgid, __u64 *java_seq)
{
	if (java_target_of(tgid, bpf_get_current_task_btf())) {
		if (!*java_seq)
			*java_seq = new_java_seq();
		wait->java_seq = *java_seq;
		wait->flags = JBPF_SAMPLE_DEFERRED;
	}
}

#endif /* JBPF_LATE_SWITCH_IN_BPF_H */
