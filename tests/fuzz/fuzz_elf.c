/*
 * An ELF file a target maps (its executable, its libraries, a vDSO): the
 * headers, build-id, debuglink and symbol tables, from memory and from a
 * file, bounded and not.
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
	close(fd);
	return 0;
}
