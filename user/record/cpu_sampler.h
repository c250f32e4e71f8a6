/*
 * cpu_sampler: the loader of bpf/sample.bpf.c, the CPU sampler, and its
 * perf events.
 *
 * Its object is loaded first and creates the maps every BPF object shares
 * (bpf/shared.bpf.h, sized here from the configuration); the others take
 * them from cpu_sampler__object (see loader.h). It is loaded in every
 * recording, since its exec program tells when a target replaces its
 * program; its perf events are opened only by cpu_sampler__start.
 *
 * The randomised interval (see bpf/sample.bpf.c) is set up here: the perf
 * event's base period b is drawn uniformly from [0.9/F, 0.97/F] once per
 * recording, and the BPF program keeps each tick with probability b*F.
 *
 * Failures are one line in err and a negative errno; a failed call leaves
 * nothing to undo but what cpu_sampler__close undoes.
 */
#ifndef JBPF_CPU_SAMPLER_H
#define JBPF_CPU_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/record/sampler.h"

struct bpf_object;
struct cpu_sampler;
struct unwinder;

/*
 * Opens, configures and loads the CPU sampler, fills its tgid filter and
 * attaches its exec program; with unwind tables, reads the targets' tables
 * into its maps. No perf event yet.
 */
int cpu_sampler__open(const struct sampler_config *config, struct cpu_sampler **out, char *err, size_t err_size);
/* Opens a software cpu-clock perf event on every online CPU and attaches the sampler to each. */
int cpu_sampler__start(struct cpu_sampler *cs, char *err, size_t err_size);
/* Disables the perf events and its checks of waits' switch-ins; the program stays loaded. */
void cpu_sampler__stop(struct cpu_sampler *cs);
/* Detaches and closes everything; NULL-safe. */
void cpu_sampler__close(struct cpu_sampler *cs);

/* The loaded object: the owner of the shared maps. */
struct bpf_object *cpu_sampler__object(const struct cpu_sampler *cs);

/* Whether a JVM thread runs no Java (no_java_tids in bpf/shared.bpf.h). */
void cpu_sampler__set_no_java(struct cpu_sampler *cs, uint32_t tid, bool no_java);
/* sampler__set_hotspot. */
int cpu_sampler__set_hotspot(struct cpu_sampler *cs, uint32_t tgid, const struct jbpf_hotspot_jvm *jvm);
/* As sampler__set_java_thread. */
int cpu_sampler__set_java_thread(struct cpu_sampler *cs, uint32_t tid, uint64_t java_thread);

/* The unwind tables' feeder, or NULL when stacks are walked by frame pointers. */
struct unwinder *cpu_sampler__unwinder(const struct cpu_sampler *cs);

/* CPUs with a perf event (0 before cpu_sampler__start), and the base period in ns. */
unsigned cpu_sampler__cpus(const struct cpu_sampler *cs);
uint64_t cpu_sampler__base_period_ns(const struct cpu_sampler *cs);

#endif /* JBPF_CPU_SAMPLER_H */
