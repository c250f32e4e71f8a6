/*
 * mappings: a code frame's mapping, made once (contract in mappings.h).
 */
#include "mappings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

int mappings__init(struct mappings *m, const struct profile *profile, mappings_new_fn make, void *ctx)
{
	memset(m, 0, sizeof(*m));
	m->of_module = calloc(profile__module_count(profile) + 1, sizeof(*m->of_module));
	m->make = make;
	m->ctx = ctx;
	return m->of_module ? 0 : -ENOMEM;
}

void mappings__free(struct mappings *m)
{
	free(m->of_module);
	m->of_module = NULL;
}

int64_t mappings__of(struct mappings *m, const struct profile *profile, uint32_t frame, enum frame_kind kind)
{
	uint32_t module = kind == FRAME_KIND_NATIVE ? profile__frame_module(profile, frame) : 0;

	if (module) {
		if (!m->of_module[module])
			m->of_module[module] = m->make(m->ctx, profile__module_path(profile, module),
						       profile__module_build_id(profile, module));
		return m->of_module[module];
	}
	if (!m->of_kind[kind])
		m->of_kind[kind] = m->make(m->ctx, output__kind_mapping(kind), "");
	return m->of_kind[kind];
}
