/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Types shared by the BPF programs (bpf/) and the profiler (user/).
 *
 * Everything that crosses the kernel boundary is defined here and nowhere
 * else. Only fixed-width types and fixed-size arrays: this header compiles
 * both against vmlinux.h (BPF side) and against <linux/types.h> (userspace).
 */
#ifndef JBPFPROF_H
#define JBPFPROF_H

/*
 * perf_event_open's own ceiling on stack depth (kernel.perf_event_max_stack
 * defaults to 127); bpf_get_stack never returns more frames than this.
 */
#define JBPF_MAX_STACK_DEPTH 127

/* Number of processes -p may name; the BPF tgid filter map has this size. */
#define JBPF_MAX_TARGETS 64

#define JBPF_COMM_LEN 16

/* Ring buffer record types: the first field of every record. */
enum jbpf_record_type {
	JBPF_RECORD_CPU_SAMPLE = 1,
	JBPF_RECORD_EXEC = 2,
	JBPF_RECORD_SIGNAL_LOST = 3,
};

/* Bits of jbpf_sample.flags. */
#define JBPF_SAMPLE_DEFERRED 1u /* its Java stack is taken when the thread leaves its system call */
#define JBPF_SAMPLE_NO_JAVA 2u  /* not signalled: its thread runs no Java (no_java_tids) */
#define JBPF_SAMPLE_USER_CUT 4u /* user stack read only JBPF_JAVA_USER_DEPTH deep (see below) */

/*
 * User frames read for a sample that asks for its Java stack: the Java
 * frames replace every native frame beyond the first in generated code,
 * which is rarely deep, and a JVM's user stack often is (127 frames of
 * interpreter and native code), so walking all of it would be wasted.
 */
#define JBPF_JAVA_USER_DEPTH 48

/*
 * A thread known to run no Java (see no_java_tids) is still signalled once
 * in this many samples, in case it starts to.
 */
#define JBPF_NO_JAVA_PROBE 64

/* Signals the BPF programs may send to a JVM's threads, with the target's chosen number. */
struct jbpf_java_target {
	__u32 signo;
	__u32 unused;
};

/*
 * A signal for a deferred Java stack could not be sent at system call exit:
 * the samples waiting for trace seq will get none.
 */
struct jbpf_signal_lost {
	__u32 type;          /* JBPF_RECORD_SIGNAL_LOST */
	__s32 error;         /* bpf_send_signal_task's error */
	__u64 seq;
	__u32 tgid;
	__u32 tid;
};

/*
 * A target process replaced its program (execve): what was known of its
 * memory maps and name no longer holds. Fixed size.
 */
struct jbpf_exec {
	__u32 type;          /* JBPF_RECORD_EXEC */
	__u32 tgid;
};

/*
 * One CPU sample, variable length: the header is followed by kstack_len
 * kernel addresses, then ustack_len user addresses, innermost frame first.
 * The BPF side only sends the frames it captured, so a shallow stack costs a
 * shallow record.
 */
struct jbpf_sample {
	__u32 type;          /* JBPF_RECORD_CPU_SAMPLE */
	__u32 cpu;
	__u64 time_ns;       /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u32 tgid;          /* process id as the root pid namespace sees it */
	__u32 tid;           /* thread id, same namespace */
	__u16 kstack_len;    /* number of kernel frames that follow */
	__u16 ustack_len;    /* number of user frames after the kernel ones */
	__s16 kstack_err;    /* bpf_get_stack error for the kernel stack, or 0 */
	__s16 ustack_err;    /* same for the user stack */
	char comm[JBPF_COMM_LEN]; /* thread name at the sampled instant */
	/*
	 * For a thread of a JVM running the agent: the value sent with the
	 * signal whose handler takes this sample's Java stack, shared by every
	 * sample of one stay in a system call (JBPF_SAMPLE_DEFERRED). 0 when no
	 * Java stack was asked for, or the signal failed (signal_err).
	 */
	__u64 java_seq;
	__s32 signal_err;    /* bpf_send_signal_task's error, or 0 */
	__u32 flags;         /* JBPF_SAMPLE_* */
	__u64 ips[];         /* kstack_len + ustack_len addresses */
};

/*
 * Loss counters, one slot each in a per-CPU array that userspace sums and
 * reports. Every event the BPF side drops or damages lands in exactly one.
 */
enum jbpf_counter {
	JBPF_CNT_TICKS,          /* perf events seen, before thinning */
	JBPF_CNT_SAMPLES,        /* ticks kept by thinning that matched the filter */
	JBPF_CNT_RINGBUF_FULL,   /* sample dropped: ring buffer had no room */
	JBPF_CNT_KSTACK_FAILED,  /* kernel stack could not be read (sent without it) */
	JBPF_CNT_USTACK_FAILED,  /* user stack could not be read (sent without it) */
	JBPF_CNT_EXEC_LOST,      /* exec record dropped: ring buffer had no room */
	JBPF_CNT_JAVA_SIGNALS,   /* signals sent to JVM threads for their Java stack */
	JBPF_CNT_JAVA_DEFERRED,  /* samples in a system call, their signal deferred to its exit */
	JBPF_CNT_SIGNAL_FAILED,  /* signals that could not be sent (sample kept without Java frames) */
	JBPF_CNT_NR,
};

#endif /* JBPFPROF_H */
