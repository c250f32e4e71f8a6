/*
 * sampler: loading, configuring and attaching the BPF CPU sampler.
 *
 * The randomised interval (see bpf/sample.bpf.c) is set up here: the perf
 * event's base period b is drawn uniformly from [0.5/F, 0.8/F] once per
 * recording, and the BPF program keeps each tick with probability b*F, so
 * the mean interval is exactly 1/F. The random b is what defeats aliasing
 * (it shares no period with the target); the thinning makes each interval
 * random too. Every timer tick costs an interrupt, which on a virtual
 * machine is not cheap, so the range keeps it to 1.25 to 2 ticks per sample.
 */
#include "sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/random.h"
#include "offcpu.skel.h"
#include "sample.skel.h"

#define DEFAULT_RINGBUF_BYTES (16u << 20)

struct sampler {
	struct sample_bpf *skel;
	struct ring_buffer *ringbuf;
	int *perf_fds;
	struct bpf_link **links;
	unsigned nr_cpus;           /* entries used in perf_fds and links */
	struct bpf_link *exec_link; /* sched_process_exec */
	struct bpf_link *sys_exit_link; /* raw_syscalls/sys_exit, with JVMs or waits */
	bool java;                      /* JVMs to signal: the tracepoint sys_exit program, else the raw one */
	struct offcpu_bpf *offcpu;      /* with waits */
	struct bpf_link *switch_link, *fork_link, *wakeup_link, *exit_link;
	uint64_t base_period_ns;
	uint64_t started_ns;        /* CLOCK_MONOTONIC just before following context switches */
	uint64_t stopped_ns;        /* CLOCK_MONOTONIC at sampler__stop, 0 before */
	sampler_record_fn on_record;
	void *ctx;
};

static int verbose_level;

static int libbpf_print(enum libbpf_print_level level, const char *format, va_list args)
{
	if (verbose_level == 0 || (level == LIBBPF_DEBUG && verbose_level < 2))
		return 0;
	return vfprintf(stderr, format, args);
}

static int on_ringbuf_record(void *ctx, void *data, size_t size)
{
	struct sampler *sampler = ctx;

	sampler->on_record(sampler->ctx, data, size);
	return 0;
}

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

static void load_strerror(int error, char *err, size_t err_size)
{
	if (error == EPERM || error == EACCES)
		snprintf(err, err_size,
			 "not permitted to load BPF programs: run as root or with CAP_BPF and CAP_PERFMON");
	else
		snprintf(err, err_size,
			 "the kernel rejected the BPF sampler (%s); run with -v to see the verifier's log",
			 strerror(error));
}

/* The base period and keep threshold for a mean frequency, see the header. */
static void choose_period(struct sampler *sampler, const struct sampler_config *config,
			  uint32_t *keep_threshold)
{
	uint64_t mean_ns = NS_PER_SEC / config->frequency_hz;
	uint64_t lo = mean_ns / 2, hi = mean_ns * 4 / 5;
	double keep;

	if (config->fixed_interval) {
		sampler->base_period_ns = mean_ns;
		*keep_threshold = UINT32_MAX;
		return;
	}
	sampler->base_period_ns = lo + random_u64() % (hi - lo + 1);
	keep = (double)sampler->base_period_ns * config->frequency_hz / (double)NS_PER_SEC;
	*keep_threshold = (uint32_t)(keep * 4294967296.0);
}

static int open_perf_events(struct sampler *sampler, char *err, size_t err_size)
{
	int nr_possible = libbpf_num_possible_cpus();
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = sampler->base_period_ns,
	};

	if (nr_possible <= 0) {
		snprintf(err, err_size, "cannot count this machine's CPUs: %s", strerror(-nr_possible));
		return nr_possible ? nr_possible : -ENODEV;
	}
	sampler->perf_fds = calloc((size_t)nr_possible, sizeof(*sampler->perf_fds));
	sampler->links = calloc((size_t)nr_possible, sizeof(*sampler->links));
	if (!sampler->perf_fds || !sampler->links) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	for (int cpu = 0; cpu < nr_possible; cpu++) {
		int fd = perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		struct bpf_link *link;

		if (fd < 0) {
			/* A possible CPU that is offline: nothing runs there to sample. */
			if (errno == ENODEV)
				continue;
			perf_strerror(errno, err, err_size);
			return -errno;
		}
		link = bpf_program__attach_perf_event(sampler->skel->progs.sample_cpu, fd);
		if (!link) {
			int error = errno;

			close(fd);
			snprintf(err, err_size, "cannot attach the BPF sampler to CPU %d: %s", cpu,
				 strerror(error));
			return -error;
		}
		sampler->perf_fds[sampler->nr_cpus] = fd;
		sampler->links[sampler->nr_cpus] = link;
		sampler->nr_cpus++;
	}
	if (!sampler->nr_cpus) {
		snprintf(err, err_size, "no online CPU could be sampled");
		return -ENODEV;
	}
	return 0;
}

/*
 * libbpf attaches tracepoint programs by the event's id, which only tracefs
 * tells; a machine may not have it mounted. Mount it where the kernel
 * expects it, once: harmless, and what perf and bpftrace do too.
 */
static void ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 || stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return;
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
}

static int attach_sys_exit(struct sampler *sampler, char *err, size_t err_size)
{
	int error;

	if (sampler->sys_exit_link)
		return 0;
	if (!sampler->java) {
		sampler->sys_exit_link = bpf_program__attach(sampler->skel->progs.syscall_exit_raw);
		if (!sampler->sys_exit_link) {
			error = errno;
			snprintf(err, err_size, "cannot attach to the sys_exit raw tracepoint: %s", strerror(error));
			return -error;
		}
		return 0;
	}
	ensure_tracefs();
	sampler->sys_exit_link = bpf_program__attach(sampler->skel->progs.syscall_exit);
	if (!sampler->sys_exit_link) {
		error = errno;
		snprintf(err, err_size,
			 "cannot attach to the raw_syscalls/sys_exit tracepoint (%s); is tracefs mountable?",
			 strerror(error));
		return -error;
	}
	return 0;
}

static int setup_java(struct sampler *sampler, const struct sampler_config *config, char *err, size_t err_size)
{
	int error;

	for (size_t i = 0; i < config->nr_java; i++) {
		struct jbpf_java_target target = { .signo = config->java[i].signo };

		if (bpf_map__update_elem(sampler->skel->maps.java_targets, &config->java[i].tgid,
					 sizeof(config->java[i].tgid), &target, sizeof(target), BPF_ANY)) {
			error = errno;
			snprintf(err, err_size, "cannot set the JVM signal map: %s", strerror(error));
			return -error;
		}
	}
	return attach_sys_exit(sampler, err, err_size);
}

#define DEFAULT_MAX_THREADS 65536

/*
 * Loads the scheduler program with the sampler's own maps (filter, JVMs,
 * system call exit duties, ring buffer, counters) and attaches it.
 */
static int setup_waits(struct sampler *sampler, const struct sampler_config *config, char *err, size_t err_size)
{
	struct offcpu_bpf *skel;
	struct {
		struct bpf_map *mine, *shared;
	} reuse[6];
	int error;

	skel = offcpu_bpf__open();
	if (!skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF scheduler program: %s", strerror(error));
		return -error;
	}
	sampler->offcpu = skel;
	reuse[0].mine = skel->maps.targets, reuse[0].shared = sampler->skel->maps.targets;
	reuse[1].mine = skel->maps.java_targets, reuse[1].shared = sampler->skel->maps.java_targets;
	reuse[2].mine = skel->maps.deferred, reuse[2].shared = sampler->skel->maps.deferred;
	reuse[3].mine = skel->maps.events, reuse[3].shared = sampler->skel->maps.events;
	reuse[4].mine = skel->maps.counters, reuse[4].shared = sampler->skel->maps.counters;
	reuse[5].mine = skel->maps.waits, reuse[5].shared = sampler->skel->maps.waits;
	for (size_t i = 0; i < sizeof(reuse) / sizeof(reuse[0]); i++) {
		if (bpf_map__reuse_fd(reuse[i].mine, bpf_map__fd(reuse[i].shared))) {
			error = errno;
			snprintf(err, err_size, "cannot share the BPF maps with the scheduler program: %s",
				 strerror(error));
			return -error;
		}
	}
	skel->rodata->filter_by_tgid = config->nr_tgids > 0;
	skel->rodata->full_wait_ns = config->full_wait_ns ? config->full_wait_ns : 1;
	skel->rodata->min_block_ns = config->min_block_ns;
	skel->rodata->max_block_ns = config->max_block_ns ? config->max_block_ns : UINT64_MAX;
	skel->rodata->syscall_entry_lo = config->syscall_entry_lo;
	skel->rodata->syscall_entry_hi = config->syscall_entry_hi;
	error = offcpu_bpf__load(skel);
	if (error) {
		error = -error;
		load_strerror(error, err, err_size);
		return -error;
	}
	error = -attach_sys_exit(sampler, err, err_size);
	if (error)
		return -error;
	sampler->started_ns = clock_monotonic_ns();
	sampler->fork_link = bpf_program__attach(skel->progs.process_fork);
	sampler->exit_link = sampler->fork_link ? bpf_program__attach(skel->progs.thread_exit) : NULL;
	sampler->wakeup_link = sampler->exit_link ? bpf_program__attach(skel->progs.thread_wakeup) : NULL;
	sampler->switch_link = sampler->wakeup_link ? bpf_program__attach(skel->progs.sched_switch) : NULL;
	if (!sampler->switch_link) {
		error = errno;
		snprintf(err, err_size,
			 "cannot attach to the sched_switch, sched_wakeup and sched_process_fork/exit tracepoints: %s",
			 strerror(error));
		return -error;
	}
	return 0;
}

int sampler__open(const struct sampler_config *config, struct sampler **out, char *err, size_t err_size)
{
	struct sampler *sampler = calloc(1, sizeof(*sampler));
	uint32_t keep_threshold;
	int error;

	*out = NULL;
	if (!sampler) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (config->frequency_hz == 0 || config->nr_tgids > JBPF_MAX_TARGETS) {
		snprintf(err, err_size, "invalid sampler configuration");
		free(sampler);
		return -EINVAL;
	}
	sampler->on_record = config->on_record;
	sampler->ctx = config->ctx;
	verbose_level = config->verbose;
	libbpf_set_print(libbpf_print);

	sampler->skel = sample_bpf__open();
	if (!sampler->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF sampler: %s", strerror(error));
		goto fail;
	}
	choose_period(sampler, config, &keep_threshold);
	sampler->skel->rodata->filter_by_tgid = config->nr_tgids > 0;
	sampler->skel->rodata->thin_ticks = !config->fixed_interval;
	sampler->skel->rodata->keep_threshold = keep_threshold;
	bpf_map__set_max_entries(sampler->skel->maps.events,
				 config->ringbuf_bytes ? config->ringbuf_bytes : DEFAULT_RINGBUF_BYTES);
	bpf_map__set_max_entries(sampler->skel->maps.waits,
				 config->waits && config->max_threads ? config->max_threads
				 : config->waits		       ? DEFAULT_MAX_THREADS
								       : 1);
	sampler->skel->rodata->syscall_entry_lo = config->syscall_entry_lo;
	sampler->skel->rodata->syscall_entry_hi = config->syscall_entry_hi;

	/* Only one system call exit program is loaded (see bpf/sample.bpf.c). */
	sampler->java = config->nr_java > 0;
	bpf_program__set_autoload(sampler->skel->progs.syscall_exit, sampler->java);
	bpf_program__set_autoload(sampler->skel->progs.syscall_exit_raw, !sampler->java && config->waits);
	error = sample_bpf__load(sampler->skel);
	if (error) {
		error = -error;
		load_strerror(error, err, err_size);
		goto fail;
	}
	for (size_t i = 0; i < config->nr_tgids; i++) {
		__u8 one = 1;

		if (bpf_map__update_elem(sampler->skel->maps.targets, &config->tgids[i],
					 sizeof(config->tgids[i]), &one, sizeof(one), BPF_ANY)) {
			error = errno;
			snprintf(err, err_size, "cannot set the process filter: %s", strerror(error));
			goto fail;
		}
	}
	sampler->ringbuf = ring_buffer__new(bpf_map__fd(sampler->skel->maps.events), on_ringbuf_record,
					    sampler, NULL);
	if (!sampler->ringbuf) {
		error = errno;
		snprintf(err, err_size, "cannot map the BPF ring buffer: %s", strerror(error));
		goto fail;
	}
	sampler->exec_link = bpf_program__attach(sampler->skel->progs.process_exec);
	if (!sampler->exec_link) {
		error = errno;
		snprintf(err, err_size, "cannot attach to the sched_process_exec tracepoint: %s", strerror(error));
		goto fail;
	}
	if (config->nr_java) {
		error = -setup_java(sampler, config, err, err_size);
		if (error)
			goto fail;
	}
	if (config->waits) {
		error = -setup_waits(sampler, config, err, err_size);
		if (error)
			goto fail;
	}
	if (!config->no_cpu_samples) {
		error = -open_perf_events(sampler, err, err_size);
		if (error)
			goto fail;
	}
	*out = sampler;
	return 0;
fail:
	sampler__close(sampler);
	return -(error ? error : EINVAL);
}

void sampler__close(struct sampler *sampler)
{
	if (!sampler)
		return;
	for (unsigned i = 0; i < sampler->nr_cpus; i++) {
		bpf_link__destroy(sampler->links[i]);
		close(sampler->perf_fds[i]);
	}
	free(sampler->links);
	free(sampler->perf_fds);
	bpf_link__destroy(sampler->exec_link);
	bpf_link__destroy(sampler->sys_exit_link);
	bpf_link__destroy(sampler->switch_link);
	bpf_link__destroy(sampler->fork_link);
	bpf_link__destroy(sampler->wakeup_link);
	bpf_link__destroy(sampler->exit_link);
	ring_buffer__free(sampler->ringbuf);
	offcpu_bpf__destroy(sampler->offcpu);
	sample_bpf__destroy(sampler->skel);
	free(sampler);
}

void sampler__stop(struct sampler *sampler)
{
	sampler->stopped_ns = clock_monotonic_ns();
	/* The system call exit program stays (deferred Java signals), but stops looking for missed switches. */
	sampler->skel->bss->waits_stopped = true;
	for (unsigned i = 0; i < sampler->nr_cpus; i++)
		ioctl(sampler->perf_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	bpf_link__destroy(sampler->switch_link);
	bpf_link__destroy(sampler->fork_link);
	bpf_link__destroy(sampler->wakeup_link);
	bpf_link__destroy(sampler->exit_link);
	sampler->switch_link = sampler->fork_link = sampler->wakeup_link = sampler->exit_link = NULL;
}

int sampler__seed_thread(struct sampler *sampler, uint32_t tid, uint32_t tgid, enum jbpf_state state)
{
	struct jbpf_thread_waits seed = {
		.state = state,
		.tgid = tgid,
		.flags = JBPF_THREAD_SINCE_START,
	};

	if (!sampler->offcpu)
		return -EINVAL;
	if (bpf_map__update_elem(sampler->offcpu->maps.waits, &tid, sizeof(tid), &seed, sizeof(seed), BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	return 0;
}

int sampler__for_each_thread(struct sampler *sampler, sampler_thread_fn fn, void *ctx)
{
	struct jbpf_thread_waits waits;
	uint32_t key, next;
	int nr = 0, error;

	if (!sampler->offcpu)
		return 0;
	for (error = bpf_map__get_next_key(sampler->offcpu->maps.waits, NULL, &next, sizeof(next)); !error;
	     error = bpf_map__get_next_key(sampler->offcpu->maps.waits, &key, &next, sizeof(next))) {
		key = next;
		if (bpf_map__lookup_elem(sampler->offcpu->maps.waits, &key, sizeof(key), &waits, sizeof(waits), 0))
			continue;
		fn(ctx, key, &waits);
		nr++;
	}
	return error == -ENOENT ? nr : error;
}

void sampler__set_no_java(struct sampler *sampler, uint32_t tid, bool no_java)
{
	__u8 one = 1;

	if (no_java)
		bpf_map__update_elem(sampler->skel->maps.no_java_tids, &tid, sizeof(tid), &one, sizeof(one), BPF_ANY);
	else
		bpf_map__delete_elem(sampler->skel->maps.no_java_tids, &tid, sizeof(tid), 0);
}

void sampler__forget_java(struct sampler *sampler, uint32_t tgid)
{
	bpf_map__delete_elem(sampler->skel->maps.java_targets, &tgid, sizeof(tgid), 0);
}

int sampler__signal_java(struct sampler *sampler, uint32_t tgid, uint32_t signo)
{
	struct jbpf_java_target target = { .signo = signo };

	return bpf_map__update_elem(sampler->skel->maps.java_targets, &tgid, sizeof(tgid), &target, sizeof(target),
				    BPF_ANY)
		       ? -errno
		       : 0;
}

int sampler__fd(const struct sampler *sampler)
{
	return ring_buffer__epoll_fd(sampler->ringbuf);
}

int sampler__drain(struct sampler *sampler)
{
	return ring_buffer__consume(sampler->ringbuf);
}

int sampler__counters(const struct sampler *sampler, uint64_t counters[JBPF_CNT_NR])
{
	int nr_cpus = libbpf_num_possible_cpus();
	uint64_t *values;

	if (nr_cpus <= 0)
		return nr_cpus ? nr_cpus : -ENODEV;
	values = calloc((size_t)nr_cpus, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (uint32_t key = 0; key < JBPF_CNT_NR; key++) {
		counters[key] = 0;
		if (bpf_map__lookup_elem(sampler->skel->maps.counters, &key, sizeof(key), values,
					 (size_t)nr_cpus * sizeof(*values), 0))
			continue;
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			counters[key] += values[cpu];
	}
	free(values);
	return 0;
}

unsigned sampler__cpus(const struct sampler *sampler)
{
	return sampler->nr_cpus;
}

uint64_t sampler__started_ns(const struct sampler *sampler)
{
	return sampler->started_ns;
}

uint64_t sampler__stopped_ns(const struct sampler *sampler)
{
	return sampler->stopped_ns;
}

uint64_t sampler__base_period_ns(const struct sampler *sampler)
{
	return sampler->base_period_ns;
}
