/*
 * comm_target: a process of the hostile tests' unprivileged user that
 * names itself as a hostile target would, and burns CPU until killed.
 *
 *   comm_target COMM_HEX
 *
 * COMM_HEX is the thread name in hex (so any byte, escapes included, can be
 * given on a command line), set with prctl(PR_SET_NAME). It prints "ready",
 * spins in spin_hostile, prints "spent" once it has used 500 ms of CPU time
 * (enough for a profiler to have sampled it many times), and spins on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

__attribute__((noinline)) static void spin_hostile(void)
{
	int said = 0;

	for (;;) {
		for (unsigned long i = 0; i < 1000000; i++)
			sink = sink * 31 + i;
		if (!said && cpu_seconds() >= 0.5) {
			printf("spent\n");
			fflush(stdout);
			said = 1;
		}
	}
}

int main(int argc, char **argv)
{
	char comm[16] = { 0 };
	size_t n = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: comm_target COMM_HEX\n");
		return 2;
	}
	for (const char *h = argv[1]; h[0] && h[1] && n < sizeof(comm) - 1; h += 2) {
		int hi = hex_digit(h[0]), lo = hex_digit(h[1]);

		if (hi < 0 || lo < 0 || !(hi | lo))
			return 2;
		comm[n++] = (char)(hi << 4 | lo);
	}
	prctl(PR_SET_NAME, comm);
	printf("ready\n");
	fflush(stdout);
	spin_hostile();
	return 0;
}
