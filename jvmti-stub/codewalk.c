/*
 * codewalk: the kinds of a trace's Java frames from a walk of HotSpot's
 * physical frames (contract, frame layouts and the safety argument in
 * codewalk.h). The layout comes from codewalk_init.c.
 *
 * The layout is copied once into `cw` and published with `ready`; the
 * signal-side function reads only it, the calling thread's stack in use,
 * the code heaps' committed memory and jmethodID slots, and calls nothing
 * (`make check-handler` holds this file to that: its object may have no
 * undefined symbol at all).
 */
#include "codewalk.h"

#include <stdatomic.h>

#include "stream.h"

static struct codewalk_layout cw;
static _Atomic bool ready;

void codewalk__configure(const struct codewalk_layout *layout)
{
	cw = *layout;
	atomic_store_explicit(&ready, true, memory_order_release);
}

/* x86_64 interpreter frame slots, in words from its fp (frame_x86.hpp). */
#define INTERP_SENDER_SP (-1)
#define INTERP_METHOD (-3)
/* No compiled frame is near this many words; larger is not a frame size. */
#define MAX_FRAME_WORDS (1u << 20)

/* The stack being walked: words in [lo, base) may be read. */
struct stack {
	uintptr_t lo, base;
};

static uintptr_t word_at(uintptr_t addr)
{
	return *(const volatile uintptr_t *)addr;
}

static bool readable(const struct stack *s, uintptr_t addr)
{
	return addr >= s->lo && addr < s->base && s->base - addr >= 8 && !(addr & 7);
}

/* An integer of width 1, 2 or 4 bytes at addr, sign-extended. */
static int32_t int_at(uintptr_t addr, uint32_t width)
{
	switch (width) {
	case 1:
		return *(const volatile int8_t *)addr;
	case 2:
		return *(const volatile int16_t *)addr;
	default:
		return *(const volatile int32_t *)addr;
	}
}

/* The committed end of heap h's memory, and the number of segments its committed map covers. */
static uintptr_t heap_high(const struct codewalk_heap *h, uintptr_t *segments)
{
	uintptr_t high = word_at(h->heap + cw.memory_high), map_high = word_at(h->heap + cw.segmap_high);

	*segments = map_high > h->segmap ? map_high - h->segmap : 0;
	return high;
}

/* The blob holding pc, found as CodeHeap::find_blob does, with *high its heap's committed end; 0 if none. */
static uintptr_t find_blob(uintptr_t pc, uintptr_t *high)
{
	for (unsigned i = 0; i < cw.nr_heaps && i < CODEWALK_MAX_HEAPS; i++) {
		const struct codewalk_heap *h = &cw.heaps[i];
		uintptr_t segments, idx, block, blob;
		uint8_t hop;

		*high = heap_high(h, &segments);
		if (pc < h->low || pc >= *high)
			continue;
		idx = (pc - h->low) >> h->log2_segment;
		if (idx >= segments)
			return 0;
		hop = *(const volatile uint8_t *)(h->segmap + idx);
		/* 0xff: a segment no block uses (free_sentinel). */
		if (hop == 0xff)
			return 0;
		for (unsigned n = 0; hop && n < CODEWALK_MAX_HOPS; n++) {
			if (hop > idx)
				return 0;
			idx -= hop;
			hop = *(const volatile uint8_t *)(h->segmap + idx);
		}
		if (hop)
			return 0;
		block = h->low + (idx << h->log2_segment);
		blob = block + cw.block_size;
		if (blob + cw.nm_header > *high || blob < block ||
		    !*(const volatile uint8_t *)(block + cw.block_used))
			return 0;
		/* A stale segment map (a block being freed) can point at a block that ends before pc. */
		if (pc >= blob + (uintptr_t)(uint32_t)int_at(blob + cw.blob_size, 4))
			return 0;
		return blob;
	}
	return 0;
}

/* Whether the 16 bytes at s, a pointer into libjvm's read-only segments, begin with name's. */
static bool name_is(uintptr_t s, const char *name, unsigned len)
{
	bool inside = false;

	for (unsigned i = 0; i < cw.nr_segments && i < CODEWALK_MAX_SEGMENTS; i++)
		inside |= s >= cw.seg_lo[i] && s < cw.seg_hi[i] && cw.seg_hi[i] - s >= 16;
	if (!inside)
		return false;
	for (unsigned i = 0; i < len; i++)
		if (*(const volatile char *)(s + i) != name[i])
			return false;
	return true;
}

static bool is_nmethod(uintptr_t blob)
{
	uintptr_t name;

	if (cw.by_kind)
		return *(const volatile uint8_t *)(blob + cw.blob_kind) == (uint8_t)cw.kind_nmethod;
	/* JDK 17's CodeBlobs have no kind: nmethods are named so (nmethod.cpp). */
	name = word_at(blob + cw.blob_name);
	return name_is(name, "nmethod", sizeof("nmethod")) || name_is(name, "native nmethod", sizeof("native nmethod"));
}

/* The Method* a jmethodID's slot holds, 0 for none. */
static uintptr_t method_of(const struct ring_frame *f)
{
	return f->method_id ? word_at((uintptr_t)f->method_id) : 0;
}

/* The place being walked: pc, the frame's (unextended) sp, fp. */
struct place {
	uintptr_t pc, sp, fp;
};

/* An interpreted frame: the next trace frame's kind, and its caller into *p. */
static bool interpreted(const struct stack *s, struct place *p, struct ring_frame *frames, int n, int *pos)
{
	uintptr_t fp = p->fp, sender_sp;

	if (!readable(s, fp + 8 * INTERP_METHOD) || !readable(s, fp + 8) || fp < p->sp ||
	    method_of(&frames[*pos]) != word_at(fp + 8 * INTERP_METHOD))
		return false;
	frames[(*pos)++].kind = JBPF_FRAME_INTERPRETED;
	sender_sp = word_at(fp + 8 * INTERP_SENDER_SP);
	/* Each frame is further up the stack than the one it called. */
	if (sender_sp < fp + 16 || !readable(s, sender_sp))
		return false;
	*p = (struct place){ .pc = word_at(fp + 8), .sp = sender_sp, .fp = word_at(fp) };
	return true;
}

/* A compiled frame in blob: the kinds of the trace frames it ran, and its caller into *p. */
static bool compiled(const struct stack *s, struct place *p, uintptr_t blob, struct ring_frame *frames, int n,
		     int *pos)
{
	uintptr_t code = cw.code_is_offset ? blob + (uintptr_t)int_at(blob + cw.blob_code, 4)
					   : word_at(blob + cw.blob_code);
	int32_t complete = int_at(blob + cw.blob_frame_complete, cw.frame_complete_width);
	int32_t words = int_at(blob + cw.blob_frame_size, 4);
	uintptr_t method = word_at(blob + cw.nm_method), sender_sp;
	uint32_t level = (uint32_t)int_at(blob + cw.nm_level, cw.level_width) & 0xff;
	int j = *pos;

	/* In the prologue (or a blob with no complete frame) the frame is not laid out yet. */
	if (complete < 0 || p->pc < code + (uintptr_t)complete || words <= 0 || (uint32_t)words > MAX_FRAME_WORDS)
		return false;
	while (j < n && method_of(&frames[j]) != method)
		j++;
	if (j == n)
		return false;
	for (int k = *pos; k < j; k++)
		frames[k].kind = JBPF_FRAME_INLINED | level << JBPF_FRAME_LEVEL_SHIFT;
	frames[j].kind = JBPF_FRAME_COMPILED | level << JBPF_FRAME_LEVEL_SHIFT;
	*pos = j + 1;
	sender_sp = p->sp + 8 * (uintptr_t)words;
	if (!readable(s, sender_sp - 16) || !readable(s, sender_sp - 8))
		return false;
	*p = (struct place){ .pc = word_at(sender_sp - 8), .sp = sender_sp, .fp = word_at(sender_sp - 16) };
	return true;
}

int codewalk__kinds(const struct lastjava_regs *top, uintptr_t lo, uintptr_t base, struct ring_frame *frames,
		    int n)
{
	const struct stack s = { .lo = lo, .base = base };
	struct place p = { .pc = top->pc, .sp = top->sp, .fp = top->fp };
	int pos = 0;

	for (int i = 0; i < n; i++)
		frames[i].kind = 0;
	if (!atomic_load_explicit(&ready, memory_order_acquire) || !readable(&s, p.sp))
		return 0;
	for (int i = 0; i < CODEWALK_MAX_FRAMES && pos < n; i++) {
		uintptr_t blob, high, sp = p.sp;

		if (p.pc >= cw.interp_low && p.pc < cw.interp_high) {
			if (!interpreted(&s, &p, frames, n, &pos))
				break;
		} else if ((blob = find_blob(p.pc, &high)) && is_nmethod(blob)) {
			if (!compiled(&s, &p, blob, frames, n, &pos))
				break;
		} else {
			break;
		}
		if (p.sp <= sp)
			break;
	}
	return pos;
}
