/*
 * jbpfprof: the command. Parses options, checks the machine, records, and
 * writes the chosen output, then one summary line on stderr.
 *
 * Exit status: 0 when a profile was written, 1 when the recording or the
 * output failed, 2 for a mistake on the command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "output/output.h"
#include "common/clock.h"
#include "symbolizer/symbolizer.h"
#include "user/record/aggregator.h"
#include "user/record/checks.h"
#include "user/convert.h"
#include "common/counts.h"
#include "user/java/java.h"
#include "user/options.h"
#include "output/files.h"
#include "profile/profile.h"
#include "user/record/sampler.h"
#include "user/record/session.h"
#include "profile/view.h"
#include "user/record/wall.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"

/* A wait still going on at the end of the recording, kept until the agents sent their stacks. */
struct final_wait {
	struct final_wait *next;
	size_t size;
	unsigned char record[];
};

struct recording {
	struct options opts;
	uint32_t tgids[OPTIONS_MAX_PIDS];
	size_t nr_tgids;
	struct symbolizer *sym;
	struct profile *profile;
	struct aggregator *agg;
	struct java *java;
	struct wall *wall;    /* -e wall or offcpu */
	bool wall_stopped;    /* wall__stop was called */
	struct final_wait *final_waits; /* JVM threads waiting at the end, for their Java stacks */
	size_t nr_jvms;       /* targets that took the agent */
	struct sampler *sampler;
	struct session_result session;
	uint64_t counters[JBPF_CNT_NR];
	uint64_t base_period_ns;
	uint64_t start_ns;    /* CLOCK_MONOTONIC when the command started */
	int64_t start_unix_ns; /* CLOCK_REALTIME as the recording began */
	struct output_file outputs[OPTIONS_MAX_OUTPUTS]; /* opened before recording */
	size_t nr_outputs;
	bool full;            /* aggregated in full for a pprof file (user/view.h) */
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

/* Records go through the wall accounting first, when there is one, then to the Java join. */
static void on_record(void *ctx, const void *data, size_t size)
{
	struct recording *rec = ctx;

	if (rec->wall) {
		/* The sampler stopped: the window is closed, and what follows is cut at its end. */
		if (!rec->wall_stopped && rec->sampler && sampler__stopped_ns(rec->sampler)) {
			wall__stop(rec->wall, sampler__stopped_ns(rec->sampler));
			rec->wall_stopped = true;
		}
		wall__record(rec->wall, data, size);
	} else {
		java__record(rec->java, data, size);
	}
}

static void forward_record(void *ctx, const void *data, size_t size)
{
	java__record(((struct recording *)ctx)->java, data, size);
}

/*
 * A wait still going on at the end: no signal may reach the thread now. In
 * a JVM its Java stack comes from the agent's stacks of all threads, which
 * arrive during java__finish; until then the wait is kept here.
 */
static void add_wait_at_end(void *ctx, const void *data, size_t size)
{
	struct recording *rec = ctx;
	struct final_wait *w;

	if (!rec->nr_jvms) {
		aggregator__add(rec->agg, data, size);
		return;
	}
	w = malloc(sizeof(*w) + size);
	if (!w) {
		aggregator__add(rec->agg, data, size);
		return;
	}
	w->size = size;
	memcpy(w->record, data, size);
	w->next = rec->final_waits;
	rec->final_waits = w;
}

static const char *thread_name(void *ctx, uint32_t tgid, uint32_t tid)
{
	return java__thread_name(((struct recording *)ctx)->java, tgid, tid);
}

static void add_final_waits(struct recording *rec)
{
	struct final_wait *w;

	while ((w = rec->final_waits)) {
		rec->final_waits = w->next;
		java__add_final_wait(rec->java, (const struct jbpf_sample *)w->record, w->size);
		free(w);
	}
}

static uint64_t samples_so_far(void *ctx)
{
	struct recording *rec = ctx;
	struct aggregator_stats stats;

	aggregator__stats(rec->agg, &stats);
	return stats.written;
}

static size_t hook_poll_fds(void *ctx, struct pollfd *fds, size_t max)
{
	return java__poll_fds(((struct recording *)ctx)->java, fds, max);
}

static void hook_on_poll(void *ctx, const struct pollfd *fds, size_t nr)
{
	java__on_poll(((struct recording *)ctx)->java, fds, nr);
}

static void hook_tick(void *ctx, uint64_t now_ns)
{
	java__tick(((struct recording *)ctx)->java, now_ns);
}

/*
 * The sampler has stopped and its last records are in: ask the agents for
 * their threads' stacks and close the wall window (its waits may still go
 * through the Java join), then empty the join, add the waits that needed
 * the agents' stacks, and give every thread its exact times.
 */
static void hook_finish(void *ctx)
{
	struct recording *rec = ctx;

	if (rec->wall) {
		if (rec->nr_jvms)
			java__request_thread_stacks(rec->java);
		if (!rec->wall_stopped)
			wall__stop(rec->wall, sampler__stopped_ns(rec->sampler));
		rec->wall_stopped = true;
		wall__end(rec->wall, rec->sampler);
	}
	java__finish(rec->java);
	add_final_waits(rec);
	if (rec->wall)
		wall__settle(rec->wall);
}

/*
 * Loads the agent into every JVM among the targets. Without --java a JVM
 * that refuses it is still profiled, with frame pointers and any perf map;
 * with --java that, or a target that is no JVM, ends the run.
 */
static int attach_jvms(struct recording *rec)
{
	char err[512];

	if (rec->opts.java == JAVA_OFF || rec->opts.all)
		return 0;
	for (size_t i = 0; i < rec->nr_tgids; i++) {
		int rc = java__attach(rec->java, rec->tgids[i], err, sizeof(err));

		if (rc == 0) {
			rec->nr_jvms++;
			if (rec->opts.verbose)
				fprintf(stderr, "jbpfprof: agent loaded into JVM pid %u\n", rec->tgids[i]);
		} else if (rec->opts.java == JAVA_REQUIRED) {
			if (rc == 1)
				fprintf(stderr, "jbpfprof: pid %u is not a Java virtual machine (no libjvm.so in its memory maps)\n",
					rec->tgids[i]);
			else
				fprintf(stderr, "jbpfprof: %s\n", err);
			return -1;
		} else if (rc < 0) {
			fprintf(stderr,
				"jbpfprof: cannot load the agent into pid %u: %s; profiling it without Java frames "
				"(frame pointers and any perf map)\n",
				rec->tgids[i], err);
		}
	}
	return 0;
}

/* -p names processes or threads; the BPF filter wants distinct processes. */
static int resolve_targets(struct recording *rec)
{
	char err[256];

	for (size_t i = 0; i < rec->opts.nr_pids; i++) {
		uint32_t pid = rec->opts.pids[i], tgid;
		bool seen = false;

		if (checks__resolve_pid("/proc", pid, &tgid, err, sizeof(err))) {
			fprintf(stderr, "jbpfprof: %s\n", err);
			return -1;
		}
		if (tgid != pid)
			fprintf(stderr, "jbpfprof: %u is a thread of process %u; profiling the process\n", pid,
				tgid);
		for (size_t j = 0; j < rec->nr_tgids; j++)
			seen |= rec->tgids[j] == tgid;
		if (!seen)
			rec->tgids[rec->nr_tgids++] = tgid;
	}
	return 0;
}

static void describe_targets(const struct recording *rec, char *buf, size_t size)
{
	size_t used = 0;

	if (rec->opts.all) {
		snprintf(buf, size, "all processes");
		return;
	}
	for (size_t i = 0; i < rec->nr_tgids && used < size; i++) {
		const char *name = symbolizer__process_name(rec->sym, rec->tgids[i]);

		used += (size_t)snprintf(buf + used, size - used, "%spid %u%s%s%s", i ? ", " : "", rec->tgids[i],
					 name ? " (" : "", name ? name : "", name ? ")" : "");
	}
}

static void default_path(const struct recording *rec, char *buf, size_t size)
{
	char stamp[32], who[32];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (rec->opts.all)
		snprintf(who, sizeof(who), "all");
	else
		snprintf(who, sizeof(who), "%u", rec->tgids[0]);
	snprintf(buf, size, "jbpfprof-%s-%s.%s", who, stamp, format_extension(rec->opts.format));
}

/* The losses and damage, e.g. "lost 3 (ring buffer full 3)"; empty when none. */
static void describe_losses(const struct recording *rec, const struct aggregator_stats *stats,
			    uint64_t unaccounted, char *buf, size_t size)
{
	uint64_t lost = rec->counters[JBPF_CNT_RINGBUF_FULL] + stats->profile_full + stats->malformed + unaccounted;
	size_t used;

	used = (size_t)snprintf(buf, size, "%llu lost", (unsigned long long)lost);
	if (lost) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_RINGBUF_FULL] },
			{ "profile full", stats->profile_full },
			{ "malformed", stats->malformed },
			{ "not delivered", unaccounted },
		};

		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	}
	if (stats->no_user_stack && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu without a user stack",
					 (unsigned long long)stats->no_user_stack);
	if (stats->no_kernel_stack && used < size)
		snprintf(buf + used, size - used, "; %llu without a kernel stack",
			 (unsigned long long)stats->no_kernel_stack);
}

/*
 * The wall-clock part of the summary: the window, the waits, and what of
 * them was lost, e.g. "; window 30.002 s, 1200 threads, 5400 waits (3 lost)".
 */
static void describe_wall(const struct recording *rec, char *buf, size_t size)
{
	struct wall_stats ws;
	uint64_t lost;
	size_t used;

	wall__stats(rec->wall, &ws);
	lost = rec->counters[JBPF_CNT_WAITS_LOST] + ws.ends_lost;
	used = (size_t)snprintf(buf, size, "; window %.3f s, %llu threads, %llu waits",
				(double)wall__window_ns(rec->wall) / 1e9, (unsigned long long)ws.threads,
				(unsigned long long)ws.waits);
	if (lost && used < size) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_WAITS_LOST] },
			{ "end not seen", ws.ends_lost },
		};

		used += (size_t)snprintf(buf + used, size - used, ", %llu lost", (unsigned long long)lost);
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	}
	if (rec->counters[JBPF_CNT_SWITCH_MISSED] && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; %llu context switches not seen (their waits recovered or dropped)",
					 (unsigned long long)rec->counters[JBPF_CNT_SWITCH_MISSED]);
	if (rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu threads not followed (table full)",
					 (unsigned long long)(rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full));
	if (ws.no_user_stack && used < size)
		snprintf(buf + used, size - used, "; %llu waits without their user stack",
			 (unsigned long long)ws.no_user_stack);
}

/*
 * Opens every output before recording, so that a path that cannot be
 * written is reported at once, not after the whole recording.
 */
static int open_outputs(struct recording *rec)
{
	const struct options *o = &rec->opts;
	char path[4096];

	if (!o->nr_outputs) {
		default_path(rec, path, sizeof(path));
		rec->nr_outputs = 1;
		rec->full = o->format == OUTPUT_PPROF;
		return output_file__open(&rec->outputs[0], path, o->format);
	}
	for (size_t i = 0; i < o->nr_outputs; i++) {
		if (output_file__open(&rec->outputs[i], o->output_paths[i], o->output_formats[i]))
			return -1;
		rec->nr_outputs = i + 1;
		rec->full |= o->output_formats[i] == OUTPUT_PPROF;
	}
	return 0;
}

/* A recording that failed leaves no file behind. */
static void discard_outputs(struct recording *rec)
{
	for (size_t i = 0; i < rec->nr_outputs; i++)
		output_file__discard(&rec->outputs[i]);
}

/*
 * The profile a file of this format is written from: a pprof file gets
 * everything that was aggregated, another the view the options ask for;
 * both without the stacks --include and --exclude leave out. NULL on
 * failure (said).
 */
static struct profile *profile_for(const struct recording *rec, enum output_format format)
{
	const struct options *o = &rec->opts;
	bool whole = format == OUTPUT_PPROF || !rec->full;
	struct view_config view = {
		.process_root = whole ? VIEW_ROOT_PID
			      : o->all ? VIEW_ROOT_NAME : rec->nr_tgids > 1 ? VIEW_ROOT_PID : VIEW_ROOT_NONE,
		.threads = whole || o->threads,
		.annotate = whole || o->annotate,
		.include = o->include_given ? &o->include : NULL,
		.exclude = o->exclude_given ? &o->exclude : NULL,
	};
	struct profile *p = profile__new(NULL);
	int error = p ? view__apply(rec->profile, &view, p, NULL) : -ENOMEM;

	if (error) {
		fprintf(stderr, "jbpfprof: preparing the %s failed: %s\n", output_format_noun(format), strerror(-error));
		profile__free(p);
		return NULL;
	}
	return p;
}

static const char *process_roots_word(const struct recording *rec)
{
	return rec->opts.all ? "name" : rec->nr_tgids > 1 ? "pid" : "none";
}

static int write_outputs(struct recording *rec, const char *summary)
{
	const struct options *o = &rec->opts;
	struct output_meta meta = {
		.unit = o->event == EVENT_CPU ? "samples" : "microseconds",
		.duration_s = rec->session.elapsed_s,
		.frequency_hz = o->frequency_hz,
		.summary = summary,
		.event = o->event == EVENT_WALL ? "wall" : o->event == EVENT_OFFCPU ? "offcpu" : "cpu",
		.start_unix_ns = rec->start_unix_ns,
		.process_roots = process_roots_word(rec),
	};
	char title[512], targets[256];
	int failed = 0;

	describe_targets(rec, targets, sizeof(targets));
	snprintf(title, sizeof(title), "%s profile of %s",
		 o->event == EVENT_WALL ? "Wall-clock" : o->event == EVENT_OFFCPU ? "Off-CPU" : "CPU", targets);
	meta.title = title;
	for (size_t i = 0; i < rec->nr_outputs; i++) {
		struct output_file *f = &rec->outputs[i];
		bool as_is = !rec->full && !o->include_given && !o->exclude_given;
		struct profile *p = as_is ? rec->profile : profile_for(rec, f->format);
		int error;

		if (!p) {
			output_file__discard(f);
			failed = -1;
			continue;
		}
		error = output_write(f->format, p, &meta, o->text_top, f->out);
		if (p != rec->profile)
			profile__free(p);
		failed |= output_file__finish(f, error);
	}
	return failed;
}

static int record(struct recording *rec)
{
	const struct options *o = &rec->opts;
	struct aggregator_config agg_config = {
		.process_root = rec->full ? AGGREGATOR_ROOT_PROCESS_PID
			       : o->all ? AGGREGATOR_ROOT_PROCESS_NAME
			       : rec->nr_tgids > 1 ? AGGREGATOR_ROOT_PROCESS_PID
						   : AGGREGATOR_ROOT_NONE,
		.thread_root = rec->full || o->threads,
		.annotate = rec->full || o->annotate,
		.modules = rec->full,
		.time_weights = o->event != EVENT_CPU,
		.state_mask = o->state_mask,
	};
	struct sampler_java_target java_targets[JBPF_MAX_TARGETS];
	struct sampler_config sampler_config = {
		.tgids = rec->tgids,
		.nr_tgids = rec->nr_tgids,
		.frequency_hz = o->frequency_hz,
		.fixed_interval = o->fixed_interval,
		.verbose = o->verbose,
		.on_record = on_record,
	};
	struct session_config session_config = {
		.duration_ns = o->duration_ns,
		.tgids = rec->tgids,
		.nr_tgids = rec->nr_tgids,
		.progress = isatty(STDERR_FILENO),
		.samples_so_far = samples_so_far,
		.ctx = rec,
		.hooks = {
			.ctx = rec,
			.poll_fds = hook_poll_fds,
			.on_poll = hook_on_poll,
			.tick = hook_tick,
			.finish = hook_finish,
		},
	};
	char err[512], targets[256], duration[64];
	sigset_t stop_signals;
	int error;

	/*
	 * From here on SIGINT and SIGTERM wait for the session to read them: one
	 * that comes while the sampler is being set up must end the recording,
	 * not kill the process before the output is written.
	 */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);

	rec->sym = symbolizer__new(NULL);
	rec->profile = profile__new(NULL);
	if (!rec->sym || !rec->profile)
		goto oom;
	/* Read the targets' maps now, so a target that exits early still resolves. */
	for (size_t i = 0; i < rec->nr_tgids; i++)
		symbolizer__add_process(rec->sym, rec->tgids[i]);
	rec->agg = aggregator__new(&agg_config, rec->sym, rec->profile);
	if (!rec->agg)
		goto oom;
	rec->java = java__new(rec->agg, rec->sym);
	if (!rec->java)
		goto oom;
	if (o->event != EVENT_CPU) {
		struct wall_config wall_config = {
			.offcpu_only = o->event == EVENT_OFFCPU,
			.min_block_ns = o->min_block_ns,
			.max_block_ns = o->max_block_ns,
			.forward = forward_record,
			.end_wait = add_wait_at_end,
			.thread_name = thread_name,
			.ctx = rec,
		};

		rec->wall = wall__new(&wall_config, rec->agg, rec->sym);
		if (!rec->wall)
			goto oom;
		wall__set_sample_period(rec->wall, 1000000000ull / o->frequency_hz);
		sampler_config.waits = true;
		sampler_config.no_cpu_samples = o->event == EVENT_OFFCPU;
		/* Off-CPU stacks get the resolution of CPU samples (see bpf/offcpu.bpf.c). */
		sampler_config.full_wait_ns = 1000000000ull / o->frequency_hz;
		sampler_config.min_block_ns = o->min_block_ns;
		sampler_config.max_block_ns = o->max_block_ns;
	}
	java__want_nmethods(rec->java, agg_config.annotate);
	if (attach_jvms(rec))
		return -1;
	sampler_config.java = java_targets;
	sampler_config.nr_java = java__targets(rec->java, java_targets, JBPF_MAX_TARGETS);
	sampler_config.ctx = rec;
	if (sampler_config.nr_java || sampler_config.waits)
		symbolizer__kernel_symbol(rec->sym, "do_syscall_64", &sampler_config.syscall_entry_lo,
					  &sampler_config.syscall_entry_hi);
	if (sampler__open(&sampler_config, &rec->sampler, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	if (rec->wall)
		wall__start(rec->wall, sampler__started_ns(rec->sampler));
	if (rec->wall)
		wall__seed(rec->wall, rec->sampler, o->all ? NULL : rec->tgids, o->all ? 0 : rec->nr_tgids);
	java__set_sampler(rec->java, rec->sampler);
	describe_targets(rec, targets, sizeof(targets));
	if (o->duration_ns)
		snprintf(duration, sizeof(duration), "for %g s", (double)o->duration_ns / 1e9);
	else
		snprintf(duration, sizeof(duration), "until Ctrl-C");
	if (o->event == EVENT_OFFCPU)
		fprintf(stderr, "jbpfprof: sampling %s off CPU, every context switch, %s%s\n", targets, duration,
			rec->nr_jvms ? ", with Java frames" : "");
	else
		fprintf(stderr, "jbpfprof: sampling %s at %u Hz%s on %u CPUs%s %s%s\n", targets, o->frequency_hz,
			o->fixed_interval ? " (fixed interval)" : "", sampler__cpus(rec->sampler),
			o->event == EVENT_WALL ? " and every context switch" : "", duration,
			rec->nr_jvms ? ", with Java frames" : "");
	error = session__run(rec->sampler, &session_config, &rec->session, err, sizeof(err));
	sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
	if (error) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	sampler__counters(rec->sampler, rec->counters);
	rec->base_period_ns = sampler__base_period_ns(rec->sampler);
	return 0;
oom:
	fprintf(stderr, "jbpfprof: out of memory\n");
	return -1;
}

/* -v: what the recording cost this process, and how the caches fared. */
static void print_verbose_stats(const struct recording *rec)
{
	struct symbolizer_stats sym;
	struct rusage usage;
	double cpu_s;

	if (getrusage(RUSAGE_SELF, &usage) == 0) {
		cpu_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
			(double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "jbpfprof: own CPU time %.3f s (%.2f%% of one CPU over %.1f s)\n", cpu_s,
			rec->session.elapsed_s > 0 ? 100.0 * cpu_s / rec->session.elapsed_s : 0.0,
			rec->session.elapsed_s);
	}
	struct aggregator_stats agg;

	aggregator__stats(rec->agg, &agg);
	fprintf(stderr, "jbpfprof: BPF ticks %llu, samples kept %llu, base period %llu ns, execs %llu (%llu lost)\n",
		(unsigned long long)rec->counters[JBPF_CNT_TICKS], (unsigned long long)rec->counters[JBPF_CNT_SAMPLES],
		(unsigned long long)rec->base_period_ns, (unsigned long long)agg.execs,
		(unsigned long long)rec->counters[JBPF_CNT_EXEC_LOST]);
	if (rec->wall) {
		struct wall_stats ws;

		wall__stats(rec->wall, &ws);
		fprintf(stderr, "jbpfprof: window: %llu us\n", (unsigned long long)((wall__window_ns(rec->wall) + 500) / 1000));
		fprintf(stderr,
			"jbpfprof: context switches %llu, waits sent %llu, handed on %llu (%llu at the end), "
			"dropped by --min/max-block %llu, shares lost %llu\n",
			(unsigned long long)rec->counters[JBPF_CNT_SWITCHES],
			(unsigned long long)rec->counters[JBPF_CNT_WAITS_SENT], (unsigned long long)ws.waits,
			(unsigned long long)ws.waits_at_end, (unsigned long long)ws.filtered,
			(unsigned long long)agg.shares_lost);
	}
	if (rec->nr_jvms) {
		struct java_stats js;

		java__stats(rec->java, &js);
		if (js.first_joined_ns && js.first_joined_ns > rec->start_ns)
			fprintf(stderr, "jbpfprof: first sample with Java frames %.0f ms after the start\n",
				(double)(js.first_joined_ns - rec->start_ns) / 1e6);
		fprintf(stderr, "jbpfprof: agents: %llu methods named, %llu code blobs, %llu traces dropped in the agent\n",
			(unsigned long long)js.methods, (unsigned long long)js.blobs,
			(unsigned long long)js.ring_full);
		if (js.handler_calls)
			fprintf(stderr, "jbpfprof: agent signal handler: %llu calls, %.2f us each\n",
				(unsigned long long)js.handler_calls, (double)js.handler_ns / 1e3 / (double)js.handler_calls);
	}
	symbolizer__stats(rec->sym, &sym);
	fprintf(stderr,
		"jbpfprof: symbolizer: %llu lookups (%llu unresolved), %llu maps reads, %llu files parsed "
		"(%llu failed, %llu evicted), %llu processes evicted\n",
		(unsigned long long)sym.lookups, (unsigned long long)sym.unknown,
		(unsigned long long)sym.processes_loaded, (unsigned long long)sym.files_loaded,
		(unsigned long long)sym.files_failed, (unsigned long long)sym.files_evicted,
		(unsigned long long)sym.processes_evicted);
}

static void cleanup(struct recording *rec)
{
	struct final_wait *w;

	while ((w = rec->final_waits)) {
		rec->final_waits = w->next;
		free(w);
	}
	sampler__close(rec->sampler);
	java__free(rec->java);
	wall__free(rec->wall);
	aggregator__free(rec->agg);
	profile__free(rec->profile);
	symbolizer__free(rec->sym);
}

int main(int argc, char **argv)
{
	static struct recording rec;
	struct aggregator_stats stats;
	char err[512], losses[512], summary[2048], java_line[768], wall_line[512];
	uint64_t taken, unaccounted;
	int status = 1;

	rec.start_ns = clock_monotonic_ns();
	if (argc > 1 && !strcmp(argv[1], "convert"))
		return convert_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_main(argc - 1, argv + 1);
	switch (options_parse(argc, argv, &rec.opts)) {
	case OPTIONS_DONE:
		return 0;
	case OPTIONS_USAGE:
		return 2;
	case OPTIONS_RUN:
		break;
	}
	if (checks__environment(BTF_PATH, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return 1;
	}
	if (resolve_targets(&rec))
		return 1;
	raise_fd_limit();
	if (open_outputs(&rec))
		goto out;
	rec.start_unix_ns = clock_realtime_ns();
	if (record(&rec))
		goto out;

	aggregator__stats(rec.agg, &stats);
	taken = rec.counters[JBPF_CNT_SAMPLES];
	/* Every sample taken is written or lost for a counted reason; say so if not. */
	unaccounted = taken - rec.counters[JBPF_CNT_RINGBUF_FULL] - stats.received;
	if (unaccounted > taken)
		unaccounted = 0;
	describe_losses(&rec, &stats, unaccounted, losses, sizeof(losses));
	java_line[0] = '\0';
	if (rec.nr_jvms)
		java__describe(rec.java, java_line, sizeof(java_line));
	wall_line[0] = '\0';
	if (rec.wall)
		describe_wall(&rec, wall_line, sizeof(wall_line));
	snprintf(summary, sizeof(summary), "%llu samples taken, %llu written, %s%s%s%s", (unsigned long long)taken,
		 (unsigned long long)stats.written, losses, wall_line, java_line[0] ? "; " : "", java_line);
	if (write_outputs(&rec, summary))
		goto out;
	fprintf(stderr, "jbpfprof: %s in %.1f s\n", summary, rec.session.elapsed_s);
	if (!stats.written)
		fprintf(stderr, "jbpfprof: no samples: %s on a CPU while recording\n",
			rec.opts.all ? "no process ran" : rec.nr_tgids > 1 ? "the targets did not run" : "the target did not run");
	if (rec.opts.verbose)
		print_verbose_stats(&rec);
	if (rec.session.nr_exited && rec.nr_tgids)
		fprintf(stderr, "jbpfprof: %s exited during the recording; the profile covers the time before\n",
			rec.session.all_exited && rec.nr_tgids == 1 ? "the target" : "some targets");
	for (size_t i = 0; i < rec.nr_outputs; i++)
		if (!rec.outputs[i].to_stdout)
			fprintf(stderr, "jbpfprof: wrote %s to %s\n", output_format_noun(rec.outputs[i].format),
				rec.outputs[i].path);
	status = 0;
out:
	discard_outputs(&rec);
	cleanup(&rec);
	options_free(&rec.opts);
	return status;
}
