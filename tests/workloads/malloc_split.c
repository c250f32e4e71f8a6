/*
 * malloc_split: threads that ask the C library for memory from three call
 * sites in known proportions of bytes, and leak from one of them.
 *
 *   malloc_split [-t THREADS] [-r ROUNDS] [-g FILE] [-s SECONDS] [-m]
 *
 * Each round of each thread asks for ROUND_BYTES, split 60/30/10:
 * site_malloc60 with malloc, site_calloc30 with calloc, and site_leak10
 * with realloc of NULL and posix_memalign, in turn. The sizes vary (16
 * bytes to 8 KiB) so that the sampler's weights are tried on small and
 * large calls alike. The first two free what they get at once; site_leak10
 * never frees anything (the leak: a tenth of the bytes), and keeps its
 * blocks reachable in a list through the blocks themselves.
 *
 * With -m each round also maps memory itself: site_mmap maps MMAP_BYTES of
 * anonymous memory (readable and writable) and unmaps every other mapping
 * at once, keeping the rest; site_big asks malloc for blocks large enough
 * that the C library maps each one (its own mmap, not the program's) and
 * frees them; and once, site_reserve maps 64 MiB with PROT_NONE (address
 * space reserved, no memory). The truth adds "mmap BYTES", "mmap_kept
 * BYTES" and "big BYTES".
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ROUND_BYTES (1u << 20)
#define MMAP_BYTES (256u << 10)
/* Above glibc's threshold for serving a block by a mapping of its own (128 KiB by default). */
#define BIG_BYTES (1u << 20)
#define RESERVE_BYTES (64u << 20)

static _Atomic uint64_t asked[3], leaked, calls, mapped, mapped_kept, big;
static bool maps;
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

/* Anonymous memory mapped by the program: every other mapping unmapped at once, the rest kept. */
__attribute__((noinline)) static void site_mmap(long round)
{
	volatile char *p = mmap(NULL, MMAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	p[0] = 1;
	mapped += MMAP_BYTES;
	if (round % 2)
		munmap((void *)p, MMAP_BYTES);
	else
		mapped_kept += MMAP_BYTES;
}

/* Blocks malloc serves by mappings of its own. */
__attribute__((noinline)) static void site_big(void)
{
	volatile char *p = malloc(BIG_BYTES);

	if (!p)
		abort();
	p[0] = 1;
	free((void *)p);
	big += BIG_BYTES;
	calls++;
}

/* Address space reserved, no memory: not an allocation. */
__attribute__((noinline)) static void site_reserve(void)
{
	if (mmap(NULL, RESERVE_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		abort();
}

static void *work(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uintptr_t)arg;

	if (maps && (uintptr_t)arg == 1)
		site_reserve();
	for (long r = 0; r < rounds; r++) {
		site_malloc60(&seed, ROUND_BYTES * 6 / 10);
		site_calloc30(&seed, ROUND_BYTES * 3 / 10);
		site_leak10(&seed, ROUND_BYTES / 10);
		if (maps) {
			site_mmap(r);
			site_big();
		}
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

	while ((opt = getopt(argc, argv, "t:r:g:s:m")) != -1) {
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
		case 'm':
			maps = true;
			break;
		default:
			fprintf(stderr, "usage: malloc_split [-t THREADS] [-r ROUNDS] [-g FILE] [-s SECONDS] [-m]\n");
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
	printf("malloc60 %llu\ncalloc30 %llu\nleak10 %llu\nleaked %llu\ncalls %llu\n", (unsigned long long)asked[0],
	       (unsigned long long)asked[1], (unsigned long long)asked[2], (unsigned long long)leaked,
	       (unsigned long long)calls);
	if (maps)
		printf("mmap %llu\nmmap_kept %llu\nbig %llu\n", (unsigned long long)mapped,
		       (unsigned long long)mapped_kept, (unsigned long long)big);
	printf("elapsed_ns %lld\ndone\n",
	       (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
	fflush(stdout);
	sleep(seconds);
	return 0;
}
