/*
 * outputs: the files a recording's profile is written to, and what is
 * written to each.
 *
 * outputs__open opens every file -f/-o names (or the default one, named
 * after the targets and the time) before the recording, so that a path
 * that cannot be written is reported at once, not after the whole
 * recording; each is created unnamed and linked into place only when
 * complete (output/files.h). outputs__write writes each from the
 * recording's profile through the view its format and the options ask
 * for: a pprof file everything aggregated, another the options' view; a
 * recording of several events one file holding them all (pprof), a section
 * each (text), or one page showing one at a time (flame graph).
 * outputs__discard leaves no file behind a recording that failed.
 *
 * Failures are said on stderr, one line each.
 */
#ifndef JBPF_USER_OUTPUTS_H
#define JBPF_USER_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/files.h"
#include "user/options.h"
#include "user/session/recording.h"

struct outputs {
	const struct options *opts;
	struct recording *rec;
	int64_t start_unix_ns; /* CLOCK_REALTIME as the recording began */
	struct output_file outputs[OPTIONS_MAX_OUTPUTS]; /* opened before recording */
	size_t nr_outputs;
	bool full;            /* aggregated in full for a pprof file (profile/view.h) */
};

/* opts and rec set: 0, or -1 when a file cannot be opened (said). */
int outputs__open(struct outputs *out);
void outputs__discard(struct outputs *out);
/* 0 when every file was written and linked into place, else non-zero (said). */
int outputs__write(struct outputs *out, const char *summary);

/* Event e of -e as the recording names it. */
enum recording_event outputs__recording_event(enum event_mode e);

#endif /* JBPF_USER_OUTPUTS_H */
