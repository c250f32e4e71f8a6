/*
 * agent codewalk (jvmti-stub/codewalk.c): on a fake code heap holding two
 * fake nmethods and a fake stack of their frames, each trace frame gets
 * the kind HotSpot's own debug information gives it: a compiled frame
 * stands for as many trace frames as its scope chain at its pc has scopes,
 * the last of them compiled, the ones before inlined. So a recursion
 * inlined into itself (A inlining B inlining A) calls the innermost A
 * inlined and the outermost compiled; a top frame caught at a PcDesc's pc
 * takes the next PcDesc, unless it is the anchor's pc; the JDK 25 layout
 * (debug information in the immutable data, UNSIGNED5 excluding 0) reads
 * the same; a chain that does not fall, or a trace that does not end the
 * chain with the nmethod's own method, leaves the kinds unknown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "jvmti-stub/codewalk.h"
#include "jvmti-stub/stream.h"

#define SEGMENT_LOG2 6
#define HEAP_BYTES 4096
#define NR_SEGMENTS (HEAP_BYTES >> SEGMENT_LOG2)
#define KIND_NMETHOD 7
#define LEVEL 4

/* Where the fake blobs keep their fields (from the blob's start). */
enum {
	F_KIND = 0, F_SIZE = 4, F_FRAME_SIZE = 8, F_COMPLETE = 12, F_CODE = 16, F_METHOD = 24, F_LEVEL = 32,
	F_PCS = 36, F_PCS_END = 40, F_SCOPES = 48, F_IMMUTABLE = 56, F_IMMUTABLE_SIZE = 64, F_SCOPES_OFFSET = 68,
	HEADER = 72,
};
/* In a blob: its code, scopes and PcDescs (JDK 17), and its size. */
enum { CODE_AT = 128, CODE_BYTES = 256, SCOPES_AT = 384, PCS_AT = 448, BLOB_BYTES = 640 };
/* A PcDesc: pc offset, scope offset, flags. */
#define PC_DESC_SIZE 12
#define FRAME_WORDS 4

static _Alignas(64) uint8_t heap[HEAP_BYTES];
static uint8_t segmap[NR_SEGMENTS];
static uintptr_t heap_object[2]; /* _memory._high, _segmap._high */
static _Alignas(8) uint8_t immutable[2][256];
static uintptr_t stack[64];
/* jmethodID slots: each holds its Method*. */
static uintptr_t method_a = 0xa000, method_b = 0xb000, method_c = 0xc000;

static struct codewalk_layout layout(bool jdk25)
{
	struct codewalk_layout l = {
		.nr_heaps = 1,
		.memory_high = 0, .segmap_high = 8,
		.block_used = 0, .block_size = 16,
		.blob_size = F_SIZE, .blob_frame_size = F_FRAME_SIZE,
		.blob_frame_complete = F_COMPLETE, .frame_complete_width = 4,
		.blob_code = F_CODE, .code_is_offset = true,
		.by_kind = true, .blob_kind = F_KIND, .kind_nmethod = KIND_NMETHOD,
		.blob_header = F_LEVEL,
		.nm_method = F_METHOD, .nm_level = F_LEVEL, .level_width = 4,
		.immutable = jdk25,
		.nm_pcs = F_PCS, .nm_pcs_end = F_PCS_END, .nm_scopes = F_SCOPES,
		.nm_immutable = F_IMMUTABLE, .nm_immutable_size = F_IMMUTABLE_SIZE, .nm_scopes_offset = F_SCOPES_OFFSET,
		.pc_desc_size = PC_DESC_SIZE, .pc_offset = 0, .pc_scope = 4,
		.u5_excluded = jdk25,
		.nm_header = HEADER,
	};

	l.heaps[0] = (struct codewalk_heap){ .heap = (uintptr_t)heap_object, .low = (uintptr_t)heap,
					     .segmap = (uintptr_t)segmap, .log2_segment = SEGMENT_LOG2 };
	return l;
}

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* One scope of a fake chain: its offset in the scopes data and its sender's (0: none). */
struct scope {
	uint8_t offset, sender;
};

/* A PcDesc of a fake nmethod: its pc offset and the chain's innermost scope. */
struct pc {
	int32_t pc;
	uint8_t scope;
};

/*
 * A fake nmethod of method at block (a segment boundary of the heap): its
 * scopes (sender offsets only: codewalk reads no more of a scope, the
 * method index and bci after it are filler) and PcDescs between the two
 * sentinels, inside it or, for JDK 25, in immutable data `imm`. Returns
 * its code's start.
 */
static uintptr_t fake_nmethod(size_t block, uintptr_t method, const struct scope *scopes, int nr_scopes,
			      const struct pc *pcs, int nr_pcs, bool jdk25, uint8_t *imm)
{
	uint8_t *blob = heap + block + 16, *scope_data, *pc_data;
	uint8_t excluded = jdk25;
	int32_t pcs_bytes = (nr_pcs + 2) * PC_DESC_SIZE;

	heap[block] = 1; /* HeapBlock::_used */
	for (size_t s = 0; s < (BLOB_BYTES + 16) >> SEGMENT_LOG2 && (block >> SEGMENT_LOG2) + s < NR_SEGMENTS; s++)
		segmap[(block >> SEGMENT_LOG2) + s] = (uint8_t)s;
	blob[F_KIND] = KIND_NMETHOD;
	put32(blob + F_SIZE, BLOB_BYTES);
	put32(blob + F_FRAME_SIZE, FRAME_WORDS);
	put32(blob + F_COMPLETE, 0);
	put32(blob + F_CODE, CODE_AT);
	put64(blob + F_METHOD, method);
	put32(blob + F_LEVEL, LEVEL);
	if (jdk25) {
		/* The PcDescs first, the scopes right after them (nmethod.cpp's immutable data). */
		pc_data = imm;
		scope_data = imm + pcs_bytes;
		put64(blob + F_IMMUTABLE, (uintptr_t)imm);
		put32(blob + F_IMMUTABLE_SIZE, pcs_bytes + 64);
		put32(blob + F_PCS, 0);
		put32(blob + F_SCOPES_OFFSET, pcs_bytes);
	} else {
		scope_data = blob + SCOPES_AT;
		pc_data = blob + PCS_AT;
		put32(blob + F_PCS, PCS_AT);
		put32(blob + F_PCS_END, PCS_AT + pcs_bytes);
		put64(blob + F_SCOPES, (uintptr_t)scope_data);
	}
	for (int i = 0; i < nr_scopes; i++) {
		scope_data[scopes[i].offset] = scopes[i].sender + excluded;
		scope_data[scopes[i].offset + 1] = 1 + excluded;
		scope_data[scopes[i].offset + 2] = 5 + excluded;
	}
	put32(pc_data, -1);
	put32(pc_data + 4, 0);
	for (int i = 0; i < nr_pcs; i++) {
		put32(pc_data + (i + 1) * PC_DESC_SIZE, pcs[i].pc);
		put32(pc_data + (i + 1) * PC_DESC_SIZE + 4, pcs[i].scope);
	}
	put32(pc_data + (nr_pcs + 1) * PC_DESC_SIZE, INT32_MAX);
	put32(pc_data + (nr_pcs + 1) * PC_DESC_SIZE + 4, 0);
	return (uintptr_t)blob + CODE_AT;
}

/* The scopes of nmethod A: at 0x40, A alone; at 0x50, A inlining B inlining A (offsets 1, 4, 7). */
static const struct scope a_scopes[] = { { 1, 0 }, { 4, 1 }, { 7, 4 } };
static const struct pc a_pcs[] = { { 0x40, 1 }, { 0x50, 7 } };
/* Nmethod C: at its call (return address 0x30), C alone. */
static const struct scope c_scopes[] = { { 1, 0 } };
static const struct pc c_pcs[] = { { 0x30, 1 } };

static uintptr_t code_a, code_c;

/* Two nmethods (A at block 0, C at block 1024) and a stack: A's frame, then C's, then nothing. */
static void fake_world(bool jdk25)
{
	struct codewalk_layout l = layout(jdk25);

	memset(heap, 0, sizeof(heap));
	memset(segmap, 0xff, sizeof(segmap));
	memset(immutable, 0, sizeof(immutable));
	memset(stack, 0, sizeof(stack));
	heap_object[0] = (uintptr_t)heap + sizeof(heap);
	heap_object[1] = (uintptr_t)segmap + sizeof(segmap);
	code_a = fake_nmethod(0, method_a, a_scopes, 3, a_pcs, 2, jdk25, immutable[0]);
	code_c = fake_nmethod(1024, method_c, c_scopes, 1, c_pcs, 1, jdk25, immutable[1]);
	/* A's frame: stack[0..4), its return address into C at the top word. */
	stack[FRAME_WORDS - 1] = code_c + 0x30;
	codewalk__configure(&l);
}

static void set_trace(struct ring_frame *frames, uintptr_t *const methods[], int n)
{
	for (int i = 0; i < n; i++)
		frames[i] = (struct ring_frame){ .lineno = 5, .kind = 0xdead, .method_id = methods[i] };
}

static int walk(uintptr_t pc, bool anchored, struct ring_frame *frames, int n)
{
	struct lastjava_regs top = { .pc = pc, .sp = (uintptr_t)stack, .fp = 0 };

	return codewalk__kinds(&top, anchored, (uintptr_t)stack, (uintptr_t)(stack + 64), frames, n);
}

#define COMPILED (JBPF_FRAME_COMPILED | LEVEL << JBPF_FRAME_LEVEL_SHIFT)
#define INLINED (JBPF_FRAME_INLINED | LEVEL << JBPF_FRAME_LEVEL_SHIFT)

static void assert_kinds(const struct ring_frame *frames, const uint32_t *want, int n)
{
	for (int i = 0; i < n; i++)
		if (frames[i].kind != want[i])
			fail_msg("frame %d: kind 0x%x, not 0x%x", i, frames[i].kind, want[i]);
}

/* A (inlined) <- B (inlined) <- A (compiled) <- C (compiled): the innermost A is not the compiled frame. */
static void recursion_inlined_into_itself(void **state)
{
	struct ring_frame frames[4];

	fake_world(false);
	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_b, &method_a, &method_c }, 4);
	assert_int_equal(walk(code_a + 0x48, false, frames, 4), 4);
	assert_kinds(frames, (const uint32_t[]){ INLINED, INLINED, COMPILED, COMPILED }, 4);
}

/* The same on JDK 25's layout: debug information in the immutable data, numbers excluding the zero byte. */
static void immutable_data_read_alike(void **state)
{
	struct ring_frame frames[4];

	fake_world(true);
	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_b, &method_a, &method_c }, 4);
	assert_int_equal(walk(code_a + 0x48, false, frames, 4), 4);
	assert_kinds(frames, (const uint32_t[]){ INLINED, INLINED, COMPILED, COMPILED }, 4);
}

/*
 * Caught at 0x40, a PcDesc's own pc: from the signal's context HotSpot
 * takes the next PcDesc (A, B, A), from the anchor the one at the pc (A).
 */
static void top_pc_desc_as_hotspot_takes_it(void **state)
{
	struct ring_frame frames[4];

	fake_world(false);
	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_b, &method_a, &method_c }, 4);
	assert_int_equal(walk(code_a + 0x40, false, frames, 4), 4);
	assert_kinds(frames, (const uint32_t[]){ INLINED, INLINED, COMPILED, COMPILED }, 4);

	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_c }, 2);
	assert_int_equal(walk(code_a + 0x40, true, frames, 2), 2);
	assert_kinds(frames, (const uint32_t[]){ COMPILED, COMPILED }, 2);
}

/* A trace that does not end A's chain with A (here: one frame short) gets no kind at all. */
static void chain_not_ending_in_its_method_unknown(void **state)
{
	struct ring_frame frames[3];

	fake_world(false);
	set_trace(frames, (uintptr_t *const[]){ &method_b, &method_a, &method_c }, 3);
	assert_int_equal(walk(code_a + 0x48, false, frames, 3), 0);
	assert_kinds(frames, (const uint32_t[]){ 0, 0, 0 }, 3);
}

/* Hostile debug information: a chain whose sender is not below it, a PcDesc table past the blob. */
static void hostile_debug_information_refused(void **state)
{
	struct ring_frame frames[4];
	uint8_t *blob_a = heap + 16;

	fake_world(false);
	blob_a[SCOPES_AT + 4] = 7; /* the scope at 4 names the one at 7, above it, as its sender */
	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_b, &method_a, &method_c }, 4);
	assert_int_equal(walk(code_a + 0x48, false, frames, 4), 0);

	fake_world(false);
	put32(blob_a + F_PCS_END, BLOB_BYTES + PC_DESC_SIZE);
	set_trace(frames, (uintptr_t *const[]){ &method_a, &method_b, &method_a, &method_c }, 4);
	assert_int_equal(walk(code_a + 0x48, false, frames, 4), 0);
	assert_kinds(frames, (const uint32_t[]){ 0, 0, 0, 0 }, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recursion_inlined_into_itself),
		cmocka_unit_test(immutable_data_read_alike),
		cmocka_unit_test(top_pc_desc_as_hotspot_takes_it),
		cmocka_unit_test(chain_not_ending_in_its_method_unknown),
		cmocka_unit_test(hostile_debug_information_refused),
	};

	return cmocka_run_group_tests_name("agent_codewalk", tests, NULL, NULL);
}
