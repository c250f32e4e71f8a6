/*
 * demo: a stand-in for a small service, for a first look at jbpfprof.
 *
 * Each "request" parses a header, checksums a body, compresses it with a
 * toy run-length coder and logs a line to /dev/null (a real system call), so
 * the flame graph shows a few user functions of different weights with
 * kernel frames on top of the logging. Runs for SECONDS (default 10), with
 * one worker thread per CPU. Prints "ready" once working.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BODY_SIZE 4096


static unsigned parse_header(const char *text, size_t len)
{
	unsigned fields = 0;

	for (int round = 0; round < 40; round++)
		for (size_t i = 0; i < len; i++)
			fields += text[i] == ':' || text[i] == '\n';
	return fields;
}

static unsigned long checksum_body(const unsigned char *body, size_t len)
{
	unsigned long sum = 0;

	for (int round = 0; round < 60; round++)
		for (size_t i = 0; i < len; i++)
			sum = (sum << 5) + sum + body[i];
	return sum;
}

static size_t compress_body(const unsigned char *body, size_t len, unsigned char *out)
{
	size_t n = 0;

	for (int round = 0; round < 30; round++) {
		n = 0;
		for (size_t i = 0; i < len;) {
			size_t run = 1;

			while (i + run < len && body[i + run] == body[i] && run < 255)
				run++;
			out[n++] = (unsigned char)run;
			out[n++] = body[i];
			i += run;
		}
	}
	return n;
}

static void log_request(int fd, unsigned long sum, size_t size)
{
	char line[128];
	int len = snprintf(line, sizeof(line), "request sum=%lx size=%zu\n", sum, size);

	for (int i = 0; i < 50; i++)
		if (write(fd, line, (size_t)len) < 0)
			exit(1);
}

static void handle_request(int log_fd, unsigned char *body, unsigned char *out)
{
	static const char header[] = "GET /orders HTTP/1.1\nHost: shop\nAccept: */*\nX-Trace: 42\n";
	unsigned fields = parse_header(header, sizeof(header) - 1);
	unsigned long sum = checksum_body(body, BODY_SIZE);
	size_t size = compress_body(body, BODY_SIZE, out);

	log_request(log_fd, sum + fields, size);
}

static void *worker(void *arg)
{
	unsigned char *body = malloc(BODY_SIZE), *out = malloc(2 * BODY_SIZE);
	int log_fd = open("/dev/null", O_WRONLY);

	(void)arg;
	if (!body || !out || log_fd < 0)
		exit(1);
	for (size_t i = 0; i < BODY_SIZE; i++)
		body[i] = (unsigned char)((i / 7) % 13);
	for (;;)
		handle_request(log_fd, body, out);
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t tid;

	for (long i = 0; i < (cpus > 0 ? cpus : 1); i++)
		if (pthread_create(&tid, NULL, worker, NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	sleep((unsigned)(seconds > 0 ? seconds : 10));
	return 0;
}
