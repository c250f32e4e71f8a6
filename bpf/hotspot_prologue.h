/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How far a compiled method's prologue has got at a pc, read from its
 * code: for the walker's innermost compiled frame caught before its
 * _frame_complete_offset (bpf/hotspot.bpf.h).
 *
 * Before its frame is complete, the words at a method's sp are not yet
 * its own: once `sub rsp` has reserved the frame, they hold whatever the
 * last frames at that depth left there, return addresses included. So
 * where the return address lies is told from the instructions between the
 * verified entry and the pc, as C1, C2 and the native wrappers of JDK 17
 * and 25 lay them out on x86-64:
 *
 *   mov [rsp-N], eax        89 84 24 d32      stack bang, any number
 *   push rbp                55
 *   mov rbp, rsp            48 8b ec | 48 89 e5
 *   sub rsp, n              48 83 ec i8 | 48 81 ec i32
 *   mov [rsp+d], rbp        48 89 2c 24 | 48 89 6c 24 d8 | 48 89 ac 24 d32
 *
 * C2 without a stack bang reserves the frame first (sub rsp, imm32) and
 * saves rbp in it next; everything after the frame is reserved (the
 * nmethod entry barrier, its alignment) leaves sp alone until the frame
 * is complete. Code that begins otherwise (a class initialisation
 * barrier, Object.hashCode's fast path, a not-entrant method's patched
 * jump) is not decoded: HOTSPOT_PROLOGUE_UNKNOWN.
 *
 * Plain C, so that the unit tests compile it too
 * (tests/unit/test_hotspot_prologue.c); needs __u8/__u32 first.
 */
#ifndef JBPF_HOTSPOT_PROLOGUE_H
#define JBPF_HOTSPOT_PROLOGUE_H

/* Bytes of code read from the verified entry: four bangs and the rest. */
#define HOTSPOT_PROLOGUE_BYTES 64
/* Instructions decoded at most. */
#define HOTSPOT_PROLOGUE_STEPS 10

enum hotspot_prologue {
	HOTSPOT_PROLOGUE_UNKNOWN = -1,
	HOTSPOT_PROLOGUE_NOTHING_PUSHED = 0, /* the return address at sp */
	HOTSPOT_PROLOGUE_RBP_PUSHED = 1,     /* the caller's rbp at sp, the return address above it */
	HOTSPOT_PROLOGUE_FRAME_RBP_LIVE = 2, /* the frame reserved, the caller's rbp not saved in it yet */
	HOTSPOT_PROLOGUE_FRAME = 3,          /* the frame reserved, the caller's rbp saved under the return */
};

/*
 * The state at the instruction `at` bytes past the verified entry, whose
 * first HOTSPOT_PROLOGUE_BYTES bytes are code[].
 */
static inline __attribute__((always_inline)) int hotspot_prologue_state(const __u8 *code, __u32 at)
{
	int state = HOTSPOT_PROLOGUE_NOTHING_PUSHED;
	__u32 o = 0, len;

	for (int i = 0; i < HOTSPOT_PROLOGUE_STEPS; i++) {
		const __u8 *c;

		if (o == at)
			return state;
		if (o > at)
			return HOTSPOT_PROLOGUE_UNKNOWN; /* at is inside an instruction */
		if (state == HOTSPOT_PROLOGUE_FRAME)
			return state; /* nothing moves sp again before the frame is complete */
		if (o > HOTSPOT_PROLOGUE_BYTES - 8)
			break;
		c = code + o;
		len = 0;
		if (state == HOTSPOT_PROLOGUE_NOTHING_PUSHED && c[0] == 0x89 && c[1] == 0x84 && c[2] == 0x24) {
			len = 7;
		} else if (state == HOTSPOT_PROLOGUE_NOTHING_PUSHED && c[0] == 0x55) {
			len = 1;
			state = HOTSPOT_PROLOGUE_RBP_PUSHED;
		} else if (state == HOTSPOT_PROLOGUE_RBP_PUSHED && c[0] == 0x48 &&
			   ((c[1] == 0x8b && c[2] == 0xec) || (c[1] == 0x89 && c[2] == 0xe5))) {
			len = 3;
		} else if (state <= HOTSPOT_PROLOGUE_RBP_PUSHED && c[0] == 0x48 && (c[1] == 0x83 || c[1] == 0x81) &&
			   c[2] == 0xec) {
			len = c[1] == 0x83 ? 4 : 7;
			state = state == HOTSPOT_PROLOGUE_RBP_PUSHED ? HOTSPOT_PROLOGUE_FRAME
								      : HOTSPOT_PROLOGUE_FRAME_RBP_LIVE;
		} else if (state == HOTSPOT_PROLOGUE_FRAME_RBP_LIVE && c[0] == 0x48 && c[1] == 0x89) {
			if (c[2] == 0x2c && c[3] == 0x24)
				len = 4;
			else if (c[2] == 0x6c && c[3] == 0x24)
				len = 5;
			else if (c[2] == 0xac && c[3] == 0x24)
				len = 8;
			state = HOTSPOT_PROLOGUE_FRAME;
		} else if (state == HOTSPOT_PROLOGUE_RBP_PUSHED) {
			/* A frame of rbp and the return only (no sub): nothing moves sp again. */
			return state;
		}
		if (!len)
			break;
		o += len;
	}
	return HOTSPOT_PROLOGUE_UNKNOWN;
}

#endif /* JBPF_HOTSPOT_PROLOGUE_H */
