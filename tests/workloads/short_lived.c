/*
 * short_lived: a stream of short processes. The parent execs a fresh copy
 * of itself, one at a time, each running child_work() for CHILD_MS of CPU
 * time under the name "sl_child" and exiting, so a profiler has only that
 * long to read a child's memory maps.
 *
 *   short_lived [CHILD_MS]      prints "ready", runs until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void child_work(long ms)
{
	long end = thread_cpu_ns() + ms * 1000000L;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 500; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 30;
	char arg[32];

	if (argc > 2 && !strcmp(argv[2], "child")) {
		prctl(PR_SET_NAME, "sl_child");
		child_work(ms);
		return 0;
	}
	snprintf(arg, sizeof(arg), "%ld", ms);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/proc/self/exe", argv[0], arg, "child", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
	}
}
