/*
 * cpu_split: threads that split their CPU time 50/30/20 between three
 * functions, share_50, share_30 and share_20, in cycles of CYCLE_MS.
 *
 *   cpu_split [-t THREADS] [-c CYCLE_MS] [-d SECONDS] [-p] [-w]
 *
 * Phases are measured by each thread's own CPU clock, not by loop counts, so
 * the split holds however the scheduler or the profiler slows the thread.
 * With -w they follow the wall clock instead: a cycle starts at every
 * multiple of CYCLE_MS of CLOCK_MONOTONIC, the clock the kernel's sampling
 * timer runs on, so a sampler with a fixed period of CYCLE_MS sees the same
 * phase every time: the worst case for aliasing. -p pins thread i to CPU i.
 *
 * It prints "ready" once every thread runs, works for SECONDS (default:
 * until SIGTERM or SIGINT), then prints the truth it measured: one line per
 * function, "share_50 <thread CPU ns>", summed over threads.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { F50, F30, F20, NR_FUNCS };

static long cycle_ns = 10 * 1000000L;
static int wall_phases;
static volatile unsigned long sink;
static _Atomic long cpu_ns_in[NR_FUNCS];

static long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Burns CPU until clock reaches deadline; adds the thread CPU time used to *spent. */
static long burn_until(clockid_t clock, long deadline, int func)
{
	long cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	while (clock_ns(clock) < deadline)
		for (int i = 0; i < 500; i++)
			sink += (unsigned long)i * 7;
	atomic_fetch_add(&cpu_ns_in[func], clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start);
	return deadline;
}

static clockid_t phase_clock(void)
{
	return wall_phases ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
}

static long share_50(long start)
{
	return burn_until(phase_clock(), start + cycle_ns * 50 / 100, F50);
}

static long share_30(long start)
{
	return burn_until(phase_clock(), start + cycle_ns * 30 / 100, F30);
}

static long share_20(long start)
{
	return burn_until(phase_clock(), start + cycle_ns * 20 / 100, F20);
}

static void *worker(void *arg)
{
	long cpu = (long)arg, t;

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	/* Each deadline follows from the previous one, not from "now": no drift. */
	t = clock_ns(phase_clock());
	if (wall_phases)
		t -= t % cycle_ns;
	for (;;)
		t = share_20(share_30(share_50(t)));
	return NULL;
}

static void print_truth(void)
{
	static const char *const names[NR_FUNCS] = { "share_50", "share_30", "share_20" };

	for (int i = 0; i < NR_FUNCS; i++)
		printf("%s %ld\n", names[i], atomic_load(&cpu_ns_in[i]));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int threads = 1, seconds = 0, pin = 0, opt, sig;
	sigset_t stop;
	pthread_t tid;

	while ((opt = getopt(argc, argv, "t:c:d:pw")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 'c':
			cycle_ns = atol(optarg) * 1000000L;
			break;
		case 'd':
			seconds = atoi(optarg);
			break;
		case 'p':
			pin = 1;
			break;
		case 'w':
			wall_phases = 1;
			break;
		default:
			fprintf(stderr, "usage: cpu_split [-t THREADS] [-c CYCLE_MS] [-d SECONDS] [-p] [-w]\n");
			return 2;
		}
	}
	if (threads < 1 || cycle_ns <= 0)
		return 2;
	/* Block the stop signals before threads exist, so only sigwait sees them. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid, NULL, worker, (void *)(pin ? i % sysconf(_SC_NPROCESSORS_ONLN) : -1)))
			return 1;
	printf("ready\n");
	fflush(stdout);
	if (seconds > 0)
		alarm((unsigned)seconds);
	sigwait(&stop, &sig);
	print_truth();
	return 0;
}
