/*
 * session: the recording loop (contract in session.h).
 */
#include "session.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/record/checks.h"

/*
 * The BPF side wakes us only when the ring is a quarter full, so this timer
 * is what normally drains it: often enough that a 16 MiB ring never fills at
 * 10 kHz on many CPUs, rarely enough to cost nothing.
 */
#define DRAIN_INTERVAL_MS 100
#define PROGRESS_INTERVAL_NS 1000000000ull
/* Room for the hooks' descriptors (one per JVM target at most, and the Java attach worker's). */
#define MAX_HOOK_FDS (JBPF_MAX_TARGETS + 1)

enum { POLL_RINGBUF, POLL_SIGNAL, POLL_FIRST_PIDFD };

static void draw_progress(const struct session_config *config, const struct pipeline *pipeline, uint64_t elapsed_ns)
{
	uint64_t samples = pipeline__written(pipeline);

	if (config->duration_ns)
		fprintf(stderr, "\rjbpfprof: recording %.0f s / %.0f s, %llu samples\033[K",
			(double)elapsed_ns / NS_PER_SEC, (double)config->duration_ns / NS_PER_SEC,
			(unsigned long long)samples);
	else
		fprintf(stderr, "\rjbpfprof: recording %.0f s (Ctrl-C to stop), %llu samples\033[K",
			(double)elapsed_ns / NS_PER_SEC, (unsigned long long)samples);
}

/*
 * Whether target i, whose pidfd was just opened, is still the process that
 * was named: the pidfd is of whatever has the pid now, which is another
 * process if the target exited and its pid was given again.
 */
static bool same_process(const struct session_config *config, size_t i)
{
	uint64_t start;

	return !checks__process_start("/proc", config->tgids[i], &start) && start == config->start_ticks[i];
}

int session__run(struct sampler *sampler, struct pipeline *pipeline, const struct session_config *config,
		 struct session_result *result, char *err, size_t err_size)
{
	size_t nr_fds = POLL_FIRST_PIDFD + config->nr_tgids, nr_hook_fds = 0;
	struct pollfd *fds = calloc(nr_fds + MAX_HOOK_FDS, sizeof(*fds));
	uint64_t start = clock__monotonic_ns(), next_progress = start + PROGRESS_INTERVAL_NS;
	uint64_t next_cut = start + config->interval_ns;
	sigset_t stop_signals, old_mask;
	bool stop = false;
	int error = 0;

	memset(result, 0, sizeof(*result));
	if (!fds) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr_fds; i++)
		fds[i].fd = -1;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, &old_mask);

	fds[POLL_RINGBUF] = (struct pollfd){ .fd = sampler__fd(sampler), .events = POLLIN };
	fds[POLL_SIGNAL] = (struct pollfd){ .fd = signalfd(-1, &stop_signals, SFD_CLOEXEC), .events = POLLIN };
	if (fds[POLL_SIGNAL].fd < 0) {
		error = -errno;
		snprintf(err, err_size, "cannot watch for Ctrl-C: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < config->nr_tgids; i++) {
		struct pollfd *p = &fds[POLL_FIRST_PIDFD + i];

		/* A pidfd polls readable once the process has exited. */
		p->fd = (int)syscall(SYS_pidfd_open, config->tgids[i], 0);
		p->events = POLLIN;
		if (p->fd < 0 && errno != ESRCH) {
			error = -errno;
			snprintf(err, err_size, "cannot watch process %u: %s", config->tgids[i], strerror(errno));
			goto out;
		}
		if (p->fd >= 0 && same_process(config, i))
			continue;
		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
		sampler__forget_target(sampler, config->tgids[i]);
		fprintf(stderr, "jbpfprof: process %u exited before the recording started\n", config->tgids[i]);
		result->nr_exited++;
	}
	if (config->nr_tgids && result->nr_exited == config->nr_tgids)
		stop = true;
	if (config->on_started)
		config->on_started(config->interval_ctx);

	while (!stop) {
		uint64_t now = clock__monotonic_ns(), wait_ns = DRAIN_INTERVAL_MS * 1000000ull, next_tick;
		int ready;

		if (config->duration_ns) {
			if (now - start >= config->duration_ns)
				break;
			if (config->duration_ns - (now - start) < wait_ns)
				wait_ns = config->duration_ns - (now - start);
		}
		if (config->interval_ns && next_cut > now && next_cut - now < wait_ns)
			wait_ns = next_cut - now;
		/* A JVM still starting is offered to the walk every few ms, not at the drain's pace. */
		next_tick = pipeline__next_tick_ns(pipeline);
		if (next_tick < now + wait_ns)
			wait_ns = next_tick > now ? next_tick - now : 0;
		nr_hook_fds = pipeline__poll_fds(pipeline, fds + nr_fds, MAX_HOOK_FDS);
		ready = poll(fds, nr_fds + nr_hook_fds, (int)((wait_ns + 999999) / 1000000));
		if (ready < 0 && errno != EINTR) {
			error = -errno;
			snprintf(err, err_size, "waiting for samples failed: %s", strerror(errno));
			break;
		}
		if (sampler__drain(sampler) < 0) {
			error = -EIO;
			snprintf(err, err_size, "reading the BPF ring buffer failed");
			break;
		}
		if (ready > 0 && nr_hook_fds)
			pipeline__on_poll(pipeline, fds + nr_fds, nr_hook_fds);
		pipeline__tick(pipeline, clock__monotonic_ns());
		/*
		 * A stop asked for is not a grid cut: the recording's end cuts the
		 * partial interval, which then holds the moment it was asked (a
		 * cut slower than an interval would else start one after it).
		 */
		if (config->interval_ns && clock__monotonic_ns() >= next_cut && !(fds[POLL_SIGNAL].revents & POLLIN)) {
			config->on_interval(config->interval_ctx);
			/* The next cut keeps to the grid: a slow cut does not shift every later one. */
			while (next_cut <= clock__monotonic_ns())
				next_cut += config->interval_ns;
		}
		if (fds[POLL_SIGNAL].revents & POLLIN) {
			struct signalfd_siginfo info;

			if (read(fds[POLL_SIGNAL].fd, &info, sizeof(info)) == sizeof(info))
				result->stop_signal = (int)info.ssi_signo;
			stop = true;
		}
		for (size_t i = POLL_FIRST_PIDFD; i < nr_fds; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (config->progress)
				fputs("\r\033[K", stderr);
			/* Its pid is free for any process now: sample and signal none of them. */
			sampler__forget_target(sampler, config->tgids[i - POLL_FIRST_PIDFD]);
			fprintf(stderr, "jbpfprof: process %u exited after %.1f s\n",
				config->tgids[i - POLL_FIRST_PIDFD], (double)(clock__monotonic_ns() - start) / NS_PER_SEC);
			close(fds[i].fd);
			fds[i].fd = -1; /* poll ignores negative descriptors */
			if (++result->nr_exited == config->nr_tgids)
				stop = true;
		}
		now = clock__monotonic_ns();
		if (config->progress && now >= next_progress) {
			draw_progress(config, pipeline, now - start);
			next_progress = now + PROGRESS_INTERVAL_NS;
		}
	}
	/*
	 * Stop sampling, then drain: every record of a sample taken is then
	 * received, and the loss counters read afterwards are final.
	 */
	sampler__stop(sampler);
	pipeline__stopped(pipeline, sampler__stopped_ns(sampler));
	if (sampler__drain(sampler) < 0 && !error) {
		error = -EIO;
		snprintf(err, err_size, "reading the BPF ring buffer failed");
	}
	pipeline__finish(pipeline, sampler);
out:
	result->elapsed_s = (double)(clock__monotonic_ns() - start) / NS_PER_SEC;
	result->all_exited = config->nr_tgids && result->nr_exited == config->nr_tgids;
	if (config->progress)
		fputs("\r\033[K", stderr);
	for (size_t i = POLL_SIGNAL; i < nr_fds; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	free(fds);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return error;
}
