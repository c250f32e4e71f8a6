/*
 * outputs: a recording's profile to its files (contract in outputs.h).
 */
#include "outputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/output.h"
#include "profile/profile.h"
#include "profile/view.h"

static void default_path(const struct outputs *out, char *buf, size_t size)
{
	char stamp[32], who[32];
	time_t now = time(NULL);
	const uint32_t *tgids;
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (out->opts->all || !recording__targets(out->rec, &tgids))
		snprintf(who, sizeof(who), "all");
	else
		snprintf(who, sizeof(who), "%u", tgids[0]);
	snprintf(buf, size, "jbpfprof-%s-%s.%s", who, stamp, output__writer(out->opts->format)->extension);
}

int outputs__open(struct outputs *out)
{
	const struct options *o = out->opts;
	char path[4096];

	if (!o->nr_outputs) {
		default_path(out, path, sizeof(path));
		out->nr_outputs = 1;
		out->full = output__keeps_everything(o->format);
		return output_file__open(&out->outputs[0], path, o->format);
	}
	for (size_t i = 0; i < o->nr_outputs; i++) {
		if (output_file__open(&out->outputs[i], o->output_paths[i], o->output_formats[i]))
			return -1;
		out->nr_outputs = i + 1;
		out->full |= output__keeps_everything(o->output_formats[i]);
	}
	return 0;
}

void outputs__discard(struct outputs *out)
{
	for (size_t i = 0; i < out->nr_outputs; i++)
		output_file__discard(&out->outputs[i]);
}

/* Whether p has a virtual thread's marker, whose carrier's frames the view takes out. */
static bool has_virtual_threads(const struct profile *p)
{
	size_t nr = profile__frame_count(p);

	for (size_t i = 0; i < nr; i++)
		if (profile__frame_kind(p, (uint32_t)i) == FRAME_KIND_CARRIER)
			return true;
	return false;
}

/*
 * The profile a file of this format is written from: a pprof file gets
 * everything that was aggregated, another the view the options ask for;
 * both without the stacks --include and --exclude leave out. event: of a
 * recording of several, the one whose stacks are taken (NULL: all, each
 * under its event frame). NULL on failure (said).
 */
static struct profile *profile_for(const struct outputs *out, enum output_format format, const char *event)
{
	const struct options *o = out->opts;
	bool whole = output__keeps_everything(format) || !out->full;
	struct view_config view = {
		.process_root = whole ? VIEW_ROOT_PROCESS
			      : recording__roots(out->rec),
		.threads = whole || o->threads,
		.annotate = whole || o->annotate,
		.lines = output__keeps_everything(format) ? VIEW_LINES_KEEP
			 : o->lines			 ? VIEW_LINES_SHOW
							 : VIEW_LINES_DROP,
		/* What the aggregator leaves to the view whatever the recording: virtual threads' carriers. */
		.carrier_frames = output__keeps_everything(format) || o->carrier_frames,
		.virtual_thread_ids = output__keeps_everything(format) || o->threads,
		.include = o->include_given ? &o->include : NULL,
		.exclude = o->exclude_given ? &o->exclude : NULL,
		.event = event,
	};
	struct profile *p = profile__new(NULL);
	int error = p ? view__apply(recording__profile(out->rec), &view, p, NULL) : -ENOMEM;

	if (error) {
		fprintf(stderr, "jbpfprof: preparing the %s failed: %s\n", output__writer(format)->noun, strerror(-error));
		profile__free(p);
		return NULL;
	}
	return p;
}


/* Each event (enum event_mode) as the outputs and the recording name it. */
static const struct {
	const char *title; /* "Wall-clock profile of ..." */
	const char *noun;  /* among several: "Profiles of ...: CPU, native memory" */
	const char *unit;  /* what a count is */
	enum recording_event recording;
} events[EVENT_NR] = {
	[EVENT_CPU] = { "CPU", "CPU", "samples", RECORDING_CPU },
	[EVENT_WALL] = { "Wall-clock", "wall-clock", "microseconds", RECORDING_WALL },
	[EVENT_OFFCPU] = { "Off-CPU", "off-CPU", "microseconds", RECORDING_OFFCPU },
	[EVENT_ALLOC] = { "Allocation", "Java heap allocations", "bytes", RECORDING_ALLOC },
	[EVENT_NATIVEMEM] = { "Native memory", "native memory", "bytes", RECORDING_NATIVEMEM },
	[EVENT_LOCK] = { "Lock contention", "lock contention", "microseconds", RECORDING_LOCK },
};

/* What one event's files are told: its word, unit, title and frequency. */
static struct output_meta event_meta(const struct outputs *out, enum event_mode e, const char *summary,
				     const char *targets, char *title, size_t title_size)
{
	const struct options *o = out->opts;
	bool leaks = e == EVENT_NATIVEMEM && o->leaks;
	bool allocates = e == EVENT_ALLOC || e == EVENT_NATIVEMEM;

	if (leaks)
		snprintf(title, title_size, "Native memory still allocated: %s", targets);
	else
		snprintf(title, title_size, "%s profile of %s", events[e].title, targets);
	return (struct output_meta){
		.title = title,
		.unit = events[e].unit,
		.duration_s = recording__elapsed_s(out->rec),
		.frequency_hz = allocates ? 0 : o->frequency_hz,
		.summary = summary,
		.event = recording__event_word(events[e].recording, leaks),
		.start_unix_ns = recording__start_unix_ns(out->rec) ? recording__start_unix_ns(out->rec) : out->start_unix_ns,
		.process_roots = view__root_word(recording__roots(out->rec)),
	};
}

/*
 * A file of several events: pprof holds them all, each in sample types of
 * its own (meta.event "cpu,alloc"); the text report has a section per
 * event and the flame graph page shows one at a time, each from the
 * profile of its own stacks. Options refused the other formats.
 */
static int write_events(struct outputs *out, struct output_file *f, const char *summary, const char *targets)
{
	const struct options *o = out->opts;
	struct output_meta metas[EVENT_NR], all;
	struct profile *profiles[EVENT_NR] = { 0 };
	char titles[EVENT_NR][512], title[640], words[64] = "", nouns[256] = "";
	size_t n = 0;
	int error = 0;

	for (int e = 0; e < EVENT_NR; e++) {
		if (!options__records(o, (enum event_mode)e))
			continue;
		metas[n] = event_meta(out, (enum event_mode)e, summary, targets, titles[n], sizeof(titles[n]));
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s", n ? "," : "", metas[n].event);
		snprintf(nouns + strlen(nouns), sizeof(nouns) - strlen(nouns), "%s%s", n ? ", " : "",
			 e == EVENT_NATIVEMEM && o->leaks ? "native memory still allocated" : events[e].noun);
		n++;
	}
	if (f->format == OUTPUT_PPROF) {
		struct profile *p = profile_for(out, f->format, NULL);

		snprintf(title, sizeof(title), "Profiles of %s: %s", targets, nouns);
		all = metas[0];
		all.title = title;
		all.event = words;
		error = p ? output__write(f->format, p, &all, o->text_top, f->out) : -ENOMEM;
		profile__free(p);
		return error;
	}
	for (size_t i = 0; i < n && !error; i++) {
		profiles[i] = profile_for(out, f->format, metas[i].event);
		if (!profiles[i])
			error = -ENOMEM;
		else if (f->format == OUTPUT_TEXT)
			error = output__write(f->format, profiles[i], &metas[i], o->text_top, f->out);
	}
	if (!error && f->format == OUTPUT_FLAMEGRAPH)
		error = output__flamegraph_write_events((const struct profile *const *)profiles, metas, n, f->out);
	for (size_t i = 0; i < n; i++)
		profile__free(profiles[i]);
	return error;
}

int outputs__write(struct outputs *out, const char *summary)
{
	const struct options *o = out->opts;
	enum event_mode only = (enum event_mode)__builtin_ctz(o->events);
	char title[512], targets[256];
	struct output_meta meta;
	int failed = 0;

	recording__describe_targets(out->rec, targets, sizeof(targets));
	meta = event_meta(out, only, summary, targets, title, sizeof(title));
	for (size_t i = 0; i < out->nr_outputs; i++) {
		struct output_file *f = &out->outputs[i];
		/* --lines: the view writes each Java frame's line into its name. */
		bool as_is = !out->full && !o->include_given && !o->exclude_given && !o->lines &&
			     (o->carrier_frames || !has_virtual_threads(recording__profile(out->rec)));
		struct profile *p = NULL;
		int error;

		if (options__several_events(o)) {
			failed |= output_file__finish(f, write_events(out, f, summary, targets));
			continue;
		}
		p = as_is ? recording__profile(out->rec) : profile_for(out, f->format, NULL);
		if (!p) {
			output_file__discard(f);
			failed = -1;
			continue;
		}
		error = output__write(f->format, p, &meta, o->text_top, f->out);
		if (p != recording__profile(out->rec))
			profile__free(p);
		failed |= output_file__finish(f, error);
	}
	return failed;
}

enum recording_event outputs__recording_event(enum event_mode e)
{
	return events[e].recording;
}
