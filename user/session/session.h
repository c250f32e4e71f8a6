/*
 * session: the recording loop.
 *
 * Waits on the sampler's ring buffer, SIGINT/SIGTERM (through a signalfd,
 * so no handler races with the loop) and one pidfd per target process, and
 * drains records at least every DRAIN_INTERVAL_MS. A target that exits is
 * dropped from the sampler at once (sampler__forget_target): its pid may
 * go to another process. One whose pid names another process by the time
 * its pidfd is opened (its start time differs) had exited before. It stops at the deadline,
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

#include "user/session/pipeline.h"
#include "user/record/sampler.h"

struct session_config {
	uint64_t duration_ns;        /* 0: until a signal or the targets exit */
	const uint32_t *tgids;       /* targets watched for exit; none with -a */
	const uint64_t *start_ticks; /* when each started (checks__process_start) */
	size_t nr_tgids;
	bool progress;               /* draw the progress line */
	/*
	 * --continuous: every interval_ns, right after a drain, on_interval is
	 * called (the interval cut: every record drained so far belongs to the
	 * interval that ends, every later one to the next). 0: never.
	 */
	uint64_t interval_ns;
	void (*on_interval)(void *ctx);
	void *interval_ctx;
	/*
	 * Called once every target is watched for its exit, before the first
	 * wait (ctx: interval_ctx), so that what it announces ("sampling")
	 * holds: a target that exits after it is reported as exiting during
	 * the recording. NULL: nothing.
	 */
	void (*on_started)(void *ctx);
};

struct session_result {
	double elapsed_s;
	int stop_signal;             /* the signal that ended it, or 0 */
	size_t nr_exited;            /* targets that exited during the recording */
	bool all_exited;
};

/*
 * Records drained go to the pipeline (the sampler's callback); the
 * pipeline's agents' sockets are polled with the ring buffer, and it is
 * told when the sampler stopped and, after the last drain, to finish.
 * Returns 0, or a negative errno with a one-line reason in err.
 */
int session__run(struct sampler *sampler, struct pipeline *pipeline, const struct session_config *config,
		 struct session_result *result, char *err, size_t err_size);

#endif /* JBPF_SESSION_H */
