/*
 * hotspot layout: struct jbpf_hotspot_jvm from a description shaped like
 * JDK 17's and like JDK 25's (their real offsets) and a fake memory holding
 * a code cache of three heaps, the interpreter and the call stub; then
 * hostile descriptions and memory (100 code heaps, 2^40-byte segments, a
 * heap or the interpreter outside the code cache, offsets past 16 bits or
 * past their type, fields missing or of the wrong size), each refused with
 * its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hotspot/layout.h"
#include "hotspot/vmstructs.h"
#include "hotspot_fixture.h"

/* Where the fake JVM's statics and objects are. */
#define STATICS 0x50000ull
#define S_LOW_BOUND (STATICS + 0x00)
#define S_HIGH_BOUND (STATICS + 0x08)
#define S_HEAPS (STATICS + 0x10)
#define S_INTERP (STATICS + 0x18)
#define S_CALL_STUB (STATICS + 0x20)
#define HEAPS_ARRAY 0x60000ull
#define HEAPS_DATA 0x61000ull
#define HEAP_OBJECT(i) (0x62000ull + 0x400 * (i))
#define STUB_QUEUE 0x63000ull
#define CODE_LOW 0x7000000ull
#define CODE_HIGH 0xa000000ull
#define INTERP_LOW 0x9001000ull
#define INTERP_SIZE 0x20000u
#define CALL_STUB_RETURN 0x9000500ull

static const uint64_t heap_low[3] = { 0x7000000ull, 0x8000000ull, 0x9000000ull };
static const uint64_t heap_high[3] = { 0x7800000ull, 0x8800000ull, 0x9400000ull };

/* The JDK-dependent offsets of a CodeHeap and a HeapBlock (from the JDKs' own tables). */
struct shape {
	bool jdk25;
	uint64_t heap_memory, heap_segmap, heap_log2, heap_size, block_size, used;
};

static const struct shape jdk17 = { false, 8, 120, 256, 344, 16, 8 };
static const struct shape jdk25 = { true, 0, 112, 248, 336, 8, 4 };

struct fixture {
	struct hotspot_vm *vm;
	struct fake_memory fm;
	struct hotspot_memory mem;
	unsigned char *statics, *array, *data, *heaps, *queue;
	const struct shape *shape;
};

static void field(struct fixture *f, const char *type, const char *name, const char *type_string, uint64_t offset)
{
	assert_int_equal(hotspot_vm__add_field(f->vm, type, name, type_string, false, offset, 0), 0);
}

static void type(struct fixture *f, const char *name, uint64_t size)
{
	assert_int_equal(hotspot_vm__add_type(f->vm, name, size), 0);
}

static void statics(struct fixture *f)
{
	assert_int_equal(hotspot_vm__add_field(f->vm, "CodeCache", "_low_bound", "address", true, 0, S_LOW_BOUND), 0);
	assert_int_equal(hotspot_vm__add_field(f->vm, "CodeCache", "_high_bound", "address", true, 0, S_HIGH_BOUND), 0);
	assert_int_equal(hotspot_vm__add_field(f->vm, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", true, 0,
					      S_HEAPS), 0);
	assert_int_equal(hotspot_vm__add_field(f->vm, "AbstractInterpreter", "_code", "StubQueue*", true, 0, S_INTERP),
			 0);
	assert_int_equal(hotspot_vm__add_field(f->vm, "StubRoutines", "_call_stub_return_address", "address", true, 0,
					      S_CALL_STUB), 0);
}

/* What both JDKs list alike (VirtualSpace, GrowableArray, StubQueue, Method) and the primitive types. */
static void common_description(struct fixture *f)
{
	const struct shape *s = f->shape;

	type(f, "int", 4);
	type(f, "int16_t", 2);
	type(f, "u2", 2);
	type(f, "bool", 1);
	type(f, "address", 8);
	type(f, "VirtualSpace", 112);
	field(f, "VirtualSpace", "_low", "char*", 16);
	field(f, "VirtualSpace", "_high", "char*", 24);
	type(f, "CodeHeap", s->heap_size);
	field(f, "CodeHeap", "_memory", "VirtualSpace", s->heap_memory);
	field(f, "CodeHeap", "_segmap", "VirtualSpace", s->heap_segmap);
	field(f, "CodeHeap", "_log2_segment_size", "int", s->heap_log2);
	type(f, "GrowableArrayBase", 8);
	type(f, "GrowableArray<int>", 24);
	field(f, "GrowableArrayBase", "_len", "int", 0);
	field(f, "GrowableArray<int>", "_data", "int*", 8);
	type(f, "HeapBlock", s->block_size);
	type(f, "HeapBlock::Header", s->block_size);
	field(f, "HeapBlock", "_header", "HeapBlock::Header", 0);
	field(f, "HeapBlock::Header", "_used", "bool", s->used);
	type(f, "StubQueue", 48);
	field(f, "StubQueue", "_stub_buffer", "address", 8);
	field(f, "StubQueue", "_buffer_limit", "int", 20);
	type(f, "Method", 88);
	field(f, "Method", "_constMethod", "ConstMethod*", 8);
	statics(f);
}

static void jdk17_description(struct fixture *f)
{
	type(f, "CodeBlob", 104);
	field(f, "CodeBlob", "_name", "const char*", 96);
	field(f, "CodeBlob", "_size", "int", 12);
	field(f, "CodeBlob", "_frame_complete_offset", "int", 20);
	field(f, "CodeBlob", "_frame_size", "int", 28);
	field(f, "CodeBlob", "_code_begin", "address", 32);
	type(f, "CompiledMethod", 192);
	field(f, "CompiledMethod", "_method", "Method*", 112);
	type(f, "nmethod", 352);
	field(f, "nmethod", "_compile_id", "int", 304);
	field(f, "nmethod", "_verified_entry_point", "address", 224);
	type(f, "ConstMethod", 48);
	field(f, "ConstMethod", "_code_size", "u2", 32);
}

static void jdk25_description(struct fixture *f)
{
	type(f, "CodeBlob", 64);
	type(f, "CodeBlobKind", 1);
	field(f, "CodeBlob", "_name", "const char*", 8);
	field(f, "CodeBlob", "_size", "int", 24);
	field(f, "CodeBlob", "_code_offset", "int", 36);
	field(f, "CodeBlob", "_frame_complete_offset", "int16_t", 54);
	field(f, "CodeBlob", "_frame_size", "int", 44);
	field(f, "CodeBlob", "_kind", "CodeBlobKind", 56);
	assert_int_equal(hotspot_vm__add_int(f->vm, "CodeBlobKind::Nmethod", 1), 0);
	type(f, "nmethod", 224);
	field(f, "nmethod", "_method", "Method*", 80);
	field(f, "nmethod", "_compile_id", "int", 212);
	field(f, "nmethod", "_verified_entry_offset", "u2", 154);
	type(f, "ConstMethod", 56);
	field(f, "ConstMethod", "_code_size", "u2", 34);
}

/* Heap i's object: its memory, segment map and 2^7-byte segments. */
static void fill_heap(struct fixture *f, int i, int32_t shift)
{
	unsigned char *h = f->heaps + 0x400 * i;
	const struct shape *s = f->shape;

	fake_put64(h + s->heap_memory + 16, heap_low[i]);
	fake_put64(h + s->heap_memory + 24, heap_high[i]);
	fake_put64(h + s->heap_segmap + 16, 0xc0000000ull + 0x100000ull * (uint64_t)i);
	fake_put64(h + s->heap_segmap + 24, 0xc0010000ull + 0x100000ull * (uint64_t)i);
	fake_put32(h + s->heap_log2, (uint32_t)shift);
}

/* A description of shape and the memory of a running JVM that it describes. */
static void fixture_init(struct fixture *f, const struct shape *shape)
{
	memset(f, 0, sizeof(*f));
	f->shape = shape;
	f->vm = hotspot_vm__new();
	assert_non_null(f->vm);
	common_description(f);
	if (shape->jdk25)
		jdk25_description(f);
	else
		jdk17_description(f);

	f->statics = fake_map(&f->fm, STATICS, 0x40);
	f->array = fake_map(&f->fm, HEAPS_ARRAY, 24);
	f->data = fake_map(&f->fm, HEAPS_DATA, 3 * 8);
	f->heaps = fake_map(&f->fm, HEAP_OBJECT(0), 3 * 0x400);
	f->queue = fake_map(&f->fm, STUB_QUEUE, 48);
	fake_put64(f->statics + 0x00, CODE_LOW);
	fake_put64(f->statics + 0x08, CODE_HIGH);
	fake_put64(f->statics + 0x10, HEAPS_ARRAY);
	fake_put64(f->statics + 0x18, STUB_QUEUE);
	fake_put64(f->statics + 0x20, CALL_STUB_RETURN);
	fake_put32(f->array, 3);
	fake_put64(f->array + 8, HEAPS_DATA);
	for (int i = 0; i < 3; i++) {
		fake_put64(f->data + 8 * i, HEAP_OBJECT(i));
		fill_heap(f, i, 7);
	}
	fake_put64(f->queue + 8, INTERP_LOW);
	fake_put32(f->queue + 20, INTERP_SIZE);
	fake_reader(&f->mem, &f->fm);
}

static void fixture_free(struct fixture *f)
{
	hotspot_vm__free(f->vm);
	fake_memory_free(&f->fm);
}

static void assert_common(const struct jbpf_hotspot_jvm *l, const struct shape *s)
{
	assert_true(l->code_low == CODE_LOW && l->code_high == CODE_HIGH);
	assert_true(l->interp_low == INTERP_LOW && l->interp_high == INTERP_LOW + INTERP_SIZE);
	assert_true(l->call_stub_return == CALL_STUB_RETURN);
	assert_int_equal(l->nr_heaps, 3);
	for (int i = 0; i < 3; i++) {
		assert_true(l->heaps[i].heap == HEAP_OBJECT(i));
		assert_true(l->heaps[i].low == heap_low[i]);
		assert_true(l->heaps[i].segmap == 0xc0000000ull + 0x100000ull * (uint64_t)i);
		assert_int_equal(l->heaps[i].log2_segment, 7);
	}
	assert_int_equal(l->heap_memory_high, s->heap_memory + 24);
	assert_int_equal(l->heap_segmap_high, s->heap_segmap + 24);
	assert_int_equal(l->block_used, s->used);
	assert_int_equal(l->block_size, s->block_size);
	assert_int_equal(l->method_const, 8);
	/* The optional parts the descriptions list: no method check, no locks. */
	assert_int_equal(l->flags & ~(JBPF_HOTSPOT_ENTRY | JBPF_HOTSPOT_ENTRY_OFFSET), 0);
	assert_int_equal(l->start_ticks, 0);
}

static void jdk17_layout(void **state)
{
	struct fixture f;
	struct jbpf_hotspot_jvm l;
	char err[160] = "";

	fixture_init(&f, &jdk17);
	if (hotspot_layout__read(f.vm, &f.mem, &l, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_common(&l, &jdk17);
	assert_int_equal(l.blob_size, 12);
	assert_int_equal(l.blob_frame_size, 28);
	assert_int_equal(l.blob_frame_complete, 20);
	assert_int_equal(l.frame_complete_width, 4);
	assert_int_equal(l.blob_code, 32);
	assert_int_equal(l.code_is_offset, 0);
	assert_int_equal(l.by_kind, 0);
	assert_int_equal(l.blob_name, 96);
	assert_int_equal(l.nm_method, 112);
	assert_int_equal(l.nm_compile_id, 304);
	assert_int_equal(l.nm_header, 308);
	assert_int_equal(l.nm_verified_entry, 224);
	assert_int_equal(l.flags & (JBPF_HOTSPOT_ENTRY | JBPF_HOTSPOT_ENTRY_OFFSET), JBPF_HOTSPOT_ENTRY);
	assert_int_equal(l.const_code_size, 32);
	assert_int_equal(l.const_size, 48);
	/* The statics, the heaps' array and elements, one read per heap, the interpreter. */
	assert_true(f.mem.reads <= 16);
	fixture_free(&f);
}

static void jdk25_layout(void **state)
{
	struct fixture f;
	struct jbpf_hotspot_jvm l;
	char err[160] = "";

	fixture_init(&f, &jdk25);
	if (hotspot_layout__read(f.vm, &f.mem, &l, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_common(&l, &jdk25);
	assert_int_equal(l.blob_size, 24);
	assert_int_equal(l.blob_frame_size, 44);
	assert_int_equal(l.blob_frame_complete, 54);
	assert_int_equal(l.frame_complete_width, 2);
	assert_int_equal(l.blob_code, 36);
	assert_int_equal(l.code_is_offset, 1);
	assert_int_equal(l.by_kind, 1);
	assert_int_equal(l.kind_nmethod, 1);
	assert_int_equal(l.blob_kind, 56);
	assert_int_equal(l.blob_name, 8);
	assert_int_equal(l.nm_method, 80);
	assert_int_equal(l.nm_compile_id, 212);
	assert_int_equal(l.nm_header, 216);
	assert_int_equal(l.nm_verified_entry, 154);
	assert_int_equal(l.flags & (JBPF_HOTSPOT_ENTRY | JBPF_HOTSPOT_ENTRY_OFFSET),
			 JBPF_HOTSPOT_ENTRY | JBPF_HOTSPOT_ENTRY_OFFSET);
	assert_int_equal(l.const_code_size, 34);
	assert_int_equal(l.const_size, 56);
	assert_true(f.mem.reads <= 16);
	fixture_free(&f);
}

/* The layout read fails with rc (-1, or HOTSPOT_LAYOUT_STARTING) and reason in its why. */
static void assert_read_fails(struct fixture *f, int rc, const char *reason)
{
	struct jbpf_hotspot_jvm l;
	char err[160] = "";

	assert_int_equal(hotspot_layout__read(f->vm, &f->mem, &l, err, sizeof(err)), rc);
	if (!strstr(err, reason))
		fail_msg("refused for \"%s\", not \"%s\"", err, reason);
	assert_true(f->mem.reads <= 16);
	fixture_free(f);
}

static void assert_refused(struct fixture *f, const char *reason)
{
	assert_read_fails(f, -1, reason);
}

static void hundred_code_heaps_are_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	fake_put32(f.array, 100);
	assert_refused(&f, "100 code heaps, not 1..4");
	/* None yet: a JVM still starting, to be read again later. */
	fixture_init(&f, &jdk25);
	fake_put32(f.array, 0);
	assert_read_fails(&f, HOTSPOT_LAYOUT_STARTING, "the code heaps is not set yet");
}

static void segments_of_2_to_the_40_are_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk17);
	fill_heap(&f, 1, 40);
	assert_refused(&f, "code heap 1 has segments of 2^40 bytes, not 2^4..2^16");
}

static void heap_outside_the_code_cache_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	fake_put64(f.heaps + 0x400 * 2 + jdk25.heap_memory + 24, CODE_HIGH + 0x1000);
	assert_refused(&f, "code heap 2 [0x9000000, 0xa001000) is not inside the code cache");
	/* Two heaps over the same memory. */
	fixture_init(&f, &jdk25);
	fake_put64(f.data + 8, HEAP_OBJECT(0));
	assert_refused(&f, "code heaps 0 and 1 overlap");
}

static void unreadable_heap_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk17);
	fake_put64(f.data + 16, 0xdead0000ull);
	assert_refused(&f, "code heap 2 is unreadable at 0xdead0000");
}

/* Values a starting JVM has not set yet: told apart from a layout not understood. */
static void jvm_still_starting_is_told_apart(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	fake_put64(f.statics + 0x08, 0);
	assert_read_fails(&f, HOTSPOT_LAYOUT_STARTING, "the code cache is not set yet");
	fixture_init(&f, &jdk17);
	fake_put64(f.statics + 0x08, CODE_LOW - 0x1000);
	assert_refused(&f, "the code cache [0x7000000, 0x6fff000) is not a code cache");
}

static void interpreter_outside_the_code_cache_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	fake_put32(f.queue + 20, 0x7fffffff);
	assert_refused(&f, "the interpreter's code is 2147483647 bytes");
	fixture_init(&f, &jdk25);
	fake_put32(f.queue + 20, 0xfffffff0u);
	assert_refused(&f, "the interpreter's code is -16 bytes");
	fixture_init(&f, &jdk17);
	fake_put64(f.queue + 8, CODE_HIGH - 0x100);
	assert_refused(&f, "the interpreter [0x9ffff00, +131072) is not inside the code cache");
}

static void call_stub_outside_the_code_cache_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	fake_put64(f.statics + 0x20, CODE_HIGH + 0x40);
	assert_refused(&f, "the call stub's return address 0xa000040 is not inside the code cache");
	/* Not set yet: a JVM still starting. */
	fixture_init(&f, &jdk25);
	fake_put64(f.statics + 0x20, 0);
	assert_read_fails(&f, HOTSPOT_LAYOUT_STARTING, "the call stub is not set yet");
}

static void offset_past_16_bits_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk25);
	hotspot_vm__free(f.vm);
	f.vm = hotspot_vm__new();
	common_description(&f);
	/* A description that lists nmethod's fields late and large: found first, so the first wins. */
	type(&f, "nmethod", 100000);
	field(&f, "nmethod", "_compile_id", "int", 70000);
	jdk25_description(&f);
	assert_refused(&f, "nmethod::_compile_id (70000) does not fit 16 bits");
}

static void field_past_its_type_is_refused(void **state)
{
	struct fixture f;

	fixture_init(&f, &jdk17);
	hotspot_vm__free(f.vm);
	f.vm = hotspot_vm__new();
	common_description(&f);
	type(&f, "nmethod", 300); /* _compile_id ends at 308 */
	jdk17_description(&f);
	assert_refused(&f, "a field of nmethod ends at byte 308, past its 300 bytes");
}

static void missing_or_misfit_field_is_refused(void **state)
{
	struct fixture f;

	/* JDK 25's kind constant without the field it is compared with. */
	fixture_init(&f, &jdk17);
	assert_int_equal(hotspot_vm__add_int(f.vm, "CodeBlobKind::Nmethod", 1), 0);
	assert_refused(&f, "VMStructs lists no CodeBlob::_kind");
	/* _frame_complete_offset as a type of 8 bytes. */
	fixture_init(&f, &jdk25);
	hotspot_vm__free(f.vm);
	f.vm = hotspot_vm__new();
	type(&f, "long", 8);
	field(&f, "CodeBlob", "_frame_complete_offset", "long", 54);
	common_description(&f);
	jdk25_description(&f);
	assert_refused(&f, "CodeBlob::_frame_complete_offset is 8 bytes");
	/* Fields whose type has no size listed: what the walker would read is not known. */
	fixture_init(&f, &jdk25);
	hotspot_vm__free(f.vm);
	f.vm = hotspot_vm__new();
	jdk25_description(&f);
	assert_refused(&f, "CodeBlob::_size is 0 bytes");
	/* The interpreter's queue not yet there (a JVM still starting). */
	fixture_init(&f, &jdk17);
	fake_put64(f.statics + 0x18, 0);
	assert_read_fails(&f, HOTSPOT_LAYOUT_STARTING, "the interpreter's StubQueue is not set yet");
}

/* A verified entry of a size not its own, or past the nmethod, is left out; the rest of the layout is read. */
static void misfit_verified_entry_is_left_out(void **state)
{
	static const struct {
		const struct shape *jdk;
		const char *name, *type;
		uint64_t offset;
	} misfits[] = {
		{ &jdk25, "_verified_entry_offset", "address", 154 }, /* JDK 25's offset as 8 bytes */
		{ &jdk17, "_verified_entry_point", "u2", 224 },	      /* JDK 17's address as 2 bytes */
		{ &jdk17, "_verified_entry_point", "address", 348 },  /* ending past the 352-byte nmethod */
	};
	struct jbpf_hotspot_jvm l;
	struct fixture f;
	char err[160] = "";

	(void)state;
	for (size_t i = 0; i < sizeof(misfits) / sizeof(misfits[0]); i++) {
		fixture_init(&f, misfits[i].jdk);
		hotspot_vm__free(f.vm);
		f.vm = hotspot_vm__new();
		common_description(&f);
		/* Listed first, so it is the one found. */
		field(&f, "nmethod", misfits[i].name, misfits[i].type, misfits[i].offset);
		if (misfits[i].jdk == &jdk25)
			jdk25_description(&f);
		else
			jdk17_description(&f);
		if (hotspot_layout__read(f.vm, &f.mem, &l, err, sizeof(err)))
			fail_msg("refused: %s", err);
		assert_int_equal(l.flags & (JBPF_HOTSPOT_ENTRY | JBPF_HOTSPOT_ENTRY_OFFSET), 0);
		assert_int_equal(l.nm_compile_id, misfits[i].jdk == &jdk25 ? 212 : 304);
		fixture_free(&f);
	}
}

/* JDK 25's continuations: JavaThread::_cont_entry and the value of ContinuationEntry::_return_pc, in the code cache. */
static void continuations_read_when_listed(void **state)
{
	static const struct {
		uint64_t return_pc;
		bool known;
	} cases[] = {
		{ 0x9000800ull, true },	 /* in the code cache */
		{ 0, false },		 /* enterSpecial's code not made yet */
		{ 0x1000ull, false },	 /* outside the code cache */
	};
	struct jbpf_hotspot_jvm l;
	struct fixture f;
	char err[160] = "";

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_init(&f, &jdk25);
		type(&f, "JavaThread", 2048);
		field(&f, "JavaThread", "_cont_entry", "address", 1560);
		assert_int_equal(hotspot_vm__add_field(f.vm, "ContinuationEntry", "_return_pc", "address", true, 0,
						      STATICS + 0x28),
				 0);
		fake_put64(f.statics + 0x28, cases[i].return_pc);
		if (hotspot_layout__read(f.vm, &f.mem, &l, err, sizeof(err)))
			fail_msg("refused: %s", err);
		assert_int_equal(!!(l.flags & JBPF_HOTSPOT_CONTINUATIONS), cases[i].known);
		if (cases[i].known) {
			assert_true(l.cont_return_pc == cases[i].return_pc);
			assert_int_equal(l.thread_cont_entry, 1560);
		}
		fixture_free(&f);
	}
	/* Not listed (JDK 17): nothing, and the rest of the layout read. */
	fixture_init(&f, &jdk17);
	if (hotspot_layout__read(f.vm, &f.mem, &l, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_int_equal(l.flags & JBPF_HOTSPOT_CONTINUATIONS, 0);
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jdk17_layout),
		cmocka_unit_test(jdk25_layout),
		cmocka_unit_test(hundred_code_heaps_are_refused),
		cmocka_unit_test(segments_of_2_to_the_40_are_refused),
		cmocka_unit_test(heap_outside_the_code_cache_is_refused),
		cmocka_unit_test(unreadable_heap_is_refused),
		cmocka_unit_test(jvm_still_starting_is_told_apart),
		cmocka_unit_test(interpreter_outside_the_code_cache_is_refused),
		cmocka_unit_test(call_stub_outside_the_code_cache_is_refused),
		cmocka_unit_test(offset_past_16_bits_is_refused),
		cmocka_unit_test(field_past_its_type_is_refused),
		cmocka_unit_test(missing_or_misfit_field_is_refused),
		cmocka_unit_test(misfit_verified_entry_is_left_out),
		cmocka_unit_test(continuations_read_when_listed),
	};

	return cmocka_run_group_tests_name("hotspot_layout", tests, NULL, NULL);
}
