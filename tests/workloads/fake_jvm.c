/*
 * fake_jvm: a process the profiler takes for a JVM, playing a hostile one.
 *
 *   fake_jvm LIBJVM quiet     an agent that says hello, then only what it is asked
 *   fake_jvm LIBJVM flood     an agent that says hello, then writes valid
 *                             messages as fast as it can, for good
 *   fake_jvm LIBJVM handoff   as quiet, but after the load request it prints
 *                             "socket PATH" (the profiler's socket, from the
 *                             request's options) and connects only once it
 *                             gets SIGUSR1, so that someone else may try first
 *
 * What makes it a JVM to the profiler: it maps the file LIBJVM (which the
 * test names libjvm.so), catches SIGQUIT, and speaks HotSpot's attach
 * protocol: the first SIGQUIT makes it listen on /tmp/.java_pid<pid> (mode
 * 0600), where it takes
 * "1\0load\0PATH\0true\0OPTIONS\0", answers "0\nreturn code: 0\n", and
 * then does what the agent would: connects to the socket named by
 * "socket=" in OPTIONS and speaks the stream of jvmti-stub/stream.h. It
 * never loads PATH. The real-time signals the profiler sends to its
 * threads are caught and ignored.
 *
 * It prints "ready" once all that is in place, and "connected" once its
 * agent side sent its hello. SIGTERM ends it with status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../jvmti-stub/stream.h"

/* Bytes a flood writes per write: one page, which the kernel queues as one piece. */
#define FLOOD_BYTES 4096
#define FLOOD_WRITERS 3
/* A METHOD of 32 bytes: header, fixed part, and a name of 8 bytes ("p.Q.run" and its NUL). */
#define FLOOD_NAME 8
#define FLOOD_MSG (sizeof(struct jbpf_msg_header) + sizeof(struct jbpf_msg_method) + FLOOD_NAME)
_Static_assert(FLOOD_BYTES % FLOOD_MSG == 0, "a piece holds whole messages");
/* The send buffer asked for (net.core.wmem_max caps it). */
#define FLOOD_SNDBUF (4 << 20)

static int signal_pipe[2];
/* The attach socket, removed at exit as HotSpot does. */
static char attach_path[108];

static void remove_attach_socket(void)
{
	if (attach_path[0])
		unlink(attach_path);
}

/* Each caught signal becomes one byte in signal_pipe, read by the main loop. */
static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(signal_pipe[1], &b, 1) < 0) {
		/* the pipe is full: the main loop has enough to read */
	}
	errno = saved;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

static void catch(int sig, void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };

	/* No SA_RESTART: a blocked write returns, and SIGTERM is seen. */
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		perror("fake_jvm: sigaction");
		exit(2);
	}
}

/* Waits for one of the signals on signal_pipe; returns it. */
static int next_signal(void)
{
	unsigned char b;

	for (;;) {
		ssize_t n = read(signal_pipe[0], &b, 1);

		if (n == 1)
			return b;
		if (n < 0 && errno != EINTR)
			exit(2);
	}
}

/* A pending SIGTERM ends the process; other signals are dropped. */
static void check_term(void)
{
	struct pollfd p = { .fd = signal_pipe[0], .events = POLLIN };

	while (poll(&p, 1, 0) > 0)
		if (next_signal() == SIGTERM)
			exit(0);
}

static int write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0 && errno == EINTR) {
			check_term();
			continue;
		}
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static size_t put(uint8_t *buf, size_t len, uint32_t type, const void *payload, size_t size, const void *tail,
		  size_t tail_size)
{
	struct jbpf_msg_header h = { .type = type, .size = (uint32_t)(size + tail_size) };

	memcpy(buf + len, &h, sizeof(h));
	if (size)
		memcpy(buf + len + sizeof(h), payload, size);
	if (tail_size)
		memcpy(buf + len + sizeof(h) + size, tail, tail_size);
	return len + sizeof(h) + size + tail_size;
}

/* Listens on /tmp/.java_pid<pid>, as HotSpot's attach listener does. */
static int listen_attach(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/.java_pid%d", (int)getpid());
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) || listen(fd, 4)) {
		perror("fake_jvm: attach socket");
		exit(2);
	}
	snprintf(attach_path, sizeof(attach_path), "%s", sa.sun_path);
	return fd;
}

/*
 * Takes one load request on the attach socket and answers it; returns the
 * profiler's socket path from its options in path, or -1.
 */
static int take_request(int listen_fd, char *path, size_t pathlen)
{
	char req[4096], *field[5], *opt, *end;
	size_t len = 0, nuls = 0;
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -1;
	while (nuls < 5 && len < sizeof(req)) {
		ssize_t n = read(fd, req + len, 1);

		if (n <= 0)
			break;
		if (req[len++] == '\0')
			nuls++;
	}
	if (nuls < 5) {
		close(fd);
		return -1;
	}
	field[0] = req;
	for (int i = 1; i < 5; i++)
		field[i] = field[i - 1] + strlen(field[i - 1]) + 1;
	opt = strstr(field[4], "socket=");
	if (strcmp(field[1], "load") || !opt) {
		write_all(fd, "1\nunknown command\n", 18);
		close(fd);
		return -1;
	}
	opt += 7;
	end = strchr(opt, ',');
	snprintf(path, pathlen, "%.*s", end ? (int)(end - opt) : (int)strlen(opt), opt);
	write_all(fd, "0\nreturn code: 0\n", 17);
	close(fd);
	return 0;
}

static int connect_agent(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct jbpf_msg_hello hello = { .version = JBPF_STREAM_VERSION, .signo = (uint32_t)SIGRTMIN + 4,
					.pid = (uint32_t)getpid(), .max_frames = 128 };
	uint8_t buf[256];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(hello.vm_version, sizeof(hello.vm_version), "fake");
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write_all(fd, buf, put(buf, 0, JBPF_MSG_HELLO, &hello, sizeof(hello), NULL, 0))) {
		perror("fake_jvm: connect to the profiler");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	printf("connected\n");
	fflush(stdout);
	return fd;
}

/* Answers requests until the profiler closes the connection. */
static void serve_quietly(int fd)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = signal_pipe[0], .events = POLLIN } };
		uint8_t buf[64];
		char req;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			check_term();
		if (!p[0].revents)
			continue;
		if (read(fd, &req, 1) != 1)
			return;
		if (req == JBPF_REQ_FLUSH && write_all(fd, buf, put(buf, 0, JBPF_MSG_FLUSHED, NULL, 0, NULL, 0)))
			return;
	}
}

static uint8_t flood_buf[FLOOD_BYTES];

/* One writer: whole buffers of whole messages, each write one piece of the stream. */
static void *flood_writer(void *arg)
{
	int fd = (int)(intptr_t)arg;

	while (write(fd, flood_buf, sizeof(flood_buf)) > 0 || errno == EINTR)
		;
	return NULL;
}

/*
 * Writes valid messages as fast as the profiler takes them, until it
 * closes: short METHODs, each of which costs the profiler a lookup and a
 * copy of its name while writing costs this process next to nothing, from
 * several threads and through a deep send buffer so that the socket is
 * never found empty. Every piece is a run of whole 32-byte messages, so
 * pieces of different writers may interleave.
 */
static void flood(int fd)
{
	pthread_t writers[FLOOD_WRITERS];
	int sndbuf = FLOOD_SNDBUF;
	size_t len = 0;

	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	for (uint64_t id = 1; len + FLOOD_MSG <= sizeof(flood_buf); id++) {
		struct jbpf_msg_method m = { .method_id = id, .name_len = FLOOD_NAME };

		len = put(flood_buf, len, JBPF_MSG_METHOD, &m, sizeof(m), "p.Q.run", FLOOD_NAME);
	}
	for (int i = 0; i < FLOOD_WRITERS; i++)
		if (pthread_create(&writers[i], NULL, flood_writer, (void *)(intptr_t)fd))
			exit(2);
	for (int i = 0; i < FLOOD_WRITERS; i++)
		pthread_join(writers[i], NULL);
}

int main(int argc, char **argv)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd, listen_fd = -1;
	struct stat st;

	if (argc != 3 || (strcmp(argv[2], "quiet") && strcmp(argv[2], "flood") && strcmp(argv[2], "handoff"))) {
		fprintf(stderr, "usage: fake_jvm LIBJVM quiet|flood|handoff\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0 ||
	    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		fprintf(stderr, "fake_jvm: cannot map %s (it must not be empty)\n", argv[1]);
		return 2;
	}
	close(fd);
	atexit(remove_attach_socket);
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) || fcntl(signal_pipe[0], F_SETFL, 0)) {
		perror("fake_jvm: pipe");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	catch(SIGQUIT, on_signal);
	catch(SIGTERM, on_signal);
	catch(SIGUSR1, on_signal);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		catch(sig, ignore_signal);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd p[2] = { { .fd = signal_pipe[0], .events = POLLIN }, { .fd = listen_fd, .events = POLLIN } };
		int sig;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[0].revents) {
			sig = next_signal();
			if (sig == SIGTERM)
				return 0;
			/* As HotSpot: the first SIGQUIT starts the listener, which then stays. */
			if (sig == SIGQUIT && listen_fd < 0)
				listen_fd = listen_attach();
			continue;
		}
		if (!p[1].revents || take_request(listen_fd, path, sizeof(path)))
			continue;
		if (!strcmp(argv[2], "handoff")) {
			printf("socket %s\n", path);
			fflush(stdout);
			while ((sig = next_signal()) != SIGUSR1)
				if (sig == SIGTERM)
					return 0;
		}
		fd = connect_agent(path);
		if (fd < 0)
			continue;
		if (!strcmp(argv[2], "flood"))
			flood(fd);
		else
			serve_quietly(fd);
		close(fd);
	}
}
