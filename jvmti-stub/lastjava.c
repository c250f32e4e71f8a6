/*
 * lastjava: the places to call AsyncGetCallTrace again from, when it gives
 * up on a Java thread (contract, HotSpot's reasons and the safety argument
 * in lastjava.h). The layout comes from lastjava_init.c.
 *
 * The layout is copied once into `lj` and published with `ready`; the two
 * signal-side functions read only it, fields of the calling thread's own
 * JavaThread and words of its stack in use, and call nothing (`make
 * check-handler` holds this file to that: its object may have no undefined
 * symbol at all).
 */
#include "lastjava.h"

#include <stdatomic.h>

static struct lastjava_layout lj;
static _Atomic bool ready;

void lastjava__configure(const struct lastjava_layout *layout)
{
	lj = *layout;
	atomic_store_explicit(&ready, true, memory_order_release);
}

static uintptr_t thread_word(const char *thread, uint64_t offset)
{
	return *(const volatile uintptr_t *)(thread + offset);
}

static uintptr_t stack_word(uintptr_t addr)
{
	return *(const volatile uintptr_t *)addr;
}

/* Whether the 8-byte word at addr may be read: in [lo, base), aligned. */
static bool readable(const struct lastjava_search *s, uintptr_t addr)
{
	return addr >= s->lo && addr < s->base && s->base - addr >= 8 && !(addr & 7);
}

static bool in_code_cache(uintptr_t pc)
{
	return pc >= lj.code_low && pc < lj.code_high;
}

/* The thread's stack base, when the interrupted sp is on its stack: [sp, base) is then the part in use. */
static bool stack_in_use(const char *thread, uintptr_t sp, uintptr_t *base)
{
	uintptr_t size;

	*base = thread_word(thread, lj.stack_base);
	size = thread_word(thread, lj.stack_size);
	return *base > size && sp >= *base - size && sp < *base && !(sp & 7);
}

bool lastjava__top(const char *thread, const struct lastjava_regs *at, struct lastjava_regs *top, bool *from_anchor,
		   uintptr_t *lo, uintptr_t *base)
{
	uintptr_t sp, pc;

	if (!atomic_load_explicit(&ready, memory_order_acquire) || !stack_in_use(thread, at->sp, base))
		return false;
	*lo = at->sp;
	sp = thread_word(thread, lj.anchor_sp);
	pc = thread_word(thread, lj.anchor_pc);
	*from_anchor = sp && pc;
	*top = *from_anchor ? (struct lastjava_regs){ .pc = pc, .sp = sp, .fp = thread_word(thread, lj.anchor_fp) }
			    : *at;
	return true;
}

bool lastjava__begin(const char *thread, const struct lastjava_regs *at, struct lastjava_search *s,
		     struct lastjava_anchor *anchor)
{
	uintptr_t base, last_sp;
	int32_t state;

	if (!atomic_load_explicit(&ready, memory_order_acquire) || !stack_in_use(thread, at->sp, &base))
		return false;
	state = *(const volatile int32_t *)(thread + lj.state);
	if (state != lj.in_java && state != lj.in_vm)
		return false;
	*s = (struct lastjava_search){ .lo = at->sp, .base = base };
	last_sp = thread_word(thread, lj.anchor_sp);
	if (last_sp) {
		if (thread_word(thread, lj.anchor_pc) || !readable(s, last_sp - 8))
			return false;
		s->anchored = true;
		s->sp = last_sp;
		s->fp = thread_word(thread, lj.anchor_fp);
		*anchor = (struct lastjava_anchor){
			.sp = (uintptr_t *)(uintptr_t)(thread + lj.anchor_sp),
			.pc = (uintptr_t *)(uintptr_t)(thread + lj.anchor_pc),
			.fp = (uintptr_t *)(uintptr_t)(thread + lj.anchor_fp),
		};
		return true;
	}
	if (state != lj.in_java)
		return false;
	s->sp = at->sp;
	s->fp = at->fp;
	s->link = at->fp;
	/*
	 * Outside the code cache (a VM or libc leaf function that keeps no
	 * frame pointer) the first code address above sp is the return into
	 * the Java code that called it; inside, it could be that of the
	 * method's own caller, so only the chain is followed.
	 */
	s->scan = !in_code_cache(at->pc);
	return true;
}

/* The caller of the frame whose saved fp is at fp (push rbp; mov rbp, rsp), if it returns into the code cache. */
static bool caller_at(const struct lastjava_search *s, uintptr_t fp, struct lastjava_regs *out)
{
	uintptr_t ret;

	if (!readable(s, fp) || !readable(s, fp + 8))
		return false;
	ret = stack_word(fp + 8);
	if (!in_code_cache(ret))
		return false;
	*out = (struct lastjava_regs){ .pc = ret, .sp = fp + 16, .fp = stack_word(fp) };
	return true;
}

/* No anchor: the next frame on the interrupted fp chain that returns into the code cache. */
static bool next_on_chain(struct lastjava_search *s, struct lastjava_regs *out)
{
	uintptr_t fp = s->link;

	if (!fp)
		return false;
	for (int i = 0; i < LASTJAVA_MAX_LINKS && readable(s, fp) && readable(s, fp + 8); i++) {
		uintptr_t next = stack_word(fp);

		if (caller_at(s, fp, out)) {
			s->link = next;
			return true;
		}
		/* A frame-pointer chain only goes up the stack; anything else is not one. */
		if (next <= fp)
			break;
		fp = next;
	}
	s->link = 0;
	return false;
}

/* Anchored: the next word of the stub's frame, from the anchor's sp up, that points into the code cache. */
static bool next_scanned(struct lastjava_search *s, struct lastjava_regs *out)
{
	while (s->scanned < LASTJAVA_MAX_SCAN) {
		uintptr_t addr = s->sp + 8 * s->scanned++, word;

		if (!readable(s, addr))
			return false;
		word = stack_word(addr);
		if (in_code_cache(word)) {
			/* The callee pushed rbp just below its return address (x86 compiled frames do). */
			*out = (struct lastjava_regs){ .pc = word, .sp = addr + 8,
						       .fp = readable(s, addr - 8) ? stack_word(addr - 8) : 0 };
			return true;
		}
	}
	return false;
}

bool lastjava__next(struct lastjava_search *s, struct lastjava_regs *out, bool *from_anchor_pc)
{
	*from_anchor_pc = false;
	if (!s->anchored)
		return next_on_chain(s, out) || (s->scan && next_scanned(s, out));
	switch (s->step) {
	case 0:
		s->step = 1;
		*from_anchor_pc = true;
		/* What JavaFrameAnchor::make_walkable stores: the return address below the last Java sp. */
		*out = (struct lastjava_regs){ .pc = stack_word(s->sp - 8), .sp = s->sp, .fp = s->fp };
		return true;
	case 1:
		s->step = 2;
		/* A C1 stub's frame: the anchor's fp is its rbp, above the anchor's sp. */
		if (s->fp > s->sp && caller_at(s, s->fp, out))
			return true;
		/* fall through */
	default:
		return next_scanned(s, out);
	}
}
