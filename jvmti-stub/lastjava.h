/*
 * lastjava: where AsyncGetCallTrace gives up on a Java thread, the places
 * to call it again from: the thread's last Java frame, or the Java caller
 * of the stub or VM code it was interrupted in.
 *
 * Why it gives up (HotSpot's forte.cpp and the x86 pd_get_top_frame; JDK
 * 17 and 25 alike): it starts from the thread's JavaFrameAnchor (last Java
 * sp, fp, pc) only when the anchor is "walkable", i.e. has a pc, and
 * otherwise, for a thread in Java, from the interrupted registers; and it
 * cannot walk out of a runtime stub, which C1 and C2 both mark
 * "frame_never_safe" for profilers (c1_Runtime1.cpp, opto/output.cpp).
 *
 *  - Runtime calls from compiled code (the allocation slow path
 *    _new_array_Java -> OptoRuntime::new_array_C, C1's new_type_array,
 *    other JRT entries) and from the interpreter record the last Java sp
 *    (and, but for C2's stubs, fp) but no pc: the pc is the return address
 *    just below that sp, which HotSpot's own JavaFrameAnchor::make_walkable
 *    stores before the thread becomes safepoint-safe. A sample in between
 *    ends in "unknown state, not in Java" (-3) or "unknown state in Java"
 *    (-5). From the interpreter, that pc is enough. From compiled code it
 *    points into the stub, so the places to try are the stub's caller: the
 *    return address at fp[1] of the stub's frame (C1's stubs push rbp and
 *    record it as the anchor's fp), else each word of the stub's frame,
 *    from the anchor's sp up, that points into the code cache (C2's stubs
 *    are a few words).
 *  - Leaf stubs called from compiled code with no anchor at all
 *    (System.arraycopy's jlong_disjoint_arraycopy and kin), and leaf VM
 *    functions: the registers point into the stub (-5). The stubs and
 *    libjvm keep a frame-pointer chain (push rbp; mov rbp, rsp), so the
 *    Java caller's return address is at fp[1] of the first frame on that
 *    chain whose return address is in the code cache, its sp at fp + 2.
 *    Interrupted outside the code cache (a VM or libc leaf function that
 *    keeps no frame pointer), the words above sp that point into the code
 *    cache come next.
 *
 * lastjava__begin says which case the thread is in; lastjava__next gives
 * one place (registers) per call, the most likely first. The handler
 * calls AsyncGetCallTrace from each, through the anchor (its three fields
 * stored, then put back) or through the signal's context (its three
 * registers changed, then put back), until one gives frames. HotSpot
 * itself checks each place (safe_for_sender, a PcDesc for a compiled
 * pc): one that is not a Java frame gives an error code, not a stack.
 *
 * Why the stores are sound: the anchor is the interrupted thread's own,
 * the handler runs on that thread, and only in states in which no other
 * thread walks it (_thread_in_Java, _thread_in_vm: not safepoint-safe, so
 * neither the VM thread nor a handshake looks at its frames); the fields
 * describe a real frame of that stack, and are put back before the
 * interrupted code runs again. The context is the handler's own
 * argument, put back before the kernel restores the thread from it.
 *
 * Why the reads cannot fault: the JavaThread is the calling thread's own,
 * live while it runs (javathread.h), and only its fields at the offsets
 * VMStructs gives are read, each checked to lie inside sizeof(JavaThread);
 * stack words are read only between the interrupted sp and the thread's
 * stack base (JavaThread::_stack_base), the part of its stack in use,
 * which is mapped. Every pointer taken from the stack is checked against
 * those bounds before it is read, and a walk follows at most
 * LASTJAVA_MAX_LINKS links, each to a higher address, and a scan looks at
 * LASTJAVA_MAX_SCAN words at most.
 *
 * Layout: every offset and constant comes from VMStructs (vmstructs.h).
 * A JVM that lists any of them not, or with an unexpected size, is "not
 * understood": lastjava__init says why in one line, and the handler keeps
 * AsyncGetCallTrace's answer as it is.
 *
 * lastjava__init (lastjava_init.c) is not async-signal-safe (it reads the
 * tables with strcmp) and runs once, before the handler can use the layout (release /
 * acquire on `ready`). lastjava__begin, lastjava__next and lastjava__top are
 * async-signal-safe: they call nothing, read as above and write nothing
 * shared.
 */
#ifndef JBPF_LASTJAVA_H
#define JBPF_LASTJAVA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frame-pointer links followed from the interrupted fp looking for a Java caller. */
#define LASTJAVA_MAX_LINKS 16
/* Words of a stub's frame looked at, from the anchor's sp up; C2's stubs have a few, C1's saved registers. */
#define LASTJAVA_MAX_SCAN 64

/* The three registers AsyncGetCallTrace reads from a context (os::fetch_frame_from_context). */
struct lastjava_regs {
	uintptr_t pc, sp, fp;
};

/* The anchor's three fields, in the calling thread's JavaThread. */
struct lastjava_anchor {
	uintptr_t *sp, *pc, *fp;
};

/* What to try, where the search stands (lastjava__begin fills it). */
struct lastjava_search {
	bool anchored;      /* places go through the anchor, else through the context */
	uintptr_t lo, base; /* the stack words that may be read: [lo, base) */
	uintptr_t sp, fp;   /* the anchor's sp and fp, or the interrupted ones */
	uintptr_t link;     /* the next frame pointer to follow */
	unsigned step;      /* anchored: 0 the anchor's own pc, 1 its fp, then the scan */
	unsigned scanned;   /* words scanned so far, from sp up */
	bool scan;          /* not anchored: scan after the chain (interrupted outside the code cache) */
};

/* What lastjava__init reads: offsets in a JavaThread, HotSpot's constants and bounds. */
struct lastjava_layout {
	uint64_t anchor_sp, anchor_pc, anchor_fp; /* the JavaFrameAnchor's fields */
	uint64_t state, stack_base, stack_size;   /* _thread_state, _stack_base, _stack_size */
	int32_t in_vm, in_java;                   /* JavaThreadState values */
	uintptr_t code_low, code_high;            /* the code cache's bounds */
};

/*
 * Reads the layout from VMStructs once (lastjava_init.c; vmstructs__init
 * must have succeeded). 0: the handler may use it; -1: not understood,
 * with a one-line reason in err (the same answer on later calls).
 */
int lastjava__init(char *err, size_t err_size);

/* Hands the signal side its layout (release); called once, by lastjava__init. */
void lastjava__configure(const struct lastjava_layout *layout);

/*
 * thread: the calling thread's live JavaThread; at: the interrupted
 * registers. true when there are places to try: the thread is in the VM
 * with a last Java sp but no pc, or in Java (with such an anchor, or with
 * none); *anchor then holds the anchor's fields. false otherwise (layout
 * not understood, another state, a walkable anchor: AsyncGetCallTrace
 * already used it).
 */
bool lastjava__begin(const char *thread, const struct lastjava_regs *at, struct lastjava_search *search,
		     struct lastjava_anchor *anchor);

/*
 * The next place to call AsyncGetCallTrace from, into *out: true, or false
 * when there is none left. *from_anchor_pc: whether it is the anchor
 * itself made walkable (the last Java frame), not a stub's caller.
 */
bool lastjava__next(struct lastjava_search *search, struct lastjava_regs *out, bool *from_anchor_pc);

/*
 * Where AsyncGetCallTrace starts walking the calling thread (forte.cpp,
 * x86 pd_get_top_frame): its walkable anchor (last Java sp and pc set;
 * *from_anchor then true), else the interrupted registers at; into *top,
 * with the stack words that may be read, [*lo, *base). false when the
 * layout is not understood or at's sp is not on the thread's stack.
 * Async-signal-safe: calls nothing.
 */
bool lastjava__top(const char *thread, const struct lastjava_regs *at, struct lastjava_regs *top, bool *from_anchor,
		   uintptr_t *lo, uintptr_t *base);

#endif /* JBPF_LASTJAVA_H */
