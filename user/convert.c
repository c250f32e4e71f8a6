/*
 * convert: jbpfprof convert and jbpfprof diff (contract in convert.h).
 */
#include "convert.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/output.h"
#include "user/options.h"
#include "output/files.h"
#include "input/pprof_read.h"
#include "profile/timeline.h"
#include "profile/view.h"

struct convert_options {
	const char *command;        /* "convert" or "diff" */
	const char *inputs[2];
	size_t nr_inputs;
	const char *output_path;    /* NULL: see default_output */
	enum output_format format;
	bool format_given;
	unsigned state_mask;        /* 0: all */
	bool threads, annotate, lines, reverse, no_wakers, carrier_frames;
	bool group_by_given;        /* else as the recording's own views began stacks */
	enum view_process_root group_by;
	bool include_given, exclude_given;
	regex_t include, exclude;
	size_t top;
	const char *event;          /* --event: of a recording of several, the one read; NULL: its first */
	const char *from, *to;      /* --from, --to as given: read against the recording's start */
	const char *base_from, *base_to; /* diff: --base-from, --base-to, BEFORE's own range */
};

enum {
	OPT_STATE = 256,
	OPT_THREADS,
	OPT_ANNOTATE,
	OPT_LINES,
	OPT_CARRIER_FRAMES,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_REVERSE,
	OPT_TOP,
	OPT_GROUP_BY,
	OPT_EVENT,
	OPT_NO_WAKERS,
	OPT_FROM,
	OPT_TO,
	OPT_BASE_FROM,
	OPT_BASE_TO,
};

static const struct option long_options[] = {
	{ "format", required_argument, NULL, 'o' },
	{ "file", required_argument, NULL, 'f' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "carrier-frames", no_argument, NULL, OPT_CARRIER_FRAMES },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "no-wakers", no_argument, NULL, OPT_NO_WAKERS },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "base-from", required_argument, NULL, OPT_BASE_FROM },
	{ "base-to", required_argument, NULL, OPT_BASE_TO },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void print_help(const char *command)
{
	if (!strcmp(command, "diff"))
		printf("Usage: jbpfprof diff BEFORE.pb.gz AFTER.pb.gz [-f FILE] [view options]\n"
		       "\n"
		       "Draw AFTER's flame graph with each frame coloured by how its share of the\n"
		       "whole changed since BEFORE: red grew, blue shrank. Shares, not counts, are\n"
		       "compared, so recordings of different lengths compare. Both recordings are\n"
		       "seen through the same view options. BEFORE and AFTER may be one file, two\n"
		       "ranges of it compared: --base-from and --base-to cut BEFORE.\n"
		       "\n"
		       "  -f, --file FILE          where to write the page (default diff.html)\n"
		       "      --base-from TIME     BEFORE from TIME on, and --from/--to then cut\n"
		       "                           AFTER alone (the same forms as --from)\n"
		       "      --base-to TIME       BEFORE before TIME\n");
	else
		printf("Usage: jbpfprof convert IN.pb.gz [-o FORMAT] [-f FILE] [view options]\n"
		       "\n"
		       "Render a recording written with -o pprof (or any pprof profile) again, in\n"
		       "any format, seen through the view options.\n"
		       "\n"
		       "  -o, --format FORMAT      flamegraph, collapsed, text, pprof, jfr or otlp\n"
		       "                           (experimental); default: from FILE's extension,\n"
		       "                           else flamegraph\n"
		       "  -f, --file FILE          where to write; '-' for standard output; default:\n"
		       "                           standard output for collapsed and text, else IN's\n"
		       "                           name with the format's extension, here\n"
		       "      --top N              rows in each table of the text report (default %d)\n",
		       DEFAULT_TEXT_TOP);
	printf("\n"
	       "View options:\n"
	       "      --event NAME         of a recording of several events (-e cpu,alloc),\n"
	       "                           the one to read: cpu, wall, offcpu, alloc,\n"
	       "                           nativemem or leaks; default: its first, said\n"
	       "      --state LIST         keep only stacks in these states (running, runnable,\n"
	       "                           sleeping, blocked; comma-separated): a wall recording\n"
	       "                           with --state running is its CPU profile\n"
	       "      --threads            start each stack with its [<thread name> tid=<tid>] frame\n"
	       "      --group-by HOW       how stacks begin: process (a frame per process,\n"
	       "                           \"org.example.Main (java, pid 12)\"), service (one\n"
	       "                           per program, \"org.example.Main (java)\"),\n"
	       "                           executable (\"java\") or none; default: as the\n"
	       "                           recording's own output began them\n"
	       "      --annotate           mark Java frames _[j] compiled, _[i] inlined, _[0]\n"
	       "                           interpreted\n"
	       "      --lines              name each Java frame with its source line,\n"
	       "                           Class.method:LINE, where the recording kept them\n"
	       "      --carrier-frames     keep a virtual thread's carrier's frames under its\n"
	       "                           [virtual thread] frame\n"
	       "      --include REGEX      keep only stacks with a frame that matches REGEX\n"
	       "      --exclude REGEX      drop stacks with a frame that matches REGEX\n"
	       "      --reverse            frames leaf first: who calls the hottest functions\n"
	       "      --no-wakers          of a recording made with --wakers, each wait's own\n"
	       "                           stack, without the waker joined to it\n"
	       "      --from TIME          keep only what happened from TIME on: seconds since\n"
	       "                           the recording began (1.5), or a wall-clock time,\n"
	       "                           local (2025-06-01T12:00:05, or 12:00:05 on the\n"
	       "                           day the recording began) or UTC with a final Z\n"
	       "      --to TIME            and before TIME (the same forms)\n"
	       "  -h, --help               this help\n");
}

static int usage_error(const struct convert_options *o, const char *message)
{
	fprintf(stderr, "jbpfprof %s: %s\nTry 'jbpfprof %s --help' for more information.\n", o->command, message,
		o->command);
	return 2;
}

static void free_options(struct convert_options *o)
{
	if (o->include_given)
		regfree(&o->include);
	if (o->exclude_given)
		regfree(&o->exclude);
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, struct convert_options *o, size_t nr_inputs)
{
	char err[512];
	uint64_t value;
	int c;

	o->command = argv[0];
	o->format = OUTPUT_FLAMEGRAPH;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, nr_inputs == 1 ? ":o:f:h" : ":f:h", long_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (options__parse_format(optarg, &o->format)) {
				snprintf(err, sizeof(err), "-o: unknown format '%s' (flamegraph, collapsed, text, pprof, jfr or otlp)",
					 optarg);
				return usage_error(o, err);
			}
			o->format_given = true;
			break;
		case 'f':
			if (!optarg[0])
				return usage_error(o, "-f: the file name is empty");
			o->output_path = optarg;
			break;
		case OPT_STATE:
			if (options__parse_states(optarg, &o->state_mask, err, sizeof(err)))
				return usage_error(o, err);
			break;
		case OPT_THREADS:
			o->threads = true;
			break;
		case OPT_GROUP_BY:
			if (options__parse_group_by(optarg, &o->group_by, err, sizeof(err)))
				return usage_error(o, err);
			o->group_by_given = true;
			break;
		case OPT_ANNOTATE:
			o->annotate = true;
			break;
		case OPT_LINES:
			o->lines = true;
			break;
		case OPT_CARRIER_FRAMES:
			o->carrier_frames = true;
			break;
		case OPT_REVERSE:
			o->reverse = true;
			break;
		case OPT_NO_WAKERS:
			o->no_wakers = true;
			break;
		case OPT_INCLUDE:
		case OPT_EXCLUDE:
			if (c == OPT_INCLUDE ? o->include_given : o->exclude_given)
				return usage_error(o, "--include and --exclude may each be given once: join patterns with |");
			if (options__parse_pattern(c == OPT_INCLUDE ? "--include" : "--exclude", optarg,
					  c == OPT_INCLUDE ? &o->include : &o->exclude, err, sizeof(err)))
				return usage_error(o, err);
			*(c == OPT_INCLUDE ? &o->include_given : &o->exclude_given) = true;
			break;
		case OPT_EVENT:
			o->event = optarg;
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_TO:
			o->to = optarg;
			break;
		case OPT_BASE_FROM:
		case OPT_BASE_TO:
			if (nr_inputs != 2) {
				snprintf(err, sizeof(err), "unknown option '%s'", argv[optind - 1]);
				return usage_error(o, err);
			}
			*(c == OPT_BASE_FROM ? &o->base_from : &o->base_to) = optarg;
			break;
		case OPT_TOP:
			if (options__parse_u64("--top", optarg, 1, 100000, &value, err, sizeof(err)))
				return usage_error(o, err);
			o->top = (size_t)value;
			break;
		case 'h':
			print_help(o->command);
			return 0;
		case ':':
			snprintf(err, sizeof(err), "option %s needs a value", argv[optind - 1]);
			return usage_error(o, err);
		default:
			snprintf(err, sizeof(err), "unknown option '%s'", argv[optind - 1]);
			return usage_error(o, err);
		}
	}
	for (; optind < argc; optind++) {
		if (o->nr_inputs == nr_inputs) {
			snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
			return usage_error(o, err);
		}
		o->inputs[o->nr_inputs++] = argv[optind];
	}
	if (o->nr_inputs < nr_inputs)
		return usage_error(o, nr_inputs == 1 ? "name the recording to convert" : "name two recordings: BEFORE AFTER");
	if (o->output_path && !o->format_given && nr_inputs == 1) {
		int format = strcmp(o->output_path, "-") ? options__format_from_path(o->output_path) : OUTPUT_COLLAPSED;

		if (format < 0) {
			snprintf(err, sizeof(err), "-f: cannot tell the format from '%s'; add -o flamegraph, collapsed, "
				 "text, pprof, jfr or otlp", o->output_path);
			return usage_error(o, err);
		}
		o->format = (enum output_format)format;
	}
	if (o->reverse && output__keeps_everything(o->format))
		return usage_error(o, "--reverse makes no sense in a pprof, JFR or OTLP file, whose stacks have a direction");
	return -1;
}

/* IN's name without directory and recording extension, with the format's extension. */
static void default_output(const char *input, enum output_format format, char *buf, size_t size)
{
	static const char *const endings[] = { ".pb.gz", ".pprof", ".gz", ".pb" };
	const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
	size_t len = strlen(base);

	for (size_t i = 0; i < sizeof(endings) / sizeof(endings[0]); i++) {
		size_t e = strlen(endings[i]);

		if (len > e && !strcmp(base + len - e, endings[i])) {
			len -= e;
			break;
		}
	}
	snprintf(buf, size, "%.*s%s.%s", (int)(len < 1000 ? len : 1000), base,
		 format == OUTPUT_PPROF ? ".converted" : "", output__writer(format)->extension);
}

static enum view_process_root roots_of(const struct convert_options *o, const struct pprof_recording *rec)
{
	int root = rec->process_roots ? view__root_of_word(rec->process_roots) : -1;

	if (o->group_by_given)
		return o->group_by;
	return root < 0 ? VIEW_ROOT_NONE : (enum view_process_root)root;
}

/*
 * A --from or --to as ns since the recording's start: seconds ("1.5"), or
 * a wall-clock time, local unless it ends in Z: a date and time
 * ("2025-06-01T12:00:05.250", a space for the T too), or a time alone, on
 * the day the recording began. 0, or -1 with the reason in err.
 */
static int parse_time(const char *option, const char *text, int64_t start_unix_ns, int64_t *ns, char *err,
		      size_t size)
{
	char *end;
	double seconds;
	struct tm tm = { 0 };
	time_t start_s = (time_t)(start_unix_ns / 1000000000), when;
	bool utc;
	const char *rest;

	if (!strchr(text, ':')) {
		seconds = strtod(text, &end);
		if (end == text || *end || !(seconds >= 0) || seconds > 1e9) {
			snprintf(err, size, "%s: '%s' is not seconds since the start (0 or more) nor a time of day", option,
				 text);
			return -1;
		}
		*ns = (int64_t)(seconds * 1e9);
		return 0;
	}
	if (!start_unix_ns) {
		snprintf(err, size, "%s: the recording does not say when it began: give seconds since its start", option);
		return -1;
	}
	utc = text[strlen(text) - 1] == 'Z';
	/* The recording's day, as the time is read (local or UTC), for a time alone. */
	if (!(utc ? gmtime_r(&start_s, &tm) : localtime_r(&start_s, &tm)))
		return -1;
	rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		rest = strptime(text, "%Y-%m-%d %H:%M:%S", &tm);
	if (!rest)
		rest = strptime(text, "%H:%M:%S", &tm);
	seconds = 0;
	if (rest && *rest == '.') {
		seconds = strtod(rest, &end);
		rest = end;
	}
	if (!rest || (*rest && strcmp(rest, "Z")) || (utc && *rest != 'Z')) {
		snprintf(err, size, "%s: '%s' is not a time: seconds since the start (1.5), or 2025-06-01T12:00:05, "
			 "or 12:00:05, a Z at the end for UTC", option, text);
		return -1;
	}
	tm.tm_isdst = -1;
	when = utc ? timegm(&tm) : mktime(&tm);
	*ns = ((int64_t)when * 1000000000 + (int64_t)(seconds * 1e9)) - start_unix_ns;
	return 0;
}

/*
 * A range of a recording as its options give it: --from and --to, or
 * diff's --base-from and --base-to for BEFORE.
 */
struct range {
	const char *from, *to;
	const char *from_option, *to_option;
};

static struct range range_of(const struct convert_options *o, bool base)
{
	if (base && (o->base_from || o->base_to))
		return (struct range){ o->base_from, o->base_to, "--base-from", "--base-to" };
	return (struct range){ o->from, o->to, "--from", "--to" };
}

/* The ticks [from, to) the range asks for, into view. 0, or 1 after saying why not. */
static int time_range(const struct convert_options *o, const struct range *r, const struct pprof_recording *rec,
		      const char *path, struct view_config *view)
{
	int64_t from = 0, to = INT64_MAX;
	char err[512];

	if (!r->from && !r->to)
		return 0;
	if ((r->from && parse_time(r->from_option, r->from, rec->start_unix_ns, &from, err, sizeof(err))) ||
	    (r->to && parse_time(r->to_option, r->to, rec->start_unix_ns, &to, err, sizeof(err)))) {
		fprintf(stderr, "jbpfprof %s: %s\n", o->command, err);
		return 1;
	}
	if (!profile__timeline(rec->profile)) {
		fprintf(stderr, "jbpfprof %s: %s: %s and %s need the samples' times, which this recording does not "
			"keep (made before jbpfprof kept them, or by another tool)\n", o->command, path, r->from_option,
			r->to_option);
		return 1;
	}
	if (to <= from || to <= 0) {
		fprintf(stderr, "jbpfprof %s: %s: %s %s %s %s is no time of the recording: the range is empty or "
			"ends before it began\n", o->command, path, r->from_option, r->from ? r->from : "0", r->to_option,
			r->to ? r->to : "(end)");
		return 1;
	}
	view->time_range = true;
	view->from_tick = from > 0 ? (uint64_t)from / TIMELINE_TICK_NS : 0;
	/* A range ending within a tick keeps that tick. */
	view->to_tick = to == INT64_MAX ? (uint64_t)UINT32_MAX + 1 : ((uint64_t)to + TIMELINE_TICK_NS - 1) / TIMELINE_TICK_NS;
	return 0;
}

static struct view_config view_of(const struct convert_options *o, const struct pprof_recording *rec)
{
	bool whole = output__keeps_everything(o->format);

	return (struct view_config){
		.process_root = whole ? VIEW_ROOT_PROCESS : roots_of(o, rec),
		.threads = whole || o->threads,
		.annotate = whole || o->annotate,
		.lines = whole ? VIEW_LINES_KEEP : o->lines ? VIEW_LINES_SHOW : VIEW_LINES_DROP,
		.carrier_frames = whole || o->carrier_frames,
		.virtual_thread_ids = whole || o->threads,
		.state_mask = o->state_mask,
		.include = o->include_given ? &o->include : NULL,
		.exclude = o->exclude_given ? &o->exclude : NULL,
		.reverse = o->reverse,
		.no_wakers = o->no_wakers,
	};
}

/* Reads one recording, or says why not. */
static int read_recording(const struct convert_options *o, const char *path, struct pprof_recording *rec)
{
	char err[512];

	if (pprof_read__file_event(path, o->event, rec, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof %s: %s: %s\n", o->command, path, err);
		return -1;
	}
	if (rec->events && !o->event)
		fprintf(stderr, "jbpfprof %s: %s: a recording of %s: reading %s (--event picks another)\n", o->command,
			path, rec->events, rec->event);
	if (o->state_mask && !rec->has_states) {
		fprintf(stderr, "jbpfprof %s: %s: --state needs a wall-clock or off-CPU recording; this one has no "
			"states\n", o->command, path);
		pprof_recording__free(rec);
		return -1;
	}
	return 0;
}

/* The recording seen through the view, in a new profile; NULL (said) on failure. */
static struct profile *viewed(const struct convert_options *o, const struct range *r,
			      const struct pprof_recording *rec, const char *path, struct view_stats *stats)
{
	struct view_config view = view_of(o, rec);
	struct profile *p;
	int error;

	if (time_range(o, r, rec, path, &view))
		return NULL;
	p = profile__new(NULL);
	error = p ? view__apply(rec->profile, &view, p, stats) : -ENOMEM;

	if (error) {
		fprintf(stderr, "jbpfprof %s: %s: %s\n", o->command, path,
			error == -ENOSPC ? "too many distinct stacks" : strerror(-error));
		profile__free(p);
		return NULL;
	}
	return p;
}

/* The summary of the recording and, when filters dropped anything, of that too. */
static void describe(const struct range *r, const struct pprof_recording *rec, const struct view_stats *stats,
		     char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "%s", rec->summary ? rec->summary : "");

	const char *unit = rec->time_weights ? "microseconds" : rec->bytes ? "bytes" : "samples";

	if (stats->stacks_dropped && used < size)
		used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu64 " %s left out by the view", used ? "; " : "",
					 stats->count_dropped, unit);
	if ((r->from || r->to) && used < size)
		used += (size_t)snprintf(buf + used, size - used, "%sfrom %s to %s only: %" PRIu64 " %s outside",
					 used ? "; " : "", r->from ? r->from : "the start", r->to ? r->to : "the end",
					 stats->count_outside, unit);
	if (stats->untimed && used < size)
		snprintf(buf + used, size - used, "; %" PRIu64 " stacks with no time left out", stats->untimed);
}

static struct output_meta meta_of(const struct convert_options *o, const struct pprof_recording *rec,
				  const char *title, const char *summary)
{
	return (struct output_meta){
		.title = title,
		.unit = rec->time_weights ? "microseconds" : rec->bytes ? "bytes" : "samples",
		.duration_s = rec->duration_s,
		.frequency_hz = rec->frequency_hz,
		.summary = summary,
		.event = rec->event,
		.start_unix_ns = rec->start_unix_ns,
		.process_roots = o->group_by_given ? view__root_word(o->group_by) : rec->process_roots,
	};
}

int convert__main(int argc, char **argv)
{
	struct convert_options o = { 0 };
	struct pprof_recording rec;
	struct output_file file;
	struct view_stats stats;
	struct output_meta meta;
	struct profile *p = NULL;
	struct range range;
	char path[1100], summary[2048], title[1024];
	int status = parse(argc, argv, &o, 1), error;

	if (status >= 0) {
		free_options(&o);
		return status;
	}
	status = 1;
	if (read_recording(&o, o.inputs[0], &rec))
		goto out;
	range = range_of(&o, false);
	p = viewed(&o, &range, &rec, o.inputs[0], &stats);
	if (!p)
		goto out_rec;
	if (!o.output_path)
		default_output(o.inputs[0], o.format, path, sizeof(path));
	else
		snprintf(path, sizeof(path), "%s", o.output_path);
	if (!o.output_path && (o.format == OUTPUT_COLLAPSED || o.format == OUTPUT_TEXT))
		snprintf(path, sizeof(path), "-");
	if (output_file__open(&file, path, o.format))
		goto out_rec;
	snprintf(title, sizeof(title), "%s", rec.title ? rec.title : "Profile");
	describe(&range, &rec, &stats, summary, sizeof(summary));
	meta = meta_of(&o, &rec, title, summary);
	error = output__write(o.format, p, &meta, o.top, file.out);
	if (output_file__finish(&file, error))
		goto out_rec;
	if (!file.to_stdout)
		fprintf(stderr, "jbpfprof: wrote %s to %s\n", output__writer(o.format)->noun, file.path);
	status = 0;
out_rec:
	pprof_recording__free(&rec);
out:
	profile__free(p);
	free_options(&o);
	return status;
}

/* "10.0 s", or a range of it: "from 1 to 4 of 10.0 s". */
static void range_words(const struct range *r, double duration_s, char *buf, size_t size)
{
	if (r->from || r->to)
		snprintf(buf, size, "from %s to %s of %.1f s", r->from ? r->from : "the start", r->to ? r->to : "the end",
			 duration_s);
	else
		snprintf(buf, size, "%.1f s", duration_s);
}

int convert__diff_main(int argc, char **argv)
{
	struct convert_options o = { 0 };
	struct pprof_recording before = { 0 }, after = { 0 };
	struct profile *pb = NULL, *pa = NULL;
	struct view_stats stats_before, stats_after;
	struct output_file file;
	struct output_meta meta;
	struct range range_before, range_after;
	char title[1024], summary[2048], when_before[256], when_after[256];
	int status = parse(argc, argv, &o, 2), error;

	if (status >= 0) {
		free_options(&o);
		return status;
	}
	status = 1;
	if (o.output_path && strcmp(o.output_path, "-") && options__format_from_path(o.output_path) >= 0 &&
	    options__format_from_path(o.output_path) != OUTPUT_FLAMEGRAPH) {
		status = usage_error(&o, "-f: the differential flame graph is an HTML page: name it .html");
		goto out;
	}
	if (read_recording(&o, o.inputs[0], &before))
		goto out;
	if (read_recording(&o, o.inputs[1], &after))
		goto out;
	if (before.time_weights != after.time_weights) {
		fprintf(stderr, "jbpfprof diff: %s counts %s and %s %s: compare recordings of one kind\n", o.inputs[0],
			before.time_weights ? "time" : "samples", o.inputs[1], after.time_weights ? "time" : "samples");
		goto out;
	}
	range_before = range_of(&o, true);
	range_after = range_of(&o, false);
	pb = viewed(&o, &range_before, &before, o.inputs[0], &stats_before);
	pa = pb ? viewed(&o, &range_after, &after, o.inputs[1], &stats_after) : NULL;
	if (!pa)
		goto out;
	if (output_file__open(&file, o.output_path ? o.output_path : "diff.html", OUTPUT_FLAMEGRAPH))
		goto out;
	snprintf(title, sizeof(title), "Difference: %s against %s", o.inputs[1], o.inputs[0]);
	range_words(&range_before, before.duration_s, when_before, sizeof(when_before));
	range_words(&range_after, after.duration_s, when_after, sizeof(when_after));
	snprintf(summary, sizeof(summary), "before: %" PRIu64 " %s, %s; after: %" PRIu64 " %s, %s",
		 profile__total(pb), before.time_weights ? "microseconds" : "samples", when_before,
		 profile__total(pa), after.time_weights ? "microseconds" : "samples", when_after);
	meta = meta_of(&o, &after, title, summary);
	error = output__flamegraph_diff_write(pb, pa, &meta, file.out);
	if (output_file__finish(&file, error))
		goto out;
	if (!file.to_stdout)
		fprintf(stderr, "jbpfprof: wrote differential flame graph to %s\n", file.path);
	status = 0;
out:
	profile__free(pb);
	profile__free(pa);
	pprof_recording__free(&before);
	pprof_recording__free(&after);
	free_options(&o);
	return status;
}
