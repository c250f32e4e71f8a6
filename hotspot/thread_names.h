/*
 * thread_names: a Java thread's name, read from the JVM's memory.
 *
 * The name a Java program gives a thread lives in its java.lang.Thread
 * object, not in the kernel (whose comm is the first 15 bytes the JVM
 * copied there at the thread's start, and never follows a rename):
 *
 *   JavaThread::_threadObj   an OopHandle: the address of a slot holding
 *                            the Thread's oop (whole, not compressed)
 *   Thread.name              a String reference (a field of Thread itself on
 *                            JDK 17 and 25: JDK 19's Thread.FieldHolder took
 *                            the priority, daemon and state, not the name)
 *   String.value, .coder     a byte[] of Latin-1 (coder 0) or UTF-16 in the
 *                            machine's order (coder 1; every String with
 *                            -XX:-CompactStrings)
 *
 * The Java fields' offsets come from the classes' own field tables
 * (hotspot/classes.h). References in the heap are compressed oops or whole
 * ones; ZGC's coloured pointers, Shenandoah's forwarded objects and compact
 * object headers are not read (the layout refuses them), nor arrays without
 * compressed class pointers.
 *
 * Everything read is hostile: a Thread being renamed, a String being
 * moved by the collector, or memory that lies. The heap's count of
 * collections and its pause flag (CollectedHeap::_total_collections and
 * _is_gc_active, renamed _is_stw_gc_active after JDK 17: JDK 25 has it)
 * tell a reader whether objects moved while it read. A name is read only when
 * its object's class is String, its coder 0 or 1, its array's length at
 * most HOTSPOT_THREAD_NAME_VALUE_MAX bytes (and even for UTF-16); what it
 * holds becomes UTF-8 with control characters as '?' and a lone surrogate
 * as U+FFFD.
 */
#ifndef JBPF_HOTSPOT_THREAD_NAMES_H
#define JBPF_HOTSPOT_THREAD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

/* The longest String.value read: 1024 Latin-1 characters, 512 UTF-16 units. Longer is refused. */
#define HOTSPOT_THREAD_NAME_VALUE_MAX 1024
/* Room for any name read, as UTF-8 with its NUL (a Latin-1 character takes up to 2 bytes, a UTF-16 unit 3). */
#define HOTSPOT_THREAD_NAME_MAX (2 * HOTSPOT_THREAD_NAME_VALUE_MAX + 1)

/* Where a JVM keeps its threads' names. */
struct hotspot_thread_names__layout {
	uint64_t thread_obj;     /* JavaThread::_threadObj */
	uint32_t thread_name;    /* Thread.name */
	uint32_t string_value;   /* String.value */
	uint32_t string_coder;   /* String.coder */
	uint32_t klass;          /* an object's compressed class pointer */
	uint32_t array_length;   /* an array's length, an int */
	uint32_t array_data;     /* a byte[]'s first byte */
	bool narrow;             /* references in the heap are compressed oops */
	uint8_t shift;           /* their shift */
	uint64_t base;           /* and base */
	uint64_t klass_base;     /* compressed class pointers' base */
	uint32_t klass_shift;    /* and shift */
	uint64_t string_klass;   /* java.lang.String's Klass (a final class) */
	uint64_t heap_collections; /* the heap's count of collections (a u32), 0 when the JVM lists none */
	uint64_t heap_pausing;   /* its flag "a pause is moving objects" (a bool), 0 when the JVM lists none */
};

enum hotspot_thread_name_result {
	HOTSPOT_THREAD_NAME_OK,
	HOTSPOT_THREAD_NAME_NONE,       /* no Thread object, no name, or an empty one: the JVM names it not */
	HOTSPOT_THREAD_NAME_UNREADABLE, /* a read failed */
	HOTSPOT_THREAD_NAME_INVALID,    /* read, but not a name: class, coder or length wrong */
};

/* The layout from vm: 0, or -1 with a one-line reason in err. */
int hotspot_thread_names__layout(const struct hotspot_vm *vm, struct hotspot_memory *mem,
				struct hotspot_thread_names__layout *out, char *err, size_t err_size);

/*
 * The address of java_thread's name String into *string, the cheap part
 * (three reads): a thread whose String is the one its name was read from
 * is not renamed (Strings do not change; a rename stores another one).
 */
enum hotspot_thread_name_result hotspot_thread_names__string(struct hotspot_memory *mem,
							   const struct hotspot_thread_names__layout *l,
							   uint64_t java_thread, uint64_t *string);

/*
 * Whether names read now can be believed: false while a collection's pause
 * moves objects, or when the heap's state is unreadable. *epoch is the
 * heap's count of collections: the same address holds the same String only
 * while it is unchanged (a compacting collection may put another object
 * where a String was). A JVM that lists neither is taken as settled, at
 * epoch 0.
 */
bool hotspot_thread_names__heap_settled(struct hotspot_memory *mem, const struct hotspot_thread_names__layout *l,
					uint32_t *epoch);

/* The String at string as UTF-8 into out (HOTSPOT_THREAD_NAME_MAX bytes); out is "" unless OK. */
enum hotspot_thread_name_result hotspot_thread_names__read(struct hotspot_memory *mem,
							 const struct hotspot_thread_names__layout *l, uint64_t string,
							 char out[HOTSPOT_THREAD_NAME_MAX]);

/*
 * A String's bytes (coder 0: Latin-1, 1: UTF-16 of little-endian units)
 * as UTF-8 into out, the pure part of hotspot_thread_names__read: INVALID
 * for an unknown coder, an odd UTF-16 length or more than
 * HOTSPOT_THREAD_NAME_VALUE_MAX bytes; NONE for no characters.
 */
enum hotspot_thread_name_result hotspot_thread_names__decode(const uint8_t *bytes, size_t len, uint8_t coder,
							   char out[HOTSPOT_THREAD_NAME_MAX]);

#endif /* JBPF_HOTSPOT_THREAD_NAMES_H */
