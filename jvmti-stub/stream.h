/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The byte stream between the agent (libjbpfagent.so, inside the target JVM)
 * and the profiler (jbpfprof), over one Unix stream socket per recording.
 *
 * The agent writes messages; each is a struct jbpf_msg_header followed by
 * `size` payload bytes. Both ends run on the same machine, so integers are
 * in host byte order. The layouts below have no implicit padding.
 *
 * The profiler writes only single bytes (enum jbpf_request). The agent
 * answers in order: what a request makes it send is queued before the
 * answer to any later request.
 *
 * The profiler runs as root and the agent runs inside a process it does not
 * trust: the reader checks every size and count against the limits here and
 * against the payload it actually received, and treats names as opaque
 * bytes to be bounded and escaped. method_id is a key and nothing more.
 */
#ifndef JBPF_STREAM_H
#define JBPF_STREAM_H

#include <stdint.h>

#define JBPF_STREAM_VERSION 1

/* No payload is larger; a header announcing more ends the stream. */
#define JBPF_STREAM_MAX_PAYLOAD (64u * 1024)
/* Deepest Java stack a trace carries; deeper ones are cut at the root end. */
#define JBPF_STREAM_MAX_FRAMES 256
/* Longest name (method, thread, code blob) a message carries, in bytes. */
#define JBPF_STREAM_MAX_NAME 1024

/*
 * What Agent_OnAttach returns when the JVM is not live yet: HotSpot can
 * start its attach listener, and run a load, while it is still creating
 * the VM (JVMTI's start phase), when GetEnv refuses a JVMTI environment
 * (JNI_EDETACHED). The profiler tries again later.
 */
#define JBPF_AGENT_NOT_LIVE 6

enum jbpf_msg_type {
	JBPF_MSG_HELLO = 1,       /* first message: struct jbpf_msg_hello */
	JBPF_MSG_METHOD = 2,      /* a method's name, before any trace uses it */
	JBPF_MSG_TRACE = 3,       /* one Java stack taken by the signal handler */
	JBPF_MSG_THREAD = 4,      /* a Java thread's name and native tid */
	JBPF_MSG_CODE_LOAD = 5,   /* compiled method or generated code appeared */
	JBPF_MSG_CODE_UNLOAD = 6, /* compiled method removed; its addresses may be reused */
	JBPF_MSG_STATS = 7,       /* the agent's own counters, cumulative */
	JBPF_MSG_ERROR = 8,       /* why Agent_OnAttach is about to fail */
	JBPF_MSG_FLUSHED = 9,     /* answer to JBPF_REQ_FLUSH: all traces so far are sent */
	JBPF_MSG_THREAD_STACK = 10, /* answer to JBPF_REQ_THREAD_STACKS: one thread's Java stack */
	JBPF_MSG_NOTICE = 11,     /* one line for the user: struct jbpf_msg_error's layout */
	JBPF_MSG_ALLOC = 12,      /* one sampled Java heap allocation (option alloc=BYTES) */
};

/* What the profiler may send: one byte each. */
enum jbpf_request {
	JBPF_REQ_FLUSH = 'F', /* drain the trace ring now, then send one JBPF_MSG_FLUSHED */
	/*
	 * Take the Java stack of every live thread now and send one
	 * JBPF_MSG_THREAD_STACK per thread whose native tid the agent knows
	 * (each after the METHODs it needs). Costs the JVM one safepoint, so
	 * the profiler asks once, at the end of a wall-clock or off-CPU
	 * recording, just before its JBPF_REQ_FLUSH: the FLUSHED then comes
	 * after every THREAD_STACK.
	 */
	JBPF_REQ_THREAD_STACKS = 'W',
};

struct jbpf_msg_header {
	uint32_t type; /* enum jbpf_msg_type */
	uint32_t size; /* payload bytes after this header, <= JBPF_STREAM_MAX_PAYLOAD */
};

struct jbpf_msg_hello {
	uint32_t version; /* JBPF_STREAM_VERSION */
	uint32_t signo;   /* the signal the handler is installed on */
	uint32_t pid;     /* getpid() in the JVM's own pid namespace */
	uint32_t max_frames;
	char vm_version[64]; /* java.vm.version, NUL-padded, maybe not terminated */
};

/* Followed by name_len bytes: "package.Class.method", not NUL-terminated. */
struct jbpf_msg_method {
	uint64_t method_id; /* the jmethodID, as an opaque key */
	uint32_t name_len;  /* <= JBPF_STREAM_MAX_NAME */
	uint32_t flags;     /* JBPF_METHOD_* */
};

#define JBPF_METHOD_NATIVE 1u /* a Java method implemented in native code (JNI) */

/*
 * status, when zero or negative, is why there are no frames: AsyncGetCallTrace's
 * own codes (0 no Java frame, -1 no class load, -2 GC active, -3 unknown not
 * Java, -4 not walkable not Java, -5 unknown Java, -6 not walkable Java,
 * -7 unknown state, -8 thread exit, -9 deoptimizing, -10 safepoint) or the
 * agent's (JBPF_TRACE_*). When positive it equals frame_count.
 */
#define JBPF_TRACE_NOT_JAVA_THREAD (-100) /* no JNIEnv (GC...), or the agent's own thread */
#define JBPF_TRACE_NO_AGCT (-101)         /* the JVM exports no AsyncGetCallTrace */

#define JBPF_TRACE_TRUNCATED 1u /* the stack was deeper than max_frames */
/*
 * How the frames were found when AsyncGetCallTrace could not walk from the
 * signal's context (it gave one of -3 to -6): called again with the
 * thread's last Java frame made walkable (FROM_ANCHOR), or with the
 * registers of the Java caller of the stub or VM code the thread was in
 * (FROM_CALLER). Neither: from the context, as HotSpot found it. A reader
 * that does not know these flags loses nothing but the count.
 */
#define JBPF_TRACE_FROM_ANCHOR 2u
#define JBPF_TRACE_FROM_CALLER 4u

/*
 * How a trace's frame ran, as the agent's walk of HotSpot's frames found
 * it (jvmti-stub/codewalk.h): bits 0-7 the kind, bits 8-15 for a compiled
 * or inlined frame the compilation level (1-3 C1, 4 C2). 0: not known
 * (the walk did not reach it); a reader infers it as it did before.
 */
#define JBPF_FRAME_INTERPRETED 1u
#define JBPF_FRAME_INLINED 2u
#define JBPF_FRAME_COMPILED 3u
#define JBPF_FRAME_KIND_MASK 0xffu
#define JBPF_FRAME_LEVEL_SHIFT 8

struct jbpf_trace_frame {
	uint64_t method_id;
	int32_t bci;   /* bytecode index; -3 for a native method */
	uint32_t kind; /* JBPF_FRAME_* or 0; always 0 in a THREAD_STACK */
};

/* Followed by frame_count struct jbpf_trace_frame, innermost first. */
struct jbpf_msg_trace {
	uint64_t seq;     /* the value the BPF program sent with the signal */
	uint64_t time_ns; /* CLOCK_MONOTONIC when the handler ran */
	uint32_t tid;     /* gettid() in the JVM's pid namespace */
	int32_t status;
	uint32_t frame_count; /* <= JBPF_STREAM_MAX_FRAMES */
	uint32_t flags;       /* JBPF_TRACE_* */
};

/*
 * Followed by name_len bytes. tid as the JVM's pid namespace sees it. Sent
 * when a thread starts, and at the start of a recording for every thread
 * already running whose tid the agent could read (HotSpot's VMStructs).
 * A later THREAD for the same tid renames it.
 */
struct jbpf_msg_thread {
	uint32_t tid;
	uint32_t name_len; /* <= JBPF_STREAM_MAX_NAME */
};

/*
 * Followed by frame_count struct jbpf_trace_frame, innermost first, in a
 * TRACE's encoding: method_id a jmethodID some earlier METHOD named, bci
 * the bytecode index (JVMTI location) of a Java method, -3 for a native
 * one. Taken with JVMTI (GetAllStackTraces) at one safepoint, not by the
 * signal handler: every live platform thread at that instant, also those
 * blocked or waiting (virtual threads are not listed). A thread with no
 * Java frame (native code attached through JNI, the agent's own thread)
 * has frame_count 0.
 * Sizes: 16 bytes, then 16 per frame, so at most 4,112 bytes.
 */
struct jbpf_msg_thread_stack {
	uint32_t tid;         /* native tid, as the JVM's pid namespace sees it; never 0 */
	int32_t jvmti_state;  /* JVMTI_THREAD_STATE_* bits (jvmti.h) at that instant */
	uint32_t frame_count; /* <= JBPF_STREAM_MAX_FRAMES */
	uint32_t flags;       /* JBPF_TRACE_TRUNCATED: deeper, cut at the root end */
};

/*
 * Followed by frame_count struct jbpf_trace_frame, innermost first, in a
 * THREAD_STACK's encoding (the allocating thread's stack, taken with
 * JVMTI's GetStackTrace in the SampledObjectAlloc callback, after the
 * METHODs it needs), then class_len bytes: the allocated object's class
 * as Java writes it, "java.lang.String", "byte[]", "java.lang.Object[][]".
 * HotSpot picks the allocation: one per `interval` bytes the thread
 * allocated, on average, at random distances; `size` is the object's.
 *
 * With JBPF_ALLOC_NATIVE in flags, the allocation was made by native code
 * (JNI) and the name is followed by 1 to JBPF_ALLOC_MAX_NATIVE uint64_t
 * return addresses, innermost first: the native frames between the VM's
 * own code and the Java native method that called them, as many as the
 * payload's size leaves room for; the last may lie in the code HotSpot
 * generated for that method. JBPF_ALLOC_NATIVE_CUT: there were more.
 * Sizes: 40 bytes, 16 per frame, the name, 8 per native frame: at most
 * 5,672 bytes.
 */
#define JBPF_ALLOC_NATIVE (1u << 8)
#define JBPF_ALLOC_NATIVE_CUT (1u << 9)
#define JBPF_ALLOC_MAX_NATIVE 64

struct jbpf_msg_alloc {
	uint64_t size;        /* the object's size in bytes, header included */
	uint64_t time_ns;     /* CLOCK_MONOTONIC when the callback ran */
	uint32_t tid;         /* gettid() in the JVM's pid namespace; never 0 */
	uint32_t frame_count; /* <= JBPF_STREAM_MAX_FRAMES */
	uint32_t flags;       /* JBPF_TRACE_TRUNCATED: deeper, cut at the root end; JBPF_ALLOC_NATIVE* */
	uint32_t class_len;   /* 1 to JBPF_STREAM_MAX_NAME */
	uint64_t interval;    /* the mean sampling distance in bytes (alloc=BYTES) */
};

enum jbpf_code_kind {
	JBPF_CODE_NMETHOD = 1, /* a compiled Java method (method_id is its root method) */
	JBPF_CODE_STUB = 2,    /* code the VM generated: interpreter, stubs, adapters */
};

/* Followed by name_len bytes (the blob's name for JBPF_CODE_STUB, else none). */
struct jbpf_msg_code_load {
	uint64_t addr;
	uint64_t size;
	uint64_t time_ns; /* CLOCK_MONOTONIC when the agent saw the event */
	uint64_t method_id; /* 0 for JBPF_CODE_STUB */
	uint32_t kind;      /* enum jbpf_code_kind */
	uint32_t name_len;  /* <= JBPF_STREAM_MAX_NAME */
};

struct jbpf_msg_code_unload {
	uint64_t addr;
	uint64_t time_ns;
	uint64_t method_id;
};

/*
 * Cumulative since the agent was attached for this recording;
 * signals = traces + ring_full + foreign.
 */
struct jbpf_msg_stats {
	uint64_t signals;      /* handler invocations */
	uint64_t traces;       /* traces written to the ring */
	uint64_t ring_full;    /* traces dropped: the ring had no free slot */
	uint64_t foreign;      /* signals not from the BPF program, ignored */
	uint64_t events_lost;  /* JVMTI events dropped: the send queue was full */
	uint64_t handler_ns;   /* time spent in the signal handler, its clock reads included */
	/*
	 * Sampled allocations (alloc=BYTES): allocs = sent + allocs_lost, lost
	 * for a full send queue or a JVMTI call that failed. A stream from an
	 * agent without them ends the struct before these: read as zeros.
	 */
	uint64_t allocs;
	uint64_t allocs_lost;
};

/* Followed by len bytes of text. Also the layout of JBPF_MSG_NOTICE. */
struct jbpf_msg_error {
	uint32_t len; /* <= JBPF_STREAM_MAX_NAME */
	uint32_t unused;
};

#endif /* JBPF_STREAM_H */
