/*
 * hotspot_classes: a class the VM knows by name, an instance field's
 * offset from the class's FieldInfo stream, and a boolean -XX flag, read
 * from a memory image laid out as JDK 25's (hotspot/classes.c). The field
 * streams are written here with UNSIGNED5 as HotSpot writes them
 * (utilities/unsigned5.hpp: one excluded byte, 191 low codes, 64 high);
 * hostile images (a stream that ends early, one of a huge length, flags
 * not known, a flag table of a million entries) are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hotspot/classes.h"
#include "hotspot_fixture.h"

/* Where the image's objects are. */
#define VM_CLASSES 0x10000ull   /* vmClasses::_klasses: 4 entries, then nothing mapped */
#define KLASSES 0x20000ull      /* InstanceKlass i at KLASSES + 0x400 * i */
#define SYMBOLS 0x30000ull      /* 64 bytes each */
#define POOL 0x40000ull         /* the StackChunk class's constant pool */
#define STREAM 0x50000ull       /* its field stream (Array<u1>) */
#define FLAGS 0x60000ull        /* the JVMFlag table */
#define FLAG_VALUES 0x70000ull
#define STATICS 0x80000ull

#define KLASS_NAME 24
#define IK_CONSTANTS 224
#define IK_STREAM 448
#define POOL_SIZE 72
#define POOL_LENGTH 60
#define FLAG_STRIDE 32

enum { SYM_THREAD = 1, SYM_CHUNK, SYM_PARENT, SYM_CHUNK_SIG, SYM_SP, SYM_INT, SYM_BOTTOM, SYM_STATIC, SYM_NR };

static const char *const symbols[SYM_NR] = {
	[SYM_THREAD] = "java/lang/Thread", [SYM_CHUNK] = "jdk/internal/vm/StackChunk", [SYM_PARENT] = "parent",
	[SYM_CHUNK_SIG] = "Ljdk/internal/vm/StackChunk;", [SYM_SP] = "sp", [SYM_INT] = "I",
	[SYM_BOTTOM] = "bottom", [SYM_STATIC] = "INIT",
};

struct image {
	struct hotspot_vm *vm;
	struct fake_memory fm;
	struct hotspot_memory mem;
	unsigned char *stream, *flags, *statics, *values;
	size_t stream_len;
};

/* Appends v to the stream as UNSIGNED5 does. */
static void u5(struct image *im, uint32_t v)
{
	for (int i = 0;; i++) {
		if (v < 191 || i == 4) {
			im->stream[4 + im->stream_len++] = (unsigned char)(v + 1);
			return;
		}
		v -= 191;
		im->stream[4 + im->stream_len++] = (unsigned char)(1 + 191 + v % 64);
		v >>= 6;
	}
}

static void field_record(struct image *im, uint32_t name, uint32_t sig, uint32_t offset, uint32_t access,
			 uint32_t flags)
{
	u5(im, name);
	u5(im, sig);
	u5(im, offset);
	u5(im, access);
	u5(im, flags);
}

static void stream_done(struct image *im)
{
	fake_put32(im->stream, (uint32_t)im->stream_len);
}

/* StackChunk's fields, as JDK 25 lays them out (offsets), with a static field and optional numbers between. */
static void chunk_stream(struct image *im)
{
	im->stream_len = 0;
	u5(im, 4); /* Java fields */
	u5(im, 1); /* injected */
	field_record(im, SYM_STATIC, SYM_INT, 112, 0x0018, 0x01); /* static final, initialised: one more number */
	u5(im, 7);
	field_record(im, SYM_PARENT, SYM_CHUNK_SIG, 12, 0x0002, 0x04); /* generic: one more number */
	u5(im, 300);							/* two bytes */
	field_record(im, SYM_SP, SYM_INT, 20, 0x0002, 0);
	field_record(im, SYM_BOTTOM, SYM_INT, 500, 0x0002, 0x10); /* contended: one more; an offset of two bytes */
	u5(im, 0);
	field_record(im, 1, 1, 24, 0, 0x02); /* injected: its indexes are vmSymbols', not the pool's */
	stream_done(im);
}

static void image_init(struct image *im)
{
	unsigned char *classes, *klasses, *syms, *pool, *values;

	memset(im, 0, sizeof(*im));
	im->vm = hotspot_vm__new();
	assert_non_null(im->vm);
	assert_int_equal(hotspot_vm__add_type(im->vm, "u2", 2), 0);
	assert_int_equal(hotspot_vm__add_type(im->vm, "address", 8), 0);
	assert_int_equal(hotspot_vm__add_type(im->vm, "int", 4), 0);
	assert_int_equal(hotspot_vm__add_type(im->vm, "ConstantPool", POOL_SIZE), 0);
	assert_int_equal(hotspot_vm__add_type(im->vm, "JVMFlag", FLAG_STRIDE), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "vmClasses",
					      "_klasses[static_cast<int>(vmClassID::Object_klass_knum)]",
					      "InstanceKlass*", true, 0, VM_CLASSES),
			 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "Klass", "_name", "address", false, KLASS_NAME, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "Symbol", "_length", "u2", false, 4, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "Symbol", "_body", NULL, false, 6, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "InstanceKlass", "_constants", "address", false, IK_CONSTANTS, 0),
			 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "InstanceKlass", "_fieldinfo_stream", "address", false,
					      IK_STREAM, 0),
			 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "ConstantPool", "_length", "int", false, POOL_LENGTH, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "JVMFlag", "_name", "address", false, 8, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "JVMFlag", "_addr", NULL, false, 16, 0), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "JVMFlag", "flags", "JVMFlag*", true, 0, STATICS), 0);
	assert_int_equal(hotspot_vm__add_field(im->vm, "JVMFlag", "numFlags", "size_t", true, 0, STATICS + 8), 0);

	classes = fake_map(&im->fm, VM_CLASSES, 4 * 8);
	klasses = fake_map(&im->fm, KLASSES, 3 * 0x400);
	syms = fake_map(&im->fm, SYMBOLS, SYM_NR * 64);
	pool = fake_map(&im->fm, POOL, POOL_SIZE + 16 * 8);
	im->stream = fake_map(&im->fm, STREAM, 4096);
	im->flags = fake_map(&im->fm, FLAGS, 4 * FLAG_STRIDE);
	/* A page, as strings are read page by page. */
	values = fake_map(&im->fm, FLAG_VALUES, 4096);
	im->statics = fake_map(&im->fm, STATICS, 16);
	for (int i = 1; i < SYM_NR; i++) {
		fake_put32(syms + 64 * i + 4, (uint32_t)strlen(symbols[i])); /* _length, a u2 at 4 */
		memcpy(syms + 64 * i + 6, symbols[i], strlen(symbols[i]));
		fake_put64(pool + POOL_SIZE + 8 * i, SYMBOLS + 64 * (uint64_t)i);
	}
	fake_put32(pool + POOL_LENGTH, 16);
	/* Entries: none, Thread, StackChunk, none. */
	fake_put64(classes + 8, KLASSES);
	fake_put64(classes + 16, KLASSES + 0x400);
	fake_put64(klasses + KLASS_NAME, SYMBOLS + 64 * SYM_THREAD);
	fake_put64(klasses + 0x400 + KLASS_NAME, SYMBOLS + 64 * SYM_CHUNK);
	fake_put64(klasses + 0x400 + IK_CONSTANTS, POOL);
	fake_put64(klasses + 0x400 + IK_STREAM, STREAM);
	chunk_stream(im);
	/* Flags: UseSerialGC false, UseCompressedOops true, UseZGC false. */
	static const char *const names[] = { "UseSerialGC", "UseCompressedOops", "UseZGC" };
	for (int i = 0; i < 3; i++) {
		memcpy(values + 64 + 32 * i, names[i], strlen(names[i]) + 1);
		fake_put64(im->flags + FLAG_STRIDE * i + 8, FLAG_VALUES + 64 + 32 * (uint64_t)i);
		fake_put64(im->flags + FLAG_STRIDE * i + 16, FLAG_VALUES + (uint64_t)i);
	}
	values[1] = 1;
	im->values = values;
	fake_put64(im->statics, FLAGS);
	fake_put64(im->statics + 8, 3);
	fake_reader(&im->mem, &im->fm);
}

static void image_free(struct image *im)
{
	hotspot_vm__free(im->vm);
	fake_memory_free(&im->fm);
}

static void class_found_by_name(void **state)
{
	struct image im;
	uint64_t klass = 0;
	char err[160] = "";

	(void)state;
	image_init(&im);
	assert_int_equal(hotspot_classes__find(im.vm, &im.mem, "jdk/internal/vm/StackChunk", &klass, err, sizeof(err)), 0);
	assert_true(klass == KLASSES + 0x400);
	assert_int_equal(hotspot_classes__find(im.vm, &im.mem, "java/lang/Thread", &klass, err, sizeof(err)), 0);
	assert_true(klass == KLASSES);
	/* A prefix is not the name. */
	assert_int_equal(hotspot_classes__find(im.vm, &im.mem, "java/lang/Threa", &klass, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "does not know the class java/lang/Threa"));
	image_free(&im);
}

static void instance_fields_found(void **state)
{
	struct image im;
	uint32_t offset = 0;
	char err[160] = "";

	(void)state;
	image_init(&im);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "parent", "Ljdk/internal/vm/StackChunk;",
						&offset, err, sizeof(err)),
			 0);
	assert_int_equal(offset, 12);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "I", &offset, err, sizeof(err)),
			 0);
	assert_int_equal(offset, 20);
	/* After a contended field's group number, an offset of two bytes. */
	assert_int_equal(
		hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "bottom", "I", &offset, err, sizeof(err)), 0);
	assert_int_equal(offset, 500);
	/* A static field is no instance field; a wrong signature finds nothing. */
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "INIT", "I", &offset, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "no instance field I INIT"));
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "J", &offset, err, sizeof(err)),
			 -1);
	image_free(&im);
}

static void hostile_streams_refused(void **state)
{
	struct image im;
	uint32_t offset = 0;
	char err[160] = "";

	(void)state;
	/* Four fields announced, the stream cut in the second. */
	image_init(&im);
	im.stream_len = 0;
	u5(&im, 4);
	u5(&im, 0);
	field_record(&im, SYM_PARENT, SYM_CHUNK_SIG, 12, 0x0002, 0);
	u5(&im, SYM_SP);
	stream_done(&im);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "I", &offset, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "ends early"));
	image_free(&im);
	/* A length of 2^31 - 1 bytes. */
	image_init(&im);
	fake_put32(im.stream, 0x7fffffff);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "I", &offset, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "a field stream of 2147483647 bytes"));
	image_free(&im);
	/* A field flag not known (a later JDK's): what follows cannot be read. */
	image_init(&im);
	im.stream_len = 0;
	u5(&im, 1);
	u5(&im, 0);
	field_record(&im, SYM_SP, SYM_INT, 20, 0x0002, 0x20);
	stream_done(&im);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "I", &offset, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "flags 0x20 not known"));
	image_free(&im);
	/* A name index past the pool: skipped, not read. */
	image_init(&im);
	im.stream_len = 0;
	u5(&im, 1);
	u5(&im, 0);
	field_record(&im, 5000, SYM_INT, 20, 0x0002, 0);
	stream_done(&im);
	assert_int_equal(hotspot_classes__instance_field(im.vm, &im.mem, KLASSES + 0x400, "sp", "I", &offset, err, sizeof(err)),
			 -1);
	image_free(&im);
}

static void flags_read(void **state)
{
	struct image im;
	bool value = false;
	char err[160] = "";

	(void)state;
	image_init(&im);
	assert_int_equal(hotspot_classes__flag_bool(im.vm, &im.mem, "UseCompressedOops", &value, err, sizeof(err)), 0);
	assert_true(value);
	assert_int_equal(hotspot_classes__flag_bool(im.vm, &im.mem, "UseZGC", &value, err, sizeof(err)), 0);
	assert_false(value);
	assert_int_equal(hotspot_classes__flag_bool(im.vm, &im.mem, "UseShenandoahGC", &value, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no flag UseShenandoahGC"));
	/* A table of a million flags is not read. */
	fake_put64(im.statics + 8, 1000000);
	assert_int_equal(hotspot_classes__flag_bool(im.vm, &im.mem, "UseZGC", &value, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "1000000 flags"));
	/* A boolean that is neither 0 nor 1. */
	fake_put64(im.statics + 8, 3);
	im.values[2] = 7; /* UseZGC's value */
	assert_int_equal(hotspot_classes__flag_bool(im.vm, &im.mem, "UseZGC", &value, err, sizeof(err)), -1);
	image_free(&im);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(class_found_by_name),
		cmocka_unit_test(instance_fields_found),
		cmocka_unit_test(hostile_streams_refused),
		cmocka_unit_test(flags_read),
	};

	return cmocka_run_group_tests_name("hotspot_classes", tests, NULL, NULL);
}
