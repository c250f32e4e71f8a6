/*
 * options: parsing and checking the command line (contract in options.h).
 *
 * Every mistake ends in one line on stderr, "jbpfprof: <what is wrong>",
 * followed by a hint to --help, and OPTIONS_USAGE (exit status 2).
 * Conflicts between options are checked once, after all are read.
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <linux/types.h>
#include <string.h>

#include "bpf/jbpfprof.h"
#include "common/clock.h"
#include "common/version.h"
#include "user/java/agent_path.h"

_Static_assert(OPTIONS_MAX_PIDS == JBPF_MAX_TARGETS, "every -p fits in the BPF filter");

/* A recording longer than a year is a typo, not a plan. */
#define MAX_DURATION_NS (366ull * 24 * 3600 * NS_PER_SEC)

enum {
	OPT_THREADS = 0x100,
	OPT_FIXED_INTERVAL,
	OPT_TOP,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_JAVA,
	OPT_NO_JAVA,
	OPT_ANNOTATE,
	OPT_LINES,
	OPT_CARRIER_FRAMES,
	OPT_NO_UNMOUNTED,
	OPT_STATE,
	OPT_MIN_BLOCK,
	OPT_MAX_BLOCK,
	OPT_WAIT_INTERVAL,
	OPT_UNWIND,
	OPT_JAVA_STACKS,
	OPT_AGENT_PATH,
	OPT_CONTINUOUS,
	OPT_INTERVAL,
	OPT_LABEL,
	OPT_DIR,
	OPT_KEEP,
	OPT_PUSH,
	OPT_SPOOL,
	OPT_SPOOL_SIZE,
	OPT_ALLOC_INTERVAL,
	OPT_LEAKS,
	OPT_WAKERS,
	OPT_GROUP_BY,
	OPT_PUSH_API,
	OPT_PUSH_OTLP,
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "all", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "format", required_argument, NULL, 'o' },
	{ "file", required_argument, NULL, 'f' },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "fixed-interval", no_argument, NULL, OPT_FIXED_INTERVAL },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "java", no_argument, NULL, OPT_JAVA },
	{ "no-java", no_argument, NULL, OPT_NO_JAVA },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "carrier-frames", no_argument, NULL, OPT_CARRIER_FRAMES },
	{ "no-unmounted", no_argument, NULL, OPT_NO_UNMOUNTED },
	{ "event", required_argument, NULL, 'e' },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
	{ "wait-interval", required_argument, NULL, OPT_WAIT_INTERVAL },
	{ "alloc-interval", required_argument, NULL, OPT_ALLOC_INTERVAL },
	{ "leaks", no_argument, NULL, OPT_LEAKS },
	{ "wakers", no_argument, NULL, OPT_WAKERS },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "java-stacks", required_argument, NULL, OPT_JAVA_STACKS },
	{ "continuous", no_argument, NULL, OPT_CONTINUOUS },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "push", required_argument, NULL, OPT_PUSH },
	{ "push-api", required_argument, NULL, OPT_PUSH_API },
	{ "push-otlp", required_argument, NULL, OPT_PUSH_OTLP },
	{ "spool", required_argument, NULL, OPT_SPOOL },
	{ "spool-size", required_argument, NULL, OPT_SPOOL_SIZE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "agent-path", no_argument, NULL, OPT_AGENT_PATH },
	{ NULL, 0, NULL, 0 },
};

int options__parse_group_by(const char *arg, enum view_process_root *out, char *err, size_t err_size)
{
	int root = view__root_of_word(arg);

	/* The words older pprof files use are not options. */
	if (root < 0 || strcmp(view__root_word((enum view_process_root)root), arg)) {
		snprintf(err, err_size, "--group-by: unknown grouping '%s' (process, service, executable or none)", arg);
		return -1;
	}
	*out = (enum view_process_root)root;
	return 0;
}

int options__parse_u64(const char *option, const char *arg, uint64_t min, uint64_t max, uint64_t *out,
	      char *err, size_t err_size)
{
	unsigned long long value;
	char *end;

	/* strtoull accepts leading blanks and a minus sign; we want neither. */
	if (!isdigit((unsigned char)arg[0])) {
		snprintf(err, err_size, "%s: '%s' is not a whole number", option, arg);
		return -1;
	}
	errno = 0;
	value = strtoull(arg, &end, 10);
	if (*end) {
		snprintf(err, err_size, "%s: '%s' is not a whole number", option, arg);
		return -1;
	}
	if (errno == ERANGE || value < min || value > max) {
		snprintf(err, err_size, "%s: %s is out of range (%llu to %llu)", option, arg,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = value;
	return 0;
}

static const struct {
	const char *suffix;
	uint64_t ns;
} duration_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", NS_PER_SEC },
	{ "m", 60 * NS_PER_SEC }, { "h", 3600 * NS_PER_SEC },
};

int options__parse_duration(const char *option, const char *arg, uint64_t default_unit_ns, uint64_t min_ns,
		   uint64_t max_ns, uint64_t *out_ns, char *err, size_t err_size)
{
	uint64_t unit = default_unit_ns;
	double number, ns;
	char *end;

	if (!isdigit((unsigned char)arg[0]) && arg[0] != '.') {
		snprintf(err, err_size, "%s: '%s' is not a duration (try 30, 1.5s or 200ms)", option, arg);
		return -1;
	}
	errno = 0;
	number = strtod(arg, &end);
	if (*end) {
		size_t i;

		for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
			if (!strcmp(end, duration_units[i].suffix))
				break;
		if (i == sizeof(duration_units) / sizeof(duration_units[0]) || end == arg) {
			snprintf(err, err_size, "%s: '%s' is not a duration (try 30, 1.5s or 200ms)", option,
				 arg);
			return -1;
		}
		unit = duration_units[i].ns;
	}
	ns = number * (double)unit;
	if (errno == ERANGE || !isfinite(ns) || ns < (double)min_ns || ns > (double)max_ns) {
		snprintf(err, err_size, "%s: %s is out of range", option, arg);
		return -1;
	}
	*out_ns = (uint64_t)llround(ns);
	return 0;
}

int options__format_from_path(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcmp(dot, ".html") || !strcmp(dot, ".htm"))
		return OUTPUT_FLAMEGRAPH;
	if (!strcmp(dot, ".collapsed") || !strcmp(dot, ".txt") || !strcmp(dot, ".folded"))
		return OUTPUT_COLLAPSED;
	if (!strcmp(dot, ".pprof") || (!strcmp(dot, ".gz") && dot - path >= 3 && !strncmp(dot - 3, ".pb", 3)))
		return OUTPUT_PPROF;
	if (!strcmp(dot, ".otlp"))
		return OUTPUT_OTLP;
	if (!strcmp(dot, ".jfr"))
		return OUTPUT_JFR;
	return -1;
}

int options__parse_pattern(const char *option, const char *arg, regex_t *re, char *err, size_t err_size)
{
	char reason[128];
	int ret = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);

	if (!ret)
		return 0;
	regerror(ret, re, reason, sizeof(reason));
	regfree(re);
	snprintf(err, err_size, "%s: '%.100s' is not a regular expression: %s", option, arg, reason);
	return -1;
}

void options__free(struct options *opts)
{
	if (opts->include_given)
		regfree(&opts->include);
	if (opts->exclude_given)
		regfree(&opts->exclude);
	opts->include_given = opts->exclude_given = false;
}

int options__parse_format(const char *arg, enum output_format *format)
{
	if (!strcmp(arg, "flamegraph") || !strcmp(arg, "html"))
		*format = OUTPUT_FLAMEGRAPH;
	else if (!strcmp(arg, "collapsed"))
		*format = OUTPUT_COLLAPSED;
	else if (!strcmp(arg, "text"))
		*format = OUTPUT_TEXT;
	else if (!strcmp(arg, "pprof"))
		*format = OUTPUT_PPROF;
	else if (!strcmp(arg, "otlp"))
		*format = OUTPUT_OTLP;
	else if (!strcmp(arg, "jfr"))
		*format = OUTPUT_JFR;
	else
		return -1;
	return 0;
}

/* Splits "1,2,3" into opts->pids; empty items and duplicates are mistakes. */
static int parse_pid_list(const char *arg, struct options *opts, char *err, size_t err_size)
{
	const char *p = arg;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[32];
		uint64_t pid;

		if (len == 0 || len >= sizeof(item)) {
			snprintf(err, err_size, "-p: '%s' is not a list of process ids", arg);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		if (options__parse_u64("-p", item, 1, INT32_MAX, &pid, err, err_size))
			return -1;
		for (size_t i = 0; i < opts->nr_pids; i++) {
			if (opts->pids[i] == pid) {
				snprintf(err, err_size, "-p: process %s is named twice", item);
				return -1;
			}
		}
		if (opts->nr_pids == OPTIONS_MAX_PIDS) {
			snprintf(err, err_size, "-p: at most %d processes can be named", OPTIONS_MAX_PIDS);
			return -1;
		}
		opts->pids[opts->nr_pids++] = (uint32_t)pid;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static const char *const state_names[JBPF_STATE_NR] = {
	[JBPF_STATE_RUNNING] = "running",
	[JBPF_STATE_RUNNABLE] = "runnable",
	[JBPF_STATE_SLEEPING] = "sleeping",
	[JBPF_STATE_BLOCKED] = "blocked",
};

/*
 * A comma-separated list of words from names[0..nr) into *mask, 1 << index
 * added for each; a word not among them is named in err, with the list
 * (e.g. "running, runnable, sleeping or blocked") as what would do.
 */
static int parse_word_list(const char *option, const char *arg, const char *const *names, unsigned nr,
			   const char *valid, const char *noun, unsigned *mask, char *err, size_t err_size)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned i;

		for (i = 0; i < nr; i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				break;
		if (i == nr) {
			snprintf(err, err_size, "%s: '%.*s' is not %s (%s)", option, (int)(len < 64 ? len : 64), p, noun,
				 valid);
			return -1;
		}
		*mask |= 1u << i;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int options__parse_states(const char *arg, unsigned *mask, char *err, size_t err_size)
{
	*mask = 0;
	return parse_word_list("--state", arg, state_names, JBPF_STATE_NR, "running, runnable, sleeping or blocked",
			       "a state", mask, err, err_size);
}

static const char *const event_names[EVENT_NR] = {
	[EVENT_CPU] = "cpu",
	[EVENT_WALL] = "wall",
	[EVENT_OFFCPU] = "offcpu",
	[EVENT_ALLOC] = "alloc",
	[EVENT_NATIVEMEM] = "nativemem",
	[EVENT_LOCK] = "lock",
};

int options__parse_events(const char *arg, unsigned *events, char *err, size_t err_size)
{
	return parse_word_list("-e", arg, event_names, EVENT_NR, "cpu, wall, offcpu, alloc, nativemem or lock",
			       "an event", events, err, err_size);
}

static enum options_result usage_error(const char *message)
{
	fprintf(stderr, "jbpfprof: %s\nTry 'jbpfprof --help' for more information.\n", message);
	return OPTIONS_USAGE;
}

/*
 * Each -f file's format: what -o says for a lone file or for one whose name
 * implies nothing, else what its name implies; standard output is
 * collapsed unless -o says otherwise.
 */
static enum options_result resolve_output_formats(struct options *opts, bool format_given)
{
	char err[512];
	size_t to_stdout = 0;

	for (size_t i = 0; i < opts->nr_outputs; i++) {
		const char *path = opts->output_paths[i];
		int format = strcmp(path, "-") ? options__format_from_path(path) : OUTPUT_COLLAPSED;

		to_stdout += !strcmp(path, "-");
		if (format_given && (opts->nr_outputs == 1 || format < 0 || !strcmp(path, "-")))
			format = (int)opts->format;
		if (format < 0) {
			snprintf(err, sizeof(err), "-f: cannot tell the format from '%s'; add -o flamegraph, "
				 "collapsed, text, pprof, jfr or otlp", path);
			return usage_error(err);
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(opts->output_paths[j], path)) {
				snprintf(err, sizeof(err), "-f: '%s' is named twice", path);
				return usage_error(err);
			}
		opts->output_formats[i] = (enum output_format)format;
	}
	if (to_stdout > 1)
		return usage_error("-f: standard output ('-') can take one output only");
	return OPTIONS_RUN;
}

/* --agent-path: the installed agent, or why there is none. */
static enum options_result print_agent_path(void)
{
	char path[4096];

	if (agent_path__installed(path, sizeof(path))) {
		fprintf(stderr, "jbpfprof: no agent installed at %s: 'make install' puts it there\n", path);
		return OPTIONS_FAILED;
	}
	printf("%s\n", path);
	return OPTIONS_DONE;
}

int options__parse_size(const char *option, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
	       size_t err_size)
{
	char digits[32];
	size_t n = strlen(arg);
	unsigned shift = 0;
	uint64_t value;

	if (n && strchr("KkMmGg", arg[n - 1])) {
		shift = strchr("Kk", arg[n - 1]) ? 10 : strchr("Mm", arg[n - 1]) ? 20 : 30;
		n--;
	}
	if (!n || n >= sizeof(digits)) {
		snprintf(err, err_size, "%s: '%s' is not a size (a number, then K, M or G)", option, arg);
		return -1;
	}
	memcpy(digits, arg, n);
	digits[n] = '\0';
	if (options__parse_u64(option, digits, 0, UINT64_MAX >> shift, &value, err, err_size))
		return -1;
	value <<= shift;
	if (value < min || value > max) {
		snprintf(err, err_size, "%s: %s is out of range (%llu to %llu bytes)", option, arg,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = value;
	return 0;
}

/* The checks --continuous and its options need, after parsing. */
static enum options_result check_continuous(struct options *opts, bool frequency_given, bool fleet_given)
{
	if (!opts->continuous) {
		if (fleet_given)
			return usage_error("--interval, --label, --dir, --keep, --push, --push-otlp and --spool need "
					   "--continuous");
		return OPTIONS_RUN;
	}
	if (!opts->dir && !opts->push_url)
		return usage_error("--continuous: say where profiles go: --dir DIR and/or --push URL (or --push-otlp URL)");
	if (opts->keep_bytes && !opts->dir)
		return usage_error("--keep bounds --dir: give --dir");
	if (opts->duration_ns)
		return usage_error("--continuous records until stopped: drop -d");
	if (opts->nr_outputs)
		return usage_error("--continuous writes to --dir or --push, not -f");
	if (opts->events != 1u << EVENT_CPU && opts->events != 1u << EVENT_WALL)
		return usage_error("--continuous takes -e cpu or -e wall");
	if (!frequency_given)
		opts->frequency_hz = CONTINUOUS_FREQUENCY_HZ;
	return OPTIONS_RUN;
}

/*
 * Several events in one recording: at most one that weighs time (-e wall
 * already holds the CPU time, as its [running] state), and not both heaps
 * of allocations (their pprof sample types would share Go's names).
 */
static enum options_result check_events(const struct options *opts)
{
	unsigned of_time = opts->events & EVENTS_OF_TIME;

	if (of_time & (of_time - 1))
		return usage_error(options__records(opts, EVENT_WALL)
					   ? "-e: give one of cpu, wall, offcpu and lock (wall already holds the CPU time, as "
					     "its [running] state)"
					   : "-e: give one of cpu, wall, offcpu and lock (offcpu is the part of wall off CPU, "
					     "lock a part of offcpu)");
	if (options__records(opts, EVENT_ALLOC) && options__records(opts, EVENT_NATIVEMEM))
		return usage_error("-e: alloc and nativemem are recorded apart, one recording each");
	return OPTIONS_RUN;
}

/*
 * The formats that hold several events, each apart: pprof (a sample type
 * per event), the text report (a section per event) and the flame graph
 * (one page, an event at a time). A collapsed, JFR or OTLP file holds one.
 */
static enum options_result check_formats_of_events(const struct options *opts)
{
	/* No -f: the one file is of opts->format. */
	size_t nr = opts->nr_outputs ? opts->nr_outputs : 1;
	char err[256];

	if (!options__several_events(opts))
		return OPTIONS_RUN;
	for (size_t i = 0; i < nr; i++) {
		enum output_format format = opts->nr_outputs ? opts->output_formats[i] : opts->format;

		if (format == OUTPUT_COLLAPSED || format == OUTPUT_JFR || format == OUTPUT_OTLP) {
			snprintf(err, sizeof(err),
				 "-o %s holds one event: record to pprof and pick one later (jbpfprof convert "
				 "--event), or give one event",
				 output__writer(format)->name);
			return usage_error(err);
		}
	}
	return OPTIONS_RUN;
}

enum options_result options__parse_args(int argc, char **argv, struct options *opts)
{
	bool frequency_given = false, fleet_given = false;
	bool format_given = false, state_given = false, block_given = false, alloc_given = false, event_given = false;
	bool interval_given = false;
	bool jfr;
	char err[256];
	uint64_t value;
	int c;

	*opts = (struct options){
		.frequency_hz = DEFAULT_FREQUENCY_HZ,
		.events = 1u << EVENT_CPU,
		.wait_interval_ns = DEFAULT_WAIT_INTERVAL_NS,
		.alloc_interval = DEFAULT_ALLOC_INTERVAL,
		.format = OUTPUT_FLAMEGRAPH,
		.text_top = DEFAULT_TEXT_TOP,
		.state_mask = (1u << JBPF_STATE_NR) - 1,
		.interval_ns = DEFAULT_INTERVAL_NS,
		.spool_dir = DEFAULT_SPOOL_DIR,
		.spool_bytes = DEFAULT_SPOOL_BYTES,
	};
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:ae:d:F:o:f:vhV", long_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid_list(optarg, opts, err, sizeof(err)))
				return usage_error(err);
			break;
		case 'a':
			opts->all = true;
			break;
		case 'd':
			if (options__parse_duration("-d", optarg, NS_PER_SEC, 1000000, MAX_DURATION_NS,
					   &opts->duration_ns, err, sizeof(err)))
				return usage_error(err);
			break;
		case 'F':
			if (options__parse_u64("-F", optarg, 1, MAX_FREQUENCY_HZ, &value, err, sizeof(err)))
				return usage_error(err);
			opts->frequency_hz = (unsigned)value;
			frequency_given = true;
			break;
		case OPT_CONTINUOUS:
			opts->continuous = true;
			break;
		case OPT_INTERVAL:
			if (options__parse_duration("--interval", optarg, NS_PER_SEC, 1000000000ull, 24 * 3600 * NS_PER_SEC,
					   &opts->interval_ns, err, sizeof(err)))
				return usage_error(err);
			fleet_given = true;
			break;
		case OPT_LABEL:
			if (opts->nr_labels == FLEET_MAX_LABELS) {
				snprintf(err, sizeof(err), "--label: at most %d", FLEET_MAX_LABELS);
				return usage_error(err);
			}
			if (labels__parse(optarg, &opts->labels[opts->nr_labels], err, sizeof(err)))
				return usage_error(err);
			for (size_t i = 0; i < opts->nr_labels; i++)
				if (!strcmp(opts->labels[i].key, opts->labels[opts->nr_labels].key)) {
					snprintf(err, sizeof(err), "--label %s given twice", opts->labels[i].key);
					return usage_error(err);
				}
			opts->nr_labels++;
			fleet_given = true;
			break;
		case OPT_DIR:
		case OPT_PUSH:
		case OPT_SPOOL:
			if (!optarg[0])
				return usage_error(c == OPT_DIR ? "--dir: empty" : c == OPT_PUSH ? "--push: empty" : "--spool: empty");
			if (c == OPT_PUSH && opts->push_otlp)
				return usage_error("--push and --push-otlp: one destination at a time");
			*(c == OPT_DIR ? &opts->dir : c == OPT_PUSH ? &opts->push_url : &opts->spool_dir) = optarg;
			fleet_given = true;
			break;
		case OPT_PUSH_OTLP:
			if (!optarg[0])
				return usage_error("--push-otlp: empty");
			if (opts->push_url && !opts->push_otlp)
				return usage_error("--push and --push-otlp: one destination at a time");
			opts->push_url = optarg;
			opts->push_otlp = true;
			fleet_given = true;
			break;
		case OPT_PUSH_API:
			if (strcmp(optarg, "push") && strcmp(optarg, "ingest")) {
				snprintf(err, sizeof(err), "--push-api: unknown API '%s' (push or ingest)", optarg);
				return usage_error(err);
			}
			opts->push_ingest = !strcmp(optarg, "ingest");
			fleet_given = true;
			break;
		case OPT_KEEP:
		case OPT_SPOOL_SIZE:
			if (options__parse_size(c == OPT_KEEP ? "--keep" : "--spool-size", optarg, 4096, UINT64_MAX,
				       c == OPT_KEEP ? &opts->keep_bytes : &opts->spool_bytes, err, sizeof(err)))
				return usage_error(err);
			fleet_given = true;
			break;
		case 'o':
			if (options__parse_format(optarg, &opts->format)) {
				snprintf(err, sizeof(err),
					 "-o: unknown format '%s' (flamegraph, collapsed, text, pprof, jfr or otlp)", optarg);
				return usage_error(err);
			}
			format_given = true;
			break;
		case 'f':
			if (!optarg[0])
				return usage_error("-f: the file name is empty");
			if (opts->nr_outputs == OPTIONS_MAX_OUTPUTS) {
				snprintf(err, sizeof(err), "-f: at most %d files", OPTIONS_MAX_OUTPUTS);
				return usage_error(err);
			}
			opts->output_paths[opts->nr_outputs++] = optarg;
			break;
		case OPT_INCLUDE:
		case OPT_EXCLUDE:
			if ((c == OPT_INCLUDE ? opts->include_given : opts->exclude_given)) {
				snprintf(err, sizeof(err), "%s given twice: join the patterns with |",
					 c == OPT_INCLUDE ? "--include" : "--exclude");
				return usage_error(err);
			}
			if (options__parse_pattern(c == OPT_INCLUDE ? "--include" : "--exclude", optarg,
					  c == OPT_INCLUDE ? &opts->include : &opts->exclude, err, sizeof(err)))
				return usage_error(err);
			*(c == OPT_INCLUDE ? &opts->include_given : &opts->exclude_given) = true;
			break;
		case OPT_THREADS:
			opts->threads = true;
			break;
		case OPT_GROUP_BY:
			if (options__parse_group_by(optarg, &opts->group_by, err, sizeof(err)))
				return usage_error(err);
			opts->group_by_given = true;
			break;
		case OPT_FIXED_INTERVAL:
			opts->fixed_interval = true;
			break;
		case OPT_JAVA:
			opts->java = JAVA_REQUIRED;
			break;
		case OPT_NO_JAVA:
			opts->java = JAVA_OFF;
			break;
		case OPT_ANNOTATE:
			opts->annotate = true;
			break;
		case OPT_LINES:
			opts->lines = true;
			break;
		case OPT_CARRIER_FRAMES:
			opts->carrier_frames = true;
			break;
		case OPT_NO_UNMOUNTED:
			opts->no_unmounted = true;
			break;
		case 'e':
			/* The first -e replaces the default; each one after adds to it. */
			if (!event_given)
				opts->events = 0;
			event_given = true;
			if (options__parse_events(optarg, &opts->events, err, sizeof(err)))
				return usage_error(err);
			break;
		case OPT_STATE:
			if (options__parse_states(optarg, &opts->state_mask, err, sizeof(err)))
				return usage_error(err);
			state_given = true;
			break;
		case OPT_MIN_BLOCK:
		case OPT_MAX_BLOCK:
			if (options__parse_duration(c == OPT_MIN_BLOCK ? "--min-block" : "--max-block", optarg, 1000, 0,
					   MAX_DURATION_NS,
					   c == OPT_MIN_BLOCK ? &opts->min_block_ns : &opts->max_block_ns, err,
					   sizeof(err)))
				return usage_error(err);
			block_given = true;
			break;
		case OPT_WAIT_INTERVAL:
			if (options__parse_duration("--wait-interval", optarg, 1000, 100000, 60 * NS_PER_SEC,
					   &opts->wait_interval_ns, err, sizeof(err)))
				return usage_error(err);
			block_given = interval_given = true;
			break;
		case OPT_ALLOC_INTERVAL:
			if (options__parse_size("--alloc-interval", optarg, 1, MAX_ALLOC_INTERVAL, &value, err, sizeof(err)))
				return usage_error(err);
			opts->alloc_interval = (uint32_t)value;
			alloc_given = true;
			break;
		case OPT_LEAKS:
			opts->leaks = true;
			break;
		case OPT_WAKERS:
			opts->wakers = true;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "tables"))
				opts->unwind = UNWIND_TABLES;
			else if (!strcmp(optarg, "fp"))
				opts->unwind = UNWIND_FP;
			else {
				snprintf(err, sizeof(err), "--unwind: '%s' is not a method (tables or fp)", optarg);
				return usage_error(err);
			}
			break;
		case OPT_JAVA_STACKS:
			if (!strcmp(optarg, "bpf"))
				opts->java_stacks = JAVA_STACKS_BPF;
			else if (!strcmp(optarg, "agent"))
				opts->java_stacks = JAVA_STACKS_AGENT;
			else if (!strcmp(optarg, "both"))
				opts->java_stacks = JAVA_STACKS_BOTH;
			else {
				snprintf(err, sizeof(err), "--java-stacks: '%s' is not bpf, agent or both", optarg);
				return usage_error(err);
			}
			break;
		case OPT_TOP:
			if (options__parse_u64("--top", optarg, 1, 100000, &value, err, sizeof(err)))
				return usage_error(err);
			opts->text_top = (size_t)value;
			break;
		case 'v':
			opts->verbose++;
			break;
		case 'h':
			help__print(stdout);
			return OPTIONS_DONE;
		case 'V':
			printf("jbpfprof %s\n", JBPFPROF_VERSION);
			return OPTIONS_DONE;
		case OPT_AGENT_PATH:
			return print_agent_path();
		case ':':
			snprintf(err, sizeof(err), "option %s needs a value", argv[optind - 1]);
			return usage_error(err);
		default:
			snprintf(err, sizeof(err), "unknown option '%s'", argv[optind - 1]);
			return usage_error(err);
		}
	}
	if (optind < argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
		return usage_error(err);
	}
	if (opts->all && opts->nr_pids)
		return usage_error("-p and -a exclude each other: name processes or profile all");
	if (!opts->all && !opts->nr_pids)
		return usage_error("say what to profile: -p PID or -a");
	if (opts->all && opts->java == JAVA_REQUIRED)
		return usage_error("--java needs -p: the agent is loaded only into processes named with -p");
	if (check_events(opts) != OPTIONS_RUN)
		return OPTIONS_USAGE;
	if ((state_given || block_given) && !(opts->events & EVENTS_OF_WAITS))
		return usage_error("--state, --min-block, --max-block and --wait-interval need -e wall, offcpu or lock");
	if (alloc_given && !options__records(opts, EVENT_ALLOC) && !options__records(opts, EVENT_NATIVEMEM))
		return usage_error("--alloc-interval needs -e alloc or -e nativemem");
	if (opts->leaks && !options__records(opts, EVENT_NATIVEMEM))
		return usage_error("--leaks needs -e nativemem");
	if (opts->wakers && !(opts->events & EVENTS_OF_WAITS))
		return usage_error("--wakers needs -e wall, offcpu or lock");
	if (opts->no_unmounted && !(opts->events & EVENTS_OF_WAITS))
		return usage_error("--no-unmounted needs -e wall, offcpu or lock");
	if (options__records(opts, EVENT_LOCK) && interval_given)
		return usage_error("-e lock records every wait: --wait-interval does not apply");
	if (options__records(opts, EVENT_LOCK) && opts->java == JAVA_OFF)
		return usage_error("-e lock is the time Java threads wait for locks: drop --no-java");
	if (options__records(opts, EVENT_LOCK) && opts->java_stacks != JAVA_STACKS_BPF)
		return usage_error("-e lock takes Java frames from the BPF walk only: drop --java-stacks");
	if (options__records(opts, EVENT_NATIVEMEM) && opts->all)
		return usage_error("-e nativemem probes the allocator of each process named: use -p PID, not -a");
	if (options__records(opts, EVENT_NATIVEMEM) && opts->java_stacks != JAVA_STACKS_BPF)
		return usage_error("-e nativemem takes Java frames from the BPF walk only: drop --java-stacks");
	if (options__records(opts, EVENT_NATIVEMEM) && opts->java == JAVA_REQUIRED)
		return usage_error("-e nativemem loads no agent: drop --java");
	if (options__records(opts, EVENT_ALLOC) && opts->java == JAVA_OFF)
		return usage_error("-e alloc samples Java allocations: drop --no-java");
	if ((options__records(opts, EVENT_OFFCPU) || options__records(opts, EVENT_LOCK)) && state_given &&
	    opts->state_mask == 1u << JBPF_STATE_RUNNING)
		return usage_error("--state running with -e offcpu or lock keeps nothing; use -e wall");
	if (options__records(opts, EVENT_OFFCPU) || options__records(opts, EVENT_LOCK))
		opts->state_mask &= ~(1u << JBPF_STATE_RUNNING);
	if (opts->max_block_ns && opts->max_block_ns < opts->min_block_ns)
		return usage_error("--max-block is shorter than --min-block: nothing would be kept");
	if (check_continuous(opts, frequency_given, fleet_given) != OPTIONS_RUN)
		return OPTIONS_USAGE;
	if (opts->continuous)
		return OPTIONS_RUN;
	if (resolve_output_formats(opts, format_given) != OPTIONS_RUN)
		return OPTIONS_USAGE;
	/* The default file (no -f) is of opts->format. */
	jfr = !opts->nr_outputs && opts->format == OUTPUT_JFR;
	for (size_t i = 0; i < opts->nr_outputs; i++)
		jfr |= opts->output_formats[i] == OUTPUT_JFR;
	if (jfr && (options__records(opts, EVENT_ALLOC) || options__records(opts, EVENT_NATIVEMEM)))
		return usage_error(options__records(opts, EVENT_ALLOC)
					   ? "-e alloc writes no JFR file yet: use -o pprof, flamegraph, text, collapsed or otlp"
					   : "-e nativemem writes no JFR file: use -o pprof, flamegraph, text, collapsed or otlp");
	if (jfr && opts->wakers)
		return usage_error("--wakers joins two threads' stacks, which a JFR file has no place for: use -o pprof, "
				   "flamegraph, text, collapsed or otlp");
	return check_formats_of_events(opts);
}
