/*
 * jbpfprof: the command. Parses options, checks the machine, records, and
 * writes the chosen output, then one summary line on stderr.
 *
 * Exit status: 0 when a profile was written, 1 when the recording or the
 * output failed, 2 for a mistake on the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "output/output.h"
#include "user/convert.h"
#include "user/fleet/continuous.h"
#include "user/options.h"
#include "user/outputs.h"
#include "user/record/checks.h"
#include "user/session/recording.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"

struct command {
	struct options opts;
	struct recording *rec;
	struct outputs out;
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

/* The events -e asked for, as the recording names them. */
static unsigned recording_events_of(const struct options *o)
{
	unsigned mask = 0;

	for (int e = 0; e < EVENT_NR; e++)
		if (options__records(o, (enum event_mode)e))
			mask |= RECORDING_EVENT(outputs__recording_event((enum event_mode)e));
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
		.full = cmd->out.full,
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
		.event = options__records(o, EVENT_WALL) ? "wall" : "cpu",
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
	options__free(&cmd->opts);
	return status;
}

int main(int argc, char **argv)
{
	static struct command cmd;
	struct recording_config config;
	char err[512], summary[2048];
	int status = 1;

	if (argc > 1 && !strcmp(argv[1], "convert"))
		return convert__main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return convert__diff_main(argc - 1, argv + 1);
	switch (options__parse_args(argc, argv, &cmd.opts)) {
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
	cmd.out.opts = &cmd.opts;
	cmd.out.rec = cmd.rec;
	if (outputs__open(&cmd.out))
		goto out;
	/* Whether a pprof file is among the outputs decides how much is aggregated. */
	recording__set_full(cmd.rec, cmd.out.full);
	cmd.out.start_unix_ns = clock__realtime_ns();
	if (recording__run(cmd.rec))
		goto out;
	recording__summary(cmd.rec, summary, sizeof(summary));
	if (outputs__write(&cmd.out, summary))
		goto out;
	/* The length first: the summary is a list of clauses, the last one about whatever came last. */
	fprintf(stderr, "jbpfprof: recorded %.1f s: %s\n", recording__elapsed_s(cmd.rec), summary);
	recording__report(cmd.rec);
	for (size_t i = 0; i < cmd.out.nr_outputs; i++)
		if (!cmd.out.outputs[i].to_stdout)
			fprintf(stderr, "jbpfprof: wrote %s to %s\n", output__writer(cmd.out.outputs[i].format)->noun,
				cmd.out.outputs[i].path);
	status = 0;
out:
	outputs__discard(&cmd.out);
	recording__free(cmd.rec);
	options__free(&cmd.opts);
	return status;
}
