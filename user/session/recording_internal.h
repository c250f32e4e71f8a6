/*
 * recording_internal: what the files of one recording share and nobody
 * else uses. recording.h is the public contract; the recording is split
 * into
 *
 *   recording.c       the core: targets resolved, stages made, the sampler
 *                     opened, the session run, the intervals of
 *                     --continuous cut
 *   recording_java.c  the JVMs at the start: walked by BPF, or the agent
 *                     loaded, or watched until they are live
 *   summary.c         what the recording says afterwards: the summary line
 *                     and, with -v, its costs and caches
 */
#ifndef JBPF_RECORDING_INTERNAL_H
#define JBPF_RECORDING_INTERNAL_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"
#include "user/record/aggregator.h"
#include "user/session/pipeline.h"
#include "user/session/recording.h"
#include "user/session/session.h"

struct recording {
	struct recording_config config;
	uint32_t tgids[JBPF_MAX_TARGETS];
	uint64_t start_ticks[JBPF_MAX_TARGETS]; /* when each started: tells them from later owners of their pids */
	size_t nr_tgids;
	struct symbolizer *sym;
	struct kernel_symbols *kernel_symbols; /* NULL: the kernel cannot be asked; kallsyms names */
	struct profile *profile;
	struct aggregator *agg;
	struct java *java;
	struct walked *walked;   /* JVMs whose Java frames BPF walks */
	size_t jvms_starting;    /* JVMs offered to the walk at the start while still starting */
	struct starting *starting; /* JVMs unwalked while starting, for the summary */
	struct oracle *oracle;   /* --java-stacks both: the walk checked against the agent */
	struct pipeline *pipeline;
	struct leaks *leaks;     /* -e nativemem --leaks */
	struct sampler *sampler;
	struct session_result session;
	uint64_t counters[JBPF_CNT_NR];
	uint64_t base_period_ns;
	uint64_t start_ns;    /* CLOCK_MONOTONIC when the recording was made */
	int64_t start_unix_ns; /* CLOCK_REALTIME when the sampler started: the timeline's tick 0; 0 before */
	uint64_t sampling_ns; /* CLOCK_MONOTONIC when its session began, the sampler open */
	uint64_t stop_ns;     /* CLOCK_MONOTONIC when its session ended, 0 before */
	/* --continuous: where the interval in progress began, and the counts then */
	int64_t interval_from_unix_ns;
	uint64_t cut_counters[JBPF_CNT_NR];
	struct aggregator_stats cut_agg;
	struct pipeline_stats cut_pipeline;
	uint64_t intervals_skipped; /* cuts not made: no memory for a fresh profile */
};

/* Whether the recording weighs time (CPU samples, waits): -e cpu, wall or offcpu. */
static inline bool recording__has_time(const struct recording *rec)
{
	return rec->config.events & (RECORDING_EVENT(RECORDING_CPU) | RECORDING_EVENT(RECORDING_WALL) |
				     RECORDING_EVENT(RECORDING_OFFCPU) | RECORDING_EVENT(RECORDING_LOCK));
}

/*
 * recording_java.c: loads the agent into every JVM among the targets (-p),
 * or on the host (-a), or has BPF walk their frames, and has the Java side
 * watch for those that start or exec later; before the sampler is opened.
 * 0, or -1 after saying why (--java, and a target did not take the agent).
 */
int recording__attach_jvms(struct recording *rec);

#endif /* JBPF_RECORDING_INTERNAL_H */
