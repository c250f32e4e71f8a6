/*
 * vmstructs: HotSpot's description of itself, read from a JVM's memory.
 *
 * libjvm.so exports the tables HotSpot's serviceability agent reads
 * (src/hotspot/share/runtime/vmStructs.cpp):
 *
 *   gHotSpotVMStructs        VMStructEntry[]: {typeName, fieldName, typeString,
 *                            isStatic, offset, address}, ended by a NULL typeName
 *   gHotSpotVMTypes          VMTypeEntry[]: {typeName, superclassName, isOopType,
 *                            isIntegerType, isUnsigned, size}
 *   gHotSpotVMIntConstants   {name, value (int32)}
 *   gHotSpotVMLongConstants  {name, value (int64)}
 *
 * with, for each, exported variables giving the entry stride and each
 * member's offset in an entry (gHotSpotVMStructEntryTypeNameOffset, ...).
 * The symbols' addresses come from libjvm's symbol table plus its load
 * bias (hotspot/find.c); everything else is read from the process.
 *
 * Everything read is hostile: entry counts, strides, offsets and strings
 * are bounded (HOTSPOT_VM_MAX_*), and a table that breaks a bound is
 * refused with one line saying why. The result is a plain copy, owned by
 * the caller, with no pointer into the target: a lookup reads nothing.
 */
#ifndef JBPF_HOTSPOT_VMSTRUCTS_H
#define JBPF_HOTSPOT_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"

/* Bounds on what a JVM may describe; JDK 17 and 25 have a few thousand entries of each. */
#define HOTSPOT_VM_MAX_ENTRIES 16384
#define HOTSPOT_VM_MAX_NAME 128
#define HOTSPOT_VM_MAX_STRIDE 256

/* The exported symbols' addresses in the target (0: not found). */
struct hotspot_vm_symbols {
	uint64_t structs, struct_stride, struct_type_name, struct_field_name, struct_type_string,
		struct_is_static, struct_offset, struct_address;
	uint64_t types, type_stride, type_type_name, type_superclass_name, type_size;
	uint64_t int_constants, int_stride, int_name, int_value;
	uint64_t long_constants, long_stride, long_name, long_value;
};

struct hotspot_vm;

/*
 * What hotspot_vm__read returns for a libjvm mapped but not initialised
 * yet: a table's address or stride still 0, as in the file, before the
 * loader's relocations or libjvm's own initialisers have run (a JVM a few
 * milliseconds after its exec). Asked again later, it reads.
 */
#define HOTSPOT_VM_STARTING (-2)

/*
 * Reads the tables through mem into *out: 0, or -1 with a one-line reason
 * in err (what is missing or out of bounds), or HOTSPOT_VM_STARTING with
 * what is not set yet.
 */
int hotspot_vm__read(struct hotspot_memory *mem, const struct hotspot_vm_symbols *syms, struct hotspot_vm **out,
		    char *err, size_t err_size);

/* An empty description, filled by hotspot_vm_add_* (tests and fuzzers build one so). NULL when out of memory. */
struct hotspot_vm *hotspot_vm__new(void);
int hotspot_vm__add_field(struct hotspot_vm *vm, const char *type, const char *field, const char *type_string,
			 bool is_static, uint64_t offset, uint64_t address);
int hotspot_vm__add_type(struct hotspot_vm *vm, const char *type, uint64_t size);
int hotspot_vm__add_int(struct hotspot_vm *vm, const char *name, int32_t value);
int hotspot_vm__add_long(struct hotspot_vm *vm, const char *name, int64_t value);

void hotspot_vm__free(struct hotspot_vm *vm);

/*
 * Look-ups: false (or 0) when HotSpot does not list the item.
 * field: the non-static field type::name, its offset, and its type's size
 * (from typeString and the types table; 0 when unknown).
 */
bool hotspot_vm__field(const struct hotspot_vm *vm, const char *type, const char *name, uint64_t *offset,
		      uint64_t *size);
/* The address of the static field type::name. */
bool hotspot_vm__static(const struct hotspot_vm *vm, const char *type, const char *name, uint64_t *address);
/* sizeof(type) as HotSpot gives it, 0 when it lists none. */
uint64_t hotspot_vm__type_size(const struct hotspot_vm *vm, const char *type);
bool hotspot_vm__int(const struct hotspot_vm *vm, const char *name, int32_t *value);
bool hotspot_vm__long(const struct hotspot_vm *vm, const char *name, int64_t *value);

#endif /* JBPF_HOTSPOT_VMSTRUCTS_H */
