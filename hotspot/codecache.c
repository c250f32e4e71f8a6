/*
 * codecache: the CodeBlob holding a pc, walked as CodeHeap::find_blob
 * walks the segment map (contract in codecache.h).
 */
#include "hotspot/codecache.h"

/* Steps back through the segment map at most: a block's segments step back by up to 0xfe each. */
#define MAX_HOPS 4096

/* The blob of heap h holding pc, or 0. */
static uint64_t in_heap(const struct jbpf_hotspot_jvm *l, const struct jbpf_hotspot_heap *h,
			struct hotspot_memory *mem, uint64_t pc)
{
	uint64_t high, idx, block, blob;
	uint32_t size;
	uint8_t hop, used;

	if (!hotspot_memory__u64(mem, h->heap + l->heap_memory_high, &high) || pc < h->low || pc >= high ||
	    h->log2_segment > 20)
		return 0;
	idx = (pc - h->low) >> h->log2_segment;
	if (!hotspot_memory__u8(mem, h->segmap + idx, &hop) || hop == 0xff)
		return 0;
	for (int n = 0; hop && n < MAX_HOPS; n++) {
		if (hop > idx)
			return 0;
		idx -= hop;
		if (!hotspot_memory__u8(mem, h->segmap + idx, &hop))
			return 0;
	}
	if (hop)
		return 0;
	block = h->low + (idx << h->log2_segment);
	blob = block + l->block_size;
	if (!hotspot_memory__u8(mem, block + l->block_used, &used) || !used ||
	    !hotspot_memory__u32(mem, blob + l->blob_size, &size))
		return 0;
	/* A stale map (a block being freed) can lead to a block that ends before pc. */
	if (pc >= blob + size || blob + size > high)
		return 0;
	return blob;
}

uint64_t hotspot_codecache__blob(const struct jbpf_hotspot_jvm *l, struct hotspot_memory *mem, uint64_t pc)
{
	if (pc < l->code_low || pc >= l->code_high)
		return 0;
	for (uint32_t i = 0; i < l->nr_heaps && i < JBPF_HOTSPOT_MAX_HEAPS; i++) {
		uint64_t blob = in_heap(l, &l->heaps[i], mem, pc);

		if (blob)
			return blob;
	}
	return 0;
}
