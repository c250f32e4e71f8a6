/*
 * hotspot_fixture: a fake process memory for the hotspot/ tests, and a
 * fake libjvm's VMStructs tables written into it.
 *
 * The memory is a few regions at chosen addresses; a read succeeds only
 * when it lies wholly inside one region, as process_vm_readv fails on an
 * unmapped page. The tables use the layout of a real x86-64 libjvm
 * (VMStructEntry 48 bytes, VMTypeEntry 40, constants 16), with the
 * exported variables at FAKE_SYMBOLS; a test may change any of them
 * afterwards to make the tables hostile.
 */
#ifndef JBPF_TESTS_HOTSPOT_FIXTURE_H
#define JBPF_TESTS_HOTSPOT_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

#define FAKE_MAX_REGIONS 16

struct fake_region {
	uint64_t base;
	size_t len;
	unsigned char *bytes;
};

struct fake_memory {
	struct fake_region regions[FAKE_MAX_REGIONS];
	size_t nr;
};

static inline bool fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake_memory *fm = ctx;

	for (size_t i = 0; i < fm->nr; i++) {
		const struct fake_region *r = &fm->regions[i];

		if (addr >= r->base && addr - r->base <= r->len && len <= r->len - (addr - r->base)) {
			memcpy(buf, r->bytes + (addr - r->base), len);
			return true;
		}
	}
	return false;
}

/* A zeroed region of len bytes at base: its bytes. */
static inline unsigned char *fake_map(struct fake_memory *fm, uint64_t base, size_t len)
{
	struct fake_region *r = &fm->regions[fm->nr++];

	r->base = base;
	r->len = len;
	r->bytes = calloc(1, len);
	return r->bytes;
}

static inline void fake_memory_free(struct fake_memory *fm)
{
	for (size_t i = 0; i < fm->nr; i++)
		free(fm->regions[i].bytes);
	fm->nr = 0;
}

static inline void fake_reader(struct hotspot_memory *mem, struct fake_memory *fm)
{
	*mem = (struct hotspot_memory){ .read = fake_read, .ctx = fm };
}

static inline void fake_put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void fake_put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Where the fake libjvm's pieces live. */
#define FAKE_SYMBOLS 0x10000ull
#define FAKE_STRUCTS 0x100000ull
#define FAKE_TYPES 0x200000ull
#define FAKE_INTS 0x300000ull
#define FAKE_LONGS 0x380000ull
#define FAKE_STRINGS 0x400000ull
/* Entries each table has room for (zeroed: the entry after the last is the end). */
#define FAKE_TABLE_ROOM 4096
#define FAKE_STRINGS_ROOM (256u << 10)

struct fake_jvm {
	struct fake_memory fm;
	struct hotspot_vm_symbols syms;
	unsigned char *symbols, *structs, *types, *ints, *longs, *strings;
	size_t nr_structs, nr_types, nr_ints, nr_longs, strings_len;
};

/* The variables' addresses: each one 8 bytes apart in the symbols region, in this order. */
enum fake_symbol {
	FS_STRUCTS, FS_STRUCT_STRIDE, FS_STRUCT_TYPE_NAME, FS_STRUCT_FIELD_NAME, FS_STRUCT_TYPE_STRING,
	FS_STRUCT_IS_STATIC, FS_STRUCT_OFFSET, FS_STRUCT_ADDRESS,
	FS_TYPES, FS_TYPE_STRIDE, FS_TYPE_TYPE_NAME, FS_TYPE_SUPERCLASS_NAME, FS_TYPE_SIZE,
	FS_INTS, FS_INT_STRIDE, FS_INT_NAME, FS_INT_VALUE,
	FS_LONGS, FS_LONG_STRIDE, FS_LONG_NAME, FS_LONG_VALUE,
	FS_NR,
};

/* Sets the variable s (its value in the fake process). */
static inline void fake_symbol(struct fake_jvm *fj, enum fake_symbol s, uint64_t value)
{
	fake_put64(fj->symbols + 8 * s, value);
}

static inline void fake_jvm_init(struct fake_jvm *fj)
{
	static const uint64_t values[FS_NR] = {
		FAKE_STRUCTS, 48, 0, 8, 16, 24, 32, 40, FAKE_TYPES, 40, 0, 8, 32,
		FAKE_INTS, 16, 0, 8, FAKE_LONGS, 16, 0, 8,
	};
	uint64_t *addr = (uint64_t *)&fj->syms;

	_Static_assert(sizeof(struct hotspot_vm_symbols) == FS_NR * sizeof(uint64_t), "one address per variable");
	memset(fj, 0, sizeof(*fj));
	fj->symbols = fake_map(&fj->fm, FAKE_SYMBOLS, 8 * FS_NR);
	fj->structs = fake_map(&fj->fm, FAKE_STRUCTS, 48 * FAKE_TABLE_ROOM);
	fj->types = fake_map(&fj->fm, FAKE_TYPES, 40 * FAKE_TABLE_ROOM);
	fj->ints = fake_map(&fj->fm, FAKE_INTS, 16 * FAKE_TABLE_ROOM);
	fj->longs = fake_map(&fj->fm, FAKE_LONGS, 16 * FAKE_TABLE_ROOM);
	fj->strings = fake_map(&fj->fm, FAKE_STRINGS, FAKE_STRINGS_ROOM);
	/* struct hotspot_vm_symbols lists its addresses in the order of enum fake_symbol. */
	for (int s = 0; s < FS_NR; s++) {
		fake_symbol(fj, (enum fake_symbol)s, values[s]);
		addr[s] = FAKE_SYMBOLS + 8 * (uint64_t)s;
	}
	fj->strings_len = 16; /* no name at the region's first byte */
}

/* s copied into the strings region: its address (0 for NULL). */
static inline uint64_t fake_string(struct fake_jvm *fj, const char *s)
{
	size_t len;
	uint64_t at;

	if (!s)
		return 0;
	len = strlen(s) + 1;
	at = FAKE_STRINGS + fj->strings_len;
	memcpy(fj->strings + fj->strings_len, s, len);
	fj->strings_len += len;
	return at;
}

static inline void fake_struct(struct fake_jvm *fj, const char *type, const char *field, const char *type_string,
			       int is_static, uint64_t offset, uint64_t address)
{
	unsigned char *e = fj->structs + 48 * fj->nr_structs++;

	fake_put64(e, fake_string(fj, type));
	fake_put64(e + 8, fake_string(fj, field));
	fake_put64(e + 16, fake_string(fj, type_string));
	fake_put32(e + 24, (uint32_t)is_static);
	fake_put64(e + 32, offset);
	fake_put64(e + 40, address);
}

static inline void fake_type(struct fake_jvm *fj, const char *type, uint64_t size)
{
	unsigned char *e = fj->types + 40 * fj->nr_types++;

	fake_put64(e, fake_string(fj, type));
	fake_put64(e + 32, size);
}

static inline void fake_int(struct fake_jvm *fj, const char *name, int32_t value)
{
	unsigned char *e = fj->ints + 16 * fj->nr_ints++;

	fake_put64(e, fake_string(fj, name));
	fake_put32(e + 8, (uint32_t)value);
}

static inline void fake_long(struct fake_jvm *fj, const char *name, int64_t value)
{
	unsigned char *e = fj->longs + 16 * fj->nr_longs++;

	fake_put64(e, fake_string(fj, name));
	fake_put64(e + 8, (uint64_t)value);
}

#endif /* JBPF_TESTS_HOTSPOT_FIXTURE_H */
