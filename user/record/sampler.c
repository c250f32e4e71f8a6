/*
 * sampler: the recording's BPF side, from load to close (contract in
 * sampler.h).
 *
 * Each BPF object has its own loader: cpu_sampler.c (bpf/sample.bpf.c and
 * the perf events), syscall_exit.c (bpf/syscall_exit.bpf.c) and offcpu.c
 * (bpf/offcpu.bpf.c). This file runs them in order and owns what spans
 * them: the ring buffer every object writes to, the JVMs to signal, the
 * counters, and the recording's window.
 *
 *   1. the CPU sampler loads first and creates the shared maps (the tgid
 *      filter, the ring buffer, ...); it also follows execs;
 *   2. without BPF task work (see below), with JVMs or waits, the system
 *      call exit program loads with those maps; with JVMs it is attached
 *      once java_targets is filled;
 *   3. with waits, the scheduler programs load, the system call exit
 *      program (if any) is attached if it is not yet, and then the
 *      scheduler programs: the window starts there;
 *   4. last, the perf events start the CPU samples.
 *
 * Deferred signals and stacks (bpf/deferral.bpf.h), and the check that a
 * waiting thread's switch-in was seen, are paid by BPF task work where
 * the kernel has it, probed once here (choose_deferral): then no program
 * runs on the host's system calls at all. Else by the system call exit
 * program, which costs every system call of the host. JBPFPROF_DEFER in the environment
 * (task-work, syscall-exit) forces either, for tests, and so does
 * JBPFPROF_FORCE_FALLBACK=task-work the second.
 */
#include "sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/clock.h"
#include "user/record/cpu_sampler.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"
#include "user/record/nativemem.h"
#include "user/record/offcpu.h"
#include "user/record/syscall_exit.h"
#include "user/record/vthreads.h"

struct sampler {
	struct cpu_sampler *cpu;
	struct syscall_exit *syscall_exit; /* with JVMs or waits */
	struct offcpu *offcpu;             /* with waits */
	struct nativemem *nativemem;       /* with config.nativemem */
	struct vthreads *vthreads;         /* with config.vthreads, when the kernel took it */
	struct ring_buffer *ringbuf;
	struct bpf_map *targets, *java_targets, *counters; /* shared maps (bpf/shared.bpf.h) */
	/* The targets as named, and which have exited since (sampler__forget_target). */
	uint32_t tgids[JBPF_MAX_TARGETS];
	uint64_t start_ticks[JBPF_MAX_TARGETS];
	bool exited[JBPF_MAX_TARGETS];
	size_t nr_tgids;
	uint64_t started_ns;        /* CLOCK_MONOTONIC once context switches are followed and the threads seeded */
	uint64_t stopped_ns;        /* CLOCK_MONOTONIC at sampler__stop, 0 before */
	enum sampler_deferral deferral; /* as chosen: never AUTO */
	bool java;                  /* JVMs at the start: the exit program is the tracepoint one */
	sampler_record_fn on_record;
	void *ctx;
	uint64_t drain_deadline_ns; /* CLOCK_MONOTONIC at which a drain gives the loop back; 0: none */
	int drained;                /* records handed over by the drain under way */
};

/*
 * The longest one sampler__drain hands records over while sampling goes
 * on. Were the callback slower than the samplers (records that a hostile
 * JVM makes costly to name), ring_buffer__consume would never find the
 * buffer empty and never return, and the recording would never see its
 * end or a signal. What is left waits for the next drain; what does not
 * fit the ring buffer meanwhile is lost, and counted.
 */
#define DRAIN_BUDGET_NS (200 * NS_PER_MS)

static int on_ringbuf_record(void *ctx, void *data, size_t size)
{
	struct sampler *sampler = ctx;

	sampler->on_record(sampler->ctx, data, size);
	sampler->drained++;
	/* libbpf has consumed this record already: stopping here loses nothing. */
	if (sampler->drain_deadline_ns && clock__monotonic_ns() >= sampler->drain_deadline_ns)
		return -EAGAIN;
	return 0;
}

/* The shared maps this file uses, and the ring buffer on `events`. */
static int open_shared(struct sampler *sampler, char *err, size_t err_size)
{
	const struct bpf_object *owner = cpu_sampler__object(sampler->cpu);
	struct bpf_map *events = bpf_object__find_map_by_name(owner, "events");
	int error;

	sampler->targets = bpf_object__find_map_by_name(owner, "targets");
	sampler->java_targets = bpf_object__find_map_by_name(owner, "java_targets");
	sampler->counters = bpf_object__find_map_by_name(owner, "counters");
	if (!events || !sampler->targets || !sampler->java_targets || !sampler->counters) {
		snprintf(err, err_size, "the BPF sampler lacks its shared maps");
		return -ENOENT;
	}
	sampler->ringbuf = ring_buffer__new(bpf_map__fd(events), on_ringbuf_record, sampler, NULL);
	if (!sampler->ringbuf) {
		error = errno;
		snprintf(err, err_size, "cannot map the BPF ring buffer: %s", strerror(error));
		return -error;
	}
	return 0;
}

/* The index of target tgid, or -1 (a target that exited counts only with exited_too). */
static ssize_t target_index(const struct sampler *sampler, uint32_t tgid, bool exited_too)
{
	for (size_t i = 0; i < sampler->nr_tgids; i++)
		if (sampler->tgids[i] == tgid)
			return exited_too || !sampler->exited[i] ? (ssize_t)i : -1;
	return -1;
}

/* Puts a JVM among the targets into java_targets, with its start. 0 or -errno. */
static int put_java_target(struct sampler *sampler, uint32_t tgid, uint32_t signo)
{
	ssize_t i = target_index(sampler, tgid, false);
	struct jbpf_java_target target = { .signo = signo };

	if (i < 0)
		return -ESRCH;
	target.start_ticks = sampler->start_ticks[i];
	return bpf_map__update_elem(sampler->java_targets, &tgid, sizeof(tgid), &target, sizeof(target), BPF_ANY)
		       ? -errno
		       : 0;
}

static int setup_java(struct sampler *sampler, const struct sampler_config *config, char *err, size_t err_size)
{
	int error;

	for (size_t i = 0; i < config->nr_java; i++) {
		const struct sampler_java_target *jt = &config->java[i];

		error = sampler->nr_tgids ? put_java_target(sampler, jt->tgid, jt->signo)
					  : sampler__add_java(sampler, jt->tgid, jt->start_ticks, jt->signo, err, err_size);
		if (error) {
			snprintf(err, err_size, "cannot set the JVM signal map for pid %u: %s", jt->tgid,
				 strerror(-error));
			return error;
		}
	}
	return sampler->syscall_exit ? syscall_exit__attach(sampler->syscall_exit, err, err_size) : 0;
}

static int setup_waits(struct sampler *sampler, const struct sampler_config *config, char *err, size_t err_size)
{
	int error;

	error = offcpu__open(config, cpu_sampler__object(sampler->cpu), &sampler->offcpu, err, err_size);
	if (error)
		return error;
	if (sampler->syscall_exit) {
		error = syscall_exit__attach(sampler->syscall_exit, err, err_size);
		if (error)
			return error;
	}
	error = offcpu__attach(sampler->offcpu, err, err_size);
	if (error)
		return error;
	/*
	 * The window opens once the program follows context switches and every
	 * thread of the targets has an entry, seeded with its state now: a
	 * thread's first switch seen before its entry would leave the time
	 * before it unaccounted, counted running. Attaching to sched_switch can
	 * take a long time (under emulation, a quarter of a second, in which
	 * each thread that slept and woke unseen lost that much sleep).
	 */
	offcpu__seed_threads(sampler->offcpu, config->tgids, config->nr_tgids);
	sampler->started_ns = clock__monotonic_ns();
	return 0;
}

bool sampler__remember_blobs(void)
{
	const char *cache = getenv("JBPFPROF_BLOB_CACHE");

	return !cache || strcmp(cache, "0");
}

/*
 * Task work where the kernel has it, unless JBPFPROF_DEFER says otherwise.
 * 0, or -EINVAL with a message for a value it does not know, or task work
 * asked for on a kernel without it.
 */
static int choose_deferral(const struct sampler_config *config, enum sampler_deferral *chosen, char *err,
			   size_t err_size)
{
	enum sampler_deferral asked = config->deferral;
	const char *forced = getenv("JBPFPROF_DEFER");
	bool task_work = config->task_work_known ? config->has_task_work : loader__has_task_work();

	if (asked == SAMPLER_DEFER_AUTO && forced && *forced) {
		if (strcmp(forced, "task-work") == 0) {
			asked = SAMPLER_DEFER_TASK_WORK;
		} else if (strcmp(forced, "syscall-exit") == 0) {
			asked = SAMPLER_DEFER_SYSCALL_EXIT;
		} else {
			snprintf(err, err_size, "JBPFPROF_DEFER=%s: expected task-work or syscall-exit", forced);
			return -EINVAL;
		}
	}
	if (asked == SAMPLER_DEFER_AUTO && loader__fallback_forced("task-work"))
		asked = SAMPLER_DEFER_SYSCALL_EXIT;
	if (asked == SAMPLER_DEFER_AUTO)
		asked = task_work ? SAMPLER_DEFER_TASK_WORK : SAMPLER_DEFER_SYSCALL_EXIT;
	if (asked == SAMPLER_DEFER_TASK_WORK && !task_work) {
		snprintf(err, err_size, "this kernel has no BPF task work (bpf_task_work_schedule_resume, Linux 6.18)");
		return -EINVAL;
	}
	*chosen = asked;
	return 0;
}

int sampler__open(const struct sampler_config *asked, struct sampler **out, char *err, size_t err_size)
{
	struct sampler *sampler = calloc(1, sizeof(*sampler));
	struct sampler_config chosen = *asked, *config = &chosen;
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
	sampler->nr_tgids = config->nr_tgids;
	for (size_t i = 0; i < config->nr_tgids; i++) {
		sampler->tgids[i] = config->tgids[i];
		sampler->start_ticks[i] = config->start_ticks[i];
	}
	/* Before the first open: libbpf names each program's section there, and load_error keeps it. */
	load_error__set_verbose(config->verbose);
	libbpf_set_print(load_error__print);
	sampler->java = config->nr_java > 0;

	error = choose_deferral(asked, &config->deferral, err, err_size);
	sampler->deferral = config->deferral;
	if (!error)
		error = cpu_sampler__open(config, &sampler->cpu, err, err_size);
	if (!error)
		error = open_shared(sampler, err, err_size);
	if (!error && config->deferral == SAMPLER_DEFER_SYSCALL_EXIT && (config->nr_java || config->waits)) {
		loader__note_fallback("task-work",
				      loader__has_task_work() ? "forced (JBPFPROF_FORCE_FALLBACK or JBPFPROF_DEFER)"
								: "the kernel has no BPF task work (Linux 6.18)",
				      "a program on every system call's exit pays what threads owe at their return");
		error = syscall_exit__open(config->nr_java > 0, cpu_sampler__object(sampler->cpu),
					   &sampler->syscall_exit, err, err_size);
	}
	if (!error && config->nr_java)
		error = setup_java(sampler, config, err, err_size);
	/*
	 * The objects that follow no context switch load before the scheduler's
	 * attach: a load takes tens of milliseconds, which would only delay the
	 * window's start (setup_waits).
	 */
	if (!error && config->nativemem) {
		struct nativemem_config nc = *config->nativemem;

		nc.unwind_tables = config->unwind_tables;
		nc.hotspot_walk = config->max_hotspot_jvms > 0;
		nc.remember_blobs = sampler__remember_blobs();
		error = nativemem__open(&nc, cpu_sampler__object(sampler->cpu), &sampler->nativemem, err, err_size);
	}
	if (!error && config->vthreads && config->waits && config->max_hotspot_jvms) {
		struct vthreads_config vc = { .full_wait_ns = config->full_wait_ns,
					      .remember_blobs = sampler__remember_blobs() };
		char reason[256];

		/* The freezes are probed as a session: no other way sees whether one succeeded. */
		if (loader__fallback_forced("uprobe-session") || !loader__has_uprobe_session())
			loader__note_unavailable("the time virtual threads spend unmounted",
						 loader__has_uprobe_session()
							 ? "forced (JBPFPROF_FORCE_FALLBACK=uprobe-session)"
							 : "it needs uprobe sessions (Linux 6.13)");
		else if (vthreads__open(&vc, cpu_sampler__object(sampler->cpu), &sampler->vthreads, reason, sizeof(reason)))
			fprintf(stderr, "jbpfprof: the time virtual threads spend unmounted is not recorded: %s\n", reason);
	}
	if (!error && config->waits)
		error = setup_waits(sampler, config, err, err_size);
	if (!error && config->before_start && config->before_start(config->before_start_ctx, sampler)) {
		snprintf(err, err_size, "cannot hand the JVMs' layouts to BPF");
		error = -EINVAL;
	}
	if (!error && !config->no_cpu_samples)
		error = cpu_sampler__start(sampler->cpu, err, err_size);
	if (error) {
		sampler__close(sampler);
		return error;
	}
	*out = sampler;
	return 0;
}

/* The object that owns the shared maps goes last. */
void sampler__close(struct sampler *sampler)
{
	if (!sampler)
		return;
	vthreads__close(sampler->vthreads);
	nativemem__close(sampler->nativemem);
	offcpu__close(sampler->offcpu);
	syscall_exit__close(sampler->syscall_exit);
	ring_buffer__free(sampler->ringbuf);
	cpu_sampler__close(sampler->cpu);
	free(sampler);
}

size_t sampler__run_times(const struct sampler *sampler, struct loader_run_time *times, size_t max)
{
	size_t nr = loader__add_run_times(cpu_sampler__object(sampler->cpu), times, 0, max);

	if (sampler->syscall_exit)
		nr = loader__add_run_times(syscall_exit__object(sampler->syscall_exit), times, nr, max);
	if (sampler->offcpu)
		nr = loader__add_run_times(offcpu__object(sampler->offcpu), times, nr, max);
	if (sampler->nativemem)
		nr = loader__add_run_times(nativemem__object(sampler->nativemem), times, nr, max);
	if (sampler->vthreads)
		nr = loader__add_run_times(vthreads__object(sampler->vthreads), times, nr, max);
	return nr;
}

void sampler__stop(struct sampler *sampler)
{
	sampler->stopped_ns = clock__monotonic_ns();
	if (sampler->syscall_exit)
		syscall_exit__stop_waits(sampler->syscall_exit);
	cpu_sampler__stop(sampler->cpu);
	if (sampler->offcpu)
		offcpu__detach(sampler->offcpu);
	nativemem__detach(sampler->nativemem);
	vthreads__detach(sampler->vthreads);
}

int sampler__for_each_thread(struct sampler *sampler, sampler_thread_fn fn, void *ctx)
{
	if (!sampler->offcpu)
		return 0;
	return offcpu__for_each_thread(sampler->offcpu, fn, ctx);
}

void sampler__set_no_java(struct sampler *sampler, uint32_t tid, bool no_java)
{
	cpu_sampler__set_no_java(sampler->cpu, tid, no_java);
}

int sampler__set_hotspot(struct sampler *sampler, uint32_t tgid, const struct jbpf_hotspot_jvm *jvm)
{
	return cpu_sampler__set_hotspot(sampler->cpu, tgid, jvm);
}

int sampler__set_java_thread(struct sampler *sampler, uint32_t tid, uint64_t java_thread)
{
	return cpu_sampler__set_java_thread(sampler->cpu, tid, java_thread);
}

void sampler__forget_java(struct sampler *sampler, uint32_t tgid)
{
	bpf_map__delete_elem(sampler->java_targets, &tgid, sizeof(tgid), 0);
}

int sampler__signal_java(struct sampler *sampler, uint32_t tgid, uint32_t signo)
{
	return put_java_target(sampler, tgid, signo);
}

/*
 * The system call exit program that can send a deferred Java signal,
 * loaded and attached now if the recording started without JVMs. It
 * replaces the raw tracepoint one (waits) only once it is attached, so no
 * system call exit goes unseen; while both run, the first to see what a
 * thread is owed takes it.
 */
static int ensure_signalling_exit(struct sampler *sampler, char *err, size_t err_size)
{
	struct syscall_exit *old = sampler->syscall_exit, *se;
	int error;

	if (old && syscall_exit__signals(old))
		return 0;
	error = syscall_exit__open(true, cpu_sampler__object(sampler->cpu), &se, err, err_size);
	if (!error)
		error = syscall_exit__attach(se, err, err_size);
	if (error) {
		syscall_exit__close(se);
		return error;
	}
	if (sampler->stopped_ns)
		syscall_exit__stop_waits(se);
	sampler->syscall_exit = se;
	syscall_exit__close(old);
	return 0;
}

int sampler__add_java(struct sampler *sampler, uint32_t tgid, uint64_t start_ticks, uint32_t signo, char *err,
		      size_t err_size)
{
	struct jbpf_java_target target = { .signo = signo, .start_ticks = start_ticks };
	int error;

	if (sampler->nr_tgids && target_index(sampler, tgid, false) < 0) {
		snprintf(err, err_size, "process %u is not a target, or has exited", tgid);
		return -ESRCH;
	}
	/* With task work no program on system calls is needed, JVMs or not. */
	error = sampler->deferral == SAMPLER_DEFER_SYSCALL_EXIT ? ensure_signalling_exit(sampler, err, err_size) : 0;
	if (error)
		return error;
	if (bpf_map__update_elem(sampler->java_targets, &tgid, sizeof(tgid), &target, sizeof(target), BPF_ANY)) {
		error = -errno;
		snprintf(err, err_size, "cannot set the JVM signal map for pid %u: %s", tgid, strerror(-error));
		return error;
	}
	return 0;
}

void sampler__forget_target(struct sampler *sampler, uint32_t tgid)
{
	ssize_t i = target_index(sampler, tgid, true);

	if (i < 0)
		return;
	sampler->exited[i] = true;
	bpf_map__delete_elem(sampler->java_targets, &tgid, sizeof(tgid), 0);
	bpf_map__delete_elem(sampler->targets, &tgid, sizeof(tgid), 0);
}

int sampler__fd(const struct sampler *sampler)
{
	return ring_buffer__epoll_fd(sampler->ringbuf);
}

int sampler__drain(struct sampler *sampler)
{
	int err;

	/* Once stopped, nothing more comes: the last drain takes every record, however long. */
	sampler->drain_deadline_ns = sampler->stopped_ns ? 0 : clock__monotonic_ns() + DRAIN_BUDGET_NS;
	sampler->drained = 0;
	err = ring_buffer__consume(sampler->ringbuf);
	return err < 0 && err != -EAGAIN ? err : sampler->drained;
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
		if (bpf_map__lookup_elem(sampler->counters, &key, sizeof(key), values,
					 (size_t)nr_cpus * sizeof(*values), 0))
			continue;
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			counters[key] += values[cpu];
	}
	free(values);
	return 0;
}

struct unwinder *sampler__unwinder(const struct sampler *sampler)
{
	return cpu_sampler__unwinder(sampler->cpu);
}

unsigned sampler__cpus(const struct sampler *sampler)
{
	return cpu_sampler__cpus(sampler->cpu);
}

uint64_t sampler__started_ns(const struct sampler *sampler)
{
	return sampler->started_ns;
}

uint64_t sampler__stopped_ns(const struct sampler *sampler)
{
	return sampler->stopped_ns;
}

const char *sampler__deferral_name(const struct sampler *sampler)
{
	if (sampler->deferral == SAMPLER_DEFER_TASK_WORK)
		return "BPF task work (bpf_task_work_schedule_resume): no program on system calls";
	if (!sampler->syscall_exit)
		return "system call exit program, not needed (no JVM, no waits)";
	return sampler->java ? "system call exit program (tracepoint raw_syscalls/sys_exit, every system call)"
			     : "system call exit program (raw tracepoint sys_exit, every system call)";
}

uint64_t sampler__base_period_ns(const struct sampler *sampler)
{
	return cpu_sampler__base_period_ns(sampler->cpu);
}

int sampler__probe_allocator(struct sampler *sampler, const char *proc_root, uint32_t tgid, char *err,
			     size_t err_size)
{
	if (!sampler->nativemem) {
		snprintf(err, err_size, "native memory is not recorded");
		return -1;
	}
	return nativemem__attach(sampler->nativemem, proc_root, tgid, err, err_size);
}

int sampler__probe_vthreads(struct sampler *sampler, const char *proc_root, uint32_t tgid, uint64_t start_ticks,
			    char *err, size_t err_size)
{
	if (!sampler->vthreads) {
		err[0] = '\0';
		return -1;
	}
	return vthreads__attach(sampler->vthreads, proc_root, tgid, start_ticks, err, err_size);
}

void sampler__for_each_unmounted(struct sampler *sampler, sampler_unmounted_fn fn, void *ctx)
{
	if (sampler->vthreads)
		vthreads__for_each_unmounted(sampler->vthreads, fn, ctx);
}

bool sampler__target_exited(const struct sampler *sampler, uint32_t tgid)
{
	return sampler->nr_tgids && target_index(sampler, tgid, false) < 0;
}
