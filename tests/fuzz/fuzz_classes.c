/*
 * What hotspot/classes.c reads of a JVM's memory for virtual threads: a
 * class by name among vmClasses, an instance field's offset from the
 * class's FieldInfo stream and constant pool, a boolean flag from the
 * JVMFlag table, all over a memory image that is the input.
 *
 * Input: a byte choosing the call (0: the class, 1: the field, 2: the
 * flag), then the image, mapped at CLASSES_IMAGE. The VM's description is
 * fixed (JDK 25's offsets, as tests/unit/test_hotspot_classes.c lays them
 * out): vmClasses::_klasses at +0, JVMFlag::flags and numFlags at +0xf00,
 * and the class the field is looked up in at +0x100. Everything else, the
 * pointers included, comes from the input.
 */
#include "fuzz.h"

#include "hotspot/classes.h"
#include "../unit/hotspot_fixture.h"

#define CLASSES_IMAGE 0x10000000ull

static struct hotspot_vm *vm;

static struct hotspot_vm *describe(void)
{
	struct hotspot_vm *v = hotspot_vm__new();
	int err = 0;

	if (!v)
		abort();
	err |= hotspot_vm__add_type(v, "u2", 2) | hotspot_vm__add_type(v, "address", 8) |
	       hotspot_vm__add_type(v, "int", 4) | hotspot_vm__add_type(v, "ConstantPool", 72) |
	       hotspot_vm__add_type(v, "JVMFlag", 32);
	err |= hotspot_vm__add_field(v, "vmClasses", "_klasses[static_cast<int>(vmClassID::Object_klass_knum)]",
				    "InstanceKlass*", true, 0, CLASSES_IMAGE);
	err |= hotspot_vm__add_field(v, "Klass", "_name", "address", false, 24, 0);
	err |= hotspot_vm__add_field(v, "Symbol", "_length", "u2", false, 4, 0);
	err |= hotspot_vm__add_field(v, "Symbol", "_body", NULL, false, 6, 0);
	err |= hotspot_vm__add_field(v, "InstanceKlass", "_constants", "address", false, 224, 0);
	err |= hotspot_vm__add_field(v, "InstanceKlass", "_fieldinfo_stream", "address", false, 448, 0);
	err |= hotspot_vm__add_field(v, "ConstantPool", "_length", "int", false, 60, 0);
	err |= hotspot_vm__add_field(v, "JVMFlag", "_name", "address", false, 8, 0);
	err |= hotspot_vm__add_field(v, "JVMFlag", "_addr", NULL, false, 16, 0);
	err |= hotspot_vm__add_field(v, "JVMFlag", "flags", "JVMFlag*", true, 0, CLASSES_IMAGE + 0xf00);
	err |= hotspot_vm__add_field(v, "JVMFlag", "numFlags", "size_t", true, 0, CLASSES_IMAGE + 0xf08);
	if (err)
		abort();
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	unsigned char *image;
	uint64_t klass;
	uint32_t offset;
	bool value;
	char err[256];

	if (size < 2)
		return 0;
	if (!vm)
		vm = describe();
	image = fake_map(&fm, CLASSES_IMAGE, size - 1);
	memcpy(image, data + 1, size - 1);
	fake_reader(&mem, &fm);
	switch (data[0] % 3) {
	case 0:
		hotspot_classes__find(vm, &mem, "jdk/internal/vm/StackChunk", &klass, err, sizeof(err));
		break;
	case 1:
		hotspot_classes__instance_field(vm, &mem, CLASSES_IMAGE + 0x100, "sp", "I", &offset, err, sizeof(err));
		break;
	default:
		hotspot_classes__flag_bool(vm, &mem, "UseCompressedOops", &value, err, sizeof(err));
		break;
	}
	fake_memory_free(&fm);
	return 0;
}
