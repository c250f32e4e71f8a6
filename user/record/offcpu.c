/*
 * offcpu: loading, configuring and attaching the scheduler programs
 * (bpf/offcpu.bpf.c); contract in offcpu.h.
 */
#include "offcpu.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
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
	skel->rodata->lock_classes = config->lock_classes;
	skel->rodata->irq_entry_lo = config->irq_entry_lo;
	skel->rodata->irq_entry_hi = config->irq_entry_hi;
	skel->rodata->softirq_lo = config->softirq_lo;
	skel->rodata->softirq_hi = config->softirq_hi;
	/* Without --wakers, the program is not even loaded: every wakeup of the host would pay for it. */
	bpf_program__set_autoload(skel->progs.sched_waking, config->wakers);
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
	off->skel = offcpu_bpf__open();
	if (!off->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF scheduler program: %s", strerror(error));
		goto fail;
	}
	error = -loader__share_maps(off->skel->obj, owner, "scheduler program", err, err_size);
	if (error)
		goto fail;
	configure(off->skel, config);
	error = -offcpu_bpf__load(off->skel);
	if (error) {
		load_error__strerror(error, "BPF scheduler program", err, err_size);
		goto fail;
	}
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

int offcpu__for_each_thread(struct offcpu *off, sampler_thread_fn fn, void *ctx)
{
	union bpf_iter_link_info linfo = { .map.map_fd = bpf_map__fd(off->skel->maps.waits) };
	const size_t head = offsetof(struct jbpf_thread_end, ips);
	struct jbpf_thread_end end;
	size_t len, at = 0, size;
	char *buf;
	int nr = 0, error;

	error = read_iterator(off->skel->progs.end_of_waits, &linfo, &buf, &len);
	if (error)
		return error;
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
		fn(ctx, &end);
		nr++;
	}
	free(buf);
	return at == len ? nr : -EPROTO;
}
