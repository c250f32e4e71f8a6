/*
 * agent lastjava (jvmti-stub/lastjava.c): on a fake JavaThread and a fake
 * stack, the places to call AsyncGetCallTrace again from come in order
 * (the anchor's own pc, a C1 stub's caller through the anchor's fp, then
 * the words of the stub's frame that point into the code cache; without
 * an anchor, the frame-pointer chain), and nothing outside the stack in
 * use, nor a thread in another state or with a walkable anchor, is tried.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "jvmti-stub/lastjava.h"

#define STACK_WORDS 256
#define CODE_LOW 0x10000u
#define CODE_HIGH 0x20000u
#define IN_VM 6
#define IN_JAVA 8
#define BLOCKED 10

static const struct lastjava_layout layout = {
	.anchor_sp = 64, .anchor_pc = 72, .anchor_fp = 80,
	.state = 96, .stack_base = 104, .stack_size = 112,
	.in_vm = IN_VM, .in_java = IN_JAVA,
	.code_low = CODE_LOW, .code_high = CODE_HIGH,
};

static _Alignas(16) char thread[256];
static uintptr_t stack[STACK_WORDS];

static void set_word(uint64_t offset, uintptr_t v)
{
	memcpy(thread + offset, &v, sizeof(v));
}

static uintptr_t at(int i)
{
	return (uintptr_t)&stack[i];
}

/* A thread in state, its stack the array above, with no anchor. */
static void fake_thread(int32_t state)
{
	memset(thread, 0, sizeof(thread));
	memset(stack, 0, sizeof(stack));
	memcpy(thread + layout.state, &state, sizeof(state));
	set_word(layout.stack_base, at(STACK_WORDS));
	set_word(layout.stack_size, sizeof(stack));
}

static void assert_regs(const struct lastjava_regs *r, uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
	assert_int_equal(r->pc, pc);
	assert_int_equal(r->sp, sp);
	assert_int_equal(r->fp, fp);
}

static void nothing_before_the_layout_is_known(void **state)
{
	struct lastjava_regs regs = { .pc = 1, .sp = at(10), .fp = at(12) };
	struct lastjava_search search;
	struct lastjava_anchor anchor;

	fake_thread(IN_JAVA);
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	lastjava__configure(&layout);
}

/*
 * In the VM below a stub: the anchor has sp and fp, no pc. First the pc
 * make_walkable would store, then the caller through the anchor's fp (a
 * C1 stub's rbp), then each code-cache word of the frame from the anchor's
 * sp up; the anchor's fields are handed back for the handler to set.
 */
static void anchored_places_in_order(void **state)
{
	struct lastjava_regs regs = { .pc = 0x5000, .sp = at(10), .fp = 0 }, place;
	struct lastjava_search search;
	struct lastjava_anchor anchor;
	bool anchor_pc;

	fake_thread(IN_VM);
	set_word(layout.anchor_sp, at(20));
	set_word(layout.anchor_fp, at(30));
	stack[19] = 0x10100;  /* return address into the stub */
	stack[30] = at(50);   /* the stub's saved rbp */
	stack[31] = 0x10200;  /* the stub's return address, into its compiled caller */
	stack[40] = 0x10300;  /* another code address further up */
	stack[45] = 0x90000;  /* not in the code cache: skipped */
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_true(search.anchored);
	assert_ptr_equal(anchor.sp, thread + layout.anchor_sp);
	assert_ptr_equal(anchor.pc, thread + layout.anchor_pc);
	assert_ptr_equal(anchor.fp, thread + layout.anchor_fp);

	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_true(anchor_pc);
	assert_regs(&place, 0x10100, at(20), at(30));
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_false(anchor_pc);
	assert_regs(&place, 0x10200, at(32), at(50));
	/* The scan from the anchor's sp finds the same word first, then the next. */
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_regs(&place, 0x10200, at(32), at(50));
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_regs(&place, 0x10300, at(41), 0);
	/* LASTJAVA_MAX_SCAN words from the anchor's sp hold nothing else. */
	assert_false(lastjava__next(&search, &place, &anchor_pc));
}

/* In Java with no anchor (a leaf stub): callers up the frame-pointer chain only. */
static void unanchored_follows_the_fp_chain(void **state)
{
	struct lastjava_regs regs = { .pc = 0x10050, .sp = at(10), .fp = at(12) }, place;
	struct lastjava_search search;
	struct lastjava_anchor anchor;
	bool anchor_pc;

	fake_thread(IN_JAVA);
	stack[12] = at(16);
	stack[13] = 0x5000;   /* a VM function's return address: not Java */
	stack[16] = at(24);
	stack[17] = 0x10400;  /* into compiled code */
	stack[24] = at(20);   /* goes down: the chain ends */
	stack[25] = 0x10500;
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_false(search.anchored);
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_false(anchor_pc);
	assert_regs(&place, 0x10400, at(18), at(24));
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_regs(&place, 0x10500, at(26), at(20));
	assert_false(lastjava__next(&search, &place, &anchor_pc));
}

/*
 * In Java, no anchor, interrupted outside the code cache with no frame
 * pointer (a VM or libc leaf): after the chain, the code addresses above
 * sp; inside the code cache there is no such scan (see the test above).
 */
static void unanchored_leaf_scans_above_sp(void **state)
{
	struct lastjava_regs regs = { .pc = 0x5000, .sp = at(10), .fp = 0 }, place;
	struct lastjava_search search;
	struct lastjava_anchor anchor;
	bool anchor_pc;

	fake_thread(IN_JAVA);
	stack[13] = at(40);
	stack[14] = 0x10600;
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_true(lastjava__next(&search, &place, &anchor_pc));
	assert_false(anchor_pc);
	assert_regs(&place, 0x10600, at(15), at(40));
	assert_false(lastjava__next(&search, &place, &anchor_pc));
}

/* A chain that points outside the stack in use, or loops, is not followed. */
static void chain_stays_on_the_stack(void **state)
{
	struct lastjava_regs regs = { .pc = 0x10050, .sp = at(10), .fp = at(4) }, place;
	struct lastjava_search search;
	struct lastjava_anchor anchor;
	bool anchor_pc;

	fake_thread(IN_JAVA);
	stack[4] = at(30);
	stack[5] = 0x10400;
	/* Below the interrupted sp: not the part of the stack in use. */
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_false(lastjava__next(&search, &place, &anchor_pc));

	regs.fp = at(12);
	stack[12] = at(12); /* a loop */
	stack[13] = 0x5000;
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_false(lastjava__next(&search, &place, &anchor_pc));

	regs.fp = at(STACK_WORDS - 1); /* its return address would be past the base */
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
	assert_false(lastjava__next(&search, &place, &anchor_pc));
}

/* Nothing to try: other states, a walkable anchor, a stack the sp is not on, an anchor off the stack. */
static void refuses_what_it_cannot_use(void **state)
{
	struct lastjava_regs regs = { .pc = 0x5000, .sp = at(10), .fp = at(12) };
	struct lastjava_search search;
	struct lastjava_anchor anchor;

	fake_thread(BLOCKED);
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	/* In the VM with no anchor: no Java frame to find. */
	fake_thread(IN_VM);
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	/* A walkable anchor: AsyncGetCallTrace used it already. */
	set_word(layout.anchor_sp, at(20));
	set_word(layout.anchor_pc, 0x10100);
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	/* An anchor sp below the interrupted sp, or past the base. */
	set_word(layout.anchor_pc, 0);
	set_word(layout.anchor_sp, at(5));
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	set_word(layout.anchor_sp, at(STACK_WORDS) + 64);
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	/* An interrupted sp off the thread's stack (or misaligned). */
	set_word(layout.anchor_sp, at(20));
	regs.sp = at(STACK_WORDS) + 8;
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	regs.sp = at(10) + 4;
	assert_false(lastjava__begin(thread, &regs, &search, &anchor));
	regs.sp = at(10);
	assert_true(lastjava__begin(thread, &regs, &search, &anchor));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_before_the_layout_is_known),
		cmocka_unit_test(anchored_places_in_order),
		cmocka_unit_test(unanchored_follows_the_fp_chain),
		cmocka_unit_test(unanchored_leaf_scans_above_sp),
		cmocka_unit_test(chain_stays_on_the_stack),
		cmocka_unit_test(refuses_what_it_cannot_use),
	};

	return cmocka_run_group_tests_name("agent lastjava", tests, NULL, NULL);
}
