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

#include "hotspot.h"
/* The thread states (enum jbpf_state), which the profile model shares. */
#include "../common/thread_state.h"

/*
 * perf_event_open's own ceiling on stack depth (kernel.perf_event_max_stack
 * defaults to 127); bpf_get_stack never returns more frames than this.
 */
#define JBPF_MAX_STACK_DEPTH 127

/* Number of processes -p may name; the BPF tgid filter map has this size. */
#define JBPF_MAX_TARGETS 64

#define JBPF_COMM_LEN 16
/* EBUSY, which BPF code cannot take from errno.h: a Java stack signal not sent (signal_err). */
#define JBPF_EBUSY 16

/*
 * The name of the agent's own thread in a JVM (jvmti-stub/channel.c names
 * it so, and HotSpot gives the kernel thread the Java name). Its waits are
 * the profiler's, not the application's: the wall-clock programs count its
 * time but record none of its waits (no stacks, no Java stack signal).
 */
#define JBPF_AGENT_THREAD_COMM "jbpfprof agent"

/* Ring buffer record types: the first field of every record. */
enum jbpf_record_type {
	JBPF_RECORD_CPU_SAMPLE = 1,
	JBPF_RECORD_EXEC = 2,
	JBPF_RECORD_SIGNAL_LOST = 3,
	JBPF_RECORD_WAIT = 4,        /* an off-CPU interval: struct jbpf_sample with state != RUNNING */
	JBPF_RECORD_WAIT_END = 5,    /* struct jbpf_wait_end */
	JBPF_RECORD_USER_STACK = 6,  /* struct jbpf_user_stack */
	JBPF_RECORD_THREAD_EXIT = 7, /* struct jbpf_thread_exit */
	JBPF_RECORD_UNWIND_MISS = 8, /* struct jbpf_unwind_miss */
	JBPF_RECORD_NATIVE_ALLOC = 9,   /* a sampled allocation: struct jbpf_sample with alloc_bytes */
	JBPF_RECORD_NATIVE_ADDRESS = 10, /* struct jbpf_native_address (--leaks) */
	JBPF_RECORD_NATIVE_FREE = 11,   /* struct jbpf_native_free (--leaks) */
	JBPF_RECORD_WAKER = 12,      /* who woke a recorded wait (--wakers): struct jbpf_sample, see below */
	/*
	 * The time a virtual thread spent unmounted (bpf/vthreads.bpf.c): a
	 * struct jbpf_sample from wait_start_ns (the freeze) to time_ns (the
	 * mount), tid the carrier that mounts it, with only Java frames: its
	 * frozen ones down to its marker. JBPF_WAIT_SAMPLED: shorter than the
	 * wait interval, picked with probability length / interval;
	 * JBPF_WAIT_UNKNOWN_START: unmounted before the probes (wait_start_ns 0).
	 */
	JBPF_RECORD_VTHREAD_WAIT = 13,
};

/* Unmounted virtual threads noted at once, over all targets (bpf/vthreads.bpf.c `unmounted`). */
#define JBPF_MAX_UNMOUNTED 262144

/* Bits of jbpf_sample.flags. */
#define JBPF_SAMPLE_DEFERRED 1u /* its Java stack is taken when the thread leaves its system call */
#define JBPF_SAMPLE_NO_JAVA 2u  /* not signalled: its thread runs no Java (no_java_tids) */
#define JBPF_SAMPLE_USER_CUT 4u /* user stack read only JBPF_JAVA_USER_DEPTH deep (see below) */
/* Bits for JBPF_RECORD_WAIT only: */
#define JBPF_WAIT_OPEN 8u        /* taken at switch-out; its end comes in a jbpf_wait_end with wait_id */
#define JBPF_WAIT_UNKNOWN_START 16u /* off CPU since before the program saw the thread (see born_ns) */
#define JBPF_WAIT_SAMPLED 32u    /* shorter than the full-wait threshold, picked at random (see offcpu.bpf.c) */
#define JBPF_WAIT_NEW_THREAD 64u /* a new thread waiting for its first run: no stacks */
#define JBPF_WAIT_NO_TASK 128u   /* the thread could not be looked up: no kernel stack */
#define JBPF_WAIT_WAKER 256u     /* its waker was sent before it, in a JBPF_RECORD_WAKER */
/* A virtual thread's time unmounted, from a JBPF_RECORD_VTHREAD_WAIT (userspace sets it: user/record/wall.c). */
#define JBPF_WAIT_UNMOUNTED 1024u
/*
 * Bits for JBPF_RECORD_WAKER only. A waker is the thread that woke a wait
 * about to be recorded (--wakers, bpf/offcpu_waker.bpf.h): a struct
 * jbpf_sample with the waker's tgid, tid, comm, born_ns and stacks (kernel,
 * user, Java frames), taken at the wakeup in its own context; time_ns the
 * wakeup, wait_start_ns the woken wait's start (0 for one that began before
 * the thread was seen) and wait_id a number of its own, which the wait it
 * woke (JBPF_WAIT_WAKER) carries in its wait_id. Woken from an interrupt,
 * it has only the interrupt's kernel frames, and no user stack.
 */
#define JBPF_WAKER_INTERRUPT 512u /* woken from a hardware interrupt or a softirq */

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

/*
 * A pid names a process only while it lives: once it exits, the pid goes to
 * the next process that needs one, of any user. So every map keyed by a
 * target's tgid also holds when that process started, and the programs act
 * on a task only if its process (its group leader) started then. The unit
 * is the one /proc/PID/stat gives (field 22), which is how userspace learns
 * it: clock ticks (USER_HZ, 100 on every architecture built) since boot,
 * i.e. the leader's start_boottime divided by JBPF_CLOCK_TICK_NS. A tick is
 * 10 ms; a pid cannot come round again within one.
 */
#define JBPF_USER_HZ 100
#define JBPF_CLOCK_TICK_NS (1000000000ull / JBPF_USER_HZ)

/* A process to follow (the `targets` map, by tgid). */
struct jbpf_target {
	__u64 start_ticks;   /* its start, see JBPF_CLOCK_TICK_NS */
};

/* Signals the BPF programs may send to a JVM's threads, with the target's chosen number. */
struct jbpf_java_target {
	__u32 signo;
	__u32 unused;
	__u64 start_ticks;   /* the JVM's start, see JBPF_CLOCK_TICK_NS */
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
	__s32 signal_err;    /* bpf_send_signal_task's error, -JBPF_EBUSY when not sent (send_java_signal), or 0 */
	__u32 flags;         /* JBPF_SAMPLE_*, JBPF_WAIT_* */
	__u32 state;         /* enum jbpf_state: RUNNING for a CPU sample */
	/*
	 * Java frames walked by BPF (bpf/hotspot.h): java_len struct
	 * jbpf_java_frame follow the ips, innermost first.
	 */
	__u16 java_len;
	__u16 unused;
	/*
	 * A wait (JBPF_RECORD_WAIT) lasts from wait_start_ns to time_ns. A
	 * thread of a JVM whose Java frames BPF walks carries the user stack
	 * and Java frames walked at its switch-out. Any other thread's user
	 * stack, when it waited in a system call, is read when the call
	 * returns and comes in a jbpf_user_stack with ustack_seq.
	 */
	union {
		__u64 wait_start_ns; /* 0 with JBPF_WAIT_UNKNOWN_START */
		__u64 alloc_bytes;   /* JBPF_RECORD_NATIVE_ALLOC: the bytes asked for */
	};
	__u64 born_ns;       /* the thread's start time (CLOCK_MONOTONIC) */
	__u64 wait_id;       /* with JBPF_WAIT_OPEN: the jbpf_wait_end that ends it */
	__u64 ustack_seq;    /* nonzero: the user stack follows in a jbpf_user_stack */
	/*
	 * When a sleeping or blocked thread was woken: from then to time_ns it
	 * was runnable, waiting for a CPU. 0 when not seen (or not asleep).
	 */
	__u64 woken_ns;
	/*
	 * A wait of a thread of a JVM whose Java frames BPF walks: the class
	 * (Klass *) of the monitor it waited to enter, or waited on, read at
	 * its switch-out (bpf/offcpu_walk.bpf.h); 0 when none or unknown.
	 */
	__u64 lock_klass;
	__u64 ips[];         /* kstack_len + ustack_len addresses */
};

/*
 * The end of a JBPF_WAIT_OPEN wait, when its thread got a CPU again; time_ns
 * 0 when that moment was missed (the wait is then dropped, and counted).
 */
struct jbpf_wait_end {
	__u32 type;          /* JBPF_RECORD_WAIT_END */
	__u32 tid;
	__u64 wait_id;
	__u64 time_ns;
	__u64 woken_ns;      /* as in jbpf_sample */
};

/*
 * The user stack of a thread that waited inside a system call, read as the
 * call returned (the user stack cannot change during the call). Every wait
 * of that call with this ustack_seq gets these frames. Variable length.
 */
struct jbpf_user_stack {
	__u32 type;          /* JBPF_RECORD_USER_STACK */
	__u32 tid;
	__u64 seq;
	__u16 len;           /* user frames that follow */
	__s16 err;           /* bpf_get_stack's error, or 0 */
	__u32 unused;
	__u64 ips[];
};

/*
 * Per thread, what the scheduler program knows (the `waits` map, by tid).
 * Userspace seeds it for threads alive at the start and reads it at the
 * end; a thread's entry leaves with a jbpf_thread_exit.
 */
struct jbpf_thread_waits {
	__u64 off_since;     /* when it left the CPU; 0 while on a CPU or unknown */
	__u64 run_delay_at_out; /* its time on run queues (sched_info.run_delay) at its last switch-out seen */
	__u64 nvcsw_at_out;  /* its voluntary switches (nvcsw) then, the one seen included */
	__u64 delayed_migrations; /* se.nr_migrations then if it left asleep but on its run queue, else ~0 */
	__u64 on_since;      /* its last switch-in seen (or found late: check_switched_in); 0 unknown */
	__u64 runtime_at_out;/* its CPU time (se.sum_exec_runtime) at its last switch-out seen */
	__u64 open_wait;     /* wait_id of a JBPF_WAIT_OPEN wait not yet ended */
	__u64 sampled_out_ns[JBPF_STATE_NR]; /* by state, time in short waits not picked (no record) */
	__u64 filtered_ns;   /* time in waits dropped by --min-block / --max-block */
	__u32 state;         /* enum jbpf_state of the current wait */
	__u32 tgid;
	__u32 flags;         /* JBPF_THREAD_* */
	__u32 check_in;      /* its last wait was long: owe the next one a switch-in check (offcpu.bpf.c) */
	__u64 waker_seq;     /* with JBPF_THREAD_WAKER_PICKED: the number joining its wait to its waker */
};
#define JBPF_THREAD_SINCE_START 1u /* seeded by userspace; not yet seen by the program */
#define JBPF_THREAD_NEW 2u         /* created during the recording, not yet run */
#define JBPF_THREAD_EXITING 4u     /* exiting: its life is over, nothing more is recorded */
/* With --wakers, the current wait was picked (or passed over) at its wakeup, where its waker is read. */
#define JBPF_THREAD_WAKER_PICKED 8u
#define JBPF_THREAD_WAKER_PASSED 16u
#define JBPF_THREAD_WAKER_CHANCE 32u /* picked by chance: its sleep was shorter than the full-wait threshold */

/* A target's thread exits (sched_process_exit); its totals go with it. */
struct jbpf_thread_exit {
	__u32 type;          /* JBPF_RECORD_THREAD_EXIT */
	__u32 tid;
	__u32 tgid;
	__u32 unused;
	__u64 time_ns;
	struct jbpf_thread_waits waits;
};

/*
 * What a system call's exit owes a thread (the `deferred` task storage):
 * a signal for its Java stack, a read of its user stack, or both; and a
 * check that the scheduler program saw the thread come back (off_since).
 */
struct jbpf_syscall_pending {
	__u64 java_seq;      /* signal the JVM's handler with this number */
	__u64 ustack_seq;    /* send a jbpf_user_stack with this number */
	__u64 off_since;     /* its last switch-out, as `waits` had it; 0 once checked */
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
	JBPF_CNT_SWITCHES,       /* context switches of target threads (wall and off-CPU modes) */
	JBPF_CNT_WAITS_SENT,     /* waits sent with their stacks */
	JBPF_CNT_WAITS_LOST,     /* waits, ends or user stacks dropped: ring buffer full */
	JBPF_CNT_THREADS_FULL,   /* threads not followed: the waits map was full */
	JBPF_CNT_SWITCH_MISSED,  /* a thread's switch in or out was never seen (see offcpu.bpf.c) */
	/*
	 * User stacks of CPU samples with --unwind tables, each counted once:
	 * walked wholly by unwind tables, or by the first reason the walk
	 * fell back to frame pointers or ended early (bpf/unwind.bpf.h).
	 */
	JBPF_CNT_UNWIND_TABLES,      /* every frame by tables, to the outermost */
	JBPF_CNT_UNWIND_NO_PROCESS,  /* no tables for the process yet (or a pc in a mapping not yet read) */
	JBPF_CNT_UNWIND_NO_INFO,     /* a pc in a file's mapping where its file has no unwind info */
	JBPF_CNT_UNWIND_STOP,        /* a row the walker cannot follow (JBPF_CFA_STOP) */
	JBPF_CNT_UNWIND_READ,        /* a read of the user stack failed: the walk ended there */
	JBPF_CNT_UNWIND_DEPTH,       /* the stack was deeper than the walk goes */
	JBPF_CNT_UNWIND_MISS_LOST,   /* a pc in an unknown mapping not reported: ring buffer full */
	JBPF_CNT_UNWIND_ANON,        /* a pc in code that is no file's: JIT (Java, perf-map code), anonymous memory */
	/*
	 * Of the waits whose switch-in was not seen (JBPF_CNT_SWITCH_MISSED):
	 * ended when the thread returned to user mode, with its user stack
	 * (bpf/deferral.bpf.h check_switched_in, syscall_exit.bpf.c), or
	 * only at its next switch-out, sent without stacks.
	 */
	JBPF_CNT_SWITCH_IN_LATE,
	JBPF_CNT_WAIT_NO_STACKS,
	JBPF_CNT_TICKS_THINNED,  /* of JBPF_CNT_TICKS, dropped by thinning (see cpu_sampler.c) */
	JBPF_CNT_SAMPLES_LATE,   /* of JBPF_CNT_SAMPLES, taken on a tick more than half a base period late */
	JBPF_CNT_UNWIND_JAVA_STOP, /* a walk of HotSpot's frames ended early: its last Java frame says why */
	JBPF_CNT_SIGNAL_BUSY,    /* Java stack signals not sent: the thread still had one pending or in its handler */
	/* -e nativemem (bpf/nativemem.bpf.c): */
	JBPF_CNT_NATIVE_CALLS,   /* allocation calls of targets seen (nested ones not counted) */
	JBPF_CNT_NATIVE_SAMPLED, /* of them, sampled */
	JBPF_CNT_NATIVE_LOST,    /* sampled, not sent: ring buffer full */
	JBPF_CNT_NATIVE_BUSY,    /* sampled, not sent: the CPU's record was being built by a preempted call */
	JBPF_CNT_NATIVE_UNTRACKED, /* sampled, address not followed to its free: live table full */
	JBPF_CNT_NATIVE_FREES_LOST, /* frees (or addresses) of sampled allocations not sent: ring buffer full */
	JBPF_CNT_WAKERS_SENT,    /* wakers of recorded waits sent (--wakers) */
	JBPF_CNT_WAKERS_LOST,    /* wakers not sent: ring buffer full */
	JBPF_CNT_WAKERS_INTERRUPT, /* of those sent, woken from an interrupt */
	/* Virtual threads' unmounted time (bpf/vthreads.bpf.c): */
	JBPF_CNT_VTHREAD_UNMOUNTS, /* freezes of virtual threads seen */
	JBPF_CNT_VTHREAD_PINNED,   /* of them, failed: the thread was pinned, and stayed mounted */
	JBPF_CNT_VTHREAD_MOUNTS,   /* mounts seen */
	JBPF_CNT_VTHREAD_UNKNOWN,  /* freezes or mounts whose carrier's _vthread was no VirtualThread (JDK 21-23) */
	JBPF_CNT_VTHREAD_WAITS,    /* waits sent */
	JBPF_CNT_VTHREAD_NO_STACK, /* of them, without frames: no frozen frames found */
	JBPF_CNT_VTHREAD_LOST,     /* waits not sent: ring buffer full */
	JBPF_CNT_VTHREAD_BUSY,     /* waits not sent: the CPU's record was being built by a preempted probe */
	JBPF_CNT_NR,
};

/*
 * Native memory (-e nativemem, bpf/nativemem.bpf.c): what each uprobe is
 * on, its attach cookie. MEMALIGN covers aligned_alloc too (the same
 * arguments). MMAP and MUNMAP are the C library's: anonymous memory
 * mapped by the program itself.
 */
enum jbpf_native_fn {
	JBPF_NATIVE_MALLOC = 1,
	JBPF_NATIVE_CALLOC,
	JBPF_NATIVE_REALLOC,
	JBPF_NATIVE_POSIX_MEMALIGN,
	JBPF_NATIVE_MEMALIGN,
	JBPF_NATIVE_VALLOC,
	JBPF_NATIVE_PVALLOC,
	JBPF_NATIVE_FREE,
	JBPF_NATIVE_MMAP,
	JBPF_NATIVE_MUNMAP,
	JBPF_NATIVE_FN_NR,
};

/*
 * -e nativemem: where a process's allocator and C library have their
 * code (their executable mappings, [lo, hi)), keyed by tgid: an mmap
 * called from there is the allocator's own (a large block, an arena) or
 * the library's (a thread's stack), and is not counted as the program's.
 */
#define JBPF_NATIVE_LIBRARIES 2
struct jbpf_native_text {
	__u64 lo[JBPF_NATIVE_LIBRARIES];
	__u64 hi[JBPF_NATIVE_LIBRARIES];
};

/*
 * With --leaks: where the allocation sampled at time_ns by thread tid
 * (its JBPF_RECORD_NATIVE_ALLOC) put its memory, sent as the call
 * returns; addr 0 when it failed. TRACKED: its free will be reported
 * (a jbpf_native_free); otherwise the live table was full.
 */
struct jbpf_native_address {
	__u32 type;          /* JBPF_RECORD_NATIVE_ADDRESS */
	__u32 tid;
	__u32 tgid;
	__u32 flags;         /* JBPF_NATIVE_TRACKED */
	__u64 time_ns;
	__u64 addr;
};
#define JBPF_NATIVE_TRACKED 1u

/* With --leaks: a sampled allocation of process tgid at addr was freed (or reallocated). */
struct jbpf_native_free {
	__u32 type;          /* JBPF_RECORD_NATIVE_FREE */
	__u32 tgid;
	__u64 addr;
};

/*
 * Unwind tables (--unwind tables, bpf/unwind.bpf.h). For each target
 * process userspace lists its executable mappings, sorted by start, in the
 * `unwind_procs` map (by tgid); the rows of each file's table lie in the
 * `unwind_rows` array at [first_row, first_row + nr_rows). Address spaces:
 *   row pc = runtime pc - bias,  bias = start - (ELF vaddr at start - table base)
 * A mapping with no table (anonymous or JIT code, a file without CFI) is
 * listed with nr_rows 0, so that the walker tells it from a mapping it
 * does not know yet (a library loaded since), which it reports.
 */
#define JBPF_UNWIND_MAX_MAPPINGS 256

struct jbpf_unwind_mapping {
	__u64 start;         /* runtime VA, inclusive */
	__u64 end;           /* runtime VA, exclusive */
	__u64 bias;          /* runtime pc - bias = row pc */
	__u32 first_row;     /* index in unwind_rows */
	__u32 nr_rows;       /* 0: no table, frame pointers here */
	__u32 pc_end;        /* row pcs at or past this have no rule (the table's end - base) */
	__u32 flags;         /* JBPF_UNWIND_MAPPING_* */
};

/*
 * Bits of jbpf_unwind_mapping.flags. ANON: the mapping is no file's (JIT
 * code, anonymous memory): it can have no table, frame pointers are all
 * there is, and the summary names it apart from files without unwind info.
 */
#define JBPF_UNWIND_MAPPING_ANON 1u

/* Bits of jbpf_unwind_process.flags. */
#define JBPF_UNWIND_MISS_REPORTED 1u /* a jbpf_unwind_miss went out for this list; userspace rewrites it */

struct jbpf_unwind_process {
	__u64 start_ticks;   /* the process's start (JBPF_CLOCK_TICK_NS): a later owner of the tgid gets no rows */
	__u32 nr;            /* mappings used */
	__u32 flags;         /* JBPF_UNWIND_* */
	struct jbpf_unwind_mapping mappings[JBPF_UNWIND_MAX_MAPPINGS];
};

/*
 * A pc of process tgid fell in none of its listed mappings (a library
 * loaded after the list was written): userspace reads its maps again.
 * Sent once per list (JBPF_UNWIND_MISS_REPORTED). Fixed size.
 */
struct jbpf_unwind_miss {
	__u32 type;          /* JBPF_RECORD_UNWIND_MISS */
	__u32 tgid;
	__u64 pc;
};

/*
 * What a thread is at the end of a recording (bpf/offcpu.bpf.c
 * end_of_waits, an iterator over `waits`): its entry, its name and, when
 * the entry has it off CPU, its kernel stack (kstack_len frames in ips;
 * kstack_err a negative errno when none was read). No task (it exited):
 * JBPF_THREAD_END_GONE, no name, no stack. JBPF_THREAD_END_CAME_BACK: the
 * entry has it off CPU but it has run since, back unseen at back_ns at the
 * latest (end_of_waits' came_back_unseen); no kernel stack.
 *
 * A thread of a JVM whose Java frames BPF walks, off CPU since a
 * switch-out the scheduler program saw (back unseen or not), also has the
 * user stack walked there (ustack_len frames after the kernel ones) and its Java frames
 * (java_len struct jbpf_java_frame right after the ips, as in a
 * jbpf_sample): it has run no user code since. Variable length: only the
 * frames used are sent.
 */
#define JBPF_THREAD_END_WORDS \
	(2 * JBPF_MAX_STACK_DEPTH + JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame) / sizeof(__u64))
struct jbpf_thread_end {
	__u32 tid;
	__u32 flags;         /* JBPF_THREAD_END_* */
	char comm[JBPF_COMM_LEN];
	struct jbpf_thread_waits waits;
	__u64 back_ns;
	__s32 kstack_err;
	__u32 kstack_len;
	__u16 ustack_len;
	__u16 java_len;
	__u32 unused;
	__u64 lock_klass;    /* as a wait's (struct jbpf_sample), walked at the same switch-out */
	__u64 ips[JBPF_THREAD_END_WORDS]; /* kstack_len + ustack_len addresses, then java_len Java frames */
};
#define JBPF_THREAD_END_GONE 1u
#define JBPF_THREAD_END_CAME_BACK 2u

/*
 * A question to bpf/kernel_symbols.bpf.c (its .bss `query`): an address to
 * name, or a name to find. Kernel symbol names are at most 512 bytes
 * (KSYM_NAME_LEN); the text has room for one with its offset, size and
 * module.
 */
#define JBPF_KERNEL_QUERY_TEXT 640
struct jbpf_kernel_query {
	__u64 addr;
	__s64 err;
	char text[JBPF_KERNEL_QUERY_TEXT];
};

#endif /* JBPFPROF_H */
