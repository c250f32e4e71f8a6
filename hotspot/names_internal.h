/*
 * names_internal: what hotspot/names.c, scopes.c and lines.c share.
 *
 * names.c owns struct hotspot_names (the layout taken from VMStructs, the
 * caches, the counters) and names methods; scopes.c finds the scopes of a
 * compiled pc; lines.c decodes HotSpot's compressed streams (the line
 * number table, the debug information). Not a public interface.
 */
#ifndef JBPF_HOTSPOT_NAMES_INTERNAL_H
#define JBPF_HOTSPOT_NAMES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"
#include "hotspot/names.h"

/*
 * A field of the JVM: its offset in its object and its width in bytes
 * (1, 2, 4 or 8), both from VMStructs.
 */
struct names_field {
	uint32_t offset;
	uint8_t size;
};

/* Where the PcDescs, scopes and metadata of an nmethod are (nmethod.hpp). */
enum names_nmethod_style {
	/*
	 * JDK 17 to 22: offsets from the nmethod's start (header_begin):
	 * pcs [_scopes_pcs_offset, _dependencies_offset), scopes
	 * [_scopes_data_begin, pcs), metadata [_metadata_offset, scopes).
	 */
	NAMES_NMETHOD_HEADER = 1,
	/*
	 * JDK 25: pcs [_scopes_pcs_offset, _scopes_data_offset) and scopes
	 * [_scopes_data_offset, _immutable_data_size) inside _immutable_data;
	 * metadata after the relocations in CodeBlob::_mutable_data.
	 */
	NAMES_NMETHOD_IMMUTABLE = 2,
};

struct names_layout {
	/* Method, ConstMethod, ConstantPool, Klass, Symbol */
	struct names_field method_const, method_access;
	struct names_field const_constants, const_flags, const_code_size, const_name_index, const_signature_index;
	uint64_t const_size;          /* sizeof(ConstMethod): the bytecodes follow it */
	uint32_t has_line_table;      /* the flag of ConstMethod's flags */
	struct names_field pool_holder, pool_length;
	struct names_field pool_source_file; /* size 0 when HotSpot does not list it */
	uint64_t pool_size;           /* sizeof(ConstantPool): its entries follow it */
	struct names_field klass_name, symbol_length;
	uint32_t symbol_body;
	/* CodeBlob, nmethod */
	struct names_field blob_name, blob_size, blob_code, blob_code_end;
	bool code_is_offset;          /* JDK 25: _code_offset, _data_offset (ints from the blob); else addresses */
	struct names_field nm_method, nm_compile_id, nm_comp_level;
	enum names_nmethod_style style;
	struct names_field nm_pcs, nm_pcs_end, nm_scopes, nm_metadata;       /* NAMES_NMETHOD_HEADER */
	struct names_field nm_immutable, nm_immutable_size, nm_scopes_offset; /* NAMES_NMETHOD_IMMUTABLE, and nm_pcs */
	struct names_field blob_mutable, blob_mutable_size, blob_relocation_size;
	struct names_field pc_offset, pc_scope;
	uint64_t pc_desc_size;
	/* Constants */
	int32_t invocation_entry_bci; /* InvocationEntryBci: a stored bci is bci - this */
	int32_t level_c1_low, level_c1_high, level_c2; /* CompLevel_simple..full_profile, full_optimization */
	uint8_t u5_excluded;          /* bytes below which UNSIGNED5 excludes: 1 from JDK 20, else 0 */
};

/* A scope of a compiled pc: the method and its bci (and its ConstMethod, filled by names.c). */
struct names_scope {
	uint64_t method;
	uint64_t const_method;
	int32_t bci;
};

/*
 * The layout of one JVM from its VMStructs (names_layout.c): 0, or -1 with
 * a one-line reason in err. mem reads the VM's major version.
 */
int hotspot_names__layout_read(const struct hotspot_vm *vm, struct hotspot_memory *mem, struct names_layout *l, char *err,
		      size_t err_size);

/* Bytes from an object's start to the end of the furthest of nr fields (one read of them all). */
size_t hotspot_names__fields_span(const struct names_field *f, size_t nr);
#define NAMES_FIELDS_SPAN(...) \
	hotspot_names__fields_span((const struct names_field[]){ __VA_ARGS__ }, \
			  sizeof((const struct names_field[]){ __VA_ARGS__ }) / sizeof(struct names_field))

/* Reads the width of f at base + f.offset into *out, zero-extended. */
bool hotspot_names__read_field(struct hotspot_memory *mem, uint64_t base, struct names_field f, uint64_t *out);

/* The parts of an nmethod a scope lookup reads, each [begin, end) in the target. */
struct names_nm_parts {
	uint64_t code, code_end;
	uint64_t pcs, pcs_end;
	uint64_t scopes, scopes_end;
	uint64_t metadata, metadata_end;
};

/* PcDescs of one nmethod copied at most (8 bytes each kept); past that, each lookup reads them. */
#define NAMES_MAX_PCS_COPIED 16384

/*
 * What naming keeps of one nmethod, read once (hotspot_scopes__nmethod): its own
 * Method *, _comp_level, where its parts lie, and its PcDescs' pc and
 * scope offsets (copied: false when there are more than
 * NAMES_MAX_PCS_COPIED, or none were read).
 */
struct names_nmethod {
	uint64_t nmethod, method;
	uint32_t level, nr_pcs;
	struct names_nm_parts parts;
	bool copied;
	struct {
		int32_t pc, scope;
	} pcs[];
};

/*
 * nmethod, whose compile id the walker read as cookie, into a new *out
 * (malloc'd, the caller's): 0, or an enum hotspot_unresolved (MOVED when
 * its compile id is not cookie, before or after the reads). Its header is
 * read in one read, its PcDescs in another.
 */
int hotspot_scopes__nmethod(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nmethod, uint64_t cookie,
		   struct names_nmethod **out);

/*
 * The scope offset in nm's scopes data of the first PcDesc at or after
 * pc (pc_desc_near's rule) into *scope, 0 when there is none: 0, or an
 * enum hotspot_unresolved (INVALID for a pc outside nm's code).
 */
int hotspot_scopes__offset_at(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nmethod *nm,
		     uint64_t pc, uint64_t *scope);

/*
 * The scopes from the one at offset scope of nm, innermost first, into
 * out (at most max), each with its ConstMethod: 0 with *nr set, or an enum
 * hotspot_unresolved. Scope 0 (no PcDesc) gives one scope of the
 * nmethod's method, bci -1, as HotSpot decodes the sentinel
 * (ScopeDesc::decode_body). The compile id is checked against cookie
 * again after the reads.
 */
int hotspot_scopes__of(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nmethod *nm,
	      uint64_t scope, uint64_t cookie, struct names_scope *out, int max, int *nr);

/*
 * One UNSIGNED5 number (HotSpot's CompressedReadStream::read_int) from
 * buf[*pos, len): true and *pos past it, or false when it runs past len or
 * holds an excluded byte. excluded is 0 before JDK 20, 1 after.
 */
bool hotspot_lines__u5(const uint8_t *buf, size_t len, size_t *pos, uint8_t excluded, uint32_t *out);

/*
 * The line of bci in a compressed line number table (Method::line_from_bci
 * over CompressedLineNumberReadStream): 0 when none. A table that runs
 * past len without its end gives 0.
 */
int32_t hotspot_lines__of_bci(const uint8_t *table, size_t len, uint8_t excluded, int32_t bci);

/* Bytes of a line number table read at most: 64 KiB, some 30,000 lines. */
#define NAMES_MAX_LINE_TABLE 65536

/*
 * Reads the line number table at addr until its end into a new buffer
 * (*out, *len, owned by the caller): 0, or an enum hotspot_unresolved
 * (READ when unreadable, INVALID when it does not end within
 * NAMES_MAX_LINE_TABLE bytes).
 */
int hotspot_lines__read_table(struct hotspot_memory *mem, uint64_t addr, uint8_t excluded, uint8_t **out, size_t *len);

/* Bytes hotspot_lines__read_table reads first of a table at addr (to fetch them beforehand, in a window). */
size_t hotspot_lines__first_read(uint64_t addr);

#endif /* JBPF_HOTSPOT_NAMES_INTERNAL_H */
