/*
 * starting: JVMs the BPF walk found still starting, from then until it
 * took them, for the summary.
 *
 * A JVM profiled from its exec onward is unwalked for a while: its code
 * cache and interpreter are not set yet, so the walk cannot take it, and
 * the agent is not tried either (it would load into a JVM the walk takes a
 * moment later). Its samples then carry no Java frames. This says, per
 * recording, how long that lasted (from the first answer "still starting"
 * to the walk's taking it, or to the end) and what those samples had.
 *
 * Bounded: STARTING_MAX JVMs are followed, later ones counted only. Not
 * thread-safe: the recording's thread alone.
 */
#ifndef JBPF_STARTING_H
#define JBPF_STARTING_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"

#define STARTING_MAX 64

struct starting;

struct starting *starting__new(void);
void starting__free(struct starting *s);

/* The walk said tgid is still starting, at now_ns (CLOCK_MONOTONIC): followed from the first time. */
void starting__seen(struct starting *s, uint32_t tgid, uint64_t now_ns);
/* The walk took tgid at now_ns: no longer unwalked. Nothing if it was never seen starting. */
void starting__walked(struct starting *s, uint32_t tgid, uint64_t now_ns);
/* tgid is gone (an exec, an exit, the agent took it) at now_ns: its unwalked time ends. */
void starting__gone(struct starting *s, uint32_t tgid, uint64_t now_ns);
/* A sample of a process the walk does not take (yet): counted if it is a JVM still starting. */
void starting__sample(struct starting *s, const struct jbpf_sample *sample);

/*
 * "2 JVMs unwalked while starting, 0.31 s at most (pid 12), their 40
 * samples then without Java frames (38 in native code, 2 in the kernel
 * only)" into buf; "" when none was. Time counts within the sampling,
 * [from_ns, end_ns): before it nothing was sampled, walked or not.
 */
void starting__describe(const struct starting *s, uint64_t from_ns, uint64_t end_ns, char *buf, size_t size);

#endif /* JBPF_STARTING_H */
