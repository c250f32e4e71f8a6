/*
 * codewalk_init: the layout codewalk.c walks with, read from HotSpot's
 * VMStructs outside signal context (contract in codewalk.h).
 *
 * JDK 17 and 25 differ in what they list: 25 gives each CodeBlob a kind
 * (CodeBlob::_kind, CodeBlobKind::Nmethod), 17 does not, and its nmethods
 * are told by their name ("nmethod", "native nmethod", in libjvm's
 * read-only data); 17 lists CodeBlob::_code_begin and an int
 * _frame_complete_offset, 25 _code_offset and an int16_t; 17 has
 * Method* in CompiledMethod, 25 in nmethod; _comp_level is an int on 17,
 * a one-byte CompLevel on 25; 17 keeps an nmethod's PcDescs and scopes
 * inside it, 25 in a block of its own (_immutable_data). Every offset is checked against the size
 * VMStructs gives its type, and each object's read extent is checked to
 * lie inside the object: anything else is refused as a whole, with one
 * line saying what was not understood.
 */
#include "codewalk.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

#include "vmstructs.h"

/* Written once, by the first codewalk__init (the agent's lock serialises its callers). */
static struct {
	bool tried;
	int status;
	char err[160];
} st;

/* The offset of type::field into *offset when its size is one of the two given, into *width. */
static bool field(const char *type, const char *name, uint64_t size_a, uint64_t size_b, uint64_t *offset,
		  uint32_t *width)
{
	uint64_t got;

	if (!vmstructs__field(type, name, offset, &got)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no %s::%s", type, name);
		return false;
	}
	if (got != size_a && got != size_b) {
		snprintf(st.err, sizeof(st.err), "%s::%s is %llu bytes", type, name, (unsigned long long)got);
		return false;
	}
	if (width)
		*width = (uint32_t)got;
	return true;
}

/* The end of the field at offset of width bytes, kept as the largest in *extent. */
static void extend(uint64_t *extent, uint64_t offset, uint64_t width)
{
	if (offset + width > *extent)
		*extent = offset + width;
}

/* Whether fields reaching extent bytes lie inside type's size (VMStructs'); else why, in st.why. */
static bool inside(const char *type, const char *article, uint64_t extent)
{
	uint64_t size = vmstructs__type_size(type);

	if (size && extent <= size)
		return true;
	snprintf(st.err, sizeof(st.err), "%s %s field lies outside its %llu bytes", article, type,
		 (unsigned long long)size);
	return false;
}

/* How a CodeBlob is read: its fields and how an nmethod is told. */
static bool read_blob(struct codewalk_layout *l)
{
	uint32_t w;
	uint64_t ext = 0;

	if (!field("CodeBlob", "_size", 4, 4, &l->blob_size, NULL) ||
	    !field("CodeBlob", "_frame_size", 4, 4, &l->blob_frame_size, NULL) ||
	    !field("CodeBlob", "_frame_complete_offset", 4, 2, &l->blob_frame_complete, &l->frame_complete_width))
		return false;
	extend(&ext, l->blob_size, 4);
	extend(&ext, l->blob_frame_size, 4);
	extend(&ext, l->blob_frame_complete, l->frame_complete_width);
	l->code_is_offset = !vmstructs__field("CodeBlob", "_code_begin", &l->blob_code, &(uint64_t){ 0 });
	if (l->code_is_offset && !field("CodeBlob", "_code_offset", 4, 4, &l->blob_code, NULL))
		return false;
	extend(&ext, l->blob_code, l->code_is_offset ? 4 : 8);
	l->by_kind = vmstructs__int_constant("CodeBlobKind::Nmethod", &l->kind_nmethod);
	if (l->by_kind) {
		if (!field("CodeBlob", "_kind", 1, 1, &l->blob_kind, &w))
			return false;
		extend(&ext, l->blob_kind, 1);
	} else {
		if (!field("CodeBlob", "_name", 8, 8, &l->blob_name, NULL))
			return false;
		extend(&ext, l->blob_name, 8);
	}
	if (!inside("CodeBlob", "a", ext))
		return false;
	l->blob_header = ext;
	return true;
}

/* The first JDK whose compressed streams exclude the zero byte (utilities/unsigned5.hpp). */
#define UNSIGNED5_EXCLUDES_FROM 20

/*
 * Where an nmethod keeps its PcDescs and scopes (JDK 17: offsets inside
 * it, and _scopes_data_begin; JDK 25: offsets in its _immutable_data),
 * PcDesc's fields, and the coding of the scopes' numbers, which follows
 * the VM's major version. *ext grows by the nmethod's fields read.
 */
static bool read_debug_info(struct codewalk_layout *l, uint64_t *ext)
{
	uintptr_t major_addr;
	int32_t major;

	if (!field("nmethod", "_scopes_pcs_offset", 4, 4, &l->nm_pcs, NULL))
		return false;
	extend(ext, l->nm_pcs, 4);
	l->immutable = vmstructs__field("nmethod", "_immutable_data", &l->nm_immutable, &(uint64_t){ 0 });
	if (l->immutable) {
		if (!field("nmethod", "_immutable_data", 8, 8, &l->nm_immutable, NULL) ||
		    !field("nmethod", "_immutable_data_size", 4, 4, &l->nm_immutable_size, NULL) ||
		    !field("nmethod", "_scopes_data_offset", 4, 4, &l->nm_scopes_offset, NULL))
			return false;
		extend(ext, l->nm_immutable, 8);
		extend(ext, l->nm_immutable_size, 4);
		extend(ext, l->nm_scopes_offset, 4);
	} else {
		if (!field("nmethod", "_dependencies_offset", 4, 4, &l->nm_pcs_end, NULL))
			return false;
		if (!vmstructs__field("nmethod", "_scopes_data_begin", &l->nm_scopes, &(uint64_t){ 0 }) &&
		    !field("CompiledMethod", "_scopes_data_begin", 8, 8, &l->nm_scopes, NULL))
			return false;
		extend(ext, l->nm_pcs_end, 4);
		extend(ext, l->nm_scopes, 8);
	}
	if (!field("PcDesc", "_pc_offset", 4, 4, &l->pc_offset, NULL) ||
	    !field("PcDesc", "_scope_decode_offset", 4, 4, &l->pc_scope, NULL))
		return false;
	l->pc_desc_size = vmstructs__type_size("PcDesc");
	if (!l->pc_desc_size || l->pc_desc_size > 64 || l->pc_offset + 4 > l->pc_desc_size ||
	    l->pc_scope + 4 > l->pc_desc_size) {
		snprintf(st.err, sizeof(st.err), "a PcDesc of %llu bytes", (unsigned long long)l->pc_desc_size);
		return false;
	}
	if (!vmstructs__static_field("Abstract_VM_Version", "_vm_major_version", &major_addr)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no Abstract_VM_Version::_vm_major_version");
		return false;
	}
	/* Set before any agent can run, never changed. */
	major = *(const int32_t *)major_addr;
	if (major < 8 || major > 1000) {
		snprintf(st.err, sizeof(st.err), "the VM's major version reads %d", major);
		return false;
	}
	l->u5_excluded = major >= UNSIGNED5_EXCLUDES_FROM;
	return true;
}

/* nmethod's Method* (CompiledMethod's on JDK 17), compilation level and debug information. */
static bool read_nmethod(struct codewalk_layout *l)
{
	uint64_t ext = l->blob_header;

	if (!vmstructs__field("nmethod", "_method", &l->nm_method, &(uint64_t){ 0 }) &&
	    !field("CompiledMethod", "_method", 8, 8, &l->nm_method, NULL))
		return false;
	if (!field("nmethod", "_comp_level", 4, 1, &l->nm_level, &l->level_width))
		return false;
	extend(&ext, l->nm_method, 8);
	extend(&ext, l->nm_level, l->level_width);
	if (!read_debug_info(l, &ext) || !inside("nmethod", "an", ext))
		return false;
	l->nm_header = ext;
	return true;
}

/* The code heaps (CodeCache::_heaps, a GrowableArray<CodeHeap*>) and how one is read. */
static bool read_heaps(struct codewalk_layout *l)
{
	uint64_t memory, segmap, log2, low, high, len, data, header, used;
	uint32_t w;
	uintptr_t heaps_addr;
	const char *array;
	int32_t nr;

	if (!field("CodeHeap", "_memory", vmstructs__type_size("VirtualSpace"), 0, &memory, NULL) ||
	    !field("CodeHeap", "_segmap", vmstructs__type_size("VirtualSpace"), 0, &segmap, NULL) ||
	    !field("CodeHeap", "_log2_segment_size", 4, 4, &log2, NULL) ||
	    !field("VirtualSpace", "_low", 8, 8, &low, NULL) || !field("VirtualSpace", "_high", 8, 8, &high, NULL) ||
	    !field("GrowableArrayBase", "_len", 4, 4, &len, NULL) ||
	    !field("GrowableArray<int>", "_data", 8, 8, &data, NULL) ||
	    !field("HeapBlock", "_header", vmstructs__type_size("HeapBlock::Header"), 0, &header, NULL) ||
	    !field("HeapBlock::Header", "_used", 1, 1, &used, &w))
		return false;
	if (!vmstructs__static_field("CodeCache", "_heaps", &heaps_addr)) {
		snprintf(st.err, sizeof(st.err), "VMStructs lists no CodeCache::_heaps");
		return false;
	}
	l->memory_high = memory + high;
	l->segmap_high = segmap + high;
	l->block_used = header + used;
	l->block_size = vmstructs__type_size("HeapBlock");
	/* Set up when the code cache is created, before any agent runs; never changed. */
	array = *(const char *const *)heaps_addr;
	nr = array ? *(const int32_t *)(array + len) : 0;
	if (nr <= 0 || nr > CODEWALK_MAX_HEAPS || !l->block_size) {
		snprintf(st.err, sizeof(st.err), "%d code heaps", nr);
		return false;
	}
	for (int32_t i = 0; i < nr; i++) {
		const char *const *elems = *(const char *const *const *)(array + data);
		const char *heap = elems ? elems[i] : NULL;
		int32_t shift;

		if (!heap)
			return false;
		shift = *(const int32_t *)(heap + log2);
		if (shift < 4 || shift > 16) {
			snprintf(st.err, sizeof(st.err), "a code segment of 2^%d bytes", shift);
			return false;
		}
		l->heaps[i] = (struct codewalk_heap){ .heap = (uintptr_t)heap,
						      .low = *(const uintptr_t *)(heap + memory + low),
						      .segmap = *(const uintptr_t *)(heap + segmap + low),
						      .log2_segment = (uint32_t)shift };
	}
	l->nr_heaps = (unsigned)nr;
	return true;
}

/* The interpreter's code: AbstractInterpreter::_code, a StubQueue. */
static bool read_interpreter(struct codewalk_layout *l)
{
	uint64_t buffer, limit;
	uintptr_t code_addr;
	const char *queue;

	if (!field("StubQueue", "_stub_buffer", 8, 8, &buffer, NULL) ||
	    !field("StubQueue", "_buffer_limit", 4, 4, &limit, NULL))
		return false;
	if (!vmstructs__static_field("AbstractInterpreter", "_code", &code_addr) ||
	    !(queue = *(const char *const *)code_addr)) {
		snprintf(st.err, sizeof(st.err), "no interpreter code (AbstractInterpreter::_code)");
		return false;
	}
	l->interp_low = *(const uintptr_t *)(queue + buffer);
	l->interp_high = l->interp_low + (uintptr_t)(uint32_t) * (const int32_t *)(queue + limit);
	return l->interp_low != 0;
}

struct segments {
	uintptr_t base;
	struct codewalk_layout *l;
};

/* libjvm's read-only loaded segments (names of CodeBlobs are there). */
static int find_segments(struct dl_phdr_info *info, size_t size, void *data)
{
	struct segments *s = data;

	if (info->dlpi_addr != s->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && s->l->nr_segments < CODEWALK_MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		s->l->seg_lo[s->l->nr_segments] = info->dlpi_addr + ph->p_vaddr;
		s->l->seg_hi[s->l->nr_segments++] = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
	}
	return 1;
}

static bool read_libjvm(struct codewalk_layout *l)
{
	uintptr_t heaps_addr;
	Dl_info info;
	struct segments s = { .l = l };

	if (l->by_kind)
		return true;
	if (!vmstructs__static_field("CodeCache", "_heaps", &heaps_addr) ||
	    !dladdr((void *)heaps_addr, &info) || !info.dli_fbase) {
		snprintf(st.err, sizeof(st.err), "libjvm's segments not found");
		return false;
	}
	/* dli_fbase is where the object was loaded, dlpi_addr its bias: equal for a shared library linked at 0. */
	s.base = (uintptr_t)info.dli_fbase;
	dl_iterate_phdr(find_segments, &s);
	if (!l->nr_segments) {
		snprintf(st.err, sizeof(st.err), "libjvm's segments not found");
		return false;
	}
	return true;
}

int codewalk__init(char *err, size_t err_size)
{
	struct codewalk_layout layout = { 0 };

	if (!st.tried) {
		st.tried = true;
		st.status = read_blob(&layout) && read_nmethod(&layout) && read_heaps(&layout) &&
				    read_interpreter(&layout) && read_libjvm(&layout)
			    ? 0
			    : -1;
		if (!st.status)
			codewalk__configure(&layout);
		else if (!st.err[0])
			snprintf(st.err, sizeof(st.err), "the code cache's layout");
	}
	if (st.status)
		snprintf(err, err_size, "%s", st.err);
	return st.status;
}
