/*
 * tick_only: a software cpu-clock perf event on one CPU, with no program
 * and no ring buffer, for bench/sample_floor.sh: what the timer interrupts
 * of sampling cost by themselves.
 *
 *   tick_only CPU PERIOD_NS SECONDS
 *
 * Prints "jbpfprof: sampling" once the event is open (the line the bench
 * waits for, as it does for the profiler), then sleeps SECONDS and exits.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: tick_only CPU PERIOD_NS SECONDS\n");
		return 2;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = strtoull(argv[2], NULL, 10);
	fd = syscall(SYS_perf_event_open, &attr, -1, atoi(argv[1]), -1, 0);
	if (fd < 0) {
		perror("tick_only: perf_event_open");
		return 1;
	}
	fprintf(stderr, "jbpfprof: sampling\n");
	sleep(atoi(argv[3]));
	close(fd);
	return 0;
}
