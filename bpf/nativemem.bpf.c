// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Native memory (-e nativemem): uprobes on the allocator of each target
 * process (user/record/nativemem.c attaches them, one multi-uprobe link
 * per process, each function's attach cookie saying which: enum
 * jbpf_native_fn).
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
 * the one counted.
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
 * spared a return probe. The return sends where the memory went (struct
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

/* A sampled call on its way back (--leaks): by tid. LRU: a thread that dies inside malloc leaves no entry forever. */
struct pending_call {
	__u64 time_ns;       /* its JBPF_RECORD_NATIVE_ALLOC's */
	__u64 memptr;        /* posix_memalign's first argument */
	__u32 fn;            /* enum jbpf_native_fn */
	__u32 unused;
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
		return a0 ? a1 : 0;
	case JBPF_NATIVE_POSIX_MEMALIGN:
		return a1 > relay_alignment ? PT_REGS_PARM3(ctx) : 0;
	case JBPF_NATIVE_MEMALIGN:
		return a0 > relay_alignment ? a1 : 0;
	case JBPF_NATIVE_MMAP:
		if (!(PT_REGS_PARM4(ctx) & MAP_ANONYMOUS_) || PT_REGS_PARM3(ctx) == PROT_NONE_ ||
		    called_by_library(ctx, tgid))
			return 0;
		return (a1 + page_size - 1) & ~(page_size - 1);
	default:
		return 0;
	}
}

/* A sampled allocation at addr of process tgid is gone: tell userspace if it was followed. */
static __always_inline void forget(__u32 tgid, __u64 addr)
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
 * into the record being built: by unwind tables (and HotSpot's frames) when
 * the process has them, else by frame pointers. A global function, for the
 * verifier.
 */
__noinline int walk_user_stack(struct pt_regs *ctx, __u32 tgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct jbpf_sample *sample = unwind_sample();
	__u32 jn = 0, reason;
	long n, bytes;

	if (!sample || !ctx)
		return 0;
	if (unwind_tables) {
		n = unwind_task_stack(task, tgid, unwind_jvm(task, tgid), 0, JBPF_MAX_STACK_DEPTH, &jn, &reason);
		count(reason ? reason : JBPF_CNT_UNWIND_TABLES);
		if (n >= 0) {
			sample->java_len = jn;
			return n > JBPF_MAX_STACK_DEPTH ? JBPF_MAX_STACK_DEPTH : n;
		}
	}
	bytes = bpf_get_stack(ctx, sample->ips, JBPF_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
	if (bytes < 0)
		count(JBPF_CNT_USTACK_FAILED);
	return stack_frames(bytes, &sample->ustack_err);
}

/* Sends the sample of a call of size bytes by the current thread; its time, or 0 when it was not sent. */
static __always_inline __u64 send_sample(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 size)
{
	struct jbpf_sample *sample = probe_scratch_claim(JBPF_CNT_NATIVE_BUSY);
	__u64 now = bpf_ktime_get_ns(), bytes;
	__u32 un;

	if (!sample)
		return 0;
	sample_header__init(sample, JBPF_RECORD_NATIVE_ALLOC, bpf_get_smp_processor_id(), now, tgid, tid);
	bpf_get_current_comm(sample->comm, sizeof(sample->comm));
	sample->alloc_bytes = size;
	un = walk_user_stack(ctx, tgid);
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

/*
 * A call's entry: sampled or not, and sent. 0 when its return is wanted
 * (--leaks, a sampled call: its address), 1 when not.
 */
static __always_inline int on_entry(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), size, time_ns;
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);

	if (!is_target_task(tgid, bpf_get_current_task_btf()))
		return 1;
	if (follow_frees && (fn == JBPF_NATIVE_FREE || fn == JBPF_NATIVE_REALLOC || fn == JBPF_NATIVE_MUNMAP))
		forget(tgid, PT_REGS_PARM1(ctx));
	size = call_bytes(ctx, fn, tgid);
	if (!size)
		return 1;
	count(JBPF_CNT_NATIVE_CALLS);
	if (!take_sample(size))
		return 1;
	count(JBPF_CNT_NATIVE_SAMPLED);
	time_ns = send_sample(ctx, tgid, tid, size);
	if (follow_frees && time_ns) {
		struct pending_call call = { .time_ns = time_ns, .memptr = PT_REGS_PARM1(ctx), .fn = fn };

		bpf_map_update_elem(&pending, &tid, &call, BPF_ANY);
		return 0;
	}
	return 1;
}

/* A sampled call's return (--leaks): where its memory went, followed in `live`. */
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

	if (!call)
		return 0;
	time_ns = call->time_ns;
	memptr = call->memptr;
	fn = call->fn;
	bpf_map_delete_elem(&pending, &tid);
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

/* Without --leaks: entries only (a multi-uprobe link). */
SEC("uprobe")
int nativemem_call(struct pt_regs *ctx)
{
	on_entry(ctx);
	return 0;
}

extern bool bpf_session_is_return(void) __ksym;

/*
 * With --leaks: a session of a multi-uprobe link (Linux 6.13), entry and
 * return in one program; the entry's 1 spares the call its return probe.
 */
SEC("uprobe")
int nativemem_session(struct pt_regs *ctx)
{
	return bpf_session_is_return() ? on_return(ctx) : on_entry(ctx);
}
