/*
 * jfr_read: a JDK Flight Recorder file's samples into a profile (contract
 * in jfr_read.h).
 *
 * The file is read where it lies: a constant pool is a map from key to the
 * offset of its entry, and a value is read from its offset by walking the
 * fields its class declares, skipping those not wanted. A stack trace,
 * thread or state once read is remembered by its key, so a sample costs a
 * few map lookups.
 */
#include "jfr_read.h"
#include "jfr_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#include "common/clock.h"
#include "common/refuse.h"
#include "common/terminal.h"
#include "profile/profile.h"

#define HEADER_BYTES 68
/* Checkpoints of one chunk followed back. */
#define MAX_CHECKPOINTS 1000000

/* ---- a map from 64-bit keys to 64-bit values ------------------------------------------------ */

/*
 * The keys are the file's (constant pool keys, class ids), and the mix is
 * invertible: whoever knows it can write keys that all land in one slot,
 * and each insertion then walks all the keys before it (200,000 such keys
 * took minutes). Keys are mixed with a secret drawn once per process, so a
 * file cannot aim at a slot.
 */
static uint64_t map_secret(void)
{
	static uint64_t secret;
	static bool drawn;

	if (!drawn) {
		if (getrandom(&secret, sizeof(secret), 0) != (ssize_t)sizeof(secret))
			secret = (uint64_t)clock__monotonic_ns() * 0x9e3779b97f4a7c15ull;
		drawn = true;
	}
	return secret;
}

static uint64_t mix(uint64_t k)
{
	k ^= map_secret();
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

bool jfr_read__map_get(const struct map *m, uint64_t key, uint64_t *value)
{
	if (!m->cap)
		return false;
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key) {
			*value = m->values[i];
			return true;
		}
	}
}

/* Sets key to value (a key given twice keeps its last value). 0 or -ENOMEM. */
int jfr_read__map_put(struct map *m, uint64_t key, uint64_t value)
{
	size_t i;

	if ((m->nr + 1) * 2 > m->cap) {
		struct map n = {.cap = m->cap ? m->cap * 2 : 64};

		n.keys = calloc(n.cap, sizeof(*n.keys));
		n.values = calloc(n.cap, sizeof(*n.values));
		n.used = calloc(n.cap, 1);
		if (!n.keys || !n.values || !n.used) {
			free(n.keys);
			free(n.values);
			free(n.used);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->used[j])
				jfr_read__map_put(&n, m->keys[j], m->values[j]);
		free(m->keys);
		free(m->values);
		free(m->used);
		*m = n;
	}
	for (i = mix(key) & (m->cap - 1); m->used[i] && m->keys[i] != key; i = (i + 1) & (m->cap - 1))
		;
	if (!m->used[i])
		m->nr++;
	m->used[i] = 1;
	m->keys[i] = key;
	m->values[i] = value;
	return 0;
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->values);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

/* ---- the reader's state ---------------------------------------------------------------------- */


static struct cur cur_at(const struct reader *r, size_t offset, size_t end)
{
	if (offset > end || end > r->len)
		return (struct cur){.p = r->base, .end = r->base, .bad = true};
	return (struct cur){.p = r->base + offset, .end = r->base + end};
}

static uint8_t get_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint64_t get_fixed(struct cur *c, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | get_u8(c);
	return v;
}

/* An integer: compressed (7 bits a byte, the ninth whole), or big-endian of its size. */
uint64_t jfr_read__get_int(struct cur *c, bool compressed, int bytes)
{
	uint64_t v = 0;

	if (!compressed)
		return get_fixed(c, bytes);
	for (int i = 0; i < 8; i++) {
		uint8_t b = get_u8(c);

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v | (uint64_t)get_u8(c) << 56;
}

uint64_t jfr_read__get_long(struct reader *r, struct cur *c)
{
	return jfr_read__get_int(c, r->compressed, 8);
}

/* ---- values ------------------------------------------------------------------------------------ */


/* Appends the UTF-8 of code point u to out (at most size - 1 bytes kept in all). */
static void put_utf8(char *out, size_t size, size_t *n, uint32_t u)
{
	char b[4];
	size_t len;

	/* Most names are ASCII: one byte, no more tests. */
	if (u < 0x80) {
		if (*n + 1 < size)
			out[(*n)++] = (char)u;
		return;
	}
	if (u >= 0xd800 && u < 0xe000)
		u = '?'; /* a lone surrogate half: no character */
	if (u < 0x80) {
		b[0] = (char)u, len = 1;
	} else if (u < 0x800) {
		b[0] = (char)(0xc0 | u >> 6), b[1] = (char)(0x80 | (u & 0x3f)), len = 2;
	} else {
		b[0] = (char)(0xe0 | u >> 12), b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f)), len = 3;
	}
	if (*n + len < size) {
		memcpy(out + *n, b, len);
		*n += len;
	}
}

static bool read_pooled_string(struct reader *r, uint64_t key, char *out, size_t size, int depth);

/*
 * A string as JFR encodes it, into out (NULL: skipped; cut to size - 1
 * bytes). false for null, or when it does not read.
 */
static bool read_string(struct reader *r, struct cur *c, char *out, size_t size, int depth)
{
	uint8_t encoding = get_u8(c);
	uint64_t len;
	size_t n = 0;

	if (out)
		out[0] = '\0';
	switch (encoding) {
	case 0:
		return false;
	case 1:
		return !c->bad;
	case 2:
		len = jfr_read__get_long(r, c);
		return !c->bad && (!out || read_pooled_string(r, len, out, size, depth + 1));
	case 3:
	case 5:
		len = jfr_read__get_int(c, r->compressed, 4);
		if (c->bad || len > (uint64_t)(c->end - c->p)) {
			c->bad = true;
			return false;
		}
		if (out && encoding == 3) {
			n = len < size - 1 ? (size_t)len : size - 1;
			memcpy(out, c->p, n);
		}
		for (uint64_t i = 0; out && encoding == 5 && i < len && n + 1 < size; i++)
			put_utf8(out, size, &n, c->p[i]);
		c->p += len;
		break;
	case 4:
		len = jfr_read__get_int(c, r->compressed, 4);
		/* A char takes a byte at least. */
		if (c->bad || len > (uint64_t)(c->end - c->p)) {
			c->bad = true;
			return false;
		}
		for (uint64_t i = 0; i < len && !c->bad; i++) {
			uint32_t u = (uint32_t)jfr_read__get_int(c, r->compressed, 2) & 0xffff;

			if (out)
				put_utf8(out, size, &n, u);
		}
		break;
	default:
		c->bad = true;
		return false;
	}
	if (out)
		out[n] = '\0';
	return !c->bad;
}

/* Skips the fields of an object of class cl. */
void jfr_read__skip_object(struct reader *r, struct cur *c, const struct jclass *cl, int depth)
{
	if (depth > MAX_DEPTH) {
		c->bad = true;
		return;
	}
	for (size_t i = 0; i < cl->nr_fields && !c->bad; i++)
		jfr_read__skip_value(r, c, &cl->fields[i], depth + 1);
}

/* Skips one value of f's class (pooled: its key), without its array. */
static void skip_one(struct reader *r, struct cur *c, const struct jfield *f, int depth)
{
	const struct jclass *cl = &r->classes[f->type];

	if (f->pooled) {
		jfr_read__get_long(r, c);
		return;
	}
	switch (cl->prim) {
	case P_BOOLEAN:
	case P_BYTE:
		get_u8(c);
		break;
	case P_CHAR:
	case P_SHORT:
		jfr_read__get_int(c, r->compressed, 2);
		break;
	case P_INT:
		jfr_read__get_int(c, r->compressed, 4);
		break;
	case P_LONG:
		jfr_read__get_long(r, c);
		break;
	case P_FLOAT:
		get_fixed(c, 4);
		break;
	case P_DOUBLE:
		get_fixed(c, 8);
		break;
	case P_STRING:
		read_string(r, c, NULL, 0, depth);
		break;
	case P_OBJECT:
		jfr_read__skip_object(r, c, cl, depth);
		break;
	}
}

void jfr_read__skip_value(struct reader *r, struct cur *c, const struct jfield *f, int depth)
{
	uint64_t count;

	if (!f->array) {
		skip_one(r, c, f, depth);
		return;
	}
	count = jfr_read__get_int(c, r->compressed, 4);
	/* Every element takes a byte at least: a count past what is left is not a file's. */
	if (count > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return;
	}
	for (uint64_t i = 0; i < count && !c->bad; i++)
		skip_one(r, c, f, depth);
}

/* The index of cl's field named name, or -1. */
int jfr_read__field_index(const struct jclass *cl, const char *name)
{
	for (size_t i = 0; i < cl->nr_fields; i++)
		if (!strcmp(cl->fields[i].name, name))
			return (int)i;
	return -1;
}

/* A cursor at the value of key in cl's pool; bad when there is none. */
struct cur jfr_read__pool_entry(struct reader *r, size_t cl, uint64_t key)
{
	uint64_t offset;

	if (cl == NO_CLASS || !jfr_read__map_get(&r->classes[cl].pool, key, &offset))
		return (struct cur){.p = r->base, .end = r->base, .bad = true};
	return cur_at(r, (size_t)offset, r->chunk_end);
}

/*
 * A string-like value of field f at c: a String, or a simple class whose
 * one field is one (the JDK's Symbol), inline or pooled. Into out.
 */
bool jfr_read__text(struct reader *r, struct cur *c, const struct jfield *f, char *out, size_t size,
                      int depth)
{
	const struct jclass *cl = &r->classes[f->type];
	struct cur at;

	out[0] = '\0';
	if (depth > MAX_DEPTH || f->array) {
		jfr_read__skip_value(r, c, f, depth);
		return false;
	}
	if (f->pooled) {
		at = jfr_read__pool_entry(r, f->type, jfr_read__get_long(r, c));
		if (c->bad || at.bad)
			return false;
		c = &at;
	}
	if (cl->prim == P_STRING)
		return read_string(r, c, out, size, depth);
	if (cl->prim == P_OBJECT && cl->nr_fields == 1)
		return jfr_read__text(r, c, &cl->fields[0], out, size, depth + 1);
	skip_one(r, c, &(struct jfield){.type = f->type}, depth);
	return false;
}

static bool read_pooled_string(struct reader *r, uint64_t key, char *out, size_t size, int depth)
{
	struct cur at = jfr_read__pool_entry(r, r->c_string, key);

	return !at.bad && depth <= MAX_DEPTH && read_string(r, &at, out, size, depth);
}

/* ---- the metadata ------------------------------------------------------------------------------- */

/* The words (jfr_internal.h); a string is compared only with those of its length. */
static const char *const words[W_NR] = {
    [W_CLASS] = "class", [W_FIELD] = "field", [W_NAME] = "name", [W_ID] = "id",
    [W_CONSTANT_POOL] = "constantPool", [W_DIMENSION] = "dimension", [W_SIMPLE_TYPE] = "simpleType",
    [W_METHOD] = "method", [W_TYPE] = "type", [W_SAMPLED_THREAD] = "sampledThread",
    [W_EVENT_THREAD] = "eventThread", [W_STACK_TRACE] = "stackTrace", [W_STATE] = "state",
};

static enum jfr_word word_of(const char *s, size_t len)
{
	for (size_t w = W_OTHER + 1; w < W_NR; w++)
		if (strlen(words[w]) == len && !memcmp(s, words[w], len))
			return (enum jfr_word)w;
	return W_OTHER;
}

/* A string of the table by its index at c, and its word in *word. */
static const char *meta_string(struct reader *r, struct cur *c, enum jfr_word *word)
{
	uint64_t i = jfr_read__get_int(c, r->compressed, 4);

	if (i >= r->nr_strings) {
		c->bad = true;
		*word = W_OTHER;
		return "";
	}
	*word = (enum jfr_word)r->words[i];
	return r->strings[i] ? r->strings[i] : "";
}

static const struct {
	const char *name;
	enum prim prim;
} prims[] = {
    {"boolean", P_BOOLEAN}, {"byte", P_BYTE},     {"char", P_CHAR},
    {"short", P_SHORT},     {"int", P_INT},       {"long", P_LONG},
    {"float", P_FLOAT},     {"double", P_DOUBLE}, {"java.lang.String", P_STRING},
};

/* An element and its children; classes and their fields are kept. */
static int read_element(struct reader *r, struct cur *c, int depth, struct jclass *parent)
{
	enum jfr_word element, key, name_word = W_OTHER;
	uint64_t nr_attrs, nr_children;
	const char *attr_name = NULL, *attr_class = NULL, *attr_id = NULL, *attr_pool = NULL,
	           *attr_dim = NULL;
	const char *attr_simple = NULL;
	struct jclass *cl = NULL;

	meta_string(r, c, &element);
	nr_attrs = jfr_read__get_int(c, r->compressed, 4);
	if (depth > MAX_DEPTH || nr_attrs > (uint64_t)(c->end - c->p))
		return -1;
	for (uint64_t i = 0; i < nr_attrs && !c->bad; i++) {
		enum jfr_word value;
		const char *v;

		meta_string(r, c, &key);
		v = meta_string(r, c, &value);
		if (key == W_NAME) {
			attr_name = v;
			name_word = value;
		}
		else if (key == W_CLASS)
			attr_class = v;
		else if (key == W_ID)
			attr_id = v;
		else if (key == W_CONSTANT_POOL)
			attr_pool = v;
		else if (key == W_DIMENSION)
			attr_dim = v;
		else if (key == W_SIMPLE_TYPE)
			attr_simple = v;
	}
	if (c->bad)
		return -1;
	if (element == W_CLASS && attr_name && attr_id) {
		if (r->nr_classes == r->cap_classes) {
			size_t cap = r->cap_classes ? r->cap_classes * 2 : 256;
			struct jclass *n = realloc(r->classes, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			r->classes = n;
			r->cap_classes = cap;
		}
		cl = &r->classes[r->nr_classes++];
		memset(cl, 0, sizeof(*cl));
		cl->id = strtoull(attr_id, NULL, 10);
		cl->name = attr_name;
		cl->simple = attr_simple && !strcmp(attr_simple, "true");
		for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
			if (!strcmp(attr_name, prims[i].name))
				cl->prim = prims[i].prim;
	} else if (element == W_FIELD && parent && attr_name && attr_class) {
		struct jfield *f;

		if (parent->nr_fields == parent->cap_fields) {
			size_t cap = parent->cap_fields ? parent->cap_fields * 2 : 8;

			f = realloc(parent->fields, cap * sizeof(*f));
			if (!f)
				return -ENOMEM;
			parent->fields = f;
			parent->cap_fields = cap;
		}
		f = &parent->fields[parent->nr_fields++];
		f->name = attr_name;
		f->word = name_word;
		f->type_id = strtoull(attr_class, NULL, 10);
		f->type = NO_CLASS;
		f->pooled = attr_pool && !strcmp(attr_pool, "true");
		f->array = attr_dim && strcmp(attr_dim, "0");
	}
	nr_children = jfr_read__get_int(c, r->compressed, 4);
	if (c->bad || nr_children > (uint64_t)(c->end - c->p))
		return -1;
	for (uint64_t i = 0; i < nr_children; i++) {
		/* The class being read is at the end of the array, which may move as classes are added. */
		size_t self = cl ? (size_t)(cl - r->classes) : NO_CLASS;
		int err = read_element(r, c, depth + 1, cl);

		if (err)
			return err;
		cl = self == NO_CLASS ? NULL : &r->classes[self];
	}
	return 0;
}

static size_t class_named(const struct reader *r, const char *name)
{
	for (size_t i = 0; i < r->nr_classes; i++)
		if (!strcmp(r->classes[i].name, name))
			return i;
	return NO_CLASS;
}

static int read_metadata(struct reader *r, size_t offset)
{
	struct cur c = cur_at(r, offset, r->chunk_end);
	uint64_t size = jfr_read__get_int(&c, r->compressed, 4), nr;
	int err;

	if (c.bad || size < 2 || size > r->chunk_end - offset)
		return refuse__say(r->err, r->err_size, "its metadata event does not fit its chunk");
	c.end = r->base + offset + size;
	if (jfr_read__get_long(r, &c) != 0)
		return refuse__say(r->err, r->err_size,
			      "the header's metadata offset points at another event");
	jfr_read__get_long(r, &c); /* start */
	jfr_read__get_long(r, &c); /* duration */
	jfr_read__get_long(r, &c); /* metadata id */
	nr = jfr_read__get_int(&c, r->compressed, 4);
	/* A string takes a byte at least. */
	if (c.bad || nr > (uint64_t)(c.end - c.p))
		return refuse__say(r->err, r->err_size, "its metadata's string table does not fit it");
	r->strings = calloc(nr ? nr : 1, sizeof(*r->strings));
	r->words = calloc(nr ? nr : 1, sizeof(*r->words));
	if (!r->strings || !r->words)
		return refuse__say(r->err, r->err_size, "out of memory");
	r->nr_strings = nr;
	for (uint64_t i = 0; i < nr && !c.bad; i++) {
		char buf[MAX_NAME];

		if (!read_string(r, &c, buf, sizeof(buf), 0))
			continue;
		if (!(r->strings[i] = strdup(buf)))
			return refuse__say(r->err, r->err_size, "out of memory");
		r->words[i] = (uint8_t)word_of(buf, strlen(buf));
	}
	err = c.bad ? -1 : read_element(r, &c, 0, NULL);
	if (err == -ENOMEM)
		return refuse__say(r->err, r->err_size, "out of memory");
	if (err || c.bad)
		return refuse__say(r->err, r->err_size, "its metadata does not read");
	/* Each field's class, by id: the first class of that id, through a map (thousands of fields). */
	for (size_t i = 0; i < r->nr_classes; i++) {
		uint64_t known;

		if (!jfr_read__map_get(&r->class_ids, r->classes[i].id, &known) &&
		    jfr_read__map_put(&r->class_ids, r->classes[i].id, i))
			return refuse__say(r->err, r->err_size, "out of memory");
	}
	for (size_t i = 0; i < r->nr_classes; i++)
		for (size_t f = 0; f < r->classes[i].nr_fields; f++) {
			struct jfield *fd = &r->classes[i].fields[f];
			uint64_t k;

			if (jfr_read__map_get(&r->class_ids, fd->type_id, &k))
				fd->type = (size_t)k;
			if (fd->type == NO_CLASS) {
				/* The names are the file's: made safe, the reason stays one line. */
				char field[64], class[128];

				return refuse__say(r->err, r->err_size,
					      "field %s of %s has a class the metadata lacks",
					      terminal__safe(fd->name, field, sizeof(field)),
					      terminal__safe(r->classes[i].name, class, sizeof(class)));
			}
		}
	r->c_string = class_named(r, "java.lang.String");
	r->c_thread = class_named(r, "java.lang.Thread");
	r->c_stack_trace = class_named(r, "jdk.types.StackTrace");
	r->c_frame = class_named(r, "jdk.types.StackFrame");
	r->c_method = class_named(r, "jdk.types.Method");
	r->c_class = class_named(r, "java.lang.Class");
	r->c_frame_type = class_named(r, "jdk.types.FrameType");
	r->c_state = class_named(r, "jdk.types.ThreadState");
	r->c_execution = class_named(r, "jdk.ExecutionSample");
	r->c_native = class_named(r, "jdk.NativeMethodSample");
	r->c_cpu_time = class_named(r, "jdk.CPUTimeSample");
	r->c_lost = class_named(r, "jdk.CPUTimeSamplesLost");
	return 0;
}

/* ---- the constant pools -------------------------------------------------------------------------- */

static size_t class_by_id(const struct reader *r, uint64_t id)
{
	uint64_t i;

	return jfr_read__map_get(&r->class_ids, id, &i) ? (size_t)i : NO_CLASS;
}

/* The checkpoint at offset, its pools' entries mapped; *delta its step back to the one before. */
static int read_checkpoint(struct reader *r, size_t offset, int64_t *delta)
{
	struct cur c = cur_at(r, offset, r->chunk_end);
	uint64_t size = jfr_read__get_int(&c, r->compressed, 4), nr_pools;

	if (c.bad || size < 2 || size > r->chunk_end - offset)
		return refuse__say(r->err, r->err_size, "a checkpoint event does not fit its chunk");
	c.end = r->base + offset + size;
	if (jfr_read__get_long(r, &c) != 1)
		return refuse__say(r->err, r->err_size, "a constant pool offset points at another event");
	jfr_read__get_long(r, &c); /* start */
	jfr_read__get_long(r, &c); /* duration */
	*delta = (int64_t)jfr_read__get_long(r, &c);
	get_u8(&c); /* type mask */
	nr_pools = jfr_read__get_int(&c, r->compressed, 4);
	for (uint64_t p = 0; p < nr_pools && !c.bad; p++) {
		size_t cl = class_by_id(r, jfr_read__get_long(r, &c));
		uint64_t count = jfr_read__get_int(&c, r->compressed, 4);

		if (cl == NO_CLASS || count > (uint64_t)(c.end - c.p))
			return refuse__say(
			    r->err, r->err_size,
			    "a constant pool is of no class the metadata has, or too long");
		for (uint64_t i = 0; i < count && !c.bad; i++) {
			uint64_t key = jfr_read__get_long(r, &c);

			if (jfr_read__map_put(&r->classes[cl].pool, key, (uint64_t)(c.p - r->base)))
				return refuse__say(r->err, r->err_size, "out of memory");
			skip_one(r, &c, &(struct jfield){.type = cl}, 0);
		}
	}
	if (c.bad)
		return refuse__say(r->err, r->err_size, "a constant pool does not read");
	return 0;
}

static int read_pools(struct reader *r, size_t offset)
{
	for (size_t n = 0; n < MAX_CHECKPOINTS; n++) {
		int64_t delta = 0;
		uint64_t back;

		if (read_checkpoint(r, offset, &delta))
			return -1;
		if (!delta)
			return 0;
		/* Each step goes back, and stays past the header; as unsigned, since -INT64_MIN would overflow. */
		back = 0 - (uint64_t)delta;
		if (delta > 0 || back > offset - r->chunk_start - HEADER_BYTES)
			return refuse__say(r->err, r->err_size,
				      "a checkpoint's delta leads outside its chunk");
		offset -= (size_t)back;
	}
	return refuse__say(r->err, r->err_size, "more than %d checkpoints in a chunk", MAX_CHECKPOINTS);
}

/* ---- chunks ---------------------------------------------------------------------------------------- */

static void chunk_free(struct reader *r)
{
	for (size_t i = 0; i < r->nr_strings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->words);
	r->words = NULL;
	for (size_t i = 0; i < r->nr_classes; i++) {
		free(r->classes[i].fields);
		map_free(&r->classes[i].pool);
	}
	free(r->classes);
	map_free(&r->threads);
	map_free(&r->stacks);
	map_free(&r->methods);
	map_free(&r->class_ids);
	for (size_t i = 0; i < r->nr_method_frames; i++)
		free(r->method_frames[i].base);
	free(r->method_frames);
	r->method_frames = NULL;
	r->nr_method_frames = r->cap_method_frames = 0;
	r->strings = NULL;
	r->classes = NULL;
	r->nr_strings = r->nr_classes = r->cap_classes = 0;
}

/* The events of the chunk, after its pools and metadata are read. */
static int read_events(struct reader *r)
{
	size_t at = r->chunk_start + HEADER_BYTES;

	while (at < r->chunk_end) {
		struct cur c = cur_at(r, at, r->chunk_end);
		uint64_t size = jfr_read__get_int(&c, r->compressed, 4), type;
		size_t cl;
		int err;

		if (c.bad || size < 2 || size > r->chunk_end - at)
			return refuse__say(r->err, r->err_size,
				      "an event at offset %zu does not fit its chunk", at);
		c.end = r->base + at + size;
		type = jfr_read__get_long(r, &c);
		cl = type > 1 ? class_by_id(r, type) : NO_CLASS;
		if (cl != NO_CLASS && (cl == r->c_execution || cl == r->c_native || cl == r->c_cpu_time)) {
			err = jfr_samples__add(r, &c, &r->classes[cl]);
			if (err == -ENOMEM)
				return refuse__say(r->err, r->err_size, "out of memory");
			if (err == -ENOSPC)
				return refuse__say(r->err, r->err_size, "too many distinct stacks");
			if (err)
				return refuse__say(r->err, r->err_size,
					      "a sample at offset %zu does not read", at);
		} else if (cl != NO_CLASS && cl == r->c_lost) {
			const struct jclass *lc = &r->classes[cl];

			for (size_t i = 0; i < lc->nr_fields && !c.bad; i++) {
				const struct jfield *f = &lc->fields[i];

				if (!strcmp(f->name, "lostSamples") && !f->pooled && !f->array &&
				    r->classes[f->type].prim == P_INT)
					r->lost += jfr_read__get_int(&c, r->compressed, 4);
				else
					jfr_read__skip_value(r, &c, f, 1);
			}
		}
		at += (size_t)size;
	}
	return 0;
}

static int read_chunk(struct reader *r, size_t start, int64_t *start_ns, double *duration_s)
{
	struct cur c = cur_at(r, start, r->len);
	uint64_t size, pools, metadata, chunk_start_ns, chunk_ns;
	uint16_t major;
	uint32_t features;
	int err;

	if (r->len - start < HEADER_BYTES || memcmp(r->base + start, "FLR\0", 4))
		return refuse__say(r->err, r->err_size, "a chunk at offset %zu has no JFR header", start);
	c.p += 4;
	major = (uint16_t)get_fixed(&c, 2);
	get_fixed(&c, 2);
	size = get_fixed(&c, 8);
	pools = get_fixed(&c, 8);
	metadata = get_fixed(&c, 8);
	chunk_start_ns = get_fixed(&c, 8);
	chunk_ns = get_fixed(&c, 8);
	get_fixed(&c, 8); /* start ticks */
	get_fixed(&c, 8); /* ticks a second */
	features = (uint32_t)get_fixed(&c, 4);
	if (major != 2)
		return refuse__say(r->err, r->err_size, "JFR format %u, not 2 (JDK 11 and later)", major);
	/* A chunk still being written says 0: it runs to the end of the file. */
	if (!size)
		size = r->len - start;
	if (size < HEADER_BYTES || size > r->len - start || pools < HEADER_BYTES || pools >= size ||
	    metadata < HEADER_BYTES || metadata >= size)
		return refuse__say(r->err, r->err_size,
			      "a chunk's header gives sizes or offsets outside it");
	r->compressed = features & 1;
	r->chunk_start = start;
	r->chunk_end = start + (size_t)size;
	r->c_string = r->c_thread = r->c_stack_trace = r->c_frame = r->c_method = r->c_class = NO_CLASS;
	r->c_frame_type = r->c_state = r->c_execution = r->c_native = r->c_cpu_time = r->c_lost = NO_CLASS;
	err = read_metadata(r, start + (size_t)metadata);
	if (!err)
		err = read_pools(r, start + (size_t)pools);
	if (!err && (r->c_stack_trace == NO_CLASS || r->c_frame == NO_CLASS || r->c_method == NO_CLASS))
		r->c_execution = r->c_native = r->c_cpu_time = NO_CLASS; /* no stacks: no samples to read */
	if (!err)
		err = read_events(r);
	if (!err && !*start_ns)
		*start_ns = (int64_t)chunk_start_ns;
	*duration_s += (double)chunk_ns / 1e9;
	chunk_free(r);
	return err ? -1 : (int)(r->chunk_end - start);
}

bool jfr_read__looks_like(const uint8_t *data, size_t len)
{
	return len >= 4 && !memcmp(data, "FLR\0", 4);
}

int jfr_read__buffer(const uint8_t *data, size_t len, struct pprof_recording *rec, char *err, size_t err_size)
{
	struct reader r = {.base = data, .len = len, .err = err, .err_size = err_size, .rec = rec};
	char summary[128];
	size_t at = 0;

	memset(rec, 0, sizeof(*rec));
	if (!jfr_read__looks_like(data, len))
		return refuse__say(err, err_size, "not a JFR file");
	rec->profile = profile__new(NULL);
	if (!rec->profile)
		return refuse__say(err, err_size, "out of memory");
	while (at < len) {
		int n = read_chunk(&r, at, &rec->start_unix_ns, &rec->duration_s);

		if (n <= 0) {
			free(r.stack_ids);
			pprof_recording__free(rec);
			return -1;
		}
		at += (size_t)n;
		/* Stack ids are the chunk's: the next chunk's pools have their own keys. */
		r.nr_stack_ids = 0;
	}
	free(r.stack_ids);
	snprintf(summary, sizeof(summary), "%" PRIu64 " samples read from JFR", r.samples);
	if (r.lost)
		snprintf(summary, sizeof(summary),
		         "%" PRIu64 " samples read from JFR; %" PRIu64
		         " more the JVM's CPU-time sampler lost",
		         r.samples, r.lost);
	rec->event = strdup("cpu");
	rec->summary = strdup(summary);
	rec->process_roots = strdup("none");
	if (!rec->event || !rec->summary || !rec->process_roots) {
		pprof_recording__free(rec);
		return refuse__say(err, err_size, "out of memory");
	}
	return 0;
}
