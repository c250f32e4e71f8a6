/*
 * channel: the agent thread, the only writer of the profiler's socket.
 *
 * One Java thread ("jbpfprof agent", a JVMTI agent thread, so a daemon)
 * is started by the first recording and kept for the next ones. While a
 * recording is live it sleeps until work wakes it: the handler's eventfd
 * (the trace ring half full), the socket (a request, or room to write what
 * is queued), or a deadline: every CHANNEL_TICK_MS while a flush waits or
 * stacks are being queued, and at most CHANNEL_IDLE_MS otherwise, so that a
 * trace reaches the profiler well within the time the profiler waits for
 * it (2 s, user/java/join.c) while a JVM whose threads are parked costs
 * ten wake-ups a second, not a hundred. First it queues a THREAD for every
 * thread already running (threads.h), then, each turn:
 *
 *   1. drains the trace ring into the outbox (METHODs, then the TRACE);
 *   2. on a 'W' (JBPF_REQ_THREAD_STACKS), takes every thread's stack, and
 *      queues them (METHODs, then a THREAD_STACK each) while the outbox
 *      has room, over as many turns as that takes;
 *   3. writes the outbox to the socket, never blocking (MSG_DONTWAIT);
 *   4. reads requests: each 'F' (JBPF_REQ_FLUSH) is answered with a
 *      STATS and a FLUSHED, queued after everything before them, once every
 *      trace published in the ring and every stack of an earlier 'W' is
 *      queued and no handler is mid-way (after CHANNEL_FLUSH_WAIT_MS, a
 *      trace still being taken is left for later);
 *   5. queues a STATS every second.
 *
 * The recording ends on EOF or an error on the socket, or when queued data
 * has not moved for CHANNEL_STALL_S seconds (a profiler that stopped
 * reading). The thread then calls agent__end_session and waits for the
 * next channel__serve.
 */
#ifndef JBPF_CHANNEL_H
#define JBPF_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#define CHANNEL_TICK_MS 10
#define CHANNEL_IDLE_MS 100
#define CHANNEL_STALL_S 10
#define CHANNEL_FLUSH_WAIT_MS 200
#define CHANNEL_STATS_INTERVAL_MS 1000

/*
 * Hands fd (connected, non-blocking) and recording session to the agent
 * thread, starting the thread the first time through RunAgentThread. jni is
 * the calling thread's JNIEnv. Returns 0 (the thread owns fd from now on),
 * or -1 with a one-line reason in err (the caller still owns fd). Must not
 * be called while a recording is being served.
 */
int channel__serve(jvmtiEnv *jvmti, JNIEnv *jni, int fd, uint32_t session, char *err, size_t err_size);

#endif /* JBPF_CHANNEL_H */
