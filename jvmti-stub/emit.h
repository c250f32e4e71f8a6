/*
 * emit: builds the messages of stream.h and queues them in the outbox.
 *
 * Every queued message obeys the stream's rule that a method is named
 * before it is used: a TRACE or an nmethod's CODE_LOAD goes into the outbox
 * in one append with the METHOD messages it needs (see outbox.h).
 *
 * Who calls what:
 *   - emit__hello, emit__error: the attaching thread, into its own buffer
 *     (the HELLO opens the outbox; the ERROR is written straight to the
 *     socket, since Agent_OnAttach fails before any agent thread writes);
 *   - emit__thread, emit__*_load, emit__code_unload, emit__alloc: JVMTI
 *     callbacks on JVM threads; they name methods with JVMTI, so they need
 *     the JNIEnv;
 *   - emit__trace, emit__thread_stack, emit__stats, emit__flushed: the
 *     agent thread only (emit__thread too, for threads running at attach).
 * None of them is async-signal-safe, none waits for the profiler, and all
 * are thread-safe. A message that does not fit in the outbox is dropped
 * and counted there (events_lost).
 */
#ifndef JBPF_EMIT_H
#define JBPF_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#include "outbox.h"
#include "ring.h"
#include "stream.h"

#define EMIT_HEADER sizeof(struct jbpf_msg_header)
#define EMIT_METHOD_MAX (EMIT_HEADER + sizeof(struct jbpf_msg_method) + JBPF_STREAM_MAX_NAME)
#define EMIT_TRACE_MAX \
	(EMIT_HEADER + sizeof(struct jbpf_msg_trace) + JBPF_STREAM_MAX_FRAMES * sizeof(struct jbpf_trace_frame))
/*
 * One trace with a METHOD for each of its frames: what emit__trace appends
 * at most (about 270 KiB). A THREAD_STACK's fixed part is smaller than a
 * TRACE's, so emit__thread_stack appends no more; an ALLOC adds its
 * class's name, a longer fixed part and native frames, EMIT_ALLOC_EXTRA.
 */
#define EMIT_TRACE_BATCH_MAX (JBPF_STREAM_MAX_FRAMES * EMIT_METHOD_MAX + EMIT_TRACE_MAX + EMIT_ALLOC_EXTRA)
/* What an ALLOC has beyond a TRACE of as many frames: its class's name, a longer fixed part, native frames. */
#define EMIT_ALLOC_EXTRA \
	(JBPF_STREAM_MAX_NAME + sizeof(struct jbpf_msg_alloc) + JBPF_ALLOC_MAX_NATIVE * sizeof(uint64_t))
#define EMIT_HELLO_SIZE (EMIT_HEADER + sizeof(struct jbpf_msg_hello))
#define EMIT_ERROR_MAX (EMIT_HEADER + sizeof(struct jbpf_msg_error) + JBPF_STREAM_MAX_NAME)
/*
 * The agent thread's own limit. It reads the ring only while the outbox
 * holds less than OUTBOX_LIMIT, so with this headroom its traces, STATS and
 * FLUSHED are never dropped: when the profiler reads slowly, traces wait in
 * the ring and the ring's drops (ring_full) say so.
 */
#define EMIT_AGENT_LIMIT (OUTBOX_LIMIT + EMIT_TRACE_BATCH_MAX + 4096)

/* What emit__trace needs besides its arguments; one per agent thread, reused (and per allocation stripe). */
struct emit_scratch {
	char batch[EMIT_TRACE_BATCH_MAX];
	uint64_t ids[JBPF_STREAM_MAX_FRAMES];
	uint64_t unnamed[JBPF_STREAM_MAX_FRAMES];
	struct jbpf_trace_frame frames[JBPF_STREAM_MAX_FRAMES];
};

/* CLOCK_MONOTONIC in nanoseconds, the stream's time base. */
uint64_t emit__now_ns(void);

/* Writes a HELLO into buf (EMIT_HELLO_SIZE bytes). */
size_t emit__hello(void *buf, uint32_t signo, const char *vm_version);
/* Writes an ERROR carrying text (cut to JBPF_STREAM_MAX_NAME) into buf (EMIT_ERROR_MAX bytes). */
size_t emit__error(void *buf, const char *text);
/* Queues a NOTICE: one line the profiler shows its user (cut to JBPF_STREAM_MAX_NAME). */
void emit__notice(const char *text);

void emit__thread(uint32_t tid, const char *name);
void emit__nmethod_load(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const void *addr, jint size);
void emit__stub_load(const char *name, const void *addr, jint size);
void emit__code_unload(jmethodID method, const void *addr);

/*
 * Agent thread: the METHODs slot's frames still need, then its TRACE.
 * slot is a copy the caller owns (the ring slot may be reused meanwhile).
 */
void emit__trace(jvmtiEnv *jvmti, JNIEnv *jni, const struct ring_slot *slot, struct emit_scratch *scratch);
/*
 * Agent thread: the METHODs a stack from GetAllStackTraces still needs,
 * then its THREAD_STACK. count may be JBPF_STREAM_MAX_FRAMES + 1 (the
 * stack is then cut and flagged); a negative count is sent as 0.
 */
void emit__thread_stack(jvmtiEnv *jvmti, JNIEnv *jni, uint32_t tid, jint state, const jvmtiFrameInfo *frames,
			jint count, struct emit_scratch *scratch);
/*
 * A JVM thread in its SampledObjectAlloc callback: the METHODs the stack
 * still needs, then the ALLOC (alloc's size, time, tid and interval; the
 * rest is filled here), in one append within OUTBOX_LIMIT. count may be
 * JBPF_STREAM_MAX_FRAMES + 1 (cut and flagged). native: the native frames
 * of an allocation made by JNI code (nr_native of them, at most
 * JBPF_ALLOC_MAX_NATIVE; alloc's flags say JBPF_ALLOC_NATIVE and whether
 * they were cut), or none. 0, or -1 when the append was dropped. scratch is
 * the caller's, one thread at a time.
 */
int emit__alloc(jvmtiEnv *jvmti, JNIEnv *jni, const struct jbpf_msg_alloc *alloc, const jvmtiFrameInfo *frames,
		jint count, const char *class_name, const uint64_t *native, uint32_t nr_native,
		struct emit_scratch *scratch);
void emit__stats(const struct jbpf_msg_stats *stats);
void emit__flushed(void);

#endif /* JBPF_EMIT_H */
