/*
 * recording: the core of one recording (contract in recording.h, the
 * files' roles in recording_internal.h): the targets resolved, the stages
 * set up, the sampler opened and the session run; with --continuous, the
 * profile cut at each interval and handed over with the interval's own
 * counts.
 */
#include "user/session/recording_internal.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/clock.h"
#include "common/counts.h"
#include "common/terminal.h"
#include "symbolizer/symbolizer.h"
#include "user/java/java.h"
#include "user/java/oracle.h"
#include "user/java/starting.h"
#include "user/java/walked.h"
#include "user/record/checks.h"
#include "user/record/kernel_symbols.h"
#include "user/record/leaks.h"
#include "user/record/loader.h"
#include "user/record/nativemem.h"
#include "user/record/sampler.h"
#include "user/record/unwinder.h"
#include "user/record/wall.h"

/* -e nativemem --leaks: records held until freed (user/record/leaks.h), about 64 thousand of 1 KiB. */
#define LEAKS_MAX_BYTES (64u << 20)

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
	/* The walk by unwind tables, and through HotSpot's frames, is a bpf_loop: without it, frame pointers. */
	if (!rec->config.unwind_fp && !loader__has_bpf_loop())
		rec->config.unwind_fp = true;
	/*
	 * -e lock tells a lock's waits by HotSpot's frames and reads the
	 * monitor's class at the switch-out, both from BPF's walk: without
	 * bpf_loop it would record nothing. Refused alone; an event beside it
	 * goes on.
	 */
	if (recording__config_has(&rec->config, RECORDING_LOCK) && !loader__has_bpf_loop()) {
		loader__note_unavailable("-e lock", "it needs Java frames walked by BPF, and that needs bpf_loop (Linux 5.17)");
		rec->config.events &= ~RECORDING_EVENT(RECORDING_LOCK);
		if (!rec->config.events) {
			free(rec);
			return NULL;
		}
	}
	rec->start_ns = clock__monotonic_ns();
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
	leaks__free(rec->leaks);
	oracle__free(rec->oracle);
	walked__free(rec->walked);
	starting__free(rec->starting);
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

enum view_process_root recording__roots(const struct recording *rec)
{
	if (rec->config.group_by_given)
		return rec->config.group_by;
	return rec->config.all || rec->nr_tgids > 1 ? VIEW_ROOT_PROCESS : VIEW_ROOT_NONE;
}

struct profile *recording__profile(const struct recording *rec)
{
	return rec->profile;
}

int64_t recording__start_unix_ns(const struct recording *rec)
{
	return rec->start_unix_ns;
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

/* Whether the recording weighs time: waits and CPU samples both (-e wall, -e offcpu, -e lock). */
static bool weighs_time(const struct recording_config *c)
{
	return recording__config_has(c, RECORDING_WALL) || recording__config_has(c, RECORDING_OFFCPU) ||
	       recording__config_has(c, RECORDING_LOCK);
}

/* Off-CPU time only: -e offcpu, -e lock. */
static bool off_cpu_only(const struct recording_config *c)
{
	return recording__config_has(c, RECORDING_OFFCPU) || recording__config_has(c, RECORDING_LOCK);
}

const char *recording__event_word(enum recording_event event, bool leaks)
{
	static const char *const words[] = {
		[RECORDING_CPU] = "cpu",
		[RECORDING_WALL] = "wall",
		[RECORDING_OFFCPU] = "offcpu",
		[RECORDING_ALLOC] = "alloc",
		[RECORDING_NATIVEMEM] = "nativemem",
		[RECORDING_LOCK] = "lock",
	};

	if (event == RECORDING_NATIVEMEM && leaks)
		return "leaks";
	return (unsigned)event < sizeof(words) / sizeof(words[0]) ? words[event] : "cpu";
}

/*
 * With several events, the frame each one's stacks begin with
 * (aggregator_config.event_frames): the event's word.
 */
static void name_event_frames(const struct recording_config *c, struct aggregator_config *agg)
{
	if (!(c->events & (c->events - 1)))
		return;
	for (int e = RECORDING_CPU; e <= RECORDING_LOCK; e++)
		if (e != RECORDING_ALLOC && e != RECORDING_NATIVEMEM && recording__config_has(c, (enum recording_event)e))
			agg->event_frames[AGGREGATOR_TIME] = recording__event_word((enum recording_event)e, false);
	if (recording__config_has(c, RECORDING_ALLOC))
		agg->event_frames[AGGREGATOR_HEAP] = recording__event_word(RECORDING_ALLOC, false);
	if (recording__config_has(c, RECORDING_NATIVEMEM))
		agg->event_frames[AGGREGATOR_NATIVE] = recording__event_word(RECORDING_NATIVEMEM, c->leaks);
}

/*
 * One recorded wait per wait interval of a thread's waiting (see
 * bpf/offcpu.bpf.c); with -e lock every wait: which are for a lock is
 * known only from their stacks.
 */
static uint64_t full_wait_ns(const struct recording_config *c)
{
	if (recording__config_has(c, RECORDING_LOCK))
		return 1;
	return c->wait_interval_ns ? c->wait_interval_ns : NS_PER_SEC / c->frequency_hz;
}

/* The stages, from the aggregator (last) to the pipeline that feeds them. */
static int make_stages(struct recording *rec)
{
	const struct recording_config *c = &rec->config;
	struct aggregator_config agg_config = {
		.process_root = c->full ? VIEW_ROOT_PROCESS : recording__roots(rec),
		.thread_root = c->full || c->threads,
		.annotate = c->full || c->annotate,
		/* pprof (full, and --continuous's) and JFR carry lines always; the others with --lines. */
		.positions = c->full || c->interval_ns || c->lines,
		.modules = c->full,
		.time_weights = weighs_time(c),
		.state_mask = c->state_mask,
		.sample_weight_ns = c->interval_ns && weighs_time(c) ? NS_PER_SEC / c->frequency_hz : 0,
		.lock_view = recording__config_has(c, RECORDING_LOCK),
		.alloc_interval = c->alloc_interval,
	};

	name_event_frames(c, &agg_config);
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
	if (recording__config_has(c, RECORDING_ALLOC))
		java__sample_allocations(rec->java, c->alloc_interval);
	if (!(c->events & ~(RECORDING_EVENT(RECORDING_ALLOC) | RECORDING_EVENT(RECORDING_NATIVEMEM))))
		java__without_signals(rec->java);
	rec->walked = walked__new(rec->agg);
	rec->pipeline = pipeline__new(rec->agg, rec->java);
	rec->starting = starting__new();
	if (!rec->walked || !rec->pipeline || !rec->starting)
		return -ENOMEM;
	pipeline__set_walked(rec->pipeline, rec->walked, rec->starting);
	/* -e lock: BPF reads each wait's monitor through its thread's JavaThread. */
	if (recording__config_has(c, RECORDING_LOCK))
		walked__follow_threads(rec->walked);
	if (recording__config_has(c, RECORDING_NATIVEMEM) && c->leaks) {
		rec->leaks = leaks__new(LEAKS_MAX_BYTES);
		if (!rec->leaks)
			return -ENOMEM;
		pipeline__set_leaks(rec->pipeline, rec->leaks);
	}
	if (c->java_stacks == RECORDING_JAVA_STACKS_BOTH) {
		rec->oracle = oracle__new(rec->walked);
		if (!rec->oracle)
			return -ENOMEM;
		java__observe_traces(rec->java, oracle__compare, rec->oracle);
	}
	if (weighs_time(c)) {
		struct wall_config wall_config = {
			.offcpu_only = off_cpu_only(c),
			.full_wait_ns = full_wait_ns(c),
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

	/* The cut, on both clocks: the next interval's timeline begins here. */
	uint64_t cut_ns = clock__monotonic_ns();
	int64_t cut_unix_ns = clock__realtime_ns();

	if (!last) {
		fresh = profile__new(NULL);
		if (fresh && !rec->config.no_times)
			profile__set_time_origin(fresh, cut_ns);
		if (!fresh || aggregator__set_profile(rec->agg, fresh)) {
			/* Not cut: the interval goes on into the next, none is lost. */
			profile__free(fresh);
			rec->intervals_skipped++;
			return;
		}
		java__forget_frame_ids(rec->java);
		walked__forget_frame_ids(rec->walked);
		rec->profile = fresh;
	}
	iv.until_unix_ns = cut_unix_ns;
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
/* -e nativemem: at the default interval 1 GB/s of allocations is 2000 samples a second, 1 KiB each at most. */
#define RING_NATIVEMEM_BYTES (4u << 20)
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

/* "sampling pid 12 at 99 Hz on 2 CPUs, and the native allocations of pid 12, ..., for 10 s, with Java frames" */
static void say_what_is_sampled(const struct recording *rec)
{
	const struct recording_config *c = &rec->config;
	char targets[256], what[1024] = "";
	size_t used = 0;

	recording__describe_targets(rec, targets, sizeof(targets));
	if (recording__config_has(c, RECORDING_LOCK))
		used += (size_t)snprintf(what + used, sizeof(what) - used,
					 "the Java threads of %s waiting for locks, every context switch", targets);
	else if (recording__config_has(c, RECORDING_OFFCPU))
		used += (size_t)snprintf(what + used, sizeof(what) - used, "%s off CPU, every context switch", targets);
	else if (recording__config_has(c, RECORDING_CPU) || recording__config_has(c, RECORDING_WALL))
		used += (size_t)snprintf(what + used, sizeof(what) - used, "%s at %u Hz%s on %u CPUs%s", targets,
					 c->frequency_hz, c->fixed_interval ? " (fixed interval)" : "",
					 sampler__cpus(rec->sampler),
					 recording__config_has(c, RECORDING_WALL) ? " and every context switch" : "");
	if (recording__config_has(c, RECORDING_ALLOC) && used < sizeof(what))
		used += (size_t)snprintf(what + used, sizeof(what) - used,
					 "%sthe Java heap allocations of %s, one per %u bytes on average", used ? ", and " : "",
					 targets, c->alloc_interval);
	if (recording__config_has(c, RECORDING_NATIVEMEM) && used < sizeof(what))
		snprintf(what + used, sizeof(what) - used, "%sthe native allocations of %s, one per %u bytes on average%s",
			 used ? ", and " : "", targets, c->alloc_interval, c->leaks ? ", each followed to its free" : "");
	if (c->duration_ns)
		fprintf(stderr, "jbpfprof: sampling %s, for %g s%s\n", what, (double)c->duration_ns / 1e9,
			java__nr_jvms(rec->java) || walked__nr_jvms(rec->walked) ? ", with Java frames" : "");
	else
		fprintf(stderr, "jbpfprof: sampling %s, until Ctrl-C%s\n", what,
			java__nr_jvms(rec->java) || walked__nr_jvms(rec->walked) ? ", with Java frames" : "");
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
	/* Where a wakeup from an interrupt shows it (bpf/offcpu_waker.bpf.h). */
	if (!symbolizer__kernel_symbol(sym, "__irqentry_text_start", &start, &unused) &&
	    !symbolizer__kernel_symbol(sym, "__irqentry_text_end", &end, &unused) && start < end) {
		config->irq_entry_lo = start;
		config->irq_entry_hi = end;
	}
	symbolizer__kernel_symbol(sym, "handle_softirqs", &config->softirq_lo, &config->softirq_hi);
}

/* sampler_config.before_start: the JVMs found so far handed to the walker (one not taken is named and left out). */
static int install_walked(void *ctx, struct sampler *sampler)
{
	walked__install(ctx, sampler);
	return 0;
}

/*
 * -e nativemem: each target's allocator probed; one that cannot be is
 * named in one line and the others recorded. -1 when none can be.
 */
static int probe_allocators(struct recording *rec)
{
	size_t probed = 0;
	char err[512];

	for (size_t i = 0; i < rec->nr_tgids; i++) {
		if (!sampler__probe_allocator(rec->sampler, "/proc", rec->tgids[i], err, sizeof(err)))
			probed++;
		else
			fprintf(stderr, "jbpfprof: pid %u: its native memory is not recorded: %s\n", rec->tgids[i], err);
	}
	if (!probed)
		fprintf(stderr, "jbpfprof: no target's allocator could be probed: nothing to record\n");
	return probed ? 0 : -1;
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
	struct nativemem_config nativemem_config = {
		.interval = c->alloc_interval,
		.leaks = c->leaks,
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
		sampler_config.no_cpu_samples = off_cpu_only(c);
		sampler_config.lock_classes = recording__config_has(c, RECORDING_LOCK);
		sampler_config.full_wait_ns = full_wait_ns(c);
		sampler_config.min_block_ns = c->min_block_ns;
		sampler_config.max_block_ns = c->max_block_ns;
		sampler_config.wakers = c->wakers;
	}
	/* Allocations come from the agents' sockets or the allocators' uprobes: no CPU samples of their own. */
	sampler_config.no_cpu_samples |= !recording__config_has(c, RECORDING_CPU) && !recording__config_has(c, RECORDING_WALL);
	/* 0: the sampler's default, the largest. */
	sampler_config.ringbuf_bytes = sampler_config.no_cpu_samples && !wall ? RING_MIN_BYTES : ring_bytes(c, wall != NULL);
	if (recording__config_has(c, RECORDING_NATIVEMEM)) {
		sampler_config.nativemem = &nativemem_config;
		if (sampler_config.ringbuf_bytes && sampler_config.ringbuf_bytes < RING_NATIVEMEM_BYTES)
			sampler_config.ringbuf_bytes = RING_NATIVEMEM_BYTES;
	}
	if (recording__attach_jvms(rec))
		return -1;
	/* Virtual threads' time unmounted: where a JVM walked by BPF is, or may come (the probes go on JVMs alone). */
	sampler_config.vthreads =
		wall && !c->no_unmounted && (c->all || walked__nr_jvms(rec->walked) || rec->jvms_starting);
	sampler_config.java = java_targets;
	sampler_config.nr_java = java__targets(rec->java, java_targets, JBPF_MAX_TARGETS);
	/* The unmounted time is told from BPF's walk: the agent that stands in without bpf_loop has none. */
	if (wall && !c->no_unmounted && !loader__has_bpf_loop() && (c->all || sampler_config.nr_java))
		loader__note_unavailable("the time virtual threads spend unmounted",
					 "it needs Java frames walked by BPF, and that needs bpf_loop (Linux 5.17)");
	/* Loaded whenever a JVM may be walked: one may start or exec during the recording. */
	sampler_config.max_hotspot_jvms = c->java == RECORDING_JAVA_OFF || c->java_stacks == RECORDING_JAVA_STACKS_AGENT
						  ? 0
					  : c->all ? MAX_WALKED_JVMS
						   : rec->nr_tgids;
	sampler_config.ctx = rec->pipeline;
	/* The JVMs' layouts go into the walker's map before the first sample, which would miss them. */
	sampler_config.before_start = install_walked;
	sampler_config.before_start_ctx = rec->walked;
	/* A JVM may take the agent during the recording too: its deferred signals need the range. */
	if (c->java != RECORDING_JAVA_OFF || sampler_config.waits)
		kernel_entry_ranges(rec->sym, &sampler_config);
	if (sampler__open(&sampler_config, &rec->sampler, err, sizeof(err))) {
		fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	pipeline__set_unwinder(rec->pipeline, sampler__unwinder(rec->sampler));
	if (recording__config_has(c, RECORDING_NATIVEMEM) && probe_allocators(rec)) {
		sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
		return -1;
	}
	if (wall) {
		wall__start(wall, sampler__started_ns(rec->sampler));
	}
	java__set_sampler(rec->java, rec->sampler);
	rec->interval_from_unix_ns = clock__realtime_ns();
	/*
	 * The timeline begins on the clock the records are stamped with, where
	 * the window of waits opened (the sampler's start) or else now, as the
	 * session starts; its wall-clock time with it.
	 */
	{
		uint64_t now = clock__monotonic_ns(), origin = sampler__started_ns(rec->sampler);

		origin = origin && origin <= now ? origin : now;
		if (!c->no_times)
			profile__set_time_origin(rec->profile, origin);
		rec->start_unix_ns = rec->interval_from_unix_ns - (int64_t)(now - origin);
	}
	rec->sampling_ns = clock__monotonic_ns();
	error = session__run(rec->sampler, rec->pipeline, &session_config, &rec->session, err, sizeof(err));
	rec->stop_ns = clock__monotonic_ns();
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
