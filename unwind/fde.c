/*
 * fde: FDE address ranges of a CFI section (see fde.h).
 *
 * The pointer encodings (DW_EH_PE_*) decoded here are the ones compilers
 * and linkers emit on x86-64: absptr, udata/sdata 2, 4 and 8, uleb128 and
 * sleb128, applied as absolute or pc-relative. Anything else makes the FDE
 * skipped, never guessed at.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "unwind/cfa_check.h"
#include "unwind/fde.h"

/* A CIE's pointer encoding for its FDEs, or ENC_UNKNOWN when undecodable. */
#define ENC_UNKNOWN 0x100

/* The CIEs seen last, by section offset: most sections have one or a few. */
#define CIE_MEMO 8

/* What an FDE needs of its CIE. */
struct cie_info {
	unsigned enc;      /* pointer encoding of its FDEs, ENC_UNKNOWN when undecodable */
	bool sized;        /* 'z': an FDE's augmentation data starts with its length */
	bool bounded;      /* its initial instructions pass cfa_check */
};

struct cie_memo {
	Dwarf_Off offset[CIE_MEMO];
	struct cie_info info[CIE_MEMO];
	size_t nr, next;
};

struct cursor {
	const uint8_t *p, *end;
};

/*
 * One LEB128 number: its bits in *out, and in *shift how many it had, for
 * read_sleb to extend the sign. Bits past 64 are dropped.
 */
static bool read_leb(struct cursor *c, uint64_t *out, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;

	*shift = 0;
	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
		if (!(b & 0x80)) {
			*out = v;
			*last = b;
			return true;
		}
	}
	return false;
}

static bool read_uleb(struct cursor *c, uint64_t *out)
{
	unsigned shift;
	uint8_t last;

	return read_leb(c, out, &shift, &last);
}

static bool read_sleb(struct cursor *c, int64_t *out)
{
	unsigned shift;
	uint8_t last;
	uint64_t v;

	if (!read_leb(c, &v, &shift, &last))
		return false;
	if (shift < 64 && (last & 0x40))
		v |= ~0ull << shift;
	*out = (int64_t)v;
	return true;
}

/* n little-endian bytes (x86-64 only), sign-extended when is_signed. */
static bool read_fixed(struct cursor *c, size_t n, bool is_signed, uint64_t *out)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	if (is_signed && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	c->p += n;
	*out = v;
	return true;
}

/* The value of the format part (low nibble) of enc, unapplied. */
static bool read_encoded_value(struct cursor *c, unsigned enc, uint64_t *out)
{
	int64_t s;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return read_fixed(c, 8, false, out);
	case DW_EH_PE_udata2:
		return read_fixed(c, 2, false, out);
	case DW_EH_PE_sdata2:
		return read_fixed(c, 2, true, out);
	case DW_EH_PE_udata4:
		return read_fixed(c, 4, false, out);
	case DW_EH_PE_sdata4:
		return read_fixed(c, 4, true, out);
	case DW_EH_PE_uleb128:
		return read_uleb(c, out);
	case DW_EH_PE_sleb128:
		if (!read_sleb(c, &s))
			return false;
		*out = (uint64_t)s;
		return true;
	default:
		return false;
	}
}

/* The FDE pointer encoding a .eh_frame CIE's augmentation gives. */
static unsigned eh_cie_encoding(const Dwarf_CIE *cie)
{
	const char *aug = cie->augmentation;
	struct cursor c;
	uint64_t ignored;
	unsigned enc = DW_EH_PE_absptr;

	if (aug == NULL)
		return ENC_UNKNOWN;
	if (aug[0] == '\0')
		return DW_EH_PE_absptr;
	if (aug[0] != 'z' || cie->augmentation_data == NULL)
		return ENC_UNKNOWN;
	c.p = cie->augmentation_data;
	c.end = c.p + cie->augmentation_data_size;
	for (const char *a = aug + 1; *a; a++) {
		switch (*a) {
		case 'R':
			if (c.p >= c.end)
				return ENC_UNKNOWN;
			enc = *c.p++;
			break;
		case 'L':
			if (c.p >= c.end)
				return ENC_UNKNOWN;
			c.p++;
			break;
		case 'P':
			if (c.p >= c.end)
				return ENC_UNKNOWN;
			if (!read_encoded_value(&c, *c.p++ & 0x0f, &ignored))
				return ENC_UNKNOWN;
			break;
		case 'S': /* a signal frame */
		case 'B': /* (aarch64) */
		case 'G': /* MTE-tagged frames */
			break;
		default:
			/* Unknown data follows, but 'R', if it came, is known. */
			return enc;
		}
	}
	return enc;
}

/* The CIE at cie_offset, as libdw reads it for an FDE pointing there. */
static struct cie_info cie_lookup(const unsigned char *e_ident, Elf_Data *data, bool eh_frame, Dwarf_Off cie_offset,
				  struct cie_memo *memo)
{
	Dwarf_CFI_Entry entry;
	Dwarf_Off next;
	struct cie_info info = { ENC_UNKNOWN, false, false };

	for (size_t i = 0; i < memo->nr; i++)
		if (memo->offset[i] == cie_offset)
			return memo->info[i];
	if (dwarf_next_cfi(e_ident, data, eh_frame, cie_offset, &next, &entry) != 0 || !dwarf_cfi_cie_p(&entry)) {
		/* libdw cannot use it either: its FDEs are never run. */
		info.bounded = true;
	} else {
		const char *aug = entry.cie.augmentation;

		if (eh_frame)
			info.enc = eh_cie_encoding(&entry.cie);
		else /* .debug_frame: target addresses, no augmentation */
			info.enc = aug && aug[0] == '\0' ? DW_EH_PE_absptr : ENC_UNKNOWN;
		info.sized = aug && aug[0] == 'z';
		info.bounded = info.enc != ENC_UNKNOWN &&
			       cfa_check__is_bounded(entry.cie.initial_instructions,
						      entry.cie.initial_instructions_end, info.enc);
	}
	memo->offset[memo->next] = cie_offset;
	memo->info[memo->next] = info;
	memo->next = (memo->next + 1) % CIE_MEMO;
	if (memo->nr < CIE_MEMO)
		memo->nr++;
	return info;
}

/*
 * Whether libdw may run this FDE's instructions, and its CIE's: they
 * start after the initial location and range (in the CIE's encoding) and,
 * for a 'z' CIE, the augmentation data and its length. A CIE libdw could
 * read but this module cannot says no.
 */
static bool fde_is_bounded(const Dwarf_FDE *fde, struct cie_info cie, uint32_t *program)
{
	struct cursor c = { fde->start, fde->end };
	uint64_t ignored, len, work;

	/* Until the instructions are found, all of the FDE is counted as its program. */
	*program = c.end > c.p && c.end - c.p < UINT32_MAX ? (uint32_t)(c.end - c.p) : UINT32_MAX;
	if (!cie.bounded)
		return false;
	if (cie.enc == ENC_UNKNOWN)
		return true; /* an unreadable CIE: libdw runs nothing */
	/* Aligned pointers are padded: where the instructions start is libdw's guess. */
	if ((cie.enc & 0x70) == DW_EH_PE_aligned)
		return false;
	if (c.p > c.end || !read_encoded_value(&c, cie.enc, &ignored) || !read_encoded_value(&c, cie.enc, &ignored))
		return false;
	if (cie.sized) {
		if (!read_uleb(&c, &len) || len > (uint64_t)(c.end - c.p))
			return false;
		c.p += len;
	}
	if (!cfa_check__program(c.p, c.end, cie.enc, &work))
		return false;
	*program = work < UINT32_MAX ? (uint32_t)work : UINT32_MAX;
	return true;
}

/* [lo, hi) of an FDE whose CIE gives enc; false if it cannot be decoded. */
static bool fde_range(const Dwarf_FDE *fde, Elf_Data *data, uint64_t sh_addr, unsigned enc, uint64_t *lo,
		      uint64_t *hi)
{
	const uint8_t *base = data->d_buf;
	struct cursor c = { fde->start, fde->end };
	uint64_t loc, len;

	if (enc == ENC_UNKNOWN || c.p < base || c.end > base + data->d_size || c.p > c.end)
		return false;
	if (enc & DW_EH_PE_indirect)
		return false;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		loc = sh_addr + (uint64_t)(c.p - base);
	else if ((enc & 0x70) == DW_EH_PE_absptr)
		loc = 0;
	else
		return false;
	if (!read_encoded_value(&c, enc, &len))
		return false;
	loc += len;
	if (!read_encoded_value(&c, enc & 0x0f, &len))
		return false;
	if (len == 0 || loc + len < loc)
		return false;
	*lo = loc;
	*hi = loc + len;
	return true;
}

int fde__push(struct fde_list *list, uint64_t lo, uint64_t hi, int source, uint32_t program)
{
	if (list->nr == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 256;
		struct fde_range *r;

		if (list->nr >= list->max)
			return -EFBIG;
		if (cap > list->max)
			cap = list->max;
		r = realloc(list->ranges, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		list->ranges = r;
		list->cap = cap;
	}
	list->ranges[list->nr++] = (struct fde_range){ lo, hi, source, program };
	return 0;
}

static int range_cmp(const void *a, const void *b);

/*
 * Raises the program of each of ranges[first..nr) to the largest in its
 * chain of overlapping ranges, and to floor (the undecodable FDEs'):
 * libdw may run any of those for an address there (fde.h).
 */
static void charge_overlaps(struct fde_list *list, size_t first, uint32_t floor)
{
	size_t nr = list->nr - first;
	struct fde_range *r;

	/* No range yet: ranges may still be NULL, which no offset may be added to. */
	if (nr == 0)
		return;
	r = list->ranges + first;
	if (nr > 1)
		qsort(r, nr, sizeof(*r), range_cmp);
	for (size_t start = 0, end; start < nr; start = end) {
		uint64_t hi = r[start].hi;
		uint32_t most = floor;

		for (end = start; end < nr && (end == start || r[end].lo < hi); end++) {
			if (r[end].hi > hi)
				hi = r[end].hi;
			if (r[end].program > most)
				most = r[end].program;
		}
		for (size_t i = start; i < end; i++)
			r[i].program = most;
	}
}

int fde__read_section(const unsigned char *e_ident, Elf_Data *data, bool eh_frame, uint64_t sh_addr,
		      int source, struct fde_list *list)
{
	struct cie_memo memo = { .nr = 0 };
	Dwarf_Off offset = 0, next;
	Dwarf_CFI_Entry entry;
	uint64_t lo, hi;
	uint32_t program, undecoded = 0;
	size_t first = list->nr;
	int ret, err;

	while (offset < data->d_size) {
		struct cie_info cie;

		/* dwarf_next_cfi leaves next alone on some errors. */
		next = offset;
		ret = dwarf_next_cfi(e_ident, data, eh_frame, offset, &next, &entry);
		if (ret == 1)
			break;
		/* Every step moves forward, or the walk ends: a hostile
		 * section cannot make it loop. */
		if (next == (Dwarf_Off)-1 || next <= offset) {
			if (ret != 0)
				list->skipped++;
			break;
		}
		offset = next;
		if (ret != 0) {
			list->skipped++;
			continue;
		}
		if (dwarf_cfi_cie_p(&entry))
			continue;
		list->fdes++;
		cie = cie_lookup(e_ident, data, eh_frame, entry.fde.CIE_pointer, &memo);
		if (!fde_is_bounded(&entry.fde, cie, &program))
			list->refused++;
		if (!fde_range(&entry.fde, data, sh_addr, cie.enc, &lo, &hi)) {
			list->skipped++;
			if (program > undecoded)
				undecoded = program;
			continue;
		}
		err = fde__push(list, lo, hi, source, program);
		if (err)
			return err;
	}
	charge_overlaps(list, first, undecoded);
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

void fde__sort_disjoint(struct fde_list *list)
{
	size_t kept = 0;

	if (list->nr > 1)
		qsort(list->ranges, list->nr, sizeof(*list->ranges), range_cmp);
	for (size_t i = 0; i < list->nr; i++) {
		struct fde_range r = list->ranges[i];

		if (kept && r.lo < list->ranges[kept - 1].hi)
			r.lo = list->ranges[kept - 1].hi;
		if (r.lo < r.hi)
			list->ranges[kept++] = r;
	}
	list->nr = kept;
}

void fde__list_free(struct fde_list *list)
{
	free(list->ranges);
	list->ranges = NULL;
	list->nr = list->cap = 0;
}
