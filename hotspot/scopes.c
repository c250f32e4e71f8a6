/*
 * scopes: the Java scopes of a pc in an nmethod, read from outside the JVM.
 *
 * An nmethod carries, for each pc where the VM may look at its frame (calls,
 * safepoint polls, implicit exception points), a PcDesc: the pc's offset from
 * the code's start and the offset of its innermost scope in the scopes data
 * (share/code/pcDesc.hpp). The PcDescs are sorted by pc, between two
 * sentinels (-1 first, INT_MAX last: DebugInformationRecorder). A scope is
 * three UNSIGNED5 numbers (ScopeDesc::decode_body, share/code/scopeDesc.cpp):
 * its sender's offset (0 for the outermost scope), its method as an index
 * into the nmethod's metadata (1-based: 0 is null), and its bci minus
 * InvocationEntryBci (DebugInfoReadStream::read_bci); what follows (locals,
 * expressions, monitors) is not needed. A scope's sender was written before
 * it (describe_scope records the caller first), so offsets fall strictly
 * along a chain: a chain that does not is refused, and none is followed
 * past the caller's bound.
 *
 * pc: a sampled pc is anywhere in the code, a caller's is the return
 * address, where HotSpot records the call's PcDesc (pc_desc_at, exact). The
 * PcDesc taken is the first at or after pc (pc_desc_near's rule), which is
 * the exact one at a return address and, at any other pc, the next place the
 * VM could have stopped, as AsyncGetCallTrace and JFR report. A pc with none
 * (a native wrapper, the code after the last PcDesc) gives the nmethod's own
 * method with bci -1, as HotSpot decodes a sentinel.
 *
 * Races: everything is read while the JVM runs. The compile id is checked
 * against the walker's before and after the reads, so that an nmethod
 * flushed and its space reused meanwhile is reported MOVED, not misnamed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot/names_internal.h"

/* Bounds on what an nmethod may claim: far above HotSpot's own (a few thousand PcDescs, tens of KiB of scopes). */
#define MAX_PC_DESCS (1u << 20)
#define MAX_SCOPES_BYTES (64u << 20)
#define MAX_METADATA (1u << 20)
#define MAX_BLOB (1u << 30)
/* A scope's header is three numbers of at most five bytes. */
#define SCOPE_HEADER_MAX 15

/* An address of the target that may hold a pointer: not null, inside user space, aligned. */
static bool plausible(uint64_t addr)
{
	return addr && addr < (1ull << 47) && !(addr & 7);
}

size_t hotspot_names__fields_span(const struct names_field *f, size_t nr)
{
	size_t span = 0;

	for (size_t i = 0; i < nr; i++)
		if (f[i].offset + f[i].size > span)
			span = f[i].offset + f[i].size;
	return span;
}

bool hotspot_names__read_field(struct hotspot_memory *mem, uint64_t base, struct names_field f, uint64_t *out)
{
	uint8_t b1;
	uint16_t b2;
	uint32_t b4;

	switch (f.size) {
	case 1:
		if (!hotspot_memory__u8(mem, base + f.offset, &b1))
			return false;
		*out = b1;
		return true;
	case 2:
		if (!hotspot_memory__u16(mem, base + f.offset, &b2))
			return false;
		*out = b2;
		return true;
	case 4:
		if (!hotspot_memory__u32(mem, base + f.offset, &b4))
			return false;
		*out = b4;
		return true;
	case 8:
		return hotspot_memory__u64(mem, base + f.offset, out);
	default:
		return false;
	}
}

static int64_t sign_extend(uint64_t v, uint8_t size)
{
	return size == 1 ? (int8_t)v : size == 2 ? (int16_t)v : size == 4 ? (int32_t)v : (int64_t)v;
}

/* An int field, sign-extended from its width. */
static bool read_int(struct hotspot_memory *mem, uint64_t base, struct names_field f, int64_t *out)
{
	uint64_t v;

	if (!hotspot_names__read_field(mem, base, f, &v))
		return false;
	*out = sign_extend(v, f.size);
	return true;
}

/* The code's bounds: JDK 25 gives ints from the blob's start, earlier JDKs addresses. */
static int code_bounds(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nm, struct names_nm_parts *p)
{
	int64_t size, begin, end;

	if (!read_int(mem, nm, l->blob_size, &size))
		return HOTSPOT_UNRESOLVED_READ;
	if (size <= 0 || size > MAX_BLOB)
		return HOTSPOT_UNRESOLVED_INVALID;
	if (l->code_is_offset) {
		if (!read_int(mem, nm, l->blob_code, &begin) || !read_int(mem, nm, l->blob_code_end, &end))
			return HOTSPOT_UNRESOLVED_READ;
		if (begin < 0 || end < begin || end > size)
			return HOTSPOT_UNRESOLVED_INVALID;
		p->code = nm + (uint64_t)begin;
		p->code_end = nm + (uint64_t)end;
		return 0;
	}
	if (!hotspot_names__read_field(mem, nm, l->blob_code, &p->code) || !hotspot_names__read_field(mem, nm, l->blob_code_end, &p->code_end))
		return HOTSPOT_UNRESOLVED_READ;
	if (p->code < nm || p->code_end < p->code || p->code_end - nm > (uint64_t)size)
		return HOTSPOT_UNRESOLVED_INVALID;
	return 0;
}

/* JDK 17 to 22: pcs, scopes and metadata inside the nmethod, by offsets from its start. */
static int header_parts(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nm, struct names_nm_parts *p)
{
	int64_t pcs, pcs_end, metadata;

	if (!read_int(mem, nm, l->nm_pcs, &pcs) || !read_int(mem, nm, l->nm_pcs_end, &pcs_end) ||
	    !read_int(mem, nm, l->nm_metadata, &metadata) || !hotspot_names__read_field(mem, nm, l->nm_scopes, &p->scopes))
		return HOTSPOT_UNRESOLVED_READ;
	if (pcs < 0 || pcs_end < pcs || metadata < 0 || pcs_end > MAX_BLOB || metadata > MAX_BLOB)
		return HOTSPOT_UNRESOLVED_INVALID;
	p->pcs = nm + (uint64_t)pcs;
	p->pcs_end = nm + (uint64_t)pcs_end;
	p->scopes_end = p->pcs;
	p->metadata = nm + (uint64_t)metadata;
	p->metadata_end = p->scopes;
	return 0;
}

/* JDK 25: pcs and scopes in the immutable data, metadata after the relocations in the mutable data. */
static int immutable_parts(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nm, struct names_nm_parts *p)
{
	uint64_t imm, mutable;
	int64_t imm_size, pcs, scopes, mutable_size, relocs;

	if (!hotspot_names__read_field(mem, nm, l->nm_immutable, &imm) || !read_int(mem, nm, l->nm_immutable_size, &imm_size) ||
	    !read_int(mem, nm, l->nm_pcs, &pcs) || !read_int(mem, nm, l->nm_scopes_offset, &scopes) ||
	    !hotspot_names__read_field(mem, nm, l->blob_mutable, &mutable) ||
	    !read_int(mem, nm, l->blob_mutable_size, &mutable_size) ||
	    !read_int(mem, nm, l->blob_relocation_size, &relocs))
		return HOTSPOT_UNRESOLVED_READ;
	/* A native wrapper has no immutable data, and its pointer need not be aligned (nor the mutable one, when empty). */
	if ((imm_size && !plausible(imm)) || imm_size < 0 || imm_size > MAX_BLOB || pcs < 0 || scopes < pcs ||
	    scopes > imm_size || (mutable_size && !plausible(mutable)) || mutable_size < 0 || mutable_size > MAX_BLOB ||
	    relocs < 0 || relocs > mutable_size)
		return HOTSPOT_UNRESOLVED_INVALID;
	p->pcs = imm + (uint64_t)pcs;
	p->pcs_end = imm + (uint64_t)scopes;
	p->scopes = p->pcs_end;
	p->scopes_end = imm + (uint64_t)imm_size;
	p->metadata = mutable + (uint64_t)relocs;
	p->metadata_end = mutable + (uint64_t)mutable_size;
	return 0;
}

static int nmethod_parts(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nm, struct names_nm_parts *p)
{
	int r = code_bounds(l, mem, nm, p);

	if (r)
		return r;
	r = l->style == NAMES_NMETHOD_IMMUTABLE ? immutable_parts(l, mem, nm, p) : header_parts(l, mem, nm, p);
	if (r)
		return r;
	if (p->pcs_end < p->pcs || (p->pcs_end - p->pcs) % l->pc_desc_size ||
	    (p->pcs_end - p->pcs) / l->pc_desc_size > MAX_PC_DESCS || p->scopes_end < p->scopes ||
	    p->scopes_end - p->scopes > MAX_SCOPES_BYTES || p->metadata_end < p->metadata ||
	    (p->metadata_end - p->metadata) / 8 > MAX_METADATA)
		return HOTSPOT_UNRESOLVED_INVALID;
	return 0;
}

/* An int field of a copy of the target's memory at base, sign-extended from its width. */
static int64_t int_in(const uint8_t *base, struct names_field f)
{
	uint64_t v = 0;

	memcpy(&v, base + f.offset, f.size <= sizeof(v) ? f.size : sizeof(v)); /* little-endian, as x86-64 */
	return sign_extend(v, f.size);
}

/* Bytes from an nmethod's start that hold every header field a lookup reads (all below HOTSPOT_WINDOW_MAX). */
static size_t header_span(const struct names_layout *l)
{
	return NAMES_FIELDS_SPAN(l->blob_size, l->blob_code, l->blob_code_end, l->nm_method, l->nm_compile_id,
				 l->nm_comp_level, l->nm_pcs, l->nm_pcs_end, l->nm_scopes, l->nm_metadata,
				 l->nm_immutable, l->nm_immutable_size, l->nm_scopes_offset, l->blob_mutable,
				 l->blob_mutable_size, l->blob_relocation_size);
}

/*
 * Copies the PcDescs of nm (pc and scope offsets) in one read: false when
 * they cannot be read, and nm->copied stays false.
 */
static bool copy_pc_descs(const struct names_layout *l, struct hotspot_memory *mem, struct names_nmethod *nm)
{
	size_t bytes = (size_t)(nm->parts.pcs_end - nm->parts.pcs);
	uint8_t *table = malloc(bytes ? bytes : 1);
	bool ok = table && hotspot_memory__read(mem, nm->parts.pcs, table, bytes);

	for (uint32_t i = 0; ok && i < nm->nr_pcs; i++) {
		nm->pcs[i].pc = int_in(table + i * l->pc_desc_size, l->pc_offset);
		nm->pcs[i].scope = int_in(table + i * l->pc_desc_size, l->pc_scope);
	}
	free(table);
	nm->copied = ok;
	return ok;
}

int hotspot_scopes__nmethod(const struct names_layout *l, struct hotspot_memory *mem, uint64_t nmethod, uint64_t cookie,
		   struct names_nmethod **out)
{
	struct hotspot_window header;
	struct names_nmethod head = { .nmethod = nmethod }, *nm;
	uint64_t lvl;
	size_t nr_pcs, copied;
	int64_t id;
	int r;

	*out = NULL;
	if (!plausible(nmethod))
		return HOTSPOT_UNRESOLVED_INVALID;
	/* A real nmethod's header is followed by its code: a header that cannot be read whole is no nmethod's. */
	if (!hotspot_memory__window_open(&header, mem, nmethod, header_span(l)))
		return HOTSPOT_UNRESOLVED_READ;
	if (!read_int(&header.mem, nmethod, l->nm_compile_id, &id))
		return HOTSPOT_UNRESOLVED_READ;
	if (id != (int64_t)(int32_t)cookie)
		return HOTSPOT_UNRESOLVED_MOVED;
	if (!hotspot_names__read_field(&header.mem, nmethod, l->nm_method, &head.method) ||
	    !hotspot_names__read_field(&header.mem, nmethod, l->nm_comp_level, &lvl))
		return HOTSPOT_UNRESOLVED_READ;
	if (!plausible(head.method))
		return HOTSPOT_UNRESOLVED_INVALID;
	head.level = (uint32_t)lvl;
	r = nmethod_parts(l, &header.mem, nmethod, &head.parts);
	if (r)
		return r;
	nr_pcs = (head.parts.pcs_end - head.parts.pcs) / l->pc_desc_size;
	copied = nr_pcs <= NAMES_MAX_PCS_COPIED ? nr_pcs : 0;
	if (!(nm = malloc(sizeof(*nm) + copied * sizeof(nm->pcs[0]))))
		return HOTSPOT_UNRESOLVED_READ;
	*nm = head;
	nm->nr_pcs = (uint32_t)nr_pcs;
	if (copied && !copy_pc_descs(l, mem, nm)) {
		free(nm);
		return HOTSPOT_UNRESOLVED_READ;
	}
	/* Flushed while it was read: what was read may belong to another nmethod. */
	if (!read_int(mem, nmethod, l->nm_compile_id, &id) || id != (int64_t)(int32_t)cookie) {
		free(nm);
		return HOTSPOT_UNRESOLVED_MOVED;
	}
	*out = nm;
	return 0;
}

/* The first copied PcDesc at or after pc_offset: its scope offset (0 when none). */
static int64_t copied_scope(const struct names_nmethod *nm, int64_t pc_offset)
{
	uint32_t lo = 0, hi = nm->nr_pcs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (nm->pcs[mid].pc < pc_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nm->nr_pcs || nm->pcs[lo].pc == INT_MAX)
		return 0;
	return nm->pcs[lo].scope;
}

/*
 * The scope offset of the first PcDesc at or after pc_offset into *scope
 * (0 when none), from the target: a binary search reading one PcDesc a
 * step, so at most 21 reads. Order is HotSpot's invariant; were it broken,
 * the search still ends, and the scope it yields is checked like any other.
 */
static int read_scope(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nm_parts *p,
		      int64_t pc_offset, int64_t *scope)
{
	uint64_t lo = 0, hi = (p->pcs_end - p->pcs) / l->pc_desc_size;
	int64_t off;

	*scope = 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (!read_int(mem, p->pcs + mid * l->pc_desc_size, l->pc_offset, &off))
			return HOTSPOT_UNRESOLVED_READ;
		if (off < pc_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == (p->pcs_end - p->pcs) / l->pc_desc_size)
		return 0;
	if (!read_int(mem, p->pcs + lo * l->pc_desc_size, l->pc_offset, &off) ||
	    !read_int(mem, p->pcs + lo * l->pc_desc_size, l->pc_scope, scope))
		return HOTSPOT_UNRESOLVED_READ;
	if (off == INT_MAX)
		*scope = 0;
	return 0;
}

int hotspot_scopes__offset_at(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nmethod *nm,
		     uint64_t pc, uint64_t *scope)
{
	int64_t off = 0;
	int r;

	*scope = 0;
	if (pc < nm->parts.code || pc >= nm->parts.code_end)
		return HOTSPOT_UNRESOLVED_INVALID;
	if (nm->copied) {
		off = copied_scope(nm, (int64_t)(pc - nm->parts.code));
	} else {
		r = read_scope(l, mem, &nm->parts, (int64_t)(pc - nm->parts.code), &off);
		if (r)
			return r;
	}
	/* The last sentinel (INT_MAX) has no scope; a negative offset is garbage. */
	if (off < 0)
		return HOTSPOT_UNRESOLVED_INVALID;
	*scope = (uint64_t)off;
	return 0;
}

/* The Method * at metadata index idx (1-based). */
static int metadata_at(struct hotspot_memory *mem, const struct names_nm_parts *p, uint32_t idx, uint64_t *method)
{
	if (idx == 0 || idx > (p->metadata_end - p->metadata) / 8)
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_memory__u64(mem, p->metadata + 8ull * (idx - 1), method))
		return HOTSPOT_UNRESOLVED_READ;
	return plausible(*method) ? 0 : HOTSPOT_UNRESOLVED_INVALID;
}

/*
 * The chain of scopes from the one at offset, innermost first. Senders
 * lie before their callees, mostly close by: the scopes data just before
 * offset, and the metadata's first entries, are copied in one gather.
 */
static int scope_chain(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nm_parts *p,
		       uint64_t offset, struct names_scope *out, int max, int *nr)
{
	uint64_t bound = p->scopes_end - p->scopes;
	uint64_t end = offset + SCOPE_HEADER_MAX < bound ? offset + SCOPE_HEADER_MAX : bound;
	uint64_t start = end > HOTSPOT_WINDOW_MAX ? end - HOTSPOT_WINDOW_MAX : 0;
	struct hotspot_window scopes, metadata;
	struct hotspot_window *const ws[] = { &scopes, &metadata };
	const uint64_t at[] = { p->scopes + start, p->metadata };
	const size_t lens[] = { end - start, p->metadata_end - p->metadata };
	int n = 0;

	if (offset >= bound)
		return HOTSPOT_UNRESOLVED_INVALID;
	hotspot_memory__windows_open(ws, mem, at, lens, 2);
	while (offset) {
		uint8_t buf[SCOPE_HEADER_MAX];
		size_t len = SCOPE_HEADER_MAX, pos = 0;
		uint32_t sender, idx, bci;
		int r;

		/* Strictly falling offsets: no loop, and the walk ends. */
		if (offset >= bound || n == max)
			return HOTSPOT_UNRESOLVED_INVALID;
		if (len > bound - offset)
			len = bound - offset;
		if (!hotspot_memory__read(&scopes.mem, p->scopes + offset, buf, len))
			return HOTSPOT_UNRESOLVED_READ;
		if (!hotspot_lines__u5(buf, len, &pos, l->u5_excluded, &sender) || !hotspot_lines__u5(buf, len, &pos, l->u5_excluded, &idx) ||
		    !hotspot_lines__u5(buf, len, &pos, l->u5_excluded, &bci))
			return HOTSPOT_UNRESOLVED_INVALID;
		r = metadata_at(&metadata.mem, p, idx, &out[n].method);
		if (r)
			return r;
		out[n].const_method = 0;
		out[n].bci = (int32_t)(bci + (uint32_t)l->invocation_entry_bci);
		n++;
		bound = offset;
		offset = sender;
	}
	*nr = n;
	return 0;
}

int hotspot_scopes__of(const struct names_layout *l, struct hotspot_memory *mem, const struct names_nmethod *nm,
	      uint64_t scope, uint64_t cookie, struct names_scope *out, int max, int *nr)
{
	struct hotspot_span spans[HOTSPOT_GATHER_MAX];
	uint64_t id_field = 0;
	int r;

	if (max < 1)
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!scope) {
		out[0] = (struct names_scope){ .method = nm->method, .bci = -1 };
		*nr = 1;
	} else {
		r = scope_chain(l, mem, &nm->parts, scope, out, max, nr);
		if (r)
			return r;
	}
	/*
	 * Each scope's ConstMethod (the cookie of its names), then the compile
	 * id once more, in one gather: flushed since it was read, the nmethod's
	 * scopes may have been another's.
	 */
	if (*nr >= HOTSPOT_GATHER_MAX || l->method_const.size > 8 || l->nm_compile_id.size > 8)
		return HOTSPOT_UNRESOLVED_INVALID;
	for (int i = 0; i < *nr; i++) {
		out[i].const_method = 0;
		spans[i] = (struct hotspot_span){ .addr = out[i].method + l->method_const.offset,
						  .buf = &out[i].const_method, .len = l->method_const.size };
	}
	spans[*nr] = (struct hotspot_span){ .addr = nm->nmethod + l->nm_compile_id.offset, .buf = &id_field,
					    .len = l->nm_compile_id.size };
	hotspot_memory__gather(mem, spans, (size_t)*nr + 1);
	for (int i = 0; i <= *nr; i++)
		if (!spans[i].ok)
			return HOTSPOT_UNRESOLVED_READ;
	return sign_extend(id_field, l->nm_compile_id.size) == (int64_t)(int32_t)cookie ? 0 : HOTSPOT_UNRESOLVED_MOVED;
}
