/*
 * thread_names: Java threads' names from a JVM's memory (contract in thread_names.h).
 */
#include "hotspot/thread_names.h"

#include <stdio.h>
#include <string.h>

#include "common/refuse.h"
#include "hotspot/classes.h"

#define CODER_LATIN1 0
#define CODER_UTF16 1

/* The word at the static field type::name (the first of the two spellings listed), read from the process. */
static bool static_word(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *type,
			const char *name_a, const char *name_b, size_t size, void *out)
{
	uint64_t addr;

	if (!hotspot_vm__static(vm, type, name_a, &addr) && !hotspot_vm__static(vm, type, name_b, &addr))
		return false;
	return addr && hotspot_memory__read(mem, addr, out, size);
}

/* An instance field's offset, bounded: objects read here are a few words. */
static int java_field(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, const char *name,
		      const char *signature, uint32_t *out, char *err, size_t err_size)
{
	char reason[128];

	if (hotspot_classes__instance_field(vm, mem, klass, name, signature, out, reason, sizeof(reason)))
		return refuse__say(err, err_size, "%s: %s", name, reason);
	if (*out < 8 || *out > 4096)
		return refuse__say(err, err_size, "the field %s at %u", name, *out);
	return 0;
}

/* Where the heap counts its collections and flags a pause: optional, left 0 when not listed. */
static void heap_state(const struct hotspot_vm *vm, struct hotspot_memory *mem,
		       struct hotspot_thread_names__layout *out)
{
	uint64_t heap = 0, collections, pausing, size = 0, flag_size = 0;

	if (!static_word(vm, mem, "Universe", "_collectedHeap", "_collectedHeap", 8, &heap) || !heap)
		return;
	if (!hotspot_vm__field(vm, "CollectedHeap", "_total_collections", &collections, &size) ||
	    (size && size != 4))
		return;
	if ((!hotspot_vm__field(vm, "CollectedHeap", "_is_stw_gc_active", &pausing, &flag_size) &&
	     !hotspot_vm__field(vm, "CollectedHeap", "_is_gc_active", &pausing, &flag_size)) ||
	    (flag_size && flag_size != 1))
		return;
	out->heap_collections = heap + collections;
	out->heap_pausing = heap + pausing;
}

int hotspot_thread_names__layout(const struct hotspot_vm *vm, struct hotspot_memory *mem,
				struct hotspot_thread_names__layout *out, char *err, size_t err_size)
{
	bool narrow = false, klass_narrow = false, flag = false;
	uint64_t size = 0, klass, thread_klass, base = 0, klass_base = 0;
	int32_t shift = 0, klass_shift = 0;

	memset(out, 0, sizeof(*out));
	if (!hotspot_vm__field(vm, "JavaThread", "_threadObj", &out->thread_obj, &size) || (size && size != 8))
		return refuse__say(err, err_size, "VMStructs lists no JavaThread::_threadObj");
	/* Objects the collector may be moving under us, or pointers that need its barriers to read. */
	if ((!hotspot_classes__flag_bool(vm, mem, "UseZGC", &flag, NULL, 0) && flag) ||
	    (!hotspot_classes__flag_bool(vm, mem, "UseShenandoahGC", &flag, NULL, 0) && flag))
		return refuse__say(err, err_size, "its collector (ZGC or Shenandoah) needs barriers to read the heap");
	if (!hotspot_classes__flag_bool(vm, mem, "UseCompactObjectHeaders", &flag, NULL, 0) && flag)
		return refuse__say(err, err_size, "compact object headers are not read");
	if (hotspot_classes__flag_bool(vm, mem, "UseCompressedClassPointers", &klass_narrow, NULL, 0) || !klass_narrow ||
	    hotspot_classes__flag_bool(vm, mem, "UseCompressedOops", &narrow, NULL, 0))
		return refuse__say(err, err_size, "its objects' headers are not read without compressed class pointers");
	/* A compressed class pointer right after the mark word, then an array's length, then its bytes. */
	if (!hotspot_vm__field(vm, "oopDesc", "_metadata._compressed_klass", &klass, &size) || klass != 8 ||
	    (size && size != 4))
		return refuse__say(err, err_size, "an object's class pointer is not where it is read");
	if (narrow && (!static_word(vm, mem, "CompressedOops", "_narrow_oop._base", "_base", 8, &base) ||
		       !static_word(vm, mem, "CompressedOops", "_narrow_oop._shift", "_shift", 4, &shift) ||
		       shift < 0 || shift > 8))
		return refuse__say(err, err_size, "the compressed oops' base and shift are unreadable");
	if (!static_word(vm, mem, "CompressedKlassPointers", "_narrow_klass._base", "_base", 8, &klass_base) ||
	    !static_word(vm, mem, "CompressedKlassPointers", "_narrow_klass._shift", "_shift", 4, &klass_shift) ||
	    klass_shift < 0 || klass_shift > 32)
		return refuse__say(err, err_size, "the compressed class pointers' base and shift are unreadable");
	if (hotspot_classes__find(vm, mem, "java/lang/Thread", &thread_klass, err, err_size) ||
	    hotspot_classes__find(vm, mem, "java/lang/String", &out->string_klass, err, err_size))
		return -1;
	if (java_field(vm, mem, thread_klass, "name", "Ljava/lang/String;", &out->thread_name, err, err_size) ||
	    java_field(vm, mem, out->string_klass, "value", "[B", &out->string_value, err, err_size) ||
	    java_field(vm, mem, out->string_klass, "coder", "B", &out->string_coder, err, err_size))
		return -1;
	heap_state(vm, mem, out);
	out->klass = 8;
	out->array_length = 12;
	out->array_data = 16;
	out->narrow = narrow;
	out->shift = (uint8_t)shift;
	out->base = base;
	out->klass_base = klass_base;
	out->klass_shift = (uint32_t)klass_shift;
	return 0;
}

/* The reference at addr (a field of an object in the heap): false when unreadable. */
static bool read_ref(struct hotspot_memory *mem, const struct hotspot_thread_names__layout *l, uint64_t addr,
		     uint64_t *out)
{
	uint32_t narrow;

	if (!l->narrow)
		return hotspot_memory__u64(mem, addr, out);
	if (!hotspot_memory__u32(mem, addr, &narrow))
		return false;
	*out = narrow ? l->base + ((uint64_t)narrow << l->shift) : 0;
	return true;
}

enum hotspot_thread_name_result hotspot_thread_names__string(struct hotspot_memory *mem,
							   const struct hotspot_thread_names__layout *l,
							   uint64_t java_thread, uint64_t *string)
{
	uint64_t handle, thread;

	*string = 0;
	if (!java_thread || !hotspot_memory__u64(mem, java_thread + l->thread_obj, &handle))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	/* A thread attaching, or a VM thread that is a JavaThread without a Thread yet. */
	if (!handle)
		return HOTSPOT_THREAD_NAME_NONE;
	if (!hotspot_memory__u64(mem, handle, &thread))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	if (!thread)
		return HOTSPOT_THREAD_NAME_NONE;
	if (!read_ref(mem, l, thread + l->thread_name, string))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	return *string ? HOTSPOT_THREAD_NAME_OK : HOTSPOT_THREAD_NAME_NONE;
}

bool hotspot_thread_names__heap_settled(struct hotspot_memory *mem, const struct hotspot_thread_names__layout *l,
					uint32_t *epoch)
{
	uint8_t pausing = 0;
	uint32_t count = 0;
	struct hotspot_span spans[] = {
		{ .addr = l->heap_pausing, .buf = &pausing, .len = sizeof(pausing) },
		{ .addr = l->heap_collections, .buf = &count, .len = sizeof(count) },
	};

	*epoch = 0;
	if (!l->heap_collections)
		return true;
	hotspot_memory__gather(mem, spans, 2);
	*epoch = count;
	return spans[0].ok && spans[1].ok && !pausing;
}

/* One code point as UTF-8 at out[*at], if it fits before out's last byte. */
static void put_utf8(char out[HOTSPOT_THREAD_NAME_MAX], size_t *at, uint32_t cp)
{
	uint8_t b[4];
	size_t n;

	/* A name is one frame of one line: C0 and C1 controls and DEL would break the line or the terminal. */
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
		cp = '?';
	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (*at + n >= HOTSPOT_THREAD_NAME_MAX)
		return;
	memcpy(out + *at, b, n);
	*at += n;
}

enum hotspot_thread_name_result hotspot_thread_names__decode(const uint8_t *bytes, size_t len, uint8_t coder,
							   char out[HOTSPOT_THREAD_NAME_MAX])
{
	size_t at = 0;

	out[0] = '\0';
	if (coder > CODER_UTF16 || len > HOTSPOT_THREAD_NAME_VALUE_MAX || (coder == CODER_UTF16 && len % 2))
		return HOTSPOT_THREAD_NAME_INVALID;
	if (!len)
		return HOTSPOT_THREAD_NAME_NONE;
	if (coder == CODER_LATIN1) {
		for (size_t i = 0; i < len; i++)
			put_utf8(out, &at, bytes[i]);
	} else {
		for (size_t i = 0; i < len; i += 2) {
			uint32_t u = (uint32_t)bytes[i] | (uint32_t)bytes[i + 1] << 8, lo;

			if (u >= 0xd800 && u < 0xdc00 && i + 3 < len &&
			    (lo = (uint32_t)bytes[i + 2] | (uint32_t)bytes[i + 3] << 8) >= 0xdc00 && lo < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				i += 2;
			} else if (u >= 0xd800 && u < 0xe000) {
				u = 0xfffd;
			}
			put_utf8(out, &at, u);
		}
	}
	out[at] = '\0';
	return HOTSPOT_THREAD_NAME_OK;
}

enum hotspot_thread_name_result hotspot_thread_names__read(struct hotspot_memory *mem,
							 const struct hotspot_thread_names__layout *l, uint64_t string,
							 char out[HOTSPOT_THREAD_NAME_MAX])
{
	uint8_t bytes[HOTSPOT_THREAD_NAME_VALUE_MAX], coder = 0;
	uint32_t narrow_klass = 0;
	uint64_t value = 0;
	int32_t length = 0;
	struct hotspot_span spans[2] = {
		{ .addr = string + l->klass, .buf = &narrow_klass, .len = sizeof(narrow_klass) },
		{ .addr = string + l->string_coder, .buf = &coder, .len = sizeof(coder) },
	};

	out[0] = '\0';
	if (!string)
		return HOTSPOT_THREAD_NAME_NONE;
	hotspot_memory__gather(mem, spans, 2);
	if (!spans[0].ok || !spans[1].ok || !read_ref(mem, l, string + l->string_value, &value))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	/* String is final: an object of another class is not a name (a collector moving it, or a lie). */
	if (l->klass_base + ((uint64_t)narrow_klass << l->klass_shift) != l->string_klass || !value)
		return HOTSPOT_THREAD_NAME_INVALID;
	if (!hotspot_memory__read(mem, value + l->array_length, &length, sizeof(length)))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	if (length < 0 || length > HOTSPOT_THREAD_NAME_VALUE_MAX)
		return HOTSPOT_THREAD_NAME_INVALID;
	if (length && !hotspot_memory__read(mem, value + l->array_data, bytes, (size_t)length))
		return HOTSPOT_THREAD_NAME_UNREADABLE;
	return hotspot_thread_names__decode(bytes, (size_t)length, coder, out);
}
