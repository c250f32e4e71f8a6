/*
 * addr_ids: native frames' ids by (process, address) (contract in addr_ids.h).
 */
#include "user/record/addr_ids.h"

#include <stdlib.h>
#include <string.h>

struct addr_slot {
	uint64_t addr;
	uint32_t tgid;
	uint32_t id_plus_one; /* 0: empty */
};

struct addr_ids {
	uint64_t generation;
	struct addr_slot slots[ADDR_IDS_SLOTS];
};

_Static_assert((ADDR_IDS_SLOTS & (ADDR_IDS_SLOTS - 1)) == 0, "ADDR_IDS_SLOTS is a power of two");

struct addr_ids *addr_ids__new(void)
{
	return calloc(1, sizeof(struct addr_ids));
}

void addr_ids__free(struct addr_ids *ids)
{
	free(ids);
}

void addr_ids__clear(struct addr_ids *ids)
{
	memset(ids->slots, 0, sizeof(ids->slots));
}

static struct addr_slot *slot_of(struct addr_ids *ids, uint32_t tgid, uint64_t addr)
{
	uint64_t h = (addr ^ ((uint64_t)tgid << 40)) * 0x9e3779b97f4a7c15ull;

	return &ids->slots[(h >> 32) & (ADDR_IDS_SLOTS - 1)];
}

/* Empties the table when its ids were made under another generation. */
static void enter(struct addr_ids *ids, uint64_t generation)
{
	if (ids->generation != generation) {
		addr_ids__clear(ids);
		ids->generation = generation;
	}
}

int64_t addr_ids__get(struct addr_ids *ids, uint64_t generation, uint32_t tgid, uint64_t addr)
{
	const struct addr_slot *s;

	enter(ids, generation);
	s = slot_of(ids, tgid, addr);
	if (!s->id_plus_one || s->addr != addr || s->tgid != tgid)
		return -1;
	return (int64_t)s->id_plus_one - 1;
}

void addr_ids__put(struct addr_ids *ids, uint64_t generation, uint32_t tgid, uint64_t addr, uint32_t id)
{
	struct addr_slot *s;

	if (id == UINT32_MAX)
		return;
	enter(ids, generation);
	s = slot_of(ids, tgid, addr);
	*s = (struct addr_slot){ .addr = addr, .tgid = tgid, .id_plus_one = id + 1 };
}
