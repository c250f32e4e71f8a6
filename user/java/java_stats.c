/*
 * java_stats: the Java side's counters and its part of the summary
 * (contract in java.h, the files' roles in java_internal.h). The counters
 * are the samples' (struct java), the agents' own (their last STATS, the
 * methods and code they named, their threads' stacks), and those of the
 * JVMs whose slots were freed, kept apart in java->retired.
 */
#include "user/java/java_internal.h"

#include <stdio.h>

#include "common/counts.h"
#include "user/java/javamap.h"
#include "user/java/javastacks.h"
#include "user/java/merge.h"


void java__attach_stats(const struct java *java, struct java_attach_stats *stats)
{
	*stats = java->attach;
}

/* The agents' own counters of jvm, added to totals (java__stats). */
void java__add_agent_counts(struct java_stats *st, const struct jvm *jvm)
{
	struct javamap_stats ms;

	if (jvm->stacks) {
		struct javastacks_stats ss;

		javastacks__stats(jvm->stacks, &ss);
		st->thread_stacks += ss.stored;
		st->thread_stacks_dropped += ss.dropped + ss.unmapped;
	}
	st->thread_stacks_dropped += jvm->stacks_lost;
	st->ring_full += jvm->agent_stats.ring_full;
	st->handler_ns += jvm->agent_stats.handler_ns;
	st->handler_calls += jvm->agent_stats.traces;
	st->agent_allocs += jvm->agent_stats.allocs;
	st->agent_allocs_lost += jvm->agent_stats.allocs_lost;
	javamap__stats(jvm->map, &ms);
	st->methods += ms.methods;
	st->blobs += ms.blobs;
}

void java__stats(const struct java *java, struct java_stats *stats)
{
	*stats = java->stats;
	stats->ring_full = java->retired.ring_full;
	stats->handler_ns = java->retired.handler_ns;
	stats->handler_calls = java->retired.handler_calls;
	stats->methods = java->retired.methods;
	stats->blobs = java->retired.blobs;
	stats->thread_stacks = java->retired.thread_stacks;
	stats->thread_stacks_dropped = java->retired.thread_stacks_dropped;
	stats->agent_allocs = java->retired.agent_allocs;
	stats->agent_allocs_lost = java->retired.agent_allocs_lost;
	for (size_t i = 0; i < java->nr_jvms; i++)
		java__add_agent_counts(stats, &java->jvms[i]);
	if (java->merge) {
		struct merge_kind_counts kinds;

		merge__kind_counts(java->merge, &kinds);
		stats->kinds_by_agent = kinds.by_agent;
		stats->kinds_by_native = kinds.by_native;
		stats->kinds_inferred = kinds.inferred;
	}
}

void java__describe(const struct java *java, char *buf, size_t size)
{
	struct java_stats st;
	uint64_t java_threads;
	size_t used;

	java__stats(java, &st);
	java_threads = st.jvm_samples - st.vm_threads;
	used = (size_t)snprintf(buf, size,
				"Java stacks: %llu of %llu joined (%.1f%%), %llu on VM threads (not signalled: %llu waits, "
				"%llu CPU samples)",
				(unsigned long long)st.with_java, (unsigned long long)java_threads,
				java_threads ? 100.0 * (double)st.with_java / (double)java_threads : 100.0,
				(unsigned long long)st.vm_threads, (unsigned long long)st.unsignalled_waits,
				(unsigned long long)st.unsignalled_cpu);
	if ((st.from_anchor || st.from_caller) && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; joined by a second walk: %llu from the last Java frame, %llu from a stub's "
					 "Java caller",
					 (unsigned long long)st.from_anchor, (unsigned long long)st.from_caller);
	if ((st.kinds_by_agent || st.kinds_by_native || st.kinds_inferred) && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; Java frame kinds: %llu exact (%llu walked by the agent, %llu from the native "
					 "stack), %llu inferred",
					 (unsigned long long)(st.kinds_by_agent + st.kinds_by_native),
					 (unsigned long long)st.kinds_by_agent, (unsigned long long)st.kinds_by_native,
					 (unsigned long long)st.kinds_inferred);
	{
		struct named_count causes[24];
		size_t n = 0;

		for (size_t code = 1; code < AGCT_OTHER; code++)
			causes[n++] = (struct named_count){ java_agct_reasons[code], st.agct[code] };
		causes[n++] = (struct named_count){ "signal failed", st.signal_failed };
		causes[n++] = (struct named_count){ "its last signal still handled", st.signal_busy };
		causes[n++] = (struct named_count){ "no stack from the agent", st.no_trace };
		causes[n++] = (struct named_count){ "still in a system call", st.in_syscall };
		causes[n++] = (struct named_count){ "signal not sent", st.signal_lost };
		causes[n++] = (struct named_count){ "join queue full", st.queue_full };
		causes[n++] = (struct named_count){ "other", st.unknown_status };
		used = counts__append(buf, size, used, "; without: ", causes, n);
	}
	if (st.ring_full && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; agent ring full %llu",
					 (unsigned long long)st.ring_full);
	if (st.thread_stacks_dropped && used < size)
		snprintf(buf + used, size - used, "; thread stacks dropped %llu",
			 (unsigned long long)st.thread_stacks_dropped);
}

void java__describe_attach(const struct java *java, bool all, char *buf, size_t size)
{
	const struct java_attach_stats *a = &java->attach;
	size_t used;

	buf[0] = '\0';
	if (!all && !a->attached_late && !a->failed && !a->over_bound && !a->watch_full)
		return;
	used = (size_t)snprintf(buf, size, "; JVMs: %llu attached (%llu during the recording), %llu failed",
				(unsigned long long)a->attached, (unsigned long long)a->attached_late,
				(unsigned long long)a->failed);
	if (a->over_bound && used < size)
		used += (size_t)snprintf(buf + used, size - used, ", %llu not attached past the bound of %d",
					 (unsigned long long)a->over_bound, JBPF_MAX_TARGETS);
	if (a->watch_full && used < size)
		snprintf(buf + used, size - used, ", %llu new processes not watched (%d at once)",
			 (unsigned long long)a->watch_full, WATCH_SLOTS);
}
