/*
 * cfa_check: is a CFA program safe to hand to libdw (see cfa_check.h).
 *
 * The walk reads each instruction's operands exactly as libdw's
 * interpreter does (DWARF 5 section 6.4.2, and the GNU extensions libdw
 * knows), so both see the same instruction boundaries: a LEB128 of more
 * than 10 bytes, which libdw would cut at 10, is refused rather than
 * guessed at. The first opcode libdw does not know ends the walk, as it
 * ends libdw's.
 */
#include <dwarf.h>
#include <stddef.h>

#include "unwind/cfa_check.h"

/* libdw reads a LEB128 of at most this many bytes (a 64-bit value). */
#define LEB128_MAX_BYTES 10

struct program {
	const uint8_t *p, *end;
};

static bool skip(struct program *pr, size_t n)
{
	if ((size_t)(pr->end - pr->p) < n)
		return false;
	pr->p += n;
	return true;
}

/* A LEB128 inside the program: its low 64 bits in *out (NULL: skipped). */
static bool leb128(struct program *pr, uint64_t *out)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < LEB128_MAX_BYTES && pr->p < pr->end; i++) {
		uint8_t b = *pr->p++;

		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (out)
				*out = v;
			return true;
		}
	}
	return false;
}

/* A register number, bounded (libdw keeps the same low 64 bits). */
static bool reg(struct program *pr)
{
	uint64_t r;

	return leb128(pr, &r) && r <= CFA_MAX_REGISTER;
}

/* A DW_FORM_block: a ULEB128 length and that many bytes. */
static bool block(struct program *pr)
{
	uint64_t len;

	return leb128(pr, &len) && len <= (uint64_t)(pr->end - pr->p) && skip(pr, (size_t)len);
}

/* DW_CFA_set_loc's operand, an address in addr_encoding. */
static bool address(struct program *pr, unsigned enc)
{
	if (enc & DW_EH_PE_indirect || (enc & 0x70) == DW_EH_PE_aligned)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return skip(pr, 8);
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return skip(pr, 2);
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return skip(pr, 4);
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		return leb128(pr, NULL);
	default:
		return false;
	}
}

/* What libdw's run of the program so far costs (cfa_check.h). */
static uint64_t work_of(const struct program *pr, const uint8_t *start, uint64_t remembers)
{
	return (uint64_t)(pr->p - start) + remembers * CFA_REMEMBER_WORK;
}

bool cfa_check__program(const uint8_t *p, const uint8_t *end, unsigned addr_encoding, uint64_t *work)
{
	struct program pr = { p, end };
	unsigned depth = 0;
	uint64_t remembers = 0;

	*work = 0;
	while (pr.p < pr.end) {
		uint8_t op = *pr.p++;
		bool ok;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			continue;
		case DW_CFA_offset:
			/* The register is in the opcode: at most 63. */
			if (!leb128(&pr, NULL))
				return false;
			continue;
		case DW_CFA_restore:
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save: /* libdw: registers 8 to 31 */
			ok = true;
			break;
		case DW_CFA_set_loc:
			ok = address(&pr, addr_encoding);
			break;
		case DW_CFA_advance_loc1:
			ok = skip(&pr, 1);
			break;
		case DW_CFA_advance_loc2:
			ok = skip(&pr, 2);
			break;
		case DW_CFA_advance_loc4:
			ok = skip(&pr, 4);
			break;
		case DW_CFA_MIPS_advance_loc8:
			ok = skip(&pr, 8);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
			ok = reg(&pr) && leb128(&pr, NULL);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = reg(&pr);
			break;
		case DW_CFA_register:
			ok = reg(&pr) && reg(&pr);
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			ok = leb128(&pr, NULL);
			break;
		case DW_CFA_def_cfa_expression:
			ok = block(&pr);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			ok = reg(&pr) && block(&pr);
			break;
		case DW_CFA_remember_state:
			remembers++;
			ok = ++depth <= CFA_MAX_DEPTH;
			break;
		case DW_CFA_restore_state:
			/* libdw stops at a restore with nothing remembered. */
			if (depth == 0) {
				*work = work_of(&pr, p, remembers);
				return true;
			}
			depth--;
			ok = true;
			break;
		default:
			/* libdw stops at an opcode it does not know. */
			*work = work_of(&pr, p, remembers);
			return true;
		}
		if (!ok)
			return false;
	}
	*work = work_of(&pr, p, remembers);
	return true;
}

bool cfa_check__is_bounded(const uint8_t *p, const uint8_t *end, unsigned addr_encoding)
{
	uint64_t work;

	return cfa_check__program(p, end, addr_encoding, &work);
}
