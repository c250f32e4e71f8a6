/*
 * malloc_split: threads that ask the C library for memory from three call
 * sites in known proportions of bytes, and leak from one of them.
 *
 *   malloc_split [-t THREADS] [-r ROUNDS] [-g FILE] [-s SECONDS]
 *
 * Each round of each thread asks for ROUND_BYTES, split 60/30/10:
 * site_malloc60 with malloc, site_calloc30 with calloc, and site_leak10
 * with realloc of NULL and posix_memalign, in turn. The sizes vary (16
 * bytes to 8 KiB) so that the sampler's weights are tried on small and
 * large calls alike. The first two free what they get at once; site_leak10
 * never frees anything (the leak: a tenth of the bytes), and keeps its
 * blocks reachable in a list through the blocks themselves.
 *
 * It prints "ready" and, with -g, waits for FILE to exist before the
 * first round (so that the profiler is sampling before any of it). After
 * the rounds it prints the truth: "malloc60 BYTES", "calloc30 BYTES",
 * "leak10 BYTES" (asked for at each site), "leaked BYTES" (kept for
 * good), "calls N" (allocation calls in all), "elapsed_ns N" (from the
 * threads' start to the last one's end), then "done", and stays
 * alive (its leak with it) for SECONDS (default 600) or until a signal.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUND_BYTES (1u << 20)

static _Atomic uint64_t asked[3], leaked, calls;
static void *volatile no_memory;
static long rounds = 1000;

/* What site_leak10 never frees, kept reachable: a list through the blocks themselves (16 bytes at least). */
static void *kept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold(void *p)
{
	pthread_mutex_lock(&kept_lock);
	*(void **)p = kept;
	kept = p;
	pthread_mutex_unlock(&kept_lock);
}

/* xorshift: each thread's sizes its own, the same from run to run. */
static uint32_t next_size(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	/* 16 bytes to 8 KiB, most of them small, as programs ask. */
	return 16u << (*s % 10);
}

__attribute__((noinline)) static void site_malloc60(uint64_t *seed, uint64_t budget)
{
	uint64_t done = 0;

	while (done < budget) {
		uint32_t size = next_size(seed);
		volatile char *p = malloc(size);

		if (!p)
			abort();
		p[0] = 1;
		free((void *)p);
		done += size;
		calls++;
	}
	asked[0] += done;
}

__attribute__((noinline)) static void site_calloc30(uint64_t *seed, uint64_t budget)
{
	uint64_t done = 0;

	while (done < budget) {
		uint32_t size = next_size(seed);
		volatile char *p = calloc(size / 16, 16);

		if (!p)
			abort();
		p[0] = 1;
		free((void *)p);
		done += size;
		calls++;
	}
	asked[1] += done;
}

__attribute__((noinline)) static void site_leak10(uint64_t *seed, uint64_t budget)
{
	uint64_t done = 0;
	size_t n = 0;

	while (done < budget) {
		uint32_t size = next_size(seed);
		void *p = NULL;

		/* A null the compiler cannot see: realloc of a known NULL becomes malloc at build time. */
		if (n++ % 2)
			p = realloc(no_memory, size);
		else if (posix_memalign(&p, 64, size))
			p = NULL;
		if (!p)
			abort();
		done += size;
		calls++;
		/* Never freed: the leak. */
		hold(p);
	}
	asked[2] += done;
	leaked += done;
}

static void *work(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;

	for (long r = 0; r < rounds; r++) {
		site_malloc60(&seed, ROUND_BYTES * 6 / 10);
		site_calloc30(&seed, ROUND_BYTES * 3 / 10);
		site_leak10(&seed, ROUND_BYTES / 10);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *go = NULL;
	int threads = 2, opt;
	unsigned seconds = 600;
	pthread_t tids[64];
	struct timespec start, end;

	while ((opt = getopt(argc, argv, "t:r:g:s:")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 'r':
			rounds = atol(optarg);
			break;
		case 'g':
			go = optarg;
			break;
		case 's':
			seconds = (unsigned)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: malloc_split [-t THREADS] [-r ROUNDS] [-g FILE] [-s SECONDS]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64)
		threads = 2;
	printf("ready\n");
	fflush(stdout);
	while (go && access(go, F_OK))
		usleep(10000);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, work, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	printf("malloc60 %llu\ncalloc30 %llu\nleak10 %llu\nleaked %llu\ncalls %llu\nelapsed_ns %lld\ndone\n",
	       (unsigned long long)asked[0], (unsigned long long)asked[1], (unsigned long long)asked[2],
	       (unsigned long long)leaked, (unsigned long long)calls,
	       (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
	fflush(stdout);
	sleep(seconds);
	return 0;
}
