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

#include "offcpu.skel.h"
#include "user/record/loader.h"

struct offcpu {
	struct offcpu_bpf *skel;
	struct bpf_link *switch_link, *fork_link, *wakeup_link, *exit_link;
};

static void configure(struct offcpu_bpf *skel, const struct sampler_config *config)
{
	skel->rodata->filter_by_tgid = config->nr_tgids > 0;
	skel->rodata->full_wait_ns = config->full_wait_ns ? config->full_wait_ns : 1;
	skel->rodata->check_in_min_ns = skel->rodata->full_wait_ns / 4;
	skel->rodata->min_block_ns = config->min_block_ns;
	skel->rodata->max_block_ns = config->max_block_ns ? config->max_block_ns : UINT64_MAX;
	skel->rodata->syscall_entry_lo = config->syscall_entry_lo;
	skel->rodata->syscall_entry_hi = config->syscall_entry_hi;
	skel->rodata->entry_text_lo = config->entry_text_lo;
	skel->rodata->entry_text_hi = config->entry_text_hi;
	skel->rodata->defer_by_task_work = config->deferral == SAMPLER_DEFER_TASK_WORK;
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
		loader__load_strerror(error, "BPF scheduler program", err, err_size);
		goto fail;
	}
	*out = off;
	return 0;
fail:
	offcpu__close(off);
	return -(error ? error : EINVAL);
}

/* sched_switch last: by the first switch it sees, creations, exits and wakeups are followed. */
int offcpu__attach(struct offcpu *off, char *err, size_t err_size)
{
	int error;

	off->fork_link = bpf_program__attach(off->skel->progs.process_fork);
	off->exit_link = off->fork_link ? bpf_program__attach(off->skel->progs.thread_exit) : NULL;
	off->wakeup_link = off->exit_link ? bpf_program__attach(off->skel->progs.thread_wakeup) : NULL;
	off->switch_link = off->wakeup_link ? bpf_program__attach(off->skel->progs.sched_switch) : NULL;
	if (!off->switch_link) {
		error = errno;
		snprintf(err, err_size,
			 "cannot attach to the sched_switch, sched_wakeup and sched_process_fork/exit tracepoints: %s",
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
	bpf_link__destroy(off->wakeup_link);
	bpf_link__destroy(off->exit_link);
	off->switch_link = off->fork_link = off->wakeup_link = off->exit_link = NULL;
}

void offcpu__close(struct offcpu *off)
{
	if (!off)
		return;
	offcpu__detach(off);
	offcpu_bpf__destroy(off->skel);
	free(off);
}

int offcpu__seed_thread(struct offcpu *off, uint32_t tid, uint32_t tgid, enum jbpf_state state)
{
	struct jbpf_thread_waits seed = {
		.state = state,
		.tgid = tgid,
		.flags = JBPF_THREAD_SINCE_START,
	};

	if (bpf_map__update_elem(off->skel->maps.waits, &tid, sizeof(tid), &seed, sizeof(seed), BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	return 0;
}

int offcpu__for_each_thread(struct offcpu *off, sampler_thread_fn fn, void *ctx)
{
	struct jbpf_thread_waits waits;
	uint32_t key, next;
	int nr = 0, error;

	for (error = bpf_map__get_next_key(off->skel->maps.waits, NULL, &next, sizeof(next)); !error;
	     error = bpf_map__get_next_key(off->skel->maps.waits, &key, &next, sizeof(next))) {
		key = next;
		if (bpf_map__lookup_elem(off->skel->maps.waits, &key, sizeof(key), &waits, sizeof(waits), 0))
			continue;
		fn(ctx, key, &waits);
		nr++;
	}
	return error == -ENOENT ? nr : error;
}
