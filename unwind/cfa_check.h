/*
 * cfa_check: whether a CFA program (a CIE's initial instructions or an
 * FDE's instructions) is one libdw may run on our behalf within a bounded
 * amount of memory.
 *
 * libdw's interpreter grows its register array to the largest register
 * number a program names (8 bytes a register, from a ULEB128), and
 * copies that array for every DW_CFA_remember_state still open, and
 * it reads operands without checking them against the program's end. So
 * a program is accepted only when every operand lies inside it, every
 * register number is at most CFA_MAX_REGISTER and remember_state is
 * nested at most CFA_MAX_DEPTH deep: libdw then holds at most
 * (CFA_MAX_DEPTH + 1) register arrays of CFA_MAX_REGISTER + 1 entries
 * (some 140 KiB) whatever the file says. A program is read up to its first
 * opcode libdw refuses (libdw stops there too).
 */
#ifndef JBPF_UNWIND_CFA_CHECK_H
#define JBPF_UNWIND_CFA_CHECK_H

#include <stdbool.h>
#include <stdint.h>

/* x86-64's DWARF registers end at 130 (psABI); compilers name 0 to 16. */
#define CFA_MAX_REGISTER 255
/* Compilers nest remember_state one deep. */
#define CFA_MAX_DEPTH 64

/*
 * True when libdw may run the program [p, end). addr_encoding: the
 * DW_EH_PE_* encoding of DW_CFA_set_loc's operand (the FDE pointer
 * encoding of the program's CIE); a set_loc whose operand is indirect,
 * aligned or of unknown size is refused.
 */
bool cfa_check__is_bounded(const uint8_t *p, const uint8_t *end, unsigned addr_encoding);

/*
 * What one run of a program costs libdw, in bytes: the bytes it runs, and
 * CFA_REMEMBER_WORK more for each DW_CFA_remember_state, which makes libdw
 * allocate and copy a register array (in fuzz_unwind's build a
 * remember_state and restore_state pair took some 380 ns, a byte of
 * DW_CFA_nop some 40). Real programs remember at most once an epilogue.
 */
#define CFA_REMEMBER_WORK 16

/* cfa_check__is_bounded, and the work of a run to the program's end in *work (0 when not bounded). */
bool cfa_check__program(const uint8_t *p, const uint8_t *end, unsigned addr_encoding, uint64_t *work);

#endif /* JBPF_UNWIND_CFA_CHECK_H */
