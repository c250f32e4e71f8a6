/*
 * jbpfprof: the command. Parses options, checks the machine, records, and
 * writes the chosen output, then one summary line on stderr.
 *
 * Exit status: 0 when a profile was written, 1 when the recording or the
 * output failed, 2 for a mistake on the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "output/files.h"
#include "output/output.h"
#include "profile/profile.h"
#include "profile/view.h"
#include "user/convert.h"
#include "user/fleet/continuous.h"
#include "user/options.h"
#include "user/record/checks.h"
#include "user/session/recording.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"

struct command {
	struct options opts;
	struct recording *rec;
	int64_t start_unix_ns; /* CLOCK_REALTIME as the recording began */
	struct output_file outputs[OPTIONS_MAX_OUTPUTS]; /* opened before recording */
	size_t nr_outputs;
	bool full;            /* aggregated in full for a pprof file (profile/view.h) */
};

/*
 * The symbolizer holds each mapped file open until it has read its symbols,
 * up to its file cache's bound (512); with one perf event per CPU and the
 * BPF maps, a large host would pass the usual soft limit of 1024. Raise the
 * soft limit to the hard one.
 */
static void raise_fd_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
}

static void default_path(const struct command *cmd, char *buf, size_t size)
{
	char stamp[32], who[32];
	time_t now = time(NULL);
	const uint32_t *tgids;
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (cmd->opts.all || !recording__targets(cmd->rec, &tgids))
		snprintf(who, sizeof(who), "all");
	else
		snprintf(who, sizeof(who), "%u", tgids[0]);
	snprintf(buf, size, "jbpfprof-%s-%s.%s", who, stamp, output_writer(cmd->opts.format)->extension);
}

/*
 * Opens every output before recording, so that a path that cannot be
 * written is reported at once, not after the whole recording.
 */
static int open_outputs(struct command *cmd)
{
	const struct options *o = &cmd->opts;
	char path[4096];

	if (!o->nr_outputs) {
		default_path(cmd, path, sizeof(path));
		cmd->nr_outputs = 1;
		cmd->full = output_keeps_everything(o->format);
		return output_file__open(&cmd->outputs[0], path, o->format);
	}
	for (size_t i = 0; i < o->nr_outputs; i++) {
		if (output_file__open(&cmd->outputs[i], o->output_paths[i], o->output_formats[i]))
			return -1;
		cmd->nr_outputs = i + 1;
		cmd->full |= output_keeps_everything(o->output_formats[i]);
	}
	return 0;
}

/* A recording that failed leaves no file behind. */
static void discard_outputs(struct command *cmd)
{
	for (size_t i = 0; i < cmd->nr_outputs; i++)
		output_file__discard(&cmd->outputs[i]);
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
static struct profile *profile_for(const struct command *cmd, enum output_format format, const char *event)
{
	const struct options *o = &cmd->opts;
	bool whole = output_keeps_everything(format) || !cmd->full;
	struct view_config view = {
		.process_root = whole ? VIEW_ROOT_PROCESS
			      : recording__roots(cmd->rec),
		.threads = whole || o->threads,
		.annotate = whole || o->annotate,
		.lines = output_keeps_everything(format) ? VIEW_LINES_KEEP
			 : o->lines			 ? VIEW_LINES_SHOW
							 : VIEW_LINES_DROP,
		/* What the aggregator leaves to the view whatever the recording: virtual threads' carriers. */
		.carrier_frames = output_keeps_everything(format) || o->carrier_frames,
		.virtual_thread_ids = output_keeps_everything(format) || o->threads,
		.include = o->include_given ? &o->include : NULL,
		.exclude = o->exclude_given ? &o->exclude : NULL,
		.event = event,
	};
	struct profile *p = profile__new(NULL);
	int error = p ? view__apply(recording__profile(cmd->rec), &view, p, NULL) : -ENOMEM;

	if (error) {
		fprintf(stderr, "jbpfprof: preparing the %s failed: %s\n", output_writer(format)->noun, strerror(-error));
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
static struct output_meta event_meta(const struct command *cmd, enum event_mode e, const char *summary,
				     const char *targets, char *title, size_t title_size)
{
	const struct options *o = &cmd->opts;
	bool leaks = e == EVENT_NATIVEMEM && o->leaks;
	bool allocates = e == EVENT_ALLOC || e == EVENT_NATIVEMEM;

	if (leaks)
		snprintf(title, title_size, "Native memory still allocated: %s", targets);
	else
		snprintf(title, title_size, "%s profile of %s", events[e].title, targets);
	return (struct output_meta){
		.title = title,
		.unit = events[e].unit,
		.duration_s = recording__elapsed_s(cmd->rec),
		.frequency_hz = allocates ? 0 : o->frequency_hz,
		.summary = summary,
		.event = recording_event_word(events[e].recording, leaks),
		.start_unix_ns = recording__start_unix_ns(cmd->rec) ? recording__start_unix_ns(cmd->rec) : cmd->start_unix_ns,
		.process_roots = view_root_word(recording__roots(cmd->rec)),
	};
}

/*
 * A file of several events: pprof holds them all, each in sample types of
 * its own (meta.event "cpu,alloc"); the text report has a section per
 * event and the flame graph page shows one at a time, each from the
 * profile of its own stacks. Options refused the other formats.
 */
static int write_events(struct command *cmd, struct output_file *f, const char *summary, const char *targets)
{
	const struct options *o = &cmd->opts;
	struct output_meta metas[EVENT_NR], all;
	struct profile *profiles[EVENT_NR] = { 0 };
	char titles[EVENT_NR][512], title[640], words[64] = "", nouns[256] = "";
	size_t n = 0;
	int error = 0;

	for (int e = 0; e < EVENT_NR; e++) {
		if (!options_records(o, (enum event_mode)e))
			continue;
		metas[n] = event_meta(cmd, (enum event_mode)e, summary, targets, titles[n], sizeof(titles[n]));
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s", n ? "," : "", metas[n].event);
		snprintf(nouns + strlen(nouns), sizeof(nouns) - strlen(nouns), "%s%s", n ? ", " : "",
			 e == EVENT_NATIVEMEM && o->leaks ? "native memory still allocated" : events[e].noun);
		n++;
	}
	if (f->format == OUTPUT_PPROF) {
		struct profile *p = profile_for(cmd, f->format, NULL);

		snprintf(title, sizeof(title), "Profiles of %s: %s", targets, nouns);
		all = metas[0];
		all.title = title;
		all.event = words;
		error = p ? output_write(f->format, p, &all, o->text_top, f->out) : -ENOMEM;
		profile__free(p);
		return error;
	}
	for (size_t i = 0; i < n && !error; i++) {
		profiles[i] = profile_for(cmd, f->format, metas[i].event);
		if (!profiles[i])
			error = -ENOMEM;
		else if (f->format == OUTPUT_TEXT)
			error = output_write(f->format, profiles[i], &metas[i], o->text_top, f->out);
	}
	if (!error && f->format == OUTPUT_FLAMEGRAPH)
		error = output_flamegraph_write_events((const struct profile *const *)profiles, metas, n, f->out);
	for (size_t i = 0; i < n; i++)
		profile__free(profiles[i]);
	return error;
}

static int write_outputs(struct command *cmd, const char *summary)
{
	const struct options *o = &cmd->opts;
	enum event_mode only = (enum event_mode)__builtin_ctz(o->events);
	char title[512], targets[256];
	struct output_meta meta;
	int failed = 0;

	recording__describe_targets(cmd->rec, targets, sizeof(targets));
	meta = event_meta(cmd, only, summary, targets, title, sizeof(title));
	for (size_t i = 0; i < cmd->nr_outputs; i++) {
		struct output_file *f = &cmd->outputs[i];
		/* --lines: the view writes each Java frame's line into its name. */
		bool as_is = !cmd->full && !o->include_given && !o->exclude_given && !o->lines &&
			     (o->carrier_frames || !has_virtual_threads(recording__profile(cmd->rec)));
		struct profile *p = NULL;
		int error;

		if (options_several_events(o)) {
			failed |= output_file__finish(f, write_events(cmd, f, summary, targets));
			continue;
		}
		p = as_is ? recording__profile(cmd->rec) : profile_for(cmd, f->format, NULL);
		if (!p) {
			output_file__discard(f);
			failed = -1;
			continue;
		}
		error = output_write(f->format, p, &meta, o->text_top, f->out);
		if (p != recording__profile(cmd->rec))
			profile__free(p);
		failed |= output_file__finish(f, error);
	}
	return failed;
}

/* The events -e asked for, as the recording names them. */
static unsigned recording_events_of(const struct options *o)
{
	unsigned mask = 0;

	for (int e = 0; e < EVENT_NR; e++)
		if (options_records(o, (enum event_mode)e))
			mask |= RECORDING_EVENT(events[e].recording);
	return mask;
}

/*
 * Whether an output of the recording says when stacks were counted: every
 * format but collapsed stacks and the text report (which sum over the
 * whole recording), and --continuous's pprof, JFR and OTLP intervals.
 */
static bool outputs_need_times(const struct options *o)
{
	if (o->continuous)
		return true;
	if (!o->nr_outputs)
		return o->format != OUTPUT_COLLAPSED && o->format != OUTPUT_TEXT;
	for (size_t i = 0; i < o->nr_outputs; i++)
		if (o->output_formats[i] != OUTPUT_COLLAPSED && o->output_formats[i] != OUTPUT_TEXT)
			return true;
	return false;
}

/* The options, as the recording takes them. */
static struct recording_config recording_config_of(const struct command *cmd)
{
	const struct options *o = &cmd->opts;

	return (struct recording_config){
		.pids = o->pids,
		.nr_pids = o->nr_pids,
		.all = o->all,
		.events = recording_events_of(o),
		.alloc_interval = o->alloc_interval,
		.leaks = o->leaks,
		.wakers = o->wakers,
		.no_unmounted = o->no_unmounted,
		.frequency_hz = o->frequency_hz,
		.fixed_interval = o->fixed_interval,
		.duration_ns = o->duration_ns,
		.min_block_ns = o->min_block_ns,
		.max_block_ns = o->max_block_ns,
		.wait_interval_ns = o->wait_interval_ns,
		.state_mask = o->state_mask,
		.java = o->java == JAVA_OFF ? RECORDING_JAVA_OFF
			: o->java == JAVA_REQUIRED ? RECORDING_JAVA_REQUIRED : RECORDING_JAVA_AUTO,
		.unwind_fp = o->unwind == UNWIND_FP,
		/*
		 * Allocations are sampled by the agent: it is loaded whatever
		 * --java-stacks says. Alone, they need no walk; beside time, a
		 * JVM BPF walks takes the agent for its allocations alone.
		 */
		.java_stacks = o->java_stacks == JAVA_STACKS_AGENT || o->events == 1u << EVENT_ALLOC
				       ? RECORDING_JAVA_STACKS_AGENT
			       : o->java_stacks == JAVA_STACKS_BOTH ? RECORDING_JAVA_STACKS_BOTH
								     : RECORDING_JAVA_STACKS_BPF,
		.full = cmd->full,
		.no_times = !outputs_need_times(o),
		.threads = o->threads,
		.group_by_given = o->group_by_given,
		.group_by = o->group_by,
		.annotate = o->annotate,
		.lines = o->lines,
		.verbose = o->verbose,
	};
}

/*
 * --continuous: the recording hands each interval's profile to the fleet
 * side (user/fleet/), which writes and pushes one per service; there are
 * no -f outputs. Aggregated in full: every stack has its process root.
 */
static int run_continuous(struct command *cmd, struct recording_config *config)
{
	const struct options *o = &cmd->opts;
	struct fleet_config fc = {
		.event = options_records(o, EVENT_WALL) ? "wall" : "cpu",
		.frequency_hz = o->frequency_hz,
		.dir = o->dir,
		.keep_bytes = o->keep_bytes,
		.push_url = o->push_url,
		.push_api = o->push_otlp ? PUSH_API_OTLP : o->push_ingest ? PUSH_API_INGEST : PUSH_API_CONNECT,
		.spool_dir = o->spool_dir,
		.spool_bytes = o->spool_bytes,
		.labels = o->labels,
		.nr_labels = o->nr_labels,
		.verbose = o->verbose,
	};
	struct fleet *fleet;
	int status = 1;

	if (o->dir && mkdir(o->dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "jbpfprof: --dir: cannot create %s: %s\n", o->dir, strerror(errno));
		return 1;
	}
	fleet = fleet__new(&fc);
	if (!fleet)
		return 1;
	config->full = true;
	config->interval_ns = o->interval_ns;
	config->on_interval = fleet__interval;
	config->interval_ctx = fleet;
	cmd->rec = recording__new(config);
	if (cmd->rec) {
		raise_fd_limit();
		if (!recording__run(cmd->rec)) {
			recording__report(cmd->rec);
			status = 0;
		}
	}
	/* After the last interval was handed over: the pusher sends what it can, the spool keeps the rest. */
	fleet__free(fleet);
	recording__free(cmd->rec);
	options_free(&cmd->opts);
	return status;
}

int main(int argc, char **argv)
{
	static struct command cmd;
	struct recording_config config;
	char err[512], summary[2048];
	int status = 1;

	if (argc > 1 && !strcmp(argv[1], "convert"))
		return convert_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	switch (options_parse(argc, argv, &cmd.opts)) {
	case OPTIONS_DONE:
		return 0;
	case OPTIONS_USAGE:
		return 2;
	case OPTIONS_FAILED:
		return 1;
	case OPTIONS_RUN:
		break;
	}
	if (checks__environment(BTF_PATH, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return 1;
	}
	config = recording_config_of(&cmd);
	if (cmd.opts.continuous)
		return run_continuous(&cmd, &config);
	cmd.rec = recording__new(&config);
	if (!cmd.rec)
		return 1;
	raise_fd_limit();
	if (open_outputs(&cmd))
		goto out;
	/* Whether a pprof file is among the outputs decides how much is aggregated. */
	recording__set_full(cmd.rec, cmd.full);
	cmd.start_unix_ns = clock_realtime_ns();
	if (recording__run(cmd.rec))
		goto out;
	recording__summary(cmd.rec, summary, sizeof(summary));
	if (write_outputs(&cmd, summary))
		goto out;
	fprintf(stderr, "jbpfprof: %s in %.1f s\n", summary, recording__elapsed_s(cmd.rec));
	recording__report(cmd.rec);
	for (size_t i = 0; i < cmd.nr_outputs; i++)
		if (!cmd.outputs[i].to_stdout)
			fprintf(stderr, "jbpfprof: wrote %s to %s\n", output_writer(cmd.outputs[i].format)->noun,
				cmd.outputs[i].path);
	status = 0;
out:
	discard_outputs(&cmd);
	recording__free(cmd.rec);
	options_free(&cmd.opts);
	return status;
}
