/*
 * process_roots: each process's root frame, named once (contract in
 * process_roots.h).
 */
#include "process_roots.h"

#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/service.h"

struct root_slot {
	uint32_t tgid;
	uint64_t start;   /* the symbolizer's start time when it was named */
	int64_t frame;    /* -1: empty */
};

struct process_roots {
	enum view_process_root grouping;
	struct root_slot slots[PROCESS_ROOTS_SLOTS];
};

struct process_roots *process_roots__new(enum view_process_root grouping)
{
	struct process_roots *roots = malloc(sizeof(*roots));

	if (!roots)
		return NULL;
	roots->grouping = grouping;
	process_roots__clear(roots);
	return roots;
}

void process_roots__free(struct process_roots *roots)
{
	free(roots);
}

void process_roots__clear(struct process_roots *roots)
{
	for (size_t i = 0; i < PROCESS_ROOTS_SLOTS; i++)
		roots->slots[i] = (struct root_slot){ .frame = -1 };
}

static struct root_slot *slot_of(struct process_roots *roots, uint32_t tgid)
{
	return &roots->slots[(tgid * 0x9e3779b1u) >> 20 & (PROCESS_ROOTS_SLOTS - 1)];
}

void process_roots__forget(struct process_roots *roots, uint32_t tgid)
{
	struct root_slot *slot = slot_of(roots, tgid);

	if (slot->tgid == tgid)
		slot->frame = -1;
}

/* Whether name is comm cut short: comm holds JBPF_COMM_LEN - 1 bytes at most. */
static int cut_short(const char *name, const char *comm)
{
	size_t len = strlen(comm);

	return len == JBPF_COMM_LEN - 1 && strlen(name) > len && !strncmp(name, comm, len);
}

int64_t process_roots__frame(struct process_roots *roots, struct profile *profile, struct symbolizer *sym,
			     uint32_t tgid, const char *comm)
{
	struct root_slot *slot = slot_of(roots, tgid);
	uint64_t start = symbolizer__process_start(sym, tgid);
	const char *known;
	char name[JBPF_COMM_LEN + 1];
	struct service_info service;
	struct process_parts parts = { .pid = tgid };
	int64_t frame;

	if (slot->frame >= 0 && slot->tgid == tgid && slot->start == start)
		return slot->frame;
	/* Named only when not known: a sample of a known process costs one lookup. */
	known = symbolizer__process_name(sym, tgid);
	/* The symbolizer's answer is valid until its next call: service__of_process may not make one, but copy it. */
	snprintf(name, sizeof(name), "%s", known ? known : comm);
	parts.name = name;
	if (roots->grouping != VIEW_ROOT_EXECUTABLE) {
		service__of_process(symbolizer__proc_root(sym), tgid, name, &service);
		if (service.from_cmdline || cut_short(service.name, name))
			parts.program = service.name;
		parts.container = service.container_id;
	}
	frame = view__process_frame(profile, &parts, roots->grouping);
	if (frame >= 0)
		*slot = (struct root_slot){ .tgid = tgid, .start = start, .frame = frame };
	return frame;
}
