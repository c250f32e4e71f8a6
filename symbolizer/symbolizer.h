/*
 * symbolizer: code addresses to function names, for the kernel and for any
 * process on the host.
 *
 *   kernel     /proc/kallsyms
 *   native     ELF .symtab/.dynsym (libelf) of the file behind the mapping,
 *              or its separate debug file (build-id, then .gnu_debuglink);
 *              load bias from /proc/PID/maps; files opened through
 *              /proc/PID/root so other mount namespaces resolve; C++ names
 *              demangled; the vDSO from the kernel's own image
 *   JIT        /tmp/perf-<nspid>.map inside the process's root, for
 *              anonymous executable memory
 *
 * A process's mappings are read the first time one of its addresses is asked
 * for (or when symbolizer__add_process is called) and the files they map are
 * held open, so a process that has exited since is still resolved. An
 * address outside every known mapping makes the maps be read again, at most
 * once a second per process.
 *
 * Every cache is bounded (counts in struct symbolizer_config) and keyed by
 * file identity, (device, inode), or for processes by (tgid, start time) so a
 * reused pid is not confused with its predecessor. Data read from the target
 * (maps, ELF files, perf maps) is treated as hostile: every length and offset
 * is checked, and a malformed file resolves nothing rather than crashing.
 *
 * Not thread-safe: one symbolizer belongs to one thread.
 */
#ifndef JBPF_SYMBOLIZER_H
#define JBPF_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;

struct symbolizer_config {
	const char *proc_root;     /* NULL: "/proc"; tests point it at a fixture tree */
	const char *kallsyms_path; /* NULL: "/proc/kallsyms" */
	const char *debug_root;    /* NULL: "/usr/lib/debug" */
	size_t max_processes;      /* 0: default; processes whose maps are kept */
	size_t max_files;          /* 0: default; ELF files kept open and parsed */
};

/* What a resolved address turned out to be. */
enum sym_status {
	SYM_FOUND,      /* buf holds a function name */
	SYM_JIT,        /* buf holds a name from a perf map (JIT code) */
	SYM_OFFSET,     /* no symbol covers it: buf holds "file+0xOFFSET" (file offset) */
	SYM_UNKNOWN,    /* not even the mapping is known: buf holds "[unknown]" */
};

/* NULL on out of memory. config may be NULL for every default. */
struct symbolizer *symbolizer__new(const struct symbolizer_config *config);
void symbolizer__free(struct symbolizer *sym);

/*
 * The kernel function containing addr, written into buf (always
 * NUL-terminated, truncated to size). Returns SYM_FOUND or SYM_UNKNOWN.
 * kallsyms is read on first use.
 */
enum sym_status symbolizer__kernel(struct symbolizer *sym, uint64_t addr, char *buf, size_t size);

/*
 * Reads tgid's mappings now and holds its files open. Call it as early as
 * possible for processes that may exit. Returns 0, or -ESRCH if the process
 * is gone, or another negative errno.
 */
int symbolizer__add_process(struct symbolizer *sym, uint32_t tgid);

/*
 * The function of process tgid containing the user address addr, written
 * into buf (always NUL-terminated, truncated to size). Reads the process's
 * maps first if it is not known yet.
 */
enum sym_status symbolizer__user(struct symbolizer *sym, uint32_t tgid, uint64_t addr, char *buf,
				 size_t size);

/* The process's name (comm) as first seen, or NULL if unknown. */
const char *symbolizer__process_name(struct symbolizer *sym, uint32_t tgid);

struct symbolizer_stats {
	uint64_t processes_loaded;   /* maps reads, including re-reads */
	uint64_t processes_evicted;
	uint64_t files_loaded;       /* ELF symbol tables parsed */
	uint64_t files_evicted;
	uint64_t files_failed;       /* files that could not be opened or parsed */
	uint64_t lookups;
	uint64_t unknown;            /* lookups that ended in SYM_OFFSET or SYM_UNKNOWN */
};

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats);

#endif /* JBPF_SYMBOLIZER_H */
