/*
 * rule: one row of libdw's CFI (a Dwarf_Frame: the rules for one address
 * range) turned into the walker's row (bpf/unwind.h), x86-64 only.
 *
 * Kept: CFA = rsp or rbp + offset (DWARF registers 7 and 6); the return
 * address saved at CFA - 8, or undefined (the outermost frame:
 * JBPF_CFA_END); rbp unchanged or saved at CFA + offset. The CFA expression
 * the linker writes for a lazy-binding .plt (the "PLT pattern", below)
 * becomes JBPF_CFA_PLT. Anything else becomes JBPF_CFA_STOP: another CFA
 * register, another expression, a return address or rbp held in a
 * register or computed, an offset that does not fit 16 bits.
 */
#ifndef JBPF_UNWIND_RULE_H
#define JBPF_UNWIND_RULE_H

#include <linux/types.h>
#include <elfutils/libdw.h>

#include "bpf/unwind.h"

enum rule_kind {
	RULE_SIMPLE,  /* RSP, RBP or END */
	RULE_PLT,
	RULE_STOP,
};

/* Fills row's rules (not its pc) from frame. */
enum rule_kind rule__from_frame(Dwarf_Frame *frame, struct jbpf_unwind_row *row);

/* row made JBPF_CFA_STOP, with everything else zero (so equal STOP rows merge). */
void rule__stop(struct jbpf_unwind_row *row);
/* row made JBPF_CFA_NONE (code no FDE covers), everything else zero. */
void rule__none(struct jbpf_unwind_row *row);

#endif /* JBPF_UNWIND_RULE_H */
