/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The user stack walk by unwind tables (--unwind tables), for the CPU
 * sampler (sample.bpf.c) and, for threads of JVMs whose Java frames BPF
 * walks, the scheduler program at a switch-out (offcpu.bpf.c). x86-64.
 *
 * From the user registers of the sampled thread (the perf event's when the
 * tick hit user mode; else those the kernel saved on entry, from
 * bpf_task_pt_regs), one frame per bpf_loop iteration:
 *
 *   1. the pc's mapping, by binary search in the process's list
 *      (unwind_procs, written by user/record/unwinder.c);
 *   2. its row, by binary search in the file's rows in unwind_rows, for
 *      row pc = pc - bias (minus 1 for a return address, which may be the
 *      first byte after a call that never returns, i.e. the next function);
 *   3. CFA from rsp or rbp and the row's offset, the return address at
 *      CFA - 8, the caller's rbp where the row says it was saved; rsp = CFA.
 *
 * Where no table covers a pc (JIT code, anonymous memory, a file without
 * CFI, a row it cannot follow) the walk takes one frame-pointer step, and
 * goes on with tables if the next pc has one: so a Java thread in
 * JNI -> libz -> libc is walked by tables down to the first JIT frame, then
 * by frame pointers through the JIT frames. A process with no list yet is
 * walked wholly by frame pointers (bpf_get_stack), as with --unwind fp.
 *
 * Each stack walked lands in exactly one counter: JBPF_CNT_UNWIND_TABLES
 * when every frame came from a table down to the outermost one, otherwise
 * the first reason it did not (see enum jbpf_counter).
 *
 * A pc that lies in no listed mapping, seen as the sampled pc or as a
 * return address found by a table (never one found by frame pointers,
 * which may be garbage), means the list is out of date: one
 * jbpf_unwind_miss per list goes to userspace, which rewrites it.
 *
 * The includer provides unwind_sample(): the per-CPU record being built,
 * whose ips the walk writes.
 */
#ifndef JBPF_UNWIND_BPF_H
#define JBPF_UNWIND_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "jbpfprof.h"
#include "shared.bpf.h"
#include "unwind.h"

/* Set by userspace before load: walk by tables (else only bpf_get_stack). */
const volatile bool unwind_tables = false;

/*
 * Every placed table's rows, each file's contiguous. Resized by userspace
 * from the memory budget, and written through mmap.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct jbpf_unwind_row);
} unwind_rows SEC(".maps");

/* Each process's executable mappings, by tgid. Resized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct jbpf_unwind_process);
} unwind_procs SEC(".maps");

/*
 * 2^UNWIND_ROW_STEPS rows per file at most: the bound of the binary search.
 * libjvm, the largest file we know, has some 600k rows.
 */
#define UNWIND_ROW_STEPS 23
_Static_assert((JBPF_UNWIND_MAX_MAPPINGS & (JBPF_UNWIND_MAX_MAPPINGS - 1)) == 0, "a power of two, for a mask");

static struct jbpf_sample *unwind_sample(void);

/* The state of one walk; scalars only, as a global function's argument must be. */
struct unwind_walk {
	__u64 pc, sp, bp;
	/*
	 * The innermost frame's rax, rbx and r13: an interpreter entry
	 * building its frame keeps its return address, Method * and caller's
	 * sp there (hotspot.bpf.h, hotspot_interpreter_entry); rdx: a stub
	 * that popped its return address keeps it there (hotspot_unbuilt_frame).
	 */
	__u64 ax, bx, dx, r13;
	__u32 tgid;
	__u32 first;         /* index in ips of the first user frame (after the kernel's) */
	__u32 n;             /* user frames written */
	__u32 max;           /* user frames wanted */
	__u32 reason;        /* first JBPF_CNT_UNWIND_* that is not TABLES, or 0 */
	__u32 jn;            /* Java frames written (hotspot.bpf.h) */
	__u32 java_stop;     /* enum jbpf_java_stop when the walk ended in a Java frame, or 0 */
	__u32 tid;           /* the walked thread: its JavaThread in java_threads */
	bool carrier;        /* a virtual thread's frames are behind: the rest are its carrier's */
	__u8 chunks;         /* stack chunks entered (hotspot.bpf.h) */
	/* Walking a virtual thread's frozen frames: the chunk, where its frames end, and the carrier's sp after. */
	__u64 chunk, chunk_end, resume_sp;
	__u64 vthread_id;    /* the virtual thread's, for its marker */
	__u64 vthread_name[2]; /* the first 16 bytes of its name, for its marker */
	bool trusted_pc;     /* pc is the sampled one or came from a table: a miss is real */
	bool done;           /* reached the outermost frame */
};

/*
 * The walk in progress on this CPU. Some 180 bytes: on the stack, with the
 * frames of the calls that walk (unwind_step, hotspot_step), it would pass
 * the 512 bytes a program's nested calls may use in all before Linux
 * 6.13. Each object has its own, and a program of one object never runs
 * inside another of the same on a CPU (uprobe programs, which may be
 * preempted, build under bpf/probe_scratch.bpf.h's busy flag).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_walk);
} unwind_walks SEC(".maps");

static __always_inline struct unwind_walk *unwind_walk(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&unwind_walks, &zero);
}

/* This CPU's walk, started afresh for thread tid of process tgid: frames from index first, at most max. */
static __always_inline struct unwind_walk *unwind_walk_begin(__u32 tgid, __u32 tid, __u32 first, __u32 max)
{
	struct unwind_walk *w = unwind_walk();

	if (!w)
		return NULL;
	__builtin_memset(w, 0, sizeof(*w));
	w->tgid = tgid;
	w->tid = tid;
	w->first = first;
	w->max = max;
	w->trusted_pc = true;
	return w;
}

#include "hotspot.bpf.h"

static __always_inline void unwind_fall_back(struct unwind_walk *w, __u32 reason)
{
	if (!w->reason)
		w->reason = reason;
}

/*
 * The searches and the step are global functions: the verifier checks each
 * once, on its own, instead of once per path through its caller, which
 * for binary searches inside a loop of frames is far past its limit.
 */

/*
 * The index of the mapping of proc that holds pc, or -1. A binary search
 * by halving steps, lo always a mapping that starts at or below pc, and
 * without a branch: the verifier then follows one path, where a branch per
 * step made its paths multiply (13,000 instructions to check, 60% of the
 * sampler's load time). A comparison is the borrow out of a subtraction,
 * its top bit; for the mapping counts, far below 2^63, simply the sign of
 * the difference. Addresses need the whole borrow: [vsyscall] lies at the
 * top of the address space.
 */
__noinline int unwind_mapping_index(const struct jbpf_unwind_process *proc, __u64 pc)
{
	__u64 n, lo = 0, idx, start, below_n, pc_below_start;

	if (!proc)
		return -1;
	n = proc->nr;
	if (!n || proc->mappings[0].start > pc)
		return -1;
#pragma unroll
	for (__u32 step = JBPF_UNWIND_MAX_MAPPINGS / 2; step; step >>= 1) {
		idx = lo + step;
		/* Masked as the compiler leaves it: Linux 6.1's verifier cannot bound lo's sums itself. */
		barrier_var(idx);
		start = proc->mappings[idx & (JBPF_UNWIND_MAX_MAPPINGS - 1)].start;
		below_n = (idx - n) >> 63;
		pc_below_start = ((~pc & start) | (~(pc ^ start) & (pc - start))) >> 63;
		lo += step * (below_n & (pc_below_start ^ 1));
	}
	barrier_var(lo);
	if (pc >= proc->mappings[lo & (JBPF_UNWIND_MAX_MAPPINGS - 1)].end)
		return -1;
	return (int)lo;
}

/* The key in unwind_rows of the row for row_pc among [first, first + nr), or -1. */
__noinline long unwind_row_key(__u32 first, __u32 nr, __u32 row_pc)
{
	const struct jbpf_unwind_row *row;
	__u32 lo = 0, hi = nr, mid, key;

	/* The last row with pc <= row_pc. */
	for (int i = 0; i < UNWIND_ROW_STEPS + 1 && lo < hi; i++) {
		mid = lo + (hi - lo) / 2;
		key = first + mid;
		row = bpf_map_lookup_elem(&unwind_rows, &key);
		if (!row)
			return -1;
		if (row->pc <= row_pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)(first + lo - 1) : -1;
}

/* Tells userspace once that this process's list misses the mapping of pc. */
static __always_inline void unwind_report_miss(struct unwind_walk *w, struct jbpf_unwind_process *proc)
{
	struct jbpf_unwind_miss *miss;

	/*
	 * A plain store, not an atomic one: two CPUs may both report the same
	 * list, which costs userspace one more look at a list it rewrites anyway.
	 */
	if (proc->flags & JBPF_UNWIND_MISS_REPORTED)
		return;
	miss = bpf_ringbuf_reserve(&events, sizeof(*miss), 0);
	if (!miss) {
		/* Tried again on a later sample. */
		count(JBPF_CNT_UNWIND_MISS_LOST);
		return;
	}
	proc->flags |= JBPF_UNWIND_MISS_REPORTED;
	miss->type = JBPF_RECORD_UNWIND_MISS;
	miss->tgid = w->tgid;
	miss->pc = w->pc;
	bpf_ringbuf_submit(miss, BPF_RB_FORCE_WAKEUP);
}

/* One frame-pointer step: 0, or 1 when the walk ends. */
static __always_inline long unwind_fp_step(struct unwind_walk *w)
{
	__u64 saved[2]; /* the caller's rbp, then the return address */

	if (!w->bp) {
		/* The outermost frame of a frame-pointer chain. */
		w->done = true;
		return 1;
	}
	if (bpf_probe_read_user(saved, sizeof(saved), (void *)w->bp)) {
		unwind_fall_back(w, JBPF_CNT_UNWIND_READ);
		return 1;
	}
	/* A chain runs up the stack; anything else is not a chain. */
	if (saved[0] && saved[0] <= w->bp) {
		unwind_fall_back(w, JBPF_CNT_UNWIND_READ);
		return 1;
	}
	w->sp = w->bp + 16;
	w->pc = saved[1];
	w->bp = saved[0];
	w->trusted_pc = false;
	return 0;
}

/* One step by the row: 0, or 1 when the walk ends. */
static __always_inline long unwind_table_step(struct unwind_walk *w, const struct jbpf_unwind_row *row)
{
	__u64 cfa, ra, bp;

	switch (row->cfa_rule) {
	case JBPF_CFA_RSP:
		cfa = w->sp + row->cfa_offset;
		break;
	case JBPF_CFA_RBP:
		cfa = w->bp + row->cfa_offset;
		break;
	case JBPF_CFA_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= 11 ? 8 : 0);
		break;
	case JBPF_CFA_END:
		w->done = true;
		return 1;
	case JBPF_CFA_NONE:
		unwind_fall_back(w, JBPF_CNT_UNWIND_NO_INFO);
		return unwind_fp_step(w);
	default:
		unwind_fall_back(w, JBPF_CNT_UNWIND_STOP);
		return unwind_fp_step(w);
	}
	/* The caller's frame lies above the callee's: a CFA at or below rsp is garbage. */
	if (cfa <= w->sp || bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8))) {
		unwind_fall_back(w, JBPF_CNT_UNWIND_READ);
		return 1;
	}
	if (row->rbp_rule == JBPF_RBP_AT) {
		if (bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + row->rbp_offset))) {
			unwind_fall_back(w, JBPF_CNT_UNWIND_READ);
			return 1;
		}
		w->bp = bp;
	}
	w->sp = cfa;
	w->pc = ra;
	w->trusted_pc = true;
	return 0;
}

/*
 * Writes frame w->n and steps to its caller: 0 goes on, 1 stops. In a
 * followed JVM's code cache (jvm, or NULL), HotSpot's frames are walked
 * instead, as Java frames.
 */
__noinline int unwind_step(struct unwind_walk *w, struct jbpf_unwind_process *proc,
			   const struct jbpf_hotspot_jvm *jvm)
{
	struct jbpf_sample *sample = unwind_sample();
	const struct jbpf_unwind_mapping *m;
	const struct jbpf_unwind_row *row;
	__u32 at;
	__u64 row_pc;
	long key;
	int i;

	/* proc NULL: a JVM's process whose tables are not in yet, walked by rbp but in its code cache. */
	if (!w || !sample)
		return 1;
	if (!w->pc) {
		w->done = true;
		return 1;
	}
	if (jvm && hotspot_in_code(jvm, w->pc)) {
		/* Two calls side by side, not one inside the other: their stacks add up only when nested. */
		if (!(w->chunk_end ? hotspot_chunk_step(w, jvm) : hotspot_step(w, jvm, proc)))
			return 0;
		/* A walk ended in Java is counted by its stop frame's reason, not as a native fallback. */
		if (w->java_stop)
			unwind_fall_back(w, JBPF_CNT_UNWIND_JAVA_STOP);
		return 1;
	}
	at = w->first + w->n;
	if (w->n >= w->max || at >= 2 * JBPF_MAX_STACK_DEPTH) {
		unwind_fall_back(w, JBPF_CNT_UNWIND_DEPTH);
		return 1;
	}
	sample->ips[at] = w->pc;
	w->n++;
	i = unwind_mapping_index(proc, w->pc);
	if (!proc || i < 0 || i >= JBPF_UNWIND_MAX_MAPPINGS) {
		if (w->trusted_pc && proc)
			unwind_report_miss(w, proc);
		unwind_fall_back(w, JBPF_CNT_UNWIND_NO_PROCESS);
		return unwind_fp_step(w);
	}
	/* The mask keeps the bound the verifier needs; the compiler drops the check above. */
	m = &proc->mappings[(__u32)i & (JBPF_UNWIND_MAX_MAPPINGS - 1)];
	/* A return address may be one past a call that never returns: look up the call. */
	row_pc = w->pc - m->bias - (w->n > 1 ? 1 : 0);
	if (!m->nr_rows || row_pc >= m->pc_end) {
		unwind_fall_back(w, m->flags & JBPF_UNWIND_MAPPING_ANON ? JBPF_CNT_UNWIND_ANON : JBPF_CNT_UNWIND_NO_INFO);
		return unwind_fp_step(w);
	}
	key = unwind_row_key(m->first_row, m->nr_rows, (__u32)row_pc);
	if (key < 0 || !(row = bpf_map_lookup_elem(&unwind_rows, &(__u32){ (__u32)key }))) {
		unwind_fall_back(w, JBPF_CNT_UNWIND_NO_INFO);
		return unwind_fp_step(w);
	}
	return unwind_table_step(w, row);
}

/*
 * What bpf_loop hands each iteration: the process's list and its JVM. The
 * walk itself is this CPU's in unwind_walks (a map value cannot hold these
 * pointers, so they stay on the stack).
 */
struct unwind_loop {
	struct jbpf_unwind_process *proc;
	const struct jbpf_hotspot_jvm *jvm;
};

static long unwind_frame(__u32 i, void *ctx)
{
	struct unwind_loop *loop = ctx;
	struct unwind_walk *w = unwind_walk();

	return !w || unwind_step(w, loop->proc, loop->jvm) ? 1 : 0;
}

/*
 * The user registers of the sampled thread: the perf event's when the tick
 * hit user mode (the low bits of cs are the privilege level), else the ones
 * the kernel saved when the thread entered it. false for a kernel thread.
 */
/*
 * The user registers the kernel saved when task entered it (from user
 * mode: a system call, an interrupt, a fault). false for a kernel thread.
 */
static __always_inline bool unwind_saved_regs(struct task_struct *task, struct unwind_walk *w)
{
	struct pt_regs *regs;

	if (!BPF_CORE_READ(task, mm))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return false;
	w->pc = BPF_CORE_READ(regs, ip);
	w->sp = BPF_CORE_READ(regs, sp);
	w->bp = BPF_CORE_READ(regs, bp);
	w->ax = BPF_CORE_READ(regs, ax);
	w->bx = BPF_CORE_READ(regs, bx);
	w->dx = BPF_CORE_READ(regs, dx);
	w->r13 = BPF_CORE_READ(regs, r13);
	return true;
}

static __always_inline bool unwind_user_regs(struct bpf_perf_event_data *ctx, struct task_struct *task,
					     struct unwind_walk *w)
{
	if (!BPF_CORE_READ(task, mm))
		return false;
	/* The context is read a whole u64 at a time; cs is the low half-word of its slot. */
	if (*(__u64 *)((void *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs)) & 3) {
		w->pc = ctx->regs.ip;
		w->sp = ctx->regs.sp;
		w->bp = ctx->regs.bp;
		w->ax = ctx->regs.ax;
		w->bx = ctx->regs.bx;
		w->dx = ctx->regs.dx;
		w->r13 = ctx->regs.r13;
		return true;
	}
	return unwind_saved_regs(task, w);
}

/* The JVM of process tgid whose frames are walked here, or NULL. */
static __always_inline const struct jbpf_hotspot_jvm *unwind_jvm(struct task_struct *task, __u32 tgid)
{
	const struct jbpf_hotspot_jvm *jvm;

	if (!hotspot_walk)
		return NULL;
	jvm = bpf_map_lookup_elem(&hotspot_jvms, &tgid);
	return jvm && jvm->start_ticks == process_start_ticks(task) ? jvm : NULL;
}

/*
 * Walks the user stack of the sampled thread of process tgid by tables into
 * sample->ips from index first, at most max frames, and a followed JVM's
 * Java frames into java_scratch (their number into *java_len). Returns
 * the native frames written, or -1 when the process has no list (the
 * caller walks by frame pointers instead; counted here).
 */
static __always_inline long unwind_user_stack(struct bpf_perf_event_data *ctx, struct task_struct *task, __u32 tgid,
					      __u32 first, __u32 max, __u32 *java_len)
{
	struct unwind_walk *w = unwind_walk_begin(tgid, BPF_CORE_READ(task, pid), first, max);
	struct jbpf_unwind_process *proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	struct unwind_loop loop = {};

	*java_len = 0;
	if (!w)
		return -1;
	/* A kernel thread has no user stack: nothing to walk, nothing to count. */
	if (!unwind_user_regs(ctx, task, w))
		return 0;
	loop.jvm = unwind_jvm(task, tgid);
	if (!proc || proc->start_ticks != process_start_ticks(task)) {
		/* A JVM found before its tables are in (-a) still gets its Java frames, its native ones by rbp. */
		if (!loop.jvm) {
			count(JBPF_CNT_UNWIND_NO_PROCESS);
			return -1;
		}
		proc = NULL;
		w->reason = JBPF_CNT_UNWIND_NO_PROCESS;
	}
	loop.proc = proc;
	bpf_loop(JBPF_MAX_STACK_DEPTH + 1 + (loop.jvm ? JBPF_MAX_JAVA_FRAMES : 0), unwind_frame, &loop, 0);
	if (!w->done && !w->java_stop)
		unwind_fall_back(w, JBPF_CNT_UNWIND_DEPTH);
	count(w->reason ? w->reason : JBPF_CNT_UNWIND_TABLES);
	*java_len = w->jn;
	return w->n;
}

/*
 * The walk of unwind_user_stack for a thread in the kernel, from the user
 * registers it saved on entry, with no program context: the scheduler
 * program's, at a thread's switch-out (offcpu.bpf.c), where the thread is
 * still current and its address space the one loaded. jvm is its JVM
 * (unwind_jvm), or NULL. Not counted among the CPU samples' walks (the
 * caller keeps *reason, the first JBPF_CNT_UNWIND_* that is not TABLES, or
 * 0). The native frames written, or -1 when the process has no list.
 */
static __always_inline long unwind_task_stack(struct task_struct *task, __u32 tgid, const struct jbpf_hotspot_jvm *jvm,
					      __u32 first, __u32 max, __u32 *java_len, __u32 *reason)
{
	struct unwind_walk *w = unwind_walk_begin(tgid, BPF_CORE_READ(task, pid), first, max);
	struct jbpf_unwind_process *proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	struct unwind_loop loop = { .proc = proc, .jvm = jvm };

	*java_len = 0;
	*reason = 0;
	if (!w)
		return -1;
	if (!unwind_saved_regs(task, w))
		return 0;
	if (!proc || proc->start_ticks != process_start_ticks(task))
		return -1;
	bpf_loop(JBPF_MAX_STACK_DEPTH + 1 + (jvm ? JBPF_MAX_JAVA_FRAMES : 0), unwind_frame, &loop, 0);
	if (!w->done && !w->java_stop)
		unwind_fall_back(w, JBPF_CNT_UNWIND_DEPTH);
	*java_len = w->jn;
	*reason = w->reason;
	return w->n;
}

/*
 * The includer builds its records in a per-CPU scratch: the header and
 * ips within UNWIND_SCRATCH_IPS_BYTES (a mask the verifier follows), the
 * Java frames after them.
 */
#define UNWIND_SCRATCH_IPS_BYTES 4096
_Static_assert(sizeof(struct jbpf_sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64) <= UNWIND_SCRATCH_IPS_BYTES,
	       "a header and both stacks fit the mask");

/*
 * Copies the Java frames the walk left in java_scratch to the record being
 * built (unwind_sample), right after its ips (at byte offset, at most the
 * size of a header and both stacks): the bytes they add; none, with
 * java_len cleared, when they cannot be. A global function, for the
 * verifier.
 */
__noinline __u32 java_frames_after_ips(__u32 offset)
{
	__u32 zero = 0, n, bytes;
	struct java_frames *jf = bpf_map_lookup_elem(&java_scratch, &zero);
	struct jbpf_sample *sample = unwind_sample();

	if (!sample || !jf)
		return 0;
	n = sample->java_len;
	if (n > JBPF_MAX_JAVA_FRAMES)
		n = JBPF_MAX_JAVA_FRAMES;
	if (offset > sizeof(*sample) + 2 * JBPF_MAX_STACK_DEPTH * sizeof(__u64) || !n) {
		sample->java_len = 0;
		return 0;
	}
	/* A mask the verifier follows, whatever copies of the checked value clang keeps. */
	barrier_var(offset);
	offset &= UNWIND_SCRATCH_IPS_BYTES - 1;
	bytes = n * sizeof(struct jbpf_java_frame);
	if (bpf_probe_read_kernel((void *)sample + offset, bytes, jf)) {
		sample->java_len = 0;
		return 0;
	}
	return bytes;
}

#endif /* JBPF_UNWIND_BPF_H */
