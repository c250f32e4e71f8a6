/*
 * continuous: what --continuous does with each interval's profile.
 *
 * The profile (aggregated in full: a process root with its pid on every
 * stack) is split by service: each process's stacks go to the profile of
 * its (service, container) (service.h), without the process and thread
 * roots, so one profile per service and interval whatever the number of
 * its processes and threads. Each is written as a gzipped pprof whose
 * comments say what the interval lost, and goes
 *
 *   --dir DIR   to DIR/<UTC time>-<seq>-<service>[-<container>].<event>.pb.gz,
 *               written under a dot name and renamed when complete; with
 *               --keep, the oldest such files are removed until the
 *               directory's files of that form fit in it;
 *   --push URL  to the spool (spool.h), from which the pusher (push.h)
 *               sends it, labelled with the host name, the container id
 *               and the --label pairs.
 *
 * Services are remembered from one interval to the next only while their
 * processes are seen: a process that is gone is forgotten after the first
 * interval without it, so memory follows the host, not the uptime.
 */
#ifndef JBPF_FLEET_CONTINUOUS_H
#define JBPF_FLEET_CONTINUOUS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "user/fleet/labels.h"
#include "user/fleet/push.h"
#include "user/session/recording.h"

struct fleet_config {
	const char *event;              /* "cpu" or "wall" (names and file names) */
	unsigned frequency_hz;
	const char *dir;                /* NULL: no files */
	uint64_t keep_bytes;            /* 0: no bound */
	const char *push_url;           /* NULL: no push */
	enum push_api push_api;         /* which of Pyroscope's APIs (push.h) */
	const char *spool_dir;
	uint64_t spool_bytes;
	const struct fleet_label *labels;
	size_t nr_labels;
	int verbose;
};

struct fleet;

/* Opens the spool and starts the pusher. NULL after saying why on stderr. */
struct fleet *fleet__new(const struct fleet_config *config);
/* Ends the pusher (what is left waits in the spool), prints with -v what was done, frees. */
void fleet__free(struct fleet *fleet);

/* The recording's interval callback (recording_interval_fn); ctx is the fleet. */
void fleet__interval(void *ctx, const struct profile *profile, const struct recording_interval *interval);

#endif /* JBPF_FLEET_CONTINUOUS_H */
