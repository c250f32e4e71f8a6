// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native memory (-e nativemem): uprobes on the allocator of each target
 * process (user/record/nativemem.c attaches them: multi-uprobe links per
 * process, or one perf-event uprobe per function and process where the
 * kernel has no multi-uprobe links; each function's attach cookie says
 * which it is: enum jbpf_native_fn).
 *
 * Sampling by bytes. Each CPU counts down the bytes its target threads ask
 * for; the call that crosses zero is sampled and the count starts again
 * from a draw of an exponential distribution with mean the interval
 * (`draws`, filled by userspace: the kernel has no logarithm). The points
 * form a Poisson process over the bytes allocated, so a call of size bytes
 * is sampled with probability 1 - e^(-size/interval), whatever the calls
 * around it, and userspace weighs each sample by the inverse of that.
 * Every call pays the uprobe's trap; only a sampled one pays a stack walk.
 *
 * A sampled call sends a JBPF_RECORD_NATIVE_ALLOC record (a struct
 * jbpf_sample, the bytes in alloc_bytes) with its user stack walked from
 * the allocator's entry, by unwind tables and, in a JVM whose frames BPF
 * walks, through its Java frames (bpf/unwind.bpf.h, bpf/hotspot.bpf.h).
 * No kernel stack: the thread is in user code.
 *
 * Calls the allocator makes of itself are not counted twice: in glibc,
 * realloc(NULL, n) calls malloc (a tail call: realloc's frame is gone),
 * and memalign, aligned_alloc and posix_memalign call malloc for an
 * alignment malloc gives anyway (relay_alignment); the inner malloc is
 * the one counted. Except with --leaks on a kernel without sessions
 * (relays_counted_outside): there the outer call is counted and the
 * malloc it relays to is not.
 *
 * The C library's mmap counts the anonymous memory a program maps itself
 * (readable or writable: a PROT_NONE mapping reserves addresses, not
 * memory), rounded up to pages, in the same countdown. An mmap whose
 * caller lies in the allocator's or the C library's own code (`text`,
 * from userspace) is theirs: malloc's large blocks and arenas, already
 * counted as the calls that asked, or a new thread's stack; it is not
 * counted. With --leaks, munmap of a mapping's start frees it.
 *
 * With --leaks (follow_frees), the probes are a session (Linux 6.13's
 * uprobe session: entry and return in one program, nativemem_session):
 * the entry of a sampled call asks for its return, every other call is
 * spared a return probe. A kernel without sessions gets an entry probe
 * (nativemem_call) and a return probe (nativemem_return) on each
 * allocation function instead: every call pays both traps, and the return
 * of a call that was not sampled finds nothing in `pending` and stops
 * there. Either way the return sends where the memory went (struct
 * jbpf_native_address) and puts the address in `live`; free and realloc
 * of an address in `live` send a struct jbpf_native_free. `live` is
 * bounded (sized by userspace): a sampled allocation that finds it full
 * is sent untracked, and counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "shared.bpf.h"
#include "unwind.bpf.h"
#include "probe_scratch.bpf.h"

const volatile bool follow_frees = false;
/* With --leaks: the allocation functions are a session (nativemem_session loaded), not entry and return probes. */
const volatile bool uprobe_session = false;
/* The alignment malloc gives anyway: a memalign of at most this calls malloc (glibc: 16 on x86-64). */
const volatile __u64 relay_alignment = 16;
const volatile __u64 page_size = 4096;

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Exponential draws, bytes, mean the interval: NATIVEMEM_DRAWS of them, a power of two. */
#define NATIVEMEM_DRAWS 65536
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NATIVEMEM_DRAWS);
	__type(key, __u32);
	__type(value, __u64);
} draws SEC(".maps");

/* Bytes each CPU has left before its next sample; userspace starts each with a draw. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s64);
} countdown SEC(".maps");

/* Each target's allocator and C library code (struct jbpf_native_text), by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JBPF_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct jbpf_native_text);
} text SEC(".maps");

struct live_key {
	__u64 addr;
	__u32 tgid;
	__u32 pad;
};

/* Sampled allocations not yet freed (--leaks). Sized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct live_key);
	__type(value, __u8);
} live SEC(".maps");

/*
 * A sampled call on its way back (--leaks): by tid. LRU: a thread that
 * dies inside malloc, or leaves it by longjmp, leaves no entry forever.
 * One per thread is enough: an allocation function that calls another
 * (malloc's mmap of a large block) has the inner call spared (not
 * counted, so not sampled), and a return is matched to its entry by the
 * function and the stack pointer, so that an inner call's return probe
 * does not take the outer call's entry.
 */
struct pending_call {
	__u64 time_ns;       /* its JBPF_RECORD_NATIVE_ALLOC's; 0: a relay not sampled */
	__u64 memptr;        /* posix_memalign's first argument */
	__u64 sp;            /* the stack pointer at the entry: the return address's slot */
	__u32 fn;            /* enum jbpf_native_fn */
	__u32 relay;         /* a call relaying to malloc (relays_counted_outside) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pending_call);
} pending SEC(".maps");

#define SAMPLE_MAX_SIZE                                                                                    \
	(sizeof(struct jbpf_sample) + JBPF_MAX_STACK_DEPTH * sizeof(__u64) +                              \
	 JBPF_MAX_JAVA_FRAMES * sizeof(struct jbpf_java_frame))
_Static_assert(SAMPLE_MAX_SIZE - JAVA_FRAMES_BYTES <= UNWIND_SCRATCH_IPS_BYTES, "the ips part of a record fits the mask");

/*
 * --leaks without sessions: every allocation function has a return probe,
 * whose trampoline takes the place of the return address on the stack
 * from the function's entry on. A call that relays to malloc
 * (realloc(NULL, n) jumps to it, memalign and its kin call it for an
 * alignment malloc gives anyway) is then counted at its own entry, where
 * its caller's frame is still whole, and the malloc it relays to is not:
 * a walk from there would read the trampoline where the caller was.
 */
static __always_inline bool relays_counted_outside(void)
{
	return follow_frees && !uprobe_session;
}

/* Whether call fn, at its entry, relays to malloc. */
static __always_inline bool relays_to_malloc(struct pt_regs *ctx, __u32 fn)
{
	switch (fn) {
	case JBPF_NATIVE_REALLOC:
		return !PT_REGS_PARM1(ctx);
	case JBPF_NATIVE_POSIX_MEMALIGN:
		return PT_REGS_PARM2(ctx) <= relay_alignment;
	case JBPF_NATIVE_MEMALIGN:
		return PT_REGS_PARM1(ctx) <= relay_alignment;
	default:
		return false;
	}
}

/* Whether the current thread, at stack pointer sp, is in a call that relays to malloc (relays_counted_outside). */
static __always_inline bool in_relay(__u32 tid, __u64 sp)
{
	struct pending_call *call = bpf_map_lookup_elem(&pending, &tid);

	return call && call->relay && sp <= call->sp;
}

/* Whether a call of size bytes is sampled: the CPU's countdown crosses zero. */
static __always_inline bool take_sample(__u64 size)
{
	__u32 zero = 0, at;
	__s64 *left = bpf_map_lookup_elem(&countdown, &zero);
	__u64 *draw;

	if (!left)
		return false;
	if ((__s64)size < *left) {
		*left -= (__s64)size;
		return false;
	}
	at = bpf_get_prandom_u32() & (NATIVEMEM_DRAWS - 1);
	draw = bpf_map_lookup_elem(&draws, &at);
	*left = draw ? (__s64)*draw : 0;
	return true;
}

#define PROT_NONE_ 0x0
#define MAP_ANONYMOUS_ 0x20

/* Whether the function probed was called from the allocator's or the C library's own code. */
static __always_inline bool called_by_library(struct pt_regs *ctx, __u32 tgid)
{
	struct jbpf_native_text *t = bpf_map_lookup_elem(&text, &tgid);
	__u64 ra = 0;

	/* At a function's first instruction its return address is on top of the stack. */
	if (!t || bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx)))
		return false;
	for (int i = 0; i < JBPF_NATIVE_LIBRARIES; i++)
		if (ra >= t->lo[i] && ra < t->hi[i])
			return true;
	return false;
}

/*
 * The bytes a call asks for, 0 for a call not counted here (nothing
 * asked, a free, or one whose inner malloc is counted instead; an mmap
 * of no anonymous memory, or the libraries' own).
 */
static __always_inline __u64 call_bytes(struct pt_regs *ctx, __u32 fn, __u32 tgid)
{
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), most;

	switch (fn) {
	case JBPF_NATIVE_MALLOC:
	case JBPF_NATIVE_VALLOC:
		return a0;
	case JBPF_NATIVE_PVALLOC:
		return (a0 + page_size - 1) & ~(page_size - 1);
	case JBPF_NATIVE_CALLOC:
		/* An overflowing product fails in calloc itself. The barrier keeps clang from a 128-bit multiply. */
		if (!a1)
			return 0;
		most = ~0ull / a1;
		barrier_var(most);
		return a0 > most ? 0 : a0 * a1;
	case JBPF_NATIVE_REALLOC:
		return a0 || relays_counted_outside() ? a1 : 0;
	case JBPF_NATIVE_POSIX_MEMALIGN:
		return a1 > relay_alignment || relays_counted_outside() ? PT_REGS_PARM3(ctx) : 0;
	case JBPF_NATIVE_MEMALIGN:
		return a0 > relay_alignment || relays_counted_outside() ? a1 : 0;
	case JBPF_NATIVE_MMAP:
		if (!(PT_REGS_PARM4(ctx) & MAP_ANONYMOUS_) || PT_REGS_PARM3(ctx) == PROT_NONE_ ||
		    called_by_library(ctx, tgid))
			return 0;
		return (a1 + page_size - 1) & ~(page_size - 1);
	default:
		return 0;
	}
}

/*
 * A sampled allocation at addr of process tgid is gone: tell userspace if
 * it was followed. Not inlined, nor remember_call: the entry's own stack
 * adds to the walker's (walk_user_stack), in the 512 bytes kernels before
 * 6.13 allow a program and the functions it calls; theirs does not.
 */
static __noinline void forget(__u32 tgid, __u64 addr)
{
	struct live_key key = { .addr = addr, .tgid = tgid };
	struct jbpf_native_free *record;

	if (!addr || bpf_map_delete_elem(&live, &key))
		return;
	record = reserve_counted(sizeof(*record), JBPF_CNT_NATIVE_FREES_LOST);
	if (!record)
		return;
	record->type = JBPF_RECORD_NATIVE_FREE;
	record->tgid = tgid;
	record->addr = addr;
	bpf_ringbuf_submit(record, 0);
}

/*
 * The user stack of the current thread, stopped at an allocator's entry,
 * into the record being built, by unwind tables (and HotSpot's frames):
 * the frames written, or -1 when the process has none (the caller walks
 * by frame pointers). A global function, for the verifier; it keeps
 * nothing across the walk it could look up again, for its stack adds to
 * the walker's in the 512 bytes kernels before 6.13 allow a program and
 * the functions it calls.
 */
__noinline long walk_user_stack(__u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct jbpf_sample *sample = unwind_sample();
	__u32 jn = 0, reason;
	long n;

	if (!sample || !unwind_tables)
		return -1;
	n = unwind_task_stack(task, tgid, unwind_jvm(task, tgid), 0, JBPF_MAX_STACK_DEPTH, &jn, &reason);
	count(reason ? reason : JBPF_CNT_UNWIND_TABLES);
	sample = unwind_sample();
	if (n < 0 || !sample)
		return -1;
	sample->java_len = jn;
	return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
}

/* Sends the sample of a call of size bytes by the current thread; its time, or 0 when it was not sent. */
static __always_inline __u64 send_sample(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 size)
{
	struct jbpf_sample *sample = probe_scratch_claim(JBPF_CNT_NATIVE_BUSY);
	__u64 now = bpf_ktime_get_ns(), bytes;
	long walked;
	__u32 un;

	if (!sample)
		return 0;
	sample_header__init(sample, JBPF_RECORD_NATIVE_ALLOC, bpf_get_smp_processor_id(), now, tgid, tid);
	bpf_get_current_comm(sample->comm, sizeof(sample->comm));
	sample->alloc_bytes = size;
	walked = walk_user_stack(tgid);
	if (walked >= 0) {
		un = walked;
	} else {
		walked = bpf_get_stack(ctx, sample->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
		if (walked < 0)
			count(JBPF_CNT_USTACK_FAILED);
		un = stack_frames(walked, &sample->ustack_err);
	}
	if (un > JBPF_MAX_STACK_DEPTH)
		un = JBPF_MAX_STACK_DEPTH;
	sample->ustack_len = un;
	bytes = sizeof(*sample) + un * sizeof(__u64);
	bytes += java_frames_after_ips(bytes);
	if (bytes > SAMPLE_MAX_SIZE || bpf_ringbuf_output(&events, sample, bytes, 0)) {
		count(JBPF_CNT_NATIVE_LOST);
		now = 0;
	}
	probe_scratch_release(sample);
	return now;
}

/* A call on its way back, for its return (pending). */
static __noinline void remember_call(struct pt_regs *ctx, __u32 tid, __u32 fn, __u64 time_ns, bool relay)
{
	struct pending_call call = {
		.time_ns = time_ns, .memptr = PT_REGS_PARM1(ctx), .sp = PT_REGS_SP(ctx), .fn = fn, .relay = relay
	};

	bpf_map_update_elem(&pending, &tid, &call, BPF_ANY);
}

/*
 * A call's entry: sampled or not, and sent. 0 when its return is wanted
 * (--leaks, a sampled call: its address), 1 when not.
 */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), size, time_ns = 0;
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);
	bool relay = false;

	if (!is_target_task(tgid, bpf_get_current_task_btf()))
		return 1;
	if (follow_frees && (fn == JBPF_NATIVE_FREE || fn == JBPF_NATIVE_REALLOC || fn == JBPF_NATIVE_MUNMAP))
		forget(tgid, PT_REGS_PARM1(ctx));
	size = call_bytes(ctx, fn, tgid);
	if (!size)
		return 1;
	if (relays_counted_outside()) {
		if (fn == JBPF_NATIVE_MALLOC && in_relay(tid, PT_REGS_SP(ctx)))
			return 1;
		relay = relays_to_malloc(ctx, fn);
	}
	count(JBPF_CNT_NATIVE_CALLS);
	if (take_sample(size)) {
		count(JBPF_CNT_NATIVE_SAMPLED);
		time_ns = send_sample(ctx, tgid, tid, size);
	}
	/* A relay is remembered sampled or not: the malloc it calls must know. */
	if (follow_frees && (time_ns || relay)) {
		remember_call(ctx, tid, fn, time_ns, relay);
		return 0;
	}
	return 1;
}

/*
 * A call's return (--leaks): if it is a sampled call's, where its memory
 * went, followed in `live`. The return lands where the entry's return
 * address was, so the stack pointer is the entry's plus that slot; a tail
 * call (realloc(NULL, n) jumping to malloc) shares its caller's slot, and
 * its return probes all fire there, the function telling them apart.
 */
static __always_inline int on_return(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), addr = PT_REGS_RC(ctx);
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct jbpf_native_address *record;
	struct pending_call *call = bpf_map_lookup_elem(&pending, &tid);
	struct live_key key = { .tgid = tgid };
	__u64 time_ns, memptr;
	__u32 fn;
	__u8 one = 1;

	if (!call || call->fn != (__u32)bpf_get_attach_cookie(ctx) || call->sp + sizeof(__u64) != PT_REGS_SP(ctx))
		return 0;
	time_ns = call->time_ns;
	memptr = call->memptr;
	fn = call->fn;
	bpf_map_delete_elem(&pending, &tid);
	if (!time_ns)
		return 0;
	/* posix_memalign returns 0 and leaves the address at its first argument. */
	if (fn == JBPF_NATIVE_POSIX_MEMALIGN && (addr || bpf_probe_read_user(&addr, sizeof(addr), (void *)memptr)))
		addr = 0;
	/* A failed mmap returns MAP_FAILED, (void *)-1. */
	if (fn == JBPF_NATIVE_MMAP && addr == ~0ull)
		addr = 0;
	record = reserve_counted(sizeof(*record), JBPF_CNT_NATIVE_FREES_LOST);
	if (!record)
		return 0;
	record->type = JBPF_RECORD_NATIVE_ADDRESS;
	record->tid = tid;
	record->tgid = tgid;
	record->time_ns = time_ns;
	record->addr = addr;
	record->flags = 0;
	key.addr = addr;
	if (addr && !bpf_map_update_elem(&live, &key, &one, BPF_ANY))
		record->flags = JBPF_NATIVE_TRACKED;
	else if (addr)
		count(JBPF_CNT_NATIVE_UNTRACKED);
	bpf_ringbuf_submit(record, 0);
	return 0;
}

/*
 * The entries: of every function without --leaks, of the frees, and of
 * the allocation functions where the kernel has no sessions. A multi-uprobe
 * link, or one perf-event uprobe per function where the kernel has none
 * (userspace sets the expected attach type before load).
 */
SEC("uprobe")
int nativemem_call(struct pt_regs *ctx)
{
	on_entry(ctx);
	return 0;
}

/* --leaks without sessions: the allocation functions' returns, for the entries nativemem_call saw. */
SEC("uretprobe")
int nativemem_return(struct pt_regs *ctx)
{
	return on_return(ctx);
}

/* Weak: a kernel without it (before 6.10) loads the object, with nativemem_session off and pruned. */
extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * With --leaks: a session of a multi-uprobe link (Linux 6.13), entry and
 * return in one program; the entry's 1 spares the call its return probe.
 * Loaded only where the kernel has sessions (uprobe_session).
 */
SEC("uprobe")
int nativemem_session(struct pt_regs *ctx)
{
	if (!uprobe_session)
		return 1;
	return bpf_session_is_return() ? on_return(ctx) : on_entry(ctx);
}
