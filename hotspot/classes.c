/*
 * classes: classes, fields and flags of a JVM (contract in classes.h).
 */
#include "hotspot/classes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/refuse.h"
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
/* JDK 17: a field the VM injected, whose name index is not the constant pool's. */
#define ACC_FIELD_INTERNAL 0x0400u

/* Where a Symbol's length (u2) and bytes are. */
struct symbol_layout {
	uint64_t length, body;
};

static bool symbol_layout(const struct hotspot_vm *vm, struct symbol_layout *l)
{
	uint64_t size = 0;

	return hotspot_vm__field(vm, "Symbol", "_length", &l->length, &size) && size == 2 &&
	       (hotspot_vm__field(vm, "Symbol", "_body", &l->body, NULL) ||
		hotspot_vm__field(vm, "Symbol", "_body[0]", &l->body, NULL));
}

/* Whether the Symbol at sym spells want. */
static bool symbol_is(struct hotspot_memory *mem, const struct symbol_layout *l, uint64_t sym, const char *want)
{
	char buf[CLASSES_MAX_NAME];
	size_t len = strlen(want);
	uint16_t got;

	if (!sym || len > sizeof(buf) || !hotspot_memory__u16(mem, sym + l->length, &got) || got != len)
		return false;
	return hotspot_memory__read(mem, sym + l->body, buf, len) && !memcmp(buf, want, len);
}

int hotspot_classes__find(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, uint64_t *klass,
		     char *err, size_t err_size)
{
	struct symbol_layout sl;
	uint64_t base, klass_name, size = 0, *entries;
	size_t nr = HOTSPOT_VM_CLASSES_MAX;
	int rc = -1;

	if (!hotspot_vm__static(vm, "vmClasses", "_klasses[static_cast<int>(vmClassID::Object_klass_knum)]", &base) ||
	    !base)
		return refuse__say(err, err_size, "VMStructs lists no vmClasses::_klasses");
	if (!hotspot_vm__field(vm, "Klass", "_name", &klass_name, &size) || (size && size != 8) ||
	    !symbol_layout(vm, &sl))
		return refuse__say(err, err_size, "VMStructs lists no Klass::_name or Symbol");
	entries = malloc(HOTSPOT_VM_CLASSES_MAX * sizeof(*entries));
	if (!entries)
		return refuse__say(err, err_size, "out of memory");
	/* The array ends somewhere before the most read: read less until a read succeeds. */
	while (nr && !hotspot_memory__read(mem, base, entries, nr * sizeof(entries[0])))
		nr /= 2;
	for (size_t i = 0; i < nr && rc; i++) {
		uint64_t sym;

		if (entries[i] && hotspot_memory__u64(mem, entries[i] + klass_name, &sym) && symbol_is(mem, &sl, sym, name)) {
			*klass = entries[i];
			rc = 0;
		}
	}
	free(entries);
	return rc ? refuse__say(err, err_size, "the VM does not know the class %s", name) : 0;
}

/* The FieldInfo stream's bytes into *buf (caller frees), their number into *len. */
static int read_stream(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, uint8_t **buf,
		       size_t *len, char *err, size_t err_size)
{
	uint64_t stream_field, array, data = 4;
	int32_t length;

	if (!hotspot_vm__field(vm, "InstanceKlass", "_fieldinfo_stream", &stream_field, NULL))
		return refuse__say(err, err_size, "VMStructs lists no InstanceKlass::_fieldinfo_stream");
	/* An Array<u1>'s bytes follow its int length, unless VMStructs says otherwise. */
	hotspot_vm__field(vm, "Array<u1>", "_data", &data, NULL);
	if (!hotspot_memory__u64(mem, klass + stream_field, &array) || !array ||
	    !hotspot_memory__read(mem, array, &length, sizeof(length)))
		return refuse__say(err, err_size, "the class's field stream is unreadable");
	if (length <= 0 || (uint32_t)length > HOTSPOT_FIELD_STREAM_MAX)
		return refuse__say(err, err_size, "a field stream of %d bytes", length);
	*buf = malloc((size_t)length);
	if (!*buf)
		return refuse__say(err, err_size, "out of memory");
	if (!hotspot_memory__read(mem, array + data, *buf, (size_t)length)) {
		free(*buf);
		return refuse__say(err, err_size, "the class's field stream is unreadable");
	}
	*len = (size_t)length;
	return 0;
}

/* Where a class's constant pool is, for a field's name and signature indexes. */
struct pool {
	uint64_t at, entries;    /* the ConstantPool, and its Symbol * entries */
	uint32_t length;
	struct symbol_layout sl;
};

static int pool_of(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, struct pool *p,
		   char *err, size_t err_size)
{
	uint64_t constants_field, pool_length_field, pool_size = hotspot_vm__type_size(vm, "ConstantPool");
	int32_t length;

	if (!hotspot_vm__field(vm, "InstanceKlass", "_constants", &constants_field, NULL) ||
	    !hotspot_vm__field(vm, "ConstantPool", "_length", &pool_length_field, NULL) || !pool_size ||
	    !symbol_layout(vm, &p->sl))
		return refuse__say(err, err_size, "VMStructs lists no constant pool or Symbol");
	if (!hotspot_memory__u64(mem, klass + constants_field, &p->at) || !p->at ||
	    !hotspot_memory__read(mem, p->at + pool_length_field, &length, sizeof(length)) || length <= 0)
		return refuse__say(err, err_size, "the class's constant pool is unreadable");
	p->entries = p->at + pool_size;
	p->length = (uint32_t)length;
	return 0;
}

/* Whether the field whose name and signature are pool entries name_index and sig_index is the one wanted. */
static bool field_is(struct hotspot_memory *mem, const struct pool *p, uint32_t name_index, uint32_t sig_index,
		     const char *name, const char *signature)
{
	uint64_t name_sym, sig_sym;

	if (name_index == 0 || name_index >= p->length || sig_index == 0 || sig_index >= p->length)
		return false;
	return hotspot_memory__u64(mem, p->entries + 8ull * name_index, &name_sym) &&
	       symbol_is(mem, &p->sl, name_sym, name) &&
	       hotspot_memory__u64(mem, p->entries + 8ull * sig_index, &sig_sym) &&
	       symbol_is(mem, &p->sl, sig_sym, signature);
}

/* JDK 21 and later: the field in the class's FieldInfo stream. */
static int field_in_stream(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass,
			   const struct pool *p, const char *name, const char *signature, uint32_t *offset, char *err,
			   size_t err_size)
{
	uint32_t java_fields, injected, item[5];
	uint8_t *buf = NULL;
	size_t len = 0, pos = 0;
	int rc = -1;

	if (read_stream(vm, mem, klass, &buf, &len, err, err_size))
		return -1;
	if (!hotspot_lines__u5(buf, len, &pos, U5_EXCLUDED, &java_fields) || !hotspot_lines__u5(buf, len, &pos, U5_EXCLUDED, &injected)) {
		refuse__say(err, err_size, "a field stream that ends early");
		goto out;
	}
	for (uint32_t f = 0; f < java_fields; f++) {
		uint32_t optional;
		bool read = true;

		for (int k = 0; k < 5 && read; k++)
			read = hotspot_lines__u5(buf, len, &pos, U5_EXCLUDED, &item[k]);
		if (!read) {
			refuse__say(err, err_size, "a field stream that ends early");
			goto out;
		}
		/* item: name index, signature index, offset, access flags, field flags. */
		if (item[4] & ~FIELD_KNOWN_FLAGS) {
			refuse__say(err, err_size, "a field with flags 0x%x not known", item[4]);
			goto out;
		}
		optional = !!(item[4] & FIELD_INITIALIZED) + !!(item[4] & FIELD_GENERIC) + !!(item[4] & FIELD_CONTENDED);
		for (uint32_t k = 0; k < optional && read; k++) {
			uint32_t skipped;

			read = hotspot_lines__u5(buf, len, &pos, U5_EXCLUDED, &skipped);
		}
		if (!read) {
			refuse__say(err, err_size, "a field stream that ends early");
			goto out;
		}
		if ((item[3] & ACC_STATIC) || (item[4] & FIELD_INJECTED))
			continue;
		if (!field_is(mem, p, item[0], item[1], name, signature))
			continue;
		*offset = item[2];
		rc = 0;
		goto out;
	}
	refuse__say(err, err_size, "no instance field %s %s", signature, name);
out:
	free(buf);
	return rc;
}

/*
 * JDK 17: the field in InstanceKlass::_fields, an Array<u2> of
 * FieldInfo::field_slots shorts per field, the first _java_fields_count
 * of them the class's own; the shorts' places are VMStructs constants. An
 * offset is two shorts, tagged in its low FIELDINFO_TAG_SIZE bits: bit 0
 * set once the layout gave the field its offset.
 */
static int field_in_array(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass,
			  const struct pool *p, const char *name, const char *signature, uint32_t *offset, char *err,
			  size_t err_size)
{
	int32_t slots, access, name_at, sig_at, low, high, tag_size;
	uint64_t fields_field, count_field, array, data = 4;
	uint16_t count, *shorts;
	int32_t length;
	int rc = -1;

	if (!hotspot_vm__field(vm, "InstanceKlass", "_fields", &fields_field, NULL) ||
	    !hotspot_vm__field(vm, "InstanceKlass", "_java_fields_count", &count_field, NULL) ||
	    !hotspot_vm__int(vm, "FieldInfo::field_slots", &slots) ||
	    !hotspot_vm__int(vm, "FieldInfo::access_flags_offset", &access) ||
	    !hotspot_vm__int(vm, "FieldInfo::name_index_offset", &name_at) ||
	    !hotspot_vm__int(vm, "FieldInfo::signature_index_offset", &sig_at) ||
	    !hotspot_vm__int(vm, "FieldInfo::low_packed_offset", &low) ||
	    !hotspot_vm__int(vm, "FieldInfo::high_packed_offset", &high) ||
	    !hotspot_vm__int(vm, "FIELDINFO_TAG_SIZE", &tag_size))
		return refuse__say(err, err_size, "VMStructs lists neither InstanceKlass::_fieldinfo_stream nor _fields");
	if (slots <= 0 || slots > 16 || access < 0 || access >= slots || name_at < 0 || name_at >= slots ||
	    sig_at < 0 || sig_at >= slots || low < 0 || low >= slots || high < 0 || high >= slots || tag_size < 1 ||
	    tag_size > 8)
		return refuse__say(err, err_size, "FieldInfo's constants make no sense");
	hotspot_vm__field(vm, "Array<u2>", "_data", &data, NULL);
	if (!hotspot_memory__u64(mem, klass + fields_field, &array) || !array ||
	    !hotspot_memory__u16(mem, klass + count_field, &count) ||
	    !hotspot_memory__read(mem, array, &length, sizeof(length)))
		return refuse__say(err, err_size, "the class's fields are unreadable");
	if (length < 0 || (uint64_t)count * (uint32_t)slots > (uint32_t)length ||
	    (uint64_t)length * 2 > HOTSPOT_FIELD_STREAM_MAX)
		return refuse__say(err, err_size, "%u fields in an array of %d shorts", count, length);
	shorts = malloc((size_t)count * (size_t)slots * 2 + 2);
	if (!shorts)
		return refuse__say(err, err_size, "out of memory");
	if (!hotspot_memory__read(mem, array + data, shorts, (size_t)count * (size_t)slots * 2)) {
		free(shorts);
		return refuse__say(err, err_size, "the class's fields are unreadable");
	}
	for (uint32_t f = 0; f < count && rc; f++) {
		const uint16_t *fi = shorts + (size_t)f * (size_t)slots;
		uint32_t packed = (uint32_t)fi[low] | (uint32_t)fi[high] << 16;

		if ((fi[access] & ACC_STATIC) || (fi[access] & ACC_FIELD_INTERNAL) || !(packed & 1u) ||
		    !field_is(mem, p, fi[name_at], fi[sig_at], name, signature))
			continue;
		*offset = packed >> tag_size;
		rc = 0;
	}
	free(shorts);
	return rc ? refuse__say(err, err_size, "no instance field %s %s", signature, name) : 0;
}

int hotspot_classes__instance_field(const struct hotspot_vm *vm, struct hotspot_memory *mem, uint64_t klass, const char *name,
			   const char *signature, uint32_t *offset, char *err, size_t err_size)
{
	struct pool p;
	uint64_t unused;

	if (pool_of(vm, mem, klass, &p, err, err_size))
		return -1;
	if (hotspot_vm__field(vm, "InstanceKlass", "_fieldinfo_stream", &unused, NULL))
		return field_in_stream(vm, mem, klass, &p, name, signature, offset, err, err_size);
	return field_in_array(vm, mem, klass, &p, name, signature, offset, err, err_size);
}

int hotspot_classes__flag_bool(const struct hotspot_vm *vm, struct hotspot_memory *mem, const char *name, bool *value,
		      char *err, size_t err_size)
{
	uint64_t flags_addr, count_addr, table, count, name_field, addr_field, stride = hotspot_vm__type_size(vm, "JVMFlag");
	char got[CLASSES_MAX_NAME];
	uint8_t *flags;

	if (!hotspot_vm__static(vm, "JVMFlag", "flags", &flags_addr) ||
	    !hotspot_vm__static(vm, "JVMFlag", "numFlags", &count_addr) ||
	    !hotspot_vm__field(vm, "JVMFlag", "_name", &name_field, NULL) ||
	    !hotspot_vm__field(vm, "JVMFlag", "_addr", &addr_field, NULL) || !stride || stride > 256 ||
	    name_field + 8 > stride || addr_field + 8 > stride)
		return refuse__say(err, err_size, "VMStructs lists no JVMFlag table");
	if (!hotspot_memory__u64(mem, flags_addr, &table) || !hotspot_memory__u64(mem, count_addr, &count) || !table)
		return refuse__say(err, err_size, "the flag table is unreadable");
	if (count > HOTSPOT_FLAGS_MAX)
		return refuse__say(err, err_size, "%llu flags", (unsigned long long)count);
	flags = malloc(count * stride + 1);
	if (!flags)
		return refuse__say(err, err_size, "out of memory");
	if (!hotspot_memory__read(mem, table, flags, count * stride)) {
		free(flags);
		return refuse__say(err, err_size, "the flag table is unreadable");
	}
	for (uint64_t i = 0; i < count; i++) {
		uint64_t name_ptr, addr;
		uint8_t v;

		memcpy(&name_ptr, flags + i * stride + name_field, 8);
		memcpy(&addr, flags + i * stride + addr_field, 8);
		if (hotspot_memory__string(mem, name_ptr, got, sizeof(got)) < 0 || strcmp(got, name))
			continue;
		free(flags);
		if (!hotspot_memory__u8(mem, addr, &v) || v > 1)
			return refuse__say(err, err_size, "the flag %s is unreadable", name);
		*value = v;
		return 0;
	}
	free(flags);
	return refuse__say(err, err_size, "no flag %s", name);
}
