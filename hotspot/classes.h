/*
 * classes: what a JVM says of a few Java classes and flags, read from its
 * memory by its VMStructs, for the walk of virtual threads: the VM keeps a
 * virtual thread's frozen frames in Java objects (VirtualThread.cont,
 * Continuation.tail, a StackChunk), whose fields no VMStructs entry lists.
 *
 *  - a class the VM knows by name (vmClasses::_klasses, the array whose
 *    entries VMStructs lists a few of: it is scanned whole, each Klass's
 *    name read and compared);
 *  - the offset of an instance field in that class's objects, by name and
 *    signature, from its FieldInfo stream (InstanceKlass::_fieldinfo_stream,
 *    JDK 21 and later: UNSIGNED5 numbers, the Java fields' counts first,
 *    then per field its name and signature indexes in the constant pool,
 *    offset, access flags, field flags and the optional numbers those flags
 *    announce);
 *  - a boolean -XX flag (JVMFlag::flags, JVMFlag::numFlags entries).
 *
 * Everything read is the JVM's and hostile: every count and size is
 * bounded before it is used, a string read is cut, and a value that is not
 * what it must be refuses the call. Each returns 0, or -1 with a one-line
 * reason in err.
 */
#ifndef JBPF_HOTSPOT_CLASSES_H
#define JBPF_HOTSPOT_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

/* Entries of vmClasses::_klasses looked at: the VM has some 200. */
#define HOTSPOT_VM_CLASSES_MAX 512
/* The longest FieldInfo stream read: a class of a few thousand fields. */
#define HOTSPOT_FIELD_STREAM_MAX (64u << 10)
/* The most -XX flags a JVM may list. */
#define HOTSPOT_FLAGS_MAX 8192

/* The Klass * of the VM's class named name ("jdk/internal/vm/StackChunk") into *klass. */
int hotspot_classes__find(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, uint64_t *klass,
		     char *err, size_t err_size);

/* The offset of klass's instance field name of signature ("I", "Ljava/lang/Object;") into *offset. */
int hotspot_classes__instance_field(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, const char *name,
			   const char *signature, uint32_t *offset, char *err, size_t err_size);

/* The value of the boolean flag name ("UseCompressedOops") into *value. */
int hotspot_classes__flag_bool(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, bool *value,
		      char *err, size_t err_size);

#endif /* JBPF_HOTSPOT_CLASSES_H */
