/*
 * elf: what an ELF file says about itself, read through libelf: its
 * PT_LOAD segments, build-id, .gnu_debuglink, and function symbols.
 *
 * Three address spaces meet here:
 *   runtime VA    an address in the process (what a stack holds)
 *   file offset   a byte position in the file; maps says which offset
 *                 (map_pgoff) is mapped at map_start
 *   ELF vaddr     the address the linker gave (st_value, p_vaddr)
 *
 *   file_offset = runtime_addr - map_start + map_pgoff
 *   elf_vaddr   = file_offset - p_offset + p_vaddr
 *
 * for the PT_LOAD segment whose file bytes hold file_offset. The
 * difference runtime_addr - elf_vaddr is the load bias: zero for a non-PIE
 * executable, the load address for PIE executables and shared libraries.
 *
 * Files are untrusted. libelf reads with pread (ELF_C_READ, not mmap, so a
 * file truncated under us gives an error, not SIGBUS) and checks section
 * bounds; every count and string here is bounded again, and every
 * section's size before libelf reads it into memory. A truncated or
 * garbage file gives an error or an empty result, never a crash.
 */
#ifndef JBPF_ELF_H
#define JBPF_ELF_H

#include <stddef.h>
#include <stdint.h>

struct symtab;

/* Real files have 2 to 5 PT_LOAD segments; more is a hostile file. */
#define ELF_MAX_LOADS 32
/* GNU build-ids are 20 bytes (sha1) or 16 (md5/uuid); 64 leaves room. */
#define ELF_MAX_BUILD_ID 64
/* A debuglink is a bare file name: NAME_MAX. */
#define ELF_MAX_DEBUGLINK 256
/*
 * A symbol or string table larger than this is not read: libelf reads a
 * section whole, and a sparse file makes a huge one free for its owner
 * but not for us. Real tables are far smaller (libjvm's .symtab and
 * .strtab together are a few MiB; the largest debug files', tens of MiB).
 */
#define ELF_MAX_SECTION_BYTES (256ull << 20)

struct elf_load {
	uint64_t offset; /* p_offset */
	uint64_t vaddr;  /* p_vaddr */
	uint64_t filesz; /* p_filesz */
};

struct elf_image {
	struct elf_load loads[ELF_MAX_LOADS];
	size_t nr_loads;
	uint8_t build_id[ELF_MAX_BUILD_ID];
	size_t build_id_len;               /* 0: no build-id note */
	char debuglink[ELF_MAX_DEBUGLINK]; /* "": no valid .gnu_debuglink */
	uint32_t debuglink_crc;            /* CRC-32 of the debug file */
	int has_symtab;                    /* a non-empty .symtab: not stripped */
	size_t nr_symbols;                 /* function symbols added */
	int over_bound;                    /* a symbol table was left unread: too large */
};

/*
 * Reads the ELF file open at fd into *img and, when symbols is not NULL,
 * adds its function symbols (STT_FUNC and STT_GNU_IFUNC, defined, named;
 * from .symtab and .dynsym) at their ELF vaddr to the unfinished table.
 * Aliases are ranked with symtab__alias_priority. When symbols is NULL,
 * no symbol table is read: has_symtab, nr_symbols and over_bound stay 0
 * (the headers, build-id and debuglink are what such callers want, and a
 * large table costs milliseconds). fd is not closed.
 * Returns 0, or -ENOEXEC for something that is not a readable ELF file.
 */
int elf__read_fd(int fd, struct elf_image *img, struct symtab *symbols);

/*
 * elf__read_fd reading at most max_bytes of sections in all (a symbol
 * table and its strings count together, and each at most
 * ELF_MAX_SECTION_BYTES): a table past that is skipped and over_bound set.
 * A .symtab skipped so still counts as present (has_symtab), so that no
 * debug file is looked for in its place.
 */
int elf__read_fd_bounded(int fd, struct elf_image *img, struct symtab *symbols, uint64_t max_bytes);

/* The same for an ELF image in memory, such as the vDSO. */
int elf__read_memory(const void *image, size_t size, struct elf_image *img,
		     struct symtab *symbols);

/*
 * Converts runtime address addr, in a mapping of this file that starts at
 * map_start with file offset map_pgoff, to an ELF vaddr (see above).
 * Returns 0, or -ENOENT when no PT_LOAD segment holds it.
 */
int elf__vaddr(const struct elf_image *img, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
	       uint64_t *vaddr);

enum elf_symbol_kind {
	ELF_SYMBOL_FUNCTION, /* STT_FUNC: an indirect function's symbol is its resolver's, and is not taken */
	ELF_SYMBOL_OBJECT,   /* STT_OBJECT: a variable */
};

/*
 * Reads the ELF file open at fd into *img (as elf__read_fd with no
 * symbols) and looks up the defined symbols of kind called names[0..nr)
 * in its .dynsym and, with symtab_too, in its .symtab for those .dynsym
 * lacks: vaddrs[i] their ELF vaddrs, 0 for a name not there. Returns how
 * many were found, or -ENOEXEC for something that is not a readable ELF
 * file. The tables are bounded as elf__read_fd's are.
 */
int elf__find_symbols(int fd, enum elf_symbol_kind kind, int symtab_too, const char *const *names, size_t nr,
		      uint64_t *vaddrs, struct elf_image *img);

/* The file offset of ELF vaddr: 0, or -ENOENT when no PT_LOAD segment's file bytes hold it. */
int elf__file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *offset);

#endif /* JBPF_ELF_H */
