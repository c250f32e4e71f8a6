/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot's frames walked at the sample, for the user stack walk of
 * unwind.bpf.h. x86-64, JDK 17 and 25 alike.
 *
 * Where the walk reaches a pc inside a followed JVM's code cache
 * (hotspot_jvms, written by userspace from the JVM's VMStructs: see
 * bpf/hotspot.h), it steps through HotSpot's own frames instead of unwind
 * tables or frame pointers, and records each as a struct jbpf_java_frame
 * in the per-CPU java_scratch (the sampler copies them after the ips):
 *
 *  - the interpreter (a pc in its codelets): fp is the frame's rbp; the
 *    Method * is at fp[-3], the bcp at fp[-8], the caller's (unextended)
 *    sp at fp[-1], its rbp at fp[0], its pc at fp[1]. The frame is taken
 *    only if the Method's ConstMethod holds the bcp among its bytecodes
 *    (or the bcp is 0: a native method's frame); the ConstMethod is the
 *    frame's cookie, which userspace checks again before naming it.
 *  - a blob found through its CodeHeap's segment map (one byte per
 *    segment: 0xff free, else how many segments back the block's head
 *    is) that is an nmethod: a compiled frame of CodeBlob::_frame_size
 *    words from its sp; the caller's sp is sp + size * 8, its pc just
 *    below, its rbp below that. The nmethod's compile id is the cookie.
 *    The innermost frame may be caught before its frame exists (before
 *    _frame_complete_offset: the instructions from the verified entry to
 *    the pc say whether the return address is at sp[0], at sp[1] after
 *    push rbp, or where the frame's size puts it once sub rsp has
 *    reserved the frame; in a prologue not decoded, sp[0] or sp[1],
 *    whichever points into the code cache) or after it was torn down (at
 *    ret, pop rbp, or the return's safepoint poll);
 *  - the call stub's return address: an entry frame, from native code
 *    into Java. The stub keeps rbp as a frame pointer, so the walk steps
 *    out of it by rbp and goes on in the native code that called it;
 *  - any other blob (runtime stubs, adapters, the deoptimisation blob):
 *    a stub frame, stepped out of by its frame size when it has one, else
 *    by rbp, or at the innermost frame by the return address at sp[0].
 *
 * A virtual thread's frames are the business of hotspot_vthreads.bpf.h:
 * the marker where they meet the carrier's, and those frozen in the heap,
 * the one exception to what follows (their chunk lies anywhere).
 *
 * Every step moves to a higher sp, or the walk ends; every read is
 * bpf_probe_read_user, which cannot fault; a walk that cannot go on ends
 * with a JBPF_JAVA_STOP frame naming why. At most JBPF_MAX_JAVA_FRAMES
 * frames, the last slot kept for that stop.
 */
#ifndef JBPF_HOTSPOT_BPF_H
#define JBPF_HOTSPOT_BPF_H

#include <bpf/bpf_helpers.h>

#include "hotspot.h"
#include "hotspot_prologue.h"
#include "jbpfprof.h"

/* Set by userspace before load: some target's Java frames are walked here. */
const volatile bool hotspot_walk = false;
/* Set by userspace before load: blobs are remembered by pc (hotspot_blobs). */
const volatile bool hotspot_remember_blobs = true;

/* Followed JVMs, by tgid (bpf/hotspot.h). Resized by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct jbpf_hotspot_jvm);
} hotspot_jvms SEC(".maps");

struct java_frames {
	struct jbpf_java_frame f[JBPF_MAX_JAVA_FRAMES];
};

/*
 * Each thread of a followed JVM, by tid: its JavaThread (userspace, from
 * hotspot/threads.c), for the monitor its wait is for.
 */
#define JBPF_MAX_JAVA_THREADS 65536
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JBPF_MAX_JAVA_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} java_threads SEC(".maps");

/* The Java frames of the sample being built on this CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct java_frames);
} java_scratch SEC(".maps");

_Static_assert((JBPF_MAX_JAVA_FRAMES & (JBPF_MAX_JAVA_FRAMES - 1)) == 0, "a power of two, for a mask");

struct hotspot_blob_key {
	__u64 pc;
	__u32 tgid;
	__u32 pad;
};

/* What a walk needs of the code blob holding a pc (hotspot_blob_info). */
struct hotspot_blob {
	__u64 blob;
	__u64 code;        /* where its instructions begin */
	__s32 complete;    /* _frame_complete_offset; -1: never */
	__s32 words;       /* _frame_size */
	__u64 entry;       /* an nmethod's verified entry, where its prologue starts; 0 unknown */
	__u32 compile_id;  /* an nmethod's: its frames' cookie */
	__u32 is_nmethod;
};

/*
 * Blobs by pc, shared by the walks of every JVM (tgid in the key). Finding
 * and measuring a blob costs some ten reads of the target's memory (the
 * heap's bound, the segment map's hops, the block, the blob's fields);
 * the pcs a walk meets are mostly return addresses that come back sample
 * after sample, and at every level of a recursion. An entry found is
 * checked with two reads before it is used: its block still in use, and
 * its compile id (an nmethod) or frame size (a stub) unchanged; code freed
 * and reused at that address fails the check and is looked up again.
 * Sized by userspace (1 when no JVM is walked); JBPFPROF_BLOB_CACHE=0 in
 * the environment turns it off (hotspot_remember_blobs), for benchmarks.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, struct hotspot_blob_key);
	__type(value, struct hotspot_blob);
} hotspot_blobs SEC(".maps");

/*
 * The bytes a step reads from the target to decide where a frame's caller
 * is, in this CPU's entry of hotspot_reads rather than on the stack:
 * hotspot_step's frame would otherwise be some 300 bytes, and with the
 * frames that call it pass the 512 bytes a program's nested calls may use
 * in all before Linux 6.13. A step is never inside another on one CPU
 * (see unwind_walks); each field has one user within a step.
 */
struct hotspot_reads {
	struct hotspot_blob blob; /* the blob of the frame being stepped (hotspot_blob_info) */
	__u64 slot[10];      /* an interpreter frame's slots (HOTSPOT_INTERP_WORDS) */
	__u16 code_size;     /* that frame's method's bytecodes (hotspot_interp_frame) */
	__u64 words[12];     /* the words above a frameless stub's sp (HOTSPOT_LEAF_SCAN) */
	__u8 prologue[64];   /* a verified entry's code (HOTSPOT_PROLOGUE_BYTES) */
	__u8 epilogue[24];   /* the code around a pc in an epilogue (hotspot_unbuilt_frame) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hotspot_reads);
} hotspot_reads SEC(".maps");

static __always_inline struct hotspot_reads *hotspot_read_buffers(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hotspot_reads, &zero);
}

/* The process's executable mapping holding pc, -1 for none (unwind.bpf.h). */
__noinline int unwind_mapping_index(const struct jbpf_unwind_process *proc, __u64 pc);

/* Interpreter frame slots, in words from its rbp (frame_x86.hpp). */
#define HOTSPOT_INTERP_BCP (-8)
#define HOTSPOT_INTERP_METHOD (-3)
#define HOTSPOT_INTERP_SENDER_SP (-1)
#define HOTSPOT_INTERP_LOCALS (-7)
/* Words of an interpreter frame read at once: fp[-8] to fp[1]. */
#define HOTSPOT_INTERP_WORDS 10
/* Segment map steps per look-up: a blob of 8 MiB in 128-byte segments at the worst fill. */
#define HOTSPOT_MAX_HOPS 64
/* The most an entry's caller passes on the stack (bytes): 255 argument words. */
#define HOTSPOT_ENTRY_ARGS (256 * 8)
/* Words above a leaf stub's sp looked at for its return address: C1's push up to a dozen registers. */
#define HOTSPOT_LEAF_SCAN 12
_Static_assert(sizeof(((struct hotspot_reads *)0)->slot) == HOTSPOT_INTERP_WORDS * 8, "hotspot_reads.slot");
_Static_assert(sizeof(((struct hotspot_reads *)0)->words) == HOTSPOT_LEAF_SCAN * 8, "hotspot_reads.words");
_Static_assert(sizeof(((struct hotspot_reads *)0)->prologue) == HOTSPOT_PROLOGUE_BYTES, "hotspot_reads.prologue");
/* The innermost stub's rbp is taken for its frame pointer only this close above sp (bytes). */
#define HOTSPOT_LEAF_NEAR 64
/* The most a leaf stub's frame holds between sp and its rbp (bytes). */
#define HOTSPOT_LEAF_FRAME 512
/* A compiled frame larger than this (words) is not believed. */
#define HOTSPOT_MAX_FRAME_WORDS (1u << 16)

static __always_inline bool hotspot_in_code(const struct jbpf_hotspot_jvm *jvm, __u64 pc)
{
	return pc >= jvm->code_low && pc < jvm->code_high;
}

/* Appends a frame: 0, or 1 when the slots are used up (the last then says so). */
static __always_inline int hotspot_push(struct unwind_walk *w, __u8 kind, __u8 reason, __u64 ptr, __u64 pc,
					__u64 cookie)
{
	__u32 zero = 0, i = w->jn, at;
	struct java_frames *jf = bpf_map_lookup_elem(&java_scratch, &zero);
	struct jbpf_java_frame *f;

	if (!jf || i >= JBPF_MAX_JAVA_FRAMES)
		return 1;
	/* The mask on a copy clang cannot merge with the checked one: Linux 6.1's verifier loses that bound. */
	at = i;
	barrier_var(at);
	f = &jf->f[at & (JBPF_MAX_JAVA_FRAMES - 1)];
	if (i == JBPF_MAX_JAVA_FRAMES - 1 && kind != JBPF_JAVA_STOP) {
		kind = JBPF_JAVA_STOP;
		reason = JBPF_JAVA_STOP_DEPTH;
		w->java_stop = reason;
	}
	f->ptr = ptr;
	f->pc = pc;
	f->cookie = cookie;
	f->native_before = (__u16)w->n;
	f->kind = kind;
	f->reason = reason;
	f->unused = 0;
	w->jn = i + 1;
	return kind == JBPF_JAVA_STOP;
}

/* The walk ends in Java for reason: 1. */
static __always_inline int hotspot_stop(struct unwind_walk *w, __u8 reason)
{
	hotspot_push(w, JBPF_JAVA_STOP, reason, 0, w->pc, 0);
	w->java_stop = reason;
	return 1;
}

/*
 * Moves the walk to the caller: 0, or the stop when it would not go up the
 * stack. Only the innermost frame may leave sp where it is: a stub whose
 * frame is already gone (hotspot_unbuilt_frame); every later step goes up.
 */
static __always_inline int hotspot_to_caller(struct unwind_walk *w, __u64 pc, __u64 sp, __u64 bp)
{
	if (sp < w->sp || (sp == w->sp && (w->n + w->jn > 1 || pc == w->pc)))
		return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->trusted_pc = false;
	return 0;
}

/* The blob holding pc, found as CodeHeap::find_blob does; 0 when none. */
__noinline __u64 hotspot_find_blob(const struct jbpf_hotspot_jvm *jvm, __u64 pc)
{
	const struct jbpf_hotspot_heap *h;
	__u64 idx, block, blob, high;
	__u32 size;
	__u8 hop, used;

	if (!jvm)
		return 0;
	for (int i = 0; i < JBPF_HOTSPOT_MAX_HEAPS; i++) {
		if (i >= jvm->nr_heaps)
			return 0;
		h = &jvm->heaps[i];
		/* A heap only grows: its committed end, read now, bounds what is code in it. */
		if (pc < h->low || bpf_probe_read_user(&high, 8, (void *)(h->heap + jvm->heap_memory_high)) ||
		    pc >= high)
			continue;
		idx = (pc - h->low) >> (h->log2_segment & 31);
		if (bpf_probe_read_user(&hop, 1, (void *)(h->segmap + idx)) || hop == 0xff)
			continue;
		for (int n = 0; n < HOTSPOT_MAX_HOPS && hop; n++) {
			if (hop > idx)
				return 0;
			idx -= hop;
			if (bpf_probe_read_user(&hop, 1, (void *)(h->segmap + idx)))
				return 0;
		}
		if (hop)
			return 0;
		block = h->low + (idx << (h->log2_segment & 31));
		blob = block + jvm->block_size;
		if (bpf_probe_read_user(&used, 1, (void *)(block + jvm->block_used)) || !used ||
		    bpf_probe_read_user(&size, 4, (void *)(blob + jvm->blob_size)))
			return 0;
		/* A stale segment map (a block being freed) can point at a block that ends before pc. */
		if (pc >= blob + size)
			return 0;
		return blob;
	}
	return 0;
}

/* "nmethod", "native n", "method" with its NUL, as little-endian words. */
#define HOTSPOT_NAME_NMETHOD 0x00646f6874656d6eull
#define HOTSPOT_NAME_NATIVE_N 0x6e2065766974616eull
#define HOTSPOT_NAME_METHOD 0x0000646f6874656dull

/* Whether blob is an nmethod: its kind (JDK 25), or its name (JDK 17: "nmethod", "native nmethod"). */
static __always_inline bool hotspot_is_nmethod(const struct jbpf_hotspot_jvm *jvm, __u64 blob)
{
	__u64 name, text[2];
	__u8 kind;

	if (jvm->by_kind)
		return !bpf_probe_read_user(&kind, 1, (void *)(blob + jvm->blob_kind)) && kind == jvm->kind_nmethod;
	if (bpf_probe_read_user(&name, 8, (void *)(blob + jvm->blob_name)) ||
	    bpf_probe_read_user(text, 16, (void *)name))
		return false;
	/* The byte after "native nmethod" and its NUL is not the name's. */
	return text[0] == HOTSPOT_NAME_NMETHOD ||
	       (text[0] == HOTSPOT_NAME_NATIVE_N && (text[1] & 0x00ffffffffffffffull) == HOTSPOT_NAME_METHOD);
}

/* Where blob's code begins: CodeBlob::_code_begin (JDK 17) or blob + _code_offset (JDK 25); 0 unread. */
static __always_inline __u64 hotspot_code_begin(const struct jbpf_hotspot_jvm *jvm, __u64 blob)
{
	__u64 begin = 0;
	__s32 offset;

	if (!jvm->code_is_offset)
		return bpf_probe_read_user(&begin, 8, (void *)(blob + jvm->blob_code)) ? 0 : begin;
	return bpf_probe_read_user(&offset, 4, (void *)(blob + jvm->blob_code)) || offset < 0 ? 0 : blob + offset;
}

/* _frame_complete_offset, 4 or 2 bytes wide; -1 unread. */
static __always_inline __s32 hotspot_frame_complete(const struct jbpf_hotspot_jvm *jvm, __u64 blob)
{
	__s32 v32;
	__s16 v16;

	if (jvm->frame_complete_width == 2)
		return bpf_probe_read_user(&v16, 2, (void *)(blob + jvm->blob_frame_complete)) ? -1 : v16;
	return bpf_probe_read_user(&v32, 4, (void *)(blob + jvm->blob_frame_complete)) ? -1 : v32;
}

/* Whether c starts `cmp rsp, [r15+disp8]` or `[r15+disp32]`: an epilogue's safepoint poll. */
static __always_inline bool hotspot_return_poll(const __u8 *c)
{
	return c[0] == 0x49 && c[1] == 0x3b && (c[2] == 0x67 || c[2] == 0xa7);
}

/*
 * Whether c starts `cmp qword [r15+8], 0`: a native wrapper's test for a
 * pending exception after its `leave`, before `jne` to the exception's
 * `jmp` and its `ret`.
 */
static __always_inline bool hotspot_exception_check(const __u8 *c)
{
	return c[0] == 0x49 && c[1] == 0x81 && c[2] == 0x7f && c[3] == 0x08;
}

/* Whether c starts a jump: `jmp rel32`, or `jmp reg` (r8 to r15 with REX.B). */
static __always_inline bool hotspot_jump(const __u8 *c)
{
	return c[0] == 0xe9 || (c[0] == 0xff && (c[1] & 0xf8) == 0xe0) ||
	       (c[0] == 0x41 && c[1] == 0xff && (c[2] & 0xf8) == 0xe0);
}

/*
 * The innermost frame of a blob caught where its frame does not stand:
 * before it was built (pc before frame_complete), or while it is torn
 * down (at `pop rbp`, at the return's safepoint poll `cmp rsp, [r15+d]`
 * and its `ja`, at `ret`, at the jump that leaves an epilogue for C2's
 * rethrow stub, at a stub's `pop rdx`). 1 when the caller was found this
 * way (into *ret, *sp, *bp), 0 when the frame stands, -1 when not
 * understood. A `ja` or a jump counts only after the instructions that
 * make it an epilogue's: the same opcodes are everywhere in a method body.
 */
static __always_inline int hotspot_unbuilt_frame(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
						 bool before_complete, bool stub, __u64 *ret, __u64 *sp, __u64 *bp)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	__u64 words[2], below;
	__u8 *code, *c;

	if (!reads || bpf_probe_read_user(words, sizeof(words), (void *)w->sp))
		return -1;
	code = reads->epilogue;
	/*
	 * A stub on its way out by a jump, its frame gone: C2's rethrow stub
	 * (add rsp; pop rbp; pop rdx; jmp) and exception blob (pop rdx; ...;
	 * jmp) leave their caller's return address in rdx, the word just
	 * popped; the rethrow stub's way to forward_exception leaves it at sp,
	 * with rbp just popped below it. The word below sp is what a pop left
	 * there: signal delivery spares the 128 bytes under sp (the red zone),
	 * and the thread itself has done nothing since.
	 */
	if (stub && !bpf_probe_read_user(&below, 8, (void *)(w->sp - 8))) {
		if (below == w->dx && hotspot_in_code(jvm, w->dx)) {
			*ret = w->dx, *sp = w->sp, *bp = w->bp;
			return 1;
		}
		if (below == w->bp && hotspot_in_code(jvm, words[0])) {
			*ret = words[0], *sp = w->sp + 8, *bp = w->bp;
			return 1;
		}
	}
	if (before_complete) {
		/* Nothing pushed yet: the return address is at sp; after push rbp, above it. */
		if (hotspot_in_code(jvm, words[0])) {
			*ret = words[0], *sp = w->sp + 8, *bp = w->bp;
			return 1;
		}
		if (hotspot_in_code(jvm, words[1])) {
			*ret = words[1], *sp = w->sp + 16, *bp = words[0];
			return 1;
		}
		return -1;
	}
	/* c[0] is the instruction at pc, c[-12] to c[-1] the bytes before it. */
	if (bpf_probe_read_user(code, sizeof(reads->epilogue), (void *)(w->pc - 12)))
		return 0;
	c = code + 12;
	if (c[0] == 0x5d) { /* pop rbp */
		*ret = words[1], *sp = w->sp + 16, *bp = words[0];
		return 1;
	}
	/* The frame already gone: its return address is at sp. */
	if (c[0] == 0xc3 || (stub && c[0] == 0x5a) || hotspot_return_poll(c) ||
	    (c[0] == 0x0f && c[1] == 0x87 && (hotspot_return_poll(c - 7) || hotspot_return_poll(c - 4))) ||
	    (hotspot_jump(c) && c[-1] == 0x5d &&
	     ((c[-5] == 0x48 && c[-4] == 0x83 && c[-3] == 0xc4) || (c[-8] == 0x48 && c[-7] == 0x81 && c[-6] == 0xc4))) ||
	    (hotspot_exception_check(c) && c[-1] == 0xc9) ||
	    (c[0] == 0x0f && c[1] == 0x85 && hotspot_exception_check(c - 8) && c[-9] == 0xc9) ||
	    (c[0] == 0xe9 && c[-7] == 0x0f && c[-6] == 0x85 && c[-5] == 1 && !c[-4] && !c[-3] && !c[-2] &&
	     c[-1] == 0xc3)) {
		*ret = words[0], *sp = w->sp + 8, *bp = w->bp;
		return 1;
	}
	return 0;
}

/*
 * A stub with no frame size (StubRoutines, C1's leaf stubs, the nmethod
 * entry barrier's stub), stepped out of, in order:
 *  - rbp set up as its frame pointer (an inner frame's rbp, restored by
 *    the walk; the innermost one's only if at most just above sp, since
 *    compiled code does not keep rbp as a frame pointer), with a return
 *    at fp[2] past the -1 the entry barrier's stub pushes before rbp (a
 *    word that deoptimisation overwrites), or at fp[1] into code the
 *    process maps;
 *  - innermost: a return into mapped code at sp (a stub that pushed
 *    nothing, such as the icache flush, which the VM's C++ calls);
 *  - innermost: a return address into the code cache among the first
 *    words above sp (a stub that pushed a few registers, as C1's
 *    slow_subtype_check does);
 *  - rbp's frame all the same (a stub called from the VM's own code);
 *  - innermost: its return address at sp.
 */
static __always_inline int hotspot_frameless_stub(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
						  const struct jbpf_unwind_process *proc, bool top)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	__u64 saved[3], *words, padded[2];
	bool framed, trusted, scanned;
	__u8 code[4];

	if (!reads)
		return hotspot_stop(w, JBPF_JAVA_STOP_READ);
	words = reads->words;
	/* Right after enter (push rbp; mov rbp, rsp), rbp is sp. */
	framed = w->bp >= w->sp && w->bp - w->sp < HOTSPOT_LEAF_FRAME &&
		 !bpf_probe_read_user(saved, sizeof(saved), (void *)w->bp);
	trusted = framed && (!top || w->bp - w->sp <= HOTSPOT_LEAF_NEAR);
	scanned = top && !bpf_probe_read_user(words, HOTSPOT_LEAF_SCAN * 8, (void *)w->sp);

	/*
	 * Back from the VM's C++ by call_VM_leaf, which pushes nothing but,
	 * when sp was not 16-aligned, `sub rsp, 8` before the call and `add
	 * rsp, 8` right after it: at that `add` the stub's return address is
	 * the word above the pad (C1's unwind_exception stub, which has no
	 * frame, calls the VM so).
	 */
	if (!top && !bpf_probe_read_user(code, sizeof(code), (void *)w->pc) && code[0] == 0x48 && code[1] == 0x83 &&
	    code[2] == 0xc4 && code[3] == 8 && !bpf_probe_read_user(padded, sizeof(padded), (void *)w->sp) &&
	    hotspot_in_code(jvm, padded[1]))
		return hotspot_to_caller(w, padded[1], w->sp + 16, w->bp);
	if (trusted && saved[1] == ~0ull && hotspot_in_code(jvm, saved[2]))
		return hotspot_to_caller(w, saved[2], w->bp + 24, saved[0]);
	if (trusted && unwind_mapping_index(proc, saved[1]) >= 0)
		return hotspot_to_caller(w, saved[1], w->bp + 16, saved[0]);
	/* Nothing pushed: a return into code at sp (the icache flush, called from the VM's C++). */
	if (scanned && unwind_mapping_index(proc, words[0]) >= 0)
		return hotspot_to_caller(w, words[0], w->sp + 8, w->bp);
	if (scanned)
		for (int i = 0; i < HOTSPOT_LEAF_SCAN; i++)
			if (hotspot_in_code(jvm, words[i]))
				return hotspot_to_caller(w, words[i], w->sp + 8 * (i + 1), w->bp);
	if (framed)
		return hotspot_to_caller(w, saved[1], w->bp + 16, saved[0]);
	if (scanned)
		return hotspot_to_caller(w, words[0], w->sp + 8, w->bp);
	return hotspot_stop(w, JBPF_JAVA_STOP_STUB);
}

/*
 * Moves the walk to a blob frame's caller. Compiled Java code is called by
 * Java code or the call stub only, all in the code cache: a compiled
 * frame whose caller would be elsewhere was misread (a stale word taken
 * for its return address), and the walk stops there rather than name
 * native frames that are not on the stack.
 */
static __always_inline int hotspot_blob_caller(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
					       bool is_nmethod, __u64 ret, __u64 sp, __u64 bp)
{
	if (is_nmethod && !hotspot_in_code(jvm, ret))
		return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	return hotspot_to_caller(w, ret, sp, bp);
}

/*
 * Where the frame of a stub that HotSpot calls never safe (frame_complete
 * -1, as C2's runtime stubs are) stands from: C2 builds them with `sub rsp,
 * imm` first, after which the frame's size locates its return address (a
 * copy of that address lies at sp in some, such as the rethrow stub, so
 * the words at sp must not be taken for it). -1 for any other start.
 */
static __always_inline __s32 hotspot_stub_prolog(__u64 code)
{
	__u8 c[3];

	if (bpf_probe_read_user(c, sizeof(c), (void *)code) || c[0] != 0x48 || c[2] != 0xec)
		return -1;
	return c[1] == 0x81 ? 7 : c[1] == 0x83 ? 4 : -1;
}

/* An nmethod's verified entry (JBPF_HOTSPOT_ENTRY), if it lies in its code before the frame is complete; else 0. */
static __always_inline __u64 hotspot_verified_entry(const struct jbpf_hotspot_jvm *jvm, const struct hotspot_blob *b)
{
	__u64 entry = 0;
	__u16 offset;

	if (!(jvm->flags & JBPF_HOTSPOT_ENTRY))
		return 0;
	if (jvm->flags & JBPF_HOTSPOT_ENTRY_OFFSET) {
		if (bpf_probe_read_user(&offset, 2, (void *)(b->blob + jvm->nm_verified_entry)))
			return 0;
		entry = b->code + offset;
	} else if (bpf_probe_read_user(&entry, 8, (void *)(b->blob + jvm->nm_verified_entry))) {
		return 0;
	}
	return entry >= b->code && b->complete >= 0 && entry <= b->code + b->complete ? entry : 0;
}

/*
 * The innermost compiled frame caught before its frame is complete, read
 * from its prologue's code (bpf/hotspot_prologue.h): 1 when its caller was
 * found so (into *ret, *sp, *bp), 0 when the frame is reserved and its
 * size locates the caller, -1 when the prologue was not understood (the
 * words at sp must then tell).
 */
static __always_inline int hotspot_prologue_caller(struct unwind_walk *w, const struct hotspot_blob *b, __u64 *ret,
						   __u64 *sp, __u64 *bp)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	__u8 *code;
	__u64 words[2];

	if (!reads || !b->entry || w->pc < b->entry || w->pc - b->entry > 0xffff)
		return -1;
	code = reads->prologue;
	if (bpf_probe_read_user(code, HOTSPOT_PROLOGUE_BYTES, (void *)b->entry))
		return -1;
	switch (hotspot_prologue_state(code, (__u32)(w->pc - b->entry))) {
	case HOTSPOT_PROLOGUE_NOTHING_PUSHED:
		if (bpf_probe_read_user(ret, 8, (void *)w->sp))
			return -1;
		*sp = w->sp + 8, *bp = w->bp;
		return 1;
	case HOTSPOT_PROLOGUE_RBP_PUSHED:
		if (bpf_probe_read_user(words, sizeof(words), (void *)w->sp))
			return -1;
		*ret = words[1], *sp = w->sp + 16, *bp = words[0];
		return 1;
	case HOTSPOT_PROLOGUE_FRAME_RBP_LIVE:
		/* The frame reserved, rbp about to be saved in it: the return is its top word. */
		if (b->words <= 0 || (__u32)b->words > HOTSPOT_MAX_FRAME_WORDS)
			return -1;
		*sp = w->sp + (__u64)b->words * 8;
		if (bpf_probe_read_user(ret, 8, (void *)(*sp - 8)))
			return -1;
		*bp = w->bp;
		return 1;
	case HOTSPOT_PROLOGUE_FRAME:
		return b->words > 0 ? 0 : -1;
	default:
		return -1;
	}
}

/*
 * The blob holding w->pc, from hotspot_blobs or read afresh (and then
 * remembered): 0, or the reason the walk stops.
 */
static __always_inline int hotspot_blob_info(const struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
					     struct hotspot_blob *b)
{
	struct hotspot_blob_key key = { .pc = w->pc, .tgid = w->tgid };
	struct hotspot_blob *known = hotspot_remember_blobs ? bpf_map_lookup_elem(&hotspot_blobs, &key) : NULL;
	__s32 now = 0;
	__u8 used = 0;

	if (known) {
		*b = *known;
		if (!bpf_probe_read_user(&used, 1, (void *)(b->blob - jvm->block_size + jvm->block_used)) && used &&
		    !bpf_probe_read_user(&now, 4,
					 (void *)(b->blob + (b->is_nmethod ? jvm->nm_compile_id : jvm->blob_frame_size))) &&
		    now == (b->is_nmethod ? (__s32)b->compile_id : b->words))
			return 0;
	}
	b->blob = hotspot_find_blob(jvm, w->pc);
	if (!b->blob)
		return JBPF_JAVA_STOP_NO_BLOB;
	b->is_nmethod = hotspot_is_nmethod(jvm, b->blob);
	b->code = hotspot_code_begin(jvm, b->blob);
	b->complete = hotspot_frame_complete(jvm, b->blob);
	b->words = 0;
	b->compile_id = 0;
	if (!b->code || b->complete < -1 ||
	    bpf_probe_read_user(&b->words, 4, (void *)(b->blob + jvm->blob_frame_size)) ||
	    (b->is_nmethod && bpf_probe_read_user(&b->compile_id, 4, (void *)(b->blob + jvm->nm_compile_id))))
		return JBPF_JAVA_STOP_READ;
	b->entry = b->is_nmethod ? hotspot_verified_entry(jvm, b) : 0;
	if (hotspot_remember_blobs)
		bpf_map_update_elem(&hotspot_blobs, &key, b, BPF_ANY);
	return 0;
}

/* A compiled frame (is_nmethod) or a stub frame in blob, and its caller. */
static __always_inline int hotspot_blob_frame(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
					      const struct jbpf_unwind_process *proc, const struct hotspot_blob *b,
					      bool top)
{
	__u64 code = b->code, ret, sp, bp, saved[2];
	__s32 complete = b->complete, words = b->words;
	bool is_nmethod = b->is_nmethod, before_complete;
	int unbuilt = 0;

	if (hotspot_push(w, is_nmethod ? JBPF_JAVA_COMPILED : JBPF_JAVA_STUB, 0, b->blob, w->pc, b->compile_id))
		return 1;
	if (top) {
		if (complete < 0 && !is_nmethod && words > 0)
			complete = hotspot_stub_prolog(code);
		before_complete = complete < 0 || w->pc < code + complete;
		unbuilt = is_nmethod && before_complete ? hotspot_prologue_caller(w, b, &ret, &sp, &bp) : -1;
		if (unbuilt < 0)
			unbuilt = hotspot_unbuilt_frame(w, jvm, before_complete, !is_nmethod, &ret, &sp, &bp);
		if (unbuilt < 0 && words <= 0 && is_nmethod)
			return hotspot_stop(w, JBPF_JAVA_STOP_PROLOGUE);
		if (unbuilt < 0 && words <= 0)
			return hotspot_frameless_stub(w, jvm, proc, true);
		if (unbuilt > 0)
			return hotspot_blob_caller(w, jvm, is_nmethod, ret, sp, bp);
	}
	if (words > 0) {
		if ((__u32)words > HOTSPOT_MAX_FRAME_WORDS)
			return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
		sp = w->sp + (__u64)words * 8;
		if (bpf_probe_read_user(saved, sizeof(saved), (void *)(sp - 16)))
			return hotspot_stop(w, JBPF_JAVA_STOP_READ);
		/*
		 * Caught in the prologue past its last push (the frame's size is
		 * reserved, frame_complete not reached yet): taken only if its
		 * caller is Java code, as it must be.
		 */
		if (unbuilt < 0 && !hotspot_in_code(jvm, saved[1]))
			return hotspot_stop(w, is_nmethod ? JBPF_JAVA_STOP_PROLOGUE : JBPF_JAVA_STOP_STUB);
		return hotspot_blob_caller(w, jvm, is_nmethod, saved[1], sp, saved[0]);
	}
	if (is_nmethod)
		return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	return hotspot_frameless_stub(w, jvm, proc, top);
}

/*
 * Whether method, a value from a register, is a Method *: its class lists
 * it at its idnum (its ConstMethod's constant pool's holder's methods).
 * Its ConstMethod into *cmethod.
 */
static __always_inline bool hotspot_is_method(const struct jbpf_hotspot_jvm *jvm, __u64 method, __u64 *cmethod)
{
	__u64 pool, holder, methods, listed;
	__s32 length;
	__u16 idnum;

	return (jvm->flags & JBPF_HOTSPOT_METHOD_CHECK) &&
	       !bpf_probe_read_user(cmethod, 8, (void *)(method + jvm->method_const)) &&
	       !bpf_probe_read_user(&pool, 8, (void *)(*cmethod + jvm->const_constants)) &&
	       !bpf_probe_read_user(&idnum, 2, (void *)(*cmethod + jvm->const_idnum)) &&
	       !bpf_probe_read_user(&holder, 8, (void *)(pool + jvm->pool_holder)) &&
	       !bpf_probe_read_user(&methods, 8, (void *)(holder + jvm->klass_methods)) &&
	       !bpf_probe_read_user(&length, 4, (void *)(methods + jvm->array_length)) && idnum < length &&
	       !bpf_probe_read_user(&listed, 8, (void *)(methods + jvm->array_data + 8 * (__u64)idnum)) &&
	       listed == method;
}

/*
 * The innermost frame, in an interpreter entry still building its frame
 * (templateInterpreterGenerator_x86.cpp, the normal and native entries):
 * rbx holds the Method * being entered (checked to be one: the register
 * may hold anything elsewhere in the interpreter) and r13 the caller's sp. The
 * return address is at sp until the entry pops it into rax to push the
 * locals under it; then in rax; then, once pushed back with rbp (enter),
 * at fp[1], with the method's slot at fp[-3] filled soon after. The
 * method is taken at its first bytecode.
 */
static __always_inline int hotspot_interpreter_entry(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm)
{
	__u64 cmethod, ret, sp, bp, saved[2], method_slot = 0;
	__u16 code_size;

	if (!hotspot_is_method(jvm, w->bx, &cmethod) ||
	    bpf_probe_read_user(&code_size, 2, (void *)(cmethod + jvm->const_code_size)))
		return hotspot_stop(w, JBPF_JAVA_STOP_INTERPRETER);
	if (!bpf_probe_read_user(&ret, 8, (void *)w->sp) && hotspot_in_code(jvm, ret)) {
		/* Nothing popped yet. */
		sp = w->sp + 8;
		bp = w->bp;
	} else if (w->bp > w->sp && w->bp - w->sp < HOTSPOT_LEAF_FRAME &&
		   !bpf_probe_read_user(saved, sizeof(saved), (void *)w->bp) && hotspot_in_code(jvm, saved[1]) &&
		   (saved[1] == w->ax ||
		    (!bpf_probe_read_user(&method_slot, 8, (void *)(w->bp + 8 * HOTSPOT_INTERP_METHOD)) &&
		     method_slot == w->bx))) {
		/* Pushed back with rbp: this rbp is the new frame's. */
		ret = saved[1];
		sp = w->bp + 16;
		bp = saved[0];
	} else if (hotspot_in_code(jvm, w->ax)) {
		/* Popped into rax; rbp still the caller's. */
		ret = w->ax;
		sp = w->sp + 8;
		bp = w->bp;
	} else {
		return hotspot_stop(w, JBPF_JAVA_STOP_INTERPRETER);
	}
	/* A compiled caller's frame size counts from the sp it called with, which r13 keeps. */
	if (w->r13 >= sp && w->r13 - sp < HOTSPOT_ENTRY_ARGS)
		sp = w->r13;
	if (hotspot_push(w, JBPF_JAVA_INTERPRETED, 0, w->bx, code_size ? cmethod + jvm->const_size : 0, cmethod))
		return 1;
	return hotspot_to_caller(w, ret, sp, bp);
}

/*
 * Whether an interpreter frame's slots (slot[i] is fp[i + HOTSPOT_INTERP_BCP])
 * hold a frame: its Method's ConstMethod (into *cmethod) holds its bcp
 * among its bytecodes, or the bcp is 0 (a native method's frame). Its
 * bytecodes' size into *code_size (in the per-CPU reads: the steps'
 * stack is the 6.1 verifier's to count).
 */
static __always_inline bool hotspot_interp_frame(const struct jbpf_hotspot_jvm *jvm, const __u64 *slot,
						 __u64 *cmethod, __u16 *code_size)
{
	__u64 method = slot[HOTSPOT_INTERP_METHOD - HOTSPOT_INTERP_BCP], bcp = slot[0];

	return !bpf_probe_read_user(cmethod, 8, (void *)(method + jvm->method_const)) &&
	       !bpf_probe_read_user(code_size, 2, (void *)(*cmethod + jvm->const_code_size)) &&
	       (!bcp || (bcp >= *cmethod + jvm->const_size && bcp < *cmethod + jvm->const_size + *code_size));
}

/*
 * The bcp of the innermost interpreted frame: the template interpreter
 * keeps the live one in r13 and writes it to the frame only before it
 * calls out (save_bcp), so the frame's slot may still point at the
 * bytecode where the method last called, or at its first. r13 when it
 * lies among the frame's bytecodes, else the slot's (a native method's 0,
 * or code that uses r13 otherwise, such as an entry).
 */
static __always_inline __u64 hotspot_live_bcp(const struct jbpf_hotspot_jvm *jvm, const struct unwind_walk *w,
					       __u64 saved, __u64 cmethod, __u16 code_size)
{
	if (saved && w->r13 >= cmethod + jvm->const_size && w->r13 < cmethod + jvm->const_size + code_size)
		return w->r13;
	return saved;
}

/* An interpreted frame at rbp, and its caller. */
static __always_inline int hotspot_interpreted(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm, bool top)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	__u64 *slot, fp = w->bp, cmethod;

	if (!reads)
		return hotspot_stop(w, JBPF_JAVA_STOP_READ);
	slot = reads->slot;
	/* slot[i] is fp[i + HOTSPOT_INTERP_BCP]. */
	if (fp <= w->sp || bpf_probe_read_user(slot, HOTSPOT_INTERP_WORDS * 8, (void *)(fp + 8 * HOTSPOT_INTERP_BCP)) ||
	    !hotspot_interp_frame(jvm, slot, &cmethod, &reads->code_size))
		return top ? hotspot_interpreter_entry(w, jvm) : hotspot_stop(w, JBPF_JAVA_STOP_INTERPRETER);
	/* A caller's slot is current: the interpreter saved it before the call. */
	if (top)
		slot[0] = hotspot_live_bcp(jvm, w, slot[0], cmethod, reads->code_size);
	if (hotspot_push(w, JBPF_JAVA_INTERPRETED, 0, slot[HOTSPOT_INTERP_METHOD - HOTSPOT_INTERP_BCP], slot[0],
			 cmethod))
		return 1;
	/* Interpreted code too is called from the code cache only (hotspot_blob_caller). */
	if (!hotspot_in_code(jvm, slot[1 - HOTSPOT_INTERP_BCP]))
		return hotspot_stop(w, JBPF_JAVA_STOP_FRAME);
	return hotspot_to_caller(w, slot[1 - HOTSPOT_INTERP_BCP], slot[HOTSPOT_INTERP_SENDER_SP - HOTSPOT_INTERP_BCP],
				 slot[-HOTSPOT_INTERP_BCP]);
}

/* A virtual thread's frames: where they meet its carrier's, and those frozen in the heap. */
#include "hotspot_vthreads.bpf.h"

/*
 * One step through HotSpot's frames, at a pc inside jvm's code cache: 0
 * goes on (with the caller's pc, sp, rbp in w), 1 stops.
 *
 * A virtual thread's frames lie on its carrier's stack while it runs,
 * above Continuation.enterSpecial's frame: the walk marks where they end
 * (JBPF_JAVA_CARRIER) and goes on into the carrier's. Mounting it thawed
 * only its innermost frames when its stack was deep; the frame that
 * returns into the rest returns into the return barrier, and the rest
 * stay frozen in the heap: the marker says so, and the walk goes on at
 * enterSpecial's return address, from the ContinuationEntry.
 */
__noinline int hotspot_step(struct unwind_walk *w, const struct jbpf_hotspot_jvm *jvm,
			    const struct jbpf_unwind_process *proc)
{
	struct hotspot_reads *reads = hotspot_read_buffers();
	struct hotspot_blob *b;
	__u64 saved[2], entry;
	bool top;
	int stop;

	if (!w || !jvm || !reads)
		return 1;
	b = &reads->blob;
	top = w->n == 0 && w->jn == 0;
	if (w->pc >= jvm->interp_low && w->pc < jvm->interp_high)
		return hotspot_interpreted(w, jvm, top);
	if (w->pc == jvm->call_stub_return) {
		/* An entry frame: the call stub keeps rbp; its caller is native code. */
		if (w->bp <= w->sp || bpf_probe_read_user(saved, sizeof(saved), (void *)w->bp))
			return hotspot_stop(w, JBPF_JAVA_STOP_READ);
		return hotspot_to_caller(w, saved[1], w->bp + 16, saved[0]);
	}
	stop = hotspot_blob_info(w, jvm, b);
	if (stop)
		return hotspot_stop(w, stop);
	/* Out of a virtual thread's outermost frame, Continuation.enter, into enterSpecial. */
	if ((jvm->flags & JBPF_HOTSPOT_CONTINUATIONS) && !top && !w->carrier && b->is_nmethod &&
	    hotspot_in_enter_special(w, jvm, b)) {
		w->carrier = true;
		hotspot_vthread(w, jvm);
		if (hotspot_push(w, JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_WHOLE, w->vthread_id, w->vthread_name[0],
				 w->vthread_name[1]))
			return 1;
	}
	if ((jvm->flags & JBPF_HOTSPOT_CONTINUATIONS) && !top && !w->carrier && !b->is_nmethod &&
	    hotspot_at_return_barrier(w, jvm, &entry)) {
		/* The rest of its frames, frozen in the heap, walked there when they can be found. */
		if (!hotspot_chunk_enter(w, jvm, entry))
			return 0;
		w->carrier = true;
		if (hotspot_push(w, JBPF_JAVA_CARRIER, JBPF_JAVA_CARRIER_FROZEN, w->vthread_id, w->vthread_name[0],
				 w->vthread_name[1]))
			return 1;
		/* Where enterSpecial's call of the continuation returns, with the sp it called from. */
		w->pc = jvm->cont_return_pc;
		w->sp = entry;
		w->trusted_pc = false;
		return 0;
	}
	return hotspot_blob_frame(w, jvm, proc, b, top);
}

#endif /* JBPF_HOTSPOT_BPF_H */
