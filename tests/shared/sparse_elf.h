/*
 * sparse_elf: an ELF file whose .symtab, another section or its section
 * count claims a huge size at no cost on disk, for the tests that the
 * symbolizer and the unwind tables bound what a target's file can make
 * them read. Header-only; include after <cmocka.h> and <string.h>.
 */
#ifndef JBPF_TEST_SPARSE_ELF_H
#define JBPF_TEST_SPARSE_ELF_H

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * Points the .symtab of the 64-bit ELF file open read-write on fd at about
 * bytes of holes past its end. Fails the test if the file has no .symtab.
 */
static inline void sparse_elf_make_symtab_huge(int fd, uint64_t bytes)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	off_t end;
	int patched = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	end = lseek(fd, 0, SEEK_END);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		off_t at = (off_t)(eh.e_shoff + (uint64_t)i * eh.e_shentsize);

		assert_int_equal(pread(fd, &sh, sizeof(sh), at), (ssize_t)sizeof(sh));
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		sh.sh_offset = ((uint64_t)end + 4095) & ~4095ull;
		/* A whole number of entries, or libelf refuses the section before reading it. */
		sh.sh_size = (bytes / sh.sh_entsize) * sh.sh_entsize;
		assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), (ssize_t)sizeof(sh));
		assert_int_equal(ftruncate(fd, (off_t)(sh.sh_offset + sh.sh_size)), 0);
		patched = 1;
	}
	assert_true(patched);
}

/*
 * Makes the 64-bit ELF file open read-write on fd count nr sections, as
 * files of more than 65,279 do (e_shnum 0, the count in section 0's
 * sh_size), with a section header table of nr zeroed entries in holes past
 * its end: what libelf is given costs a few KiB on disk.
 */
static inline void sparse_elf_count_sections(int fd, uint64_t nr)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh0 = { .sh_size = nr };
	off_t end;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	end = lseek(fd, 0, SEEK_END);
	eh.e_shoff = ((uint64_t)end + 4095) & ~4095ull;
	eh.e_shnum = 0;
	eh.e_shstrndx = SHN_UNDEF;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	assert_int_equal(pwrite(fd, &sh0, sizeof(sh0), (off_t)eh.e_shoff), (ssize_t)sizeof(sh0));
	assert_int_equal(ftruncate(fd, (off_t)(eh.e_shoff + nr * sizeof(Elf64_Shdr))), 0);
}

/*
 * Points the section called name of the 64-bit ELF file open read-write
 * on fd at bytes of holes past its end. Fails the test if there is none.
 */
static inline void sparse_elf_make_section_huge(int fd, const char *name, uint64_t bytes)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, names;
	char got[64];
	off_t end;
	int patched = 0;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	assert_int_equal(pread(fd, &names, sizeof(names), (off_t)(eh.e_shoff + (uint64_t)eh.e_shstrndx * eh.e_shentsize)),
			 (ssize_t)sizeof(names));
	end = lseek(fd, 0, SEEK_END);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		off_t at = (off_t)(eh.e_shoff + (uint64_t)i * eh.e_shentsize);

		assert_int_equal(pread(fd, &sh, sizeof(sh), at), (ssize_t)sizeof(sh));
		memset(got, 0, sizeof(got));
		if (pread(fd, got, sizeof(got) - 1, (off_t)(names.sh_offset + sh.sh_name)) <= 0 || strcmp(got, name))
			continue;
		sh.sh_offset = ((uint64_t)end + 4095) & ~4095ull;
		sh.sh_size = bytes;
		assert_int_equal(pwrite(fd, &sh, sizeof(sh), at), (ssize_t)sizeof(sh));
		assert_int_equal(ftruncate(fd, (off_t)(sh.sh_offset + sh.sh_size)), 0);
		patched = 1;
	}
	assert_true(patched);
}

#endif /* JBPF_TEST_SPARSE_ELF_H */
