/*
 * alloc: Java heap allocations, sampled by HotSpot and sent to the
 * profiler as ALLOC messages (the agent option alloc=BYTES).
 *
 * HotSpot samples them itself (JVMTI SampledObjectAlloc): each thread
 * counts the bytes it allocates and, at distances drawn at random around
 * the interval (so no allocation pattern can line up with them), posts the
 * allocation that crossed one to alloc__on_sampled, on the allocating
 * thread, in native state, after the object exists. The callback takes the
 * thread's Java stack (GetStackTrace of itself: no safepoint, no
 * handshake) and the object's class, and queues one ALLOC in the outbox;
 * it never waits for the profiler. Costs nothing between samples.
 *
 * Scratch buffers are striped by tid, each under its own lock, so threads
 * sampling at once rarely wait for each other; one that waits is in
 * native state, so it holds up no safepoint.
 */
#ifndef JBPF_ALLOC_H
#define JBPF_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

/*
 * Turns sampling on at interval bytes: the capability (JVMTI allows it in
 * the live phase; a JVM that does not is named in err), the interval, the
 * event. Counters start from zero. 0, or -1 with the reason in err.
 */
int alloc__start(jvmtiEnv *jvmti, unsigned interval, char *err, size_t err_size);
/* Turns the event off (samples in flight find the outbox closed). Safe when never started. */
void alloc__stop(jvmtiEnv *jvmti);
/* The SampledObjectAlloc callback. */
void JNICALL alloc__on_sampled(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			       jlong size);
/* Samples taken since alloc__start, and those of them dropped (queue full, JVMTI refused). */
void alloc__counts(uint64_t *taken, uint64_t *lost);

#endif /* JBPF_ALLOC_H */
