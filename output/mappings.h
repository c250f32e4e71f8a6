/*
 * mappings: which mapping a code frame is in, for the writers whose format
 * has a mapping table (pprof, OTLP).
 *
 * A native frame whose module (file) is known is in that module's mapping,
 * with its path and build id; any other code frame in the pseudo-mapping of
 * its kind ("[jit]", "[kernel]", ... : output__kind_mapping). Each mapping is
 * made once, at its first frame, by the writer's own function, which
 * returns the mapping's id or index in its format, 0 when it could not be
 * made (tried again at the next frame), or a negative number (kept, and
 * returned for every later frame of that mapping).
 */
#ifndef JBPF_OUTPUT_MAPPINGS_H
#define JBPF_OUTPUT_MAPPINGS_H

#include <stdint.h>

#include "profile/profile.h"

/* Makes a mapping of filename and build_id ("" for none) in the writer's format. */
typedef int64_t (*mappings_new_fn)(void *ctx, const char *filename, const char *build_id);

struct mappings {
	int64_t of_kind[FRAME_KIND_NR]; /* 0: none yet */
	int64_t *of_module;             /* by module number; 0: none yet */
	mappings_new_fn make;
	void *ctx;
};

/* Room for every module of profile: 0, or -ENOMEM. */
int mappings__init(struct mappings *m, const struct profile *profile, mappings_new_fn make, void *ctx);
void mappings__free(struct mappings *m);

/* The mapping of frame (of kind) in profile, made if it is the first frame in it. */
int64_t mappings__of(struct mappings *m, const struct profile *profile, uint32_t frame, enum frame_kind kind);

#endif /* JBPF_OUTPUT_MAPPINGS_H */
