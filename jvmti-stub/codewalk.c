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

/*
 * The blob holding pc, found as CodeHeap::find_blob does, with *high its
 * heap's committed end, below which the whole blob lies; 0 if none.
 */
static uintptr_t find_blob(uintptr_t pc, uintptr_t *high)
{
	for (unsigned i = 0; i < cw.nr_heaps && i < CODEWALK_MAX_HEAPS; i++) {
		const struct codewalk_heap *h = &cw.heaps[i];
		uintptr_t segments, idx, block, blob, size;
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
		size = (uintptr_t)(uint32_t)int_at(blob + cw.blob_size, 4);
		if (pc >= blob + size || blob + size > *high)
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

/* Where an nmethod's PcDescs ([pcs, + nr_pcs * size)) and scopes ([scopes, + scopes_size)) lie. */
struct debug_info {
	uintptr_t pcs, scopes;
	uint32_t nr_pcs, scopes_size;
};

/*
 * The debug information of the nmethod at blob, whose size bytes end below
 * its heap's committed end: false when its bounds do not hold.
 */
static bool debug_info(uintptr_t blob, uint32_t size, struct debug_info *d)
{
	uintptr_t pcs, pcs_end, scopes, scopes_end;
	int32_t pcs_off = int_at(blob + cw.nm_pcs, 4);

	if (cw.immutable) {
		uintptr_t data = word_at(blob + cw.nm_immutable);
		int32_t data_size = int_at(blob + cw.nm_immutable_size, 4);
		int32_t scopes_off = int_at(blob + cw.nm_scopes_offset, 4);

		/* A C-heap block: aligned, in user space, not wrapping. */
		if (!data || (data & 7) || data >= (1ull << 47) || data_size <= 0 ||
		    (uint32_t)data_size > CODEWALK_MAX_DEBUG_BYTES || pcs_off < 0 || scopes_off < pcs_off ||
		    scopes_off > data_size)
			return false;
		pcs = data + (uint32_t)pcs_off;
		pcs_end = scopes = data + (uint32_t)scopes_off;
		scopes_end = data + (uint32_t)data_size;
	} else {
		int32_t pcs_end_off = int_at(blob + cw.nm_pcs_end, 4);

		/* All inside the blob: the scopes, then the PcDescs (nmethod.hpp's layout). */
		scopes = word_at(blob + cw.nm_scopes);
		if (pcs_off < 0 || pcs_end_off < pcs_off || (uint32_t)pcs_end_off > size || scopes < blob ||
		    scopes > blob + (uint32_t)pcs_off)
			return false;
		pcs = scopes_end = blob + (uint32_t)pcs_off;
		pcs_end = blob + (uint32_t)pcs_end_off;
	}
	if ((pcs_end - pcs) % cw.pc_desc_size || pcs_end - pcs > CODEWALK_MAX_DEBUG_BYTES ||
	    scopes_end - scopes > CODEWALK_MAX_DEBUG_BYTES)
		return false;
	*d = (struct debug_info){ .pcs = pcs,
				  .scopes = scopes,
				  .nr_pcs = (uint32_t)((pcs_end - pcs) / cw.pc_desc_size),
				  .scopes_size = (uint32_t)(scopes_end - scopes) };
	return true;
}

static int32_t pc_desc_pc(const struct debug_info *d, uint32_t i)
{
	return int_at(d->pcs + (uintptr_t)i * cw.pc_desc_size + cw.pc_offset, 4);
}

/*
 * The scope offset of the PcDesc HotSpot decodes at pc_offset: the one
 * exactly there (exact), else the first after it (pc_desc_near(pc + 1)).
 * 0 for none, or one without a scope (serialized_null). The PcDescs are
 * sorted by pc between two sentinels; a search ends whatever they hold.
 */
static int32_t scope_at(const struct debug_info *d, int32_t pc_offset, bool exact)
{
	int32_t target = exact ? pc_offset : pc_offset + 1, at;
	uint32_t lo = 0, hi = d->nr_pcs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pc_desc_pc(d, mid) < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->nr_pcs)
		return 0;
	at = pc_desc_pc(d, lo);
	/* The last sentinel (INT32_MAX) has no scope. */
	if ((exact && at != pc_offset) || at == INT32_MAX)
		return 0;
	return int_at(d->pcs + (uintptr_t)lo * cw.pc_desc_size + cw.pc_scope, 4);
}

/*
 * An UNSIGNED5 number at d's scopes + offset, none of its bytes at or past
 * bound (utilities/unsigned5.hpp: six bits a byte go on while a byte is
 * 192 or more, five bytes at most, each less the excluded byte).
 */
static bool u5_at(const struct debug_info *d, uint32_t offset, uint32_t bound, uint32_t *out)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < 5; i++) {
		uint8_t b;

		if (offset + i >= bound)
			return false;
		b = *(const volatile uint8_t *)(d->scopes + offset + i);
		if (b < cw.u5_excluded)
			return false;
		sum += (uint32_t)(b - cw.u5_excluded) << (6 * i);
		if (b < 192) {
			*out = sum;
			return true;
		}
	}
	*out = sum;
	return true;
}

/*
 * How many Java frames the scope chain from offset holds: the scope, its
 * sender, and so on to the one with no sender (offset 0). 0 when the
 * chain does not read. A sender is recorded before the scopes it inlined
 * (DebugInformationRecorder::describe_scope), so each offset must be lower
 * than the last: the walk ends.
 */
static int scope_depth(const struct debug_info *d, int32_t offset)
{
	uint32_t bound = d->scopes_size, at = (uint32_t)offset, sender;
	int depth = 0;

	if (offset <= 0)
		return 0;
	while (at) {
		if (at >= bound || depth == CODEWALK_MAX_SCOPES || !u5_at(d, at, bound, &sender))
			return 0;
		depth++;
		bound = at;
		at = sender;
	}
	return depth;
}

/*
 * How many trace frames, from frames[pos], the compiled frame of the
 * nmethod at blob (size bytes) at pc stands for; 0 when that is not known.
 * first: the walk's first frame, caught anywhere (top_is_anchor: at the
 * anchor's pc, a return address).
 */
static int frames_of(uintptr_t blob, uint32_t size, uintptr_t code, uintptr_t pc, bool first, bool top_is_anchor,
		     const struct ring_frame *frames, int pos)
{
	struct debug_info d;
	int32_t pc_offset, scope = 0;

	/* A native method's wrapper: one frame, as AsyncGetCallTrace writes it (lineno -3). */
	if (frames[pos].lineno == -3)
		return 1;
	if (pc < code || pc - code > INT32_MAX - 1 || !debug_info(blob, size, &d))
		return 0;
	pc_offset = (int32_t)(pc - code);
	if (!first || top_is_anchor)
		scope = scope_at(&d, pc_offset, true);
	if (!scope && first)
		scope = scope_at(&d, pc_offset, false);
	return scope_depth(&d, scope);
}

/* A compiled frame in blob: the kinds of the trace frames it ran, and its caller into *p. */
static bool compiled(const struct stack *s, struct place *p, uintptr_t blob, bool first, bool top_is_anchor,
		     struct ring_frame *frames, int n, int *pos)
{
	uintptr_t code = cw.code_is_offset ? blob + (uintptr_t)int_at(blob + cw.blob_code, 4)
					   : word_at(blob + cw.blob_code);
	int32_t complete = int_at(blob + cw.blob_frame_complete, cw.frame_complete_width);
	int32_t words = int_at(blob + cw.blob_frame_size, 4);
	uint32_t size = (uint32_t)int_at(blob + cw.blob_size, 4);
	uintptr_t method = word_at(blob + cw.nm_method), sender_sp;
	uint32_t level = (uint32_t)int_at(blob + cw.nm_level, cw.level_width) & 0xff;
	int j = *pos, depth;

	/* In the prologue (or a blob with no complete frame) the frame is not laid out yet. */
	if (complete < 0 || p->pc < code + (uintptr_t)complete || words <= 0 || (uint32_t)words > MAX_FRAME_WORDS)
		return false;
	/* Its method among the trace's frames first: only then is the nmethod taken for a live one. */
	while (j < n && method_of(&frames[j]) != method)
		j++;
	if (j == n)
		return false;
	depth = frames_of(blob, size, code, p->pc, first, top_is_anchor, frames, *pos);
	j = *pos + depth - 1;
	if (depth <= 0 || j >= n || method_of(&frames[j]) != method)
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

int codewalk__kinds(const struct lastjava_regs *top, bool top_is_anchor, uintptr_t lo, uintptr_t base,
		    struct ring_frame *frames, int n)
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
			if (!compiled(&s, &p, blob, i == 0, top_is_anchor, frames, n, &pos))
				break;
		} else {
			break;
		}
		if (p.sp <= sp)
			break;
	}
	return pos;
}
