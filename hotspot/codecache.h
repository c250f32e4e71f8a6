/*
 * codecache: the CodeBlob holding a pc, found from outside the JVM as
 * CodeHeap::find_blob finds it inside (share/memory/heap.cpp), over the
 * code heaps of a struct jbpf_hotspot_jvm (hotspot/layout.h).
 *
 * Each heap's segment map has one byte per segment: 0xff for a segment no
 * block uses, 0 for a block's first segment, else how many segments to step
 * back towards it. The block found must be in use, and the blob after its
 * header must hold pc. What the JVM's memory says is hostile: the steps are
 * bounded, and every address checked against the heap's committed bounds.
 * Userspace only (the tests, and whatever needs an nmethod from a pc); the
 * BPF walker has its own.
 */
#ifndef JBPF_HOTSPOT_CODECACHE_H
#define JBPF_HOTSPOT_CODECACHE_H

#include <stdint.h>

#include <linux/types.h>

#include "bpf/hotspot.h"
#include "hotspot/memory.h"

/* The blob holding pc, or 0 when none does (or what was read makes no sense). */
uint64_t hotspot_codecache__blob(const struct jbpf_hotspot_jvm *l, struct hotspot_memory *mem, uint64_t pc);

#endif /* JBPF_HOTSPOT_CODECACHE_H */
