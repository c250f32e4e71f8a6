/*
 * threads: what the agent thread tells about the JVM's threads besides
 * their starts.
 *
 *   - At the start of a recording, a THREAD {tid, name} for every thread
 *     already running (JVMTI GetAllThreads), its tid read through
 *     vmstructs.h: ThreadStart covers only threads started after.
 *   - On a JBPF_REQ_THREAD_STACKS request, the Java stack of every live
 *     thread (JVMTI GetAllStackTraces: one safepoint), each sent as a
 *     THREAD_STACK with the METHODs it needs before it. A thread whose tid
 *     cannot be read is left out.
 *
 * The stacks are taken at once and sent over several turns of the agent
 * thread's loop, while the outbox has room (as the ring is drained), so a
 * JVM with many threads neither drops them nor grows the outbox past its
 * bound.
 *
 * Agent thread only: JNI local references are deleted as they are used,
 * since that thread never returns to Java to release them.
 */
#ifndef JBPF_THREADS_H
#define JBPF_THREADS_H

#include <stdbool.h>

#include <jvmti.h>

#include "emit.h"

struct threads_stacks;

/* Queues a THREAD for every live thread whose tid can be read. */
void threads__announce(jvmtiEnv *jvmti, JNIEnv *jni);

/*
 * Takes every live thread's stack (at most JBPF_STREAM_MAX_FRAMES frames,
 * flagged when deeper) and its tid, for threads__send_stacks. NULL when
 * JVMTI refuses, or there is no memory: then nothing is sent.
 */
struct threads_stacks *threads__take_stacks(jvmtiEnv *jvmti, JNIEnv *jni);

/*
 * Queues the next stacks while the outbox holds less than OUTBOX_LIMIT.
 * Returns true once all are queued.
 */
bool threads__send_stacks(struct threads_stacks *stacks, jvmtiEnv *jvmti, JNIEnv *jni,
			  struct emit_scratch *scratch);

/* Frees stacks, sent or not. NULL-safe. */
void threads__free_stacks(jvmtiEnv *jvmti, struct threads_stacks *stacks);

#endif /* JBPF_THREADS_H */
