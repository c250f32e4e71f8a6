/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind table rows: the wire format between the table builder (unwind/,
 * userspace) and the stack walker (BPF). Userspace turns each ELF file's
 * .eh_frame (or .debug_frame) into rows of this form and places them in a
 * BPF array; the walker binary-searches them at sample time.
 *
 * x86-64 only: the CFA is found from rsp or rbp, the return address is
 * always at CFA - 8, and rbp is the only other register the walk restores.
 *
 * Only fixed-width types: this header compiles both against vmlinux.h (BPF
 * side) and against <linux/types.h> (userspace).
 */
#ifndef JBPF_UNWIND_ROW_H
#define JBPF_UNWIND_ROW_H

/* How to find the CFA (the caller's stack pointer) in one address range. */
enum jbpf_cfa_rule {
	JBPF_CFA_RSP = 0,  /* CFA = rsp + cfa_offset */
	JBPF_CFA_RBP = 1,  /* CFA = rbp + cfa_offset */
	JBPF_CFA_PLT = 2,  /* the PLT pattern: CFA = rsp + 8, + 8 more when (pc & 15) >= 11 */
	JBPF_CFA_STOP = 3, /* no rule the walker can follow (a DWARF expression, a register
	                      other than rsp/rbp): the walk stops here, counted */
	JBPF_CFA_END = 4,  /* the outermost frame (return address undefined): the walk ends, complete */
	JBPF_CFA_NONE = 5, /* code no FDE covers: frame pointers here, counted as no unwind info */
};

/* Where the caller's rbp is. */
enum jbpf_rbp_rule {
	JBPF_RBP_SAME = 0, /* unchanged: the caller's rbp is the current rbp */
	JBPF_RBP_AT = 1,   /* saved at CFA + rbp_offset */
};

/*
 * One row: the rule from pc up to the next row's pc (the last row of a table
 * covers up to its end). pc is an address in the ELF file's own virtual
 * address space (as .eh_frame states it) minus the table's base (the lowest
 * p_vaddr of its executable PT_LOAD segments), so 32 bits suffice; a file
 * whose executable code spans more than 4 GiB gets no table.
 * The return address is always at CFA - 8 (x86-64).
 *
 * Rows are sorted by pc, adjacent rows with identical rules are merged, and
 * gaps between FDEs (code with no unwind info) are filled with a
 * JBPF_CFA_NONE row, so a binary search for the last row with
 * row.pc <= pc always gives the rule. Offsets that do not fit in 16 bits
 * make the row JBPF_CFA_STOP.
 */
struct jbpf_unwind_row {
	__u32 pc;
	__u8 cfa_rule;      /* enum jbpf_cfa_rule */
	__u8 rbp_rule;      /* enum jbpf_rbp_rule */
	__s16 cfa_offset;
	__s16 rbp_offset;
	__u16 unused;
};

#endif /* JBPF_UNWIND_ROW_H */
