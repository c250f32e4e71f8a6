/*
 * hostile_jvm: a process that plays a HotSpot JVM and lies about itself.
 *
 *   hostile_jvm LIBJVM MODE
 *
 * LIBJVM is tests/workloads/hostile_jvm_lib/libjvm.c built as a file named
 * libjvm.so: it exports the gHotSpotVM* variables and nothing else. This
 * program maps it (dlopen), builds in its own memory what those variables
 * describe, as JDK 17 describes it (VMStructs' offsets and sizes are
 * JDK 17's, as in tests/unit/test_hotspot_layout.c): the code cache, three
 * code heaps with their segment maps, the interpreter's StubQueue, the
 * call stub's return address, a Method with its ConstMethod, ConstantPool,
 * Klass and Symbols, and fills the variables in. Then threads run machine
 * code placed in that code cache, so that CPU samples land there and the
 * profiler's BPF walker steps through the frames MODE makes:
 *
 *   valid          a well-formed JVM: an nmethod whose frame (2 words)
 *                  returns to the call stub, whose rbp leads back to the
 *                  native thread that called it, and an interpreted frame
 *                  of hostile.Spin.interpret (bci 3) called the same way:
 *                  Java code is entered through the call stub only, as
 *                  HotSpot does, and the walker relies on it. Proves that the fake
 *                  is walked at all: without it the other modes prove
 *                  nothing.
 *   segmap-loop    segment maps whose hops never reach a block's head:
 *                  heap 0's every byte is 1, a chain longer than the
 *                  walker's steps that ends nowhere (segment 0's byte is 1
 *                  too); heap 1's every byte is 0xfe, each leading before
 *                  the heap's start.
 *   huge-frame     nmethods whose frame is 2^30 words, and -2^30.
 *   sender-cycle   an interpreted frame whose sender is itself (same pc,
 *                  same sp, same rbp), and compiled frames each of whose
 *                  senders is the same nmethod again, for 8 KiB of stack.
 *   unmapped       heap 0's segment map lies in unmapped memory, and so
 *                  do heap 2 and its map; an interpreted frame's Method *
 *                  points into unmapped memory; an nmethod's sender is the
 *                  call stub with an rbp in unmapped memory above the stack.
 *   unmapped-heap  CodeCache::_heaps points at a CodeHeap in unmapped
 *                  memory (the layout reader must refuse).
 *   absurd-tables  gHotSpotVMStructs has 20000 entries and no end within
 *                  the reader's bound (it must refuse).
 *   absurd-stride  gHotSpotVMStructs' stride is 2^40 bytes (refused).
 *   absurd-sizes   CodeCache::_heaps says it holds 2^30 code heaps (refused).
 *
 * In every mode one more thread spins in plain native code
 * (hostile_native_thread -> hostile_native_spin): the profile must keep
 * its frames whatever the JVM says. The threads that run in the code
 * cache never return from it (an epilogue caught half-way could be walked
 * right by luck) and block every signal (one of them runs on a stack it
 * made itself). It does not catch SIGQUIT: the profiler, seeing that, does
 * not signal it to load an agent (which it could not). It prints "ready"
 * once every thread runs; SIGTERM ends it with status 0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- JDK 17's layout, as its VMStructs gives it ---- */

#define VS_LOW 16            /* VirtualSpace::_low */
#define VS_HIGH 24           /* VirtualSpace::_high */
#define VS_SIZE 112
#define HEAP_MEMORY 8        /* CodeHeap::_memory, a VirtualSpace */
#define HEAP_SEGMAP 120      /* CodeHeap::_segmap, a VirtualSpace */
#define HEAP_LOG2 256        /* CodeHeap::_log2_segment_size */
#define HEAP_SIZE 344
#define ARRAY_LEN 0          /* GrowableArrayBase::_len */
#define ARRAY_DATA 8         /* GrowableArray<int>::_data */
#define ARRAY_SIZE 24
#define BLOCK_USED 8         /* HeapBlock::Header::_used */
#define BLOCK_SIZE 16        /* sizeof(HeapBlock): the blob follows */
#define QUEUE_BUFFER 8       /* StubQueue::_stub_buffer */
#define QUEUE_LIMIT 20       /* StubQueue::_buffer_limit */
#define QUEUE_SIZE 48
#define BLOB_SIZE 12         /* CodeBlob::_size */
#define BLOB_COMPLETE 20     /* CodeBlob::_frame_complete_offset */
#define BLOB_FRAME 28        /* CodeBlob::_frame_size, in words */
#define BLOB_CODE_BEGIN 32
#define BLOB_CODE_END 40
#define BLOB_NAME 96
#define CODEBLOB_SIZE 104
#define NM_METHOD 112        /* CompiledMethod::_method */
#define NM_SCOPES_DATA 120   /* CompiledMethod::_scopes_data_begin */
#define NM_METADATA 260
#define NM_PCS 268           /* nmethod::_scopes_pcs_offset */
#define NM_DEPENDENCIES 272  /* where the PcDescs end: none here */
#define NM_COMPILE_ID 304
#define NM_LEVEL 308
#define NMETHOD_SIZE 352
#define METHOD_CONST 8       /* Method::_constMethod */
#define METHOD_ACCESS 40
#define METHOD_SIZE 88
#define CM_CONSTANTS 8       /* ConstMethod::_constants */
#define CM_FLAGS 28
#define CM_CODE_SIZE 32
#define CM_NAME 34
#define CM_SIGNATURE 36
#define CM_SIZE 48           /* the bytecodes follow */
#define CP_HOLDER 24         /* ConstantPool::_pool_holder */
#define CP_LENGTH 60
#define CP_SIZE 72           /* the entries follow, a word each */
#define KLASS_NAME 24
#define KLASS_SIZE 208
#define SYMBOL_LENGTH 4
#define SYMBOL_BODY 6

/* The entries of the four tables, as vmStructs.hpp declares them. */
struct struct_entry {
	const char *type_name, *field_name, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct type_entry {
	const char *type_name, *superclass_name;
	int32_t is_oop, is_integer, is_unsigned;
	uint64_t size;
};

struct int_entry {
	const char *name;
	int32_t value;
};

struct long_entry {
	const char *name;
	int64_t value;
};

/* ---- the code cache ---- */

/* Code heaps 0 to 2, then the interpreter: 64 KiB each, in one reservation. */
#define CHUNK (64u << 10)
#define NR_HEAPS 3
#define CODE_CACHE (4 * CHUNK)
#define SEGMENT_SHIFT 7
#define SEGMENTS (CHUNK >> SEGMENT_SHIFT)
/* A blob: its HeapBlock, the nmethod's header, and its code at CODE_AT. */
#define BLOB_BYTES 4096u
#define CODE_AT 512u
#define COMPILE_ID 7

/*
 * The machine code run in the code cache (x86-64), each ending in a loop
 * that never exits (`inc rax; jmp .-3`), so the thread stays there.
 *
 * compiled: an nmethod's frame of 4 words (return address, rbp, 16 bytes),
 * whose two local words are rdi and rsi: a frame said to be 2 words has
 * them for its sender's rbp and pc.
 */
static const uint8_t code_compiled[] = {
	0x55,                         /* push rbp */
	0x48, 0x89, 0xe5,             /* mov rbp, rsp */
	0x48, 0x83, 0xec, 0x10,       /* sub rsp, 16 */
	0x48, 0x89, 0x3c, 0x24,       /* mov [rsp], rdi */
	0x48, 0x89, 0x74, 0x24, 0x08, /* mov [rsp+8], rsi */
	0x48, 0xff, 0xc0,             /* loop: inc rax */
	0xeb, 0xfb,                   /* jmp loop */
};
#define COMPILED_COMPLETE 17

/* interpreted: rbp is the frame rdi points at, built by the caller. */
static const uint8_t code_interpreted[] = {
	0x55,                         /* push rbp */
	0x48, 0x89, 0xfd,             /* mov rbp, rdi */
	0x48, 0xff, 0xc0,             /* loop: inc rax */
	0xeb, 0xfb,                   /* jmp loop */
};

/* interpreted, and its sender's sp (fp[-1]) is its own sp. */
static const uint8_t code_interpreted_cycle[] = {
	0x55,                         /* push rbp */
	0x48, 0x89, 0xfd,             /* mov rbp, rdi */
	0x48, 0x89, 0x67, 0xf8,       /* mov [rdi-8], rsp */
	0x48, 0xff, 0xc0,             /* loop: inc rax */
	0xeb, 0xfb,                   /* jmp loop */
};
#define CYCLE_LOOP 8

/* chain: a frame said to be 2 words whose sp is rdi, where the caller laid out (rbp, pc) pairs. */
static const uint8_t code_chain[] = {
	0x55,                         /* push rbp */
	0x48, 0x89, 0xe5,             /* mov rbp, rsp */
	0x48, 0x89, 0xfc,             /* mov rsp, rdi */
	0x48, 0xff, 0xc0,             /* loop: inc rax */
	0xeb, 0xfb,                   /* jmp loop */
};
#define CHAIN_COMPLETE 7
#define CHAIN_LOOP 7
/* The chain's stack: pairs above its first 8 KiB, where nothing is written. */
#define CHAIN_BYTES (16u << 10)

/* The stack of the thread whose sender's rbp lies just above it, in unmapped memory. */
#define OWN_STACK (256u << 10)
#define HOLE (64u << 10)

/* ---- what the tables describe ---- */

static uint8_t *code_cache;
static uint8_t *segmaps[NR_HEAPS];
static _Alignas(16) uint8_t heap_objects[NR_HEAPS][HEAP_SIZE];
static _Alignas(16) uint8_t heaps_array[ARRAY_SIZE];
static uint64_t heaps_data[NR_HEAPS];
static _Alignas(16) uint8_t stub_queue[QUEUE_SIZE];
static _Alignas(16) uint8_t method[METHOD_SIZE];
static _Alignas(16) uint8_t const_method[CM_SIZE + 16];
static _Alignas(16) uint8_t constant_pool[CP_SIZE + 3 * 8];
static _Alignas(16) uint8_t klass[KLASS_SIZE];
static _Alignas(16) uint8_t symbols[3][32];

/* The statics VMStructs lists by address. */
static uint64_t code_low_bound, code_high_bound, heaps_pointer, interpreter_code, call_stub_return;
static int32_t vm_major_version = 17;

static void put64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

static void put32(uint8_t *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

static void put16(uint8_t *at, uint16_t v)
{
	memcpy(at, &v, 2);
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* ---- the tables ---- */

#define MAX_STRUCTS 64
#define MAX_TYPES 48
#define MAX_INTS 8
/* More entries than the reader takes (HOTSPOT_VM_MAX_ENTRIES, 16384). */
#define ENDLESS 20000

static struct struct_entry structs[MAX_STRUCTS + 1];
static struct type_entry types[MAX_TYPES + 1];
static struct int_entry ints[MAX_INTS + 1];
static struct long_entry longs[1]; /* no long constant is asked for: the end alone */
static size_t nr_structs, nr_types, nr_ints;

static void field(const char *type, const char *name, const char *type_string, uint64_t offset)
{
	structs[nr_structs++] = (struct struct_entry){ type, name, type_string, 0, offset, NULL };
}

static void static_field(const char *type, const char *name, const char *type_string, void *address)
{
	structs[nr_structs++] = (struct struct_entry){ type, name, type_string, 1, 0, address };
}

static void type(const char *name, uint64_t size)
{
	types[nr_types++] = (struct type_entry){ .type_name = name, .size = size };
}

static void int_constant(const char *name, int32_t value)
{
	ints[nr_ints++] = (struct int_entry){ name, value };
}

/* What the layout reader (hotspot/layout.c) and the namer (hotspot/names_layout.c) look up. */
static void describe(void)
{
	static const struct {
		const char *type, *name, *type_string;
		uint64_t offset;
	} fields[] = {
		{ "VirtualSpace", "_low", "char*", VS_LOW },
		{ "VirtualSpace", "_high", "char*", VS_HIGH },
		{ "CodeHeap", "_memory", "VirtualSpace", HEAP_MEMORY },
		{ "CodeHeap", "_segmap", "VirtualSpace", HEAP_SEGMAP },
		{ "CodeHeap", "_log2_segment_size", "int", HEAP_LOG2 },
		{ "GrowableArrayBase", "_len", "int", ARRAY_LEN },
		{ "GrowableArray<int>", "_data", "int*", ARRAY_DATA },
		{ "HeapBlock", "_header", "HeapBlock::Header", 0 },
		{ "HeapBlock::Header", "_used", "bool", BLOCK_USED },
		{ "StubQueue", "_stub_buffer", "address", QUEUE_BUFFER },
		{ "StubQueue", "_buffer_limit", "int", QUEUE_LIMIT },
		{ "CodeBlob", "_name", "const char*", BLOB_NAME },
		{ "CodeBlob", "_size", "int", BLOB_SIZE },
		{ "CodeBlob", "_frame_complete_offset", "int", BLOB_COMPLETE },
		{ "CodeBlob", "_frame_size", "int", BLOB_FRAME },
		{ "CodeBlob", "_code_begin", "address", BLOB_CODE_BEGIN },
		{ "CodeBlob", "_code_end", "address", BLOB_CODE_END },
		{ "CompiledMethod", "_method", "Method*", NM_METHOD },
		{ "CompiledMethod", "_scopes_data_begin", "address", NM_SCOPES_DATA },
		{ "nmethod", "_metadata_offset", "int", NM_METADATA },
		{ "nmethod", "_scopes_pcs_offset", "int", NM_PCS },
		{ "nmethod", "_dependencies_offset", "int", NM_DEPENDENCIES },
		{ "nmethod", "_compile_id", "int", NM_COMPILE_ID },
		{ "nmethod", "_comp_level", "int", NM_LEVEL },
		{ "Method", "_constMethod", "ConstMethod*", METHOD_CONST },
		{ "Method", "_access_flags", "AccessFlags", METHOD_ACCESS },
		{ "AccessFlags", "_flags", "jint", 0 },
		{ "ConstMethod", "_constants", "ConstantPool*", CM_CONSTANTS },
		{ "ConstMethod", "_flags", "u2", CM_FLAGS },
		{ "ConstMethod", "_code_size", "u2", CM_CODE_SIZE },
		{ "ConstMethod", "_name_index", "u2", CM_NAME },
		{ "ConstMethod", "_signature_index", "u2", CM_SIGNATURE },
		{ "ConstantPool", "_pool_holder", "InstanceKlass*", CP_HOLDER },
		{ "ConstantPool", "_length", "int", CP_LENGTH },
		{ "Klass", "_name", "Symbol*", KLASS_NAME },
		{ "Symbol", "_length", "u2", SYMBOL_LENGTH },
		{ "Symbol", "_body", "u1", SYMBOL_BODY },
		{ "PcDesc", "_pc_offset", "int", 0 },
		{ "PcDesc", "_scope_decode_offset", "int", 4 },
	};
	static const struct {
		const char *name;
		uint64_t size;
	} sizes[] = {
		{ "int", 4 }, { "jint", 4 }, { "u1", 1 }, { "u2", 2 }, { "u4", 4 }, { "bool", 1 }, { "address", 8 },
		{ "VirtualSpace", VS_SIZE }, { "CodeHeap", HEAP_SIZE }, { "GrowableArrayBase", 8 },
		{ "GrowableArray<int>", ARRAY_SIZE }, { "HeapBlock", BLOCK_SIZE }, { "HeapBlock::Header", BLOCK_SIZE },
		{ "StubQueue", QUEUE_SIZE }, { "CodeBlob", CODEBLOB_SIZE }, { "CompiledMethod", 192 },
		{ "nmethod", NMETHOD_SIZE }, { "Method", METHOD_SIZE }, { "AccessFlags", 4 }, { "ConstMethod", CM_SIZE },
		{ "ConstantPool", CP_SIZE }, { "Klass", KLASS_SIZE }, { "Symbol", 8 }, { "PcDesc", 16 },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		field(fields[i].type, fields[i].name, fields[i].type_string, fields[i].offset);
	static_field("CodeCache", "_low_bound", "address", &code_low_bound);
	static_field("CodeCache", "_high_bound", "address", &code_high_bound);
	static_field("CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", &heaps_pointer);
	static_field("AbstractInterpreter", "_code", "StubQueue*", &interpreter_code);
	static_field("StubRoutines", "_call_stub_return_address", "address", &call_stub_return);
	static_field("Abstract_VM_Version", "_vm_major_version", "int", &vm_major_version);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		type(sizes[i].name, sizes[i].size);
	int_constant("ConstMethod::_has_linenumber_table", 1);
	int_constant("InvocationEntryBci", -1);
	int_constant("CompLevel_simple", 1);
	int_constant("CompLevel_full_profile", 3);
	int_constant("CompLevel_full_optimization", 4);
}

/* A Symbol at sym holding s. */
static void symbol(uint8_t *sym, const char *s)
{
	put16(sym + SYMBOL_LENGTH, (uint16_t)strlen(s));
	memcpy(sym + SYMBOL_BODY, s, strlen(s));
}

/* hostile.Spin.interpret()V: 16 bytes of bytecodes, no line table. */
static void make_method(void)
{
	put64(method + METHOD_CONST, addr(const_method));
	put64(const_method + CM_CONSTANTS, addr(constant_pool));
	put16(const_method + CM_CODE_SIZE, 16);
	put16(const_method + CM_NAME, 1);
	put16(const_method + CM_SIGNATURE, 2);
	put64(constant_pool + CP_HOLDER, addr(klass));
	put32(constant_pool + CP_LENGTH, 3);
	put64(constant_pool + CP_SIZE + 8, addr(symbols[1]));
	put64(constant_pool + CP_SIZE + 16, addr(symbols[2]));
	put64(klass + KLASS_NAME, addr(symbols[0]));
	symbol(symbols[0], "hostile/Spin");
	symbol(symbols[1], "interpret");
	symbol(symbols[2], "()V");
}

/* The code cache, its three heaps (each a chunk, segments of 128 bytes, all free), the interpreter. */
static void make_code_cache(void)
{
	code_cache = mmap(NULL, CODE_CACHE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code_cache == MAP_FAILED) {
		perror("hostile_jvm: mmap");
		exit(2);
	}
	for (int i = 0; i < NR_HEAPS; i++) {
		uint8_t *h = heap_objects[i];

		segmaps[i] = malloc(SEGMENTS);
		if (!segmaps[i])
			exit(2);
		memset(segmaps[i], 0xff, SEGMENTS);
		put64(h + HEAP_MEMORY + VS_LOW, addr(code_cache + i * CHUNK));
		put64(h + HEAP_MEMORY + VS_HIGH, addr(code_cache + (i + 1) * CHUNK));
		put64(h + HEAP_SEGMAP + VS_LOW, addr(segmaps[i]));
		put64(h + HEAP_SEGMAP + VS_HIGH, addr(segmaps[i] + SEGMENTS));
		put32(h + HEAP_LOG2, SEGMENT_SHIFT);
		heaps_data[i] = addr(h);
	}
	put32(heaps_array + ARRAY_LEN, NR_HEAPS);
	put64(heaps_array + ARRAY_DATA, addr(heaps_data));
	put64(stub_queue + QUEUE_BUFFER, addr(code_cache + NR_HEAPS * CHUNK));
	put32(stub_queue + QUEUE_LIMIT, CHUNK);
	code_low_bound = addr(code_cache);
	code_high_bound = addr(code_cache + CODE_CACHE);
	heaps_pointer = addr(heaps_array);
	interpreter_code = addr(stub_queue);
	/* In heap 2, where nothing runs: only ever compared with. */
	call_stub_return = addr(code_cache + 2 * CHUNK + 0x100);
}

/*
 * An nmethod at byte at of heap: its HeapBlock (in use), its header (a
 * name, a size, frame_words and complete, the fake Method, no PcDesc) and
 * code at CODE_AT, marked in the heap's segment map as HotSpot marks a
 * block (its first segment 0, each next one how far back the first is).
 * Returns where the code is.
 */
static uint8_t *put_nmethod(int heap, uint32_t at, const uint8_t *code, size_t len, int32_t complete,
			    int32_t frame_words)
{
	uint8_t *block = code_cache + heap * CHUNK + at, *blob = block + BLOCK_SIZE, *text = block + CODE_AT;

	block[BLOCK_USED] = 1;
	put64(blob + BLOB_NAME, addr("nmethod"));
	put32(blob + BLOB_SIZE, BLOB_BYTES - BLOCK_SIZE);
	put32(blob + BLOB_COMPLETE, (uint32_t)complete);
	put32(blob + BLOB_FRAME, (uint32_t)frame_words);
	put64(blob + BLOB_CODE_BEGIN, addr(text));
	put64(blob + BLOB_CODE_END, addr(text + len));
	put64(blob + NM_METHOD, addr(method));
	put32(blob + NM_COMPILE_ID, COMPILE_ID);
	put32(blob + NM_LEVEL, 4);
	memcpy(text, code, len);
	for (uint32_t s = 0; s < BLOB_BYTES >> SEGMENT_SHIFT; s++)
		segmaps[heap][(at >> SEGMENT_SHIFT) + s] = (uint8_t)s;
	return text;
}

/* Interpreter code at byte at of its chunk. */
static uint8_t *put_interpreter(uint32_t at, const uint8_t *code, size_t len)
{
	uint8_t *text = code_cache + NR_HEAPS * CHUNK + at;

	memcpy(text, code, len);
	return text;
}

/* Memory that was mapped and no longer is: what a pointer into unmapped memory points at. */
static uint8_t *unmapped(size_t size)
{
	uint8_t *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, size)) {
		perror("hostile_jvm: mmap");
		exit(2);
	}
	return p;
}

/* ---- the threads ---- */

struct spinner {
	void *(*thread)(void *);
	uint8_t *code;
	uint64_t a, b;          /* what the thread hands the code (see each thread) */
	void *stack;            /* a stack of its own, or NULL */
	size_t stack_size;
};

#define MAX_SPINNERS 4
static struct spinner spinners[MAX_SPINNERS];
static size_t nr_spinners;
static atomic_int running;

static void add_spinner(void *(*thread)(void *), uint8_t *code, uint64_t a, uint64_t b)
{
	spinners[nr_spinners++] = (struct spinner){ thread, code, a, b, NULL, 0 };
}

/* Every signal blocked: this thread's stack may be one its frames lie about. */
static void enter_spinner(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	atomic_fetch_add(&running, 1);
}

static volatile uint64_t native_sink;

static void hostile_native_spin(void)
{
	for (;;)
		native_sink++;
}

static void *hostile_native_thread(void *arg)
{
	(void)arg;
	enter_spinner();
	hostile_native_spin();
	return NULL;
}

/* Calls an nmethod with a and b (its two local words), and never comes back. */
static void *hostile_compiled_thread(void *arg)
{
	struct spinner *s = arg;
	void (*code)(uint64_t, uint64_t) = (void (*)(uint64_t, uint64_t))(void *)s->code;

	enter_spinner();
	code(s->a, s->b);
	return NULL;
}

/*
 * Calls an nmethod whose frame is its two local words (a and b) as the
 * call stub calls Java code: the nmethod's return address is the stub's
 * (b) and the stub's rbp (a) is this function's frame, whose saved rbp
 * and return address lead back to the native thread. The entry frame
 * stands in for this function.
 */
static __attribute__((noinline)) void hostile_enter_compiled(const struct spinner *s)
{
	uint64_t *frame = __builtin_frame_address(0);
	void (*code)(uint64_t, uint64_t) = (void (*)(uint64_t, uint64_t))(void *)s->code;

	code(addr(frame), call_stub_return);
}

static void *hostile_called_thread(void *arg)
{
	enter_spinner();
	hostile_enter_compiled(arg);
	return NULL;
}

/*
 * Builds an interpreter frame on its own stack and enters the interpreter
 * with rbp at it: fp[-8] the bcp (a), fp[-3] the Method * (b), and a
 * sender that is the call stub, its rbp this function's frame, whose
 * saved rbp and return address lead back to the native thread: the
 * interpreted frame and the entry frame stand in for this one.
 * sender-cycle replaces the sender with the frame itself (rbp, and a pc
 * in the loop).
 */
static __attribute__((noinline)) void hostile_enter_interpreter(const struct spinner *s, int cycle)
{
	uint64_t slots[10] = { 0 }, *fp = &slots[8];
	uint64_t *frame = __builtin_frame_address(0);
	void (*code)(uint64_t *) = (void (*)(uint64_t *))(void *)s->code;

	fp[-8] = s->a;
	fp[-3] = s->b;
	/* Called by the call stub, whose rbp is this function's frame, above its sp. */
	fp[-1] = addr(frame - 1);
	fp[0] = addr(frame);
	fp[1] = call_stub_return;
	if (cycle) {
		fp[0] = addr(fp);
		fp[1] = addr(s->code + CYCLE_LOOP);
	}
	code(fp);
}

static void *hostile_interpreted_thread(void *arg)
{
	enter_spinner();
	hostile_enter_interpreter(arg, 0);
	return NULL;
}

static void *hostile_cycle_thread(void *arg)
{
	enter_spinner();
	hostile_enter_interpreter(arg, 1);
	return NULL;
}

/* Runs the chain's code with its sp in a region of (rbp 0, pc in the chain's own loop) pairs. */
static void *hostile_chain_thread(void *arg)
{
	const struct spinner *s = arg;
	void (*code)(uint64_t) = (void (*)(uint64_t))(void *)s->code;

	enter_spinner();
	code(s->a);
	return NULL;
}

static uint64_t make_chain(const uint8_t *code)
{
	uint64_t *region = mmap(NULL, CHAIN_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t first = CHAIN_BYTES / 2 / 8;

	if (region == MAP_FAILED)
		exit(2);
	for (size_t i = first; i + 1 < CHAIN_BYTES / 8; i += 2) {
		region[i] = 0;
		region[i + 1] = addr(code + CHAIN_LOOP);
	}
	return addr(region + first);
}

/* ---- the modes ---- */

static void mode_valid(void)
{
	uint8_t *nm = put_nmethod(0, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 2);
	uint8_t *interp = put_interpreter(0, code_interpreted, sizeof(code_interpreted));

	add_spinner(hostile_called_thread, nm, 0, 0);
	add_spinner(hostile_interpreted_thread, interp, addr(const_method + CM_SIZE + 3), addr(method));
}

static void mode_segmap_loop(void)
{
	uint8_t *a = put_nmethod(0, 128 << SEGMENT_SHIFT, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 4);
	uint8_t *b = put_nmethod(1, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 4);

	memset(segmaps[0], 1, SEGMENTS);
	memset(segmaps[1], 0xfe, SEGMENTS);
	add_spinner(hostile_compiled_thread, a, 0, 0);
	add_spinner(hostile_compiled_thread, b, 0, 0);
}

static void mode_huge_frame(void)
{
	uint8_t *a = put_nmethod(0, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 1 << 30);
	uint8_t *b = put_nmethod(0, BLOB_BYTES, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, -(1 << 30));

	add_spinner(hostile_compiled_thread, a, 0, 0);
	add_spinner(hostile_compiled_thread, b, 0, 0);
}

static void mode_sender_cycle(void)
{
	uint8_t *chain = put_nmethod(0, 0, code_chain, sizeof(code_chain), CHAIN_COMPLETE, 2);
	uint8_t *interp = put_interpreter(0, code_interpreted_cycle, sizeof(code_interpreted_cycle));

	add_spinner(hostile_cycle_thread, interp, addr(const_method + CM_SIZE + 3), addr(method));
	add_spinner(hostile_chain_thread, chain, make_chain(chain), 0);
}

static void mode_unmapped(void)
{
	uint8_t *a = put_nmethod(0, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 4);
	uint8_t *b = put_nmethod(1, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 2);
	uint8_t *interp = put_interpreter(0, code_interpreted, sizeof(code_interpreted));
	uint8_t *gone = unmapped(4096), *stack;

	put64(heap_objects[0] + HEAP_SEGMAP + VS_LOW, addr(gone));
	put64(heap_objects[0] + HEAP_SEGMAP + VS_HIGH, addr(gone + SEGMENTS));
	put64(heap_objects[2] + HEAP_SEGMAP + VS_LOW, addr(gone));
	put64(heap_objects[2] + HEAP_SEGMAP + VS_HIGH, addr(gone + SEGMENTS));
	add_spinner(hostile_compiled_thread, a, 0, 0);
	add_spinner(hostile_interpreted_thread, interp, 0, addr(gone));
	/* A stack with unmapped memory right above it: the sender's rbp is there, above sp. */
	stack = mmap(NULL, OWN_STACK + HOLE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || munmap(stack + OWN_STACK, HOLE))
		exit(2);
	add_spinner(hostile_compiled_thread, b, addr(stack + OWN_STACK + HOLE / 2), call_stub_return);
	spinners[nr_spinners - 1].stack = stack;
	spinners[nr_spinners - 1].stack_size = OWN_STACK;
}

/* The modes the layout reader must refuse run a well-formed nmethod all the same. */
static void mode_refused(void)
{
	uint8_t *nm = put_nmethod(0, 0, code_compiled, sizeof(code_compiled), COMPILED_COMPLETE, 4);

	add_spinner(hostile_compiled_thread, nm, 0, 0);
}

static void mode_unmapped_heap(void)
{
	mode_refused();
	heaps_data[0] = addr(unmapped(4096));
}

static struct struct_entry *endless;

static void mode_absurd_tables(void)
{
	mode_refused();
	endless = malloc((ENDLESS + 1) * sizeof(*endless));
	if (!endless)
		exit(2);
	for (size_t i = 0; i < ENDLESS; i++)
		endless[i] = structs[i % nr_structs];
	memset(&endless[ENDLESS], 0, sizeof(endless[ENDLESS]));
}

static void mode_absurd_sizes(void)
{
	mode_refused();
	put32(heaps_array + ARRAY_LEN, 1u << 30);
}

static const struct {
	const char *name;
	void (*setup)(void);
} modes[] = {
	{ "valid", mode_valid },
	{ "segmap-loop", mode_segmap_loop },
	{ "huge-frame", mode_huge_frame },
	{ "sender-cycle", mode_sender_cycle },
	{ "unmapped", mode_unmapped },
	{ "unmapped-heap", mode_unmapped_heap },
	{ "absurd-tables", mode_absurd_tables },
	{ "absurd-stride", mode_refused },
	{ "absurd-sizes", mode_absurd_sizes },
};

/* ---- libjvm's variables ---- */

static void *symbol_in(void *lib, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "hostile_jvm: the library exports no %s\n", name);
		exit(2);
	}
	return p;
}

static void set_u64(void *lib, const char *name, uint64_t value)
{
	*(uint64_t *)symbol_in(lib, name) = value;
}

static void set_ptr(void *lib, const char *name, const void *value)
{
	*(const void **)symbol_in(lib, name) = value;
}

static void publish(void *lib, int absurd_stride)
{
	set_ptr(lib, "gHotSpotVMStructs", endless ? endless : structs);
	set_u64(lib, "gHotSpotVMStructEntryArrayStride", absurd_stride ? 1ull << 40 : sizeof(struct struct_entry));
	set_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", offsetof(struct struct_entry, type_name));
	set_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", offsetof(struct struct_entry, field_name));
	set_u64(lib, "gHotSpotVMStructEntryTypeStringOffset", offsetof(struct struct_entry, type_string));
	set_u64(lib, "gHotSpotVMStructEntryIsStaticOffset", offsetof(struct struct_entry, is_static));
	set_u64(lib, "gHotSpotVMStructEntryOffsetOffset", offsetof(struct struct_entry, offset));
	set_u64(lib, "gHotSpotVMStructEntryAddressOffset", offsetof(struct struct_entry, address));
	set_ptr(lib, "gHotSpotVMTypes", types);
	set_u64(lib, "gHotSpotVMTypeEntryArrayStride", sizeof(struct type_entry));
	set_u64(lib, "gHotSpotVMTypeEntryTypeNameOffset", offsetof(struct type_entry, type_name));
	set_u64(lib, "gHotSpotVMTypeEntrySuperclassNameOffset", offsetof(struct type_entry, superclass_name));
	set_u64(lib, "gHotSpotVMTypeEntrySizeOffset", offsetof(struct type_entry, size));
	set_ptr(lib, "gHotSpotVMIntConstants", ints);
	set_u64(lib, "gHotSpotVMIntConstantEntryArrayStride", sizeof(struct int_entry));
	set_u64(lib, "gHotSpotVMIntConstantEntryNameOffset", offsetof(struct int_entry, name));
	set_u64(lib, "gHotSpotVMIntConstantEntryValueOffset", offsetof(struct int_entry, value));
	set_ptr(lib, "gHotSpotVMLongConstants", longs);
	set_u64(lib, "gHotSpotVMLongConstantEntryArrayStride", sizeof(struct long_entry));
	set_u64(lib, "gHotSpotVMLongConstantEntryNameOffset", offsetof(struct long_entry, name));
	set_u64(lib, "gHotSpotVMLongConstantEntryValueOffset", offsetof(struct long_entry, value));
}

static void start(struct spinner *s)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr) || (s->stack && pthread_attr_setstack(&attr, s->stack, s->stack_size)) ||
	    pthread_create(&t, &attr, s->thread, s)) {
		fprintf(stderr, "hostile_jvm: cannot start a thread\n");
		exit(2);
	}
	pthread_attr_destroy(&attr);
}

int main(int argc, char **argv)
{
	struct timespec ms = { 0, 1000000 };
	size_t m = sizeof(modes) / sizeof(modes[0]);
	sigset_t term;
	void *lib;
	int sig;

	for (size_t i = 0; argc == 3 && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[2], modes[i].name))
			m = i;
	if (m == sizeof(modes) / sizeof(modes[0])) {
		fprintf(stderr, "usage: hostile_jvm LIBJVM valid|segmap-loop|huge-frame|sender-cycle|unmapped|"
				"unmapped-heap|absurd-tables|absurd-stride|absurd-sizes\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "hostile_jvm: %s\n", dlerror());
		return 2;
	}
	describe();
	make_method();
	make_code_cache();
	add_spinner(hostile_native_thread, NULL, 0, 0);
	modes[m].setup();
	if (mprotect(code_cache, CODE_CACHE, PROT_READ | PROT_EXEC)) {
		perror("hostile_jvm: mprotect");
		return 2;
	}
	/* Heap 2 goes: its memory, like its segment map, is unmapped (unmapped mode). */
	if (!strcmp(modes[m].name, "unmapped") && munmap(code_cache + 2 * CHUNK, CHUNK))
		return 2;
	publish(lib, !strcmp(modes[m].name, "absurd-stride"));
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (size_t i = 0; i < nr_spinners; i++)
		start(&spinners[i]);
	while (atomic_load(&running) < (int)nr_spinners)
		nanosleep(&ms, NULL);
	printf("ready\n");
	fflush(stdout);
	sigwait(&term, &sig);
	return 0;
}
