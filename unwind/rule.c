/*
 * rule: a libdw frame state to a walker row (see rule.h).
 *
 * libdw hands rules back as DWARF expressions: the CFA of "def_cfa reg,
 * off" as one DW_OP_bregx (or DW_OP_bregN), a register saved at CFA + off as
 * DW_OP_call_frame_cfa followed by DW_OP_plus_uconst off (the offset as a
 * two's-complement word; nothing for 0), "same value" as no operations and
 * a NULL pointer, "undefined" as no operations and the caller's buffer.
 */
#include <dwarf.h>
#include <stdint.h>
#include <string.h>

#include "unwind/rule.h"

#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7
#define DWARF_REG_RA 16 /* the return address column of the x86-64 psABI */

/*
 * The CFA expression GNU ld writes for the 16-byte entries of a lazy .plt
 * (elf_x86_64_eh_frame_lazy_plt in bfd/elf64-x86-64.c):
 *   rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)
 * In an entry, the push of the relocation index ends at byte 11: from there
 * the stack holds one more word.
 */
static const struct {
	uint8_t atom;
	uint64_t number;
} plt_pattern[] = {
	{ DW_OP_breg7, 8 },  /* rsp + 8 */
	{ DW_OP_breg16, 0 }, /* rip */
	{ DW_OP_lit15, 0 },
	{ DW_OP_and, 0 },    /* rip & 15 */
	{ DW_OP_lit11, 0 },
	{ DW_OP_ge, 0 },     /* (rip & 15) >= 11: 1 or 0 */
	{ DW_OP_lit3, 0 },
	{ DW_OP_shl, 0 },    /* 8 or 0 */
	{ DW_OP_plus, 0 },
};

#define PLT_PATTERN_LEN (sizeof(plt_pattern) / sizeof(plt_pattern[0]))

static bool is_plt_pattern(const Dwarf_Op *ops, size_t nops)
{
	if (nops != PLT_PATTERN_LEN)
		return false;
	for (size_t i = 0; i < nops; i++)
		if (ops[i].atom != plt_pattern[i].atom || ops[i].number != plt_pattern[i].number)
			return false;
	return true;
}

static bool fits_s16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

/* "CFA = reg + off" with reg rsp or rbp. */
static bool cfa_register(const Dwarf_Op *ops, size_t nops, unsigned *reg, int64_t *off)
{
	if (nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		*reg = (unsigned)ops[0].number;
		*off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	return *reg == DWARF_REG_RSP || *reg == DWARF_REG_RBP;
}

/* "saved at CFA + off" */
static bool at_cfa_offset(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

void rule__stop(struct jbpf_unwind_row *row)
{
	__u32 pc = row->pc;

	memset(row, 0, sizeof(*row));
	row->pc = pc;
	row->cfa_rule = JBPF_CFA_STOP;
}

void rule__none(struct jbpf_unwind_row *row)
{
	rule__stop(row);
	row->cfa_rule = JBPF_CFA_NONE;
}

/* The rbp rule; false if it is none the walker knows. */
static bool rbp_rule(Dwarf_Frame *frame, struct jbpf_unwind_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(frame, DWARF_REG_RBP, mem, &ops, &nops) != 0)
		return false;
	if (nops == 0) {
		/* Same value, or undefined: either way the walker has nothing
		 * better than the rbp it holds. */
		row->rbp_rule = JBPF_RBP_SAME;
		return true;
	}
	if (!at_cfa_offset(ops, nops, &off) || !fits_s16(off))
		return false;
	row->rbp_rule = JBPF_RBP_AT;
	row->rbp_offset = (__s16)off;
	return true;
}

enum rule_kind rule__from_frame(Dwarf_Frame *frame, struct jbpf_unwind_row *row)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	unsigned reg;
	int64_t off;

	rule__stop(row);
	if (dwarf_frame_register(frame, DWARF_REG_RA, mem, &ops, &nops) != 0)
		return RULE_STOP;
	if (nops == 0 && ops == mem) {
		row->cfa_rule = JBPF_CFA_END;
		return RULE_SIMPLE;
	}
	if (!at_cfa_offset(ops, nops, &off) || off != -8)
		return RULE_STOP;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return RULE_STOP;
	if (is_plt_pattern(ops, nops)) {
		row->cfa_rule = JBPF_CFA_PLT;
		return RULE_PLT;
	}
	if (!cfa_register(ops, nops, &reg, &off) || !fits_s16(off))
		return RULE_STOP;
	if (!rbp_rule(frame, row)) {
		rule__stop(row);
		return RULE_STOP;
	}
	row->cfa_rule = reg == DWARF_REG_RSP ? JBPF_CFA_RSP : JBPF_CFA_RBP;
	row->cfa_offset = (__s16)off;
	return RULE_SIMPLE;
}
