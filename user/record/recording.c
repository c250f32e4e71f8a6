/*
 * recording: the stages set up, the session run, the summary told
 * (contract in recording.h).
 */
#include "recording.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/clock.h"
#include "common/counts.h"
#include "common/terminal.h"
#include "symbolizer/proc.h"
#include "symbolizer/symbolizer.h"
#include "user/java/java.h"
#include "user/java/oracle.h"
#include "user/java/walked.h"
#include "user/record/aggregator.h"
#include "user/record/checks.h"
#include "user/record/kernel_symbols.h"
#include "user/record/loader.h"
#include "user/record/pipeline.h"
#include "user/record/sampler.h"
#include "user/record/session.h"
#include "user/record/unwinder.h"
#include "unwind/unwind.h"
#include "user/record/wall.h"

struct recording {
	struct recording_config config;
	uint32_t tgids[JBPF_MAX_TARGETS];
	uint64_t start_ticks[JBPF_MAX_TARGETS]; /* when each started: tells them from later owners of their pids */
	size_t nr_tgids;
	struct symbolizer *sym;
	struct kernel_symbols *kernel_symbols; /* NULL: the kernel cannot be asked; kallsyms names */
	struct profile *profile;
	struct aggregator *agg;
	struct java *java;
	struct walked *walked;   /* JVMs whose Java frames BPF walks */
	struct oracle *oracle;   /* --java-stacks both: the walk checked against the agent */
	struct pipeline *pipeline;
	struct sampler *sampler;
	struct session_result session;
	uint64_t counters[JBPF_CNT_NR];
	uint64_t base_period_ns;
	uint64_t start_ns;    /* CLOCK_MONOTONIC when the recording was made */
	/* --continuous: where the interval in progress began, and the counts then */
	int64_t interval_from_unix_ns;
	uint64_t cut_counters[JBPF_CNT_NR];
	struct aggregator_stats cut_agg;
	struct pipeline_stats cut_pipeline;
	uint64_t intervals_skipped; /* cuts not made: no memory for a fresh profile */
};

/* -p names processes or threads; the BPF filter wants distinct processes. */
static int resolve_targets(struct recording *rec)
{
	char err[256];

	for (size_t i = 0; i < rec->config.nr_pids; i++) {
		uint32_t pid = rec->config.pids[i], tgid;
		bool seen = false;
		int error;

		if (checks__resolve_pid("/proc", pid, &tgid, err, sizeof(err))) {
			fprintf(stderr, "jbpfprof: %s\n", err);
			return -1;
		}
		if (tgid != pid)
			fprintf(stderr, "jbpfprof: %u is a thread of process %u; profiling the process\n", pid,
				tgid);
		for (size_t j = 0; j < rec->nr_tgids; j++)
			seen |= rec->tgids[j] == tgid;
		if (seen || rec->nr_tgids == JBPF_MAX_TARGETS)
			continue;
		error = checks__process_start("/proc", tgid, &rec->start_ticks[rec->nr_tgids]);
		if (error == -ESRCH) {
			fprintf(stderr, "jbpfprof: no process with PID %u (it has exited)\n", tgid);
			return -1;
		}
		if (error) {
			fprintf(stderr, "jbpfprof: cannot tell when process %u started: %s\n", tgid, strerror(-error));
			return -1;
		}
		rec->tgids[rec->nr_tgids++] = tgid;
	}
	return 0;
}

struct recording *recording__new(const struct recording_config *config)
{
	struct recording *rec = calloc(1, sizeof(*rec));

	if (!rec) {
		fprintf(stderr, "jbpfprof: out of memory\n");
		return NULL;
	}
	rec->config = *config;
	rec->start_ns = clock_monotonic_ns();
	if (resolve_targets(rec)) {
		free(rec);
		return NULL;
	}
	return rec;
}

void recording__free(struct recording *rec)
{
	if (!rec)
		return;
	sampler__close(rec->sampler);
	pipeline__free(rec->pipeline);
	oracle__free(rec->oracle);
	walked__free(rec->walked);
	java__free(rec->java);
	aggregator__free(rec->agg);
	profile__free(rec->profile);
	symbolizer__free(rec->sym);
	kernel_symbols__close(rec->kernel_symbols);
	free(rec);
}

void recording__set_full(struct recording *rec, bool full)
{
	rec->config.full = full;
}

size_t recording__targets(const struct recording *rec, const uint32_t **tgids)
{
	*tgids = rec->tgids;
	return rec->nr_tgids;
}

enum recording_roots recording__roots(const struct recording *rec)
{
	return rec->config.all ? RECORDING_ROOT_NAME : rec->nr_tgids > 1 ? RECORDING_ROOT_PID : RECORDING_ROOT_NONE;
}

struct profile *recording__profile(const struct recording *rec)
{
	return rec->profile;
}

double recording__elapsed_s(const struct recording *rec)
{
	return rec->session.elapsed_s;
}

void recording__describe_targets(const struct recording *rec, char *buf, size_t size)
{
	size_t used = 0;

	if (rec->config.all) {
		snprintf(buf, size, "all processes");
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < rec->nr_tgids && used < size; i++) {
		const char *name = rec->sym ? symbolizer__process_name(rec->sym, rec->tgids[i]) : NULL;
		char safe[64]; /* a comm is 15 bytes; each may take 3 as U+FFFD */

		/* The name is the target's own choice (prctl PR_SET_NAME): no escapes reach the terminal. */
		used += (size_t)snprintf(buf + used, size - used, "%spid %u%s%s%s", i ? ", " : "", rec->tgids[i],
					 name ? " (" : "", name ? terminal__safe(name, safe, sizeof(safe)) : "",
					 name ? ")" : "");
	}
}

/*
 * With --java-stacks bpf, a JVM whose layout is understood has its Java
 * frames walked by BPF and takes nothing: true. Else (not a JVM, or one
 * not understood, said in one line) the agent's way; with both, the agent
 * too.
 */
static bool walk_by_bpf(struct recording *rec, uint32_t tgid, bool quiet)
{
	struct jbpf_hotspot_jvm jvm;
	char why[256];
	uint64_t start_ticks;
	enum walked_result rc;

	if (rec->config.java_stacks == RECORDING_JAVA_STACKS_AGENT || rec->config.unwind_fp ||
	    proc__start_time("/proc", tgid, &start_ticks))
		return false;
	rc = walked__add_jvm(rec->walked, "/proc", tgid, start_ticks, &jvm, why, sizeof(why));
	/* Found during the recording: the walker takes it now. */
	if (rc == WALKED_OK && rec->sampler && sampler__set_hotspot(rec->sampler, tgid, &jvm)) {
		walked__forget(rec->walked, tgid);
		snprintf(why, sizeof(why), "no room among the JVMs walked by BPF");
		rc = WALKED_NOT_UNDERSTOOD;
	}
	if (rc == WALKED_OK && rec->config.verbose)
		fprintf(stderr, "jbpfprof: JVM pid %u: Java frames walked by BPF\n", tgid);
	if (rc == WALKED_NOT_UNDERSTOOD && (!quiet || rec->config.verbose))
		fprintf(stderr, "jbpfprof: JVM pid %u: %s; its Java frames come from the agent\n", tgid, why);
	return rc == WALKED_OK && rec->config.java_stacks == RECORDING_JAVA_STACKS_BPF;
}

/*
 * A process watched since the start (a JVM still starting, a launcher)
 * or found during the recording: its frames walked by BPF as soon as its
 * layout can be read; until then, each try is quiet (a starting JVM has
 * no code cache yet), and the agent's tries go on.
 */
static bool adopt_jvm(void *ctx, uint32_t tgid)
{
	return walk_by_bpf(ctx, tgid, true);
}

/*
 * One process at the start: attached now if it is a live JVM, else
 * watched (java__watch) if it may become one during the recording: a JVM
 * still starting, a launcher, or (named with -p) any process, which may
 * exec java before the exec program is attached. Without --java a JVM that
 * refuses the agent is still profiled, with frame pointers and any perf
 * map.
 */
static void attach_at_start(struct recording *rec, uint32_t tgid, bool named)
{
	char err[512];
	int rc;

	if (walk_by_bpf(rec, tgid, !named))
		return;
	rc = java__attach(rec->java, tgid, err, sizeof(err));

	if (rc == JAVA_ATTACH_OK) {
		if (rec->config.verbose)
			fprintf(stderr, "jbpfprof: agent loaded into JVM pid %u\n", tgid);
	} else if (rc == JAVA_ATTACH_NOT_YET || (rc == JAVA_ATTACH_NOT_JVM && named)) {
		java__watch(rec->java, tgid);
	} else if (rc == JAVA_ATTACH_FAILED || (rc == JAVA_ATTACH_UNKNOWN && named)) {
		fprintf(stderr,
			"jbpfprof: cannot load the agent into pid %u: %s; profiling it without Java frames "
			"(frame pointers and any perf map)\n", tgid, err);
	}
}

/* --java: every target takes the agent before the recording starts, or the run ends. */
static int attach_required(struct recording *rec)
{
	char err[512];

	for (size_t i = 0; i < rec->nr_tgids; i++) {
		int rc;

		if (walk_by_bpf(rec, rec->tgids[i], false))
			continue;
		rc = java__attach_when_live(rec->java, rec->tgids[i], err, sizeof(err));
		if (rc == JAVA_ATTACH_OK)
			continue;
		if (rc == JAVA_ATTACH_NOT_JVM)
			fprintf(stderr, "jbpfprof: pid %u is not a Java virtual machine (no libjvm.so in its memory maps)\n",
				rec->tgids[i]);
		else
			fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * Loads the agent into every JVM among the targets (-p), or on the host
 * (-a), and has the Java side watch for those that start or exec later.
 */
static int attach_jvms(struct recording *rec)
{
	struct proc_ids processes;
	uint32_t self = (uint32_t)getpid(), tgid;

	if (rec->config.java == RECORDING_JAVA_OFF)
		return 0;
	java__watch_execs(rec->java, true);
	java__set_verbose(rec->java, rec->config.verbose);
	if (rec->config.java_stacks == RECORDING_JAVA_STACKS_BPF)
		java__set_adopter(rec->java, adopt_jvm, rec);
	if (rec->config.java == RECORDING_JAVA_REQUIRED && !rec->config.all)
		return attach_required(rec);
	if (!rec->config.all) {
		for (size_t i = 0; i < rec->nr_tgids; i++)
			attach_at_start(rec, rec->tgids[i], true);
		return 0;
	}
	if (proc__open_processes(&processes, "/proc"))
		return 0;
	while ((tgid = proc__next_id(&processes)))
		if (tgid != self)
			attach_at_start(rec, tgid, false);
	proc__close_ids(&processes);
	return 0;
}

/*
 * --continuous runs for days on hosts whose files come and go: the symbol
 * tables are bounded by bytes, the least recently used file's evicted and
 * parsed again when it is needed (the default bound, for a recording of
 * minutes, is 1 GiB).
 */
static const struct symbolizer_config continuous_symbols = { .max_bytes = 32u << 20 };

static int kernel_name(void *ctx, uint64_t addr, char *name, size_t size, uint64_t *start, uint64_t *end)
{
	return kernel_symbols__name(ctx, addr, name, size, start, end);
}

static int kernel_address(void *ctx, const char *name, uint64_t *start, uint64_t *end)
{
	return kernel_symbols__address(ctx, name, start, end);
}

/*
 * Kernel functions are named by asking the kernel, a few hundred questions
 * of a microsecond each, rather than by reading /proc/kallsyms (tens of
 * milliseconds of the kernel's formatting): kallsyms is the fallback.
 */
static int ask_kernel_for_symbols(struct recording *rec)
{
	struct symbolizer_kernel_lookup lookup = { .name = kernel_name, .address = kernel_address };

	if (kernel_symbols__open(&rec->kernel_symbols))
		return 0;
	lookup.ctx = rec->kernel_symbols;
	return symbolizer__set_kernel_lookup(rec->sym, &lookup);
}

/* The stages, from the aggregator (last) to the pipeline that feeds them. */
static int make_stages(struct recording *rec)
{
	const struct recording_config *c = &rec->config;
	struct aggregator_config agg_config = {
		.process_root = c->full ? AGGREGATOR_ROOT_PROCESS_PID
			       : c->all ? AGGREGATOR_ROOT_PROCESS_NAME
			       : rec->nr_tgids > 1 ? AGGREGATOR_ROOT_PROCESS_PID
						   : AGGREGATOR_ROOT_NONE,
		.thread_root = c->full || c->threads,
		.annotate = c->full || c->annotate,
		.modules = c->full,
		.time_weights = c->event != RECORDING_CPU,
		.state_mask = c->state_mask,
		.sample_weight_ns = c->interval_ns && c->event != RECORDING_CPU ? NS_PER_SEC / c->frequency_hz : 0,
	};

	rec->sym = symbolizer__new(c->interval_ns ? &continuous_symbols : NULL);
	rec->profile = profile__new(NULL);
	if (!rec->sym || !rec->profile || ask_kernel_for_symbols(rec))
		return -ENOMEM;
	/* Read the targets' maps now, so a target that exits early still resolves. */
	for (size_t i = 0; i < rec->nr_tgids; i++)
		symbolizer__add_process(rec->sym, rec->tgids[i]);
	rec->agg = aggregator__new(&agg_config, rec->sym, rec->profile);
	if (!rec->agg)
		return -ENOMEM;
	rec->java = java__new(rec->agg, rec->sym);
	if (!rec->java)
		return -ENOMEM;
	java__want_nmethods(rec->java, agg_config.annotate);
	rec->walked = walked__new(rec->agg, rec->sym);
	rec->pipeline = pipeline__new(rec->agg, rec->java);
	if (!rec->walked || !rec->pipeline)
		return -ENOMEM;
	pipeline__set_walked(rec->pipeline, rec->walked);
	if (c->java_stacks == RECORDING_JAVA_STACKS_BOTH) {
		rec->oracle = oracle__new(rec->walked);
		if (!rec->oracle)
			return -ENOMEM;
		java__observe_traces(rec->java, oracle__compare, rec->oracle);
	}
	if (c->event != RECORDING_CPU) {
		struct wall_config wall_config = {
			.offcpu_only = c->event == RECORDING_OFFCPU,
			.min_block_ns = c->min_block_ns,
			.max_block_ns = c->max_block_ns,
		};

		if (pipeline__add_wall(rec->pipeline, &wall_config))
			return -ENOMEM;
		wall__set_sample_period(pipeline__wall(rec->pipeline), NS_PER_SEC / c->frequency_hz);
	}
	return 0;
}

/*
 * What was taken and lost since the last cut, e.g. "1900 samples taken,
 * 1900 written, 0 lost": the same counts as the summary, as differences.
 */
static void interval_summary(struct recording *rec, const uint64_t *counters, const struct aggregator_stats *agg,
			     const struct pipeline_stats *ps, char *buf, size_t size)
{
	const uint64_t *was = rec->cut_counters;
	uint64_t ring = counters[JBPF_CNT_RINGBUF_FULL] - was[JBPF_CNT_RINGBUF_FULL];
	uint64_t full = agg->profile_full - rec->cut_agg.profile_full;
	uint64_t malformed = ps->malformed - rec->cut_pipeline.malformed;
	uint64_t waits = counters[JBPF_CNT_WAITS_LOST] - was[JBPF_CNT_WAITS_LOST];
	const struct named_count causes[] = {
		{ "ring buffer full", ring },
		{ "profile full", full },
		{ "malformed", malformed },
		{ "waits lost", waits },
	};
	uint64_t lost = ring + full + malformed + waits;
	size_t used;

	used = (size_t)snprintf(buf, size, "%llu samples taken, %llu written, %llu lost",
				(unsigned long long)(counters[JBPF_CNT_SAMPLES] - was[JBPF_CNT_SAMPLES]),
				(unsigned long long)(agg->written - rec->cut_agg.written), (unsigned long long)lost);
	if (lost && used < size) {
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			snprintf(buf + used, size - used, ")");
	}
}

/*
 * At a cut, what is kept per process and per thread forgets those gone
 * (every sample taken so far is resolved: the cut follows a drain), so a
 * recording of days holds the host's processes, not its history, and the
 * symbolizer drops the files no sample of the interval used; the unwinder
 * drops exited processes by itself (unwinder__tick). Appends to
 * buf what is held now: "; held: N processes (symbolizer), N unwind
 * lists[, N threads]".
 */
static void forget_gone(struct recording *rec, bool last, char *buf, size_t size)
{
	const struct unwinder *u = rec->sampler ? sampler__unwinder(rec->sampler) : NULL;
	struct wall *wall = pipeline__wall(rec->pipeline);
	struct symbolizer_stats ss;
	struct unwinder_stats us = { 0 };
	size_t used = strlen(buf);

	symbolizer__forget_gone(rec->sym);
	/* Files no sample used in the interval: not after the last, whose figures -v prints. */
	if (!last)
		symbolizer__forget_unused_files(rec->sym);
	symbolizer__stats(rec->sym, &ss);
	if (u)
		unwinder__stats(u, &us);
	if (used < size)
		used += (size_t)snprintf(buf + used, size - used, "; held: %llu processes (symbolizer), %llu unwind lists",
					 (unsigned long long)ss.processes_held, (unsigned long long)us.processes);
	if (wall && used < size) {
		struct wall_stats ws;

		wall__forget_exited(wall);
		wall__stats(wall, &ws);
		snprintf(buf + used, size - used, ", %llu threads", (unsigned long long)ws.threads);
	}
}

/*
 * The interval cut: the profile so far is handed over and the aggregator
 * goes on into a fresh one. Called by the session right after a drain, so
 * each record is in exactly one interval: the one it was drained in.
 */
static void cut_interval(struct recording *rec, bool last)
{
	struct recording_interval iv = { .from_unix_ns = rec->interval_from_unix_ns, .last = last };
	struct profile *old = rec->profile, *fresh = NULL;
	uint64_t counters[JBPF_CNT_NR];
	struct aggregator_stats agg;
	struct pipeline_stats ps;
	char summary[512];

	if (!last) {
		fresh = profile__new(NULL);
		if (!fresh || aggregator__set_profile(rec->agg, fresh)) {
			/* Not cut: the interval goes on into the next, none is lost. */
			profile__free(fresh);
			rec->intervals_skipped++;
			return;
		}
		java__forget_frame_ids(rec->java);
		rec->profile = fresh;
	}
	iv.until_unix_ns = clock_realtime_ns();
	sampler__counters(rec->sampler, counters);
	aggregator__stats(rec->agg, &agg);
	pipeline__stats(rec->pipeline, &ps);
	interval_summary(rec, counters, &agg, &ps, summary, sizeof(summary));
	forget_gone(rec, last, summary, sizeof(summary));
	iv.summary = summary;
	rec->config.on_interval(rec->config.interval_ctx, old, &iv);
	if (!last) {
		profile__free(old);
		/*
		 * The interval's profile and what forget_gone let go were the
		 * heap's largest blocks: glibc keeps freed memory (its trim
		 * threshold rises with every large block freed), so it is given
		 * back here, once per interval, or the RSS of a recording of days
		 * would stay at its busiest interval's.
		 */
		malloc_trim(0);
	}
	memcpy(rec->cut_counters, counters, sizeof(counters));
	rec->cut_agg = agg;
	rec->cut_pipeline = ps;
	rec->interval_from_unix_ns = iv.until_unix_ns;
}

/*
 * The ring buffer for CPU samples alone: RING_SECONDS of samples of every
 * CPU at the frequency, each at most RING_SAMPLE_BYTES, as a power of two
 * within [RING_MIN_BYTES, 16 MiB]. The session drains it every 100 ms; the
 * rest is room for a loop busy building tables. The kernel maps the whole
 * ring into this process twice over, so at 19 Hz the default 16 MiB would
 * be 32 MiB of RSS for some 40 KiB a second. With wait records (-e wall,
 * -e offcpu: one per context switch) the rate is not bounded by the
 * frequency: the sampler's default (16 MiB).
 */
/* JVMs on a host whose Java frames BPF walks at once (-a); later ones keep their native frames. */
#define MAX_WALKED_JVMS 1024

#define RING_SECONDS 4
#define RING_SAMPLE_BYTES 2048
#define RING_MIN_BYTES (256u << 10)
#define RING_MAX_BYTES (16u << 20)

static size_t ring_bytes(const struct recording_config *c, bool waits)
{
	int cpus = libbpf_num_possible_cpus();
	uint64_t want, size = RING_MIN_BYTES;

	if (waits || cpus <= 0 || !c->frequency_hz)
		return 0;
	want = (uint64_t)cpus * c->frequency_hz * RING_SAMPLE_BYTES * RING_SECONDS;
	while (size < want && size < RING_MAX_BYTES)
		size <<= 1;
	return (size_t)size;
}

static void on_interval(void *ctx)
{
	cut_interval(ctx, false);
}

static void say_what_is_sampled(const struct recording *rec)
{
	const struct recording_config *c = &rec->config;
	char targets[256], duration[64];

	recording__describe_targets(rec, targets, sizeof(targets));
	if (c->duration_ns)
		snprintf(duration, sizeof(duration), "for %g s", (double)c->duration_ns / 1e9);
	else
		snprintf(duration, sizeof(duration), "until Ctrl-C");
	if (c->event == RECORDING_OFFCPU)
		fprintf(stderr, "jbpfprof: sampling %s off CPU, every context switch, %s%s\n", targets, duration,
			java__nr_jvms(rec->java) ? ", with Java frames" : "");
	else
		fprintf(stderr, "jbpfprof: sampling %s at %u Hz%s on %u CPUs%s %s%s\n", targets, c->frequency_hz,
			c->fixed_interval ? " (fixed interval)" : "", sampler__cpus(rec->sampler),
			c->event == RECORDING_WALL ? " and every context switch" : "", duration,
			java__nr_jvms(rec->java) ? ", with Java frames" : "");
}

/* The session watches every target: say what is sampled (see session_config.on_started). */
static void on_started(void *ctx)
{
	say_what_is_sampled(ctx);
}

/*
 * Where the kernel's system call path and entry code lie, so that the BPF
 * side can tell a thread inside a system call (in_system_call in
 * bpf/shared.bpf.h). Left 0 when kallsyms does not say; the BPF side then
 * goes by the task's entry registers alone. And whether the kernel has BPF
 * task work, from the same symbols.
 */
static void kernel_entry_ranges(struct symbolizer *sym, struct sampler_config *config)
{
	uint64_t start, end, unused;

	/*
	 * The kfunc bpf/deferral.bpf.h calls is a kernel function like any
	 * other, so in the symbols too; unless they cannot be read at all.
	 */
	config->task_work_known =
		!symbolizer__kernel_symbol(sym, "do_syscall_64", &config->syscall_entry_lo, &config->syscall_entry_hi);
	config->has_task_work = config->task_work_known &&
				!symbolizer__kernel_symbol(sym, "bpf_task_work_schedule_resume_impl", &start, &unused);
	if (!symbolizer__kernel_symbol(sym, "__entry_text_start", &start, &unused) &&
	    !symbolizer__kernel_symbol(sym, "__entry_text_end", &end, &unused) && start < end) {
		config->entry_text_lo = start;
		config->entry_text_hi = end;
	}
}

int recording__run(struct recording *rec)
{
	const struct recording_config *c = &rec->config;
	struct sampler_java_target java_targets[JBPF_MAX_TARGETS];
	struct sampler_config sampler_config = {
		.tgids = rec->tgids,
		.start_ticks = rec->start_ticks,
		.nr_tgids = rec->nr_tgids,
		.frequency_hz = c->frequency_hz,
		.fixed_interval = c->fixed_interval,
		.verbose = c->verbose,
		.unwind_tables = !c->unwind_fp,
		.on_record = pipeline__record,
	};
	struct session_config session_config = {
		.duration_ns = c->duration_ns,
		.tgids = rec->tgids,
		.start_ticks = rec->start_ticks,
		.nr_tgids = rec->nr_tgids,
		.progress = isatty(STDERR_FILENO) && !c->interval_ns,
		.interval_ns = c->interval_ns,
		.on_interval = on_interval,
		.interval_ctx = rec,
		.on_started = on_started,
	};
	struct wall *wall;
	char err[512];
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

	if (make_stages(rec)) {
		fprintf(stderr, "jbpfprof: out of memory\n");
		return -1;
	}
	wall = pipeline__wall(rec->pipeline);
	if (wall) {
		sampler_config.waits = true;
		sampler_config.no_cpu_samples = c->event == RECORDING_OFFCPU;
		/* One recorded wait per wait interval of a thread's waiting (see bpf/offcpu.bpf.c). */
		sampler_config.full_wait_ns = c->wait_interval_ns ? c->wait_interval_ns : NS_PER_SEC / c->frequency_hz;
		sampler_config.min_block_ns = c->min_block_ns;
		sampler_config.max_block_ns = c->max_block_ns;
	}
	sampler_config.ringbuf_bytes = ring_bytes(c, wall != NULL);
	if (attach_jvms(rec))
		return -1;
	sampler_config.java = java_targets;
	sampler_config.nr_java = java__targets(rec->java, java_targets, JBPF_MAX_TARGETS);
	/* Loaded whenever a JVM may be walked: one may start or exec during the recording. */
	sampler_config.max_hotspot_jvms = c->java == RECORDING_JAVA_OFF || c->java_stacks == RECORDING_JAVA_STACKS_AGENT
						  ? 0
					  : c->all ? MAX_WALKED_JVMS
						   : rec->nr_tgids;
	sampler_config.ctx = rec->pipeline;
	/* A JVM may take the agent during the recording too: its deferred signals need the range. */
	if (c->java != RECORDING_JAVA_OFF || sampler_config.waits)
		kernel_entry_ranges(rec->sym, &sampler_config);
	if (sampler__open(&sampler_config, &rec->sampler, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	pipeline__set_unwinder(rec->pipeline, sampler__unwinder(rec->sampler));
	walked__install(rec->walked, rec->sampler);
	if (wall) {
		wall__start(wall, sampler__started_ns(rec->sampler));
		wall__seed(wall, rec->sampler, c->all ? NULL : rec->tgids, c->all ? 0 : rec->nr_tgids);
	}
	java__set_sampler(rec->java, rec->sampler);
	rec->interval_from_unix_ns = clock_realtime_ns();
	error = session__run(rec->sampler, rec->pipeline, &session_config, &rec->session, err, sizeof(err));
	sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
	if (error) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	sampler__counters(rec->sampler, rec->counters);
	rec->base_period_ns = sampler__base_period_ns(rec->sampler);
	if (c->interval_ns)
		cut_interval(rec, true);
	return 0;
}

/* ---- what the recording says ---- */

uint64_t recording__written(const struct recording *rec)
{
	return pipeline__written(rec->pipeline);
}

/* The losses and damage, e.g. "lost 3 (ring buffer full 3)"; empty when none. */
static void describe_losses(const struct recording *rec, const struct aggregator_stats *stats,
			    const struct pipeline_stats *ps, const struct symbolizer_stats *sym, uint64_t unaccounted,
			    char *buf, size_t size)
{
	uint64_t lost = rec->counters[JBPF_CNT_RINGBUF_FULL] + stats->profile_full + ps->malformed + unaccounted;
	size_t used;

	used = (size_t)snprintf(buf, size, "%llu lost", (unsigned long long)lost);
	if (lost) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_RINGBUF_FULL] },
			{ "profile full", stats->profile_full },
			{ "malformed", ps->malformed },
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
		used += (size_t)snprintf(buf + used, size - used, "; %llu without a kernel stack",
					 (unsigned long long)stats->no_kernel_stack);
	if (sym->tables_refused && used < size)
		snprintf(buf + used, size - used, "; %llu symbol tables not read (over the memory bound: "
			 "their frames are file+offset)", (unsigned long long)sym->tables_refused);
}

/*
 * The wall-clock part of the summary: the window, the waits, and what of
 * them was lost, e.g. "; window 30.002 s, 1200 threads, 5400 waits (3 lost)".
 */
static void describe_wall(const struct recording *rec, const struct wall *wall, char *buf, size_t size)
{
	struct wall_stats ws;
	uint64_t lost;
	size_t used;

	wall__stats(wall, &ws);
	lost = rec->counters[JBPF_CNT_WAITS_LOST] + ws.ends_lost;
	used = (size_t)snprintf(buf, size, "; window %.3f s, %llu threads, %llu waits",
				(double)wall__window_ns(wall) / 1e9, (unsigned long long)ws.threads,
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
					 "; %llu context switches not seen (%llu waits ended at the return to user mode "
					 "with their user stack, %llu sent without stacks, the rest dropped)",
					 (unsigned long long)rec->counters[JBPF_CNT_SWITCH_MISSED],
					 (unsigned long long)rec->counters[JBPF_CNT_SWITCH_IN_LATE],
					 (unsigned long long)rec->counters[JBPF_CNT_WAIT_NO_STACKS]);
	if (rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu threads not followed (table full)",
					 (unsigned long long)(rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full));
	if (ws.no_user_stack && used < size)
		snprintf(buf + used, size - used, "; %llu waits without their user stack",
			 (unsigned long long)ws.no_user_stack);
}

/*
 * How the user stacks of CPU samples were walked, with unwind tables, e.g.
 * "; user stacks: 980 wholly by unwind tables, 20 in part by frame
 * pointers or cut short (JIT or anonymous code 15, read failed 5)"; empty with
 * --unwind fp.
 */
static void describe_unwind(const struct recording *rec, char *buf, size_t size)
{
	const struct unwinder *u = rec->sampler ? sampler__unwinder(rec->sampler) : NULL;
	struct unwinder_stats us;
	const uint64_t *c = rec->counters;
	uint64_t fp = c[JBPF_CNT_UNWIND_NO_PROCESS] + c[JBPF_CNT_UNWIND_ANON] + c[JBPF_CNT_UNWIND_NO_INFO] +
		      c[JBPF_CNT_UNWIND_STOP] + c[JBPF_CNT_UNWIND_READ] + c[JBPF_CNT_UNWIND_DEPTH];
	const struct named_count causes[] = {
		{ "no tables yet", c[JBPF_CNT_UNWIND_NO_PROCESS] },
		{ "JIT or anonymous code", c[JBPF_CNT_UNWIND_ANON] },
		{ "file without unwind info", c[JBPF_CNT_UNWIND_NO_INFO] },
		{ "expression row", c[JBPF_CNT_UNWIND_STOP] },
		{ "read failed", c[JBPF_CNT_UNWIND_READ] },
		{ "depth limit", c[JBPF_CNT_UNWIND_DEPTH] },
	};
	size_t used;

	buf[0] = '\0';
	if (rec->config.unwind_fp || !(fp + c[JBPF_CNT_UNWIND_TABLES]))
		return;
	used = (size_t)snprintf(buf, size,
				"; user stacks: %llu wholly by unwind tables, %llu in part by frame pointers or cut short",
				(unsigned long long)c[JBPF_CNT_UNWIND_TABLES], (unsigned long long)fp);
	used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
	if (fp && used < size)
		used += (size_t)snprintf(buf + used, size - used, ")");
	/* A table left out for room shows above as a file without unwind info: say which it was. */
	if (u)
		unwinder__stats(u, &us);
	if (u && us.rows_full && used < size)
		snprintf(buf + used, size - used, "; %llu unwind tables left out, no room in %.0f MiB of BPF memory",
			 (unsigned long long)us.rows_full, (double)us.row_bytes / (1 << 20));
}

void recording__summary(const struct recording *rec, char *buf, size_t size)
{
	const struct wall *wall = pipeline__wall(rec->pipeline);
	struct aggregator_stats stats;
	struct symbolizer_stats sym;
	struct pipeline_stats ps;
	char losses[512], java_line[1536], wall_line[512], unwind_line[256], attach_line[256];
	uint64_t taken = rec->counters[JBPF_CNT_SAMPLES], unaccounted;

	aggregator__stats(rec->agg, &stats);
	pipeline__stats(rec->pipeline, &ps);
	/* Every sample taken is written or lost for a counted reason; say so if not. */
	unaccounted = taken - rec->counters[JBPF_CNT_RINGBUF_FULL] - stats.received - ps.malformed_samples;
	if (unaccounted > taken)
		unaccounted = 0;
	memset(&sym, 0, sizeof(sym));
	if (rec->sym)
		symbolizer__stats(rec->sym, &sym);
	describe_losses(rec, &stats, &ps, &sym, unaccounted, losses, sizeof(losses));
	java_line[0] = '\0';
	attach_line[0] = '\0';
	if (rec->java && java__nr_jvms(rec->java))
		java__describe(rec->java, java_line, sizeof(java_line));
	if (walked__nr_jvms(rec->walked)) {
		size_t used = strlen(java_line);

		walked__describe(rec->walked, java_line + used + (used ? 2 : 0), sizeof(java_line) - used - 2);
		if (used)
			memcpy(java_line + used, "; ", 2);
	}
	if (rec->oracle) {
		size_t used = strlen(java_line);

		oracle__describe(rec->oracle, java_line + used + (used ? 2 : 0), sizeof(java_line) - used - 2);
		if (used && java_line[used + 2])
			memcpy(java_line + used, "; ", 2);
	}
	if (rec->java && rec->config.java != RECORDING_JAVA_OFF)
		java__describe_attach(rec->java, rec->config.all, attach_line, sizeof(attach_line));
	wall_line[0] = '\0';
	if (wall)
		describe_wall(rec, wall, wall_line, sizeof(wall_line));
	describe_unwind(rec, unwind_line, sizeof(unwind_line));
	snprintf(buf, size, "%llu samples taken, %llu written, %s%s%s%s%s%s", (unsigned long long)taken,
		 (unsigned long long)stats.written, losses, unwind_line, wall_line, java_line[0] ? "; " : "", java_line,
		 attach_line);
}

/* -v: the unwind tables, in BPF and in the cache they are built into. */
static void print_unwind_stats(const struct recording *rec)
{
	const struct unwinder *u = rec->sampler ? sampler__unwinder(rec->sampler) : NULL;
	struct unwind_cache_stats cs;
	struct unwinder_stats us;

	if (!u)
		return;
	unwinder__stats(u, &us);
	unwind_cache__stats(unwinder__cache(u), &cs);
	fprintf(stderr,
		"jbpfprof: unwind tables: %llu processes listed (%llu lists written, %llu maps re-read, "
		"%llu misses, %llu not listed: map full, %llu cut to %u mappings), %llu files with %llu rows placed "
		"(%.1f of %.1f MiB, %.1f MiB mapped here; %llu did not fit), %llu mappings without a table\n",
		(unsigned long long)us.processes, (unsigned long long)us.lists_written,
		(unsigned long long)us.rereads, (unsigned long long)us.misses, (unsigned long long)us.processes_full,
		(unsigned long long)us.lists_truncated, JBPF_UNWIND_MAX_MAPPINGS,
		(unsigned long long)us.files, (unsigned long long)us.rows,
		(double)us.row_bytes_used / (1 << 20), (double)us.row_bytes / (1 << 20),
		(double)us.row_bytes_mapped / (1 << 20), (unsigned long long)us.rows_full, (unsigned long long)us.mappings_no_table);
	fprintf(stderr,
		"jbpfprof: unwind table cache: %llu tables built in %.1f ms (%llu read from disk, %llu kept there; "
		"%llu without usable CFI, %llu evicted), %llu held with %llu rows in %.1f MiB\n",
		(unsigned long long)cs.built, (double)cs.build_ns / 1e6, (unsigned long long)cs.disk_read,
		(unsigned long long)cs.disk_written, (unsigned long long)cs.failed,
		(unsigned long long)cs.evicted, (unsigned long long)cs.tables, (unsigned long long)cs.rows,
		(double)cs.bytes / (1 << 20));
}

static int by_run_time(const void *a, const void *b)
{
	const struct loader_run_time *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/*
 * -v: what the BPF programs cost, in the threads they ran in, as the
 * kernel counts it; it counts only while kernel.bpf_stats_enabled is 1,
 * since counting costs each run two clock reads.
 */
static void print_bpf_run_time(const struct recording *rec)
{
	struct loader_run_time times[16];
	char line[1024];
	uint64_t ns = 0, runs = 0;
	size_t nr, used = 0;
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int enabled = 0;

	if (f) {
		if (fscanf(f, "%d", &enabled) != 1)
			enabled = 0;
		fclose(f);
	}
	if (!enabled) {
		fprintf(stderr, "jbpfprof: BPF run time not counted (sysctl kernel.bpf_stats_enabled=1 counts it)\n");
		return;
	}
	nr = sampler__run_times(rec->sampler, times, sizeof(times) / sizeof(times[0]));
	qsort(times, nr, sizeof(times[0]), by_run_time);
	line[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		ns += times[i].ns;
		runs += times[i].runs;
		if (times[i].runs && used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s %.1f ms (%llu runs, %.0f ns each)",
						 used ? ", " : "", times[i].name, (double)times[i].ns / 1e6,
						 (unsigned long long)times[i].runs,
						 (double)times[i].ns / (double)times[i].runs);
	}
	fprintf(stderr, "jbpfprof: BPF run time %.1f ms in %llu runs: %s\n", (double)ns / 1e6,
		(unsigned long long)runs, line);
}

/* -v: what the recording cost this process, and how the caches fared. */
static void print_verbose_stats(const struct recording *rec)
{
	const struct wall *wall = pipeline__wall(rec->pipeline);
	struct symbolizer_stats sym;
	struct aggregator_stats agg;
	struct rusage usage;
	double cpu_s;

	if (getrusage(RUSAGE_SELF, &usage) == 0) {
		cpu_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
			(double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "jbpfprof: own CPU time %.3f s (%.2f%% of one CPU over %.1f s)\n", cpu_s,
			rec->session.elapsed_s > 0 ? 100.0 * cpu_s / rec->session.elapsed_s : 0.0,
			rec->session.elapsed_s);
	}
	if (rec->sampler)
		print_bpf_run_time(rec);
	aggregator__stats(rec->agg, &agg);
	fprintf(stderr,
		"jbpfprof: BPF ticks %llu (%llu thinned out), samples kept %llu, base period %llu ns, execs %llu "
		"(%llu lost)\n",
		(unsigned long long)rec->counters[JBPF_CNT_TICKS],
		(unsigned long long)rec->counters[JBPF_CNT_TICKS_THINNED],
		(unsigned long long)rec->counters[JBPF_CNT_SAMPLES],
		(unsigned long long)rec->base_period_ns, (unsigned long long)agg.execs,
		(unsigned long long)rec->counters[JBPF_CNT_EXEC_LOST]);
	fprintf(stderr, "jbpfprof: deferred signals and stacks: %s; %llu Java signals deferred\n",
		sampler__deferral_name(rec->sampler), (unsigned long long)rec->counters[JBPF_CNT_JAVA_DEFERRED]);
	if (wall) {
		struct wall_stats ws;

		wall__stats(wall, &ws);
		fprintf(stderr, "jbpfprof: window: %llu us\n", (unsigned long long)((wall__window_ns(wall) + 500) / 1000));
		fprintf(stderr,
			"jbpfprof: context switches %llu, waits sent %llu, handed on %llu (%llu at the end), "
			"dropped by --min/max-block %llu, shares lost %llu\n",
			(unsigned long long)rec->counters[JBPF_CNT_SWITCHES],
			(unsigned long long)rec->counters[JBPF_CNT_WAITS_SENT], (unsigned long long)ws.waits,
			(unsigned long long)ws.waits_at_end, (unsigned long long)ws.filtered,
			(unsigned long long)agg.shares_lost);
	}
	if (rec->java && java__nr_jvms(rec->java)) {
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
	print_unwind_stats(rec);
	symbolizer__stats(rec->sym, &sym);
	fprintf(stderr,
		"jbpfprof: symbolizer: %llu lookups (%llu unresolved), %llu maps reads, %llu files parsed "
		"(%llu failed, %llu evicted, %llu forgotten unused, %llu refused), %llu processes evicted, "
		"%.1f MiB of tables held\n",
		(unsigned long long)sym.lookups, (unsigned long long)sym.unknown,
		(unsigned long long)sym.processes_loaded, (unsigned long long)sym.files_loaded,
		(unsigned long long)sym.files_failed, (unsigned long long)sym.files_evicted,
		(unsigned long long)sym.files_forgotten,
		(unsigned long long)sym.tables_refused, (unsigned long long)sym.processes_evicted,
		(double)sym.bytes_held / (1 << 20));
	fprintf(stderr, "jbpfprof: kernel symbols: %s, %llu questions to the kernel\n",
		sym.kernel_source == SYMBOLIZER_KERNEL_KALLSYMS ? "/proc/kallsyms read"
		: rec->kernel_symbols				? "asked of the kernel (BPF)"
								: "none needed",
		(unsigned long long)sym.kernel_asked);
}

void recording__report(const struct recording *rec)
{
	if (!recording__written(rec))
		fprintf(stderr, "jbpfprof: no samples: %s on a CPU while recording\n",
			rec->config.all ? "no process ran" : rec->nr_tgids > 1 ? "the targets did not run" : "the target did not run");
	if (rec->config.verbose)
		print_verbose_stats(rec);
	if (rec->session.nr_exited && rec->nr_tgids)
		fprintf(stderr, "jbpfprof: %s exited during the recording; the profile covers the time before\n",
			rec->session.all_exited && rec->nr_tgids == 1 ? "the target" : "some targets");
}
