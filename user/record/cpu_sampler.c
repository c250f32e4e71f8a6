/*
 * cpu_sampler: loading, configuring and attaching the BPF CPU sampler
 * (bpf/sample.bpf.c) and its perf events; contract in cpu_sampler.h.
 *
 * The random base period b is what defeats aliasing (it shares no period
 * with the target); the thinning in the program brings the mean interval
 * to exactly 1/F. Every timer tick costs an interrupt, which on a virtual
 * machine costs as much as the rest of the sample (docs/benchmarks.md), so
 * b stays close to 1/F: [0.9/F, 0.97/F], 1.03 to 1.11 ticks per sample.
 */
#include "cpu_sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "bpf/unwind.h"
#include "common/random.h"
#include "sample.skel.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"
#include "user/record/unwinder.h"

#define DEFAULT_RINGBUF_BYTES (16u << 20)
#define DEFAULT_MAX_THREADS 65536

/*
 * Code blobs the Java walk remembers by pc (bpf/hotspot.bpf.h,
 * hotspot_blobs), least recently used out: a JVM's hot call sites, and
 * those of the few JVMs of a busy host, in about 2 MiB of kernel memory.
 */
#define HOTSPOT_BLOBS_CACHED 16384
/*
 * BPF memory for unwind tables when not told: the rows of libc, libjvm,
 * python3 and a host's usual daemons take a few million rows of 16 bytes.
 * An eighth of it holds the process lists (10 KiB each, allocated as
 * used), the rest the rows. The table cache in this process takes at most
 * half as much again.
 */
#define DEFAULT_UNWIND_BUDGET (64u << 20)
/*
 * With -p only the targets' own files need rows (a JVM's take about
 * 270,000 rows, 4 MiB), so each target is given a quarter of the default,
 * up to the default: the kernel zeroes and charges the whole array when it
 * is created and frees it at the end, about 0.2 ms a MiB at every start.
 */
#define TARGET_UNWIND_BUDGET (16u << 20)
#define ROW_BYTES ((sizeof(struct jbpf_unwind_row) + 7) & ~(size_t)7)

struct cpu_sampler {
	struct sample_bpf *skel;
	struct bpf_link *exec_link; /* sched_process_exec */
	struct unwinder *unwinder;  /* with unwind tables */
	int *perf_fds;
	struct bpf_link **links;
	unsigned nr_cpus;           /* entries used in perf_fds and links */
	uint64_t base_period_ns;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			   unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

static int read_int_file(const char *path, int *value)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", value) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static void perf_strerror(int error, char *err, size_t err_size)
{
	int paranoid = 0;

	switch (error) {
	case EACCES:
	case EPERM:
		read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		snprintf(err, err_size,
			 "cannot open CPU perf events: permission denied (kernel.perf_event_paranoid=%d); "
			 "run as root or with CAP_PERFMON",
			 paranoid);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(err, err_size,
			 "cannot open CPU perf events: this kernel has no software cpu-clock event (%s)",
			 strerror(error));
		break;
	case EMFILE:
	case ENFILE:
		snprintf(err, err_size,
			 "cannot open CPU perf events: too many open files; raise the limit (ulimit -n)");
		break;
	default:
		snprintf(err, err_size, "cannot open CPU perf events: %s", strerror(error));
	}
}

/* The base period and keep threshold for a mean frequency, see the header. */
static void choose_period(struct cpu_sampler *cs, const struct sampler_config *config, uint32_t *keep_threshold)
{
	uint64_t mean_ns = NS_PER_SEC / config->frequency_hz;
	uint64_t lo = mean_ns * 9 / 10, hi = mean_ns * 97 / 100;
	double keep;

	if (config->fixed_interval) {
		cs->base_period_ns = mean_ns;
		*keep_threshold = UINT32_MAX;
		return;
	}
	cs->base_period_ns = lo + random__u64() % (hi - lo + 1);
	keep = (double)cs->base_period_ns * config->frequency_hz / (double)NS_PER_SEC;
	*keep_threshold = (uint32_t)(keep * 4294967296.0);
}

static size_t unwind_budget(const struct sampler_config *config)
{
	if (config->unwind_budget_bytes)
		return config->unwind_budget_bytes;
	if (config->nr_tgids && config->nr_tgids < DEFAULT_UNWIND_BUDGET / TARGET_UNWIND_BUDGET)
		return config->nr_tgids * TARGET_UNWIND_BUDGET;
	return DEFAULT_UNWIND_BUDGET;
}

/* The unwind maps' entries within the budget: a process list per eighth, rows for the rest. */
static void unwind_geometry(const struct sampler_config *config, uint32_t *max_rows, uint32_t *max_procs)
{
	size_t budget = unwind_budget(config);
	size_t procs = budget / 8 / sizeof(struct jbpf_unwind_process);

	if (!config->unwind_tables) {
		*max_rows = *max_procs = 1;
		return;
	}
	if (procs < 1)
		procs = 1;
	*max_procs = (uint32_t)procs;
	*max_rows = (uint32_t)((budget - procs * sizeof(struct jbpf_unwind_process)) / ROW_BYTES);
}

/* Settings, and the geometry of the shared maps this object creates. */
static void configure(struct cpu_sampler *cs, const struct sampler_config *config)
{
	struct sample_bpf *skel = cs->skel;
	uint32_t keep_threshold, max_rows, max_procs;

	choose_period(cs, config, &keep_threshold);
	skel->rodata->filter_by_tgid = config->nr_tgids > 0;
	skel->rodata->thin_ticks = !config->fixed_interval;
	skel->rodata->keep_threshold = keep_threshold;
	skel->rodata->base_period_ns = cs->base_period_ns;
	bpf_map__set_max_entries(skel->maps.events, config->ringbuf_bytes ? config->ringbuf_bytes
									  : DEFAULT_RINGBUF_BYTES);
	bpf_map__set_max_entries(skel->maps.waits, config->waits && config->max_threads ? config->max_threads
						   : config->waits			    ? DEFAULT_MAX_THREADS
												    : 1);
	/*
	 * An entry per thread followed, made when the thread is first seen
	 * and kept while it lives, so allocated on demand where the kernel
	 * allows it in every program kind (Linux 6.1): preallocating 65536
	 * entries took 4 ms of every start-up and 12 MiB however few threads
	 * the targets had.
	 */
	if (config->waits && loader__kernel_at_least(6, 1))
		bpf_map__set_map_flags(skel->maps.waits, BPF_F_NO_PREALLOC);
	skel->rodata->syscall_entry_lo = config->syscall_entry_lo;
	skel->rodata->syscall_entry_hi = config->syscall_entry_hi;
	skel->rodata->entry_text_lo = config->entry_text_lo;
	skel->rodata->entry_text_hi = config->entry_text_hi;
	skel->rodata->unwind_tables = config->unwind_tables;
	skel->rodata->defer_by_task_work = config->deferral == SAMPLER_DEFER_TASK_WORK;
	unwind_geometry(config, &max_rows, &max_procs);
	bpf_map__set_max_entries(skel->maps.unwind_rows, max_rows);
	bpf_map__set_max_entries(skel->maps.unwind_procs, max_procs);
	skel->rodata->hotspot_walk = config->unwind_tables && config->max_hotspot_jvms;
	bpf_map__set_max_entries(skel->maps.hotspot_jvms,
				 skel->rodata->hotspot_walk ? (uint32_t)config->max_hotspot_jvms : 1);
	skel->rodata->hotspot_remember_blobs = sampler__remember_blobs();
	bpf_map__set_max_entries(skel->maps.hotspot_blobs,
				 skel->rodata->hotspot_walk && skel->rodata->hotspot_remember_blobs ? HOTSPOT_BLOBS_CACHED : 1);
}

/*
 * The feeder of the unwind maps, and the targets' tables read now, so that
 * their first samples have them. A target whose tables cannot be read is
 * walked by frame pointers (and counted so).
 */
static int open_unwinder(struct cpu_sampler *cs, const struct sampler_config *config, char *err, size_t err_size)
{
	size_t budget = unwind_budget(config);
	struct unwinder_config uc = {
		.proc_root = "/proc",
		.rows_fd = bpf_map__fd(cs->skel->maps.unwind_rows),
		.max_rows = bpf_map__max_entries(cs->skel->maps.unwind_rows),
		.procs_fd = bpf_map__fd(cs->skel->maps.unwind_procs),
		.max_procs = bpf_map__max_entries(cs->skel->maps.unwind_procs),
		/*
		 * The cache is only read for a file not placed now (a process's
		 * first, or a file back after every process mapping it exited):
		 * rows placed are in the array already. It is bounded by the
		 * default budget even when the array is smaller (-p): the bound
		 * caps one table too, and libjvm's alone takes 3 MiB.
		 */
		.cache_bytes = (config->unwind_budget_bytes ? budget : DEFAULT_UNWIND_BUDGET) / 8,
	};
	int error;

	if (!config->unwind_tables)
		return 0;
	error = unwinder__new(&uc, &cs->unwinder, err, err_size);
	if (error)
		return error;
	for (size_t i = 0; i < config->nr_tgids; i++)
		unwinder__add_process(cs->unwinder, config->tgids[i]);
	return 0;
}

static int fill_targets(struct cpu_sampler *cs, const struct sampler_config *config, char *err, size_t err_size)
{
	int error;

	for (size_t i = 0; i < config->nr_tgids; i++) {
		struct jbpf_target target = { .start_ticks = config->start_ticks[i] };

		if (bpf_map__update_elem(cs->skel->maps.targets, &config->tgids[i], sizeof(config->tgids[i]), &target,
					 sizeof(target), BPF_ANY)) {
			error = errno;
			snprintf(err, err_size, "cannot set the process filter: %s", strerror(error));
			return -error;
		}
	}
	return 0;
}

int cpu_sampler__open(const struct sampler_config *config, struct cpu_sampler **out, char *err, size_t err_size)
{
	struct cpu_sampler *cs = calloc(1, sizeof(*cs));
	int error;

	*out = NULL;
	if (!cs) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	cs->skel = sample_bpf__open();
	if (!cs->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF sampler: %s", strerror(error));
		goto fail;
	}
	configure(cs, config);
	error = -sample_bpf__load(cs->skel);
	if (error) {
		load_error__strerror(error, "BPF sampler", err, err_size);
		goto fail;
	}
	error = -fill_targets(cs, config, err, err_size);
	if (error)
		goto fail;
	error = -open_unwinder(cs, config, err, err_size);
	if (error)
		goto fail;
	cs->exec_link = bpf_program__attach(cs->skel->progs.process_exec);
	if (!cs->exec_link) {
		error = errno;
		snprintf(err, err_size, "cannot attach to the sched_process_exec tracepoint: %s", strerror(error));
		goto fail;
	}
	*out = cs;
	return 0;
fail:
	cpu_sampler__close(cs);
	return -(error ? error : EINVAL);
}

int cpu_sampler__start(struct cpu_sampler *cs, char *err, size_t err_size)
{
	int nr_possible = libbpf_num_possible_cpus();
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = cs->base_period_ns,
	};

	if (nr_possible <= 0) {
		snprintf(err, err_size, "cannot count this machine's CPUs: %s", strerror(-nr_possible));
		return nr_possible ? nr_possible : -ENODEV;
	}
	cs->perf_fds = calloc((size_t)nr_possible, sizeof(*cs->perf_fds));
	cs->links = calloc((size_t)nr_possible, sizeof(*cs->links));
	if (!cs->perf_fds || !cs->links) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr_possible; cpu++) {
		int fd = perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		struct bpf_link *link;
		int error = errno;

		if (fd < 0) {
			/* A possible CPU that is offline: nothing runs there to sample. */
			if (error == ENODEV)
				continue;
			/* Saved first: perf_strerror reads a file, which may change errno. */
			perf_strerror(error, err, err_size);
			return -error;
		}
		link = bpf_program__attach_perf_event(cs->skel->progs.sample_cpu, fd);
		if (!link) {
			error = errno;
			close(fd);
			snprintf(err, err_size, "cannot attach the BPF sampler to CPU %d: %s", cpu, strerror(error));
			return -error;
		}
		cs->perf_fds[cs->nr_cpus] = fd;
		cs->links[cs->nr_cpus] = link;
		cs->nr_cpus++;
	}
	if (!cs->nr_cpus) {
		snprintf(err, err_size, "no online CPU could be sampled");
		return -ENODEV;
	}
	return 0;
}

void cpu_sampler__stop(struct cpu_sampler *cs)
{
	for (unsigned i = 0; i < cs->nr_cpus; i++)
		ioctl(cs->perf_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	/* Its task work callback may make the scheduler program's switch-in checks (bpf/deferral.bpf.h). */
	cs->skel->bss->waits_stopped = true;
}

void cpu_sampler__close(struct cpu_sampler *cs)
{
	if (!cs)
		return;
	for (unsigned i = 0; i < cs->nr_cpus; i++) {
		bpf_link__destroy(cs->links[i]);
		close(cs->perf_fds[i]);
	}
	free(cs->links);
	free(cs->perf_fds);
	bpf_link__destroy(cs->exec_link);
	unwinder__free(cs->unwinder);
	sample_bpf__destroy(cs->skel);
	free(cs);
}

struct bpf_object *cpu_sampler__object(const struct cpu_sampler *cs)
{
	return cs->skel->obj;
}

void cpu_sampler__set_no_java(struct cpu_sampler *cs, uint32_t tid, bool no_java)
{
	__u8 one = 1;

	if (no_java)
		bpf_map__update_elem(cs->skel->maps.no_java_tids, &tid, sizeof(tid), &one, sizeof(one), BPF_ANY);
	else
		bpf_map__delete_elem(cs->skel->maps.no_java_tids, &tid, sizeof(tid), 0);
}

int cpu_sampler__set_hotspot(struct cpu_sampler *cs, uint32_t tgid, const struct jbpf_hotspot_jvm *jvm)
{
	int err;

	if (!jvm)
		err = bpf_map__delete_elem(cs->skel->maps.hotspot_jvms, &tgid, sizeof(tgid), 0);
	else if (!cs->skel->rodata->hotspot_walk)
		return -EOPNOTSUPP;
	else
		err = bpf_map__update_elem(cs->skel->maps.hotspot_jvms, &tgid, sizeof(tgid), jvm, sizeof(*jvm), BPF_ANY);
	return err ? -errno : 0;
}

int cpu_sampler__set_java_thread(struct cpu_sampler *cs, uint32_t tid, uint64_t java_thread)
{
	int err;

	if (!java_thread)
		err = bpf_map__delete_elem(cs->skel->maps.java_threads, &tid, sizeof(tid), 0);
	else
		err = bpf_map__update_elem(cs->skel->maps.java_threads, &tid, sizeof(tid), &java_thread,
					   sizeof(java_thread), BPF_ANY);
	return err ? -errno : 0;
}

struct unwinder *cpu_sampler__unwinder(const struct cpu_sampler *cs)
{
	return cs->unwinder;
}

unsigned cpu_sampler__cpus(const struct cpu_sampler *cs)
{
	return cs->nr_cpus;
}

uint64_t cpu_sampler__base_period_ns(const struct cpu_sampler *cs)
{
	return cs->base_period_ns;
}
