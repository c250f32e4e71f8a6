/*
 * symbolizer: the public API (contract in symbolizer.h), gluing the
 * caches to the parsers.
 *
 * Resolving a user address of process tgid:
 *   1. the process (proccache), read on first use
 *   2. the executable mapping holding addr; if none, maps are read again
 *      (at most once a second) and, still none, the perf map is tried
 *   3. by mapping kind:
 *        file     ELF vaddr = addr - start + pgoff - p_offset + p_vaddr,
 *                 looked up in the file's symbols (filecache, parsed on
 *                 first use); a file that is not ELF (a memfd holding JIT
 *                 code) goes to the perf map
 *        [vdso]   the same, in our own vDSO image: the kernel maps one
 *                 image into every process
 *        anon     the perf map
 *   4. no symbol: "<file>+0x<file offset>", "[anon]" or "[unknown]"
 *
 * C++ names are demangled on first lookup and the result stored back in
 * the symbol table, so each name is demangled once.
 */
#include "symbolizer/symbolizer.h"
#include "symbolizer/budget.h"
#include "symbolizer/demangle.h"
#include "symbolizer/elf.h"
#include "symbolizer/filecache.h"
#include "symbolizer/kallsyms.h"
#include "symbolizer/proccache.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/ranges.h"
#include "symbolizer/symtab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/*
 * Defaults sized for a host-wide profile: a JVM maps ~100 files, a busy
 * host runs a few hundred processes. Each cached file may hold an fd until
 * parsed: keep max_files well under RLIMIT_NOFILE.
 */
#define DEFAULT_MAX_PROCESSES 1024
#define DEFAULT_MAX_FILES 512

enum load_state { NOT_TRIED, LOADED, UNAVAILABLE };

struct symbolizer {
	char *proc_root;
	char *kallsyms_path;
	char *debug_root;
	struct membudget budget;
	struct filecache *files;
	struct proccache *processes;
	struct symtab *kernel;
	enum load_state kernel_state;
	struct symbolizer_kernel_lookup kernel_lookup; /* .name NULL: none, or broken */
	struct ranges *kernel_ranges;
	uint64_t kernel_asked;
	struct symtab *vdso;
	struct elf_image vdso_img;
	enum load_state vdso_state;
	uint64_t lookups, unknown;
};

struct symbolizer *symbolizer__new(const struct symbolizer_config *config)
{
	struct symbolizer_config defaults = { 0 };
	struct symbolizer *sym = calloc(1, sizeof(*sym));

	if (!sym)
		return NULL;
	if (!config)
		config = &defaults;
	sym->proc_root = strdup(config->proc_root ? config->proc_root : "/proc");
	sym->kallsyms_path = strdup(config->kallsyms_path ? config->kallsyms_path : "/proc/kallsyms");
	sym->debug_root = strdup(config->debug_root ? config->debug_root : "/usr/lib/debug");
	if (!sym->proc_root || !sym->kallsyms_path || !sym->debug_root)
		goto err_free;
	membudget__init(&sym->budget, config->max_bytes ? config->max_bytes : MEMBUDGET_DEFAULT);
	sym->files = filecache__new(config->max_files ? config->max_files : DEFAULT_MAX_FILES,
				    sym->proc_root, sym->debug_root, &sym->budget);
	if (!sym->files)
		goto err_free;
	sym->processes = proccache__new(config->max_processes ? config->max_processes :
								DEFAULT_MAX_PROCESSES,
					sym->proc_root, sym->files, &sym->budget);
	if (!sym->processes)
		goto err_free;
	return sym;
err_free:
	symbolizer__free(sym);
	return NULL;
}

void symbolizer__free(struct symbolizer *sym)
{
	if (!sym)
		return;
	/* Processes only name files by key; the order does not matter. */
	proccache__free(sym->processes);
	filecache__free(sym->files);
	symtab__free(sym->kernel);
	ranges__free(sym->kernel_ranges);
	symtab__free(sym->vdso);
	free(sym->proc_root);
	free(sym->kallsyms_path);
	free(sym->debug_root);
	free(sym);
}

__attribute__((format(printf, 4, 5)))
static enum sym_status put(char *buf, size_t size, enum sym_status status, const char *fmt, ...)
{
	va_list ap;

	if (size) {
		va_start(ap, fmt);
		vsnprintf(buf, size, fmt, ap);
		va_end(ap);
	}
	return status;
}

static enum sym_status count(struct symbolizer *sym, enum sym_status status)
{
	if (status == SYM_OFFSET || status == SYM_UNKNOWN)
		sym->unknown++;
	return status;
}

/* The (demangled) name of the symbol holding addr in table, or NULL. */
static const char *symbol_at(struct symtab *table, uint64_t addr)
{
	char demangled[SYMTAB_MAX_NAME + 1];
	long idx;

	if (!table)
		return NULL;
	idx = symtab__lookup(table, addr);
	if (idx < 0)
		return NULL;
	if (!symtab__renamed(table, idx) &&
	    demangle__cxx(symtab__name(table, idx), demangled, sizeof(demangled)) == 1)
		symtab__rename(table, idx, demangled);
	return symtab__name(table, idx);
}

static void load_kernel(struct symbolizer *sym)
{
	if (sym->kernel_state == NOT_TRIED)
		sym->kernel_state = kallsyms__load(sym->kallsyms_path, &sym->kernel) ? UNAVAILABLE : LOADED;
}

int symbolizer__set_kernel_lookup(struct symbolizer *sym, const struct symbolizer_kernel_lookup *lookup)
{
	if (!sym->kernel_ranges && !(sym->kernel_ranges = ranges__new(SYMBOLIZER_KERNEL_RANGES)))
		return -ENOMEM;
	sym->kernel_lookup = *lookup;
	return 0;
}

/* A kernel lookup that fails other than by "no such symbol" is not asked again. */
static int lookup_failed(struct symbolizer *sym, int error)
{
	if (error != -ENOENT)
		sym->kernel_lookup.name = NULL;
	return error;
}

int symbolizer__kernel_symbol(struct symbolizer *sym, const char *name, uint64_t *start, uint64_t *end)
{
	size_t n;

	if (sym->kernel_lookup.name) {
		int error;

		sym->kernel_asked++;
		error = sym->kernel_lookup.address(sym->kernel_lookup.ctx, name, start, end);
		if (!error || lookup_failed(sym, error) == -ENOENT)
			return error;
	}
	load_kernel(sym);
	if (sym->kernel_state != LOADED)
		return -ENOENT;
	n = symtab__count(sym->kernel);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(symtab__name(sym->kernel, (long)i), name))
			continue;
		*start = symtab__start(sym->kernel, (long)i);
		*end = symtab__end(sym->kernel, (long)i);
		return 0;
	}
	return -ENOENT;
}

/*
 * addr's function by the kernel lookup, remembered with its extent; a
 * place without a symbol is remembered too. False when the lookup is
 * broken.
 */
static bool ask_kernel(struct symbolizer *sym, uint64_t addr, char *buf, size_t size, enum sym_status *status)
{
	char name[KALLSYMS_MAX_NAME + 1];
	const char *known;
	uint64_t start, end;
	int error;

	if (ranges__find(sym->kernel_ranges, addr, &known)) {
		*status = known ? put(buf, size, SYM_FOUND, "%s", known) : put(buf, size, SYM_UNKNOWN, "[unknown]");
		return true;
	}
	sym->kernel_asked++;
	error = sym->kernel_lookup.name(sym->kernel_lookup.ctx, addr, name, sizeof(name), &start, &end);
	if (error && lookup_failed(sym, error) != -ENOENT)
		return false;
	if (error) {
		ranges__add(sym->kernel_ranges, addr, addr + 1, NULL);
		*status = put(buf, size, SYM_UNKNOWN, "[unknown]");
	} else {
		ranges__add(sym->kernel_ranges, start, end, name);
		*status = put(buf, size, SYM_FOUND, "%s", name);
	}
	return true;
}

enum sym_status symbolizer__kernel(struct symbolizer *sym, uint64_t addr, char *buf, size_t size)
{
	enum sym_status status;
	const char *name;

	sym->lookups++;
	if (sym->kernel_lookup.name && ask_kernel(sym, addr, buf, size, &status))
		return count(sym, status);
	load_kernel(sym);
	name = symbol_at(sym->kernel, addr);
	if (name)
		return put(buf, size, SYM_FOUND, "%s", name);
	return count(sym, put(buf, size, SYM_UNKNOWN, "[unknown]"));
}

/*
 * Our own vDSO, bounded by our own [vdso] mapping: AT_SYSINFO_EHDR gives
 * only its start.
 */
static void load_vdso(struct symbolizer *sym)
{
	struct procmaps_entry *entries;
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	size_t i, nr;

	sym->vdso_state = UNAVAILABLE;
	if (!base || procmaps__read("/proc/self/maps", 0, &entries, &nr))
		return;
	for (i = 0; i < nr; i++) {
		if (entries[i].kind != PROCMAPS_VDSO || entries[i].start != base)
			continue;
		sym->vdso = symtab__new();
		if (sym->vdso && !elf__read_memory((const void *)(uintptr_t)base,
						   entries[i].end - entries[i].start,
						   &sym->vdso_img, sym->vdso)) {
			symtab__finish(sym->vdso, SYMTAB_OVERLAP_NEST);
			sym->vdso_state = LOADED;
		} else {
			symtab__free(sym->vdso);
			sym->vdso = NULL;
		}
		break;
	}
	procmaps__free(entries, nr);
}

static enum sym_status resolve_vdso(struct symbolizer *sym, const struct mapping *m, uint64_t addr,
				    char *buf, size_t size, bool *lasting)
{
	const char *name = NULL;
	uint64_t vaddr;

	if (sym->vdso_state == NOT_TRIED)
		load_vdso(sym);
	if (sym->vdso_state == LOADED && !elf__vaddr(&sym->vdso_img, m->start, m->pgoff, addr, &vaddr))
		name = symbol_at(sym->vdso, vaddr);
	/* The vDSO is the kernel's, the same image for the whole run. */
	*lasting = true;
	if (name)
		return put(buf, size, SYM_FOUND, "%s", name);
	return put(buf, size, SYM_OFFSET, "[vdso]+0x%llx",
		   (unsigned long long)(addr - m->start + m->pgoff));
}

static enum sym_status resolve_file(struct symbolizer *sym, struct process *p, struct mapping *m,
				    uint64_t addr, char *buf, size_t size, bool *lasting)
{
	struct file_symbols fs = { 0 };
	const char *name = NULL;
	uint64_t vaddr;
	int err = -ENOENT;

	if (m->has_file) {
		err = filecache__get(sym->files, &m->key, &fs);
		/* Evicted since the maps were read: open it again while the process lives. */
		if (err == -ENOENT && !proccache__reopen(sym->processes, p, m))
			err = filecache__get(sym->files, &m->key, &fs);
	}
	if (!err && fs.img && !elf__vaddr(fs.img, m->start, m->pgoff, addr, &vaddr))
		name = symbol_at(fs.symbols, vaddr);
	/* An ELF file mapped here answers the same until the maps change; a perf map or a file not opened may not. */
	*lasting = !err && fs.img;
	if (name)
		return put(buf, size, SYM_FOUND, "%s", name);
	/* Executable file memory that is not ELF: JIT code in a memfd or a shared file. */
	if (!err && !fs.img) {
		name = proccache__perfmap_lookup(sym->processes, p, addr);
		if (name)
			return put(buf, size, SYM_JIT, "%s", name);
	}
	return put(buf, size, SYM_OFFSET, "%s+0x%llx", m->name,
		   (unsigned long long)(addr - m->start + m->pgoff));
}

static enum sym_status resolve_user(struct symbolizer *sym, uint32_t tgid, uint64_t addr,
				    char *buf, size_t size, bool *lasting)
{
	struct process *p;
	struct mapping *m;
	const char *name;
	int err;

	*lasting = false;
	p = proccache__get(sym->processes, tgid, &err);
	if (!p)
		return put(buf, size, SYM_UNKNOWN, "[unknown]");
	m = process__find_mapping(p, addr);
	if (!m && proccache__refresh(sym->processes, p))
		m = process__find_mapping(p, addr);
	if (!m) {
		name = proccache__perfmap_lookup(sym->processes, p, addr);
		if (name)
			return put(buf, size, SYM_JIT, "%s", name);
		return put(buf, size, SYM_UNKNOWN, "[unknown]");
	}
	switch (m->kind) {
	case PROCMAPS_FILE:
		return resolve_file(sym, p, m, addr, buf, size, lasting);
	case PROCMAPS_VDSO:
		return resolve_vdso(sym, m, addr, buf, size, lasting);
	case PROCMAPS_ANON:
		name = proccache__perfmap_lookup(sym->processes, p, addr);
		if (name)
			return put(buf, size, SYM_JIT, "%s", name);
		return put(buf, size, SYM_OFFSET, "[anon]");
	case PROCMAPS_SPECIAL:
	default:
		*lasting = true;
		return put(buf, size, SYM_OFFSET, "%s+0x%llx", m->name,
			   (unsigned long long)(addr - m->start));
	}
}

int symbolizer__user_module(struct symbolizer *sym, uint32_t tgid, uint64_t addr, struct sym_module *out)
{
	struct file_symbols fs = { 0 };
	struct process *p;
	struct mapping *m;
	int err;

	memset(out, 0, sizeof(*out));
	p = proccache__get(sym->processes, tgid, &err);
	m = p ? process__find_mapping(p, addr) : NULL;
	if (!m || m->kind != PROCMAPS_FILE || !m->path)
		return -ENOENT;
	snprintf(out->path, sizeof(out->path), "%s", m->path);
	if (m->has_file && !filecache__get(sym->files, &m->key, &fs) && fs.img &&
	    fs.img->build_id_len <= sizeof(out->build_id)) {
		memcpy(out->build_id, fs.img->build_id, fs.img->build_id_len);
		out->build_id_len = fs.img->build_id_len;
	}
	return 0;
}

enum sym_status symbolizer__user_lasting(struct symbolizer *sym, uint32_t tgid, uint64_t addr, char *buf,
					 size_t size, bool *lasting)
{
	sym->lookups++;
	return count(sym, resolve_user(sym, tgid, addr, buf, size, lasting));
}

enum sym_status symbolizer__user(struct symbolizer *sym, uint32_t tgid, uint64_t addr, char *buf,
				 size_t size)
{
	bool lasting;

	return symbolizer__user_lasting(sym, tgid, addr, buf, size, &lasting);
}

uint64_t symbolizer__generation(const struct symbolizer *sym)
{
	return proccache__generation(sym->processes);
}

int symbolizer__add_process(struct symbolizer *sym, uint32_t tgid)
{
	int err;
	struct process *p = proccache__get(sym->processes, tgid, &err);

	if (!p)
		return err;
	proccache__refresh(sym->processes, p);
	return 0;
}

const char *symbolizer__process_name(struct symbolizer *sym, uint32_t tgid)
{
	int err;
	struct process *p = proccache__get(sym->processes, tgid, &err);

	return p && p->comm[0] ? p->comm : NULL;
}

uint64_t symbolizer__process_start(struct symbolizer *sym, uint32_t tgid)
{
	int err;
	struct process *p = proccache__get(sym->processes, tgid, &err);

	return p ? p->start_time : 0;
}

const char *symbolizer__proc_root(const struct symbolizer *sym)
{
	return sym->proc_root;
}

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats)
{
	struct filecache_stats fs;
	struct proccache_stats ps;

	filecache__stats(sym->files, &fs);
	proccache__stats(sym->processes, &ps);
	memset(stats, 0, sizeof(*stats));
	stats->kernel_asked = sym->kernel_asked;
	stats->kernel_source = sym->kernel_state != NOT_TRIED ? SYMBOLIZER_KERNEL_KALLSYMS
			       : sym->kernel_asked	       ? SYMBOLIZER_KERNEL_LOOKUP
							       : SYMBOLIZER_KERNEL_NONE;
	stats->processes_loaded = ps.loaded;
	stats->processes_evicted = ps.evicted;
	stats->processes_held = ps.held;
	stats->files_loaded = fs.loaded;
	stats->files_evicted = fs.evicted;
	stats->files_forgotten = fs.forgotten;
	stats->files_failed = fs.failed;
	stats->tables_refused = sym->budget.refused;
	stats->bytes_held = sym->budget.used;
	stats->lookups = sym->lookups;
	stats->unknown = sym->unknown;
}

void symbolizer__forget_process(struct symbolizer *sym, uint32_t tgid)
{
	proccache__forget(sym->processes, tgid);
}

size_t symbolizer__forget_gone(struct symbolizer *sym)
{
	return proccache__forget_gone(sym->processes);
}

size_t symbolizer__forget_unused_files(struct symbolizer *sym)
{
	return filecache__forget_unused(sym->files);
}
