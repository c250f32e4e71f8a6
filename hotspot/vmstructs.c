/*
 * vmstructs: HotSpot's tables read from a JVM's memory into a plain copy
 * (contract in vmstructs.h).
 *
 * A read goes in three steps, each bounded:
 *
 *   1. Each table's header: the array's address, its stride and where each
 *      member sits in an entry, from the exported variables. The stride is
 *      1..HOTSPOT_VM_MAX_STRIDE and every member must lie inside it; an
 *      address or stride of 0 is a libjvm not initialised yet.
 *   2. The entries, in reads of TABLE_CHUNK bytes (a few for a real table,
 *      not one per entry), until the entry whose first name is NULL; more
 *      than HOTSPOT_VM_MAX_ENTRIES before it refuses the table. A chunk
 *      that cannot be read is tried again in halves, down to one entry: an
 *      entry that cannot be read at all refuses the table.
 *   3. The names: every distinct name pointer of every table, sorted, read
 *      in windows of STRING_WINDOW bytes, so that the few thousand names
 *      libjvm keeps close together in its read-only data cost tens of
 *      reads, not thousands. A name that cannot be read, or has no NUL
 *      within HOTSPOT_VM_MAX_NAME bytes, leaves its entry out (no HotSpot
 *      name is that long, so such an entry is nothing a lookup asks for);
 *      more than VM_MAX_BAD_NAMES of them refuse the whole read, which
 *      bounds the slow, one-name-at-a-time reads a hostile table can cause;
 *      so do names scattered over more than VM_MAX_NAME_READS reads.
 *
 * The copy keeps names in one pool (offsets, not pointers) and entries in
 * arrays, in the target's order; look-ups scan them (a layout makes a few
 * dozen look-ups among a few thousand entries: well under a millisecond).
 */
#include "hotspot/vmstructs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/refuse.h"

/* Bytes of an entry array one read asks for (a real gHotSpotVMStructs is ~150 KiB). */
#define TABLE_CHUNK (64u << 10)
/* Bytes of names one read covers. */
#define STRING_WINDOW (64u << 10)
/* Reads never cross a page unless they must: a name ending in a mapped page is read even if the next is not. */
#define PAGE_SIZE_BYTES 4096u
/* Names that could not be read, or were too long, before a read is refused. */
#define VM_MAX_BAD_NAMES 64
/*
 * Reads the names may take: libjvm's lie in one read-only segment, a
 * dozen windows on JDK 17 and 25; names scattered a window apart each
 * would cost a read apiece, tens of thousands of them.
 */
#define VM_MAX_NAME_READS 1024
/* The members an entry has at most (a VMStructEntry: three names, a flag, an offset, an address). */
#define MAX_MEMBERS 6
/* A pool offset for "no name" (a NULL typeString) and for a name that could not be read. */
#define NO_NAME UINT32_MAX
#define BAD_NAME (UINT32_MAX - 1)

struct vm_field {
	uint32_t type, name, type_string; /* pool offsets; type_string may be NO_NAME */
	bool is_static;
	uint64_t offset, address;
};

struct vm_type {
	uint32_t name;
	uint64_t size;
};

struct vm_constant {
	uint32_t name;
	int64_t value;
};

struct hotspot_vm {
	char *pool;
	size_t pool_len, pool_cap;
	struct vm_field *fields;
	size_t nr_fields, cap_fields;
	struct vm_type *types;
	size_t nr_types, cap_types;
	struct vm_constant *ints, *longs;
	size_t nr_ints, cap_ints, nr_longs, cap_longs;
};

/* ---- the copy ---- */

/* Room for one more element in *arr (nr used of *cap, each size bytes): 0 or -1. */
static int grow(void **arr, size_t *cap, size_t nr, size_t size)
{
	size_t cap2;
	void *p;

	if (nr < *cap)
		return 0;
	cap2 = *cap ? *cap * 2 : 256;
	p = realloc(*arr, cap2 * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = cap2;
	return 0;
}

/* s (len bytes, no NUL among them) into the pool: its offset, or NO_NAME when out of memory. */
static uint32_t pool_add(struct hotspot_vm *vm, const char *s, size_t len)
{
	uint32_t at;

	while (vm->pool_len + len + 1 > vm->pool_cap) {
		size_t cap = vm->pool_cap ? vm->pool_cap * 2 : 16384;
		char *p = realloc(vm->pool, cap);

		if (!p)
			return NO_NAME;
		vm->pool = p;
		vm->pool_cap = cap;
	}
	at = (uint32_t)vm->pool_len;
	memcpy(vm->pool + at, s, len);
	vm->pool[at + len] = '\0';
	vm->pool_len += len + 1;
	return at;
}

static const char *pool_name(const struct hotspot_vm *vm, uint32_t at)
{
	return at < vm->pool_len ? vm->pool + at : "";
}

struct hotspot_vm *hotspot_vm__new(void)
{
	return calloc(1, sizeof(struct hotspot_vm));
}

void hotspot_vm__free(struct hotspot_vm *vm)
{
	if (!vm)
		return;
	free(vm->pool);
	free(vm->fields);
	free(vm->types);
	free(vm->ints);
	free(vm->longs);
	free(vm);
}

/* A name given to a builder, into the pool: NO_NAME for NULL, BAD_NAME when too long or out of memory. */
static uint32_t builder_name(struct hotspot_vm *vm, const char *s)
{
	size_t len;
	uint32_t at;

	if (!s)
		return NO_NAME;
	len = strnlen(s, HOTSPOT_VM_MAX_NAME);
	if (len >= HOTSPOT_VM_MAX_NAME)
		return BAD_NAME;
	at = pool_add(vm, s, len);
	return at == NO_NAME ? BAD_NAME : at;
}

static int add_field_at(struct hotspot_vm *vm, uint32_t type, uint32_t name, uint32_t type_string, bool is_static,
			uint64_t offset, uint64_t address)
{
	if (vm->nr_fields >= HOTSPOT_VM_MAX_ENTRIES ||
	    grow((void **)&vm->fields, &vm->cap_fields, vm->nr_fields, sizeof(*vm->fields)))
		return -1;
	vm->fields[vm->nr_fields++] = (struct vm_field){ .type = type, .name = name, .type_string = type_string,
							 .is_static = is_static, .offset = offset, .address = address };
	return 0;
}

static int add_type_at(struct hotspot_vm *vm, uint32_t name, uint64_t size)
{
	if (vm->nr_types >= HOTSPOT_VM_MAX_ENTRIES ||
	    grow((void **)&vm->types, &vm->cap_types, vm->nr_types, sizeof(*vm->types)))
		return -1;
	vm->types[vm->nr_types++] = (struct vm_type){ .name = name, .size = size };
	return 0;
}

static int add_constant_at(struct vm_constant **arr, size_t *nr, size_t *cap, uint32_t name, int64_t value)
{
	if (*nr >= HOTSPOT_VM_MAX_ENTRIES || grow((void **)arr, cap, *nr, sizeof(**arr)))
		return -1;
	(*arr)[(*nr)++] = (struct vm_constant){ .name = name, .value = value };
	return 0;
}

int hotspot_vm__add_field(struct hotspot_vm *vm, const char *type, const char *field, const char *type_string,
			 bool is_static, uint64_t offset, uint64_t address)
{
	uint32_t t, f, ts;

	if (!type || !field)
		return -1;
	t = builder_name(vm, type);
	f = builder_name(vm, field);
	ts = builder_name(vm, type_string);
	if (t == BAD_NAME || f == BAD_NAME || ts == BAD_NAME)
		return -1;
	return add_field_at(vm, t, f, ts, is_static, offset, address);
}

int hotspot_vm__add_type(struct hotspot_vm *vm, const char *type, uint64_t size)
{
	uint32_t t = type ? builder_name(vm, type) : BAD_NAME;

	return t == BAD_NAME ? -1 : add_type_at(vm, t, size);
}

int hotspot_vm__add_int(struct hotspot_vm *vm, const char *name, int32_t value)
{
	uint32_t n = name ? builder_name(vm, name) : BAD_NAME;

	return n == BAD_NAME ? -1 : add_constant_at(&vm->ints, &vm->nr_ints, &vm->cap_ints, n, value);
}

int hotspot_vm__add_long(struct hotspot_vm *vm, const char *name, int64_t value)
{
	uint32_t n = name ? builder_name(vm, name) : BAD_NAME;

	return n == BAD_NAME ? -1 : add_constant_at(&vm->longs, &vm->nr_longs, &vm->cap_longs, n, value);
}

/* ---- look-ups ---- */

static const struct vm_field *find_field(const struct hotspot_vm *vm, const char *type, const char *name,
					 bool is_static)
{
	for (size_t i = 0; i < vm->nr_fields; i++) {
		const struct vm_field *f = &vm->fields[i];

		if (f->is_static == is_static && !strcmp(pool_name(vm, f->type), type) &&
		    !strcmp(pool_name(vm, f->name), name))
			return f;
	}
	return NULL;
}

uint64_t hotspot_vm__type_size(const struct hotspot_vm *vm, const char *type)
{
	for (size_t i = 0; i < vm->nr_types; i++)
		if (!strcmp(pool_name(vm, vm->types[i].name), type))
			return vm->types[i].size;
	return 0;
}

bool hotspot_vm__field(const struct hotspot_vm *vm, const char *type, const char *name, uint64_t *offset,
		      uint64_t *size)
{
	const struct vm_field *f = find_field(vm, type, name, false);
	const char *ts;
	size_t len;

	if (!f)
		return false;
	*offset = f->offset;
	if (size) {
		ts = f->type_string == NO_NAME ? "" : pool_name(vm, f->type_string);
		len = strlen(ts);
		/* Any pointer ("Method*", "intptr_t*") has a pointer's size; other types are in the types table. */
		*size = !len ? 0 : ts[len - 1] == '*' ? sizeof(uint64_t) : hotspot_vm__type_size(vm, ts);
	}
	return true;
}

bool hotspot_vm__static(const struct hotspot_vm *vm, const char *type, const char *name, uint64_t *address)
{
	const struct vm_field *f = find_field(vm, type, name, true);

	if (!f)
		return false;
	*address = f->address;
	return true;
}

static const struct vm_constant *find_constant(const struct vm_constant *arr, size_t nr,
					       const struct hotspot_vm *vm, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(pool_name(vm, arr[i].name), name))
			return &arr[i];
	return NULL;
}

bool hotspot_vm__int(const struct hotspot_vm *vm, const char *name, int32_t *value)
{
	const struct vm_constant *c = find_constant(vm->ints, vm->nr_ints, vm, name);

	if (c)
		*value = (int32_t)c->value;
	return c != NULL;
}

bool hotspot_vm__long(const struct hotspot_vm *vm, const char *name, int64_t *value)
{
	const struct vm_constant *c = find_constant(vm->longs, vm->nr_longs, vm, name);

	if (c)
		*value = c->value;
	return c != NULL;
}

/* ---- step 1: a table's header ---- */

struct member {
	uint64_t symbol;     /* address of the variable holding the member's offset */
	const char *name;    /* that variable's name, for messages */
	unsigned width;      /* bytes of the member */
};

/*
 * One table, as read: member 0 is the name whose NULL ends the table, and
 * the first nr_names members are char *.
 */
struct table {
	const char *name;
	uint64_t array_symbol, stride_symbol;
	const char *stride_name;
	struct member members[MAX_MEMBERS];
	unsigned nr_members, nr_names;
	uint64_t array, stride, offsets[MAX_MEMBERS];
	uint64_t (*rows)[MAX_MEMBERS]; /* each entry's members, zero-extended */
	size_t nr_rows;
};

static bool read_symbol(struct hotspot_memory *mem, uint64_t symbol, const char *name, uint64_t *out, char *err,
			size_t err_size)
{
	if (!symbol) {
		refuse__say(err, err_size, "libjvm exports no %s", name);
		return false;
	}
	if (!hotspot_memory__u64(mem, symbol, out)) {
		refuse__say(err, err_size, "%s is unreadable at 0x%llx", name, (unsigned long long)symbol);
		return false;
	}
	return true;
}

/* open_table's answers. */
enum table_state { TABLE_OK, TABLE_REFUSED, TABLE_NOT_SET };

static enum table_state open_table(struct hotspot_memory *mem, struct table *t, char *err, size_t err_size)
{
	if (!read_symbol(mem, t->array_symbol, t->name, &t->array, err, err_size) ||
	    !read_symbol(mem, t->stride_symbol, t->stride_name, &t->stride, err, err_size))
		return TABLE_REFUSED;
	/* Zero is what the file holds before libjvm is relocated and initialised: not yet, rather than wrong. */
	if (!t->array || !t->stride) {
		refuse__say(err, err_size, "%s is 0: libjvm not initialised yet", !t->array ? t->name : t->stride_name);
		return TABLE_NOT_SET;
	}
	if (t->stride > HOTSPOT_VM_MAX_STRIDE) {
		refuse__say(err, err_size, "%s's stride %llu is outside 1..%d", t->name, (unsigned long long)t->stride,
		    HOTSPOT_VM_MAX_STRIDE);
		return TABLE_REFUSED;
	}
	for (unsigned i = 0; i < t->nr_members; i++) {
		const struct member *m = &t->members[i];

		if (!read_symbol(mem, m->symbol, m->name, &t->offsets[i], err, err_size))
			return TABLE_REFUSED;
		if (t->offsets[i] > t->stride || m->width > t->stride - t->offsets[i]) {
			refuse__say(err, err_size, "%s %llu leaves its %u bytes outside the %llu-byte entry", m->name,
			    (unsigned long long)t->offsets[i], m->width, (unsigned long long)t->stride);
			return TABLE_REFUSED;
		}
	}
	return TABLE_OK;
}

/* ---- step 2: the entries ---- */

/* Entry e's members into row; false when member 0 is NULL: the table's end. */
static bool parse_entry(const struct table *t, const unsigned char *e, uint64_t *row)
{
	for (unsigned i = 0; i < t->nr_members; i++) {
		row[i] = 0;
		memcpy(&row[i], e + t->offsets[i], t->members[i].width); /* little-endian: the low bytes */
	}
	return row[0] != 0;
}

/*
 * Reads entries [first, first + *n) into buf, halving *n until a read
 * succeeds (the array may end near its mapping's end): false when not
 * even one entry is readable. *n stays halved for the next chunks.
 */
static bool read_chunk(struct hotspot_memory *mem, const struct table *t, size_t first, size_t *n,
		       unsigned char *buf)
{
	uint64_t addr = t->array + first * t->stride;

	if (addr < t->array)
		return false;
	for (;;) {
		if (hotspot_memory__read(mem, addr, buf, *n * t->stride))
			return true;
		if (*n == 1)
			return false;
		*n /= 2;
	}
}

/* Entries parsed from buf (n of them) appended to t's rows; *ended when the end entry came. -1: out of bounds or memory. */
static int add_rows(struct table *t, const unsigned char *buf, size_t n, size_t *cap, bool *ended)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t row[MAX_MEMBERS];

		if (!parse_entry(t, buf + i * t->stride, row)) {
			*ended = true;
			return 0;
		}
		if (t->nr_rows >= HOTSPOT_VM_MAX_ENTRIES || grow((void **)&t->rows, cap, t->nr_rows, sizeof(*t->rows)))
			return -1;
		memcpy(t->rows[t->nr_rows++], row, sizeof(row));
	}
	return 0;
}

static bool read_rows(struct hotspot_memory *mem, struct table *t, char *err, size_t err_size)
{
	size_t per_read = TABLE_CHUNK / t->stride, first = 0, cap = 0;
	unsigned char *buf = malloc(per_read * t->stride);
	bool ended = false;

	if (!buf) {
		refuse__say(err, err_size, "out of memory reading %s", t->name);
		return false;
	}
	/* At most one entry past the bound is read: the bound's worth of entries and their end. */
	while (!ended) {
		size_t n = per_read;

		if (n > HOTSPOT_VM_MAX_ENTRIES + 1 - first)
			n = HOTSPOT_VM_MAX_ENTRIES + 1 - first;
		if (!read_chunk(mem, t, first, &n, buf)) {
			refuse__say(err, err_size, "%s entry %zu is unreadable at 0x%llx", t->name, first,
			    (unsigned long long)(t->array + first * t->stride));
			break;
		}
		if (add_rows(t, buf, n, &cap, &ended)) {
			if (t->nr_rows >= HOTSPOT_VM_MAX_ENTRIES)
				refuse__say(err, err_size, "%s has no end within %d entries", t->name, HOTSPOT_VM_MAX_ENTRIES);
			else
				refuse__say(err, err_size, "out of memory reading %s", t->name);
			break;
		}
		first += n;
		per_read = n;
	}
	free(buf);
	return ended;
}

/* ---- step 3: the names ---- */

/* Every distinct name pointer of the tables, sorted, and where each went in the pool (or BAD_NAME). */
struct names {
	uint64_t *addrs;
	uint32_t *at;
	size_t nr;
	unsigned bad;
};

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool collect_names(struct names *names, struct table *const tables[], size_t nr_tables)
{
	size_t total = 0, out = 0;

	for (size_t i = 0; i < nr_tables; i++)
		total += tables[i]->nr_rows * tables[i]->nr_names;
	names->addrs = malloc((total ? total : 1) * sizeof(*names->addrs));
	names->at = malloc((total ? total : 1) * sizeof(*names->at));
	if (!names->addrs || !names->at)
		return false;
	for (size_t i = 0; i < nr_tables; i++)
		for (size_t r = 0; r < tables[i]->nr_rows; r++)
			for (unsigned m = 0; m < tables[i]->nr_names; m++)
				if (tables[i]->rows[r][m])
					names->addrs[out++] = tables[i]->rows[r][m];
	qsort(names->addrs, out, sizeof(*names->addrs), compare_u64);
	names->nr = 0;
	for (size_t i = 0; i < out; i++)
		if (!names->nr || names->addrs[names->nr - 1] != names->addrs[i])
			names->addrs[names->nr++] = names->addrs[i];
	return true;
}

/*
 * Reads a window of names at base into buf: STRING_WINDOW bytes, or, when
 * those are not all mapped, up to base's page end. Its length, 0 when
 * unreadable.
 */
static size_t read_window(struct hotspot_memory *mem, uint64_t base, char *buf)
{
	size_t to_page_end = PAGE_SIZE_BYTES - (size_t)(base % PAGE_SIZE_BYTES);

	if (base + STRING_WINDOW > base && hotspot_memory__read(mem, base, buf, STRING_WINDOW))
		return STRING_WINDOW;
	return hotspot_memory__read(mem, base, buf, to_page_end) ? to_page_end : 0;
}

/* Name i, its bytes found at s (len of them, NUL excluded), into the pool: false when out of memory. */
static bool name_found(struct hotspot_vm *vm, struct names *names, size_t i, const char *s, size_t len)
{
	names->at[i] = pool_add(vm, s, len);
	return names->at[i] != NO_NAME;
}

static void name_bad(struct names *names, size_t i)
{
	names->at[i] = BAD_NAME;
	names->bad++;
}

/*
 * Name i alone, one page at a time (it starts near the end of what could
 * be read at once): false when out of memory.
 */
static bool read_name_alone(struct hotspot_memory *mem, struct hotspot_vm *vm, struct names *names, size_t i)
{
	char buf[HOTSPOT_VM_MAX_NAME];
	long len = hotspot_memory__string(mem, names->addrs[i], buf, sizeof(buf));

	if (len < 0) {
		name_bad(names, i);
		return true;
	}
	return name_found(vm, names, i, buf, (size_t)len);
}

/*
 * Names from index *i on that lie in the window [base, base + len): a name
 * that runs past the window's end is left for the next window, which
 * starts at it, unless it is the window's first (then it is read alone).
 */
static bool names_in_window(struct hotspot_memory *mem, struct hotspot_vm *vm, struct names *names, size_t *i,
			    const char *buf, uint64_t base, size_t len)
{
	size_t first = *i;

	for (; *i < names->nr && names->addrs[*i] - base < len; (*i)++) {
		size_t off = names->addrs[*i] - base, scan = len - off;
		const char *nul;

		if (scan > HOTSPOT_VM_MAX_NAME)
			scan = HOTSPOT_VM_MAX_NAME;
		nul = memchr(buf + off, '\0', scan);
		if (nul) {
			if (!name_found(vm, names, *i, buf + off, (size_t)(nul - (buf + off))))
				return false;
		} else if (scan == HOTSPOT_VM_MAX_NAME) {
			name_bad(names, *i);
		} else if (*i == first) {
			if (!read_name_alone(mem, vm, names, *i))
				return false;
		} else {
			break;
		}
	}
	return true;
}

static bool read_names(struct hotspot_memory *mem, struct hotspot_vm *vm, struct names *names, char *err,
		       size_t err_size)
{
	char *buf = malloc(STRING_WINDOW);
	uint64_t first_read = mem->reads;
	size_t i = 0;
	bool ok = buf != NULL;

	while (ok && i < names->nr && names->bad <= VM_MAX_BAD_NAMES) {
		if (mem->reads - first_read > VM_MAX_NAME_READS) {
			refuse__say(err, err_size, "VMStructs' names are scattered over more than %d reads", VM_MAX_NAME_READS);
			free(buf);
			return false;
		}
		uint64_t base = names->addrs[i];
		size_t len = read_window(mem, base, buf);

		if (!len)
			name_bad(names, i++);
		else
			ok = names_in_window(mem, vm, names, &i, buf, base, len);
	}
	free(buf);
	if (!ok)
		refuse__say(err, err_size, "out of memory reading VMStructs' names");
	else if (names->bad > VM_MAX_BAD_NAMES)
		refuse__say(err, err_size, "more than %d of VMStructs' names are unreadable or longer than %d bytes",
		    VM_MAX_BAD_NAMES, HOTSPOT_VM_MAX_NAME - 1);
	return ok && names->bad <= VM_MAX_BAD_NAMES;
}

/* The pool offset of the name at addr: NO_NAME for NULL, BAD_NAME for one that could not be read. */
static uint32_t name_of(const struct names *names, uint64_t addr)
{
	const uint64_t *p;

	if (!addr)
		return NO_NAME;
	p = bsearch(&addr, names->addrs, names->nr, sizeof(*names->addrs), compare_u64);
	return p ? names->at[p - names->addrs] : BAD_NAME;
}

/* ---- the copy, from the rows ---- */

enum { STRUCTS, TYPES, INTS, LONGS, NR_TABLES };

/* Each table's entries into vm; an entry with a name that could not be read is left out. */
static int fill(struct hotspot_vm *vm, struct table *tables, const struct names *names)
{
	const struct table *s = &tables[STRUCTS], *t = &tables[TYPES], *in = &tables[INTS], *lo = &tables[LONGS];

	for (size_t r = 0; r < s->nr_rows; r++) {
		const uint64_t *row = s->rows[r];
		uint32_t type = name_of(names, row[0]), field = name_of(names, row[1]), ts = name_of(names, row[2]);

		/* Only typeString may be NULL (HotSpot's unchecked fields have none). */
		if (type >= BAD_NAME || field >= BAD_NAME || ts == BAD_NAME)
			continue;
		if (add_field_at(vm, type, field, ts, row[3] != 0, row[4], row[5]))
			return -1;
	}
	for (size_t r = 0; r < t->nr_rows; r++) {
		uint32_t type = name_of(names, t->rows[r][0]);

		if (type < BAD_NAME && add_type_at(vm, type, t->rows[r][1]))
			return -1;
	}
	for (size_t r = 0; r < in->nr_rows; r++) {
		uint32_t name = name_of(names, in->rows[r][0]);

		if (name < BAD_NAME &&
		    add_constant_at(&vm->ints, &vm->nr_ints, &vm->cap_ints, name, (int32_t)(uint32_t)in->rows[r][1]))
			return -1;
	}
	for (size_t r = 0; r < lo->nr_rows; r++) {
		uint32_t name = name_of(names, lo->rows[r][0]);

		if (name < BAD_NAME &&
		    add_constant_at(&vm->longs, &vm->nr_longs, &vm->cap_longs, name, (int64_t)lo->rows[r][1]))
			return -1;
	}
	return 0;
}

/* The four tables as libjvm describes them; member 0 is each one's name, NULL at the end. */
static void describe_tables(struct table *tables, const struct hotspot_vm_symbols *y)
{
	tables[STRUCTS] = (struct table){
		.name = "gHotSpotVMStructs", .array_symbol = y->structs,
		.stride_symbol = y->struct_stride, .stride_name = "gHotSpotVMStructEntryArrayStride",
		.members = {
			{ y->struct_type_name, "gHotSpotVMStructEntryTypeNameOffset", 8 },
			{ y->struct_field_name, "gHotSpotVMStructEntryFieldNameOffset", 8 },
			{ y->struct_type_string, "gHotSpotVMStructEntryTypeStringOffset", 8 },
			{ y->struct_is_static, "gHotSpotVMStructEntryIsStaticOffset", 4 },
			{ y->struct_offset, "gHotSpotVMStructEntryOffsetOffset", 8 },
			{ y->struct_address, "gHotSpotVMStructEntryAddressOffset", 8 },
		},
		.nr_members = 6, .nr_names = 3,
	};
	tables[TYPES] = (struct table){
		.name = "gHotSpotVMTypes", .array_symbol = y->types,
		.stride_symbol = y->type_stride, .stride_name = "gHotSpotVMTypeEntryArrayStride",
		.members = {
			{ y->type_type_name, "gHotSpotVMTypeEntryTypeNameOffset", 8 },
			{ y->type_size, "gHotSpotVMTypeEntrySizeOffset", 8 },
		},
		.nr_members = 2, .nr_names = 1,
	};
	tables[INTS] = (struct table){
		.name = "gHotSpotVMIntConstants", .array_symbol = y->int_constants,
		.stride_symbol = y->int_stride, .stride_name = "gHotSpotVMIntConstantEntryArrayStride",
		.members = {
			{ y->int_name, "gHotSpotVMIntConstantEntryNameOffset", 8 },
			{ y->int_value, "gHotSpotVMIntConstantEntryValueOffset", 4 },
		},
		.nr_members = 2, .nr_names = 1,
	};
	tables[LONGS] = (struct table){
		.name = "gHotSpotVMLongConstants", .array_symbol = y->long_constants,
		.stride_symbol = y->long_stride, .stride_name = "gHotSpotVMLongConstantEntryArrayStride",
		.members = {
			{ y->long_name, "gHotSpotVMLongConstantEntryNameOffset", 8 },
			{ y->long_value, "gHotSpotVMLongConstantEntryValueOffset", 8 },
		},
		.nr_members = 2, .nr_names = 1,
	};
}

int hotspot_vm__read(struct hotspot_memory *mem, const struct hotspot_vm_symbols *syms, struct hotspot_vm **out,
		    char *err, size_t err_size)
{
	struct table tables[NR_TABLES];
	struct table *all[NR_TABLES];
	struct names names = { 0 };
	struct hotspot_vm *vm = NULL;
	enum table_state state = TABLE_OK;
	bool ok = true;

	*out = NULL;
	describe_tables(tables, syms);
	for (size_t i = 0; i < NR_TABLES; i++)
		all[i] = &tables[i];
	for (size_t i = 0; i < NR_TABLES && ok; i++) {
		state = open_table(mem, &tables[i], err, err_size);
		ok = state == TABLE_OK && read_rows(mem, &tables[i], err, err_size);
	}
	if (ok && !(vm = hotspot_vm__new())) {
		refuse__say(err, err_size, "out of memory reading VMStructs");
		ok = false;
	}
	if (ok && !collect_names(&names, all, NR_TABLES)) {
		refuse__say(err, err_size, "out of memory reading VMStructs' names");
		ok = false;
	}
	ok = ok && read_names(mem, vm, &names, err, err_size);
	if (ok && fill(vm, tables, &names)) {
		refuse__say(err, err_size, "out of memory reading VMStructs");
		ok = false;
	}
	for (size_t i = 0; i < NR_TABLES; i++)
		free(tables[i].rows);
	free(names.addrs);
	free(names.at);
	if (!ok) {
		hotspot_vm__free(vm);
		return state == TABLE_NOT_SET ? HOTSPOT_VM_STARTING : -1;
	}
	*out = vm;
	return 0;
}
