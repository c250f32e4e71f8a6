/*
 * output: the writers that turn a profile into a file a person reads.
 *
 *   collapsed   "frame;frame;... COUNT" per distinct stack, root first,
 *               lines sorted, the input of every flame graph tool
 *   flamegraph  one self-contained HTML page (no network, script inline);
 *               the diff variant draws AFTER coloured by the change of
 *               each frame's share of the total from BEFORE
 *   text        the top functions by self and by total count
 *   pprof       a gzipped pprof profile, for go tool pprof and for
 *               jbpfprof convert
 *   otlp        OpenTelemetry's profiles signal (experimental), for an
 *               OTLP receiver: Pyroscope, the OpenTelemetry Collector
 *   jfr         a JDK Flight Recorder file, for JDK Mission Control,
 *               IntelliJ and the JDK's jfr tool
 *
 * Every writer takes the profile and what is known about the recording,
 * writes to an open stream, and returns 0 or a negative errno (a failed
 * write included). None of them changes the profile.
 */
#ifndef JBPF_OUTPUT_H
#define JBPF_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "profile/profile.h"

enum output_format {
	OUTPUT_COLLAPSED,
	OUTPUT_FLAMEGRAPH,
	OUTPUT_TEXT,
	OUTPUT_PPROF,
	OUTPUT_OTLP,
	OUTPUT_JFR,
};

/* What the recording was; shown in titles and summaries. */
struct output_meta {
	const char *title;     /* e.g. "CPU profile of pid 1234 (demo)"; may be NULL */
	const char *unit;      /* what a count is: "samples"; NULL means samples */
	double duration_s;     /* length of the recording */
	unsigned frequency_hz; /* mean sampling frequency, 0 if not sampled */
	const char *summary;   /* one line: taken, written, lost by cause; may be NULL */
	const char *event;     /* "cpu", "wall", "offcpu", "alloc", "nativemem" or "leaks"; NULL means cpu.
				  pprof: a recording of several, "cpu,alloc", each stack beginning
				  with its event's frame (FRAME_KIND_EVENT) */
	int64_t start_unix_ns; /* when the recording began, ns since the epoch; 0 unknown */
	const char *process_roots; /* pprof: how the recording's own views began stacks:
				      "none", "name" or "pid"; may be NULL */
	/*
	 * otlp: the attributes of the resource of the stacks that begin with no
	 * process frame, as key, value pairs (2 * nr_resource_attributes
	 * strings); a --continuous profile's service, host and labels.
	 */
	const char *const *resource_attributes;
	size_t nr_resource_attributes;
};

/* A format: its name, its files' extension, what a message calls it, its writer. */
struct output__writer {
	const char *name;       /* as -o takes it: "flamegraph" */
	const char *extension;  /* of default file names, without the dot: "html" */
	const char *noun;       /* in messages: "flame graph" */
	/* top: the text report's rows per table (0 for the default), unused by the others. */
	int (*write)(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out);
};

/*
 * Whether a file of format keeps everything a recording aggregated
 * (process, thread and state frames, how Java frames ran), for a later
 * view: pprof, otlp and jfr.
 */
static inline int output__keeps_everything(enum output_format format)
{
	return format == OUTPUT_PPROF || format == OUTPUT_OTLP || format == OUTPUT_JFR;
}

/*
 * Whether a profile of event (output_meta.event) counts bytes allocated,
 * and the allocations they are: "alloc" (Java heap), "nativemem" (native
 * memory) and "leaks" (native memory still allocated at the end).
 */
static inline int output__event_allocates(const char *event)
{
	return event && (!strcmp(event, "alloc") || !strcmp(event, "nativemem") || !strcmp(event, "leaks"));
}

/* Go's names for an allocation profile's bytes and allocations: in use (leaks), else allocated. */
static inline const char *output__space_type(const char *event)
{
	return event && !strcmp(event, "leaks") ? "inuse_space" : "alloc_space";
}

static inline const char *output__objects_type(const char *event)
{
	return event && !strcmp(event, "leaks") ? "inuse_objects" : "alloc_objects";
}

/* The writer of format (the flame graph's for a value out of range). */
const struct output__writer *output__writer(enum output_format format);

/* output__writer(format)->write(...). */
int output__write(enum output_format format, const struct profile *profile, const struct output_meta *meta,
		 size_t top, FILE *out);

int output__collapsed_write(const struct profile *profile, FILE *out);
/* The profile as a JDK Flight Recorder file (output/jfr.c describes it); meta may be NULL. */
int output__jfr_write(const struct profile *profile, const struct output_meta *meta, FILE *out);
/* The same in chunks of at most chunk_events events (output__jfr_write's are of 2^20). */
int output__jfr_write_chunks(const struct profile *profile, const struct output_meta *meta, uint64_t chunk_events,
			    FILE *out);
/* The profile as an OTLP ExportProfilesServiceRequest (output/otlp.c describes it); meta may be NULL. */
int output__otlp_write(const struct profile *profile, const struct output_meta *meta, FILE *out);
int output__flamegraph_write(const struct profile *profile, const struct output_meta *meta, FILE *out);
/*
 * One page of several events' flame graphs (a recording of -e cpu,alloc),
 * shown one at a time, chosen in the page: profiles[i] is event
 * metas[i].event's, with its own title, unit and summary. At most
 * OUTPUT_MAX_EVENTS.
 */
#define OUTPUT_MAX_EVENTS 4
int output__flamegraph_write_events(const struct profile *const *profiles, const struct output_meta *metas, size_t nr,
				   FILE *out);
/*
 * The same page drawing after, each frame coloured by how its share of the
 * total changed since before (red grew, blue shrank). Frames are matched by
 * their (name, kind) path from the root; meta describes the comparison (its
 * title) and the after recording.
 */
int output__flamegraph_diff_write(const struct profile *before, const struct profile *after,
				 const struct output_meta *meta, FILE *out);
/* top: rows in each table (by self, by total); 0 means a default of 30. */
int output__text_write(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out);
/*
 * Best with a profile aggregated in full (see user/view.h): its process,
 * thread and state frames become the samples' labels.
 */
int output__pprof_write(const struct profile *profile, const struct output_meta *meta, FILE *out);
/*
 * The pseudo-mapping pprof and OTLP files name for a kind of code frame
 * ("[kernel.kallsyms]", "[java compiled]"...; native code whose file is
 * not known: "[native]"); NULL for the kinds that are not code (process,
 * thread, state frames).
 */
const char *output__kind_mapping(enum frame_kind kind);
/* A frame's text without its kind's suffix ("read_[k]" -> "read"), malloc'd; NULL out of memory. */
char *output__plain_name(const char *text, enum frame_kind kind);

#endif /* JBPF_OUTPUT_H */
