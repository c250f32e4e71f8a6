/*
 * aggregator: turns the sampler's records into stacks in a profile.
 *
 * For each record it resolves the frames through the symbolizer and adds one
 * stack, root first:
 *
 *   [process root]  with -a or several -p: the process's name
 *   [thread root]   with --threads: "[<thread name> tid=<tid>]"
 *   user frames     outermost first; return addresses are looked up one byte
 *                   back, so a call that ends its function names the caller
 *   kernel frames   suffixed "_[k]"
 *
 * A stack part that could not be read is replaced by one frame naming the
 * reason, so the sample still counts where it is known to belong. Records
 * are validated before use; a malformed one is counted and dropped.
 *
 * With time_weights (wall-clock and off-CPU profiles) counts are
 * microseconds and each stack ends in its state's frame ("[sleeping]"). A
 * wait (JBPF_RECORD_WAIT) counts its own length; a CPU sample, or a wait
 * recorded by chance (JBPF_WAIT_SAMPLED), is a share of its thread's exact
 * time in that state, which aggregator__settle spreads at the end (see
 * user/shares.h).
 */
#ifndef JBPF_AGGREGATOR_H
#define JBPF_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/symbolizer.h"
#include "profile/profile.h"

enum aggregator_root {
	AGGREGATOR_ROOT_NONE,
	AGGREGATOR_ROOT_PROCESS_NAME,     /* "name" */
	AGGREGATOR_ROOT_PROCESS_PID,      /* "name (pid N)" */
};

struct aggregator_config {
	enum aggregator_root process_root;
	bool thread_root;
	bool annotate;           /* suffix Java frames _[j] _[i] _[0] by how they ran */
	bool time_weights;       /* wall-clock or off-CPU profile, see above */
	unsigned state_mask;     /* with time_weights: 1 << state for each state kept */
	bool modules;            /* note each native frame's file and build-id (profile__module) */
};

struct javamap;
struct join_trace;

/*
 * A sample of a thread of a JVM running the agent. With a trace whose
 * status is positive the stack is merged: kernel frames, then the native
 * frames down to the first one in the JVM's generated code (interpreter,
 * compiled methods, stubs), then the trace's Java frames. Without one, the
 * native stack is kept whole, with compiled code named from the code map,
 * under a frame naming reason when reason is not NULL.
 */
struct aggregator_java {
	struct javamap *map;
	const struct join_trace *trace; /* NULL, or its frames */
	const char *reason;             /* "[no Java frames: ...]" or NULL */
	const char *thread_name;        /* the Java thread's name, or NULL for comm */
};

struct aggregator_stats {
	uint64_t received;        /* sample records handed to aggregator__add */
	uint64_t written;         /* samples now counted in the profile */
	uint64_t malformed;       /* records that failed validation */
	uint64_t profile_full;    /* dropped: the profile reached its bounds */
	uint64_t no_user_stack;   /* kept, user part replaced by a reason frame */
	uint64_t no_kernel_stack; /* kept, kernel part replaced by a reason frame */
	uint64_t execs;           /* exec records: the process's maps were forgotten */
	uint64_t state_filtered;  /* left out: their state is not among those kept */
	uint64_t shares_lost;     /* CPU samples or short waits the share table had no room for */
};

struct aggregator;

/* sym and profile stay owned by the caller and must outlive the aggregator. */
struct aggregator *aggregator__new(const struct aggregator_config *config, struct symbolizer *sym,
				   struct profile *profile);
void aggregator__free(struct aggregator *agg);

/*
 * One ring buffer record. A sample is added to the profile; an exec record
 * makes the symbolizer forget that process, so samples after it are looked
 * up in the new program. Unknown types count as malformed.
 */
void aggregator__add(struct aggregator *agg, const void *record, size_t size);

/* Adds one validated-here JVM thread sample as described above. */
void aggregator__add_java(struct aggregator *agg, const struct jbpf_sample *sample, size_t size,
			  const struct aggregator_java *java);

/*
 * Whether any user frame of a JVM thread's sample lies in the JVM's
 * generated code (or in memory no file backs): a thread with none runs no
 * Java at that instant.
 */
bool aggregator__in_generated_code(struct aggregator *agg, const struct jbpf_sample *sample, struct javamap *map);

/* Whether a record is a well-formed sample (the JVM path checks before joining). */
bool aggregator__sample_is_valid(const void *record, size_t size);

void aggregator__stats(const struct aggregator *agg, struct aggregator_stats *stats);

/*
 * With time_weights, at the end: thread tid spent total_ns in state; the
 * stacks that share it get their parts. False, adding nothing, when none
 * does (the caller then adds a placeholder).
 */
bool aggregator__settle(struct aggregator *agg, uint32_t tid, enum jbpf_state state, uint64_t total_ns);

/*
 * Adds time with no stack known: the thread's root frames, then reason,
 * then the state's frame. thread_name NULL for comm.
 */
void aggregator__add_placeholder(struct aggregator *agg, uint32_t tgid, uint32_t tid, const char comm[JBPF_COMM_LEN],
				 const char *thread_name, enum jbpf_state state, const char *reason, uint64_t ns);

#endif /* JBPF_AGGREGATOR_H */
