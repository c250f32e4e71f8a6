/*
 * exec_into: burns CPU in spin_before_exec() for 300 ms of CPU time, then
 * replaces itself with PROGRAM (execv), keeping its pid. A profiler that
 * read this process's maps before the exec must not look later addresses
 * up in them.
 *
 *   exec_into PROGRAM [ARG...]      prints "ready" first
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void spin_before_exec(void)
{
	long end = thread_cpu_ns() + 300 * 1000000L;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 500; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: exec_into PROGRAM [ARG...]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	spin_before_exec();
	execv(argv[1], argv + 1);
	perror("exec_into: execv");
	return 127;
}
