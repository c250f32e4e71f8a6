/*
 * offcpu: loading, configuring and attaching the scheduler programs
 * (bpf/offcpu.bpf.c); contract in offcpu.h.
 */
#include "offcpu.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offcpu.skel.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"

struct offcpu {
	struct offcpu_bpf *skel;
	struct bpf_link *switch_link, *fork_link, *exit_link, *waking_link;
	/*
	 * The threads' ends are read by the task iterator (end_of_waits_by_task)
	 * and the map from user space, not by the map's iterator (end_of_waits).
	 */
	bool ends_by_task;
	uint32_t tgids[JBPF_MAX_TARGETS];
	size_t nr_tgids;
};

static void configure(struct offcpu_bpf *skel, const struct sampler_config *config)
{
	skel->rodata->filter_by_tgid = config->nr_tgids > 0;
	for (size_t i = 0; i < config->nr_tgids; i++) {
		uint32_t tgid = config->tgids[i];
		size_t words = sizeof(skel->rodata->target_tgid_bits) / sizeof(skel->rodata->target_tgid_bits[0]);

		skel->rodata->target_tgid_bits[(tgid >> 6) % words] |= 1ull << (tgid & 63);
	}
	skel->rodata->full_wait_ns = config->full_wait_ns ? config->full_wait_ns : 1;
	skel->rodata->check_in_min_ns = skel->rodata->full_wait_ns / 4;
	skel->rodata->min_block_ns = config->min_block_ns;
	skel->rodata->max_block_ns = config->max_block_ns ? config->max_block_ns : UINT64_MAX;
	skel->rodata->syscall_entry_lo = config->syscall_entry_lo;
	skel->rodata->syscall_entry_hi = config->syscall_entry_hi;
	skel->rodata->entry_text_lo = config->entry_text_lo;
	skel->rodata->entry_text_hi = config->entry_text_hi;
	skel->rodata->defer_by_task_work = config->deferral == SAMPLER_DEFER_TASK_WORK;
	/* As the CPU sampler's (cpu_sampler.c): the walker's maps are its. */
	skel->rodata->unwind_tables = config->unwind_tables;
	skel->rodata->hotspot_walk = config->unwind_tables && config->max_hotspot_jvms;
	skel->rodata->hotspot_remember_blobs = sampler__remember_blobs();
	skel->rodata->follow_wakers = config->wakers;
	skel->rodata->have_bpf_loop = loader__has_bpf_loop();
	skel->rodata->lock_classes = config->lock_classes;
	skel->rodata->irq_entry_lo = config->irq_entry_lo;
	skel->rodata->irq_entry_hi = config->irq_entry_hi;
	skel->rodata->softirq_lo = config->softirq_lo;
	skel->rodata->softirq_hi = config->softirq_hi;
	/* Without --wakers, the program is not even loaded: every wakeup of the host would pay for it. */
	bpf_program__set_autoload(skel->progs.sched_waking, config->wakers);
}

#define ENDS_BY_TASK "the waits still open at the end are read by the task iterator and the map from user space"

/* Opens, configures and loads the object into off->skel: 0 or a positive errno, and err. */
static int load(struct offcpu *off, const struct sampler_config *config, const struct bpf_object *owner, char *err,
		size_t err_size)
{
	int error;

	off->skel = offcpu_bpf__open();
	if (!off->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF scheduler program: %s", strerror(error));
		return error;
	}
	error = -loader__share_maps(off->skel->obj, owner, "scheduler program", err, err_size);
	if (error)
		return error;
	configure(off->skel, config);
	bpf_program__set_autoload(off->skel->progs.end_of_waits, !off->ends_by_task);
	bpf_program__set_autoload(off->skel->progs.end_of_waits_by_task, off->ends_by_task);
	error = -offcpu_bpf__load(off->skel);
	if (error)
		load_error__strerror(error, "BPF scheduler program", err, err_size);
	return error;
}

int offcpu__open(const struct sampler_config *config, const struct bpf_object *owner, struct offcpu **out,
		 char *err, size_t err_size)
{
	struct offcpu *off = calloc(1, sizeof(*off));
	int error;

	*out = NULL;
	if (!off) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	off->nr_tgids = config->nr_tgids < JBPF_MAX_TARGETS ? config->nr_tgids : JBPF_MAX_TARGETS;
	memcpy(off->tgids, config->tgids, off->nr_tgids * sizeof(off->tgids[0]));
	if (loader__fallback_forced("map-elem-iter")) {
		off->ends_by_task = true;
		loader__note_fallback("map-elem-iter", "forced (JBPFPROF_FORCE_FALLBACK)", ENDS_BY_TASK);
	} else if (!loader__kernel_has_function("bpf_task_from_pid")) {
		off->ends_by_task = true;
		loader__note_fallback("map-elem-iter", "the kernel has no bpf_task_from_pid (Linux 6.2)", ENDS_BY_TASK);
	}
	error = load(off, config, owner, err, err_size);
	/* A kernel or a policy may refuse the map iterator alone: the rest is worth a second try without it. */
	if (error && !off->ends_by_task) {
		char first[256];
		int first_error = error;

		snprintf(first, sizeof(first), "%s", err);
		offcpu_bpf__destroy(off->skel);
		off->skel = NULL;
		off->ends_by_task = true;
		error = load(off, config, owner, err, err_size);
		if (error) {
			snprintf(err, err_size, "%s", first);
			error = first_error;
			goto fail;
		}
		loader__note_fallback("map-elem-iter", first, ENDS_BY_TASK);
	}
	if (error)
		goto fail;
	*out = off;
	return 0;
fail:
	offcpu__close(off);
	return -(error ? error : EINVAL);
}

struct bpf_object *offcpu__object(const struct offcpu *off)
{
	return off->skel->obj;
}

/* sched_switch last: by the first switch it sees, creations and exits are followed. */
int offcpu__attach(struct offcpu *off, char *err, size_t err_size)
{
	int error;

	/* The switch program is a tracepoint one: libbpf finds its id in tracefs. */
	loader__ensure_tracefs();
	off->fork_link = bpf_program__attach(off->skel->progs.process_fork);
	off->exit_link = off->fork_link ? bpf_program__attach(off->skel->progs.thread_exit) : NULL;
	if (off->exit_link && off->skel->rodata->follow_wakers) {
		off->waking_link = bpf_program__attach(off->skel->progs.sched_waking);
		if (!off->waking_link) {
			error = errno;
			snprintf(err, err_size, "cannot attach to the sched_waking raw tracepoint (%s)", strerror(error));
			return -error;
		}
	}
	off->switch_link = off->exit_link ? bpf_program__attach(off->skel->progs.sched_switch) : NULL;
	if (!off->switch_link) {
		error = errno;
		snprintf(err, err_size,
			 "cannot attach to the sched_switch and sched_process_fork/exit tracepoints (%s); is tracefs mountable?",
			 strerror(error));
		return -error;
	}
	return 0;
}

void offcpu__detach(struct offcpu *off)
{
	/* A thread off CPU from now on is no missed switch-in (bpf/deferral.bpf.h). */
	if (off->skel)
		off->skel->bss->waits_stopped = true;
	bpf_link__destroy(off->switch_link);
	bpf_link__destroy(off->fork_link);
	bpf_link__destroy(off->exit_link);
	bpf_link__destroy(off->waking_link);
	off->switch_link = off->fork_link = off->exit_link = off->waking_link = NULL;
}

void offcpu__close(struct offcpu *off)
{
	if (!off)
		return;
	offcpu__detach(off);
	offcpu_bpf__destroy(off->skel);
	free(off);
}

/*
 * Everything iterator program prog writes, run on the object linfo names
 * (NULL: every task), in a buffer of *len bytes to free. 0 or -errno.
 */
static int read_iterator(struct bpf_program *prog, union bpf_iter_link_info *linfo, char **out, size_t *len)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	struct bpf_link *link;
	size_t cap = 64 << 10, n = 0;
	char *buf = NULL;
	int fd, error = 0;
	ssize_t got;

	if (linfo) {
		opts.link_info = linfo;
		opts.link_info_len = sizeof(*linfo);
	}
	link = bpf_program__attach_iter(prog, &opts);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		error = -errno;
		goto out;
	}
	for (;;) {
		if (!buf || n == cap) {
			char *more = realloc(buf, buf ? cap *= 2 : cap);

			if (!more) {
				error = -ENOMEM;
				break;
			}
			buf = more;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			error = got < 0 ? -errno : 0;
			break;
		}
		n += (size_t)got;
	}
	close(fd);
out:
	bpf_link__destroy(link);
	if (error) {
		free(buf);
		return error;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* The threads of one process (tgid), or of every process (0). */
static int seed_threads_of(struct offcpu *off, uint32_t tgid)
{
	union bpf_iter_link_info linfo = { .task.pid = tgid };
	size_t len;
	char *tids;
	int error;

	error = read_iterator(off->skel->progs.seed_threads, tgid ? &linfo : NULL, &tids, &len);
	if (error)
		return error;
	free(tids);
	return (int)(len / sizeof(uint32_t));
}

int offcpu__seed_threads(struct offcpu *off, const uint32_t *tgids, size_t nr_tgids)
{
	int nr = 0, n;

	if (!nr_tgids)
		return seed_threads_of(off, 0);
	for (size_t i = 0; i < nr_tgids; i++) {
		n = seed_threads_of(off, tgids[i]);
		/* A target gone since it was named has nothing to seed. */
		if (n < 0 && n != -ESRCH && n != -ENOENT)
			return n;
		nr += n > 0 ? n : 0;
	}
	return nr;
}

/*
 * Hands fn each record of buf (what end_of_waits or end_of_waits_by_task
 * wrote), and each tid into *seen when seen is not NULL (room for
 * max_seen, counted in *nr_seen). The records handed over, or -EPROTO for
 * a buffer that does not end on a record's end.
 */
static int hand_over_ends(const char *buf, size_t len, sampler_thread_fn fn, void *ctx, uint32_t *seen,
			  size_t max_seen, size_t *nr_seen)
{
	const size_t head = offsetof(struct jbpf_thread_end, ips);
	struct jbpf_thread_end end;
	size_t at = 0, size;
	int nr = 0;

	while (len - at >= head) {
		memcpy(&end, buf + at, head);
		if (end.kstack_len > JBPF_MAX_STACK_DEPTH || end.ustack_len > JBPF_MAX_STACK_DEPTH ||
		    end.java_len > JBPF_MAX_JAVA_FRAMES)
			break;
		size = head + (end.kstack_len + end.ustack_len) * sizeof(__u64) +
		       end.java_len * sizeof(struct jbpf_java_frame);
		if (len - at < size)
			break;
		memcpy(end.ips, buf + at + head, size - head);
		at += size;
		if (seen && *nr_seen < max_seen)
			seen[(*nr_seen)++] = end.tid;
		fn(ctx, &end);
		nr++;
	}
	return at == len ? nr : -EPROTO;
}

static int compare_tids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The fallback of end_of_waits: the task iterator writes the threads still
 * alive (those of each target, or every thread with -a), then every other
 * entry of `waits` is read from user space and handed over as gone, as
 * end_of_waits does for a thread bpf_task_from_pid does not find.
 */
static int ends_by_task(struct offcpu *off, sampler_thread_fn fn, void *ctx)
{
	int waits_fd = bpf_map__fd(off->skel->maps.waits);
	size_t max = bpf_map__max_entries(off->skel->maps.waits), nr_seen = 0, len;
	uint32_t *seen = calloc(max ? max : 1, sizeof(*seen)), key, next;
	struct jbpf_thread_end gone;
	bool first = true;
	int nr = 0, n, error = 0;
	char *buf;

	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < (off->nr_tgids ? off->nr_tgids : 1) && !error; i++) {
		union bpf_iter_link_info linfo = { .task.pid = off->nr_tgids ? off->tgids[i] : 0 };

		error = read_iterator(off->skel->progs.end_of_waits_by_task, off->nr_tgids ? &linfo : NULL, &buf,
				      &len);
		/* A target gone by now has no live thread: its entries are handed over as gone below. */
		if (error == -ESRCH || error == -ENOENT) {
			error = 0;
			continue;
		}
		if (error)
			break;
		n = hand_over_ends(buf, len, fn, ctx, seen, max, &nr_seen);
		free(buf);
		if (n < 0)
			error = n;
		else
			nr += n;
	}
	qsort(seen, nr_seen, sizeof(*seen), compare_tids);
	while (!error && !bpf_map_get_next_key(waits_fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bsearch(&key, seen, nr_seen, sizeof(*seen), compare_tids))
			continue;
		memset(&gone, 0, offsetof(struct jbpf_thread_end, ips));
		if (bpf_map_lookup_elem(waits_fd, &key, &gone.waits))
			continue; /* gone from the map meanwhile */
		gone.tid = key;
		gone.flags = JBPF_THREAD_END_GONE;
		fn(ctx, &gone);
		nr++;
	}
	free(seen);
	return error ? error : nr;
}

int offcpu__for_each_thread(struct offcpu *off, sampler_thread_fn fn, void *ctx)
{
	union bpf_iter_link_info linfo = { .map.map_fd = bpf_map__fd(off->skel->maps.waits) };
	size_t len;
	char *buf;
	int nr, error;

	if (off->ends_by_task)
		return ends_by_task(off, fn, ctx);
	error = read_iterator(off->skel->progs.end_of_waits, &linfo, &buf, &len);
	if (error)
		return error;
	nr = hand_over_ends(buf, len, fn, ctx, NULL, 0, NULL);
	free(buf);
	return nr;
}
