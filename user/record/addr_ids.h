/*
 * addr_ids: native frames' profile ids by (process, address), so that an
 * address sampled again is neither looked up in the symbolizer nor
 * interned again: most of a profile's native frames are the same few
 * thousand return addresses, met in sample after sample.
 *
 * A direct-mapped table of ADDR_IDS_SLOTS entries (a new address takes its
 * slot from whatever held it), so its memory is fixed. An entry holds
 * while the symbolizer's generation is the one it was made under (see
 * symbolizer__generation: no answer said to last can have changed); a
 * lookup or a store under another generation empties the table first. The
 * owner empties it too when the ids stop naming anything (a new profile).
 */
#ifndef JBPF_ADDR_IDS_H
#define JBPF_ADDR_IDS_H

#include <stdint.h>

#define ADDR_IDS_SLOTS 16384

struct addr_ids;

/* NULL on out of memory. */
struct addr_ids *addr_ids__new(void);
void addr_ids__free(struct addr_ids *ids);

/* The id kept for (tgid, addr) under generation, or -1. */
int64_t addr_ids__get(struct addr_ids *ids, uint64_t generation, uint32_t tgid, uint64_t addr);

/* Keeps id for (tgid, addr), made under generation. */
void addr_ids__put(struct addr_ids *ids, uint64_t generation, uint32_t tgid, uint64_t addr, uint32_t id);

/* Forgets every id. */
void addr_ids__clear(struct addr_ids *ids);

#endif /* JBPF_ADDR_IDS_H */
