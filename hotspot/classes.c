/*
 * classes: classes, fields and flags of a JVM (contract in classes.h).
 */
#include "hotspot/classes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot/names_internal.h"

/* The longest name compared: class names, field names and signatures the walk asks for are short. */
#define CLASSES_MAX_NAME 128
/* UNSIGNED5 excludes the zero byte since JDK 20; the FieldInfo stream is JDK 21's. */
#define U5_EXCLUDED 1
/* FieldInfo::FieldFlags: which optional numbers follow a field's five. */
#define FIELD_INITIALIZED 0x01u
#define FIELD_INJECTED 0x02u
#define FIELD_GENERIC 0x04u
#define FIELD_CONTENDED 0x10u
#define FIELD_KNOWN_FLAGS 0x1fu
#define ACC_STATIC 0x0008u

static int refuse(char *why, size_t why_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	if (why && why_size) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Where a Symbol's length (u2) and bytes are. */
struct symbol_layout {
	uint64_t length, body;
};

static bool symbol_layout(const struct hotspot_vm *vm, struct symbol_layout *l)
{
	uint64_t size = 0;

	return hotspot_vm_field(vm, "Symbol", "_length", &l->length, &size) && size == 2 &&
	       (hotspot_vm_field(vm, "Symbol", "_body", &l->body, NULL) ||
		hotspot_vm_field(vm, "Symbol", "_body[0]", &l->body, NULL));
}

/* Whether the Symbol at sym spells want. */
static bool symbol_is(struct hotspot_memory *mem, const struct symbol_layout *l, uint64_t sym, const char *want)
{
	char buf[CLASSES_MAX_NAME];
	size_t len = strlen(want);
	uint16_t got;

	if (!sym || len > sizeof(buf) || !hotspot_memory_u16(mem, sym + l->length, &got) || got != len)
		return false;
	return hotspot_memory_read(mem, sym + l->body, buf, len) && !memcmp(buf, want, len);
}

int hotspot_vm_class(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, uint64_t *klass,
		     char *why, size_t why_size)
{
	struct symbol_layout sl;
	uint64_t base, klass_name, size = 0, *entries;
	size_t nr = HOTSPOT_VM_CLASSES_MAX;
	int rc = -1;

	if (!hotspot_vm_static(vm, "vmClasses", "_klasses[static_cast<int>(vmClassID::Object_klass_knum)]", &base) ||
	    !base)
		return refuse(why, why_size, "VMStructs lists no vmClasses::_klasses");
	if (!hotspot_vm_field(vm, "Klass", "_name", &klass_name, &size) || (size && size != 8) ||
	    !symbol_layout(vm, &sl))
		return refuse(why, why_size, "VMStructs lists no Klass::_name or Symbol");
	entries = malloc(HOTSPOT_VM_CLASSES_MAX * sizeof(*entries));
	if (!entries)
		return refuse(why, why_size, "out of memory");
	/* The array ends somewhere before the most read: read less until a read succeeds. */
	while (nr && !hotspot_memory_read(mem, base, entries, nr * sizeof(entries[0])))
		nr /= 2;
	for (size_t i = 0; i < nr && rc; i++) {
		uint64_t sym;

		if (entries[i] && hotspot_memory_u64(mem, entries[i] + klass_name, &sym) && symbol_is(mem, &sl, sym, name)) {
			*klass = entries[i];
			rc = 0;
		}
	}
	free(entries);
	return rc ? refuse(why, why_size, "the VM does not know the class %s", name) : 0;
}

/* The FieldInfo stream's bytes into *buf (caller frees), their number into *len. */
static int read_stream(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, uint8_t **buf,
		       size_t *len, char *why, size_t why_size)
{
	uint64_t stream_field, array, data = 4;
	int32_t length;

	if (!hotspot_vm_field(vm, "InstanceKlass", "_fieldinfo_stream", &stream_field, NULL))
		return refuse(why, why_size, "VMStructs lists no InstanceKlass::_fieldinfo_stream (a JDK before 21)");
	/* An Array<u1>'s bytes follow its int length, unless VMStructs says otherwise. */
	hotspot_vm_field(vm, "Array<u1>", "_data", &data, NULL);
	if (!hotspot_memory_u64(mem, klass + stream_field, &array) || !array ||
	    !hotspot_memory_read(mem, array, &length, sizeof(length)))
		return refuse(why, why_size, "the class's field stream is unreadable");
	if (length <= 0 || (uint32_t)length > HOTSPOT_FIELD_STREAM_MAX)
		return refuse(why, why_size, "a field stream of %d bytes", length);
	*buf = malloc((size_t)length);
	if (!*buf)
		return refuse(why, why_size, "out of memory");
	if (!hotspot_memory_read(mem, array + data, *buf, (size_t)length)) {
		free(*buf);
		return refuse(why, why_size, "the class's field stream is unreadable");
	}
	*len = (size_t)length;
	return 0;
}

int hotspot_instance_field(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, const char *name,
			   const char *signature, uint32_t *offset, char *why, size_t why_size)
{
	uint64_t constants_field, pool, pool_length_field, pool_size = hotspot_vm_type_size(vm, "ConstantPool");
	uint32_t java_fields, injected, item[5];
	struct symbol_layout sl;
	int32_t pool_length;
	uint8_t *buf = NULL;
	size_t len = 0, pos = 0;
	int rc = -1;

	if (!hotspot_vm_field(vm, "InstanceKlass", "_constants", &constants_field, NULL) ||
	    !hotspot_vm_field(vm, "ConstantPool", "_length", &pool_length_field, NULL) || !pool_size ||
	    !symbol_layout(vm, &sl))
		return refuse(why, why_size, "VMStructs lists no constant pool or Symbol");
	if (!hotspot_memory_u64(mem, klass + constants_field, &pool) || !pool ||
	    !hotspot_memory_read(mem, pool + pool_length_field, &pool_length, sizeof(pool_length)) || pool_length <= 0)
		return refuse(why, why_size, "the class's constant pool is unreadable");
	if (read_stream(vm, mem, klass, &buf, &len, why, why_size))
		return -1;
	if (!lines_u5(buf, len, &pos, U5_EXCLUDED, &java_fields) || !lines_u5(buf, len, &pos, U5_EXCLUDED, &injected)) {
		refuse(why, why_size, "a field stream that ends early");
		goto out;
	}
	for (uint32_t f = 0; f < java_fields; f++) {
		uint64_t name_sym, sig_sym;
		uint32_t optional;
		bool read = true;

		for (int k = 0; k < 5 && read; k++)
			read = lines_u5(buf, len, &pos, U5_EXCLUDED, &item[k]);
		if (!read) {
			refuse(why, why_size, "a field stream that ends early");
			goto out;
		}
		/* item: name index, signature index, offset, access flags, field flags. */
		if (item[4] & ~FIELD_KNOWN_FLAGS) {
			refuse(why, why_size, "a field with flags 0x%x not known", item[4]);
			goto out;
		}
		optional = !!(item[4] & FIELD_INITIALIZED) + !!(item[4] & FIELD_GENERIC) + !!(item[4] & FIELD_CONTENDED);
		for (uint32_t k = 0; k < optional && read; k++) {
			uint32_t skipped;

			read = lines_u5(buf, len, &pos, U5_EXCLUDED, &skipped);
		}
		if (!read) {
			refuse(why, why_size, "a field stream that ends early");
			goto out;
		}
		if ((item[3] & ACC_STATIC) || (item[4] & FIELD_INJECTED))
			continue;
		if (item[0] == 0 || item[0] >= (uint32_t)pool_length || item[1] == 0 || item[1] >= (uint32_t)pool_length)
			continue;
		if (!hotspot_memory_u64(mem, pool + pool_size + 8ull * item[0], &name_sym) ||
		    !symbol_is(mem, &sl, name_sym, name))
			continue;
		if (!hotspot_memory_u64(mem, pool + pool_size + 8ull * item[1], &sig_sym) ||
		    !symbol_is(mem, &sl, sig_sym, signature))
			continue;
		*offset = item[2];
		rc = 0;
		goto out;
	}
	refuse(why, why_size, "no instance field %s %s", signature, name);
out:
	free(buf);
	return rc;
}

int hotspot_flag_bool(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, bool *value,
		      char *why, size_t why_size)
{
	uint64_t flags_addr, count_addr, table, count, name_field, addr_field, stride = hotspot_vm_type_size(vm, "JVMFlag");
	char got[CLASSES_MAX_NAME];
	uint8_t *flags;

	if (!hotspot_vm_static(vm, "JVMFlag", "flags", &flags_addr) ||
	    !hotspot_vm_static(vm, "JVMFlag", "numFlags", &count_addr) ||
	    !hotspot_vm_field(vm, "JVMFlag", "_name", &name_field, NULL) ||
	    !hotspot_vm_field(vm, "JVMFlag", "_addr", &addr_field, NULL) || !stride || stride > 256 ||
	    name_field + 8 > stride || addr_field + 8 > stride)
		return refuse(why, why_size, "VMStructs lists no JVMFlag table");
	if (!hotspot_memory_u64(mem, flags_addr, &table) || !hotspot_memory_u64(mem, count_addr, &count) || !table)
		return refuse(why, why_size, "the flag table is unreadable");
	if (count > HOTSPOT_FLAGS_MAX)
		return refuse(why, why_size, "%llu flags", (unsigned long long)count);
	flags = malloc(count * stride + 1);
	if (!flags)
		return refuse(why, why_size, "out of memory");
	if (!hotspot_memory_read(mem, table, flags, count * stride)) {
		free(flags);
		return refuse(why, why_size, "the flag table is unreadable");
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t name_ptr, addr;
		uint8_t v;

		memcpy(&name_ptr, flags + i * stride + name_field, 8);
		memcpy(&addr, flags + i * stride + addr_field, 8);
		if (hotspot_memory_string(mem, name_ptr, got, sizeof(got)) < 0 || strcmp(got, name))
			continue;
		free(flags);
		if (!hotspot_memory_u8(mem, addr, &v) || v > 1)
			return refuse(why, why_size, "the flag %s is unreadable", name);
		*value = v;
		return 0;
	}
	free(flags);
	return refuse(why, why_size, "no flag %s", name);
}
