/*
 * phases: one thread that runs phase_one for SECONDS, then phase_two for
 * SECONDS, then idles: a recording's first half is one function, its
 * second half the other, for checks of time ranges.
 *
 *   phases [-s SECONDS] [-g GO_FILE]
 *
 * It prints "ready", and with -g waits until GO_FILE exists (polled every
 * millisecond) before the first phase, so that a test can start it once
 * the profiler records. Phases follow CLOCK_MONOTONIC. It prints
 * "switch <ms>" as the second phase begins and "done <ms>" after it, the
 * times in ms since the first phase began, then idles until SIGTERM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void work(void)
{
	for (int i = 0; i < 10000; i++)
		sink = sink * 6364136223846793005UL + 1442695040888963407UL;
}

__attribute__((noinline)) static void phase_one(long long until)
{
	while (now_ns() < until)
		work();
}

__attribute__((noinline)) static void phase_two(long long until)
{
	while (now_ns() < until)
		work();
}

int main(int argc, char **argv)
{
	const char *go = NULL;
	long long seconds = 5, start;
	int c;

	while ((c = getopt(argc, argv, "s:g:")) != -1) {
		if (c == 's')
			seconds = atoll(optarg);
		else if (c == 'g')
			go = optarg;
		else
			return 2;
	}
	printf("ready\n");
	fflush(stdout);
	while (go && access(go, F_OK)) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	start = now_ns();
	phase_one(start + seconds * 1000000000LL);
	printf("switch %lld\n", (now_ns() - start) / 1000000);
	fflush(stdout);
	phase_two(start + 2 * seconds * 1000000000LL);
	printf("done %lld\n", (now_ns() - start) / 1000000);
	fflush(stdout);
	for (;;)
		pause();
}
