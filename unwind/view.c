/*
 * view: a one-section ELF image in memory (see view.h).
 *
 * The image: the ELF header, the section's bytes, the section names, then
 * three section headers (the null section, the CFI section, the names).
 * No program headers: libdw finds the section by name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gelf.h>

#include "unwind/view.h"

int cfi_view__open(struct cfi_view *view, const char *name, const void *data, size_t size, uint64_t sh_addr)
{
	size_t name_len = strlen(name) + 1;
	size_t names_off = sizeof(Elf64_Ehdr) + size;
	size_t names_size = 1 + name_len + sizeof(".shstrtab");
	size_t shdr_off = (names_off + names_size + 7) & ~(size_t)7;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	char *image, *names;

	view->elf = NULL;
	view->image = NULL;
	if (size > SIZE_MAX / 2)
		return -ENOMEM;
	image = calloc(1, shdr_off + 3 * sizeof(Elf64_Shdr));
	if (!image)
		return -ENOMEM;
	eh = (Elf64_Ehdr *)image;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = shdr_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(image + sizeof(Elf64_Ehdr), data, size);
	names = image + names_off;
	memcpy(names + 1, name, name_len);
	memcpy(names + 1 + name_len, ".shstrtab", sizeof(".shstrtab"));
	sh = (Elf64_Shdr *)(image + shdr_off);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_addr = sh_addr,
			      .sh_offset = sizeof(Elf64_Ehdr), .sh_size = size, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = (Elf64_Word)(1 + name_len), .sh_type = SHT_STRTAB,
			      .sh_offset = names_off, .sh_size = names_size, .sh_addralign = 1 };
	view->elf = elf_memory(image, shdr_off + 3 * sizeof(Elf64_Shdr));
	if (!view->elf) {
		free(image);
		return -EINVAL;
	}
	view->image = image;
	return 0;
}

void cfi_view__close(struct cfi_view *view)
{
	elf_end(view->elf);
	free(view->image);
	view->elf = NULL;
	view->image = NULL;
}
