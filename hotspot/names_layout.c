/*
 * names_layout: what naming Java frames needs of one JVM, from VMStructs.
 *
 * Each field is looked up by HotSpot's own name, its width taken from its
 * type (a pointer is 8 bytes; "u2", "int", "CompLevel" from the types
 * table) and its end checked against the size HotSpot gives its type. Where
 * JDKs differ, each known spelling is tried:
 *
 *   ConstMethod's flags      _flags (u2, JDK 17)  | _flags._flags (u4, JDK 21+)
 *   its line table flag      ConstMethod::_has_linenumber_table | ConstMethodFlags::_misc_has_linenumber_table
 *   the nmethod's Method     CompiledMethod::_method (JDK 17) | nmethod::_method
 *   the code's bounds        CodeBlob::_code_begin/_code_end (addresses) | _code_offset/_data_offset (ints, JDK 25)
 *   pcs, scopes, metadata    offsets from the nmethod (JDK 17) | in _immutable_data and _mutable_data (JDK 25)
 *
 * UNSIGNED5's excluded byte is not described anywhere: it follows the
 * major version (Abstract_VM_Version::_vm_major_version, read from the
 * process), 1 from JDK 20 on. A JVM lacking anything is refused with one
 * line naming it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "hotspot/names_internal.h"
#include "hotspot/vmstructs.h"

/* The first JDK whose compressed streams exclude the zero byte (utilities/unsigned5.hpp). */
#define UNSIGNED5_EXCLUDES_FROM 20

struct lookup {
	const struct hotspot_vm *vm;
	char *err;
	size_t err_size;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void fail(struct lookup *lk, const char *fmt, ...)
{
	va_list ap;

	if (lk->failed)
		return;
	lk->failed = true;
	va_start(ap, fmt);
	vsnprintf(lk->err, lk->err_size, fmt, ap);
	va_end(ap);
}

/*
 * type::name into *f, quietly: false when HotSpot lists no such field or
 * its width is not 1, 2, 4 or 8 bytes. width_if_unknown stands for a type
 * the table does not size; 0 refuses such a field.
 */
static bool try_field(struct lookup *lk, const char *type, const char *name, uint8_t width_if_unknown,
		      struct names_field *f)
{
	uint64_t offset, size, type_size;

	if (!hotspot_vm__field(lk->vm, type, name, &offset, &size))
		return false;
	if (!size)
		size = width_if_unknown;
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	type_size = hotspot_vm__type_size(lk->vm, type);
	if (offset > UINT32_MAX || (type_size && offset + size > type_size))
		return false;
	f->offset = (uint32_t)offset;
	f->size = (uint8_t)size;
	return true;
}

static void field(struct lookup *lk, const char *type, const char *name, uint8_t width_if_unknown,
		  struct names_field *f)
{
	if (!try_field(lk, type, name, width_if_unknown, f))
		fail(lk, "HotSpot lists no usable %s::%s (VMStructs)", type, name);
}

/* The first of two spellings HotSpot lists. */
static void field2(struct lookup *lk, const char *type1, const char *name1, const char *type2, const char *name2,
		   uint8_t width_if_unknown, struct names_field *f)
{
	if (!try_field(lk, type1, name1, width_if_unknown, f) && !try_field(lk, type2, name2, width_if_unknown, f))
		fail(lk, "HotSpot lists neither %s::%s nor %s::%s (VMStructs)", type1, name1, type2, name2);
}

static uint64_t type_size(struct lookup *lk, const char *type)
{
	uint64_t size = hotspot_vm__type_size(lk->vm, type);

	/* The objects named are a few hundred bytes at most. */
	if (!size || size > 4096)
		fail(lk, "HotSpot gives no usable size of %s (VMStructs)", type);
	return size;
}

static int32_t constant(struct lookup *lk, const char *name, const char *other)
{
	int32_t v = 0;

	if (!hotspot_vm__int(lk->vm, name, &v) && !(other && hotspot_vm__int(lk->vm, other, &v)))
		fail(lk, "HotSpot lists no constant %s (VMStructs)", name);
	return v;
}

static void method_fields(struct lookup *lk, struct names_layout *l)
{
	struct names_field access, flags;

	field(lk, "Method", "_constMethod", 8, &l->method_const);
	field(lk, "Method", "_access_flags", 0, &access);
	field(lk, "AccessFlags", "_flags", 0, &flags);
	l->method_access = (struct names_field){ access.offset + flags.offset, flags.size };
	field(lk, "ConstMethod", "_constants", 8, &l->const_constants);
	field2(lk, "ConstMethod", "_flags._flags", "ConstMethod", "_flags", 0, &l->const_flags);
	field(lk, "ConstMethod", "_code_size", 2, &l->const_code_size);
	field(lk, "ConstMethod", "_name_index", 2, &l->const_name_index);
	field(lk, "ConstMethod", "_signature_index", 2, &l->const_signature_index);
	l->const_size = type_size(lk, "ConstMethod");
	l->has_line_table = (uint32_t)constant(lk, "ConstMethodFlags::_misc_has_linenumber_table",
					       "ConstMethod::_has_linenumber_table");
	field(lk, "ConstantPool", "_pool_holder", 8, &l->pool_holder);
	field(lk, "ConstantPool", "_length", 4, &l->pool_length);
	/* The SourceFile attribute's pool index (JDK 17 and 25 keep it in the pool): without it, no file names. */
	if (!try_field(lk, "ConstantPool", "_source_file_name_index", 2, &l->pool_source_file))
		l->pool_source_file = (struct names_field){ 0, 0 };
	l->pool_size = type_size(lk, "ConstantPool");
	field(lk, "Klass", "_name", 8, &l->klass_name);
	field(lk, "Symbol", "_length", 2, &l->symbol_length);
	/* _body is an array: its listed width is its first byte's, or none; only its offset counts. */
	{
		struct names_field body;

		if (!try_field(lk, "Symbol", "_body", 1, &body))
			field(lk, "Symbol", "_body[0]", 1, &body);
		l->symbol_body = body.offset;
	}
}

static void nmethod_fields(struct lookup *lk, struct names_layout *l)
{
	struct names_field probe;

	field(lk, "CodeBlob", "_name", 8, &l->blob_name);
	field(lk, "CodeBlob", "_size", 4, &l->blob_size);
	l->code_is_offset = try_field(lk, "CodeBlob", "_code_offset", 4, &l->blob_code);
	if (l->code_is_offset)
		field(lk, "CodeBlob", "_data_offset", 4, &l->blob_code_end);
	else {
		field(lk, "CodeBlob", "_code_begin", 8, &l->blob_code);
		field(lk, "CodeBlob", "_code_end", 8, &l->blob_code_end);
	}
	field2(lk, "nmethod", "_method", "CompiledMethod", "_method", 8, &l->nm_method);
	field(lk, "nmethod", "_compile_id", 4, &l->nm_compile_id);
	field(lk, "nmethod", "_comp_level", 0, &l->nm_comp_level);
	field(lk, "nmethod", "_scopes_pcs_offset", 4, &l->nm_pcs);
	if (try_field(lk, "nmethod", "_immutable_data", 8, &probe)) {
		l->style = NAMES_NMETHOD_IMMUTABLE;
		l->nm_immutable = probe;
		field(lk, "nmethod", "_immutable_data_size", 4, &l->nm_immutable_size);
		field(lk, "nmethod", "_scopes_data_offset", 4, &l->nm_scopes_offset);
		field(lk, "CodeBlob", "_mutable_data", 8, &l->blob_mutable);
		field(lk, "CodeBlob", "_mutable_data_size", 4, &l->blob_mutable_size);
		field(lk, "CodeBlob", "_relocation_size", 4, &l->blob_relocation_size);
	} else {
		l->style = NAMES_NMETHOD_HEADER;
		field(lk, "nmethod", "_dependencies_offset", 4, &l->nm_pcs_end);
		field2(lk, "nmethod", "_scopes_data_begin", "CompiledMethod", "_scopes_data_begin", 8, &l->nm_scopes);
		field(lk, "nmethod", "_metadata_offset", 4, &l->nm_metadata);
	}
	field(lk, "PcDesc", "_pc_offset", 4, &l->pc_offset);
	field(lk, "PcDesc", "_scope_decode_offset", 4, &l->pc_scope);
	l->pc_desc_size = type_size(lk, "PcDesc");
	l->invocation_entry_bci = constant(lk, "InvocationEntryBci", NULL);
	l->level_c1_low = constant(lk, "CompLevel_simple", NULL);
	l->level_c1_high = constant(lk, "CompLevel_full_profile", NULL);
	l->level_c2 = constant(lk, "CompLevel_full_optimization", NULL);
}

/* The VM's major version, from its memory: it decides the UNSIGNED5 coding. */
static void u5_coding(struct lookup *lk, struct hotspot_memory *mem, struct names_layout *l)
{
	uint64_t addr;
	uint32_t major;

	if (!hotspot_vm__static(lk->vm, "Abstract_VM_Version", "_vm_major_version", &addr)) {
		fail(lk, "HotSpot lists no Abstract_VM_Version::_vm_major_version (VMStructs)");
		return;
	}
	if (!hotspot_memory__u32(mem, addr, &major)) {
		fail(lk, "cannot read the JVM's major version at 0x%llx", (unsigned long long)addr);
		return;
	}
	if (major < 8 || major > 1000) {
		fail(lk, "the JVM's major version reads %u", major);
		return;
	}
	l->u5_excluded = major >= UNSIGNED5_EXCLUDES_FROM;
}

int hotspot_names__layout_read(const struct hotspot_vm *vm, struct hotspot_memory *mem, struct names_layout *l, char *err,
		      size_t err_size)
{
	struct lookup lk = { .vm = vm, .err = err, .err_size = err_size };

	*l = (struct names_layout){ 0 };
	method_fields(&lk, l);
	nmethod_fields(&lk, l);
	if (!lk.failed)
		u5_coding(&lk, mem, l);
	if (!lk.failed && (l->pc_desc_size < l->pc_offset.offset + 4 || l->pc_desc_size < l->pc_scope.offset + 4))
		fail(&lk, "PcDesc's fields lie outside its %llu bytes", (unsigned long long)l->pc_desc_size);
	return lk.failed ? -1 : 0;
}
