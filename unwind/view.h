/*
 * view: one CFI section of an ELF file, alone in an ELF image in memory,
 * for libdw to read instead of the file.
 *
 * Given the file, libdw reads more than the section fde.c checked:
 * dwarf_getcfi_elf follows .eh_frame_hdr's search table to FDEs at any
 * offset in .eh_frame, and dwarf_begin_elf reads, and inflates, every
 * debug section of the file. Given a view it has the checked section's
 * bytes at the same vaddr, finds FDEs by walking them from the start as
 * fde.c did, and has nothing else to read. A view costs a copy of the
 * section; it says x86-64, so libdw's ABI defaults are the same.
 */
#ifndef JBPF_UNWIND_VIEW_H
#define JBPF_UNWIND_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct cfi_view {
	Elf *elf;     /* NULL when not open */
	void *image;
};

/*
 * Opens a view of the section name (".eh_frame" or ".debug_frame") whose
 * bytes are data[0..size), at ELF vaddr sh_addr. 0, or -ENOMEM, or
 * -EINVAL (libelf refused the image).
 */
int cfi_view__open(struct cfi_view *view, const char *name, const void *data, size_t size, uint64_t sh_addr);
/* Ends the view's Elf and frees its image; libdw must be done with it. */
void cfi_view__close(struct cfi_view *view);

#endif /* JBPF_UNWIND_VIEW_H */
