/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * thread_state: where a thread is, for wall-clock and off-CPU profiles.
 *
 * The BPF programs put one in each wait they record (bpf/jbpfprof.h
 * includes this header, so the numbers are the wire format's), and the
 * profile model names them ([running], [sleeping], ...). It stands on the
 * ground floor, with no includes of its own, so that profile/, output/ and
 * the fleet know the states without knowing the kernel's records.
 *
 * RUNNABLE: preempted or woken, waiting for a CPU; SLEEPING: interruptible
 * sleep (futex, nanosleep, pipe or socket read, poll); BLOCKED:
 * uninterruptible sleep, typically disk I/O.
 */
#ifndef JBPF_THREAD_STATE_H
#define JBPF_THREAD_STATE_H

enum jbpf_state {
	JBPF_STATE_RUNNING = 0,
	JBPF_STATE_RUNNABLE = 1,
	JBPF_STATE_SLEEPING = 2,
	JBPF_STATE_BLOCKED = 3,
	JBPF_STATE_NR = 4,
};

#endif /* JBPF_THREAD_STATE_H */
