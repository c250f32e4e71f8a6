/*
 * libsyscallwaits.so: the native half of tests/workloads/java/SyscallWaits.java.
 * JVM threads that spend their time in blocking system calls, and count
 * every one a signal cut short, the way only native code can see it: the
 * return value and errno of the call itself, and the clock around it.
 *
 *   sleepLoop(ns)   nanosleep(ns), forever. A sleep that returns -1/EINTR,
 *                   or 0 before ns passed (by CLOCK_MONOTONIC), counts.
 *   readLoop()      read() of one byte from a pipe, forever. A read that
 *                   returns -1/EINTR counts. A read(2) interrupted by a
 *                   handler installed with SA_RESTART is restarted by the
 *                   kernel, unseen; so every 64 reads the loop takes
 *                   SA_RESTART off every real-time signal handler in the
 *                   process (the profiler's agent installs its handler with
 *                   it when it attaches): a stricter target than the JVM.
 *   writeLoop(ns)   writes one byte to that pipe, then nanosleep(ns), forever,
 *                   so the reader blocks and wakes again and again.
 *   counts()        long[] { sleeps, sleep_eintr, short_sleeps, reads,
 *                   read_eintr, writes, handlers_unrestarted }.
 *
 * Counters are atomics: the loops run on their own threads.
 */
#include <errno.h>
#include <jni.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

enum { SLEEPS, SLEEP_EINTR, SHORT_SLEEPS, READS, READ_EINTR, WRITES, UNRESTARTED, NR_COUNTS };

static _Atomic int64_t counts[NR_COUNTS];
static int pipe_fds[2] = { -1, -1 };

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

JNIEXPORT jint JNI_OnLoad(JavaVM *vm, void *reserved)
{
	if (pipe(pipe_fds))
		return JNI_ERR;
	return JNI_VERSION_1_8;
}

/* Takes SA_RESTART off every real-time signal handler that has it: an interrupted read then says EINTR. */
static void no_restart(void)
{
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) || !(sa.sa_flags & SA_SIGINFO) || !(sa.sa_flags & SA_RESTART))
			continue;
		sa.sa_flags &= ~SA_RESTART;
		if (sigaction(sig, &sa, NULL) == 0)
			atomic_fetch_add(&counts[UNRESTARTED], 1);
	}
}

JNIEXPORT void JNICALL Java_SyscallWaits_sleepLoop(JNIEnv *env, jclass cls, jlong ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	for (;;) {
		int64_t start = now_ns();

		if (nanosleep(&ts, NULL)) {
			if (errno == EINTR)
				atomic_fetch_add(&counts[SLEEP_EINTR], 1);
			continue;
		}
		if (now_ns() - start < ns)
			atomic_fetch_add(&counts[SHORT_SLEEPS], 1);
		atomic_fetch_add(&counts[SLEEPS], 1);
	}
}

JNIEXPORT void JNICALL Java_SyscallWaits_readLoop(JNIEnv *env, jclass cls)
{
	char byte;

	for (uint64_t n = 0;; n++) {
		if (n % 64 == 0)
			no_restart();
		if (read(pipe_fds[0], &byte, 1) == 1)
			atomic_fetch_add(&counts[READS], 1);
		else if (errno == EINTR)
			atomic_fetch_add(&counts[READ_EINTR], 1);
	}
}

JNIEXPORT void JNICALL Java_SyscallWaits_writeLoop(JNIEnv *env, jclass cls, jlong ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
	char byte = 'x';

	for (;;) {
		if (write(pipe_fds[1], &byte, 1) == 1)
			atomic_fetch_add(&counts[WRITES], 1);
		/* Its own sleeps are not counted: the writer only paces the reader. */
		nanosleep(&ts, NULL);
	}
}

JNIEXPORT jlongArray JNICALL Java_SyscallWaits_counts(JNIEnv *env, jclass cls)
{
	jlongArray out = (*env)->NewLongArray(env, NR_COUNTS);
	jlong values[NR_COUNTS];

	if (!out)
		return NULL;
	for (int i = 0; i < NR_COUNTS; i++)
		values[i] = atomic_load(&counts[i]);
	(*env)->SetLongArrayRegion(env, out, 0, NR_COUNTS, values);
	return out;
}
