/*
 * sampler: the BPF CPU sampler's lifecycle in userspace.
 *
 * sampler__open loads bpf/sample.bpf.c, fills its tgid filter, opens one
 * software cpu-clock perf event per online CPU and attaches the program to
 * each. With JVMs to signal (config->java), it also fills java_targets;
 * on a kernel without BPF task work it also attaches the system call exit
 * program (with JVMs or waits), mounting tracefs if it is not mounted,
 * since tracepoint programs are attached through its event ids.
 * From then on records arrive through the ring buffer: the caller
 * waits on sampler__fd and calls sampler__drain, which hands each record to
 * the callback given at open. sampler__close detaches everything; it is safe
 * on NULL and on a half-opened sampler.
 *
 * Failures are reported as one line in err (what failed, the likely cause,
 * what to do) and a negative errno.
 */
#ifndef JBPF_SAMPLER_H
#define JBPF_SAMPLER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"

/* Called for each ring buffer record; data is valid only during the call. */
typedef void (*sampler_record_fn)(void *ctx, const void *data, size_t size);

/*
 * A JVM whose agent handles signal signo (see bpf/sample.bpf.c), and when
 * it started (checks__process_start): needed with all processes (-a),
 * where it is no named target whose start the sampler knows.
 */
struct sampler_java_target {
	uint32_t tgid;
	uint32_t signo;
	uint64_t start_ticks;
};

/*
 * Who pays what a thread is owed when it leaves a system call (a deferred
 * Java stack signal, a wait's user stack; see bpf/deferral.bpf.h).
 */
enum sampler_deferral {
	SAMPLER_DEFER_AUTO,         /* task work where the kernel has it (probed once), else the exit program */
	SAMPLER_DEFER_TASK_WORK,    /* BPF task work (Linux 6.18): only owing threads pay */
	SAMPLER_DEFER_SYSCALL_EXIT, /* a program on every system call exit of the host */
};

struct sampler;

struct sampler_config {
	const uint32_t *tgids;   /* processes to sample; NULL with nr_tgids 0 for all */
	/*
	 * When each of them started (checks__process_start), in the same
	 * order: a task is sampled or signalled only if its process started
	 * then, so a process that gets a target's pid after it exits is not.
	 */
	const uint64_t *start_ticks;
	size_t nr_tgids;
	unsigned frequency_hz;   /* mean samples per second per CPU */
	bool fixed_interval;     /* exactly 1/F, no randomisation */
	size_t ringbuf_bytes;    /* power of two, 0 for the default */
	int verbose;             /* >0: libbpf's own messages on stderr */
	const struct sampler_java_target *java; /* JVMs to signal for Java stacks */
	size_t nr_java;
	/*
	 * do_syscall_64's address range, and the kernel's entry code
	 * (__entry_text_start to __entry_text_end), which tell a sample
	 * inside a system call from its kernel stack (its signal waits for
	 * the call to return; see in_system_call in bpf/shared.bpf.h); 0, 0
	 * when unknown, and then the task's entry registers alone tell.
	 */
	uint64_t syscall_entry_lo, syscall_entry_hi;
	uint64_t entry_text_lo, entry_text_hi;
	/*
	 * Wall-clock and off-CPU profiles: follow the targets' context
	 * switches (bpf/offcpu.bpf.c). full_wait_ns: sleeping waits at least
	 * this long always keep their stacks, shorter ones are sampled;
	 * waits outside [min_block_ns, max_block_ns] are only counted.
	 */
	bool waits;
	bool no_cpu_samples;     /* -e offcpu: no perf events at all */
	uint64_t full_wait_ns, min_block_ns, max_block_ns;
	/*
	 * With waits: send each recorded sleeping wait's waker
	 * (bpf/offcpu_waker.bpf.h), told from an interrupt by these kernel
	 * ranges (__irqentry_text, handle_softirqs; 0, 0 when unknown).
	 */
	bool wakers;
	uint64_t irq_entry_lo, irq_entry_hi, softirq_lo, softirq_hi;
	/*
	 * With waits: read the class of the monitor each wait of a walked
	 * JVM's thread is for (-e lock; sampler__set_java_thread says where
	 * each thread's JavaThread is).
	 */
	bool lock_classes;
	size_t max_threads;      /* threads followed at once, 0 for the default */
	/*
	 * Walk user stacks by unwind tables (bpf/unwind.bpf.h) within
	 * unwind_budget_bytes of BPF maps (0 for the default: 16 MiB per -p
	 * target, 64 MiB at most and for -a), the -p targets' tables read
	 * before the first sample; else by frame pointers only.
	 */
	bool unwind_tables;
	size_t unwind_budget_bytes;
	/*
	 * JVMs whose Java frames BPF walks (bpf/hotspot.bpf.h, with unwind
	 * tables only): max_hotspot_jvms of them at once (0: none, and the
	 * walker is left out of the program), placed with sampler__set_hotspot.
	 */
	size_t max_hotspot_jvms;
	/*
	 * Called once the programs are loaded and before any perf event
	 * starts (with the sampler, which sampler__set_hotspot may be given):
	 * what must be in the maps for the first sample. Non-zero fails the
	 * open. NULL: nothing.
	 */
	int (*before_start)(void *ctx, struct sampler *sampler);
	void *before_start_ctx;
	/*
	 * AUTO from callers; sampler__open hands its loaders the choice made
	 * (never AUTO). The environment variable JBPFPROF_DEFER=task-work or
	 * =syscall-exit overrides AUTO, to test either on one kernel.
	 */
	enum sampler_deferral deferral;
	/*
	 * Whether the kernel has BPF task work, when the caller knows it (from
	 * the kernel's symbols, which it reads anyway): else sampler__open
	 * reads the kernel's BTF to find out, a few milliseconds more.
	 */
	bool task_work_known, has_task_work;
	/*
	 * -e nativemem: load bpf/nativemem.bpf.c (user/record/nativemem.h;
	 * its walk settings are taken from the fields above), and probe each
	 * target's allocator with sampler__probe_allocator. NULL: none.
	 */
	const struct nativemem_config *nativemem;
	/*
	 * With waits and JVMs walked by BPF: load bpf/vthreads.bpf.c
	 * (user/record/vthreads.h), for the time virtual threads spend
	 * unmounted, and probe each such JVM with sampler__probe_vthreads.
	 * A kernel that refuses it costs a line, not the recording.
	 */
	bool vthreads;
	sampler_record_fn on_record;
	void *ctx;
};

struct loader_run_time;
struct nativemem_config;
struct sampler;
struct unwinder;

int sampler__open(const struct sampler_config *config, struct sampler **out, char *err, size_t err_size);
void sampler__close(struct sampler *sampler);

/*
 * Stops sampling on every CPU and following context switches (the
 * programs stay loaded). After it, one
 * more sampler__drain receives every record, and the counters are final.
 */
void sampler__stop(struct sampler *sampler);

/* A descriptor that becomes readable when records are waiting. */
int sampler__fd(const struct sampler *sampler);
/*
 * Hands every waiting record to the callback; while sampling goes on,
 * only those it takes in 200 ms (the rest wait for the next call), so
 * that a slow callback cannot hold the caller. Returns records or -errno.
 */
int sampler__drain(struct sampler *sampler);

/*
 * Whether a JVM thread runs no Java: the program then rarely signals it
 * (no_java_tids, bpf/shared.bpf.h), for CPU samples and waits alike.
 */
void sampler__set_no_java(struct sampler *sampler, uint32_t tid, bool no_java);

/*
 * Process tgid's Java frames are walked by BPF with jvm's layout (its
 * start_ticks set), or no longer (jvm NULL). 0 or -errno.
 */
int sampler__set_hotspot(struct sampler *sampler, uint32_t tgid, const struct jbpf_hotspot_jvm *jvm);

/*
 * Thread tid of a walked JVM has its JavaThread at java_thread (0: no
 * longer), for the monitors its waits are for (bpf/offcpu_walk.bpf.h).
 * 0 or -errno.
 */
int sampler__set_java_thread(struct sampler *sampler, uint32_t tid, uint64_t java_thread);

/* Stops signalling a JVM (its agent went away, or stopped answering). */
void sampler__forget_java(struct sampler *sampler, uint32_t tgid);
/*
 * Signals a JVM's sampled threads with signo again. 0 or -errno; -ESRCH
 * when tgid is no target, or one that exited (sampler__forget_target).
 */
int sampler__signal_java(struct sampler *sampler, uint32_t tgid, uint32_t signo);
/*
 * A JVM whose agent connected during the recording (any time after
 * sampler__open): its threads are signalled with signo from now on.
 * start_ticks is when the process started (checks__process_start), so
 * that a later owner of its pid is never signalled. With named targets
 * (-p) it must be one of them, not exited (-ESRCH otherwise); with all
 * processes any. Loads the system call exit program that sends deferred
 * signals if the recording started without it (or with the one that
 * cannot signal). 0, or -errno with one line in err.
 */
int sampler__add_java(struct sampler *sampler, uint32_t tgid, uint64_t start_ticks, uint32_t signo, char *err,
		      size_t err_size);
/*
 * A target exited: neither sampled nor signalled from now on, whatever
 * later gets its pid (the programs check the start time anyway, in case
 * this comes late), and sampler__signal_java refuses it.
 */
void sampler__forget_target(struct sampler *sampler, uint32_t tgid);
/* Whether tgid is a named target (-p) that exited (sampler__forget_target). */
bool sampler__target_exited(const struct sampler *sampler, uint32_t tgid);

/*
 * Every thread the scheduler program follows, with what it knows, its
 * name and, off CPU, its kernel stack (bpf/offcpu.bpf.c end_of_waits); for
 * the end of a recording, after sampler__stop. Returns threads seen or -errno.
 */
typedef void (*sampler_thread_fn)(void *ctx, const struct jbpf_thread_end *end);
int sampler__for_each_thread(struct sampler *sampler, sampler_thread_fn fn, void *ctx);
/*
 * With config.nativemem: probes the allocator of process tgid (as
 * proc_root sees it). 0, or -1 with a one-line reason in err.
 */
int sampler__probe_allocator(struct sampler *sampler, const char *proc_root, uint32_t tgid, char *err,
			     size_t err_size);
/*
 * With config.vthreads: probes the freezes and thaws of virtual threads in
 * JVM tgid (as proc_root sees it, started at start_ticks), walked by BPF
 * with JBPF_HOTSPOT_UNMOUNTS; once, however often its layout is handed
 * over. 0, or -1 with a one-line reason in err (empty when none is loaded).
 */
int sampler__probe_vthreads(struct sampler *sampler, const char *proc_root, uint32_t tgid, uint64_t start_ticks,
			    char *err, size_t err_size);
/*
 * With config.vthreads: each virtual thread still unmounted (at the end,
 * after sampler__stop), as vthreads__for_each_unmounted; nothing without.
 */
typedef void (*sampler_unmounted_fn)(void *ctx, uint32_t tgid, uint64_t id, uint64_t since, uint32_t state);
void sampler__for_each_unmounted(struct sampler *sampler, sampler_unmounted_fn fn, void *ctx);
/* Sums of the BPF loss counters over all CPUs, indexed by enum jbpf_counter. */
int sampler__counters(const struct sampler *sampler, uint64_t counters[JBPF_CNT_NR]);

/*
 * Each BPF program's runs and run time so far, as the kernel counts them
 * while kernel.bpf_stats_enabled is 1 (see loader.h). Returns entries used.
 */
size_t sampler__run_times(const struct sampler *sampler, struct loader_run_time *times, size_t max);

/* The unwind tables' feeder (user/record/unwinder.h), or NULL without unwind_tables. */
struct unwinder *sampler__unwinder(const struct sampler *sampler);

/* Who pays deferred signals and stacks in this recording, for -v ("task work", ...). */
const char *sampler__deferral_name(const struct sampler *sampler);

/*
 * Whether the Java walk remembers code blobs by pc (bpf/hotspot.bpf.h,
 * hotspot_blobs): yes, unless JBPFPROF_BLOB_CACHE=0 is in the environment
 * (bench/java_walk_cost.sh measures both).
 */
bool sampler__remember_blobs(void);

/* CPUs sampled, and the perf event's base period in ns (before thinning). */
unsigned sampler__cpus(const struct sampler *sampler);
uint64_t sampler__base_period_ns(const struct sampler *sampler);
/*
 * With waits, when the scheduler program followed context switches and
 * the targets' threads were seeded, and when sampler__stop ran
 * (CLOCK_MONOTONIC ns): the recording's window.
 */
uint64_t sampler__started_ns(const struct sampler *sampler);
uint64_t sampler__stopped_ns(const struct sampler *sampler);

#endif /* JBPF_SAMPLER_H */
