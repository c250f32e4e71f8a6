/*
 * layout: struct jbpf_hotspot_jvm from a JVM's VMStructs and memory
 * (contract in layout.h).
 *
 * Offsets come from the copy of the tables (hotspot/vmstructs.c); each is
 * taken only when VMStructs gives its field the size the walker assumes,
 * each object's fields must end inside the size VMStructs gives its type,
 * and each offset handed to BPF must fit its __u16. What differs between
 * JDK 17 and JDK 25 (seen in their tables):
 *
 *                            JDK 17                    JDK 25
 *   code start               CodeBlob::_code_begin     CodeBlob::_code_offset (int)
 *   _frame_complete_offset   int                       int16_t
 *   an nmethod is told by    CodeBlob::_name           CodeBlob::_kind == CodeBlobKind::Nmethod
 *   Method *                 CompiledMethod::_method   nmethod::_method
 *   HeapBlock                16 bytes                  8 bytes
 *
 * Values are read from the process once, here: the code cache's bounds,
 * the code heaps (CodeCache::_heaps, each CodeHeap read whole in one
 * read), the interpreter's StubQueue and the call stub's return address.
 * Each is checked to be what a running JVM holds (heaps inside the code
 * cache and apart, 2^4..2^16-byte segments, the interpreter inside the
 * code cache and at most LAYOUT_MAX_INTERPRETER bytes) before BPF trusts
 * it. A JVM still starting (the code cache, its heaps, the interpreter or
 * the call stub not set yet: still 0) is told apart, so that the caller
 * tries again later without calling it not understood.
 */
#include "hotspot/layout.h"

#include "hotspot/classes.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ReservedCodeCacheSize is at most 2 GiB; twice that is no code cache. */
#define LAYOUT_MAX_CODE_CACHE (4ull << 30)
/* The template interpreter is a few hundred KiB (InterpreterCodeSize); 64 MiB is not one. */
#define LAYOUT_MAX_INTERPRETER (64ull << 20)
/* A CodeHeap is ~350 bytes; it is read whole into a buffer this large. */
#define LAYOUT_MAX_HEAP_OBJECT 1024
#define LAYOUT_MIN_SEGMENT_SHIFT 4
#define LAYOUT_MAX_SEGMENT_SHIFT 16

struct reader {
	const struct hotspot_vm *vm;
	struct hotspot_memory *mem;
	char *err;
	size_t err_size;
	bool starting; /* refused for a value the JVM sets as it starts, still 0 */
};

static bool refuse(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool refuse(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->err_size) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->err_size, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* Refuses for a value still 0 that a JVM sets as it starts: it may read later. */
static bool not_yet(struct reader *r, const char *what)
{
	r->starting = true;
	return refuse(r, "%s is not set yet", what);
}

/* ---- offsets ---- */

/* type::name's offset, when VMStructs gives it size_a or size_b bytes (its size into *width). */
static bool field(struct reader *r, const char *type, const char *name, uint64_t size_a, uint64_t size_b,
		  uint64_t *offset, uint64_t *width)
{
	uint64_t size = 0;

	if (!hotspot_vm__field(r->vm, type, name, offset, &size))
		return refuse(r, "VMStructs lists no %s::%s", type, name);
	if (!size || (size != size_a && size != size_b))
		return refuse(r, "%s::%s is %llu bytes", type, name, (unsigned long long)size);
	if (width)
		*width = size;
	return true;
}

/* The end of [offset, offset + width), kept as the largest in *extent. */
static void extend(uint64_t *extent, uint64_t offset, uint64_t width)
{
	if (offset + width > *extent)
		*extent = offset + width;
}

/* Whether fields ending at extent lie inside type (its size, from VMStructs, into *size). */
static bool inside(struct reader *r, const char *type, uint64_t extent, uint64_t *size)
{
	uint64_t got = hotspot_vm__type_size(r->vm, type);

	if (size)
		*size = got;
	if (!got)
		return refuse(r, "VMStructs gives no size of %s", type);
	if (extent > got)
		return refuse(r, "a field of %s ends at byte %llu, past its %llu bytes", type,
			      (unsigned long long)extent, (unsigned long long)got);
	return true;
}

/* v into a __u16 of the layout, or a refusal naming what. */
static bool u16_of(struct reader *r, const char *what, uint64_t v, __u16 *out)
{
	if (v > UINT16_MAX)
		return refuse(r, "%s (%llu) does not fit 16 bits", what, (unsigned long long)v);
	*out = (__u16)v;
	return true;
}

/* ---- values ---- */

/* The word at the static field type::name, read from the process. */
static bool static_word(struct reader *r, const char *type, const char *name, uint64_t *value)
{
	uint64_t addr;

	if (!hotspot_vm__static(r->vm, type, name, &addr) || !addr)
		return refuse(r, "VMStructs lists no static %s::%s", type, name);
	if (!hotspot_memory__u64(r->mem, addr, value))
		return refuse(r, "%s::%s is unreadable at 0x%llx", type, name, (unsigned long long)addr);
	return true;
}

/* Whether [low, high) lies inside the code cache. */
static bool in_code_cache(const struct jbpf_hotspot_jvm *out, uint64_t low, uint64_t high)
{
	return low >= out->code_low && low < high && high <= out->code_high;
}

static bool read_code_cache(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t low, high;

	if (!static_word(r, "CodeCache", "_low_bound", &low) || !static_word(r, "CodeCache", "_high_bound", &high))
		return false;
	if (!low || !high)
		return not_yet(r, "the code cache");
	if (high <= low || high - low > LAYOUT_MAX_CODE_CACHE)
		return refuse(r, "the code cache [0x%llx, 0x%llx) is not a code cache",
			      (unsigned long long)low, (unsigned long long)high);
	out->code_low = low;
	out->code_high = high;
	return true;
}

/* ---- CodeBlob, nmethod, Method ---- */

/* CodeBlob's fields the walker reads; their end into *extent. */
static bool read_blob(struct reader *r, struct jbpf_hotspot_jvm *out, uint64_t *extent)
{
	uint64_t size, frame_size, complete, complete_width, code, kind, name = 0;
	int32_t kind_nmethod;

	if (!field(r, "CodeBlob", "_size", 4, 4, &size, NULL) ||
	    !field(r, "CodeBlob", "_frame_size", 4, 4, &frame_size, NULL) ||
	    !field(r, "CodeBlob", "_frame_complete_offset", 4, 2, &complete, &complete_width))
		return false;
	extend(extent, size, 4);
	extend(extent, frame_size, 4);
	extend(extent, complete, complete_width);
	out->code_is_offset = !hotspot_vm__field(r->vm, "CodeBlob", "_code_begin", &code, NULL);
	if (out->code_is_offset ? !field(r, "CodeBlob", "_code_offset", 4, 4, &code, NULL)
				: !field(r, "CodeBlob", "_code_begin", 8, 8, &code, NULL))
		return false;
	extend(extent, code, out->code_is_offset ? 4 : 8);
	out->by_kind = hotspot_vm__int(r->vm, "CodeBlobKind::Nmethod", &kind_nmethod);
	if (out->by_kind) {
		if (kind_nmethod < 0 || kind_nmethod > UINT8_MAX)
			return refuse(r, "CodeBlobKind::Nmethod is %d, not one byte", kind_nmethod);
		if (!field(r, "CodeBlob", "_kind", 1, 1, &kind, NULL))
			return false;
		extend(extent, kind, 1);
		out->kind_nmethod = (__u8)kind_nmethod;
		if (!u16_of(r, "CodeBlob::_kind", kind, &out->blob_kind))
			return false;
	}
	/* The name tells an nmethod where there is no kind; elsewhere it is kept when listed, for names. */
	if (!out->by_kind || hotspot_vm__field(r->vm, "CodeBlob", "_name", &name, NULL)) {
		if (!field(r, "CodeBlob", "_name", 8, 8, &name, NULL))
			return false;
		extend(extent, name, 8);
	}
	out->frame_complete_width = (__u8)complete_width;
	return inside(r, "CodeBlob", *extent, NULL) && u16_of(r, "CodeBlob::_size", size, &out->blob_size) &&
	       u16_of(r, "CodeBlob::_frame_size", frame_size, &out->blob_frame_size) &&
	       u16_of(r, "CodeBlob::_frame_complete_offset", complete, &out->blob_frame_complete) &&
	       u16_of(r, "CodeBlob's code", code, &out->blob_code) && u16_of(r, "CodeBlob::_name", name, &out->blob_name);
}

/* nmethod's Method * (CompiledMethod's on JDK 17) and compile id; the CodeBlob's fields end at extent. */
static bool read_nmethod(struct reader *r, struct jbpf_hotspot_jvm *out, uint64_t extent)
{
	uint64_t method, compile_id;

	/* JDK 17 lists it in CompiledMethod, nmethod's base; either way it is an offset in the nmethod. */
	if (hotspot_vm__field(r->vm, "nmethod", "_method", &method, NULL) ? !field(r, "nmethod", "_method", 8, 8, &method, NULL)
									: !field(r, "CompiledMethod", "_method", 8, 8, &method, NULL))
		return false;
	if (!field(r, "nmethod", "_compile_id", 4, 4, &compile_id, NULL))
		return false;
	extend(&extent, method, 8);
	extend(&extent, compile_id, 4);
	return inside(r, "nmethod", extent, NULL) && u16_of(r, "nmethod's _method", method, &out->nm_method) &&
	       u16_of(r, "nmethod::_compile_id", compile_id, &out->nm_compile_id) &&
	       u16_of(r, "nmethod's header", extent, &out->nm_header);
}

/*
 * Where an nmethod's verified entry is (JBPF_HOTSPOT_ENTRY), for the
 * walker's reading of a frame caught in its prologue. Optional: without
 * it that frame is judged by the words at its sp alone.
 */
static void read_verified_entry(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t entry, size = 0;
	bool is_offset = hotspot_vm__field(r->vm, "nmethod", "_verified_entry_offset", &entry, &size);

	if (!is_offset && !hotspot_vm__field(r->vm, "nmethod", "_verified_entry_point", &entry, &size))
		return;
	if (size != (is_offset ? 2 : 8) || entry + size > hotspot_vm__type_size(r->vm, "nmethod") ||
	    entry > UINT16_MAX)
		return;
	out->nm_verified_entry = (__u16)entry;
	out->flags |= JBPF_HOTSPOT_ENTRY | (is_offset ? JBPF_HOTSPOT_ENTRY_OFFSET : 0);
}

/* What an interpreted frame's checks read: Method::_constMethod, ConstMethod::_code_size and sizeof(ConstMethod). */
static bool read_method(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t const_method, code_size, const_size;

	if (!field(r, "Method", "_constMethod", 8, 8, &const_method, NULL) ||
	    !field(r, "ConstMethod", "_code_size", 2, 2, &code_size, NULL) ||
	    !inside(r, "Method", const_method + 8, NULL) || !inside(r, "ConstMethod", code_size + 2, &const_size))
		return false;
	return u16_of(r, "Method::_constMethod", const_method, &out->method_const) &&
	       u16_of(r, "ConstMethod::_code_size", code_size, &out->const_code_size) &&
	       u16_of(r, "sizeof(ConstMethod)", const_size, &out->const_size);
}

/*
 * Where a Method * is listed by its class, for the walker's check of one
 * taken from a register (JBPF_HOTSPOT_METHOD_CHECK). Optional: a JVM that
 * lists less gets no such frames, nothing else.
 */
static void read_method_check(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t constants, idnum, holder, methods, length, data, sizes[5];

	/* A pointer's type may be missing from the types table (size 0): a pointer is 8 bytes. */
	if (!hotspot_vm__field(r->vm, "ConstMethod", "_constants", &constants, &sizes[0]) ||
	    !hotspot_vm__field(r->vm, "ConstMethod", "_method_idnum", &idnum, &sizes[1]) ||
	    !hotspot_vm__field(r->vm, "ConstantPool", "_pool_holder", &holder, &sizes[2]) ||
	    !hotspot_vm__field(r->vm, "InstanceKlass", "_methods", &methods, &sizes[3]) ||
	    /* Every Array<T> has its _length first; HotSpot lists it for Array<int>. */
	    (!hotspot_vm__field(r->vm, "Array<Method*>", "_length", &length, &sizes[4]) &&
	     !hotspot_vm__field(r->vm, "Array<int>", "_length", &length, &sizes[4])) ||
	    !hotspot_vm__field(r->vm, "Array<Method*>", "_data", &data, NULL) || (sizes[0] && sizes[0] != 8) ||
	    sizes[1] != 2 || (sizes[2] && sizes[2] != 8) || (sizes[3] && sizes[3] != 8) || sizes[4] != 4)
		return;
	if (constants + 8 > hotspot_vm__type_size(r->vm, "ConstMethod") ||
	    idnum + 2 > hotspot_vm__type_size(r->vm, "ConstMethod") ||
	    holder + 8 > hotspot_vm__type_size(r->vm, "ConstantPool") ||
	    methods + 8 > hotspot_vm__type_size(r->vm, "InstanceKlass") || length > UINT16_MAX || data > UINT16_MAX)
		return;
	out->const_constants = (__u16)constants;
	out->const_idnum = (__u16)idnum;
	out->pool_holder = (__u16)holder;
	out->klass_methods = (__u16)methods;
	out->array_length = (__u16)length;
	out->array_data = (__u16)data;
	out->flags |= JBPF_HOTSPOT_METHOD_CHECK;
}

/*
 * Where the class of a monitor a thread waits for is (JBPF_HOTSPOT_LOCKS).
 * Optional: a JVM that lists less gets its lock waits without their
 * monitors' classes. The compressed class pointers' base and shift are
 * read from the process (JDK 17's CompressedKlassPointers::_narrow_klass,
 * JDK 25's CompressedKlassPointers).
 */
static void read_locks(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t pending, waiting, object, klass, base, shift_addr, klass_base, sizes[3];
	int32_t shift;

	if (!hotspot_vm__field(r->vm, "JavaThread", "_current_pending_monitor", &pending, &sizes[0]) ||
	    !hotspot_vm__field(r->vm, "JavaThread", "_current_waiting_monitor", &waiting, &sizes[1]) ||
	    !hotspot_vm__field(r->vm, "ObjectMonitor", "_object", &object, NULL) ||
	    !hotspot_vm__field(r->vm, "oopDesc", "_metadata._compressed_klass", &klass, &sizes[2]) ||
	    (sizes[0] && sizes[0] != 8) || (sizes[1] && sizes[1] != 8) || (sizes[2] && sizes[2] != 4) ||
	    pending > UINT16_MAX || waiting > UINT16_MAX || object > UINT16_MAX || klass > UINT16_MAX)
		return;
	if (!(hotspot_vm__static(r->vm, "CompressedKlassPointers", "_narrow_klass._base", &base) &&
	      hotspot_vm__static(r->vm, "CompressedKlassPointers", "_narrow_klass._shift", &shift_addr)) &&
	    !(hotspot_vm__static(r->vm, "CompressedKlassPointers", "_base", &base) &&
	      hotspot_vm__static(r->vm, "CompressedKlassPointers", "_shift", &shift_addr)))
		return;
	if (!hotspot_memory__u64(r->mem, base, &klass_base) ||
	    !hotspot_memory__read(r->mem, shift_addr, &shift, sizeof(shift)) || shift < 0 || shift > 32)
		return;
	out->thread_pending_monitor = (__u16)pending;
	out->thread_waiting_monitor = (__u16)waiting;
	out->monitor_object = (__u16)object;
	out->oop_klass = (__u16)klass;
	out->klass_shift = (__u32)shift;
	out->klass_base = klass_base;
	out->flags |= JBPF_HOTSPOT_LOCKS;
}

/*
 * Where virtual threads meet their carriers (JBPF_HOTSPOT_CONTINUATIONS,
 * JDK 21 and later): JavaThread::_cont_entry, and the return address
 * into Continuation.enterSpecial, which HotSpot keeps in
 * ContinuationEntry::_return_pc once it made that method's code (at its
 * start: a JVM read before has no marker). Optional, as for the locks.
 */
static void read_continuations(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t entry, size = 0, addr, return_pc;

	if (!hotspot_vm__field(r->vm, "JavaThread", "_cont_entry", &entry, &size) || size != 8 ||
	    entry > UINT16_MAX || !hotspot_vm__static(r->vm, "ContinuationEntry", "_return_pc", &addr) ||
	    !hotspot_memory__u64(r->mem, addr, &return_pc) || !return_pc ||
	    !in_code_cache(out, return_pc, return_pc + 1))
		return;
	out->thread_cont_entry = (__u16)entry;
	out->cont_return_pc = return_pc;
	out->flags |= JBPF_HOTSPOT_CONTINUATIONS;
}

/* The offset of klass's instance field name of signature, if it fits the layout's __u16. */
static bool chunk_field(struct reader *r, uint64_t klass, const char *name, const char *signature, __u16 *out)
{
	uint32_t offset;

	if (hotspot_classes__instance_field(r->vm, r->mem, klass, name, signature, &offset, NULL, 0) || offset > UINT16_MAX)
		return false;
	*out = (__u16)offset;
	return true;
}

/*
 * Where a virtual thread's name is (JBPF_HOTSPOT_VTHREAD_NAMES): Thread.name
 * (thread_klass: java.lang.Thread's Klass, found by read_chunks),
 * String.value and .coder, and an array's length, an int right after a
 * compressed class pointer at 8 (the header the monitor class is read
 * from). Optional.
 */
static void read_vthread_names(struct reader *r, struct jbpf_hotspot_jvm *out, uint64_t thread_klass)
{
	uint64_t string_klass;

	if (out->oop_klass != 8 || hotspot_classes__find(r->vm, r->mem, "java/lang/String", &string_klass, NULL, 0) ||
	    !chunk_field(r, thread_klass, "name", "Ljava/lang/String;", &out->thread_name) ||
	    !chunk_field(r, string_klass, "value", "[B", &out->string_value) ||
	    !chunk_field(r, string_klass, "coder", "B", &out->string_coder))
		return;
	out->byte_array_length = (__u16)(out->oop_klass + 4);
	out->flags |= JBPF_HOTSPOT_VTHREAD_NAMES;
}

/*
 * Where a virtual thread's frozen frames are (JBPF_HOTSPOT_CHUNKS), read
 * from the classes themselves (hotspot/classes.h): no VMStructs entry
 * lists these Java fields. Optional, and only where oops can be read
 * outside a safepoint as they are: with compressed oops or whole ones,
 * not ZGC's coloured pointers nor Shenandoah's forwarded objects.
 */
static void read_chunks(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t vthread, size = 0, layout_helper, base_addr, shift_addr, base = 0;
	uint64_t thread_klass, vthread_klass, cont_klass, chunk_klass;
	bool narrow, zgc = false, shenandoah = false;
	int32_t helper, shift = 0;

	if (!(out->flags & JBPF_HOTSPOT_CONTINUATIONS) || !(out->flags & JBPF_HOTSPOT_LOCKS) ||
	    !hotspot_vm__field(r->vm, "JavaThread", "_vthread", &vthread, &size) || size != 8 ||
	    vthread > UINT16_MAX || !hotspot_vm__field(r->vm, "Klass", "_layout_helper", &layout_helper, NULL))
		return;
	if (hotspot_classes__flag_bool(r->vm, r->mem, "UseCompressedOops", &narrow, NULL, 0) ||
	    (!hotspot_classes__flag_bool(r->vm, r->mem, "UseZGC", &zgc, NULL, 0) && zgc) ||
	    (!hotspot_classes__flag_bool(r->vm, r->mem, "UseShenandoahGC", &shenandoah, NULL, 0) && shenandoah))
		return;
	if (narrow && (!hotspot_vm__static(r->vm, "CompressedOops", "_base", &base_addr) ||
		       !hotspot_vm__static(r->vm, "CompressedOops", "_shift", &shift_addr) ||
		       !hotspot_memory__u64(r->mem, base_addr, &base) ||
		       !hotspot_memory__read(r->mem, shift_addr, &shift, sizeof(shift)) || shift < 0 || shift > 8))
		return;
	if (hotspot_classes__find(r->vm, r->mem, "java/lang/Thread", &thread_klass, NULL, 0) ||
	    !chunk_field(r, thread_klass, "tid", "J", &out->thread_tid) ||
	    hotspot_classes__find(r->vm, r->mem, "java/lang/VirtualThread", &vthread_klass, NULL, 0) ||
	    hotspot_classes__find(r->vm, r->mem, "jdk/internal/vm/Continuation", &cont_klass, NULL, 0) ||
	    hotspot_classes__find(r->vm, r->mem, "jdk/internal/vm/StackChunk", &chunk_klass, NULL, 0))
		return;
	if (!chunk_field(r, vthread_klass, "cont", "Ljdk/internal/vm/Continuation;", &out->vthread_cont) ||
	    !chunk_field(r, cont_klass, "tail", "Ljdk/internal/vm/StackChunk;", &out->cont_tail) ||
	    !chunk_field(r, chunk_klass, "parent", "Ljdk/internal/vm/StackChunk;", &out->chunk_parent) ||
	    !chunk_field(r, chunk_klass, "sp", "I", &out->chunk_sp) ||
	    !chunk_field(r, chunk_klass, "bottom", "I", &out->chunk_bottom))
		return;
	/* An instance's size in bytes, the slow-path bit aside: where a StackChunk's frames begin. */
	if (!hotspot_memory__read(r->mem, chunk_klass + layout_helper, &helper, sizeof(helper)) || helper <= 0 ||
	    (helper & ~1) > UINT16_MAX || (helper & 7 & ~1))
		return;
	out->chunk_stack = (__u16)(helper & ~1);
	out->thread_vthread = (__u16)vthread;
	out->oop_narrow = narrow;
	out->oop_shift = (__u8)shift;
	out->oop_base = base;
	out->chunk_klass = chunk_klass;
	out->flags |= JBPF_HOTSPOT_CHUNKS;
	read_vthread_names(r, out, thread_klass);
	if (chunk_field(r, vthread_klass, "state", "I", &out->vthread_state)) {
		out->vthread_klass = vthread_klass;
		out->flags |= JBPF_HOTSPOT_UNMOUNTS;
	}
}

/* ---- the code heaps ---- */

/* Where a CodeHeap's fields are, and the other offsets reading CodeCache::_heaps needs. */
struct heap_offsets {
	uint64_t memory_low, memory_high, segmap_low, segmap_high, log2; /* in a CodeHeap */
	uint64_t heap_size;                                              /* sizeof(CodeHeap) */
	uint64_t array_len, array_data, array_size;                      /* in a GrowableArray */
};

/* The offsets of CodeHeap's, VirtualSpace's, GrowableArray's and HeapBlock's fields. */
static bool heap_offsets(struct reader *r, struct heap_offsets *h, struct jbpf_hotspot_jvm *out)
{
	uint64_t vs = hotspot_vm__type_size(r->vm, "VirtualSpace"), header = hotspot_vm__type_size(r->vm, "HeapBlock::Header");
	uint64_t memory, segmap, low, high, hb_header, used, block_size, extent = 0;

	if (!vs || !header)
		return refuse(r, "VMStructs gives no size of VirtualSpace or HeapBlock::Header");
	if (!field(r, "CodeHeap", "_memory", vs, vs, &memory, NULL) ||
	    !field(r, "CodeHeap", "_segmap", vs, vs, &segmap, NULL) ||
	    !field(r, "CodeHeap", "_log2_segment_size", 4, 4, &h->log2, NULL) ||
	    !field(r, "VirtualSpace", "_low", 8, 8, &low, NULL) || !field(r, "VirtualSpace", "_high", 8, 8, &high, NULL) ||
	    !field(r, "GrowableArrayBase", "_len", 4, 4, &h->array_len, NULL) ||
	    !field(r, "GrowableArray<int>", "_data", 8, 8, &h->array_data, NULL) ||
	    !field(r, "HeapBlock", "_header", header, header, &hb_header, NULL) ||
	    !field(r, "HeapBlock::Header", "_used", 1, 1, &used, NULL))
		return false;
	if (!inside(r, "VirtualSpace", low + 8, NULL) || !inside(r, "VirtualSpace", high + 8, NULL) ||
	    !inside(r, "HeapBlock::Header", used + 1, NULL) || !inside(r, "HeapBlock", hb_header + header, &block_size))
		return false;
	h->memory_low = memory + low;
	h->memory_high = memory + high;
	h->segmap_low = segmap + low;
	h->segmap_high = segmap + high;
	extend(&extent, memory, vs);
	extend(&extent, segmap, vs);
	extend(&extent, h->log2, 4);
	if (!inside(r, "CodeHeap", extent, &h->heap_size))
		return false;
	if (h->heap_size > LAYOUT_MAX_HEAP_OBJECT)
		return refuse(r, "a CodeHeap of %llu bytes", (unsigned long long)h->heap_size);
	extent = 0;
	extend(&extent, h->array_len, 4);
	extend(&extent, h->array_data, 8);
	if (!inside(r, "GrowableArray<int>", extent, &h->array_size))
		return false;
	return u16_of(r, "CodeHeap::_memory._high", h->memory_high, &out->heap_memory_high) &&
	       u16_of(r, "CodeHeap::_segmap._high", h->segmap_high, &out->heap_segmap_high) &&
	       u16_of(r, "HeapBlock::_header._used", hb_header + used, &out->block_used) &&
	       u16_of(r, "sizeof(HeapBlock)", block_size, &out->block_size);
}

static uint64_t word_at(const unsigned char *buf, uint64_t offset)
{
	uint64_t v;

	memcpy(&v, buf + offset, sizeof(v));
	return v;
}

/* Heap i at address heap, read whole and checked, into out->heaps[i]; the end of its memory into *high. */
static bool read_heap(struct reader *r, const struct heap_offsets *h, uint64_t heap, uint32_t i,
		      struct jbpf_hotspot_jvm *out, uint64_t *high_out)
{
	unsigned char buf[LAYOUT_MAX_HEAP_OBJECT];
	uint64_t low, high, segmap, segmap_high;
	int32_t shift;

	if (!heap || !hotspot_memory__read(r->mem, heap, buf, h->heap_size))
		return refuse(r, "code heap %u is unreadable at 0x%llx", i, (unsigned long long)heap);
	memcpy(&shift, buf + h->log2, sizeof(shift));
	low = word_at(buf, h->memory_low);
	high = word_at(buf, h->memory_high);
	segmap = word_at(buf, h->segmap_low);
	segmap_high = word_at(buf, h->segmap_high);
	if (shift < LAYOUT_MIN_SEGMENT_SHIFT || shift > LAYOUT_MAX_SEGMENT_SHIFT)
		return refuse(r, "code heap %u has segments of 2^%d bytes, not 2^%d..2^%d", i, shift,
			      LAYOUT_MIN_SEGMENT_SHIFT, LAYOUT_MAX_SEGMENT_SHIFT);
	if (!in_code_cache(out, low, high))
		return refuse(r, "code heap %u [0x%llx, 0x%llx) is not inside the code cache", i,
			      (unsigned long long)low, (unsigned long long)high);
	if (!segmap || segmap_high < segmap)
		return refuse(r, "code heap %u has no segment map", i);
	out->heaps[i] = (struct jbpf_hotspot_heap){
		.heap = heap, .low = low, .segmap = segmap, .log2_segment = (__u32)shift,
	};
	*high_out = high;
	return true;
}

/* Whether any two heaps' committed memory overlap (then one of them is not what it says). */
static bool heaps_overlap(struct reader *r, const uint64_t *highs, uint32_t nr,
			  const struct jbpf_hotspot_jvm *out)
{
	for (uint32_t i = 0; i < nr; i++)
		for (uint32_t j = i + 1; j < nr; j++)
			if (out->heaps[i].low < highs[j] && out->heaps[j].low < highs[i])
				return !refuse(r, "code heaps %u and %u overlap", i, j);
	return false;
}

/* CodeCache::_heaps, a GrowableArray<CodeHeap *>, and each heap in it. */
static bool read_heaps(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	unsigned char array[LAYOUT_MAX_HEAP_OBJECT];
	uint64_t heaps_array, data, heaps[JBPF_HOTSPOT_MAX_HEAPS], highs[JBPF_HOTSPOT_MAX_HEAPS];
	struct heap_offsets h;
	int32_t nr;

	if (!heap_offsets(r, &h, out) || !static_word(r, "CodeCache", "_heaps", &heaps_array))
		return false;
	if (!heaps_array)
		return not_yet(r, "CodeCache::_heaps");
	if (h.array_size > sizeof(array) || !hotspot_memory__read(r->mem, heaps_array, array, h.array_size))
		return refuse(r, "CodeCache::_heaps is unreadable at 0x%llx", (unsigned long long)heaps_array);
	memcpy(&nr, array + h.array_len, sizeof(nr));
	data = word_at(array, h.array_data);
	if (!nr)
		return not_yet(r, "the code heaps");
	if (nr < 1 || nr > JBPF_HOTSPOT_MAX_HEAPS)
		return refuse(r, "%d code heaps, not 1..%d", nr, JBPF_HOTSPOT_MAX_HEAPS);
	if (!data || !hotspot_memory__read(r->mem, data, heaps, (size_t)nr * sizeof(heaps[0])))
		return refuse(r, "CodeCache::_heaps' elements are unreadable at 0x%llx", (unsigned long long)data);
	for (int32_t i = 0; i < nr; i++)
		if (!read_heap(r, &h, heaps[i], (uint32_t)i, out, &highs[i]))
			return false;
	out->nr_heaps = (__u32)nr;
	return !heaps_overlap(r, highs, out->nr_heaps, out);
}

/* ---- the interpreter and the call stub ---- */

/* AbstractInterpreter::_code, a StubQueue: [_stub_buffer, + _buffer_limit). */
static bool read_interpreter(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t buffer_off, limit_off, queue, buffer, extent = 0;
	uint32_t raw_limit;
	int32_t limit;

	if (!field(r, "StubQueue", "_stub_buffer", 8, 8, &buffer_off, NULL) ||
	    !field(r, "StubQueue", "_buffer_limit", 4, 4, &limit_off, NULL))
		return false;
	extend(&extent, buffer_off, 8);
	extend(&extent, limit_off, 4);
	if (!inside(r, "StubQueue", extent, NULL) || !static_word(r, "AbstractInterpreter", "_code", &queue))
		return false;
	if (!queue)
		return not_yet(r, "the interpreter's StubQueue");
	if (!hotspot_memory__u64(r->mem, queue + buffer_off, &buffer) ||
	    !hotspot_memory__u32(r->mem, queue + limit_off, &raw_limit))
		return refuse(r, "the interpreter's StubQueue is unreadable at 0x%llx", (unsigned long long)queue);
	limit = (int32_t)raw_limit;
	if (limit <= 0 || (uint64_t)limit > LAYOUT_MAX_INTERPRETER)
		return refuse(r, "the interpreter's code is %d bytes", limit);
	if (!in_code_cache(out, buffer, buffer + (uint64_t)limit))
		return refuse(r, "the interpreter [0x%llx, +%d) is not inside the code cache", (unsigned long long)buffer,
			      limit);
	out->interp_low = buffer;
	out->interp_high = buffer + (uint64_t)limit;
	return true;
}

static bool read_call_stub(struct reader *r, struct jbpf_hotspot_jvm *out)
{
	uint64_t ret;

	if (!static_word(r, "StubRoutines", "_call_stub_return_address", &ret))
		return false;
	if (!ret)
		return not_yet(r, "the call stub");
	if (!in_code_cache(out, ret, ret + 1))
		return refuse(r, "the call stub's return address 0x%llx is not inside the code cache",
			      (unsigned long long)ret);
	out->call_stub_return = ret;
	return true;
}

int hotspot_layout__read(const struct hotspot_vm *vm, struct hotspot_memory *mem, struct jbpf_hotspot_jvm *out,
			char *err, size_t err_size)
{
	struct reader r = { .vm = vm, .mem = mem, .err = err, .err_size = err_size };
	struct jbpf_hotspot_jvm l = { 0 };
	uint64_t blob_extent = 0;

	if (!read_blob(&r, &l, &blob_extent) || !read_nmethod(&r, &l, blob_extent) || !read_method(&r, &l) ||
	    !read_code_cache(&r, &l) || !read_heaps(&r, &l) || !read_interpreter(&r, &l) || !read_call_stub(&r, &l))
		return r.starting ? HOTSPOT_LAYOUT_STARTING : -1;
	read_verified_entry(&r, &l);
	read_method_check(&r, &l);
	read_locks(&r, &l);
	read_continuations(&r, &l);
	read_chunks(&r, &l);
	*out = l;
	return 0;
}
