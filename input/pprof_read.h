/*
 * pprof_read: a pprof profile file back into a profile, for jbpfprof
 * convert and diff.
 *
 * The file is what output/pprof.c writes: gzipped (or plain) protobuf. The
 * profile it gives back is the one that was written, frames as a full
 * aggregation has them (see profile/view.h): the samples' labels become
 * the stack's root frames again, made from their parts (process and pid,
 * thread and tid) and its state frame (from state), its time (the numeric
 * labels timestamp and duration, in nanoseconds) a span of the profile's
 * timeline; each function's system_name is its frame's exact text, and
 * its location's mapping tells its kind. Profiles from other tools are
 * read too: their functions' names as they are, native unless their
 * mapping says otherwise, counted by their "samples" value (or their
 * default sample type).
 *
 * The file is hostile input. Sizes are bounded (the compressed file and its
 * content, the stack depth), every index and id is checked, a label this
 * format defines must have the type and values it defines; anything else is
 * one error message naming what is wrong and where, never a crash.
 */
#ifndef JBPF_PPROF_READ_H
#define JBPF_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct pprof_recording {
	struct profile *profile;
	char *event;           /* "cpu", "wall", "offcpu", or the sample type read */
	char *events;          /* a file of several events: all of them, "cpu,alloc"; NULL for one */
	char *title;           /* NULL when the file has none */
	char *summary;         /* what the recording lost; NULL when none said */
	char *process_roots;   /* "none", "name", "pid", or NULL */
	double duration_s;
	unsigned frequency_hz;
	int64_t start_unix_ns;
	bool time_weights;     /* counts are microseconds (wall, offcpu), not samples */
	bool bytes;            /* counts are bytes (alloc_space) */
	bool has_states;       /* some stack has a state frame */
};

/* Limits on what a file may ask of memory. */
#define PPROF_MAX_FILE_BYTES (512u << 20)
#define PPROF_MAX_CONTENT_BYTES (1024u << 20)

/*
 * Reads path. Returns 0, or -1 with a one-line reason in err (no trailing
 * newline, no file name).
 */
int pprof_read__file(const char *path, struct pprof_recording *rec, char *err, size_t err_size);
/* The same from bytes in memory (gzipped or not). */
int pprof_read__buffer(const uint8_t *data, size_t len, struct pprof_recording *rec, char *err, size_t err_size);
/*
 * The same, reading one event of a file that holds several
 * (output/pprof.c): event NULL for its first, else one of its words
 * ("alloc"); a file of one event is read when event is NULL or its own.
 * rec->events then lists them all. An event the file has not is an error
 * that names those it has.
 */
int pprof_read__file_event(const char *path, const char *event, struct pprof_recording *rec, char *err, size_t err_size);
int pprof_read__buffer_event(const uint8_t *data, size_t len, const char *event, struct pprof_recording *rec,
			    char *err, size_t err_size);
void pprof_recording__free(struct pprof_recording *rec);


#endif /* JBPF_PPROF_READ_H */
