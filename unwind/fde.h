/*
 * fde: the address ranges a CFI section describes, one per FDE.
 *
 * libdw reads the rows of an FDE (dwarf_cfi_addrframe) but has no call that
 * lists the FDEs, so this module walks the section with dwarf_next_cfi and
 * decodes each FDE's initial location and length itself: the pointer
 * encoding comes from its CIE's augmentation ('R'), as the .eh_frame format
 * of the x86-64 psABI and the LSB specify. .debug_frame FDEs hold plain
 * 8-byte addresses.
 *
 * Every FDE met, and the CIE it names, has its instructions checked
 * (cfa_check.h): libdw runs an FDE's instructions for any address in its
 * range, whether or not this module kept the range, so one FDE past the
 * bounds, or one whose instructions cannot be found, counts in refused
 * and the caller does not give the section to libdw at all.
 *
 * What one row costs libdw: dwarf_cfi_addrframe runs the FDE's
 * instructions from their start up to the row, so a row costs at most a
 * run of all of them, the FDE's program (its work, cfa_check.h). libdw picks the FDE for an address
 * itself, and where FDEs overlap, or one this module could not decode
 * might cover it, it may pick another than the range's: a range's program
 * is therefore the largest of the FDEs it overlaps (in one chain of
 * overlapping FDEs) and of the undecodable ones. Real sections have
 * neither, and a range's program is its FDE's.
 *
 * Ranges are ELF vaddrs. Entries this module cannot decode (an unknown
 * augmentation, an indirect or text-relative encoding, a truncated entry)
 * are skipped and counted: their code is then covered by no range, which
 * the table makes a JBPF_CFA_NONE gap.
 */
#ifndef JBPF_UNWIND_FDE_H
#define JBPF_UNWIND_FDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct fde_range {
	uint64_t lo, hi;   /* [lo, hi), ELF vaddrs */
	int source;        /* which CFI describes it (the caller's index) */
	uint32_t program;  /* bytes of call frame instructions libdw may run for one row here (see below) */
};

struct fde_list {
	struct fde_range *ranges;
	size_t nr, cap;
	size_t max;        /* bound on nr: past it, -EFBIG */
	uint64_t fdes;     /* FDEs read */
	uint64_t skipped;  /* entries that could not be decoded */
	uint64_t refused;  /* FDEs libdw must not run (see the top) */
};

/*
 * Appends to list the ranges of the FDEs in data, a CFI section whose
 * first byte is at ELF vaddr sh_addr, tagged with source. eh_frame: the
 * .eh_frame format, else .debug_frame. 0, -EFBIG past list->max, -ENOMEM.
 */
int fde__read_section(const unsigned char *e_ident, Elf_Data *data, bool eh_frame, uint64_t sh_addr,
		      int source, struct fde_list *list);

/* Appends [lo, hi) with its program: 0, -EFBIG past list->max, -ENOMEM. */
int fde__push(struct fde_list *list, uint64_t lo, uint64_t hi, int source, uint32_t program);

/*
 * Sorts by lo and makes the ranges disjoint: where two overlap, the one
 * starting first keeps the overlap (empty ranges are dropped).
 */
void fde__sort_disjoint(struct fde_list *list);

void fde__list_free(struct fde_list *list);

#endif /* JBPF_UNWIND_FDE_H */
