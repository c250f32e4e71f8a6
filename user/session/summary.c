/*
 * summary: what a recording says once it has run (contract in
 * recording.h, the files' roles in recording_internal.h): the summary
 * line, where every sample taken is written or lost for a named reason,
 * with its unwind, wall-clock and Java parts; the lines a person should
 * read after the outputs; and with -v the recording's costs (its own CPU
 * time, the BPF programs' run time) and how its tables and caches fared.
 */
#include "user/session/recording_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/clock.h"
#include "common/counts.h"
#include "profile/timeline.h"
#include "symbolizer/symbolizer.h"
#include "unwind/unwind.h"
#include "user/java/java.h"
#include "user/java/oracle.h"
#include "user/java/starting.h"
#include "user/java/walked.h"
#include "user/record/leaks.h"
#include "user/record/loader.h"
#include "user/record/sampler.h"
#include "user/record/unwinder.h"
#include "user/record/wall.h"

uint64_t recording__written(const struct recording *rec)
{
	return pipeline__written(rec->pipeline);
}

/* The losses and damage, e.g. "lost 3 (ring buffer full 3)"; empty when none. */
static void describe_losses(const struct recording *rec, const struct aggregator_stats *stats,
			    const struct pipeline_stats *ps, const struct symbolizer_stats *sym, uint64_t unaccounted,
			    char *buf, size_t size)
{
	uint64_t lost = rec->counters[JBPF_CNT_RINGBUF_FULL] + stats->profile_full + ps->malformed + unaccounted;
	size_t used;

	used = (size_t)snprintf(buf, size, "%llu lost", (unsigned long long)lost);
	if (lost) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_RINGBUF_FULL] },
			{ "profile full", stats->profile_full },
			{ "malformed", ps->malformed },
			{ "not delivered", unaccounted },
		};

		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	}
	if (stats->no_user_stack && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu without a user stack",
					 (unsigned long long)stats->no_user_stack);
	if (stats->no_kernel_stack && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu without a kernel stack",
					 (unsigned long long)stats->no_kernel_stack);
	if (rec->counters[JBPF_CNT_SAMPLES_LATE] && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; %llu taken late (their CPU was held up: the hypervisor's steal time, or "
					 "interrupts off), each credited to where its thread stood before",
					 (unsigned long long)rec->counters[JBPF_CNT_SAMPLES_LATE]);
	if (stats->times_lost && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu without their time (the timeline full)",
					 (unsigned long long)stats->times_lost);
	if (sym->tables_refused && used < size)
		snprintf(buf + used, size - used, "; %llu symbol tables not read (over the memory bound: "
			 "their frames are file+offset)", (unsigned long long)sym->tables_refused);
}

/*
 * The wall-clock part of the summary: the window, the waits, and what of
 * them was lost, e.g. "; window 30.002 s, 1200 threads, 5400 waits (3 lost)".
 */
/*
 * --wakers: "; wakers: 300 read, 120 of them interrupts, 2 waits without
 * theirs (lost: ring buffer full 1)".
 */
static void describe_wakers(const struct recording *rec, char *buf, size_t size)
{
	struct aggregator_stats stats;
	size_t used;

	aggregator__stats(rec->agg, &stats);
	used = (size_t)snprintf(buf, size, "; wakers: %llu read, %llu of them interrupts",
				(unsigned long long)rec->counters[JBPF_CNT_WAKERS_SENT],
				(unsigned long long)rec->counters[JBPF_CNT_WAKERS_INTERRUPT]);
	if (stats.wakers_missing && used < size) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_WAKERS_LOST] },
			{ "replaced before their wait came", stats.wakers_replaced },
		};

		used += (size_t)snprintf(buf + used, size - used, ", %llu waits without theirs",
					 (unsigned long long)stats.wakers_missing);
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			snprintf(buf + used, size - used, ")");
	}
}

/*
 * Virtual threads' time unmounted (bpf/vthreads.bpf.c): "; virtual threads:
 * 5000 mounts, 1200 waits recorded (41.500 s unmounted), 3 lost (ring
 * buffer full 1, probe busy 2)". Nothing when no probe saw anything.
 */
static void describe_vthreads(const struct recording *rec, const struct wall_stats *ws, char *buf, size_t size)
{
	const uint64_t *c = rec->counters;
	uint64_t lost = c[JBPF_CNT_VTHREAD_LOST] + c[JBPF_CNT_VTHREAD_BUSY];
	size_t used;

	if (!c[JBPF_CNT_VTHREAD_MOUNTS] && !c[JBPF_CNT_VTHREAD_UNMOUNTS] && !c[JBPF_CNT_VTHREAD_UNKNOWN])
		return;
	used = (size_t)snprintf(buf, size, "; virtual threads: %llu mounts, %llu waits recorded (%.3f s unmounted)",
				(unsigned long long)c[JBPF_CNT_VTHREAD_MOUNTS], (unsigned long long)ws->vthread_waits,
				(double)ws->vthread_ns / 1e9);
	if (c[JBPF_CNT_VTHREAD_PINNED] && used < size)
		used += (size_t)snprintf(buf + used, size - used, ", %llu freezes of pinned ones (they stayed mounted)",
					 (unsigned long long)c[JBPF_CNT_VTHREAD_PINNED]);
	if (c[JBPF_CNT_VTHREAD_NO_STACK] && used < size)
		used += (size_t)snprintf(buf + used, size - used, ", %llu of them without frames (none found frozen)",
					 (unsigned long long)c[JBPF_CNT_VTHREAD_NO_STACK]);
	if (lost && used < size) {
		const struct named_count causes[] = {
			{ "ring buffer full", c[JBPF_CNT_VTHREAD_LOST] },
			{ "probe busy", c[JBPF_CNT_VTHREAD_BUSY] },
		};

		used += (size_t)snprintf(buf + used, size - used, ", %llu lost", (unsigned long long)lost);
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	}
	if (c[JBPF_CNT_VTHREAD_UNKNOWN] && used < size)
		snprintf(buf + used, size - used,
			 ", %llu freezes or mounts not told (no VirtualThread mounted there: JDK 21 to 23)",
			 (unsigned long long)c[JBPF_CNT_VTHREAD_UNKNOWN]);
}

static void describe_wall(const struct recording *rec, const struct wall *wall, char *buf, size_t size)
{
	struct wall_stats ws;
	uint64_t lost;
	size_t used;

	wall__stats(wall, &ws);
	lost = rec->counters[JBPF_CNT_WAITS_LOST] + ws.ends_lost;
	used = (size_t)snprintf(buf, size, "; window %.3f s, %llu threads, %llu waits",
				(double)wall__window_ns(wall) / 1e9, (unsigned long long)ws.threads,
				(unsigned long long)ws.waits);
	if (lost && used < size) {
		const struct named_count causes[] = {
			{ "ring buffer full", rec->counters[JBPF_CNT_WAITS_LOST] },
			{ "end not seen", ws.ends_lost },
		};

		used += (size_t)snprintf(buf + used, size - used, ", %llu lost", (unsigned long long)lost);
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	}
	if (rec->counters[JBPF_CNT_SWITCH_MISSED] && used < size)
		used += (size_t)snprintf(buf + used, size - used,
					 "; %llu context switches not seen (%llu waits ended at the return to user mode "
					 "with their user stack, %llu sent without stacks, the rest dropped)",
					 (unsigned long long)rec->counters[JBPF_CNT_SWITCH_MISSED],
					 (unsigned long long)rec->counters[JBPF_CNT_SWITCH_IN_LATE],
					 (unsigned long long)rec->counters[JBPF_CNT_WAIT_NO_STACKS]);
	if (rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu threads not followed (table full)",
					 (unsigned long long)(rec->counters[JBPF_CNT_THREADS_FULL] + ws.threads_full));
	if (ws.no_user_stack && used < size)
		used += (size_t)snprintf(buf + used, size - used, "; %llu waits without their user stack",
					 (unsigned long long)ws.no_user_stack);
	if (recording__config_has(&rec->config, RECORDING_LOCK) && used < size) {
		struct aggregator_stats stats;

		aggregator__stats(rec->agg, &stats);
		used += (size_t)snprintf(buf + used, size - used, "; %llu waits for a lock, %llu for none (left out)",
					 (unsigned long long)stats.written, (unsigned long long)stats.not_locks);
	}
	if (used < size) {
		describe_vthreads(rec, &ws, buf + used, size - used);
		used += strlen(buf + used);
	}
	if (rec->config.wakers && used < size)
		describe_wakers(rec, buf + used, size - used);
}

/*
 * How the user stacks of CPU samples were walked, with unwind tables, e.g.
 * "; user stacks: 980 wholly by unwind tables, 20 in part by frame
 * pointers or cut short (JIT or anonymous code 15, read failed 5)"; empty with
 * --unwind fp.
 */
static void describe_unwind(const struct recording *rec, char *buf, size_t size)
{
	const struct unwinder *u = rec->sampler ? sampler__unwinder(rec->sampler) : NULL;
	struct unwinder_stats us;
	const uint64_t *c = rec->counters;
	uint64_t fp = c[JBPF_CNT_UNWIND_NO_PROCESS] + c[JBPF_CNT_UNWIND_ANON] + c[JBPF_CNT_UNWIND_NO_INFO] +
		      c[JBPF_CNT_UNWIND_STOP] + c[JBPF_CNT_UNWIND_READ] + c[JBPF_CNT_UNWIND_DEPTH];
	const struct named_count causes[] = {
		{ "no tables yet", c[JBPF_CNT_UNWIND_NO_PROCESS] },
		{ "JIT or anonymous code", c[JBPF_CNT_UNWIND_ANON] },
		{ "file without unwind info", c[JBPF_CNT_UNWIND_NO_INFO] },
		{ "expression row", c[JBPF_CNT_UNWIND_STOP] },
		{ "read failed", c[JBPF_CNT_UNWIND_READ] },
		{ "depth limit", c[JBPF_CNT_UNWIND_DEPTH] },
	};
	size_t used;

	buf[0] = '\0';
	if (rec->config.unwind_fp || !(fp + c[JBPF_CNT_UNWIND_TABLES]))
		return;
	used = (size_t)snprintf(buf, size,
				"; user stacks: %llu wholly by unwind tables, %llu in part by frame pointers or cut short",
				(unsigned long long)c[JBPF_CNT_UNWIND_TABLES], (unsigned long long)fp);
	used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
	if (fp && used < size)
		used += (size_t)snprintf(buf + used, size - used, ")");
	/* A table left out for room shows above as a file without unwind info: say which it was. */
	if (u)
		unwinder__stats(u, &us);
	if (u && us.rows_full && used < size)
		snprintf(buf + used, size - used, "; %llu unwind tables left out, no room in %.0f MiB of BPF memory",
			 (unsigned long long)us.rows_full, (double)us.row_bytes / (1 << 20));
}

/*
 * -e alloc: "N allocations sampled, N written, N lost (...)": what the
 * agents sampled (their own counts, which include what they dropped), and
 * what came of it here; then the attach line.
 */
static void alloc_summary(const struct recording *rec, char *buf, size_t size)
{
	struct aggregator_stats stats;
	struct java_stats js;
	char attach_line[256] = "";
	uint64_t taken, lost_here, late, lost;

	aggregator__stats(rec->agg, &stats);
	java__stats(rec->java, &js);
	java__describe_attach(rec->java, rec->config.all, attach_line, sizeof(attach_line));
	/* An agent's last counts may predate its last samples: never fewer taken than received. */
	taken = js.agent_allocs > js.allocs + js.agent_allocs_lost ? js.agent_allocs : js.allocs + js.agent_allocs_lost;
	lost_here = js.allocs > stats.written_by[AGGREGATOR_HEAP] ? js.allocs - stats.written_by[AGGREGATOR_HEAP] : 0;
	/* Sampled by a JVM after it was asked for the last of them, as the recording ended. */
	late = taken - js.allocs - js.agent_allocs_lost;
	lost = js.agent_allocs_lost + lost_here + late;
	snprintf(buf, size,
		 "%llu allocations sampled, %llu written, %llu lost (%llu in the JVMs: send queue full; %llu here: "
		 "profile full; %llu sampled as the recording ended); %llu without Java frames, %llu made by native code%s",
		 (unsigned long long)taken, (unsigned long long)stats.written_by[AGGREGATOR_HEAP], (unsigned long long)lost,
		 (unsigned long long)js.agent_allocs_lost, (unsigned long long)lost_here, (unsigned long long)late,
		 (unsigned long long)js.allocs_no_java, (unsigned long long)js.allocs_native, attach_line);
}

/*
 * -e nativemem: "N allocation calls, N sampled, N written, N lost (...)";
 * with --leaks, what became of the samples instead: freed during the
 * recording, still allocated at the end (the profile), or not followed
 * and why. Then the Java walk's line, and with -v the unwind tables'.
 */
static void nativemem_summary(const struct recording *rec, char *buf, size_t size)
{
	const uint64_t *c = rec->counters;
	struct aggregator_stats stats;
	struct pipeline_stats ps;
	size_t used;

	aggregator__stats(rec->agg, &stats);
	pipeline__stats(rec->pipeline, &ps);
	used = (size_t)snprintf(buf, size, "%llu allocation calls, %llu sampled",
				(unsigned long long)c[JBPF_CNT_NATIVE_CALLS], (unsigned long long)c[JBPF_CNT_NATIVE_SAMPLED]);
	if (!rec->leaks) {
		const struct named_count causes[] = {
			{ "ring buffer full", c[JBPF_CNT_NATIVE_LOST] },
			{ "their CPU's record in use", c[JBPF_CNT_NATIVE_BUSY] },
			{ "profile full", stats.profile_full },
			{ "malformed", ps.malformed_samples },
		};
		uint64_t lost = c[JBPF_CNT_NATIVE_LOST] + c[JBPF_CNT_NATIVE_BUSY] + stats.profile_full + ps.malformed_samples;

		if (used < size)
			used += (size_t)snprintf(buf + used, size - used, ", %llu written, %llu lost",
						 (unsigned long long)stats.written_by[AGGREGATOR_NATIVE], (unsigned long long)lost);
		used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
		if (lost && used < size)
			used += (size_t)snprintf(buf + used, size - used, ")");
	} else {
		struct leaks_stats ls;

		leaks__stats(rec->leaks, &ls);
		{
			const struct named_count causes[] = {
				{ "ring buffer full", c[JBPF_CNT_NATIVE_LOST] },
				{ "their CPU's record in use", c[JBPF_CNT_NATIVE_BUSY] },
				{ "live table full", ls.untracked },
				{ "address not known (the call failed, or its record was lost)", ls.no_address },
				{ "their process exited", ls.exited },
				{ "held records full", ls.full },
				{ "profile full", stats.profile_full },
			};
			uint64_t not_followed = c[JBPF_CNT_NATIVE_LOST] + c[JBPF_CNT_NATIVE_BUSY] + ls.untracked +
						ls.no_address + ls.exited + ls.full + stats.profile_full;

			if (used < size)
				used += (size_t)snprintf(buf + used, size - used,
							 ": %llu freed during the recording, %llu still allocated at the "
							 "end (%llu written), %llu not followed",
							 (unsigned long long)ls.freed, (unsigned long long)ls.kept,
							 (unsigned long long)stats.written_by[AGGREGATOR_NATIVE],
							 (unsigned long long)not_followed);
			used = counts__append(buf, size, used, " (", causes, sizeof(causes) / sizeof(causes[0]));
			if (not_followed && used < size)
				used += (size_t)snprintf(buf + used, size - used, ")");
		}
		if (c[JBPF_CNT_NATIVE_FREES_LOST] && used < size)
			used += (size_t)snprintf(buf + used, size - used,
						 "; %llu frees or addresses lost, ring buffer full (those allocations may "
						 "show as still allocated)",
						 (unsigned long long)c[JBPF_CNT_NATIVE_FREES_LOST]);
	}
	/* Beside time, the time's part says these. */
	if (recording__has_time(rec))
		return;
	if (walked__nr_jvms(rec->walked) && used + 2 < size) {
		memcpy(buf + used, "; ", 3);
		walked__describe(rec->walked, buf + used + 2, size - used - 2);
		if (buf[used + 2])
			used = strlen(buf);
		else
			buf[used] = '\0';
	}
	if (rec->config.verbose && used < size)
		describe_unwind(rec, buf + used, size - used);
}

/* The part of time (CPU samples, waits): "N samples taken, N written, N lost (...)" and the Java side. */
static void time_summary(const struct recording *rec, char *buf, size_t size)
{
	const struct wall *wall = pipeline__wall(rec->pipeline);
	struct aggregator_stats stats;
	struct symbolizer_stats sym;
	struct pipeline_stats ps;
	char losses[512], java_line[1536], wall_line[1024], unwind_line[256], attach_line[256];
	uint64_t taken = rec->counters[JBPF_CNT_SAMPLES], unaccounted;

	aggregator__stats(rec->agg, &stats);
	pipeline__stats(rec->pipeline, &ps);
	/* Every sample taken is written or lost for a counted reason; say so if not. */
	unaccounted = taken - rec->counters[JBPF_CNT_RINGBUF_FULL] - stats.received_by[AGGREGATOR_TIME] -
		      ps.malformed_samples;
	if (unaccounted > taken)
		unaccounted = 0;
	memset(&sym, 0, sizeof(sym));
	if (rec->sym)
		symbolizer__stats(rec->sym, &sym);
	describe_losses(rec, &stats, &ps, &sym, unaccounted, losses, sizeof(losses));
	java_line[0] = '\0';
	attach_line[0] = '\0';
	if (rec->java && java__nr_jvms(rec->java))
		java__describe(rec->java, java_line, sizeof(java_line));
	if (walked__nr_jvms(rec->walked)) {
		size_t used = strlen(java_line);

		walked__describe(rec->walked, java_line + used + (used ? 2 : 0), sizeof(java_line) - used - 2);
		if (used)
			memcpy(java_line + used, "; ", 2);
	}
	if (rec->starting) {
		size_t used = strlen(java_line);

		starting__describe(rec->starting, rec->sampling_ns,
				   rec->stop_ns ? rec->stop_ns : clock__monotonic_ns(), java_line + used + (used ? 2 : 0),
				   sizeof(java_line) - used - 2);
		if (used && java_line[used + 2])
			memcpy(java_line + used, "; ", 2);
	}
	if (rec->oracle) {
		size_t used = strlen(java_line);

		oracle__describe(rec->oracle, java_line + used + (used ? 2 : 0), sizeof(java_line) - used - 2);
		if (used && java_line[used + 2])
			memcpy(java_line + used, "; ", 2);
	}
	if (rec->java && rec->config.java != RECORDING_JAVA_OFF)
		java__describe_attach(rec->java, rec->config.all, attach_line, sizeof(attach_line));
	wall_line[0] = '\0';
	if (wall)
		describe_wall(rec, wall, wall_line, sizeof(wall_line));
	/* How user stacks were walked is the mechanism's detail: -v's. */
	unwind_line[0] = '\0';
	if (rec->config.verbose)
		describe_unwind(rec, unwind_line, sizeof(unwind_line));
	snprintf(buf, size, "%llu samples taken, %llu written, %s%s%s%s%s%s", (unsigned long long)taken,
		 (unsigned long long)stats.written_by[AGGREGATOR_TIME], losses, unwind_line, wall_line, java_line[0] ? "; " : "", java_line,
		 attach_line);
}

/*
 * One part per event, time's first: "N samples taken, ...; N allocation
 * calls, N sampled, ...".
 */
void recording__summary(const struct recording *rec, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	if (recording__has_time(rec)) {
		time_summary(rec, buf, size);
		used = strlen(buf);
	}
	if (recording__config_has(&rec->config, RECORDING_ALLOC) && used + 2 < size) {
		if (used)
			used += (size_t)snprintf(buf + used, size - used, "; ");
		alloc_summary(rec, buf + used, size - used);
		used = strlen(buf);
	}
	if (recording__config_has(&rec->config, RECORDING_NATIVEMEM) && used + 2 < size) {
		if (used)
			used += (size_t)snprintf(buf + used, size - used, "; ");
		nativemem_summary(rec, buf + used, size - used);
	}
}

/* -v: the unwind tables, in BPF and in the cache they are built into. */
static void print_unwind_stats(const struct recording *rec)
{
	const struct unwinder *u = rec->sampler ? sampler__unwinder(rec->sampler) : NULL;
	struct unwind_cache_stats cs;
	struct unwinder_stats us;

	if (!u)
		return;
	unwinder__stats(u, &us);
	unwind_cache__stats(unwinder__cache(u), &cs);
	fprintf(stderr,
		"jbpfprof: unwind tables: %llu processes listed (%llu lists written, %llu maps re-read, "
		"%llu misses, %llu not listed: map full, %llu cut to %u mappings), %llu files with %llu rows placed "
		"(%.1f of %.1f MiB, %.1f MiB mapped here; %llu did not fit), %llu mappings without a table\n",
		(unsigned long long)us.processes, (unsigned long long)us.lists_written,
		(unsigned long long)us.rereads, (unsigned long long)us.misses, (unsigned long long)us.processes_full,
		(unsigned long long)us.lists_truncated, JBPF_UNWIND_MAX_MAPPINGS,
		(unsigned long long)us.files, (unsigned long long)us.rows,
		(double)us.row_bytes_used / (1 << 20), (double)us.row_bytes / (1 << 20),
		(double)us.row_bytes_mapped / (1 << 20), (unsigned long long)us.rows_full, (unsigned long long)us.mappings_no_table);
	fprintf(stderr,
		"jbpfprof: unwind table cache: %llu tables built in %.1f ms (%llu read from disk, %llu kept there; "
		"%llu without usable CFI, %llu evicted), %llu held with %llu rows in %.1f MiB\n",
		(unsigned long long)cs.built, (double)cs.build_ns / 1e6, (unsigned long long)cs.disk_read,
		(unsigned long long)cs.disk_written, (unsigned long long)cs.failed,
		(unsigned long long)cs.evicted, (unsigned long long)cs.tables, (unsigned long long)cs.rows,
		(double)cs.bytes / (1 << 20));
}

static int by_run_time(const void *a, const void *b)
{
	const struct loader_run_time *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

/*
 * -v: what the BPF programs cost, in the threads they ran in, as the
 * kernel counts it; it counts only while kernel.bpf_stats_enabled is 1,
 * since counting costs each run two clock reads.
 */
static void print_bpf_run_time(const struct recording *rec)
{
	struct loader_run_time times[16];
	char line[1024];
	uint64_t ns = 0, runs = 0;
	size_t nr, used = 0;
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int enabled = 0;

	if (f) {
		if (fscanf(f, "%d", &enabled) != 1)
			enabled = 0;
		fclose(f);
	}
	if (!enabled) {
		fprintf(stderr, "jbpfprof: BPF run time not counted (sysctl kernel.bpf_stats_enabled=1 counts it)\n");
		return;
	}
	nr = sampler__run_times(rec->sampler, times, sizeof(times) / sizeof(times[0]));
	qsort(times, nr, sizeof(times[0]), by_run_time);
	line[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		ns += times[i].ns;
		runs += times[i].runs;
		if (times[i].runs && used < sizeof(line))
			used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%s %.1f ms (%llu runs, %.0f ns each)",
						 used ? ", " : "", times[i].name, (double)times[i].ns / 1e6,
						 (unsigned long long)times[i].runs,
						 (double)times[i].ns / (double)times[i].runs);
	}
	fprintf(stderr, "jbpfprof: BPF run time %.1f ms in %llu runs: %s\n", (double)ns / 1e6,
		(unsigned long long)runs, line);
}

/* -v: what the recording cost this process, and how the caches fared. */
static void print_verbose_stats(const struct recording *rec)
{
	const struct wall *wall = pipeline__wall(rec->pipeline);
	struct symbolizer_stats sym;
	struct aggregator_stats agg;
	struct rusage usage;
	double cpu_s;

	if (getrusage(RUSAGE_SELF, &usage) == 0) {
		cpu_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
			(double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
		fprintf(stderr, "jbpfprof: own CPU time %.3f s (%.2f%% of one CPU over %.1f s)\n", cpu_s,
			rec->session.elapsed_s > 0 ? 100.0 * cpu_s / rec->session.elapsed_s : 0.0,
			rec->session.elapsed_s);
	}
	if (rec->sampler)
		print_bpf_run_time(rec);
	if (rec->profile) {
		const struct timeline *tl = profile__timeline(rec->profile);

		fprintf(stderr, "jbpfprof: timeline: %zu spans of %zu stacks, %zu bytes held\n", timeline__count(tl),
			profile__stack_count(rec->profile), timeline__bytes(tl));
	}
	aggregator__stats(rec->agg, &agg);
	fprintf(stderr,
		"jbpfprof: BPF ticks %llu (%llu thinned out), samples kept %llu (%llu late), base period %llu ns, "
		"execs %llu (%llu lost)\n",
		(unsigned long long)rec->counters[JBPF_CNT_TICKS],
		(unsigned long long)rec->counters[JBPF_CNT_TICKS_THINNED],
		(unsigned long long)rec->counters[JBPF_CNT_SAMPLES],
		(unsigned long long)rec->counters[JBPF_CNT_SAMPLES_LATE],
		(unsigned long long)rec->base_period_ns, (unsigned long long)agg.execs,
		(unsigned long long)rec->counters[JBPF_CNT_EXEC_LOST]);
	fprintf(stderr,
		"jbpfprof: deferred signals and stacks: %s; %llu Java signals sent, %llu Java signals deferred, %llu "
		"not sent to a thread that had one waiting or in its handler\n",
		sampler__deferral_name(rec->sampler), (unsigned long long)rec->counters[JBPF_CNT_JAVA_SIGNALS],
		(unsigned long long)rec->counters[JBPF_CNT_JAVA_DEFERRED],
		(unsigned long long)rec->counters[JBPF_CNT_SIGNAL_BUSY]);
	if (wall) {
		struct wall_stats ws;

		wall__stats(wall, &ws);
		fprintf(stderr, "jbpfprof: window: %llu us\n", (unsigned long long)((wall__window_ns(wall) + 500) / 1000));
		fprintf(stderr,
			"jbpfprof: context switches %llu, waits sent %llu, handed on %llu (%llu at the end), "
			"dropped by --min/max-block %llu, shares lost %llu\n",
			(unsigned long long)rec->counters[JBPF_CNT_SWITCHES],
			(unsigned long long)rec->counters[JBPF_CNT_WAITS_SENT], (unsigned long long)ws.waits,
			(unsigned long long)ws.waits_at_end, (unsigned long long)ws.filtered,
			(unsigned long long)agg.shares_lost);
	}
	if (rec->java && java__nr_jvms(rec->java)) {
		struct java_stats js;

		java__stats(rec->java, &js);
		if (js.first_joined_ns && js.first_joined_ns > rec->start_ns)
			fprintf(stderr, "jbpfprof: first sample with Java frames %.0f ms after the start\n",
				(double)(js.first_joined_ns - rec->start_ns) / 1e6);
		fprintf(stderr, "jbpfprof: agents: %llu methods named, %llu code blobs, %llu traces dropped in the agent\n",
			(unsigned long long)js.methods, (unsigned long long)js.blobs,
			(unsigned long long)js.ring_full);
		if (js.handler_calls)
			fprintf(stderr, "jbpfprof: agent signal handler: %llu calls, %.2f us each\n",
				(unsigned long long)js.handler_calls, (double)js.handler_ns / 1e3 / (double)js.handler_calls);
	}
	if (walked__nr_jvms(rec->walked)) {
		char naming[512];

		walked__describe_naming(rec->walked, naming, sizeof(naming));
		fprintf(stderr, "jbpfprof: Java frames walked by BPF: %s\n", naming);
	}
	print_unwind_stats(rec);
	symbolizer__stats(rec->sym, &sym);
	fprintf(stderr,
		"jbpfprof: symbolizer: %llu lookups (%llu unresolved; %llu more native frames known by their address), "
		"%llu maps reads, %llu files parsed (%llu failed, %llu evicted, %llu forgotten unused, %llu refused), "
		"%llu processes evicted, %.1f MiB of tables held\n",
		(unsigned long long)sym.lookups, (unsigned long long)sym.unknown,
		(unsigned long long)agg.native_remembered,
		(unsigned long long)sym.processes_loaded, (unsigned long long)sym.files_loaded,
		(unsigned long long)sym.files_failed, (unsigned long long)sym.files_evicted,
		(unsigned long long)sym.files_forgotten,
		(unsigned long long)sym.tables_refused, (unsigned long long)sym.processes_evicted,
		(double)sym.bytes_held / (1 << 20));
	fprintf(stderr, "jbpfprof: kernel symbols: %s, %llu questions to the kernel\n",
		sym.kernel_source == SYMBOLIZER_KERNEL_KALLSYMS ? "/proc/kallsyms read"
		: rec->kernel_symbols				? "asked of the kernel (BPF)"
								: "none needed",
		(unsigned long long)sym.kernel_asked);
}

/* Why -e nativemem wrote nothing: "sampled: ...", or with --leaks what became of the samples. */
static const char *nothing_native(const struct recording *rec)
{
	struct leaks_stats ls;

	if (!rec->leaks)
		return "sampled: the targets allocated less than the interval, or nothing";
	leaks__stats(rec->leaks, &ls);
	if (ls.exited)
		return "still allocated at the end: the targets exited, and their memory with them";
	if (ls.sampled > ls.freed)
		return "still allocated at the end that could be followed (the summary says why not)";
	return ls.sampled ? "still allocated at the end: everything sampled was freed"
			  : "sampled: the targets allocated less than the interval, or nothing";
}

void recording__report(const struct recording *rec)
{
	struct aggregator_stats stats;

	aggregator__stats(rec->agg, &stats);
	if (!stats.written_by[AGGREGATOR_NATIVE] && recording__config_has(&rec->config, RECORDING_NATIVEMEM))
		fprintf(stderr, "jbpfprof: no native allocations %s\n", nothing_native(rec));
	if (!stats.written_by[AGGREGATOR_HEAP] && recording__config_has(&rec->config, RECORDING_ALLOC))
		fprintf(stderr, "jbpfprof: no Java allocations sampled: %s\n",
			java__nr_jvms(rec->java) ? "the JVMs allocated less than the interval, or nothing"
						 : "no JVM took the agent");
	if (!stats.written_by[AGGREGATOR_TIME] && recording__has_time(rec))
		fprintf(stderr, "jbpfprof: no samples: %s on a CPU while recording\n",
			rec->config.all ? "no process ran" : rec->nr_tgids > 1 ? "the targets did not run" : "the target did not run");
	if (rec->config.verbose)
		print_verbose_stats(rec);
	if (rec->session.nr_exited && rec->nr_tgids)
		fprintf(stderr, "jbpfprof: %s exited during the recording; the profile covers the time before\n",
			rec->session.all_exited && rec->nr_tgids == 1 ? "the target" : "some targets");
}
