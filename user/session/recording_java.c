/*
 * recording_java: the JVMs of a recording at its start (contract of
 * recording__attach_jvms in recording_internal.h). Each target, or with
 * -a each process on the host, is walked by BPF when --java-stacks asks
 * for it and its layout is understood, else given the agent now if it is
 * a live JVM, else watched by the Java side (user/java/java.h) if it may
 * become one. The same BPF walk is offered every process the Java side
 * watches during the recording (java__set_adopter).
 */
#include "user/session/recording_internal.h"

#include <stdio.h>
#include <unistd.h>

#include "common/clock.h"
#include "symbolizer/proc.h"
#include "user/java/java.h"
#include "user/java/starting.h"
#include "user/java/walked.h"
#include "user/record/sampler.h"

/*
 * Whether a JVM the walk does not take gets the agent: for the Java
 * frames of time, or for Java allocations. Native allocations alone
 * (-e nativemem) have no use for it: an allocator's probe sends no signal.
 */
static bool agent_wanted(const struct recording_config *c)
{
	return c->events & ~RECORDING_EVENT(RECORDING_NATIVEMEM);
}

/*
 * With --java-stacks bpf, a JVM whose layout is understood has its Java
 * frames walked by BPF and takes nothing: true. Else (not a JVM, or one
 * not understood, said in one line) the agent's way; with both, the agent
 * too.
 */
static enum walked_result offer_walk(struct recording *rec, uint32_t tgid, bool quiet)
{
	char err[256];
	uint64_t start_ticks;
	enum walked_result rc;

	if (rec->config.java_stacks == RECORDING_JAVA_STACKS_AGENT || rec->config.unwind_fp ||
	    proc__start_time("/proc", tgid, &start_ticks))
		return WALKED_NOT_JVM;
	rc = walked__add_jvm(rec->walked, "/proc", tgid, start_ticks, err, sizeof(err));
	/* Found during the recording: the walker takes it now. */
	if (rc == WALKED_OK && rec->sampler && walked__hand_over(rec->walked, rec->sampler, tgid)) {
		snprintf(err, sizeof(err), "no room among the JVMs walked by BPF");
		rc = WALKED_NOT_UNDERSTOOD;
	}
	if (rc == WALKED_OK && rec->config.verbose)
		fprintf(stderr, "jbpfprof: JVM pid %u: Java frames walked by BPF\n", tgid);
	if (rc == WALKED_NOT_UNDERSTOOD && (!quiet || rec->config.verbose))
		fprintf(stderr, "jbpfprof: JVM pid %u: %s; %s\n", tgid, err,
			agent_wanted(&rec->config) ? "its Java frames come from the agent"
						   : "its allocations are recorded without Java frames");
	if (rc == WALKED_STARTING && !rec->sampler)
		rec->jvms_starting++;
	/* How long it stays unwalked, for the summary. */
	if (rc == WALKED_STARTING)
		starting__seen(rec->starting, tgid, clock__monotonic_ns());
	else
		starting__walked(rec->starting, tgid, clock__monotonic_ns());
	/* Watched (the agent's tries too), and offered to the walk again at each try: adopt_jvm. */
	if (rc == WALKED_STARTING && !quiet && rec->config.verbose)
		fprintf(stderr, "jbpfprof: JVM pid %u: still starting (%s); walked once its layout reads\n", tgid, err);
	return rc;
}


/*
 * A process watched since the start (a JVM still starting, a launcher)
 * or found during the recording: its frames walked by BPF as soon as its
 * layout can be read. Until then each try is quiet (a starting JVM has no
 * code cache yet) and the agent waits (JAVA_ADOPT_WAIT): an attach tried
 * now would wait inside the JVM for its live phase, which comes after the
 * layout reads, and load the agent into a JVM the walk could have had.
 */
static enum java_adopt adopt_jvm(void *ctx, uint32_t tgid)
{
	struct recording *rec = ctx;

	switch (offer_walk(rec, tgid, true)) {
	case WALKED_OK:
		if (rec->config.java_stacks != RECORDING_JAVA_STACKS_BPF)
			return JAVA_ADOPT_NO;
		return recording__config_has(&rec->config, RECORDING_ALLOC) ? JAVA_ADOPT_HEAP_ONLY : JAVA_ADOPT_TAKEN;
	case WALKED_STARTING:
		return JAVA_ADOPT_WAIT;
	default:
		return JAVA_ADOPT_NO;
	}
}

/*
 * A JVM BPF walks, in a recording of heap allocations: the agent for those
 * alone (java__attach_heap_only); one that refuses it is named, its CPU
 * samples keep their Java frames. 0, or -1 when it refused.
 */
static int attach_heap_only(struct recording *rec, uint32_t tgid)
{
	char err[512];
	int rc;

	if (!recording__config_has(&rec->config, RECORDING_ALLOC))
		return 0;
	rc = java__attach_heap_only(rec->java, tgid, err, sizeof(err));
	if (rc == JAVA_ATTACH_OK) {
		if (rec->config.verbose)
			fprintf(stderr, "jbpfprof: agent loaded into JVM pid %u for its heap allocations\n", tgid);
		return 0;
	}
	if (rc == JAVA_ATTACH_NOT_YET) {
		java__watch(rec->java, tgid);
		return 0;
	}
	fprintf(stderr, "jbpfprof: cannot load the agent into pid %u: %s; its heap allocations are not sampled\n", tgid,
		err);
	return -1;
}

/*
 * One process at the start: attached now if it is a live JVM, else
 * watched (java__watch) if it may become one during the recording: a JVM
 * still starting, a launcher, or (named with -p) any process, which may
 * exec java before the exec program is attached. Without --java a JVM that
 * refuses the agent is still profiled, with frame pointers and any perf
 * map.
 */
static void attach_at_start(struct recording *rec, uint32_t tgid, bool named)
{
	bool by_bpf = rec->config.java_stacks == RECORDING_JAVA_STACKS_BPF;
	enum walked_result walk = offer_walk(rec, tgid, !named);
	char err[512];
	int rc;

	if (walk == WALKED_OK && by_bpf) {
		attach_heap_only(rec, tgid);
		return;
	}
	/* An allocator's uprobe has no Java stack to ask the agent for: BPF's walk or none. */
	if (!agent_wanted(&rec->config))
		return;
	/*
	 * Still starting: watched, and the watch asks the walk first at each
	 * try (adopt_jvm). An attach now would leave its request with the JVM,
	 * which loads the agent once live, after the layout reads: into a JVM
	 * the walk takes.
	 */
	if (walk == WALKED_STARTING && by_bpf) {
		java__watch(rec->java, tgid);
		return;
	}
	rc = java__attach(rec->java, tgid, err, sizeof(err));

	if (rc == JAVA_ATTACH_OK) {
		if (rec->config.verbose)
			fprintf(stderr, "jbpfprof: agent loaded into JVM pid %u\n", tgid);
	} else if (rc == JAVA_ATTACH_NOT_YET || (rc == JAVA_ATTACH_NOT_JVM && named)) {
		if (rc == JAVA_ATTACH_NOT_JVM && recording__config_has(&rec->config, RECORDING_ALLOC))
			fprintf(stderr, "jbpfprof: pid %u is not a JVM (no libjvm.so in its memory maps): -e alloc has no "
				"allocations to sample there unless it execs one\n", tgid);
		java__watch(rec->java, tgid);
	} else if ((rc == JAVA_ATTACH_FAILED || (rc == JAVA_ATTACH_UNKNOWN && named)) &&
		   recording__config_has(&rec->config, RECORDING_ALLOC)) {
		fprintf(stderr, "jbpfprof: cannot load the agent into pid %u: %s; its allocations are not sampled\n", tgid,
			err);
	} else if (rc == JAVA_ATTACH_FAILED || (rc == JAVA_ATTACH_UNKNOWN && named)) {
		fprintf(stderr,
			"jbpfprof: cannot load the agent into pid %u: %s; profiling it without Java frames "
			"(frame pointers and any perf map)\n", tgid, err);
	}
}

/* --java: every target takes the agent before the recording starts, or the run ends. */
static int attach_required(struct recording *rec)
{
	char err[512];

	for (size_t i = 0; i < rec->nr_tgids; i++) {
		int rc;

		if (offer_walk(rec, rec->tgids[i], false) == WALKED_OK &&
		    rec->config.java_stacks == RECORDING_JAVA_STACKS_BPF) {
			if (attach_heap_only(rec, rec->tgids[i]))
				return -1;
			continue;
		}
		rc = java__attach_when_live(rec->java, rec->tgids[i], err, sizeof(err));
		if (rc == JAVA_ATTACH_OK)
			continue;
		if (rc == JAVA_ATTACH_NOT_JVM)
			fprintf(stderr, "jbpfprof: pid %u is not a Java virtual machine (no libjvm.so in its memory maps)\n",
				rec->tgids[i]);
		else
			fprintf(stderr, "jbpfprof: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * Loads the agent into every JVM among the targets (-p), or on the host
 * (-a), and has the Java side watch for those that start or exec later.
 */
int recording__attach_jvms(struct recording *rec)
{
	struct proc_ids processes;
	uint32_t self = (uint32_t)getpid(), tgid;

	if (rec->config.java == RECORDING_JAVA_OFF)
		return 0;
	java__watch_execs(rec->java, true);
	java__set_verbose(rec->java, rec->config.verbose);
	if (rec->config.java_stacks == RECORDING_JAVA_STACKS_BPF)
		java__set_adopter(rec->java, adopt_jvm, rec);
	if (rec->config.java == RECORDING_JAVA_REQUIRED && !rec->config.all)
		return attach_required(rec);
	if (!rec->config.all) {
		for (size_t i = 0; i < rec->nr_tgids; i++)
			attach_at_start(rec, rec->tgids[i], true);
		return 0;
	}
	if (proc__open_processes(&processes, "/proc"))
		return 0;
	while ((tgid = proc__next_id(&processes)))
		if (tgid != self)
			attach_at_start(rec, tgid, false);
	proc__close_ids(&processes);
	return 0;
}
