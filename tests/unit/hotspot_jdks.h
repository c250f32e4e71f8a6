/*
 * hotspot_jdks: JDK 17's and JDK 25's layouts of the structures naming
 * reads (Method, ConstMethod, ConstantPool, Klass, Symbol, PcDesc,
 * CodeBlob, nmethod), with the offsets their x86-64 libjvm.so's VMStructs
 * give, as a struct hotspot_vm made by hand: for the names tests and the
 * names fuzz target, which lay out a memory image to match.
 */
#ifndef JBPF_TESTS_HOTSPOT_JDKS_H
#define JBPF_TESTS_HOTSPOT_JDKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/vmstructs.h"

struct jdk {
	int major;
	bool v25;
	uint32_t method_size, method_access, access_size;
	uint32_t cm_size, cm_flags, cm_flags_size, cm_code_size, cm_name, cm_sig;
	uint32_t klass_size, nm_header;
};

static const struct jdk jdk17 __attribute__((unused)) = { 17, false, 88, 40, 4, 48, 28, 2, 32, 34, 36, 208, 352 };
static const struct jdk jdk25 __attribute__((unused)) = { 25, true, 88, 44, 2, 56, 28, 4, 34, 36, 38, 200, 224 };

struct field_def {
	const char *type, *field, *type_string;
	uint64_t offset;
};

static const struct field_def common_fields[] = {
	{ "Method", "_constMethod", "ConstMethod*", 8 },
	{ "ConstMethod", "_constants", "ConstantPool*", 8 },
	{ "ConstantPool", "_pool_holder", "InstanceKlass*", 24 },
	{ "ConstantPool", "_length", "int", 60 },
	{ "ConstantPool", "_source_file_name_index", "u2", 54 },
	{ "Klass", "_name", "Symbol*", 24 },
	{ "Symbol", "_length", "u2", 4 },
	{ "Symbol", "_body", "?", 6 },
	{ "PcDesc", "_pc_offset", "int", 0 },
	{ "PcDesc", "_scope_decode_offset", "int", 4 },
	{ NULL, NULL, NULL, 0 },
};

static const struct field_def fields17[] = {
	{ "Method", "_access_flags", "AccessFlags", 40 },
	{ "AccessFlags", "_flags", "jint", 0 },
	{ "ConstMethod", "_flags", "u2", 28 },
	{ "ConstMethod", "_code_size", "u2", 32 },
	{ "ConstMethod", "_name_index", "u2", 34 },
	{ "ConstMethod", "_signature_index", "u2", 36 },
	{ "CodeBlob", "_name", "const char*", 96 },
	{ "CodeBlob", "_size", "int", 12 },
	{ "CodeBlob", "_code_begin", "address", 32 },
	{ "CodeBlob", "_code_end", "address", 40 },
	{ "CompiledMethod", "_method", "Method*", 112 },
	{ "CompiledMethod", "_scopes_data_begin", "address", 120 },
	{ "nmethod", "_metadata_offset", "int", 260 },
	{ "nmethod", "_scopes_pcs_offset", "int", 268 },
	{ "nmethod", "_dependencies_offset", "int", 272 },
	{ "nmethod", "_compile_id", "int", 304 },
	{ "nmethod", "_comp_level", "int", 308 },
	{ NULL, NULL, NULL, 0 },
};

static const struct field_def fields25[] = {
	{ "Method", "_access_flags", "AccessFlags", 44 },
	{ "AccessFlags", "_flags", "u2", 0 },
	{ "ConstMethod", "_flags._flags", "u4", 28 },
	{ "ConstMethod", "_code_size", "u2", 34 },
	{ "ConstMethod", "_name_index", "u2", 36 },
	{ "ConstMethod", "_signature_index", "u2", 38 },
	{ "CodeBlob", "_name", "const char*", 8 },
	{ "CodeBlob", "_mutable_data", "address", 16 },
	{ "CodeBlob", "_size", "int", 24 },
	{ "CodeBlob", "_relocation_size", "int", 28 },
	{ "CodeBlob", "_code_offset", "int", 36 },
	{ "CodeBlob", "_data_offset", "int", 40 },
	{ "CodeBlob", "_mutable_data_size", "int", 48 },
	{ "nmethod", "_method", "Method*", 80 },
	{ "nmethod", "_immutable_data", "address", 96 },
	{ "nmethod", "_immutable_data_size", "int", 160 },
	{ "nmethod", "_scopes_pcs_offset", "int", 196 },
	{ "nmethod", "_scopes_data_offset", "int", 200 },
	{ "nmethod", "_compile_id", "int", 212 },
	{ "nmethod", "_comp_level", "CompLevel", 216 },
	{ NULL, NULL, NULL, 0 },
};

static inline bool add_fields(struct hotspot_vm *vm, const struct field_def *f)
{
	for (; f->type; f++)
		if (hotspot_vm__add_field(vm, f->type, f->field, f->type_string, false, f->offset, 0))
			return false;
	return true;
}

/* What JDK j's libjvm.so says of the structures named here; its major version is read at version_addr. NULL on failure. */
static inline struct hotspot_vm *jdk_describe(const struct jdk *j, uint64_t version_addr)
{
	struct hotspot_vm *vm = hotspot_vm__new();
	static const char *const sized[] = { "int", "jint", "u1", "u2", "u4", "address" };
	static const uint64_t sizes[] = { 4, 4, 1, 2, 4, 8 };
	int err = 0;

	if (!vm)
		return NULL;
	if (!add_fields(vm, common_fields) || !add_fields(vm, j->v25 ? fields25 : fields17))
		err = -1;
	err |= hotspot_vm__add_field(vm, "Abstract_VM_Version", "_vm_major_version", "int", true, 0, version_addr);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		err |= hotspot_vm__add_type(vm, sized[i], sizes[i]);
	err |= hotspot_vm__add_type(vm, "Method", j->method_size);
	err |= hotspot_vm__add_type(vm, "ConstMethod", j->cm_size);
	err |= hotspot_vm__add_type(vm, "ConstantPool", 72);
	err |= hotspot_vm__add_type(vm, "Klass", j->klass_size);
	err |= hotspot_vm__add_type(vm, "Symbol", 8);
	err |= hotspot_vm__add_type(vm, "PcDesc", 16);
	err |= hotspot_vm__add_type(vm, "AccessFlags", j->access_size);
	err |= hotspot_vm__add_type(vm, "nmethod", j->nm_header);
	err |= hotspot_vm__add_type(vm, "CodeBlob", j->v25 ? 64 : 104);
	if (j->v25) {
		err |= hotspot_vm__add_type(vm, "CompLevel", 1);
		err |= hotspot_vm__add_int(vm, "ConstMethodFlags::_misc_has_linenumber_table", 1);
	} else {
		err |= hotspot_vm__add_type(vm, "CompiledMethod", 192);
		err |= hotspot_vm__add_int(vm, "ConstMethod::_has_linenumber_table", 1);
	}
	err |= hotspot_vm__add_int(vm, "InvocationEntryBci", -1);
	err |= hotspot_vm__add_int(vm, "CompLevel_simple", 1);
	err |= hotspot_vm__add_int(vm, "CompLevel_full_profile", 3);
	err |= hotspot_vm__add_int(vm, "CompLevel_full_optimization", 4);
	if (err) {
		hotspot_vm__free(vm);
		return NULL;
	}
	return vm;
}

#endif /* JBPF_TESTS_HOTSPOT_JDKS_H */
