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
 *      (JNIEXPORT), else its .symtab, gives their ELF vaddrs
 *      (elf__find_symbols, its tables bounded as the symbolizer's are).
 *
 * Nothing of the process's memory is read here.
 */
#include "hotspot/find.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/elf.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"


/* Each symbol find looks for, and where its address goes. */
struct wanted {
	const char *name;
	size_t offset; /* in struct hotspot_vm_symbols */
	bool optional; /* not read by hotspot_vm__read */
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

/* The symbols of the libjvm.so mapped as e: 0, or -1 with err. */
static int read_libjvm(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e,
		       struct hotspot_vm_symbols *syms, uint64_t *base, char *err, size_t err_size)
{
	int fd = proc__open_maps_entry(proc_root, tgid, e), rc = -1;
	const char *names[NR_WANTED];
	uint64_t vaddrs[NR_WANTED], vaddr;
	struct elf_image img;

	if (fd < 0) {
		snprintf(err, err_size, "cannot open %s of process %u: %s", e->path, tgid, strerror(-fd));
		return -1;
	}
	for (size_t w = 0; w < NR_WANTED; w++)
		names[w] = wanted[w].name;
	/* HotSpot exports them (JNIEXPORT); a build that does not still names them in .symtab. */
	if (elf__find_symbols(fd, ELF_SYMBOL_OBJECT, 1, names, NR_WANTED, vaddrs, &img) < 0 ||
	    elf__vaddr(&img, e->start, e->pgoff, e->start, &vaddr)) {
		snprintf(err, err_size, "%s is not an ELF file that holds its mapping", e->path);
		goto out;
	}
	*base = e->start - vaddr;
	rc = 0;
	for (size_t w = 0; w < NR_WANTED && !rc; w++) {
		*slot(syms, w) = vaddrs[w] ? vaddrs[w] + *base : 0;
		if (!wanted[w].optional && !vaddrs[w]) {
			snprintf(err, err_size, "%s exports no %s (not a HotSpot JVM?)", e->path, wanted[w].name);
			rc = -1;
		}
	}
out:
	close(fd);
	return rc;
}

int hotspot_find__jvm(const char *proc_root, uint32_t tgid, struct hotspot_vm_symbols *syms, uint64_t *libjvm_base,
		 char *err, size_t err_size)
{
	struct procmaps_entry *entries;
	char path[PATH_MAX];
	size_t nr, i;
	int n, rc;

	memset(syms, 0, sizeof(*syms));
	*libjvm_base = 0;
	n = snprintf(path, sizeof(path), "%s/%u/maps", proc_root, tgid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, err_size, "%s: path too long", proc_root);
		return -1;
	}
	rc = procmaps__read(path, 0, &entries, &nr);
	/*
	 * Unreadable (a process gone, or one the kernel hides even from
	 * root): nothing says it is a JVM, and the agent's way says why not.
	 */
	if (rc) {
		snprintf(err, err_size, "cannot read %s: %s", path, strerror(-rc));
		return 0;
	}
	for (i = 0; i < nr && !is_libjvm(&entries[i]); i++)
		;
	rc = i == nr ? 0 : read_libjvm(proc_root, tgid, &entries[i], syms, libjvm_base, err, err_size) ? -1 : 1;
	procmaps__free(entries, nr);
	if (rc < 0)
		memset(syms, 0, sizeof(*syms));
	return rc;
}
