/*
 * An ELF file a target maps (its executable, its libraries, a vDSO): the
 * headers, build-id, debuglink and symbol tables, from memory and from a
 * file, bounded and not; and the allocator's functions -e nativemem looks
 * up in a library's .dynsym, with their file offsets.
 */
#include "fuzz.h"

#include "symbolizer/elf.h"
#include "symbolizer/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab *symbols = symtab__new();
	struct elf_image img;
	int fd = fuzz_memfd(data, size);

	if (!symbols)
		abort();
	elf__read_memory(data, size, &img, symbols);
	symtab__free(symbols);
	symbols = symtab__new();
	if (!symbols)
		abort();
	if (elf__read_fd_bounded(fd, &img, symbols, 1u << 20) == 0) {
		uint64_t vaddr;

		elf__vaddr(&img, 0x400000, 0, 0x401000, &vaddr);
	}
	symtab__free(symbols);
	{
		static const char *const names[] = { "malloc", "calloc", "free" };
		uint64_t vaddrs[3], offset;

		if (elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 1, names, 3, vaddrs, &img) > 0)
			for (int i = 0; i < 3; i++)
				if (vaddrs[i])
					elf__file_offset(&img, vaddrs[i], &offset);
	}
	close(fd);
	return 0;
}
