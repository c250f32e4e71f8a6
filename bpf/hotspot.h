/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot frames walked by BPF: the wire format between the layout reader
 * (hotspot/layout.c, userspace) and the walker (bpf/hotspot.bpf.h), and the
 * Java frames a sample carries back.
 *
 * For each JVM followed, userspace reads HotSpot's own description of its
 * structures (VMStructs) from the process's memory and writes one
 * struct jbpf_hotspot_jvm into the `hotspot_jvms` map, by tgid. Every
 * offset is a byte offset inside the object named, checked by userspace to
 * lie inside that object's size; every address is the target's.
 *
 * x86-64. Only fixed-width types: this header compiles both against
 * vmlinux.h (BPF side) and against <linux/types.h> (userspace).
 */
#ifndef JBPF_HOTSPOT_H
#define JBPF_HOTSPOT_H

/* CodeHeaps: one, or three with the segmented code cache. */
#define JBPF_HOTSPOT_MAX_HEAPS 4

/* Java frames one sample carries at most; a deeper stack ends in JBPF_JAVA_STOP_DEPTH. */
#define JBPF_MAX_JAVA_FRAMES 256

struct jbpf_hotspot_heap {
	__u64 heap;          /* the CodeHeap object */
	__u64 low;           /* CodeHeap::_memory._low: segment 0 */
	__u64 segmap;        /* CodeHeap::_segmap._low: one byte per segment */
	__u32 log2_segment;  /* CodeHeap::_log2_segment_size */
	__u32 unused;
};

struct jbpf_hotspot_jvm {
	__u64 start_ticks;   /* the process's start (JBPF_CLOCK_TICK_NS): a later owner of the tgid gets nothing */
	__u64 code_low;      /* CodeCache::_low_bound: the reserved code cache, all heaps */
	__u64 code_high;     /* CodeCache::_high_bound */
	__u64 interp_low;    /* AbstractInterpreter::_code's StubQueue: [_stub_buffer, + _buffer_limit) */
	__u64 interp_high;
	__u64 call_stub_return; /* StubRoutines::_call_stub_return_address: an entry frame's pc */
	struct jbpf_hotspot_heap heaps[JBPF_HOTSPOT_MAX_HEAPS];
	__u32 nr_heaps;
	/* CodeHeap, and the HeapBlock before each blob */
	__u16 heap_memory_high;  /* offset of _memory._high in a CodeHeap */
	__u16 heap_segmap_high;  /* offset of _segmap._high in a CodeHeap */
	__u16 block_used;        /* HeapBlock::_header._used (a bool) in a HeapBlock */
	__u16 block_size;        /* sizeof(HeapBlock): the blob follows it */
	/* CodeBlob */
	__u16 blob_size;         /* CodeBlob::_size, int */
	__u16 blob_frame_size;   /* CodeBlob::_frame_size, int, in words */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset, from the code's start */
	__u16 blob_code;         /* CodeBlob::_code_begin (address), or _code_offset (int, from the blob) */
	__u16 blob_kind;         /* CodeBlob::_kind, one byte (by_kind) */
	__u16 blob_name;         /* CodeBlob::_name, const char * (JDK 17: nmethods are told by it) */
	__u8 frame_complete_width; /* 4 (int) or 2 (int16_t) */
	__u8 code_is_offset;     /* 1: blob_code is the int _code_offset */
	__u8 by_kind;            /* 1: an nmethod is told by _kind == kind_nmethod, else by _name */
	__u8 kind_nmethod;       /* CodeBlobKind::Nmethod */
	/* nmethod */
	__u16 nm_method;         /* nmethod::_method (CompiledMethod's on JDK 17), Method * */
	__u16 nm_compile_id;     /* nmethod::_compile_id, int: the cookie of a compiled frame */
	__u16 nm_header;         /* bytes of an nmethod the walker reads: its largest field's end */
	/*
	 * With JBPF_HOTSPOT_ENTRY, where a compiled frame's prologue starts:
	 * nmethod::_verified_entry_point (JDK 17, an address) or
	 * _verified_entry_offset (JDK 25, u2, from the code's start; with
	 * JBPF_HOTSPOT_ENTRY_OFFSET).
	 */
	__u16 nm_verified_entry;
	/* Method, ConstMethod: an interpreted frame's checks */
	__u16 method_const;      /* Method::_constMethod, ConstMethod * */
	__u16 const_code_size;   /* ConstMethod::_code_size, u2 */
	__u16 const_size;        /* sizeof(ConstMethod): the bytecodes follow it */
	/*
	 * With JBPF_HOTSPOT_METHOD_CHECK, how a Method * taken from a register
	 * is checked to be one: its holder's method array holds it at its
	 * idnum (ConstMethod::_constants, ::_method_idnum, u2;
	 * ConstantPool::_pool_holder; InstanceKlass::_methods;
	 * Array<Method*>::_length, int, and ::_data).
	 */
	__u16 const_constants, const_idnum, pool_holder, klass_methods, array_length, array_data;
	__u32 flags;             /* JBPF_HOTSPOT_* */
	/*
	 * With JBPF_HOTSPOT_LOCKS, the class of the monitor a thread waits to
	 * enter (JavaThread::_current_pending_monitor) or waits on
	 * (_current_waiting_monitor): the ObjectMonitor's object
	 * (ObjectMonitor::_object, a WeakHandle: a pointer to the oop first),
	 * its compressed class (oopDesc::_metadata._compressed_klass, 32
	 * bits), decoded as klass_base + (narrow << klass_shift).
	 */
	__u16 thread_pending_monitor, thread_waiting_monitor, monitor_object, oop_klass;
	__u32 klass_shift;
	__u64 klass_base;
	/*
	 * With JBPF_HOTSPOT_CONTINUATIONS (JDK 21 and later), where a virtual
	 * thread's frames meet its carrier's: the return address into
	 * Continuation.enterSpecial (ContinuationEntry::_return_pc's value),
	 * and JavaThread::_cont_entry, the ContinuationEntry of the
	 * continuation a thread has mounted (0 for none), on its stack.
	 */
	__u64 cont_return_pc;
	__u16 thread_cont_entry;
	/*
	 * With JBPF_HOTSPOT_CHUNKS (and CONTINUATIONS, LOCKS), the frozen
	 * frames of the virtual thread a carrier runs: its JavaThread's
	 * _vthread (an OopHandle: a pointer to the oop), that VirtualThread's
	 * cont, the Continuation's tail, a StackChunk (checked by its class,
	 * chunk_klass): its frames from sp to bottom (ints, in words from
	 * chunk_stack, where the frames begin: the class's instance size),
	 * then those of its parent. Oop fields are narrow (oop_narrow: decoded
	 * as oop_base + (narrow << oop_shift)) or whole.
	 */
	__u16 thread_vthread;
	__u16 vthread_cont, cont_tail, chunk_parent, chunk_sp, chunk_bottom, chunk_stack;
	__u16 thread_tid;        /* java.lang.Thread.tid (a long): the marker's ptr, the virtual thread's id */
	__u8 oop_narrow, oop_shift;
	__u8 unused_chunks[4];
	__u64 oop_base;
	__u64 chunk_klass;
	/*
	 * With JBPF_HOTSPOT_VTHREAD_NAMES, a virtual thread's name: its
	 * Thread.name, a String, whose value is a byte[] in Latin-1 when its
	 * coder is 0; the array's length (an int) right after its compressed
	 * class pointer, its bytes after that.
	 */
	__u16 thread_name, string_value, string_coder, byte_array_length;
	/*
	 * With JBPF_HOTSPOT_UNMOUNTS, a virtual thread told at its unmount and
	 * mount (bpf/vthreads.bpf.c): _vthread's class is java.lang.VirtualThread
	 * (vthread_klass: JDK 24 and later mount before the thaw and unmount
	 * after the freeze; earlier ones have the carrier's Thread there then),
	 * and its VirtualThread.state (an int) says why it leaves.
	 */
	__u16 vthread_state;
	__u16 unused_unmounts[3];
	__u64 vthread_klass;
};

/* Bits of jbpf_hotspot_jvm.flags. */
#define JBPF_HOTSPOT_METHOD_CHECK 1u /* the method check's offsets are known */
#define JBPF_HOTSPOT_LOCKS 2u        /* the monitor classes' offsets are known */
#define JBPF_HOTSPOT_ENTRY 4u        /* nm_verified_entry is known */
#define JBPF_HOTSPOT_ENTRY_OFFSET 8u /* nm_verified_entry is a u2 offset from the code's start */
#define JBPF_HOTSPOT_CONTINUATIONS 16u /* cont_return_pc and thread_cont_entry are known */
#define JBPF_HOTSPOT_CHUNKS 32u        /* a virtual thread's frozen frames can be found (thread_vthread...) */
#define JBPF_HOTSPOT_VTHREAD_NAMES 64u /* and its name (thread_name...) */
#define JBPF_HOTSPOT_UNMOUNTS 128u     /* and its unmounts and mounts can be told (vthread_klass, vthread_state) */

/*
 * A Java frame, as the walker found it. Java frames are not in the
 * sample's ips: they follow them, java_len of them, innermost first, each
 * saying where it sits among the user frames (native_before).
 */
enum jbpf_java_kind {
	JBPF_JAVA_INTERPRETED = 1, /* ptr: Method *, pc: bcp (0 in a native method's frame), cookie: its ConstMethod * */
	JBPF_JAVA_COMPILED = 2,    /* ptr: the nmethod, pc: the pc in it, cookie: its compile id */
	JBPF_JAVA_STUB = 3,        /* ptr: a CodeBlob that is no nmethod (runtime stub, adapter...), pc in it */
	JBPF_JAVA_STOP = 4,        /* the walk ended here for reason; ptr, pc: where it stood */
	/*
	 * Not a frame: where a virtual thread's frames end and its carrier's
	 * begin (reason: enum jbpf_java_carrier); ptr: the virtual thread's
	 * id (Thread.threadId()), 0 when not read; pc and cookie: the first
	 * 16 bytes of its name (Latin-1, little-endian words, NUL-padded),
	 * 0 when it has none or it was not read.
	 */
	JBPF_JAVA_CARRIER = 5,
};

/* What a JBPF_JAVA_CARRIER marker says of the virtual thread's frames before it. */
enum jbpf_java_carrier {
	JBPF_JAVA_CARRIER_WHOLE = 0,  /* all of them walked, down to Continuation.enter */
	JBPF_JAVA_CARRIER_FROZEN = 1, /* its outer frames are frozen in the heap (a stack chunk), not walked */
	JBPF_JAVA_CARRIER_NR = 2,
};

/* Why a walk of HotSpot frames ended before the stack's root (JBPF_JAVA_STOP). */
enum jbpf_java_stop {
	JBPF_JAVA_STOP_DEPTH = 1,      /* more than JBPF_MAX_JAVA_FRAMES frames, or the walker's step limit */
	JBPF_JAVA_STOP_NO_BLOB = 2,    /* a pc in the code cache that no blob holds */
	JBPF_JAVA_STOP_READ = 3,       /* a word of the stack or of the JVM could not be read */
	JBPF_JAVA_STOP_FRAME = 4,      /* a frame whose size or sender makes no sense */
	JBPF_JAVA_STOP_PROLOGUE = 5,   /* a compiled frame caught before it was set up, not understood */
	JBPF_JAVA_STOP_INTERPRETER = 6,/* an interpreter frame not set up, or not an interpreter frame */
	JBPF_JAVA_STOP_STUB = 7,       /* a stub with no frame the walker can step out of */
	JBPF_JAVA_STOP_NR = 8,
};

struct jbpf_java_frame {
	__u64 ptr;
	__u64 pc;
	__u64 cookie;
	__u16 native_before; /* user (native) frames of ips innermost of this one */
	__u8 kind;           /* enum jbpf_java_kind */
	__u8 reason;         /* enum jbpf_java_stop, with JBPF_JAVA_STOP */
	__u32 unused;
};

#endif /* JBPF_HOTSPOT_H */
