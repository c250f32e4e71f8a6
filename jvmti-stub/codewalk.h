/*
 * codewalk: how each Java frame of a trace ran (compiled, inlined into a
 * compiled caller, interpreted), from a walk of HotSpot's own physical
 * frames, in the signal handler, after AsyncGetCallTrace gave the trace.
 *
 * The walk starts where AsyncGetCallTrace started (the thread's walkable
 * anchor, else the interrupted registers, or the place of the second walk:
 * lastjava__top) and follows x86_64 HotSpot frames (frame_x86.hpp, JDK 17
 * and 25 alike):
 *
 *  - a pc inside the interpreter (AbstractInterpreter::_code, a StubQueue:
 *    [_stub_buffer, + _buffer_limit)) is one interpreted frame; fp is its
 *    rbp, its Method* at fp[-3], its caller's pc at fp[1], fp at fp[0],
 *    and unextended sp (what a compiled caller's frame size counts from)
 *    at fp[-1] (interpreter_frame_sender_sp_offset);
 *  - a pc inside an nmethod (found in the code cache: the CodeHeap's
 *    segment map gives the HeapBlock holding it, the CodeBlob follows its
 *    header) is one compiled frame of nmethod::_method, of
 *    CodeBlob::_frame_size words: the caller's sp is sp + size * 8, its
 *    pc just below, the saved rbp below that. A pc before
 *    _frame_complete_offset (the prologue) ends the walk;
 *  - anything else (stubs, the call stub, VM code) ends the walk.
 *
 * Each physical frame is matched to the trace through Method*: a
 * jmethodID points at a slot holding its Method* (Method::resolve_jmethod_id).
 * An interpreted frame's method must be the next trace frame's. A compiled
 * frame stands for as many trace frames as its scope chain at its pc has
 * scopes, as AsyncGetCallTrace itself counts them (vframeStreamForte): the
 * PcDesc at the pc (a return address, or the top frame's pc when it is the
 * anchor's last Java pc), else, for a top frame caught at any other pc, the
 * first PcDesc after it (forte.cpp, is_decipherable_compiled_frame); then
 * the chain of ScopeDescs from that PcDesc's scope, each naming its sender
 * (ScopeDesc::decode_body: the sender's offset first, 0 for none). The
 * last of those trace frames must be the nmethod's own method: it is the
 * compiled frame, the ones before it were inlined into it. Counting, not
 * searching, is what keeps a recursion inlined into itself right (A
 * inlining B inlining A: the innermost A is inlined, not the compiled
 * frame). A native method's wrapper is one frame (AsyncGetCallTrace's
 * lineno -3). A frame whose method does not match ends the walk: the
 * trace frames it did not reach keep kind 0 (unknown), which the profiler
 * infers as before.
 *
 * Safety: the walk calls nothing and writes only the kinds of the slot's
 * frames. Stack words are read in [lo, base) (lastjava__top: the stack in
 * use). Code-cache words are read only inside a CodeHeap's committed
 * memory and segment map, whose upper ends (VirtualSpace::_high) are read
 * at each look-up: a code heap only grows (HotSpot never shrinks one), and
 * the segment map is committed after the memory it maps, so a look-up
 * checks both. A blob's fields are read only if the blob's header lies
 * below that end. An nmethod's PcDescs and scopes are read only once its
 * method was found among the trace's frames (a live activation of it on
 * this thread's stack, which HotSpot cannot free: its unloading waits for
 * no frame to use it), only inside the bounds the nmethod gives them,
 * themselves inside the blob (JDK 17) or inside its immutable data (JDK
 * 25, a C-heap block the nmethod owns), which AsyncGetCallTrace has just
 * read for the same frames. Method* values are compared, never dereferenced; a
 * jmethodID's slot is never freed (HotSpot clears it on unloading and
 * keeps the block). Bounds: CODEWALK_MAX_FRAMES physical frames, each to a
 * higher sp; CODEWALK_MAX_HOPS segment map steps per look-up; a binary
 * search of the PcDescs (32 steps at most); CODEWALK_MAX_SCOPES scopes a
 * chain, each at a lower offset than the last.
 *
 * Layout: every offset from VMStructs (codewalk_init.c); a JVM lacking any
 * is not understood and every kind stays 0, with one notice.
 */
#ifndef JBPF_CODEWALK_H
#define JBPF_CODEWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lastjava.h"
#include "ring.h"

/* Physical frames followed: deeper Java frames keep kind 0. */
#define CODEWALK_MAX_FRAMES 64
/* Segment map steps per look-up; HotSpot's steps are up to 254 segments each. */
#define CODEWALK_MAX_HOPS 1024
/* CodeHeaps: HotSpot has one, or three with the segmented code cache. */
#define CODEWALK_MAX_HEAPS 4
/* Scopes in one compiled frame's chain; HotSpot's MaxInlineLevel is 15 by default. */
#define CODEWALK_MAX_SCOPES 256
/* Bytes of PcDescs or scopes an nmethod may claim; HotSpot's are KiBs. */
#define CODEWALK_MAX_DEBUG_BYTES (64u << 20)
/* libjvm's read-only segments, where an nmethod's name is (JDK 17). */
#define CODEWALK_MAX_SEGMENTS 4

struct codewalk_heap {
	uintptr_t heap;       /* the CodeHeap, a C-heap object that lives as long as the JVM */
	uintptr_t low;        /* _memory._low: segment 0 */
	uintptr_t segmap;     /* _segmap._low: one byte per segment */
	uint32_t log2_segment;
};

struct codewalk_layout {
	struct codewalk_heap heaps[CODEWALK_MAX_HEAPS];
	unsigned nr_heaps;
	uint64_t memory_high, segmap_high; /* offsets in a CodeHeap of _memory._high, _segmap._high */
	uint64_t block_used, block_size;   /* HeapBlock::Header::_used (bool) in a HeapBlock; sizeof(HeapBlock) */
	uint64_t blob_size;                /* CodeBlob::_size, int */
	uint64_t blob_frame_size;          /* CodeBlob::_frame_size, int, words */
	uint64_t blob_frame_complete;      /* CodeBlob::_frame_complete_offset, from code begin */
	uint32_t frame_complete_width;     /* 4 (JDK 17) or 2 (JDK 25) */
	uint64_t blob_code;                /* CodeBlob::_code_begin (address) or _code_offset (int) */
	bool code_is_offset;               /* JDK 25: _code_offset */
	bool by_kind;                      /* JDK 25: CodeBlob::_kind; else the name */
	uint64_t blob_kind;                /* CodeBlob::_kind, one byte */
	int32_t kind_nmethod;              /* CodeBlobKind::Nmethod */
	uint64_t blob_name;                /* CodeBlob::_name, const char * */
	uintptr_t seg_lo[CODEWALK_MAX_SEGMENTS], seg_hi[CODEWALK_MAX_SEGMENTS]; /* libjvm read-only */
	unsigned nr_segments;
	uint64_t blob_header;              /* bytes of a CodeBlob read: its largest field's end */
	uint64_t nm_method, nm_level;      /* nmethod::_method (CompiledMethod's on 17), _comp_level */
	uint32_t level_width;              /* 4 (JDK 17) or 1 (JDK 25) */
	/* Where an nmethod's PcDescs and scopes are: */
	bool immutable;                    /* JDK 25: in _immutable_data; JDK 17: inside the nmethod */
	uint64_t nm_pcs;                   /* _scopes_pcs_offset, int: from the nmethod (17), the immutable data (25) */
	uint64_t nm_pcs_end;               /* JDK 17: _dependencies_offset, int, from the nmethod */
	uint64_t nm_scopes;                /* JDK 17: _scopes_data_begin, an address inside the nmethod */
	uint64_t nm_immutable, nm_immutable_size, nm_scopes_offset; /* JDK 25: pointer, int, int */
	uint64_t pc_desc_size, pc_offset, pc_scope; /* sizeof(PcDesc); its _pc_offset, _scope_decode_offset (ints) */
	uint8_t u5_excluded;               /* UNSIGNED5's excluded byte: 1 from JDK 20 on, else 0 */
	uint64_t nm_header;                /* bytes of an nmethod read */
	uintptr_t interp_low, interp_high; /* the interpreter's code */
};

/*
 * Reads the layout from VMStructs once (codewalk_init.c; vmstructs__init
 * must have succeeded). 0: the handler walks; -1: not understood, with a
 * one-line reason in err (the same answer on later calls). Not
 * async-signal-safe.
 */
int codewalk__init(char *err, size_t err_size);

/* Hands the signal side its layout (release); called once, by codewalk__init. */
void codewalk__configure(const struct codewalk_layout *layout);

/*
 * Sets frames[i].kind (JBPF_FRAME_*) for the first of the n frames of a
 * trace AsyncGetCallTrace wrote from top, as far as the walk gets, and
 * zero for the others. top_is_anchor: top is the thread's last Java frame
 * (the anchor's pc), where HotSpot takes the PcDesc at the pc itself. lo,
 * base: the stack words that may be read. Returns how many got a kind.
 * Async-signal-safe: calls nothing.
 */
int codewalk__kinds(const struct lastjava_regs *top, bool top_is_anchor, uintptr_t lo, uintptr_t base,
		    struct ring_frame *frames, int n);

#endif /* JBPF_CODEWALK_H */
