/*
 * elf: PT_LOAD segments, build-id, debuglink and function symbols of one
 * ELF file (contract, address spaces and the bias formula in elf.h).
 *
 * Only what libelf has bounds-checked is read, and each value taken from
 * the file is checked once more before use: segment ranges must not wrap,
 * a debuglink must be a plain file name followed by its CRC inside the
 * section, a symbol's size must be plausible.
 */
#include "symbolizer/elf.h"
#include "symbolizer/symtab.h"
#include "common/elf_limits.h"

#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

/*
 * A function larger than this is a corrupt size: it would swallow every
 * address after it. Such a symbol is kept, as if it had no size.
 */
#define MAX_FUNCTION_SIZE (256u << 20)
/* Notes are a few dozen bytes; a larger PT_NOTE is not worth reading. */
#define MAX_NOTE_SEGMENT (64u << 10)

static int libelf_ready(void)
{
	static int ready = -1;

	if (ready < 0)
		ready = elf_version(EV_CURRENT) != EV_NONE;
	return ready;
}

static void read_loads(Elf *elf, struct elf_image *img)
{
	size_t i, phnum;

	if (elf_getphdrnum(elf, &phnum))
		return;
	for (i = 0; i < phnum && img->nr_loads < ELF_MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > UINT64_MAX - ph.p_filesz || ph.p_vaddr > UINT64_MAX - ph.p_filesz)
			continue;
		img->loads[img->nr_loads].offset = ph.p_offset;
		img->loads[img->nr_loads].vaddr = ph.p_vaddr;
		img->loads[img->nr_loads].filesz = ph.p_filesz;
		img->nr_loads++;
	}
}

/* Looks for NT_GNU_BUILD_ID in one block of notes. Returns 1 when found. */
static int build_id_from_notes(Elf_Data *data, struct elf_image *img)
{
	size_t offset = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (offset < data->d_size &&
	       (next = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nhdr.n_descsz > 0 &&
		    nhdr.n_descsz <= ELF_MAX_BUILD_ID) {
			memcpy(img->build_id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			img->build_id_len = nhdr.n_descsz;
			return 1;
		}
		offset = next;
	}
	return 0;
}

/* Files without section headers (and some images) only have PT_NOTE. */
static void build_id_from_segments(Elf *elf, struct elf_image *img)
{
	size_t i, phnum;

	if (elf_getphdrnum(elf, &phnum))
		return;
	for (i = 0; i < phnum && !img->build_id_len; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_filesz > MAX_NOTE_SEGMENT)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data)
			build_id_from_notes(data, img);
	}
}

/*
 * .gnu_debuglink: the debug file's name, NUL, padding to 4 bytes, then the
 * CRC-32 of the debug file in the ELF file's byte order.
 */
static void read_debuglink(Elf *elf, Elf_Scn *scn, struct elf_image *img)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	size_t len, crc_off;
	uint32_t crc;
	GElf_Ehdr ehdr;

	if (!data || !data->d_buf || !gelf_getehdr(elf, &ehdr))
		return;
	name = data->d_buf;
	len = strnlen(name, data->d_size);
	if (len == 0 || len >= ELF_MAX_DEBUGLINK || len == data->d_size)
		return;
	if (memchr(name, '/', len) || !strcmp(name, ".") || !strcmp(name, ".."))
		return;
	crc_off = (len + 1 + 3) & ~(size_t)3;
	if (crc_off > data->d_size || data->d_size - crc_off < 4)
		return;
	memcpy(&crc, (const char *)data->d_buf + crc_off, 4);
	crc = ehdr.e_ident[EI_DATA] == ELFDATA2MSB ? be32toh(crc) : le32toh(crc);
	memcpy(img->debuglink, name, len);
	img->debuglink[len] = '\0';
	img->debuglink_crc = crc;
}

static enum symtab_binding binding_of(unsigned char st_info)
{
	switch (GELF_ST_BIND(st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return SYMTAB_BIND_GLOBAL;
	case STB_WEAK:
		return SYMTAB_BIND_WEAK;
	default:
		return SYMTAB_BIND_LOCAL;
	}
}

/* Bytes a section takes in memory once libelf has read it (none when not in the file). */
static uint64_t section_bytes(const GElf_Shdr *shdr)
{
	return shdr->sh_type == SHT_NOBITS ? 0 : shdr->sh_size;
}

/*
 * Whether a symbol table and its strings (section sh_link) fit in *left,
 * each within ELF_MAX_SECTION_BYTES; if so, they are taken from *left,
 * since libelf keeps them until elf_end.
 */
static int table_fits(Elf *elf, const GElf_Shdr *shdr, uint64_t *left)
{
	Elf_Scn *strings = elf_getscn(elf, shdr->sh_link);
	GElf_Shdr str_shdr;
	uint64_t table, names = 0;

	if (strings && gelf_getshdr(strings, &str_shdr))
		names = section_bytes(&str_shdr);
	table = section_bytes(shdr);
	if (table > ELF_MAX_SECTION_BYTES || names > ELF_MAX_SECTION_BYTES || table + names > *left)
		return 0;
	*left -= table + names;
	return 1;
}

static void read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct elf_image *img,
			 struct symtab *symbols, uint64_t *left)
{
	Elf_Data *data;
	size_t i, count, entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	if (!table_fits(elf, shdr, left)) {
		img->over_bound = 1;
		if (shdr->sh_type == SHT_SYMTAB)
			img->has_symtab = 1;
		return;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !entsize)
		return;
	count = data->d_size / entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type;
		uint64_t size;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_value == 0)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		if (shdr->sh_type == SHT_SYMTAB)
			img->has_symtab = 1;
		img->nr_symbols++;
		size = sym.st_size > MAX_FUNCTION_SIZE ? 0 : sym.st_size;
		if (symtab__add(symbols, sym.st_value, size, name, strlen(name),
				symtab__alias_priority(binding_of(sym.st_info), name)))
			break;
	}
}

/* Section names are a few hundred bytes; libelf reads their table whole on the first name. */
#define MAX_SECTION_NAMES (64u << 10)

static int small_section(Elf *elf, size_t index)
{
	Elf_Scn *scn = elf_getscn(elf, index);
	GElf_Shdr shdr;

	return scn && gelf_getshdr(scn, &shdr) && section_bytes(&shdr) <= MAX_SECTION_NAMES;
}

/* A .gnu_debuglink is a name, padding and a CRC: anything longer is not one. */
#define MAX_DEBUGLINK_SECTION (ELF_MAX_DEBUGLINK + 8)

static int read_elf(Elf *elf, struct elf_image *img, struct symtab *symbols, uint64_t left)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr ehdr;

	memset(img, 0, sizeof(*img));
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		return -ENOEXEC;
	read_loads(elf, img);
	if (elf_getshdrstrndx(elf, &shstrndx) || !small_section(elf, shstrndx))
		shstrndx = SHN_UNDEF;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		switch (shdr.sh_type) {
		case SHT_SYMTAB:
		case SHT_DYNSYM:
			/* Without a table to fill, tens of thousands of symbols are not worth a look. */
			if (symbols)
				read_symbols(elf, scn, &shdr, img, symbols, &left);
			break;
		case SHT_NOTE:
			if (!img->build_id_len && shdr.sh_size <= MAX_NOTE_SEGMENT) {
				Elf_Data *data = elf_getdata(scn, NULL);

				if (data)
					build_id_from_notes(data, img);
			}
			break;
		case SHT_PROGBITS:
			name = shstrndx != SHN_UNDEF ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
			if (name && !strcmp(name, ".gnu_debuglink") && shdr.sh_size <= MAX_DEBUGLINK_SECTION)
				read_debuglink(elf, scn, img);
			break;
		default:
			break;
		}
	}
	if (!img->build_id_len)
		build_id_from_segments(elf, img);
	return 0;
}

int elf__read_fd(int fd, struct elf_image *img, struct symtab *symbols)
{
	return elf__read_fd_bounded(fd, img, symbols, 2 * ELF_MAX_SECTION_BYTES);
}

int elf__read_fd_bounded(int fd, struct elf_image *img, struct symtab *symbols, uint64_t max_bytes)
{
	Elf *elf;
	int err;

	memset(img, 0, sizeof(*img));
	if (!libelf_ready() || elf_limits__check_fd(fd))
		return -ENOEXEC;
	/* ELF_C_READ: pread on demand; a file shrinking under an mmap would SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	err = read_elf(elf, img, symbols, max_bytes);
	elf_end(elf);
	return err;
}

int elf__read_memory(const void *image, size_t size, struct elf_image *img,
		     struct symtab *symbols)
{
	char *copy;
	Elf *elf;
	int err;

	memset(img, 0, sizeof(*img));
	if (!libelf_ready() || !size)
		return -ENOEXEC;
	/* elf_memory takes a writable buffer; never hand it memory we do not own. */
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return -ENOEXEC;
	}
	/* The image is in memory already: its sections cost nothing more. */
	err = read_elf(elf, img, symbols, UINT64_MAX);
	elf_end(elf);
	free(copy);
	return err;
}

/* The wanted names of one symbol table, of type (STT_FUNC, STT_OBJECT), into vaddrs still 0: how many were new. */
static size_t match_names(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, int type, const char *const *names, size_t nr,
			  uint64_t *vaddrs)
{
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), count, found = 0;
	Elf_Data *data = elf_getdata(scn, NULL);

	if (!data || !entsize)
		return 0;
	count = data->d_size / entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != type || sym.st_shndx == SHN_UNDEF || !sym.st_value || !sym.st_name)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name)
			continue;
		for (size_t w = 0; w < nr; w++)
			if (!vaddrs[w] && !strcmp(name, names[w])) {
				vaddrs[w] = sym.st_value;
				found++;
			}
	}
	return found;
}

int elf__find_symbols(int fd, enum elf_symbol_kind kind, int symtab_too, const char *const *names, size_t nr,
		      uint64_t *vaddrs, struct elf_image *img)
{
	static const Elf64_Word tables[] = { SHT_DYNSYM, SHT_SYMTAB };
	int type = kind == ELF_SYMBOL_OBJECT ? STT_OBJECT : STT_FUNC;
	uint64_t left = 2 * ELF_MAX_SECTION_BYTES;
	size_t found = 0;
	Elf *elf;
	int err;

	memset(vaddrs, 0, nr * sizeof(*vaddrs));
	memset(img, 0, sizeof(*img));
	if (!libelf_ready() || elf_limits__check_fd(fd) || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -ENOEXEC;
	err = read_elf(elf, img, NULL, left);
	for (size_t t = 0; !err && t < (symtab_too ? 2u : 1u) && found < nr; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;

			if (gelf_getshdr(scn, &shdr) && shdr.sh_type == tables[t] && table_fits(elf, &shdr, &left))
				found += match_names(elf, scn, &shdr, type, names, nr, vaddrs);
		}
	}
	elf_end(elf);
	return err ? err : (int)found;
}

int elf__file_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < img->nr_loads; i++) {
		const struct elf_load *load = &img->loads[i];

		if (vaddr >= load->vaddr && vaddr - load->vaddr < load->filesz) {
			*offset = vaddr - load->vaddr + load->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf__vaddr(const struct elf_image *img, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
	       uint64_t *vaddr)
{
	uint64_t file_offset;
	size_t i;

	if (addr < map_start || addr - map_start > UINT64_MAX - map_pgoff)
		return -ENOENT;
	file_offset = addr - map_start + map_pgoff;
	for (i = 0; i < img->nr_loads; i++) {
		const struct elf_load *load = &img->loads[i];

		if (file_offset >= load->offset && file_offset - load->offset < load->filesz) {
			*vaddr = file_offset - load->offset + load->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}
