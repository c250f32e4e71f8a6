// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The time virtual threads spend unmounted, for wall-clock and off-CPU
 * profiles of JVMs whose Java frames BPF walks (JDK 24 and later,
 * JBPF_HOTSPOT_UNMOUNTS). A virtual thread that parks, sleeps, waits for
 * a socket or a lock, or yields, does not leave its CPU: HotSpot copies
 * its frames into a stack chunk in the heap (a freeze) and its carrier
 * goes on with other work; the scheduler sees nothing. It comes back when
 * a carrier copies some of them back (a thaw).
 *
 * user/record/vthreads.c puts uprobes, in each such JVM only, on
 * libjvm's functions for both:
 *
 *   - the freeze, freeze<Config> (a yield, a park) and
 *     Continuation::try_preempt (a monitor it blocks on), in a uprobe
 *     session (Linux 6.13: entry and return in one program): at the
 *     entry the virtual thread, still its carrier's _vthread, is read (its
 *     id, and why it leaves: its VirtualThread.state) into the session's
 *     cookie; at the return, if the freeze succeeded (0: a pinned thread's
 *     fails and it stays mounted), it is noted in `unmounted` with the
 *     time. No stack: the frames are as readable at the thaw, frozen in
 *     the chunk.
 *   - the thaw of a mount, Continuation::prepare_thaw with return_barrier
 *     false (true is a return into frames thawed lazily, not a mount):
 *     the wait is over and its length known. As the scheduler program
 *     does for a thread (bpf/offcpu.bpf.c), one at least full_wait_ns
 *     long is always recorded, a shorter one with probability length /
 *     full_wait_ns (JBPF_WAIT_SAMPLED: userspace weighs it full_wait_ns);
 *     a recorded one walks the frozen frames in the chunks (bpf/
 *     hotspot_vthreads.bpf.h) down to the marker and sends a
 *     JBPF_RECORD_VTHREAD_WAIT. A mount with no unmount noted began
 *     before the probes (or its note was pushed out of the LRU map):
 *     JBPF_WAIT_UNKNOWN_START, userspace starts it at the recording's
 *     start.
 *
 * A wait is built in bpf/probe_scratch.bpf.h's record, which a probe
 * preempted on the same CPU may hold: the second drops its wait
 * (JBPF_CNT_VTHREAD_BUSY). The heap is read at a
 * probe in a function that reaches no safepoint before it returns
 * (prepare_thaw is a leaf; the freezes read at their entry), so no
 * collection moves the objects read meanwhile; ZGC and Shenandoah, whose
 * pointers are not read as they are, have no JBPF_HOTSPOT_CHUNKS.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shared.bpf.h"
#include "unwind.bpf.h"
#include "probe_scratch.bpf.h"

/* Set by userspace between open and load: as the scheduler program's (bpf/offcpu.bpf.c). */
const volatile __u64 full_wait_ns = 10000000;

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct unmounted_key {
	__u64 id;            /* java.lang.Thread.tid */
	__u32 tgid;
	__u32 unused;
};

struct unmounted_since {
	__u64 since;         /* the freeze */
	__u32 state;         /* enum jbpf_state of the wait: RUNNABLE after a yield, else SLEEPING */
	__u32 unused;
};

/* Unmounted virtual threads, by process and id: the oldest notes go when it is full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JBPF_MAX_UNMOUNTED);
	__type(key, struct unmounted_key);
	__type(value, struct unmounted_since);
} unmounted SEC(".maps");

#define VTHREAD_WAIT_MAX_SIZE (sizeof(struct jbpf_sample) + JAVA_FRAMES_BYTES)

/* VirtualThread.YIELDING (JDK 25), its state in Thread.yield: its wait is for a carrier. */
#define VTHREAD_YIELDING 10

/*
 * The virtual thread JavaThread thread runs, of a JVM that can tell one
 * (JBPF_HOTSPOT_UNMOUNTS): its oop, its id into w->vthread_id; 0 when
 * _vthread is not a VirtualThread (the carrier's own Thread, or misread).
 */
static __always_inline __u64 vthread_of(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm, __u64 thread)
{
	__u64 vthread;
	__u32 klass = 0;

	if (!(jvm->flags & JBPF_HOTSPOT_UNMOUNTS))
		return 0;
	vthread = hotspot_vthread_of(w, jvm, thread);
	if (!vthread || bpf_probe_read_user(&klass, 4, (void *)(vthread + jvm->oop_klass)) ||
	    jvm->klass_base + ((__u64)klass << (jvm->klass_shift & 31)) != jvm->vthread_klass)
		return 0;
	return vthread;
}

/*
 * The JVM of the current thread's process, walked by BPF; NULL else. The
 * probes are on the targets' JVMs only (their links name the process),
 * but a pid outlives its process: the JVM's start time must be its own.
 */
static __always_inline const struct jbpf_hotspot_jvm *target_jvm(__u32 tgid)
{
	return unwind_jvm(bpf_get_current_task_btf(), tgid);
}

extern bool bpf_session_is_return(void) __ksym;
extern __u64 *bpf_session_cookie(void) __ksym;

/* A freeze's cookie: the virtual thread's id, shifted, and this bit when it yields. */
#define COOKIE_YIELDS 1ull

/*
 * A freeze's entry: the virtual thread leaving, into the session's cookie
 * for the return. 0 asks for the return, 1 spares the call it.
 */
static __always_inline int unmount_entry(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	const struct jbpf_hotspot_jvm *jvm = target_jvm(tgid);
	struct unwind_walk w = {};
	__u64 vthread, *cookie = bpf_session_cookie();
	__s32 state = 0;

	if (!jvm || !cookie)
		return 1;
	vthread = vthread_of(&w, jvm, PT_REGS_PARM1(ctx));
	if (!vthread) {
		count(JBPF_CNT_VTHREAD_UNKNOWN);
		return 1;
	}
	bpf_probe_read_user(&state, 4, (void *)(vthread + jvm->vthread_state));
	*cookie = w.vthread_id << 1 | (state == VTHREAD_YIELDING ? COOKIE_YIELDS : 0);
	return 0;
}

/* A freeze's return: 0, the virtual thread left its carrier now (else it is pinned, and stays). */
static __always_inline int unmount_return(struct pt_regs *ctx)
{
	struct unmounted_key key = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct unmounted_since at = { .since = bpf_ktime_get_ns(), .state = JBPF_STATE_SLEEPING };
	__u64 *cookie = bpf_session_cookie();

	count(JBPF_CNT_VTHREAD_UNMOUNTS);
	if (!cookie || (__u32)PT_REGS_RC(ctx)) {
		count(JBPF_CNT_VTHREAD_PINNED);
		return 0;
	}
	key.id = *cookie >> 1;
	if (*cookie & COOKIE_YIELDS)
		at.state = JBPF_STATE_RUNNABLE;
	bpf_map_update_elem(&unmounted, &key, &at, BPF_ANY);
	return 0;
}

/*
 * The frozen frames of the virtual thread mounted on the current thread
 * (its oop vthread, w->vthread_id read), walked into java_scratch from
 * its continuation's tail chunk down to its marker: the frames written.
 */
static __always_inline __u32 walk_frozen(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm, __u64 vthread)
{
	struct unwind_loop loop = { .jvm = jvm };
	struct unwind_walk *frozen = unwind_walk();
	__u64 cont = hotspot_oop_at(jvm, vthread + jvm->vthread_cont);

	if (!frozen)
		return 0;
	*frozen = *w;
	/* resume_sp 0: the walk ends at the marker (hotspot_chunk_leave). */
	frozen->resume_sp = 0;
	if (!cont || hotspot_chunk_begin(frozen, jvm, hotspot_oop_at(jvm, cont + jvm->cont_tail)))
		return 0;
	bpf_loop(JBPF_MAX_JAVA_FRAMES + 1, unwind_frame, &loop, 0);
	return frozen->jn;
}

/* Whether a wait of length ns is recorded: always from full_wait_ns on, else with probability length / full_wait_ns. */
static __always_inline bool picked(__u64 length, __u32 *flags)
{
	if (length >= full_wait_ns)
		return true;
	*flags |= JBPF_WAIT_SAMPLED;
	return ((__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32()) % full_wait_ns < length;
}

/* A mount: the wait noted at the freeze is over; recorded, or left to chance. */
static __always_inline void on_mount(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), vthread, bytes;
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, flags = 0, state = JBPF_STATE_SLEEPING;
	const struct jbpf_hotspot_jvm *jvm;
	struct unwind_walk w = { .tgid = tgid, .tid = tid };
	struct unmounted_key key = { .tgid = tgid };
	struct unmounted_since *at;
	struct jbpf_sample *wait;
	__u64 since = 0;

	/* A return into frames thawed lazily, not a mount. */
	if (PT_REGS_PARM2(ctx) & 0xff)
		return;
	jvm = target_jvm(tgid);
	if (!jvm)
		return;
	vthread = vthread_of(&w, jvm, PT_REGS_PARM1(ctx));
	if (!vthread) {
		count(JBPF_CNT_VTHREAD_UNKNOWN);
		return;
	}
	count(JBPF_CNT_VTHREAD_MOUNTS);
	key.id = w.vthread_id;
	at = bpf_map_lookup_elem(&unmounted, &key);
	if (at) {
		since = at->since;
		state = at->state;
		bpf_map_delete_elem(&unmounted, &key);
	} else {
		flags |= JBPF_WAIT_UNKNOWN_START;
	}
	if (since && (since > now || !picked(now - since, &flags)))
		return;
	wait = probe_scratch_claim(JBPF_CNT_VTHREAD_BUSY);
	if (!wait)
		return;
	hotspot_vthread_name(&w, jvm, vthread);
	sample_header__init(wait, JBPF_RECORD_VTHREAD_WAIT, bpf_get_smp_processor_id(), now, tgid, tid);
	bpf_get_current_comm(wait->comm, sizeof(wait->comm));
	wait->state = state;
	wait->flags = flags;
	wait->wait_start_ns = since;
	wait->java_len = walk_frozen(&w, jvm, vthread);
	if (!wait->java_len) {
		wait->ustack_err = -2; /* ENOENT: no frozen frames found */
		count(JBPF_CNT_VTHREAD_NO_STACK);
	}
	bytes = sizeof(*wait);
	bytes += java_frames_after_ips(bytes);
	if (bytes > VTHREAD_WAIT_MAX_SIZE || bpf_ringbuf_output(&events, wait, bytes, 0))
		count(JBPF_CNT_VTHREAD_LOST);
	else
		count(JBPF_CNT_VTHREAD_WAITS);
	probe_scratch_release(wait);
}

/* The freezes: a session of a multi-uprobe link. */
SEC("uprobe")
int vthread_unmount(struct pt_regs *ctx)
{
	return bpf_session_is_return() ? unmount_return(ctx) : unmount_entry(ctx);
}

/* The thaws: a multi-uprobe link, entries only. */
SEC("uprobe")
int vthread_mount(struct pt_regs *ctx)
{
	on_mount(ctx);
	return 0;
}
