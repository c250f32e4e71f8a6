/*
 * merge: the stack of a sample of a JVM thread running the agent.
 *
 * With a Java stack from the agent (a joined trace whose status is
 * positive) the stack is merged: kernel frames, then the native frames
 * down to the first one in the JVM's generated code (interpreter,
 * compiled methods, stubs), then the trace's Java frames. Without one,
 * the native stack is kept whole, with compiled code named from the
 * JVM's code map, under a frame naming the reason when there is one.
 * With --annotate each Java frame says how it ran (compiled, inlined,
 * interpreted): as the agent's walk of HotSpot's frames found it (the
 * trace's per-frame kinds), else as the generated code the native stack
 * passes through shows it, else inferred from whether the method has live
 * compiled code.
 *
 * The stack is built through the aggregator (aggregator__begin ... end),
 * which adds the root frames, the kernel frames and the weight.
 */
#ifndef JBPF_MERGE_H
#define JBPF_MERGE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/symbolizer.h"
#include "user/java/javamap.h"
#include "user/record/aggregator.h"

struct join_trace;

struct merge_java {
	struct javamap *map;
	const struct join_trace *trace; /* NULL, or its frames */
	const char *reason;             /* "[no Java frames: ...]" or NULL */
	const char *thread_name;        /* the Java thread's name, or NULL for comm */
	const char *leaf;               /* a last frame after the user frames (FRAME_KIND_CLASS), or NULL */
	uint64_t weight;                /* what the stack counts; 0: the sample's own weight */
	uint64_t objects;               /* with weight: the objects it is (an allocation's) */
};

struct merge;

/* agg and sym stay the caller's. NULL when out of memory. */
struct merge *merge__new(struct aggregator *agg, struct symbolizer *sym);
void merge__free(struct merge *m);

/* How the kinds of Java frames were found (--annotate only): counts of frames. */
struct merge_kind_counts {
	uint64_t by_agent;  /* the agent's walk of HotSpot's frames */
	uint64_t by_native; /* the native stack's generated code */
	uint64_t inferred;  /* neither reached them: inferred */
};

void merge__kind_counts(const struct merge *m, struct merge_kind_counts *out);

/* Adds one sample (decoded and checked) as described above. */
void merge__add(struct merge *m, const struct jbpf_sample *sample, const struct merge_java *java);

/*
 * Whether any user frame of a JVM thread's sample lies in the JVM's
 * generated code (or in memory no file backs): a thread with none runs no
 * Java at that instant.
 */
bool merge__in_generated_code(struct merge *m, const struct jbpf_sample *sample, struct javamap *map);

#endif /* JBPF_MERGE_H */
