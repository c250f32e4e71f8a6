/*
 * layout: what the BPF walker needs of one JVM (struct jbpf_hotspot_jvm,
 * bpf/hotspot.h), derived from its VMStructs and read from its memory.
 *
 * JDK 17 and 25 differ (CodeBlob's _code_begin against _code_offset,
 * _frame_complete_offset's width, nmethod's _method against
 * CompiledMethod's, the CodeBlob kind of JDK 25 against JDK 17's names);
 * every offset is checked against the size HotSpot gives its type, and
 * every value read from the process (the code heaps, their segment size,
 * the interpreter's bounds) is checked before it is handed to BPF. A JVM
 * whose layout lacks anything is refused as a whole with one line saying
 * what, and keeps the agent.
 */
#ifndef JBPF_HOTSPOT_LAYOUT_H
#define JBPF_HOTSPOT_LAYOUT_H

#include <stddef.h>

#include <linux/types.h>

#include "bpf/hotspot.h"
#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

/* What hotspot_layout__read returns for a JVM still starting (why says what is not set yet). */
#define HOTSPOT_LAYOUT_STARTING (-2)

/*
 * Fills *out (start_ticks left 0 for the caller): 0, or -1 with a one-line
 * reason in err, or HOTSPOT_LAYOUT_STARTING.
 */
int hotspot_layout__read(const struct hotspot_vm *vm, struct hotspot_memory *mem, struct jbpf_hotspot_jvm *out,
			char *err, size_t err_size);

#endif /* JBPF_HOTSPOT_LAYOUT_H */
