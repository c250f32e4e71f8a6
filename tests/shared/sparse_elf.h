/*
 * sparse_elf: an ELF file whose .symtab claims a huge size at no cost on
 * disk, for the tests that the symbolizer bounds what a target's file can
 * make it read. Header-only; include after <cmocka.h>.
 */
#ifndef JBPF_TEST_SPARSE_ELF_H
#define JBPF_TEST_SPARSE_ELF_H

#include <elf.h>
#include <stdint.h>
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

#endif /* JBPF_TEST_SPARSE_ELF_H */
