/*
 * hotspot_names: Java frames named from a JVM's memory, over a memory image
 * laid out here as JDK 17 and JDK 25 lay out Method, ConstMethod,
 * ConstantPool, Klass, Symbol and nmethods (offsets from their VMStructs).
 * Interpreted, native, compiled (with inlining, C1 and C2) and stub frames
 * are named with their bci and line; hostile images (a huge symbol over
 * unreadable memory, a looping scope chain, a line table with no end, a
 * PcDesc table of absurd size, stale cookies) give the right reason after a
 * bounded number of reads; the caches stay within their bounds.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hotspot/names.h"
#include "hotspot_jdks.h"

/* ---- A memory image ---- */

#define IMAGE_BASE 0x10000000ull
#define IMAGE_SIZE (4u << 20)

struct image {
	uint8_t *buf;
	uint64_t used;
	uint64_t hole_lo, hole_hi; /* unreadable [lo, hi) inside the image */
};

static bool image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;

	if (addr < IMAGE_BASE || addr + len > IMAGE_BASE + IMAGE_SIZE || addr + len < addr)
		return false;
	if (addr < im->hole_hi && addr + len > im->hole_lo)
		return false;
	memcpy(buf, im->buf + (addr - IMAGE_BASE), len);
	return true;
}

static uint64_t alloc(struct image *im, size_t n)
{
	uint64_t at = (im->used + 7) & ~7ull;

	assert_true(at + n <= IMAGE_SIZE);
	im->used = at + n;
	return IMAGE_BASE + at;
}

static uint8_t *at(struct image *im, uint64_t addr)
{
	return im->buf + (addr - IMAGE_BASE);
}

static void put(struct image *im, uint64_t addr, uint64_t v, int size)
{
	memcpy(at(im, addr), &v, (size_t)size); /* little-endian, as x86-64 */
}

/* ---- The JDKs' layouts: hotspot_jdks.h ---- */

static struct hotspot_vm *describe(const struct jdk *j, uint64_t version_addr)
{
	struct hotspot_vm *vm = jdk_describe(j, version_addr);

	assert_non_null(vm);
	return vm;
}

/* ---- HotSpot's compressed streams, written as CompressedWriteStream writes them ---- */

struct stream {
	uint8_t b[4096];
	size_t len;
	uint8_t x; /* UNSIGNED5's excluded byte: 0 for JDK 17, 1 for 25 */
};

static void u5(struct stream *s, uint32_t v)
{
	const uint32_t low = 256 - s->x - 64;
	uint32_t sum = v;

	for (int i = 0;; i++) {
		if (sum < low || i == 4) {
			s->b[s->len++] = (uint8_t)(s->x + sum);
			return;
		}
		sum -= low;
		s->b[s->len++] = (uint8_t)(s->x + low + sum % 64);
		sum >>= 6;
	}
}

static void u5_signed(struct stream *s, int32_t v)
{
	u5(s, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

struct pair {
	int32_t bci, line;
};

/* A line number table (CompressedLineNumberWriteStream::write_pair), ended by 0. */
static void line_table(struct stream *s, const struct pair *p, int n)
{
	int32_t bci = 0, line = 0;

	for (int i = 0; i < n; i++) {
		int32_t db = p[i].bci - bci, dl = p[i].line - line;

		if (db >= 0 && db < 32 && dl >= 0 && dl < 8 && ((db << 3) | dl) != 0xff && ((db << 3) | dl) != 0) {
			s->b[s->len++] = (uint8_t)((db << 3) | dl);
		} else {
			s->b[s->len++] = 0xff;
			u5_signed(s, db);
			u5_signed(s, dl);
		}
		bci = p[i].bci;
		line = p[i].line;
	}
	s->b[s->len++] = 0;
}

/* ---- Objects ---- */

static uint64_t symbol(struct image *im, const char *text)
{
	size_t len = strlen(text);
	uint64_t s = alloc(im, 6 + len);

	put(im, s + 4, len, 2);
	memcpy(at(im, s + 6), text, len);
	return s;
}

struct method_def {
	const char *klass, *name, *signature;
	uint16_t code_size;
	const struct pair *lines;
	int nr_lines;
	bool native;
	const char *file; /* the class's SourceFile, pool entry 5; NULL: none (index 0) */
};

struct method {
	uint64_t method, const_method, pool, klass;
};

static struct method method(struct image *im, const struct jdk *j, const struct method_def *d)
{
	struct stream table = { .x = j->major >= 20 };
	struct method m;

	if (d->nr_lines)
		line_table(&table, d->lines, d->nr_lines);
	m.klass = alloc(im, j->klass_size);
	put(im, m.klass + 24, symbol(im, d->klass), 8);
	m.pool = alloc(im, 72 + 8 * 8);
	put(im, m.pool + 24, m.klass, 8);
	put(im, m.pool + 60, 8, 4);
	put(im, m.pool + 72 + 8 * 3, symbol(im, d->name), 8);
	put(im, m.pool + 72 + 8 * 4, symbol(im, d->signature), 8);
	if (d->file) {
		put(im, m.pool + 54, 5, 2);
		put(im, m.pool + 72 + 8 * 5, symbol(im, d->file), 8);
	}
	m.const_method = alloc(im, j->cm_size + d->code_size + table.len);
	put(im, m.const_method + 8, m.pool, 8);
	put(im, m.const_method + j->cm_flags, d->nr_lines ? 1 : 0, (int)j->cm_flags_size);
	put(im, m.const_method + j->cm_code_size, d->code_size, 2);
	put(im, m.const_method + j->cm_name, 3, 2);
	put(im, m.const_method + j->cm_sig, 4, 2);
	memset(at(im, m.const_method + j->cm_size), 0xb1, d->code_size); /* return */
	memcpy(at(im, m.const_method + j->cm_size + d->code_size), table.b, table.len);
	m.method = alloc(im, j->method_size);
	put(im, m.method + 8, m.const_method, 8);
	put(im, m.method + j->method_access, d->native ? 0x0109 : 0x0001, (int)j->access_size);
	return m;
}

/* One PcDesc: its pc offset and its scopes, innermost first (methods by metadata index, 1-based). */
struct pc_def {
	int32_t pc_offset;
	int nr;
	int method[4];
	int32_t bci[4];
};

struct nmethod {
	uint64_t nm, code, pcs, scopes, metadata;
	int32_t scope_offset[8]; /* each PcDesc's innermost scope's offset */
};

#define CODE_SIZE 256

/* The scopes stream: a dummy byte (offset 0 is "none"), then each PcDesc's chain, outermost first. */
static void scope_stream(struct stream *s, const struct pc_def *pcs, int nr_pcs, struct nmethod *out)
{
	s->b[s->len++] = 0;
	for (int p = 0; p < nr_pcs; p++) {
		uint32_t sender = 0;

		for (int i = pcs[p].nr - 1; i >= 0; i--) {
			uint32_t here = (uint32_t)s->len;

			u5(s, sender);
			u5(s, (uint32_t)pcs[p].method[i]);
			u5(s, (uint32_t)(pcs[p].bci[i] + 1));
			u5(s, 0);
			u5(s, 0);
			u5(s, 0);
			sender = here;
		}
		out->scope_offset[p] = (int32_t)sender;
	}
}

/* The PcDescs, between HotSpot's sentinels. */
static void pc_descs(struct image *im, uint64_t at_addr, const struct pc_def *pcs, int nr, const struct nmethod *n)
{
	put(im, at_addr, (uint32_t)-1, 4);
	for (int p = 0; p < nr; p++) {
		put(im, at_addr + 16 * (p + 1), (uint32_t)pcs[p].pc_offset, 4);
		put(im, at_addr + 16 * (p + 1) + 4, (uint32_t)n->scope_offset[p], 4);
	}
	put(im, at_addr + 16 * (nr + 1), INT_MAX, 4);
}

static struct nmethod nmethod(struct image *im, const struct jdk *j, uint64_t method, int compile_id, int level,
			      const uint64_t *metadata, int nr_metadata, const struct pc_def *pcs, int nr_pcs)
{
	struct stream s = { .x = j->major >= 20 };
	size_t pcs_bytes = 16 * (size_t)(nr_pcs + 2);
	struct nmethod n;

	scope_stream(&s, pcs, nr_pcs, &n);
	if (!j->v25) {
		/* One blob: header, code, metadata, scopes, PcDescs. */
		uint32_t code = j->nm_header, meta = code + CODE_SIZE, scopes = meta + 8 * nr_metadata,
			 pcs_at = (uint32_t)((scopes + s.len + 7) & ~7u), end = pcs_at + (uint32_t)pcs_bytes;

		n.nm = alloc(im, end);
		put(im, n.nm + 96, 0, 8);
		put(im, n.nm + 12, end, 4);
		put(im, n.nm + 32, n.nm + code, 8);
		put(im, n.nm + 40, n.nm + code + CODE_SIZE, 8);
		put(im, n.nm + 112, method, 8);
		put(im, n.nm + 120, n.nm + scopes, 8);
		put(im, n.nm + 260, meta, 4);
		put(im, n.nm + 268, pcs_at, 4);
		put(im, n.nm + 272, end, 4);
		put(im, n.nm + 304, (uint32_t)compile_id, 4);
		put(im, n.nm + 308, (uint32_t)level, 4);
		n.code = n.nm + code;
		n.metadata = n.nm + meta;
		n.scopes = n.nm + scopes;
		n.pcs = n.nm + pcs_at;
	} else {
		/* The blob (header, code); immutable data (PcDescs, scopes); mutable data (relocations, metadata). */
		uint64_t imm = alloc(im, pcs_bytes + s.len), mut = alloc(im, 16 + 8 * nr_metadata);

		n.nm = alloc(im, j->nm_header + CODE_SIZE);
		put(im, n.nm + 8, 0, 8);
		put(im, n.nm + 16, mut, 8);
		put(im, n.nm + 24, j->nm_header + CODE_SIZE, 4);
		put(im, n.nm + 28, 16, 4);
		put(im, n.nm + 36, j->nm_header, 4);
		put(im, n.nm + 40, j->nm_header + CODE_SIZE, 4);
		put(im, n.nm + 48, 16 + 8 * (uint32_t)nr_metadata, 4);
		put(im, n.nm + 80, method, 8);
		put(im, n.nm + 96, imm, 8);
		put(im, n.nm + 160, pcs_bytes + s.len, 4);
		put(im, n.nm + 196, 0, 4);
		put(im, n.nm + 200, pcs_bytes, 4);
		put(im, n.nm + 212, (uint32_t)compile_id, 4);
		put(im, n.nm + 216, (uint32_t)level, 1);
		n.code = n.nm + j->nm_header;
		n.pcs = imm;
		n.scopes = imm + pcs_bytes;
		n.metadata = mut + 16;
	}
	for (int i = 0; i < nr_metadata; i++)
		put(im, n.metadata + 8 * i, metadata[i], 8);
	memcpy(at(im, n.scopes), s.b, s.len);
	pc_descs(im, n.pcs, pcs, nr_pcs, &n);
	return n;
}

/* ---- Fixture: one image, one JVM description, one namer per JDK ---- */

struct fixture {
	const struct jdk *jdk;
	struct image im;
	struct hotspot_memory mem;
	struct hotspot_vm *vm;
	struct hotspot_names *names;
	struct method foo, bar, baz, nat;
};

static const struct pair foo_lines[] = { { 0, 10 }, { 5, 11 }, { 9, 13 }, { 300, 240 } };
static const struct pair bar_lines[] = { { 0, 50 }, { 3, 51 } };
static const struct pair baz_lines[] = { { 0, 70 }, { 4, 72 } };

static int setup(void **state, const struct jdk *j)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const struct method_def foo = { "com/example/Foo", "run", "(I)V", 400, foo_lines, 4, false, "Foo.java" };
	const struct method_def bar = { "com/example/Bar", "add", "(JJ)J", 20, bar_lines, 2, false, NULL };
	const struct method_def baz = { "com/example/Foo$$Lambda+0x0000000801001234", "apply",
					"(Ljava/lang/Object;)Ljava/lang/Object;", 10, baz_lines, 2, false, NULL };
	const struct method_def nat = { "java/lang/Thread", "sleep0", "(J)V", 0, NULL, 0, true, NULL };
	char err[256] = "";
	uint64_t version;

	assert_non_null(f);
	f->jdk = j;
	f->im.buf = calloc(1, IMAGE_SIZE);
	assert_non_null(f->im.buf);
	f->mem = (struct hotspot_memory){ .read = image_read, .ctx = &f->im };
	version = alloc(&f->im, 8);
	put(&f->im, version, (uint32_t)j->major, 4);
	f->foo = method(&f->im, j, &foo);
	f->bar = method(&f->im, j, &bar);
	f->baz = method(&f->im, j, &baz);
	f->nat = method(&f->im, j, &nat);
	f->vm = describe(j, version);
	f->names = hotspot_names__new(f->vm, &f->mem, err, sizeof(err));
	if (!f->names)
		fail_msg("hotspot_names__new: %s", err);
	*state = f;
	return 0;
}

static int setup17(void **state)
{
	return setup(state, &jdk17);
}

static int setup25(void **state)
{
	return setup(state, &jdk25);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	hotspot_names__free(f->names);
	hotspot_vm__free(f->vm);
	free(f->im.buf);
	free(f);
	return 0;
}

static struct jbpf_java_frame interp(const struct fixture *f, const struct method *m, int bci)
{
	return (struct jbpf_java_frame){ .kind = JBPF_JAVA_INTERPRETED, .ptr = m->method,
					 .pc = bci < 0 ? 0 : m->const_method + f->jdk->cm_size + (uint64_t)bci,
					 .cookie = m->const_method };
}

static struct jbpf_java_frame compiled(const struct nmethod *n, int compile_id, uint64_t pc_offset)
{
	return (struct jbpf_java_frame){ .kind = JBPF_JAVA_COMPILED, .ptr = n->nm, .pc = n->code + pc_offset,
					 .cookie = (uint64_t)compile_id };
}

/* n given compile id compile_id in the image (flushed and compiled again in place), and a frame of it. */
static struct jbpf_java_frame recompiled(struct fixture *f, const struct nmethod *n, int compile_id, uint64_t pc_offset)
{
	put(&f->im, n->nm + (f->jdk->v25 ? 212 : 304), (uint32_t)compile_id, 4);
	return compiled(n, compile_id, pc_offset);
}

static void assert_frame(const struct hotspot_frame *fr, const char *klass, const char *name, const char *sig,
			 int bci, int line, int kind)
{
	assert_int_equal(fr->unresolved, 0);
	assert_string_equal(fr->klass, klass);
	assert_string_equal(fr->method, name);
	assert_string_equal(fr->signature, sig);
	assert_int_equal(fr->bci, bci);
	assert_int_equal(fr->line, line);
	assert_int_equal(fr->kind, kind);
}

/* One frame, expected unresolved for reason within max_reads reads. */
static void assert_unresolved(struct fixture *f, const struct jbpf_java_frame *jf, int reason, uint64_t max_reads)
{
	struct hotspot_frame out[HOTSPOT_NAMES_MAX_INLINE];
	uint64_t reads = f->mem.reads;

	assert_int_equal(hotspot_names__frame(f->names, jf, out, HOTSPOT_NAMES_MAX_INLINE), 1);
	assert_int_equal(out[0].unresolved, reason);
	assert_null(out[0].klass);
	assert_in_range(f->mem.reads - reads, 0, max_reads);
}

/* ---- Named frames ---- */

static void interpreted_frames_have_names_bci_and_line(void **state)
{
	struct fixture *f = *state;
	struct hotspot_frame out[4];
	struct jbpf_java_frame jf = interp(f, &f->foo, 7);
	struct hotspot_names__stats st;
	uint64_t reads;

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_frame(&out[0], "com.example.Foo", "run", "(I)V", 7, 11, HOTSPOT_FRAME_INTERPRETED);
	assert_int_equal(out[0].method_ptr, f->foo.method);
	/* The same method again: from the cache, no read; another bci, its own line (exact, escaped, first). */
	reads = f->mem.reads;
	jf = interp(f, &f->foo, 9);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_int_equal(out[0].line, 13);
	jf = interp(f, &f->foo, 350);
	hotspot_names__frame(f->names, &jf, out, 4);
	assert_int_equal(out[0].line, 240);
	jf = interp(f, &f->foo, 0);
	hotspot_names__frame(f->names, &jf, out, 4);
	assert_int_equal(out[0].line, 10);
	assert_int_equal(f->mem.reads, reads);
	hotspot_names__stats(f->names, &st);
	assert_int_equal(st.named, 4);
	assert_int_equal(st.cached, 3);
}

/*
 * The class's source file from its pool's SourceFile entry; none where the
 * class names none, and none (the names kept) where the index lies past
 * the pool or its Symbol cannot be read.
 */
static void source_file_from_the_pool_or_none(void **state)
{
	struct fixture *f = *state;
	const struct method_def past = { "com/example/Past", "run", "()V", 4, NULL, 0, false, "Past.java" };
	const struct method_def lost = { "com/example/Lost", "run", "()V", 4, NULL, 0, false, "Lost.java" };
	struct method m_past = method(&f->im, f->jdk, &past), m_lost = method(&f->im, f->jdk, &lost);
	struct hotspot_frame out[4];
	struct jbpf_java_frame jf = interp(f, &f->foo, 7);

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_string_equal(out[0].file, "Foo.java");
	jf = interp(f, &f->bar, 0);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_null(out[0].file);
	put(&f->im, m_past.pool + 54, 200, 2);
	jf = interp(f, &m_past, 0);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_frame(&out[0], "com.example.Past", "run", "()V", 0, 0, HOTSPOT_FRAME_INTERPRETED);
	assert_null(out[0].file);
	put(&f->im, m_lost.pool + 72 + 8 * 5, 0x7f0000000000ull, 8);
	jf = interp(f, &m_lost, 0);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_frame(&out[0], "com.example.Lost", "run", "()V", 0, 0, HOTSPOT_FRAME_INTERPRETED);
	assert_null(out[0].file);
}

static void hidden_classes_keep_their_address(void **state)
{
	struct fixture *f = *state;
	struct hotspot_frame out[1];
	struct jbpf_java_frame jf = interp(f, &f->baz, 4);

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
	assert_frame(&out[0], "com.example.Foo$$Lambda/0x0000000801001234", "apply",
		     "(Ljava/lang/Object;)Ljava/lang/Object;", 4, 72, HOTSPOT_FRAME_INTERPRETED);
}

static void native_methods_are_named_native(void **state)
{
	struct fixture *f = *state;
	struct hotspot_frame out[1];
	struct jbpf_java_frame jf = interp(f, &f->nat, -1);

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
	assert_frame(&out[0], "java.lang.Thread", "sleep0", "(J)V", -1, 0, HOTSPOT_FRAME_NATIVE);
	/* A bcp of 0 in a method that is not native is no frame of it. */
	jf = interp(f, &f->foo, -1);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
}

static void compiled_frames_expand_inlined_scopes(void **state)
{
	struct fixture *f = *state;
	const uint64_t meta[] = { f->foo.method, f->bar.method, f->baz.method };
	/* At 0x40: baz (bci 4) inlined into bar (bci 3) inlined into foo (bci 5); at 0x80, foo alone at bci 9. */
	const struct pc_def pcs[] = { { 0x10, 1, { 1 }, { 0 } },
				      { 0x40, 3, { 3, 2, 1 }, { 4, 3, 5 } },
				      { 0x80, 1, { 1 }, { 9 } } };
	struct nmethod n = nmethod(&f->im, f->jdk, f->foo.method, 77, 4, meta, 3, pcs, 3);
	struct hotspot_frame out[HOTSPOT_NAMES_MAX_INLINE];
	struct jbpf_java_frame jf = compiled(&n, 77, 0x40);
	uint64_t reads;

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 3);
	assert_frame(&out[0], "com.example.Foo$$Lambda/0x0000000801001234", "apply",
		     "(Ljava/lang/Object;)Ljava/lang/Object;", 4, 72, HOTSPOT_FRAME_INLINED);
	assert_frame(&out[1], "com.example.Bar", "add", "(JJ)J", 3, 51, HOTSPOT_FRAME_INLINED);
	assert_frame(&out[2], "com.example.Foo", "run", "(I)V", 5, 11, HOTSPOT_FRAME_C2);
	assert_int_equal(out[2].method_ptr, f->foo.method);
	/* Another pc before the same PcDesc: its scopes are known, no read. */
	jf = compiled(&n, 77, 0x3c);
	reads = f->mem.reads;
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 3);
	assert_int_equal(f->mem.reads, reads);
	/*
	 * A pc between PcDescs takes the next one's scopes. The nmethod's
	 * header and PcDescs were read once: a new PcDesc reads its scopes,
	 * the metadata, foo's ConstMethod and the compile id again, no more.
	 */
	jf = compiled(&n, 77, 0x41);
	reads = f->mem.reads;
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 1);
	assert_in_range(f->mem.reads - reads, 1, 4);
	jf = compiled(&n, 77, 0x41);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 1);
	assert_frame(&out[0], "com.example.Foo", "run", "(I)V", 9, 13, HOTSPOT_FRAME_C2);
	reads = f->mem.reads;
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 1);
	assert_int_equal(f->mem.reads, reads);
	/* Past the last PcDesc: the nmethod's own method, no bci (line of bci 0). */
	jf = compiled(&n, 77, 0x90);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, HOTSPOT_NAMES_MAX_INLINE), 1);
	assert_frame(&out[0], "com.example.Foo", "run", "(I)V", -1, 10, HOTSPOT_FRAME_C2);
	/* Too few slots: the innermost come first. */
	jf = compiled(&n, 77, 0x40);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 2), 2);
	assert_string_equal(out[1].method, "add");
}

static void c1_and_native_wrappers(void **state)
{
	struct fixture *f = *state;
	const uint64_t meta[] = { f->bar.method };
	const struct pc_def pcs[] = { { 0x20, 1, { 1 }, { 3 } } };
	struct nmethod c1 = nmethod(&f->im, f->jdk, f->bar.method, 12, 3, meta, 1, pcs, 1);
	struct nmethod wrapper = nmethod(&f->im, f->jdk, f->nat.method, 13, 0, NULL, 0, NULL, 0);
	struct hotspot_frame out[4];
	struct jbpf_java_frame jf = compiled(&c1, 12, 0x20);

	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_frame(&out[0], "com.example.Bar", "add", "(JJ)J", 3, 51, HOTSPOT_FRAME_C1);
	jf = compiled(&wrapper, 13, 0x8);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 4), 1);
	assert_frame(&out[0], "java.lang.Thread", "sleep0", "(J)V", -1, 0, HOTSPOT_FRAME_NATIVE);
}

static void stubs_are_named_by_their_blob(void **state)
{
	struct fixture *f = *state;
	uint64_t blob = alloc(&f->im, 128), name = alloc(&f->im, 512);
	struct jbpf_java_frame jf = { .kind = JBPF_JAVA_STUB, .ptr = blob, .pc = blob + 100 };
	struct hotspot_frame out[1];

	strcpy((char *)at(&f->im, name), "StubRoutines (final stubs)");
	put(&f->im, blob + (f->jdk->v25 ? 8 : 96), name, 8);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
	assert_frame(&out[0], "", "StubRoutines (final stubs)", "", -1, 0, HOTSPOT_FRAME_STUB);
	/* A name running past the bound: refused, not cut. */
	memset(at(&f->im, name), 'x', 512);
	put(&f->im, blob + (f->jdk->v25 ? 8 : 96), name + 1, 8);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_READ, 4);
}

/* ---- Races ---- */

static void stale_cookies_are_moved(void **state)
{
	struct fixture *f = *state;
	const uint64_t meta[] = { f->bar.method };
	const struct pc_def pcs[] = { { 0x20, 1, { 1 }, { 3 } } };
	struct nmethod n = nmethod(&f->im, f->jdk, f->bar.method, 40, 4, meta, 1, pcs, 1);
	struct jbpf_java_frame jf = interp(f, &f->bar, 3);
	struct hotspot_names__stats st;

	/* The Method points at another ConstMethod than the walker saw (unloaded, redefined, reused). */
	jf.cookie += 8;
	jf.pc += 8;
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_MOVED, 1);
	/* The nmethod's compile id changed: flushed and its space reused. */
	jf = compiled(&n, 39, 0x20);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_MOVED, 1);
	hotspot_names__stats(f->names, &st);
	assert_int_equal(st.unresolved[HOTSPOT_UNRESOLVED_MOVED], 2);
	assert_int_equal(st.named, 0);
}

static void unreadable_memory_is_read(void **state)
{
	struct fixture *f = *state;
	struct jbpf_java_frame jf = { .kind = JBPF_JAVA_COMPILED, .ptr = 0x7000000000ull, .pc = 0x7000000100ull,
				      .cookie = 1 };

	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_READ, 1);
	jf = (struct jbpf_java_frame){ .kind = JBPF_JAVA_INTERPRETED, .ptr = 0x7000000000ull, .pc = 0x7000000100ull,
				       .cookie = 0x7000000040ull };
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_READ, 1);
	/* Not even an address: no read at all. */
	jf.ptr = 0x7000000003ull;
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 0);
}

/* ---- Hostile images ---- */

static void bcp_outside_the_bytecodes_is_invalid(void **state)
{
	struct fixture *f = *state;
	struct jbpf_java_frame jf = interp(f, &f->bar, 20);

	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
	jf.pc = jf.cookie + 8;
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
}

static void huge_symbol_over_unreadable_memory(void **state)
{
	struct fixture *f = *state;
	const struct method_def d = { "a/Huge", "m", "()V", 4, NULL, 0, false, NULL };
	struct method m = method(&f->im, f->jdk, &d);
	uint64_t sym = alloc(&f->im, 16);
	struct jbpf_java_frame jf = interp(f, &m, 1);

	/* A class name of 60,000 bytes whose body crosses into memory that cannot be read. */
	put(&f->im, sym + 4, 60000, 2);
	put(&f->im, m.klass + 24, sym, 8);
	f->im.hole_lo = sym + 64;
	f->im.hole_hi = sym + 70000;
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_READ, 20);
	assert_in_range(f->mem.bytes, 0, 8192);
	/* Readable, it is cut at the bound and named. */
	f->im.hole_lo = f->im.hole_hi = 0;
	memset(at(&f->im, sym + 6), 'A', 2000);
	{
		struct hotspot_frame out[1];

		assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
		assert_int_equal(out[0].unresolved, 0);
		assert_int_equal(strlen(out[0].klass), 1024 + 3);
	}
}

static void looping_scope_chain_is_invalid(void **state)
{
	struct fixture *f = *state;
	const uint64_t meta[] = { f->foo.method, f->bar.method };
	const struct pc_def pcs[] = { { 0x40, 2, { 2, 1 }, { 3, 5 } } };
	struct nmethod n = nmethod(&f->im, f->jdk, f->foo.method, 5, 4, meta, 2, pcs, 1);
	struct jbpf_java_frame jf = compiled(&n, 5, 0x40);
	uint8_t *inner = at(&f->im, n.scopes + (uint64_t)n.scope_offset[0]);

	/* The inner scope names itself as its sender: single-byte numbers, so its first byte is its sender. */
	assert_true(n.scope_offset[0] < 190);
	inner[0] = (uint8_t)(n.scope_offset[0] + (f->jdk->major >= 20));
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
	/* The same key again (a frame whose senders repeat it): remembered, not read again. */
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 0);
	/* So is another pc whose PcDesc is the same: its scopes are kept by the PcDesc's scope offset. */
	jf = compiled(&n, 5, 0x3f);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 0);
	/* A sender further on than its callee is as bad (another compile id: another key, read again). */
	inner[0] = (uint8_t)(n.scope_offset[0] + 2 + (f->jdk->major >= 20));
	jf = recompiled(f, &n, 6, 0x3f);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
	/* A method index past the metadata. */
	inner[0] = (uint8_t)(0 + (f->jdk->major >= 20));
	inner[1] = (uint8_t)(9 + (f->jdk->major >= 20));
	jf = recompiled(f, &n, 7, 0x3e);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 40);
}

static void line_table_without_end(void **state)
{
	struct fixture *f = *state;
	const struct method_def d = { "a/Endless", "m", "()V", 8, NULL, 0, false, NULL };
	struct method m = method(&f->im, f->jdk, &d);
	uint64_t cm = alloc(&f->im, f->jdk->cm_size + 8 + 100000);
	struct jbpf_java_frame jf;
	struct hotspot_frame out[1];

	/* The ConstMethod says it has a table, and the table is 100,000 bytes of (bci + 1, line + 1). */
	memcpy(at(&f->im, cm), at(&f->im, m.const_method), f->jdk->cm_size + 8);
	put(&f->im, cm + f->jdk->cm_flags, 1, (int)f->jdk->cm_flags_size);
	memset(at(&f->im, cm + f->jdk->cm_size + 8), 0x09, 100000);
	put(&f->im, m.method + 8, cm, 8);
	m.const_method = cm;
	jf = interp(f, &m, 2);
	assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
	assert_int_equal(out[0].unresolved, 0);
	assert_int_equal(out[0].line, 0);
	assert_in_range(f->mem.bytes, 0, 65536 + 4096);
	assert_in_range(f->mem.reads, 0, 300);
}

static void absurd_pc_desc_tables_are_invalid(void **state)
{
	struct fixture *f = *state;
	const uint64_t meta[] = { f->foo.method };
	const struct pc_def pcs[] = { { 0x40, 1, { 1 }, { 5 } } };
	struct nmethod n = nmethod(&f->im, f->jdk, f->foo.method, 6, 4, meta, 1, pcs, 1);
	struct jbpf_java_frame jf = compiled(&n, 6, 0x40);

	/* The PcDescs claim two gigabytes. */
	if (f->jdk->v25) {
		put(&f->im, n.nm + 200, 0x7ffffff0, 4);
		put(&f->im, n.nm + 160, 0x7ffffff0, 4);
	} else {
		put(&f->im, n.nm + 272, 0x7ffffff0, 4);
	}
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 20);
	/* Or end before they begin. */
	if (f->jdk->v25) {
		put(&f->im, n.nm + 160, 64, 4);
		put(&f->im, n.nm + 196, 48, 4);
		put(&f->im, n.nm + 200, 16, 4);
	} else {
		put(&f->im, n.nm + 272, 16, 4);
	}
	jf = compiled(&n, 6, 0x41);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 20);
	/* A pc outside the code. */
	jf = compiled(&n, 6, CODE_SIZE + 8);
	assert_unresolved(f, &jf, HOTSPOT_UNRESOLVED_INVALID, 20);
}

/* ---- Bounds of the caches ---- */

static void caches_stay_within_their_bounds(void **state)
{
	struct fixture *f = *state;
	/* Blobs 8 bytes apart, overlapping: every word of them is the name's address, wherever a blob's name lies. */
	const int nr = HOTSPOT_NAMES_MAX_ENTRIES * 5 / 2;
	uint64_t name = alloc(&f->im, 16), blobs = alloc(&f->im, 8 * (size_t)nr + 128);
	struct hotspot_names__cache_stats cs;
	struct hotspot_frame out[1];

	strcpy((char *)at(&f->im, name), "vtable chunks");
	for (int i = 0; i < nr + 16; i++)
		put(&f->im, blobs + 8 * (uint64_t)i, name, 8);
	for (int i = 0; i < nr; i++) {
		uint64_t blob = blobs + 8 * (uint64_t)i;
		struct jbpf_java_frame jf = { .kind = JBPF_JAVA_STUB, .ptr = blob, .pc = blob + 64 };

		assert_int_equal(hotspot_names__frame(f->names, &jf, out, 1), 1);
		assert_string_equal(out[0].method, "vtable chunks");
		hotspot_names__cache_stats(f->names, &cs);
		assert_in_range(cs.methods, 1, HOTSPOT_NAMES_MAX_ENTRIES);
	}
	/* Emptied each time it nearly filled: twice in two and a half times its bound. */
	assert_int_equal(cs.clears, 2);
}

#define BOTH(test) cmocka_unit_test_setup_teardown(test, setup17, teardown), \
		   cmocka_unit_test_setup_teardown(test, setup25, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(interpreted_frames_have_names_bci_and_line),
		BOTH(source_file_from_the_pool_or_none),
		BOTH(hidden_classes_keep_their_address),
		BOTH(native_methods_are_named_native),
		BOTH(compiled_frames_expand_inlined_scopes),
		BOTH(c1_and_native_wrappers),
		BOTH(stubs_are_named_by_their_blob),
		BOTH(stale_cookies_are_moved),
		BOTH(unreadable_memory_is_read),
		BOTH(bcp_outside_the_bytecodes_is_invalid),
		BOTH(huge_symbol_over_unreadable_memory),
		BOTH(looping_scope_chain_is_invalid),
		BOTH(line_table_without_end),
		BOTH(absurd_pc_desc_tables_are_invalid),
		BOTH(caches_stay_within_their_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
