/*
 * hotspot vmstructs: a fake libjvm's tables read back from a fake memory,
 * look-ups, the builders, and hostile tables (no end, a stride too large,
 * members outside the stride, names with no NUL, memory that ends
 * mid-table, names scattered a read apart, a missing symbol), each refused
 * with a reason after a bounded number of reads; a table not set yet (a
 * stride or address of 0) is a JVM still starting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hotspot/vmstructs.h"
#include "hotspot_fixture.h"

/* Reads the fake JVM's tables: hotspot_vm__read's result, *vm set on success, the reason in err. */
static int read_fake(struct fake_jvm *fj, struct hotspot_memory *mem, struct hotspot_vm **vm, char *err,
		     size_t err_size)
{
	err[0] = '\0';
	fake_reader(mem, &fj->fm);
	return hotspot_vm__read(mem, &fj->syms, vm, err, err_size);
}

/* A small but real-looking description: fields of every kind, types, constants. */
static void fill_small(struct fake_jvm *fj)
{
	fake_struct(fj, "CodeBlob", "_size", "int", 0, 24, 0);
	fake_struct(fj, "CodeBlob", "_name", "const char*", 0, 8, 0);
	fake_struct(fj, "CodeBlob", "_unknown", "Mystery", 0, 60, 0);
	fake_struct(fj, "nmethod", "_unchecked", NULL, 0, 100, 0);
	fake_struct(fj, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, 0x7f0012345678ull);
	fake_type(fj, "int", 4);
	fake_type(fj, "CodeBlob", 64);
	fake_int(fj, "CodeBlobKind::Nmethod", 1);
	fake_int(fj, "negative", -5);
	fake_long(fj, "big", 0x123456789abcdefll);
}

static void fake_table_reads_back(void **state)
{
	struct fake_jvm fj;
	struct hotspot_memory mem;
	struct hotspot_vm *vm = NULL;
	char err[160];
	uint64_t offset, size, address;
	int32_t i32;
	int64_t i64;

	fake_jvm_init(&fj);
	fill_small(&fj);
	assert_int_equal(read_fake(&fj, &mem, &vm, err, sizeof(err)), 0);
	assert_non_null(vm);

	assert_true(hotspot_vm__field(vm, "CodeBlob", "_size", &offset, &size));
	assert_int_equal(offset, 24);
	assert_int_equal(size, 4);
	assert_true(hotspot_vm__field(vm, "CodeBlob", "_name", &offset, &size));
	assert_int_equal(offset, 8);
	assert_int_equal(size, 8); /* a pointer */
	assert_true(hotspot_vm__field(vm, "CodeBlob", "_unknown", &offset, &size));
	assert_int_equal(size, 0); /* its type is not listed */
	assert_true(hotspot_vm__field(vm, "nmethod", "_unchecked", &offset, &size));
	assert_int_equal(offset, 100);
	assert_int_equal(size, 0); /* no type string */
	assert_false(hotspot_vm__field(vm, "CodeBlob", "_absent", &offset, &size));
	/* A static field is not a field of the object, nor the other way round. */
	assert_false(hotspot_vm__field(vm, "CodeCache", "_heaps", &offset, &size));
	assert_false(hotspot_vm__static(vm, "CodeBlob", "_size", &address));
	assert_true(hotspot_vm__static(vm, "CodeCache", "_heaps", &address));
	assert_true(address == 0x7f0012345678ull);

	assert_int_equal(hotspot_vm__type_size(vm, "CodeBlob"), 64);
	assert_int_equal(hotspot_vm__type_size(vm, "nmethod"), 0);
	assert_true(hotspot_vm__int(vm, "CodeBlobKind::Nmethod", &i32));
	assert_int_equal(i32, 1);
	assert_true(hotspot_vm__int(vm, "negative", &i32));
	assert_int_equal(i32, -5);
	assert_false(hotspot_vm__int(vm, "big", &i32));
	assert_true(hotspot_vm__long(vm, "big", &i64));
	assert_true(i64 == 0x123456789abcdefll);
	hotspot_vm__free(vm);
	fake_memory_free(&fj.fm);
}

/* Thousands of entries cost a few reads: the array and the names are read in large chunks. */
static void large_table_takes_few_reads(void **state)
{
	struct fake_jvm fj;
	struct hotspot_memory mem;
	struct hotspot_vm *vm = NULL;
	char err[160], field[32];
	uint64_t offset, size;

	fake_jvm_init(&fj);
	for (int i = 0; i < 3000; i++) {
		snprintf(field, sizeof(field), "_field%d", i);
		fake_struct(&fj, i % 2 ? "Odd" : "Even", field, "int", 0, (uint64_t)i, 0);
	}
	fake_type(&fj, "int", 4);
	assert_int_equal(read_fake(&fj, &mem, &vm, err, sizeof(err)), 0);
	assert_true(hotspot_vm__field(vm, "Odd", "_field2999", &offset, &size));
	assert_int_equal(offset, 2999);
	assert_int_equal(size, 4);
	/* 3000 * 48 bytes of entries in 64 KiB reads, ~60 KiB of names in one or two windows, and the headers. */
	assert_true(mem.reads < 40);
	hotspot_vm__free(vm);
	fake_memory_free(&fj.fm);
}

/* Builders make the same description a read does, for tests of what uses one. */
static void builders_make_a_description(void **state)
{
	struct hotspot_vm *vm = hotspot_vm__new();
	char long_name[HOTSPOT_VM_MAX_NAME + 1];
	uint64_t offset, size;
	int32_t v;

	assert_non_null(vm);
	assert_int_equal(hotspot_vm__add_field(vm, "Method", "_constMethod", "ConstMethod*", false, 8, 0), 0);
	assert_int_equal(hotspot_vm__add_field(vm, "X", "_n", "u2", false, 2, 0), 0);
	assert_int_equal(hotspot_vm__add_type(vm, "u2", 2), 0);
	assert_int_equal(hotspot_vm__add_int(vm, "k", 7), 0);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_int_equal(hotspot_vm__add_type(vm, long_name, 1), -1);
	assert_true(hotspot_vm__field(vm, "Method", "_constMethod", &offset, &size));
	assert_int_equal(size, 8);
	assert_true(hotspot_vm__field(vm, "X", "_n", &offset, &size));
	assert_int_equal(size, 2);
	assert_true(hotspot_vm__int(vm, "k", &v));
	assert_int_equal(v, 7);
	hotspot_vm__free(vm);
	hotspot_vm__free(NULL);
}

/* Bounds every hostile read must keep: a few hundred KiB more than one bound's worth of entries. */
static void assert_bounded(const struct hotspot_memory *mem, uint64_t max_reads)
{
	assert_true(mem->reads <= max_reads);
	assert_true(mem->bytes <= (uint64_t)(HOTSPOT_VM_MAX_ENTRIES + 1) * HOTSPOT_VM_MAX_STRIDE + (4u << 20));
}

static void refused(struct fake_jvm *fj, const char *reason, uint64_t max_reads)
{
	struct hotspot_memory mem;
	struct hotspot_vm *vm = (struct hotspot_vm *)1;
	char err[160];

	assert_int_equal(read_fake(fj, &mem, &vm, err, sizeof(err)), -1);
	assert_null(vm);
	if (!strstr(err, reason))
		fail_msg("refused for \"%s\", not \"%s\"", err, reason);
	assert_bounded(&mem, max_reads);
}

/* A table whose entries never end: refused after the bound, in 64 KiB reads. */
static void endless_table_is_refused(void **state)
{
	struct fake_jvm fj;
	size_t room = (size_t)(HOTSPOT_VM_MAX_ENTRIES + 1000) * 48;
	unsigned char *entries;
	uint64_t name;

	fake_jvm_init(&fj);
	name = fake_string(&fj, "Endless");
	entries = fake_map(&fj.fm, 0x10000000ull, room);
	for (size_t i = 0; i < room / 48; i++) {
		fake_put64(entries + 48 * i, name);
		fake_put64(entries + 48 * i + 8, name);
	}
	fake_symbol(&fj, FS_STRUCTS, 0x10000000ull);
	/* 16385 entries of 48 bytes are 13 reads of 64 KiB; the headers are a few more. */
	refused(&fj, "gHotSpotVMStructs has no end within 16384 entries", 40);
	fake_memory_free(&fj.fm);
}

/*
 * A table's stride or address still 0: libjvm mapped, its initialisers not
 * run yet (a JVM met a few milliseconds after its exec). Not refused for
 * good: HOTSPOT_VM_STARTING, so the JVM is asked again rather than given
 * the agent.
 */
static void unset_table_is_starting(void **state)
{
	enum fake_symbol unset[] = { FS_TYPE_STRIDE, FS_STRUCTS };
	const char *reason[] = { "gHotSpotVMTypeEntryArrayStride is 0: libjvm not", "gHotSpotVMStructs is 0: libjvm not" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct fake_jvm fj;
		struct hotspot_memory mem;
		struct hotspot_vm *vm = (struct hotspot_vm *)1;
		char err[160];

		fake_jvm_init(&fj);
		fill_small(&fj);
		fake_symbol(&fj, unset[i], 0);
		assert_int_equal(read_fake(&fj, &mem, &vm, err, sizeof(err)), HOTSPOT_VM_STARTING);
		assert_null(vm);
		if (!strstr(err, reason[i]))
			fail_msg("starting for \"%s\", not \"%s\"", err, reason[i]);
		assert_bounded(&mem, 20);
		fake_memory_free(&fj.fm);
	}
}

static void huge_stride_is_refused(void **state)
{
	struct fake_jvm fj;

	fake_jvm_init(&fj);
	fill_small(&fj);
	fake_symbol(&fj, FS_STRUCT_STRIDE, 1ull << 40);
	refused(&fj, "gHotSpotVMStructs's stride 1099511627776 is outside 1..256", 20);
	fake_memory_free(&fj.fm);
}

static void member_past_the_stride_is_refused(void **state)
{
	struct fake_jvm fj;

	fake_jvm_init(&fj);
	fill_small(&fj);
	/* The offset member (8 bytes) at 44 of a 48-byte entry: its end lies in the next entry. */
	fake_symbol(&fj, FS_STRUCT_OFFSET, 44);
	refused(&fj, "gHotSpotVMStructEntryOffsetOffset 44 leaves its 8 bytes outside the 48-byte entry", 20);
	fake_symbol(&fj, FS_STRUCT_OFFSET, UINT64_MAX - 2);
	refused(&fj, "gHotSpotVMStructEntryOffsetOffset", 20);
	fake_memory_free(&fj.fm);
}

/* Entries that run into memory not mapped before their end: refused, after a few halvings of the read. */
static void table_cut_by_unmapped_memory_is_refused(void **state)
{
	struct fake_jvm fj;
	unsigned char *entries;
	uint64_t name;

	fake_jvm_init(&fj);
	name = fake_string(&fj, "Cut");
	entries = fake_map(&fj.fm, 0x20000000ull, 10 * 48);
	for (int i = 0; i < 10; i++) {
		fake_put64(entries + 48 * i, name);
		fake_put64(entries + 48 * i + 8, name);
	}
	fake_symbol(&fj, FS_STRUCTS, 0x20000000ull);
	refused(&fj, "gHotSpotVMStructs entry 10 is unreadable", 60);
	fake_memory_free(&fj.fm);
}

/* One name with no NUL within the bound leaves its entry out; the rest is read. */
static void unterminated_name_leaves_its_entry_out(void **state)
{
	struct fake_jvm fj;
	struct hotspot_memory mem;
	struct hotspot_vm *vm = NULL;
	char err[160], junk[3 * HOTSPOT_VM_MAX_NAME];
	uint64_t offset;

	fake_jvm_init(&fj);
	fill_small(&fj);
	memset(junk, 'x', sizeof(junk) - 1);
	junk[sizeof(junk) - 1] = '\0';
	fake_struct(&fj, "Long", junk, "int", 0, 4, 0);
	fake_struct(&fj, "After", "_ok", "int", 0, 12, 0);
	assert_int_equal(read_fake(&fj, &mem, &vm, err, sizeof(err)), 0);
	assert_true(hotspot_vm__field(vm, "After", "_ok", &offset, NULL));
	assert_int_equal(offset, 12);
	assert_false(hotspot_vm__field(vm, "Long", junk, &offset, NULL));
	hotspot_vm__free(vm);
	fake_memory_free(&fj.fm);
}

/* Many names that never end (or cannot be read) refuse the tables, after a bounded number of reads. */
static void many_bad_names_are_refused(void **state)
{
	struct fake_jvm fj;
	unsigned char *junk;

	fake_jvm_init(&fj);
	fill_small(&fj);
	junk = fake_map(&fj.fm, 0x30000000ull, 64 << 10);
	memset(junk, 'y', 64 << 10);
	for (int i = 0; i < 1000; i++) {
		unsigned char *e = fj.structs + 48 * fj.nr_structs++;

		/* Names in memory with no NUL, and names nowhere at all. */
		fake_put64(e, 0x30000000ull + 61 * (uint64_t)i);
		fake_put64(e + 8, 0x50000000ull + 4096 * (uint64_t)i);
	}
	refused(&fj, "more than 64 of VMStructs' names are unreadable or longer than 127 bytes", 300);
	fake_memory_free(&fj.fm);
}

/* Names a window apart each cost a read apiece: refused after a bounded number of them. */
static void scattered_names_are_refused(void **state)
{
	struct fake_jvm fj;
	const uint64_t base = 0x40000000ull, gap = (64u << 10) + 64;
	const int nr = 1200;
	unsigned char *far = NULL;
	struct hotspot_memory mem;
	struct hotspot_vm *vm = NULL;
	char err[160];

	fake_jvm_init(&fj);
	far = fake_map(&fj.fm, base, gap * nr + 64);
	for (int i = 0; i < nr; i++) {
		unsigned char *e = fj.structs + 48 * fj.nr_structs++;

		snprintf((char *)far + gap * i, 16, "T%d", i);
		fake_put64(e, base + gap * (uint64_t)i);
		fake_put64(e + 8, base + gap * (uint64_t)i);
	}
	assert_int_equal(read_fake(&fj, &mem, &vm, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "VMStructs' names are scattered over more than 1024 reads"));
	assert_true(mem.reads < 1100);
	fake_memory_free(&fj.fm);
}

static void missing_symbol_is_refused(void **state)
{
	struct fake_jvm fj;

	fake_jvm_init(&fj);
	fill_small(&fj);
	fj.syms.types = 0;
	refused(&fj, "libjvm exports no gHotSpotVMTypes", 20);
	fj.syms.types = FAKE_SYMBOLS + 8 * FS_TYPES;
	fj.syms.long_value = 0x99990000ull; /* an address nothing maps */
	refused(&fj, "gHotSpotVMLongConstantEntryValueOffset is unreadable at 0x99990000", 40);
	fake_memory_free(&fj.fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fake_table_reads_back),
		cmocka_unit_test(large_table_takes_few_reads),
		cmocka_unit_test(builders_make_a_description),
		cmocka_unit_test(endless_table_is_refused),
		cmocka_unit_test(unset_table_is_starting),
		cmocka_unit_test(huge_stride_is_refused),
		cmocka_unit_test(member_past_the_stride_is_refused),
		cmocka_unit_test(table_cut_by_unmapped_memory_is_refused),
		cmocka_unit_test(unterminated_name_leaves_its_entry_out),
		cmocka_unit_test(many_bad_names_are_refused),
		cmocka_unit_test(scattered_names_are_refused),
		cmocka_unit_test(missing_symbol_is_refused),
	};

	return cmocka_run_group_tests_name("hotspot_vmstructs", tests, NULL, NULL);
}
