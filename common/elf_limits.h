/*
 * elf_limits: what an ELF file's header asks of libelf, checked before
 * libelf is given the file.
 *
 * elf_begin allocates a descriptor for every section the header counts,
 * and the first look at a section reads the whole section header table;
 * program headers are read whole the same way. libelf checks the counts
 * only against the file's size, and a sparse file is large for free: a
 * 4 KiB file of 1 GiB apparent size that counts 2^24 sections makes libelf
 * take 3.4 GB and 20 s. Real executables, libraries and debug files have
 * tens of sections and about ten program headers.
 */
#ifndef JBPF_ELF_LIMITS_H
#define JBPF_ELF_LIMITS_H

/* Sections and program headers a file may count: some 4 MiB of libelf's memory at most. */
#define ELF_MAX_SECTIONS 16384
#define ELF_MAX_SEGMENTS 4096

/*
 * 0 when the ELF header at the start of fd (and section 0, where the
 * counts are extended into it) counts at most ELF_MAX_SECTIONS sections
 * and ELF_MAX_SEGMENTS program headers, or when fd does not hold an ELF
 * header at all (libelf then refuses it itself); -EFBIG when it counts
 * more; -EIO when it cannot be read.
 */
int elf_limits__check_fd(int fd);

#endif /* JBPF_ELF_LIMITS_H */
