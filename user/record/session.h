/*
 * session: the recording loop.
 *
 * Waits on the sampler's ring buffer, SIGINT/SIGTERM (through a signalfd,
 * so no handler races with the loop) and one pidfd per target process, and
 * drains records at least every DRAIN_INTERVAL_MS. It stops at the deadline,
 * on a signal, or when every target has exited; then it stops the sampler
 * and drains once more, so nothing already sampled is left behind and the
 * sampler's counters are final.
 *
 * The caller should block SIGINT and SIGTERM before it sets up the sampler,
 * so that one arriving before the loop starts is not lost; the loop blocks
 * them itself too, and restores the caller's mask on return.
 *
 * On a terminal it keeps a progress line on stderr (elapsed / total and
 * samples so far), erased before it returns.
 */
#ifndef JBPF_SESSION_H
#define JBPF_SESSION_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/record/sampler.h"

/*
 * More to wait on and do, for the Java agents' sockets (see user/java.h);
 * every member may be NULL.
 */
struct session_hooks {
	void *ctx;
	/* Fills up to max descriptors to poll; called before every wait. */
	size_t (*poll_fds)(void *ctx, struct pollfd *fds, size_t max);
	void (*on_poll)(void *ctx, const struct pollfd *fds, size_t nr);
	/* After every drain of the ring buffer. */
	void (*tick)(void *ctx, uint64_t now_ns);
	/* After the sampler stopped and its last records were drained. */
	void (*finish)(void *ctx);
};

struct session_config {
	uint64_t duration_ns;        /* 0: until a signal or the targets exit */
	const uint32_t *tgids;       /* targets watched for exit; none with -a */
	size_t nr_tgids;
	bool progress;               /* draw the progress line */
	uint64_t (*samples_so_far)(void *ctx); /* for the progress line */
	void *ctx;
	struct session_hooks hooks;
};

struct session_result {
	double elapsed_s;
	int stop_signal;             /* the signal that ended it, or 0 */
	size_t nr_exited;            /* targets that exited during the recording */
	bool all_exited;
};

/* Returns 0, or a negative errno with a one-line reason in err. */
int session__run(struct sampler *sampler, const struct session_config *config,
		 struct session_result *result, char *err, size_t err_size);

#endif /* JBPF_SESSION_H */
