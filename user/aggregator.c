/*
 * aggregator: sample records to profile stacks (contract in aggregator.h).
 */
#include "aggregator.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"

/* Frames of one stack: two roots, two full perf stacks, two reason frames. */
#define MAX_FRAMES (2 + 2 * JBPF_MAX_STACK_DEPTH + 2)
#define NAME_MAX_LEN 512

struct aggregator {
	struct aggregator_config config;
	struct symbolizer *sym;
	struct profile *profile;
	struct aggregator_stats stats;
	uint32_t frames[MAX_FRAMES];
};

struct aggregator *aggregator__new(const struct aggregator_config *config, struct symbolizer *sym,
				   struct profile *profile)
{
	struct aggregator *agg = calloc(1, sizeof(*agg));

	if (!agg)
		return NULL;
	agg->config = *config;
	agg->sym = sym;
	agg->profile = profile;
	return agg;
}

void aggregator__free(struct aggregator *agg)
{
	free(agg);
}

void aggregator__stats(const struct aggregator *agg, struct aggregator_stats *stats)
{
	*stats = agg->stats;
}

/* The comm the kernel gave us, which the target chose: NUL-terminate it. */
static void copy_comm(char *dst, const char comm[JBPF_COMM_LEN])
{
	memcpy(dst, comm, JBPF_COMM_LEN);
	dst[JBPF_COMM_LEN] = '\0';
}

/*
 * Appends one frame; returns false when the profile is full (the caller
 * drops the whole sample rather than keep a stack missing frames).
 */
static bool push(struct aggregator *agg, size_t *depth, const char *name, enum frame_kind kind)
{
	int64_t id;

	if (*depth >= MAX_FRAMES)
		return true;
	id = profile__intern(agg->profile, name, kind);
	if (id < 0)
		return false;
	agg->frames[(*depth)++] = (uint32_t)id;
	return true;
}

static const char *stack_error_reason(int error, bool user)
{
	switch (-error) {
	case EFAULT:
		return user ? "[user stack unreadable]" : "[kernel stack unreadable]";
	case ENOMEM:
	case ENOSPC:
		return "[stack too deep]";
	default:
		return user ? "[user stack failed]" : "[kernel stack failed]";
	}
}

static bool add_roots(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	char comm[JBPF_COMM_LEN + 1], name[NAME_MAX_LEN];

	copy_comm(comm, s->comm);
	if (agg->config.process_root != AGGREGATOR_ROOT_NONE) {
		const char *pname = symbolizer__process_name(agg->sym, s->tgid);

		if (!pname)
			pname = comm;
		if (agg->config.process_root == AGGREGATOR_ROOT_PROCESS_PID)
			snprintf(name, sizeof(name), "%s (pid %u)", pname, s->tgid);
		else
			snprintf(name, sizeof(name), "%s", pname);
		if (!push(agg, depth, name, FRAME_KIND_PROCESS))
			return false;
	}
	if (agg->config.thread_root) {
		snprintf(name, sizeof(name), "[%s tid=%u]", comm, s->tid);
		if (!push(agg, depth, name, FRAME_KIND_THREAD))
			return false;
	}
	return true;
}

static bool add_user_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	const __u64 *ips = s->ips + s->kstack_len;
	char name[NAME_MAX_LEN];

	if (s->ustack_err && !s->ustack_len)
		return push(agg, depth, stack_error_reason(s->ustack_err, true), FRAME_KIND_LOST);
	for (size_t i = s->ustack_len; i-- > 0;) {
		/* ips[0] is where the thread was; the rest are return addresses. */
		uint64_t addr = i == 0 ? ips[i] : ips[i] - 1;
		enum sym_status status = symbolizer__user(agg->sym, s->tgid, addr, name, sizeof(name));

		if (!push(agg, depth, name, status == SYM_JIT ? FRAME_KIND_JIT : FRAME_KIND_NATIVE))
			return false;
	}
	return true;
}

static bool add_kernel_frames(struct aggregator *agg, const struct jbpf_sample *s, size_t *depth)
{
	char name[NAME_MAX_LEN];
	size_t len;

	if (s->kstack_err && !s->kstack_len)
		return push(agg, depth, stack_error_reason(s->kstack_err, false), FRAME_KIND_LOST);
	for (size_t i = s->kstack_len; i-- > 0;) {
		uint64_t addr = i == 0 ? s->ips[i] : s->ips[i] - 1;

		symbolizer__kernel(agg->sym, addr, name, sizeof(name) - 4);
		len = strlen(name);
		memcpy(name + len, "_[k]", 5);
		if (!push(agg, depth, name, FRAME_KIND_KERNEL))
			return false;
	}
	return true;
}

static bool sample_is_valid(const struct jbpf_sample *s, size_t size)
{
	if (size < sizeof(*s))
		return false;
	if (s->kstack_len > JBPF_MAX_STACK_DEPTH || s->ustack_len > JBPF_MAX_STACK_DEPTH)
		return false;
	return size >= sizeof(*s) + ((size_t)s->kstack_len + s->ustack_len) * sizeof(__u64);
}

void aggregator__add(struct aggregator *agg, const void *record, size_t size)
{
	const struct jbpf_sample *s = record;
	size_t depth = 0;
	int error;

	if (size >= sizeof(struct jbpf_exec) && s->type == JBPF_RECORD_EXEC) {
		agg->stats.execs++;
		symbolizer__forget_process(agg->sym, ((const struct jbpf_exec *)record)->tgid);
		return;
	}
	agg->stats.received++;
	if (size < sizeof(__u32) || s->type != JBPF_RECORD_CPU_SAMPLE || !sample_is_valid(s, size)) {
		agg->stats.malformed++;
		return;
	}
	if (s->ustack_err && !s->ustack_len)
		agg->stats.no_user_stack++;
	if (s->kstack_err && !s->kstack_len)
		agg->stats.no_kernel_stack++;
	if (!add_roots(agg, s, &depth) || !add_user_frames(agg, s, &depth) ||
	    !add_kernel_frames(agg, s, &depth)) {
		agg->stats.profile_full++;
		return;
	}
	error = profile__add(agg->profile, agg->frames, depth, 1);
	if (error) {
		agg->stats.profile_full++;
		return;
	}
	agg->stats.written++;
}
