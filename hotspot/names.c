/*
 * names: the Java frames of a walk named from the JVM's memory (names.h).
 *
 * A method's names come from its ConstMethod (share/oops/constMethod.hpp):
 *
 *   Method --_constMethod--> ConstMethod --_constants--> ConstantPool --_pool_holder--> Klass
 *                            | _name_index, _signature_index:   | entries (intptr_t) follow   | _name
 *                            | bytecodes follow, then the        | sizeof(ConstantPool): a     v
 *                            | compressed line number table      v utf8 entry is a Symbol *    Symbol {_length, _body}
 *
 * and every offset and size on that path is HotSpot's own (VMStructs), but
 * for one constant the JVM specification fixes: ACC_NATIVE (0x0100, JVMS
 * 4.6), which HotSpot keeps as it is in the low bits of AccessFlags.
 *
 * Races (names.h): an interpreted frame is named only if the Method still
 * points at the walker's ConstMethod, checked before and after its names
 * are read, so a class unloaded meanwhile gives MOVED; a compiled frame only
 * if the nmethod keeps the walker's compile id (scopes.c). A frame whose
 * names are cached is named without a read: its cookie was read by the
 * walker when the sample was taken, and the cache's key holds it, so a
 * Method whose ConstMethod changed (or an nmethod recompiled) is a new key.
 * A method inlined into a live nmethod stays loaded while the nmethod is
 * (class unloading flushes its dependents first).
 *
 * Caches: methods by (Method *, ConstMethod *), what was read of an
 * nmethod (its header's parts and its PcDescs) by (nmethod, compile id),
 * and scope lists by (nmethod, compile id, scope offset),
 * NAMES_MAX_ENTRIES each and NAMES_MAX_BYTES together. When one is nearly
 * full at the start of a call, all are emptied (counted in clears):
 * strings handed out stay valid until the next call, so nothing is freed
 * inside one.
 *
 * Bounds: a symbol keeps at most NAMES_MAX_NAME bytes (a longer one is cut
 * and ends in "..."), a line table at most NAMES_MAX_LINE_TABLE bytes, a
 * scope chain HOTSPOT_NAMES_MAX_INLINE scopes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot/names.h"
#include "hotspot/names_internal.h"

/* Entries of each cache: javac from its first instant names some ten thousand methods and PcDescs. */
#define NAMES_MAX_ENTRIES HOTSPOT_NAMES_MAX_ENTRIES
/* Slots of a cache at first; they double as it fills, up to twice NAMES_MAX_ENTRIES. */
#define NAMES_FIRST_SLOTS 512
/* Bytes of both caches: entries are mostly under 300 bytes, line tables up to 64 KiB. */
#define NAMES_MAX_BYTES (16u << 20)
/* Bytes of one name kept: class names and signatures of real code are far shorter. */
#define NAMES_MAX_NAME 1024
/* Bytes of a stub's name (libjvm's literals, such as "StubRoutines (final stubs)"). */
#define NAMES_MAX_STUB_NAME 128
/* A page of the target: a symbol's speculative read stops at its end. */
#define NAMES_PAGE 4096u
/* ACC_NATIVE of the class file format (JVMS 4.6), not in VMStructs. */
#define ACC_NATIVE 0x0100

struct cache_key {
	uint64_t a, b, c;
};

/* What each cache entry starts with. */
struct cache_head {
	struct cache_key key;
	size_t bytes;
};

/* Open addressing, linear probing, twice as many slots as entries. */
struct cache {
	struct cache_head **slots;
	size_t mask, count;
};

/* A method's names, by (Method *, ConstMethod *); a stub's by (CodeBlob *, name pointer, 1). */
struct method_entry {
	struct cache_head head;
	const char *klass, *name, *signature;
	const char *file; /* the class's source file, NULL when none */
	uint8_t *lines; /* compressed line number table, NULL when none */
	size_t lines_len;
	uint16_t code_size;
	bool native;
	char text[]; /* klass, name, signature, file, each ended by NUL */
};

/* What scopes.c read of an nmethod, by (nmethod, compile id, 0), or why it could not (nm NULL). */
struct nmethod_entry {
	struct cache_head head;
	struct names_nmethod *nm;
	int unresolved; /* enum hotspot_unresolved, 0 when nm was read */
};

/*
 * The scopes of a PcDesc's scope offset, by (nmethod, compile id, offset),
 * or why it has none (nr 0).
 */
struct scope_entry {
	struct cache_head head;
	uint32_t level;
	int nr;
	int unresolved; /* enum hotspot_unresolved, 0 when the scopes were read */
	struct names_scope scopes[];
};

struct hotspot_names {
	struct hotspot_memory *mem;
	struct names_layout l;
	struct cache methods, nmethods, scopes;
	size_t bytes;
	uint64_t clears;
	struct hotspot_names__stats stats;
};

static uint64_t key_hash(const struct cache_key *k)
{
	uint64_t h = k->a * 0x9e3779b97f4a7c15ull;

	h ^= (k->b + (h << 6) + (h >> 2)) * 0xbf58476d1ce4e5b9ull;
	h ^= (k->c + (h << 6) + (h >> 2)) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static bool cache_init(struct cache *c)
{
	c->slots = calloc(NAMES_FIRST_SLOTS, sizeof(*c->slots));
	c->mask = NAMES_FIRST_SLOTS - 1;
	c->count = 0;
	return c->slots != NULL;
}

/* The slot where an entry of key k goes (or is). */
static size_t cache_slot(const struct cache *c, const struct cache_key *k)
{
	size_t i = key_hash(k) & c->mask;

	while (c->slots[i] && memcmp(&c->slots[i]->key, k, sizeof(*k)))
		i = (i + 1) & c->mask;
	return i;
}

/* Twice the slots when half are used (at most 2 * NAMES_MAX_ENTRIES): false when there is no memory for it. */
static bool cache_grow(struct cache *c)
{
	struct cache bigger = { .mask = 2 * c->mask + 1, .count = c->count };

	if (c->count < (c->mask + 1) / 2 || c->mask + 1 >= 2 * NAMES_MAX_ENTRIES)
		return true;
	if (!(bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots))))
		return false;
	for (size_t i = 0; i <= c->mask; i++)
		if (c->slots[i])
			bigger.slots[cache_slot(&bigger, &c->slots[i]->key)] = c->slots[i];
	free(c->slots);
	*c = bigger;
	return true;
}

static void *cache_get(const struct cache *c, const struct cache_key *k)
{
	return c->slots[cache_slot(c, k)];
}

/* Adds e (not present); the caller keeps count below the slots, so a free slot exists. */
static void cache_put(struct hotspot_names *n, struct cache *c, struct cache_head *e)
{
	c->slots[cache_slot(c, &e->key)] = e;
	c->count++;
	n->bytes += e->bytes;
}

static void free_method_entry(struct cache_head *h)
{
	free(((struct method_entry *)h)->lines);
}

static void free_nmethod_entry(struct cache_head *h)
{
	free(((struct nmethod_entry *)h)->nm);
}

/* Frees every entry, and what free_parts says each owns besides (NULL: nothing). */
static void cache_clear(struct cache *c, void (*free_parts)(struct cache_head *))
{
	for (size_t i = 0; i <= c->mask; i++) {
		if (c->slots[i] && free_parts)
			free_parts(c->slots[i]);
		free(c->slots[i]);
		c->slots[i] = NULL;
	}
	c->count = 0;
}

static void clear_all(struct hotspot_names *n)
{
	if (n->methods.slots)
		cache_clear(&n->methods, free_method_entry);
	if (n->nmethods.slots)
		cache_clear(&n->nmethods, free_nmethod_entry);
	if (n->scopes.slots)
		cache_clear(&n->scopes, NULL);
}

/* Empties the caches when one call could overfill one (a call adds at most MAX_INLINE + 1 entries to each). */
static void make_room(struct hotspot_names *n)
{
	size_t margin = HOTSPOT_NAMES_MAX_INLINE + 1;

	if (n->methods.count + margin <= NAMES_MAX_ENTRIES && n->nmethods.count + margin <= NAMES_MAX_ENTRIES &&
	    n->scopes.count + margin <= NAMES_MAX_ENTRIES && n->bytes <= NAMES_MAX_BYTES &&
	    cache_grow(&n->methods) && cache_grow(&n->nmethods) && cache_grow(&n->scopes))
		return;
	clear_all(n);
	n->bytes = 0;
	n->clears++;
}

static bool plausible(uint64_t addr)
{
	return addr && addr < (1ull << 47) && !(addr & 7);
}

/* Bytes of a symbol's window at sym: length and body in one read, not past sym's page, so readable whenever its start is. */
static size_t symbol_span(uint64_t sym)
{
	return plausible(sym) ? NAMES_PAGE - sym % NAMES_PAGE : 0;
}

/*
 * The Symbol at sym into buf (NUL-terminated, at most NAMES_MAX_NAME bytes
 * and "..." when cut), read through w, a window opened over symbol_span(sym)
 * at sym: 0 or an enum hotspot_unresolved.
 */
static int read_symbol(struct hotspot_names *n, struct hotspot_window *w, uint64_t sym, char *buf)
{
	uint64_t len;
	size_t take;

	if (!plausible(sym))
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_names__read_field(&w->mem, sym, n->l.symbol_length, &len))
		return HOTSPOT_UNRESOLVED_READ;
	take = len > NAMES_MAX_NAME ? NAMES_MAX_NAME : (size_t)len;
	if (!hotspot_memory__read(&w->mem, sym + n->l.symbol_body, buf, take))
		return HOTSPOT_UNRESOLVED_READ;
	/* Symbols are modified UTF-8, which codes NUL in two bytes: a zero byte means garbage. */
	if (memchr(buf, 0, take))
		return HOTSPOT_UNRESOLVED_INVALID;
	strcpy(buf + take, take < len ? "..." : "");
	return 0;
}

/* The Symbol * of constant pool entry idx, read through mem. */
static int pool_symbol(struct hotspot_names *n, struct hotspot_memory *mem, uint64_t pool, int64_t length,
		       uint64_t idx, uint64_t *sym)
{
	if (idx == 0 || (int64_t)idx >= length)
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_memory__u64(mem, pool + n->l.pool_size + 8 * idx, sym))
		return HOTSPOT_UNRESOLVED_READ;
	return 0;
}

/*
 * A class name as Java prints it: "java/util/HashMap" -> "java.util.HashMap".
 * A hidden class (a lambda's, a method handle's) is named "Outer$$Lambda+0x..."
 * (JDK 17) or "Outer$$Lambda/0x..." (later): the address after the
 * last '+' or '/' before "0x" is kept with '/' as Class.getName() shows it.
 */
static void java_class_name(char *s)
{
	char *hidden = strstr(s, "+0x");

	if (!hidden) {
		char *slash = strrchr(s, '/');

		if (slash && !strncmp(slash, "/0x", 3) && strchr(s, '$'))
			hidden = slash;
	}
	for (char *p = s; *p && p != hidden; p++)
		if (*p == '/')
			*p = '.';
	if (hidden)
		*hidden = '/';
}

/* What read_method reads of a Method before method_names builds the entry. */
struct method_read {
	uint64_t const_method, pool, holder, flags, code_size, access;
	uint8_t *lines;   /* compressed line number table (malloc'd), NULL when none */
	size_t lines_len;
	char klass[NAMES_MAX_NAME + 4], name[NAMES_MAX_NAME + 4], signature[NAMES_MAX_NAME + 4];
	char file[NAMES_MAX_NAME + 4]; /* "" when the class names none, or it could not be read */
	/* Where the reads land: windows are large, so they live here rather than on the stack. */
	struct hotspot_window method_w, const_w, pool_w, entries_w, lines_w, holder_w, name_w, sig_w, klass_w, again_w;
	struct hotspot_window file_entry_w, file_w;
};

/*
 * The names of the Method at method, whose ConstMethod is expected_const,
 * read in five gathers, each of what the one before it made known:
 *
 *   1. the Method (its ConstMethod, access flags);
 *   2. the ConstMethod (pool, name and signature indexes, code size, flags);
 *   3. the pool's header, its two entries, the line table's first bytes;
 *   4. the holder's name field, the name's and the signature's Symbols,
 *      the pool's source file entry;
 *   5. the holder's name Symbol, the source file's, and the Method's
 *      ConstMethod once more: unloaded meanwhile, what was read may be
 *      another method's (MOVED).
 *
 * Each object's fields come from one window: an object that cannot be read
 * whole is no Method, ConstMethod or ConstantPool.
 */
static int read_method(struct hotspot_names *n, uint64_t method, uint64_t expected_const, struct method_read *m)
{
	const struct names_layout *l = &n->l;
	uint64_t name_idx, sig_idx, klass_sym = 0, name_sym, sig_sym, length, first, last, lines_at, again;
	uint64_t file_idx = 0, file_sym = 0;
	bool has_lines;
	int r;

	m->lines = NULL;
	m->lines_len = 0;
	m->file[0] = '\0';
	if (!plausible(method))
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_memory__window_open(&m->method_w, n->mem, method, NAMES_FIELDS_SPAN(l->method_const, l->method_access)) ||
	    !hotspot_names__read_field(&m->method_w.mem, method, l->method_const, &m->const_method) ||
	    !hotspot_names__read_field(&m->method_w.mem, method, l->method_access, &m->access))
		return HOTSPOT_UNRESOLVED_READ;
	if (m->const_method != expected_const)
		return HOTSPOT_UNRESOLVED_MOVED;
	if (!plausible(m->const_method))
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_memory__window_open(&m->const_w, n->mem, m->const_method,
				 NAMES_FIELDS_SPAN(l->const_constants, l->const_flags, l->const_code_size,
					     l->const_name_index, l->const_signature_index)) ||
	    !hotspot_names__read_field(&m->const_w.mem, m->const_method, l->const_constants, &m->pool) ||
	    !hotspot_names__read_field(&m->const_w.mem, m->const_method, l->const_flags, &m->flags) ||
	    !hotspot_names__read_field(&m->const_w.mem, m->const_method, l->const_code_size, &m->code_size) ||
	    !hotspot_names__read_field(&m->const_w.mem, m->const_method, l->const_name_index, &name_idx) ||
	    !hotspot_names__read_field(&m->const_w.mem, m->const_method, l->const_signature_index, &sig_idx))
		return HOTSPOT_UNRESOLVED_READ;
	if (!plausible(m->pool))
		return HOTSPOT_UNRESOLVED_INVALID;
	/* Both entries in one window when they lie close enough; else each is read on its own. */
	first = name_idx < sig_idx ? name_idx : sig_idx;
	last = name_idx > sig_idx ? name_idx : sig_idx;
	has_lines = m->flags & l->has_line_table;
	lines_at = m->const_method + l->const_size + m->code_size;
	{
		struct hotspot_window *const ws[] = { &m->pool_w, &m->entries_w, &m->lines_w };
		const uint64_t at[] = { m->pool, m->pool + l->pool_size + 8 * first, lines_at };
		const size_t len[] = { NAMES_FIELDS_SPAN(l->pool_holder, l->pool_length, l->pool_source_file),
				       8 * (last - first + 1),
				       has_lines ? hotspot_lines__first_read(lines_at) : 0 };

		hotspot_memory__windows_open(ws, n->mem, at, len, 3);
	}
	if (!m->pool_w.len || !hotspot_names__read_field(&m->pool_w.mem, m->pool, l->pool_holder, &m->holder) ||
	    !hotspot_names__read_field(&m->pool_w.mem, m->pool, l->pool_length, &length))
		return HOTSPOT_UNRESOLVED_READ;
	/* A constant pool has at most 65535 entries (JVMS 4.1: constant_pool_count is a u2). */
	if (!plausible(m->holder) || (int32_t)length <= 0 || length > 65535)
		return HOTSPOT_UNRESOLVED_INVALID;
	if ((r = pool_symbol(n, &m->entries_w.mem, m->pool, (int64_t)length, name_idx, &name_sym)) ||
	    (r = pool_symbol(n, &m->entries_w.mem, m->pool, (int64_t)length, sig_idx, &sig_sym)))
		return r;
	/* 0, or an index past the pool: no file named (the file is the class's, not needed for its names). */
	if (!l->pool_source_file.size || !hotspot_names__read_field(&m->pool_w.mem, m->pool, l->pool_source_file, &file_idx) ||
	    (int64_t)file_idx >= (int64_t)length)
		file_idx = 0;
	/* A table that cannot be read or never ends costs the lines, not the names. */
	if (has_lines && hotspot_lines__read_table(&m->lines_w.mem, lines_at, l->u5_excluded, &m->lines, &m->lines_len))
		m->lines = NULL;
	{
		struct hotspot_window *const ws[] = { &m->holder_w, &m->name_w, &m->sig_w, &m->file_entry_w };
		const uint64_t at[] = { m->holder + l->klass_name.offset, name_sym, sig_sym,
					m->pool + l->pool_size + 8 * file_idx };
		const size_t len[] = { l->klass_name.size, symbol_span(name_sym), symbol_span(sig_sym), file_idx ? 8 : 0 };

		hotspot_memory__windows_open(ws, n->mem, at, len, 4);
	}
	if (!hotspot_names__read_field(&m->holder_w.mem, m->holder, l->klass_name, &klass_sym))
		return HOTSPOT_UNRESOLVED_READ;
	if (file_idx && pool_symbol(n, &m->file_entry_w.mem, m->pool, (int64_t)length, file_idx, &file_sym))
		file_sym = 0;
	{
		struct hotspot_window *const ws[] = { &m->klass_w, &m->file_w, &m->again_w };
		const uint64_t at[] = { klass_sym, file_sym, method + l->method_const.offset };
		const size_t len[] = { symbol_span(klass_sym), file_sym ? symbol_span(file_sym) : 0, l->method_const.size };

		hotspot_memory__windows_open(ws, n->mem, at, len, 3);
	}
	if ((r = read_symbol(n, &m->klass_w, klass_sym, m->klass)) || (r = read_symbol(n, &m->name_w, name_sym, m->name)) ||
	    (r = read_symbol(n, &m->sig_w, sig_sym, m->signature)))
		return r;
	/* A source file that cannot be read costs the file alone. */
	if (file_sym && read_symbol(n, &m->file_w, file_sym, m->file))
		m->file[0] = '\0';
	/* Read last: a Method unloaded (or unmapped) while its names were read may have had them from another. */
	if (!m->again_w.len || !hotspot_names__read_field(&m->again_w.mem, method, l->method_const, &again) ||
	    again != expected_const)
		return HOTSPOT_UNRESOLVED_MOVED;
	java_class_name(m->klass);
	return 0;
}

/* A new method entry holding m's names, or NULL when out of memory. */
static struct method_entry *method_entry_new(const struct cache_key *key, const char *klass, const char *name,
					     const char *signature, const char *file)
{
	size_t lk = strlen(klass) + 1, ln = strlen(name) + 1, ls = strlen(signature) + 1, lf = strlen(file) + 1;
	struct method_entry *e = calloc(1, sizeof(*e) + lk + ln + ls + lf);

	if (!e)
		return NULL;
	e->head.key = *key;
	e->head.bytes = sizeof(*e) + lk + ln + ls + lf;
	memcpy(e->text, klass, lk);
	memcpy(e->text + lk, name, ln);
	memcpy(e->text + lk + ln, signature, ls);
	memcpy(e->text + lk + ln + ls, file, lf);
	e->klass = e->text;
	e->name = e->text + lk;
	e->signature = e->text + lk + ln;
	e->file = lf > 1 ? e->text + lk + ln + ls : NULL;
	return e;
}

/*
 * The entry of (method, const_method), from the cache or read: 0 with *out
 * (and *cached), or an enum hotspot_unresolved.
 */
static int method_names(struct hotspot_names *n, uint64_t method, uint64_t const_method, struct method_entry **out,
			bool *cached)
{
	struct cache_key key = { method, const_method, 0 };
	struct method_read *m;
	struct method_entry *e;
	int r;

	*out = cache_get(&n->methods, &key);
	*cached = *out != NULL;
	if (*out)
		return 0;
	m = malloc(sizeof(*m));
	if (!m)
		return HOTSPOT_UNRESOLVED_READ;
	r = read_method(n, method, const_method, m);
	e = r ? NULL : method_entry_new(&key, m->klass, m->name, m->signature, m->file);
	if (!e) {
		free(m->lines);
		free(m);
		return r ? r : HOTSPOT_UNRESOLVED_READ;
	}
	e->code_size = (uint16_t)m->code_size;
	e->native = m->access & ACC_NATIVE;
	e->lines = m->lines;
	e->lines_len = m->lines_len;
	e->head.bytes += e->lines_len;
	cache_put(n, &n->methods, &e->head);
	*out = e;
	free(m);
	return 0;
}

static void unresolved(struct hotspot_frame *f, uint8_t kind, int reason, uint64_t method)
{
	*f = (struct hotspot_frame){ .bci = -1, .kind = kind, .unresolved = (uint8_t)reason, .method_ptr = method };
}

static void named(const struct hotspot_names *n, struct hotspot_frame *f, const struct method_entry *e, uint8_t kind,
		  int32_t bci, uint64_t method)
{
	*f = (struct hotspot_frame){
		.klass = e->klass,
		.method = e->name,
		.signature = e->signature,
		.bci = bci,
		.line = e->lines ? hotspot_lines__of_bci(e->lines, e->lines_len, n->l.u5_excluded, bci) : 0,
		.file = e->file,
		.kind = kind,
		.method_ptr = method,
	};
}

static int interpreted(struct hotspot_names *n, const struct jbpf_java_frame *jf, struct hotspot_frame *out)
{
	uint64_t bytecodes = jf->cookie + n->l.const_size;
	struct method_entry *e;
	bool cached;
	int r = method_names(n, jf->ptr, jf->cookie, &e, &cached);

	if (r) {
		unresolved(out, HOTSPOT_FRAME_INTERPRETED, r, jf->ptr);
		return 1;
	}
	n->stats.cached += cached;
	/* A native method's interpreter frame has no bcp. */
	if (!jf->pc) {
		if (e->native)
			named(n, out, e, HOTSPOT_FRAME_NATIVE, -1, jf->ptr);
		else
			unresolved(out, HOTSPOT_FRAME_INTERPRETED, HOTSPOT_UNRESOLVED_INVALID, jf->ptr);
		return 1;
	}
	/* The walker's ConstMethod is current, so a bcp outside its bytecodes was never a bcp of it. */
	if (jf->pc < bytecodes || jf->pc - bytecodes >= e->code_size) {
		unresolved(out, HOTSPOT_FRAME_INTERPRETED, HOTSPOT_UNRESOLVED_INVALID, jf->ptr);
		return 1;
	}
	named(n, out, e, HOTSPOT_FRAME_INTERPRETED, (int32_t)(jf->pc - bytecodes), jf->ptr);
	return 1;
}

/*
 * What was read of (nmethod, compile id), from the cache or read: 0 with
 * *out, or an enum hotspot_unresolved. One that could not be read is
 * remembered too, with its reason: the key stands for one nmethod (its
 * compile id, checked before and after the read), and the frames of a
 * hostile or damaged one would otherwise be read again at every sample,
 * up to 255 times in one (frames whose senders repeat), far slower than
 * samples come.
 */
static int compiled_nmethod(struct hotspot_names *n, const struct jbpf_java_frame *jf, struct nmethod_entry **out)
{
	struct cache_key key = { jf->ptr, jf->cookie, 0 };
	struct nmethod_entry *e = cache_get(&n->nmethods, &key);
	struct names_nmethod *nm;
	int r;

	if (!e) {
		r = hotspot_scopes__nmethod(&n->l, n->mem, jf->ptr, jf->cookie, &nm);
		if (!(e = malloc(sizeof(*e)))) {
			free(nm);
			return r ? r : HOTSPOT_UNRESOLVED_READ;
		}
		e->head.key = key;
		e->head.bytes = sizeof(*e) + (nm ? sizeof(*nm) + (nm->copied ? nm->nr_pcs * sizeof(nm->pcs[0]) : 0) : 0);
		e->nm = nm;
		e->unresolved = r;
		cache_put(n, &n->nmethods, &e->head);
	}
	*out = e;
	return e->unresolved;
}

/*
 * The scopes of (nmethod, compile id, pc), each with its ConstMethod:
 * 0 with *out, or an enum hotspot_unresolved. Kept by the scope offset
 * of pc's PcDesc, which every pc up to that PcDesc shares: a sampled pc
 * met for the first time in a known nmethod costs no read. Scopes that
 * could not be read are remembered too, as compiled_nmethod says.
 */
static int compiled_scopes(struct hotspot_names *n, const struct jbpf_java_frame *jf, struct scope_entry **out,
			   bool *cached)
{
	struct names_scope scopes[HOTSPOT_NAMES_MAX_INLINE];
	struct nmethod_entry *ne;
	struct scope_entry *e;
	struct cache_key key;
	uint64_t scope;
	int nr = 0, r;

	*cached = false;
	r = compiled_nmethod(n, jf, &ne);
	if (!r)
		r = hotspot_scopes__offset_at(&n->l, n->mem, ne->nm, jf->pc, &scope);
	if (r)
		return r;
	key = (struct cache_key){ jf->ptr, jf->cookie, scope };
	if ((e = cache_get(&n->scopes, &key))) {
		*cached = true;
		*out = e;
		return e->unresolved;
	}
	r = hotspot_scopes__of(&n->l, n->mem, ne->nm, scope, jf->cookie, scopes, HOTSPOT_NAMES_MAX_INLINE, &nr);
	if (r)
		nr = 0;
	e = malloc(sizeof(*e) + nr * sizeof(e->scopes[0]));
	if (!e)
		return r ? r : HOTSPOT_UNRESOLVED_READ;
	e->head.key = key;
	e->head.bytes = sizeof(*e) + nr * sizeof(e->scopes[0]);
	e->level = ne->nm->level;
	e->nr = nr;
	e->unresolved = r;
	memcpy(e->scopes, scopes, nr * sizeof(scopes[0]));
	cache_put(n, &n->scopes, &e->head);
	*out = e;
	return r;
}

/* How the outermost scope ran: its compiler by _comp_level, or a native method's wrapper. */
static uint8_t compiled_kind(const struct names_layout *l, uint32_t level, bool native)
{
	if (native)
		return HOTSPOT_FRAME_NATIVE;
	if ((int32_t)level >= l->level_c1_low && (int32_t)level <= l->level_c1_high)
		return HOTSPOT_FRAME_C1;
	return HOTSPOT_FRAME_C2;
}

static int compiled(struct hotspot_names *n, const struct jbpf_java_frame *jf, struct hotspot_frame *out, int max)
{
	struct scope_entry *s;
	bool cached;
	int r = compiled_scopes(n, jf, &s, &cached), nr;

	if (r) {
		unresolved(out, 0, r, 0);
		return 1;
	}
	/* Innermost first; when max is short, the outermost are left out. */
	nr = s->nr < max ? s->nr : max;
	for (int i = 0; i < nr; i++) {
		const struct names_scope *sc = &s->scopes[i];
		bool outer = i == s->nr - 1, hit;
		struct method_entry *e;

		r = method_names(n, sc->method, sc->const_method, &e, &hit);
		if (r) {
			unresolved(&out[i], outer ? 0 : HOTSPOT_FRAME_INLINED, r, sc->method);
			continue;
		}
		n->stats.cached += cached && hit;
		if (sc->bci < -1 || sc->bci >= (int32_t)e->code_size) {
			unresolved(&out[i], outer ? 0 : HOTSPOT_FRAME_INLINED, HOTSPOT_UNRESOLVED_INVALID, sc->method);
			continue;
		}
		named(n, &out[i], e, outer ? compiled_kind(&n->l, s->level, e->native) : HOTSPOT_FRAME_INLINED,
		      sc->bci, sc->method);
	}
	return nr;
}

static int stub(struct hotspot_names *n, const struct jbpf_java_frame *jf, struct hotspot_frame *out)
{
	struct cache_key key = { jf->ptr, 0, 1 };
	char name[NAMES_MAX_STUB_NAME];
	struct method_entry *e;

	if (!plausible(jf->ptr)) {
		unresolved(out, HOTSPOT_FRAME_STUB, HOTSPOT_UNRESOLVED_INVALID, 0);
		return 1;
	}
	/* Keyed by the name's pointer too: a blob freed and its space reused by another has another name. */
	if (!hotspot_names__read_field(n->mem, jf->ptr, n->l.blob_name, &key.b)) {
		unresolved(out, HOTSPOT_FRAME_STUB, HOTSPOT_UNRESOLVED_READ, 0);
		return 1;
	}
	e = cache_get(&n->methods, &key);
	if (e) {
		n->stats.cached++;
	} else {
		long len = hotspot_memory__string(n->mem, key.b, name, sizeof(name));

		if (len <= 0) {
			unresolved(out, HOTSPOT_FRAME_STUB, len ? HOTSPOT_UNRESOLVED_READ : HOTSPOT_UNRESOLVED_INVALID, 0);
			return 1;
		}
		e = method_entry_new(&key, "", name, "", "");
		if (!e) {
			unresolved(out, HOTSPOT_FRAME_STUB, HOTSPOT_UNRESOLVED_READ, 0);
			return 1;
		}
		cache_put(n, &n->methods, &e->head);
	}
	/* A stub has no class and no signature: "" for both, its blob's name as the method. */
	named(n, out, e, HOTSPOT_FRAME_STUB, -1, 0);
	return 1;
}

int hotspot_names__frame(struct hotspot_names *names, const struct jbpf_java_frame *frame, struct hotspot_frame *out,
			int max)
{
	int nr;

	if (max < 1)
		return 0;
	make_room(names);
	switch (frame->kind) {
	case JBPF_JAVA_INTERPRETED:
		nr = interpreted(names, frame, out);
		break;
	case JBPF_JAVA_COMPILED:
		nr = compiled(names, frame, out, max);
		break;
	case JBPF_JAVA_STUB:
		nr = stub(names, frame, out);
		break;
	default:
		unresolved(out, 0, HOTSPOT_UNRESOLVED_INVALID, 0);
		nr = 1;
		break;
	}
	for (int i = 0; i < nr; i++) {
		if (out[i].unresolved)
			names->stats.unresolved[out[i].unresolved]++;
		else
			names->stats.named++;
	}
	return nr;
}

int hotspot_names__klass(struct hotspot_names *n, uint64_t klass, char *out, size_t size)
{
	static char name[NAMES_MAX_NAME + 4];
	struct hotspot_window w;
	uint64_t sym;
	int r;

	if (!plausible(klass))
		return HOTSPOT_UNRESOLVED_INVALID;
	if (!hotspot_names__read_field(n->mem, klass, n->l.klass_name, &sym))
		return HOTSPOT_UNRESOLVED_READ;
	if (!hotspot_memory__window_open(&w, n->mem, sym, symbol_span(sym)))
		return HOTSPOT_UNRESOLVED_READ;
	r = read_symbol(n, &w, sym, name);
	if (r)
		return r;
	java_class_name(name);
	snprintf(out, size, "%s", name);
	return 0;
}

void hotspot_names__stats(const struct hotspot_names *names, struct hotspot_names__stats *out)
{
	*out = names->stats;
}

void hotspot_names__cache_stats(const struct hotspot_names *names, struct hotspot_names__cache_stats *out)
{
	*out = (struct hotspot_names__cache_stats){
		.methods = names->methods.count,
		.scopes = names->scopes.count,
		.bytes = names->bytes,
		.clears = names->clears,
	};
}

void hotspot_names__free(struct hotspot_names *names)
{
	if (!names)
		return;
	clear_all(names);
	free(names->methods.slots);
	free(names->nmethods.slots);
	free(names->scopes.slots);
	free(names);
}

struct hotspot_names *hotspot_names__new(const struct hotspot_vm *vm, struct hotspot_memory *mem, char *err,
					size_t err_size)
{
	struct hotspot_names *n = calloc(1, sizeof(*n));

	if (!n) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	n->mem = mem;
	if (hotspot_names__layout_read(vm, mem, &n->l, err, err_size)) {
		free(n);
		return NULL;
	}
	if (!cache_init(&n->methods) || !cache_init(&n->nmethods) || !cache_init(&n->scopes)) {
		snprintf(err, err_size, "out of memory");
		hotspot_names__free(n);
		return NULL;
	}
	return n;
}
