/*
 * fixed_work: a fixed amount of CPU-bound work on THREADS threads, for
 * overhead benchmarks. It prints "ready", waits for SIGUSR1 (so a profiler
 * can be attached first), does ITERATIONS rounds of hashing per thread, then
 * prints "elapsed_ns <wall time of the work>" and exits.
 *
 *   fixed_work [-t THREADS] [-n ITERATIONS]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long iterations = 400000000L;
static volatile unsigned long sink;

static unsigned long hash_round(unsigned long h, long i)
{
	h ^= (unsigned long)i;
	h *= 0x100000001b3ul;
	return h ^ (h >> 29);
}

static void *worker(void *arg)
{
	unsigned long h = (unsigned long)arg;

	for (long i = 0; i < iterations; i++)
		h = hash_round(h, i);
	sink = h;
	return NULL;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int threads = 2, opt, sig;
	pthread_t tids[64];
	sigset_t go;
	long start;

	while ((opt = getopt(argc, argv, "t:n:")) != -1) {
		if (opt == 't')
			threads = atoi(optarg);
		else if (opt == 'n')
			iterations = atol(optarg);
		else
			return 2;
	}
	if (threads < 1 || threads > 64 || iterations < 1)
		return 2;
	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	sigprocmask(SIG_BLOCK, &go, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&go, &sig);
	start = now_ns();
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	printf("elapsed_ns %ld\n", now_ns() - start);
	return 0;
}
