/*
 * hotspot_prologue: where a compiled frame caught in its prologue keeps
 * its return address, decoded from the code at its verified entry
 * (bpf/hotspot_prologue.h, compiled here unchanged). The prologues are
 * the bytes JDK 17's and JDK 25's code caches held for C1, C2 and native
 * wrapper nmethods (read from running JVMs, from the verified entry to
 * _frame_complete_offset); each pc past the entry is judged, and every
 * pc at which the frame is reserved must say so, whatever lies at sp.
 */
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/hotspot_prologue.h"

struct expected {
	__u32 at;
	int state;
};

/* Decodes hex (with spaces) into a buffer of HOTSPOT_PROLOGUE_BYTES, the rest 0xcc. */
static void code_of(__u8 *code, const char *hex)
{
	size_t n = 0;

	memset(code, 0xcc, HOTSPOT_PROLOGUE_BYTES);
	for (const char *p = hex; p[0] && p[1] && n < HOTSPOT_PROLOGUE_BYTES;) {
		unsigned int byte;

		if (*p == ' ') {
			p++;
			continue;
		}
		assert_int_equal(sscanf(p, "%2x", &byte), 1);
		code[n++] = (__u8)byte;
		p += 2;
	}
}

static void assert_states(const char *hex, const struct expected *want, size_t n)
{
	__u8 code[HOTSPOT_PROLOGUE_BYTES];

	code_of(code, hex);
	for (size_t i = 0; i < n; i++) {
		int got = hotspot_prologue_state(code, want[i].at);

		if (got != want[i].state)
			fail_msg("at +%u: state %d, not %d", want[i].at, got, want[i].state);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* C2 of a leaf method (JDK 25): no bang; the frame first, rbp saved in it, then the entry barrier. */
static void c2_without_bang(void **state)
{
	static const struct expected want[] = {
		{ 0, HOTSPOT_PROLOGUE_NOTHING_PUSHED },	  /* sub rsp, 0x18 */
		{ 7, HOTSPOT_PROLOGUE_FRAME_RBP_LIVE },	  /* mov [rsp+0x10], rbp */
		{ 12, HOTSPOT_PROLOGUE_FRAME },		  /* cmp dword [r15+0x20], 5 */
		{ 20, HOTSPOT_PROLOGUE_FRAME },		  /* jne */
		{ 3, HOTSPOT_PROLOGUE_UNKNOWN },	  /* inside the sub */
	};

	(void)state;
	assert_states("4881ec18000000 48896c2410 41817f2005000000 0f8537000000", want, N(want));
}

/* C2 with a bang (JDK 25): bang, push rbp, sub rsp, entry barrier. */
static void c2_with_bang(void **state)
{
	static const struct expected want[] = {
		{ 0, HOTSPOT_PROLOGUE_NOTHING_PUSHED },	 /* mov [rsp-0x14000], eax */
		{ 7, HOTSPOT_PROLOGUE_NOTHING_PUSHED },	 /* push rbp */
		{ 8, HOTSPOT_PROLOGUE_RBP_PUSHED },	 /* sub rsp, 0x30 */
		{ 12, HOTSPOT_PROLOGUE_FRAME },		 /* cmp dword [r15+0x20], 5 */
		{ 20, HOTSPOT_PROLOGUE_FRAME },		 /* jne */
	};

	(void)state;
	assert_states("89842400c0feff 55 4883ec30 41817f2005000000 0f8518010000", want, N(want));
}

/* C1 (JDK 25): the entry barrier inline, its call before the frame is complete. */
static void c1(void **state)
{
	static const struct expected want[] = {
		{ 0, HOTSPOT_PROLOGUE_NOTHING_PUSHED },
		{ 7, HOTSPOT_PROLOGUE_NOTHING_PUSHED },
		{ 8, HOTSPOT_PROLOGUE_RBP_PUSHED },
		{ 12, HOTSPOT_PROLOGUE_FRAME }, /* cmp */
		{ 20, HOTSPOT_PROLOGUE_FRAME }, /* je */
		{ 22, HOTSPOT_PROLOGUE_FRAME }, /* call the barrier's stub */
	};

	(void)state;
	assert_states("89842400c0feff 55 4883ec20 41817f2005000000 7405 e80583aaff", want, N(want));
}

/* A native wrapper (JDK 25): enter (push rbp; mov rbp, rsp), sub rsp, a nop, the barrier. */
static void native_wrapper(void **state)
{
	static const struct expected want[] = {
		{ 7, HOTSPOT_PROLOGUE_NOTHING_PUSHED },
		{ 8, HOTSPOT_PROLOGUE_RBP_PUSHED },  /* mov rbp, rsp */
		{ 11, HOTSPOT_PROLOGUE_RBP_PUSHED }, /* sub rsp, 0x40 */
		{ 15, HOTSPOT_PROLOGUE_FRAME },	     /* nop */
		{ 16, HOTSPOT_PROLOGUE_FRAME },	     /* cmp */
		{ 24, HOTSPOT_PROLOGUE_FRAME },	     /* je */
		{ 26, HOTSPOT_PROLOGUE_FRAME },	     /* call */
	};

	(void)state;
	assert_states("89842400c0feff 55 488bec 4883ec40 90 41817f2004000000 7405 e89194aaff", want, N(want));
}

/* C1 of JDK 17 (no entry barrier under G1): a frame of 0x80 bytes, sub with a 32-bit immediate. */
static void c1_jdk17_large_frame(void **state)
{
	static const struct expected want[] = {
		{ 7, HOTSPOT_PROLOGUE_NOTHING_PUSHED },
		{ 8, HOTSPOT_PROLOGUE_RBP_PUSHED },
		{ 15, HOTSPOT_PROLOGUE_FRAME },
	};

	(void)state;
	assert_states("89842400c0feff 55 4881ec80000000", want, N(want));
}

/* A frame of rbp and the return only: push rbp, then the barrier, no sub. */
static void frame_of_rbp_only(void **state)
{
	static const struct expected want[] = {
		{ 7, HOTSPOT_PROLOGUE_NOTHING_PUSHED },
		{ 8, HOTSPOT_PROLOGUE_RBP_PUSHED },
		{ 16, HOTSPOT_PROLOGUE_RBP_PUSHED },
	};

	(void)state;
	assert_states("89842400c0feff 55 41817f2005000000 0f8500000000", want, N(want));
}

/* The else branch's rbp saved at [rsp] and at [rsp+d32]: both forms end in FRAME. */
static void rbp_saved_by_other_displacements(void **state)
{
	static const struct expected at_sp[] = {
		{ 7, HOTSPOT_PROLOGUE_FRAME_RBP_LIVE },
		{ 11, HOTSPOT_PROLOGUE_FRAME },
	};
	static const struct expected far[] = {
		{ 7, HOTSPOT_PROLOGUE_FRAME_RBP_LIVE },
		{ 15, HOTSPOT_PROLOGUE_FRAME },
	};

	(void)state;
	assert_states("4881ec08000000 48892c24 90", at_sp, N(at_sp));
	assert_states("4881ec08010000 4889ac2400010000 90", far, N(far));
}

/* Code that begins otherwise is not decoded, whatever follows it. */
static void other_code_is_unknown(void **state)
{
	static const struct expected hash[] = {
		{ 0, HOTSPOT_PROLOGUE_NOTHING_PUSHED }, /* at the entry itself nothing can have been pushed */
		{ 3, HOTSPOT_PROLOGUE_UNKNOWN },
		{ 39, HOTSPOT_PROLOGUE_UNKNOWN },	/* the bang after Object.hashCode's fast path */
		{ 47, HOTSPOT_PROLOGUE_UNKNOWN },
	};
	static const struct expected patched[] = {
		{ 5, HOTSPOT_PROLOGUE_UNKNOWN },
	};
	static const struct expected unsaved[] = {
		{ 8, HOTSPOT_PROLOGUE_UNKNOWN }, /* sub, then not the save of rbp */
	};

	(void)state;
	assert_states("488b0648f7c0010000000f841200000048c1e8084881e0ffffff7f0f8401000000c3"
		      "89842400c0feff55488bec4883ec40",
		      hash, N(hash));
	/* A not-entrant method's entry patched into a jump (JDK 17). */
	assert_states("e9aabbccdd 55 4883ec30", patched, N(patched));
	assert_states("4881ec18000000 90 41817f2005000000", unsaved, N(unsaved));
}

/* A pc past what is decoded, in a prologue of bangs that never ends: unknown, never out of bounds. */
static void endless_bangs_are_unknown(void **state)
{
	char hex[2 * HOTSPOT_PROLOGUE_BYTES + 1] = "";
	__u8 code[HOTSPOT_PROLOGUE_BYTES];

	(void)state;
	for (int i = 0; i < 9; i++)
		strcat(hex, "89842400c0feff");
	code_of(code, hex);
	assert_int_equal(hotspot_prologue_state(code, 7 * 8), HOTSPOT_PROLOGUE_NOTHING_PUSHED);
	assert_int_equal(hotspot_prologue_state(code, 7 * 9), HOTSPOT_PROLOGUE_NOTHING_PUSHED);
	/* The next instruction would start past the bytes read. */
	assert_int_equal(hotspot_prologue_state(code, 7 * 10), HOTSPOT_PROLOGUE_UNKNOWN);
	assert_int_equal(hotspot_prologue_state(code, 4096), HOTSPOT_PROLOGUE_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c2_without_bang),
		cmocka_unit_test(c2_with_bang),
		cmocka_unit_test(c1),
		cmocka_unit_test(native_wrapper),
		cmocka_unit_test(c1_jdk17_large_frame),
		cmocka_unit_test(frame_of_rbp_only),
		cmocka_unit_test(rbp_saved_by_other_displacements),
		cmocka_unit_test(other_code_is_unknown),
		cmocka_unit_test(endless_bangs_are_unknown),
	};

	return cmocka_run_group_tests_name("hotspot_prologue", tests, NULL, NULL);
}
