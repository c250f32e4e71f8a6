/*
 * oracle: the BPF walk of HotSpot's frames checked against the agent's
 * AsyncGetCallTrace, sample by sample (--java-stacks both).
 *
 * In that mode a JVM both has its frames walked by BPF and runs the agent,
 * which takes the Java stack of the same samples through its signal. The
 * profile is the agent's; each sample the agent gave a Java stack for is
 * compared here with the walk's: the same methods in the same order, the
 * same bytecode index where both have one, the same kind (interpreted,
 * compiled, inlined) where both know it, with the frames whose kinds
 * differ counted by class (the walk's kind against the agent's, as
 * "compiled/inlined"). The bytecode index of an
 * interpreted frame running at the sampled pc is not compared: the walk
 * takes the interpreter's live bcp (r13), AsyncGetCallTrace the frame's
 * slot, which the interpreter writes only before it calls out (counted
 * apart, with how often they differ). The summary gives the shares,
 * and with JBPFPROF_ORACLE_LOG=FILE each sample that differs is written
 * there, both stacks, for a test or a person to read.
 */
#ifndef JBPF_ORACLE_H
#define JBPF_ORACLE_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"
#include "user/java/javamap.h"
#include "user/java/join.h"
#include "user/java/walked.h"

/* The kinds compared: C1 and C2 are both compiled; native methods' frames are not compared. */
enum oracle_kind { ORACLE_INTERPRETED, ORACLE_COMPILED, ORACLE_INLINED, ORACLE_KINDS };

struct oracle_stats {
	uint64_t samples;        /* samples with an agent stack */
	uint64_t bpf_none;       /* ... for which the walk found no Java frame */
	uint64_t bpf_stopped;    /* ... for which the walk ended early */
	uint64_t same_methods;   /* ... with the same methods in the same order */
	uint64_t bci_pairs, same_bci;   /* frames of those where both had a bci */
	uint64_t live_bcis, live_differ; /* innermost interpreted frames at the pc: not compared, and of
					    those, whose slot's bci was not the live one */
	uint64_t kind_pairs, same_kind; /* frames of those where both knew the kind */
	/* The same frames by kind, the walk's then the agent's (ORACLE_KIND_*): the classes of disagreement. */
	uint64_t kinds[ORACLE_KINDS][ORACLE_KINDS];
};

struct oracle;

/* walked stays the caller's. NULL when out of memory. */
struct oracle *oracle__new(struct walked *walked);
void oracle__free(struct oracle *o);

/* A java_trace_fn (user/java/java.h): ctx is the oracle. */
void oracle__compare(void *ctx, const struct jbpf_sample *sample, const struct join_trace *trace,
		     const struct javamap *map);

void oracle__stats(const struct oracle *o, struct oracle_stats *out);
/* "BPF walk against the agent: ..." for the summary; "" when nothing was compared. */
void oracle__describe(const struct oracle *o, char *buf, size_t size);

#endif /* JBPF_ORACLE_H */
