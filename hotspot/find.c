/*
 * find: a process's libjvm.so and its VMStructs symbols (contract in find.h).
 *
 *   1. The process's maps name the mappings; the first whose file is
 *      called libjvm.so is taken (a JVM maps one).
 *   2. That file is opened as the design says a file the target controls
 *      is: through map_files, else by its path inside the process's root,
 *      which must be the device and inode maps names.
 *   3. Its PT_LOAD segments give the load bias of the mapping
 *      (symbolizer/elf.h: runtime address minus ELF vaddr).
 *   4. Its .dynsym, where HotSpot exports the gHotSpotVM* variables
 *      (JNIEXPORT), else its .symtab, gives their ELF vaddrs; a table or
 *      its strings larger than FIND_MAX_SECTION is not read.
 *
 * Nothing of the process's memory is read here.
 */
#include "hotspot/find.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolizer/elf.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"

/* libjvm's .dynsym is ~12 KiB and its .symtab ~1.5 MiB, each with as much in strings. */
#define FIND_MAX_SECTION (32u << 20)

/* Each symbol find looks for, and where its address goes. */
struct wanted {
	const char *name;
	size_t offset; /* in struct hotspot_vm_symbols */
	bool optional; /* not read by hotspot_vm_read */
};

#define WANT(sym, field) { sym, offsetof(struct hotspot_vm_symbols, field), false }
static const struct wanted wanted[] = {
	WANT("gHotSpotVMStructs", structs),
	WANT("gHotSpotVMStructEntryArrayStride", struct_stride),
	WANT("gHotSpotVMStructEntryTypeNameOffset", struct_type_name),
	WANT("gHotSpotVMStructEntryFieldNameOffset", struct_field_name),
	WANT("gHotSpotVMStructEntryTypeStringOffset", struct_type_string),
	WANT("gHotSpotVMStructEntryIsStaticOffset", struct_is_static),
	WANT("gHotSpotVMStructEntryOffsetOffset", struct_offset),
	WANT("gHotSpotVMStructEntryAddressOffset", struct_address),
	WANT("gHotSpotVMTypes", types),
	WANT("gHotSpotVMTypeEntryArrayStride", type_stride),
	WANT("gHotSpotVMTypeEntryTypeNameOffset", type_type_name),
	{ "gHotSpotVMTypeEntrySuperclassNameOffset", offsetof(struct hotspot_vm_symbols, type_superclass_name), true },
	WANT("gHotSpotVMTypeEntrySizeOffset", type_size),
	WANT("gHotSpotVMIntConstants", int_constants),
	WANT("gHotSpotVMIntConstantEntryArrayStride", int_stride),
	WANT("gHotSpotVMIntConstantEntryNameOffset", int_name),
	WANT("gHotSpotVMIntConstantEntryValueOffset", int_value),
	WANT("gHotSpotVMLongConstants", long_constants),
	WANT("gHotSpotVMLongConstantEntryArrayStride", long_stride),
	WANT("gHotSpotVMLongConstantEntryNameOffset", long_name),
	WANT("gHotSpotVMLongConstantEntryValueOffset", long_value),
};
#define NR_WANTED (sizeof(wanted) / sizeof(wanted[0]))

static uint64_t *slot(struct hotspot_vm_symbols *syms, size_t i)
{
	return (uint64_t *)((char *)syms + wanted[i].offset);
}

static bool is_libjvm(const struct procmaps_entry *e)
{
	const char *slash;

	if (e->kind != PROCMAPS_FILE || !e->path)
		return false;
	slash = strrchr(e->path, '/');
	return !strcmp(slash ? slash + 1 : e->path, "libjvm.so");
}

/* The mapping's file, opened as a target's file is (see the file comment): an fd or a negative errno. */
static int open_libjvm(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e)
{
	int fd = proc__open_map_file(proc_root, tgid, e->start, e->end);

	if (fd < 0 && !e->deleted) {
		struct proc_expect same = {
			.follow = PROC_FOLLOW_NONE,
			.check_identity = 1,
			.dev = (uint64_t)makedev(e->dev_major, e->dev_minor),
			.ino = e->inode,
		};

		fd = proc__open_target(proc_root, tgid, e->path, &same);
	}
	return fd;
}

static uint64_t section_size(const GElf_Shdr *shdr)
{
	return shdr->sh_type == SHT_NOBITS ? 0 : shdr->sh_size;
}

/* Whether the symbol table shdr and its strings are small enough to read. */
static bool table_small(Elf *elf, const GElf_Shdr *shdr)
{
	Elf_Scn *strings = elf_getscn(elf, shdr->sh_link);
	GElf_Shdr str_shdr;

	return strings && gelf_getshdr(strings, &str_shdr) && section_size(shdr) <= FIND_MAX_SECTION &&
	       section_size(&str_shdr) <= FIND_MAX_SECTION;
}

/* The wanted symbols of one symbol table, at ELF vaddr + bias, into syms: how many were new. */
static size_t match_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, uint64_t bias,
			    struct hotspot_vm_symbols *syms)
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
		if (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    sym.st_name == 0)
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || strncmp(name, "gHotSpotVM", 10))
			continue;
		for (size_t w = 0; w < NR_WANTED; w++)
			if (!*slot(syms, w) && !strcmp(name, wanted[w].name)) {
				*slot(syms, w) = sym.st_value + bias;
				found++;
			}
	}
	return found;
}

/* The symbols from .dynsym, then from .symtab for any still missing. */
static void read_symbols(Elf *elf, uint64_t bias, struct hotspot_vm_symbols *syms)
{
	static const Elf64_Word kinds[] = { SHT_DYNSYM, SHT_SYMTAB };
	size_t found = 0;

	for (size_t k = 0; k < 2 && found < NR_WANTED; k++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;

			if (gelf_getshdr(scn, &shdr) && shdr.sh_type == kinds[k] && table_small(elf, &shdr))
				found += match_symbols(elf, scn, &shdr, bias, syms);
		}
	}
}

/* The load bias of mapping e of the file open at fd: 0, or -1 when no segment holds it. */
static int load_bias(int fd, const struct procmaps_entry *e, uint64_t *bias)
{
	struct elf_image img;
	uint64_t vaddr;

	if (elf__read_fd(fd, &img, NULL) || elf__vaddr(&img, e->start, e->pgoff, e->start, &vaddr))
		return -1;
	*bias = e->start - vaddr;
	return 0;
}

/* The symbols of the libjvm.so mapped as e: 0, or -1 with why. */
static int read_libjvm(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e,
		       struct hotspot_vm_symbols *syms, uint64_t *base, char *why, size_t why_size)
{
	int fd = open_libjvm(proc_root, tgid, e), err = -1;
	Elf *elf = NULL;

	if (fd < 0) {
		snprintf(why, why_size, "cannot open %s of process %u: %s", e->path, tgid, strerror(-fd));
		return -1;
	}
	if (load_bias(fd, e, base)) {
		snprintf(why, why_size, "%s is not an ELF file that holds its mapping", e->path);
		goto out;
	}
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		snprintf(why, why_size, "%s: %s", e->path, elf_errmsg(-1));
		goto out;
	}
	read_symbols(elf, *base, syms);
	err = 0;
	for (size_t w = 0; w < NR_WANTED && !err; w++)
		if (!wanted[w].optional && !*slot(syms, w)) {
			snprintf(why, why_size, "%s exports no %s (not a HotSpot JVM?)", e->path, wanted[w].name);
			err = -1;
		}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int hotspot_find(const char *proc_root, uint32_t tgid, struct hotspot_vm_symbols *syms, uint64_t *libjvm_base,
		 char *why, size_t why_size)
{
	struct procmaps_entry *entries;
	char path[PATH_MAX];
	size_t nr, i;
	int n, err;

	memset(syms, 0, sizeof(*syms));
	*libjvm_base = 0;
	n = snprintf(path, sizeof(path), "%s/%u/maps", proc_root, tgid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, why_size, "%s: path too long", proc_root);
		return -1;
	}
	err = procmaps__read(path, 0, &entries, &nr);
	/*
	 * Unreadable (a process gone, or one the kernel hides even from
	 * root): nothing says it is a JVM, and the agent's way says why not.
	 */
	if (err) {
		snprintf(why, why_size, "cannot read %s: %s", path, strerror(-err));
		return 0;
	}
	for (i = 0; i < nr && !is_libjvm(&entries[i]); i++)
		;
	err = i == nr ? 0 : read_libjvm(proc_root, tgid, &entries[i], syms, libjvm_base, why, why_size) ? -1 : 1;
	procmaps__free(entries, nr);
	if (err < 0)
		memset(syms, 0, sizeof(*syms));
	return err;
}
