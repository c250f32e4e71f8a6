/*
 * clock: the two clocks the profiler reads, in nanoseconds.
 *
 * CLOCK_MONOTONIC is the clock BPF's bpf_ktime_get_ns() reads, so every
 * timestamp in a record compares with clock__monotonic_ns() directly.
 * CLOCK_REALTIME is only for saying when a recording began.
 */
#ifndef JBPF_CLOCK_H
#define JBPF_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_MS 1000000ull
#define NS_PER_SEC 1000000000ull

static inline uint64_t clock__monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline int64_t clock__monotonic_ms(void)
{
	return (int64_t)(clock__monotonic_ns() / NS_PER_MS);
}

static inline int64_t clock__realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * (int64_t)NS_PER_SEC + ts.tv_nsec;
}

#endif /* JBPF_CLOCK_H */
