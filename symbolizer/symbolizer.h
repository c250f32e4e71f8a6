/*
 * symbolizer: code addresses to function names, for the kernel and for any
 * process on the host.
 *
 *   kernel     the caller's kernel lookup (symbolizer__set_kernel_lookup),
 *              else /proc/kallsyms
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

struct symbolizer_config {
	const char *proc_root;     /* NULL: "/proc"; tests point it at a fixture tree */
	const char *kallsyms_path; /* NULL: "/proc/kallsyms" */
	const char *debug_root;    /* NULL: "/usr/lib/debug" */
	size_t max_processes;      /* 0: 1024; processes whose maps are kept */
	size_t max_files;          /* 0: 512; ELF files kept open (one fd each until
				      parsed, on first lookup) or parsed */
	size_t max_bytes;          /* 0: MEMBUDGET_DEFAULT (1 GiB); memory for the symbol
				      tables of every file and perf map together */
};

/*
 * What a resolved address turned out to be, and what buf holds:
 *
 *   SYM_FOUND    the function's name, C++ demangled, without an offset.
 *                Among aliases of one address: global before weak before
 *                local, then fewer leading underscores (as perf picks:
 *                glibc's getpid resolves to "__getpid").
 *   SYM_JIT      the name a perf map gives, as written there
 *   SYM_OFFSET   no symbol covers it, but its mapping is known:
 *                  "<file basename>+0x<file offset>"  in a file mapping
 *                  "[vdso]+0x<offset>"                 in the vDSO
 *                  "[anon]"                            anonymous executable
 *                        memory with no perf-map entry; no offset, since
 *                        JIT code moves and offsets would only split one
 *                        unknown frame into many
 *                  "<[name]>+0x<offset in mapping>"   [vsyscall] and other
 *                        pseudo-mappings
 *   SYM_UNKNOWN  "[unknown]": no mapping holds it, or the process was
 *                never readable; for the kernel, no symbol (or kallsyms
 *                addresses hidden by kptr_restrict)
 */
enum sym_status {
	SYM_FOUND,
	SYM_JIT,
	SYM_OFFSET,
	SYM_UNKNOWN,
};

/* NULL on out of memory. config may be NULL for every default. */
struct symbolizer *symbolizer__new(const struct symbolizer_config *config);
void symbolizer__free(struct symbolizer *sym);

/*
 * Where kernel names come from instead of kallsyms, when the caller has a
 * way to ask the kernel one address at a time (the profiler's:
 * user/record/kernel_symbols.c). name: the function containing addr, its
 * name (truncated to size) and [start, end); address: the extent of the
 * symbol called name. Each returns 0, -ENOENT (no such symbol), or another
 * negative errno: the lookup is broken, and kallsyms is read from then on.
 * The answers are kept (up to SYMBOLIZER_KERNEL_RANGES functions).
 */
struct symbolizer_kernel_lookup {
	int (*name)(void *ctx, uint64_t addr, char *name, size_t size, uint64_t *start, uint64_t *end);
	int (*address)(void *ctx, const char *name, uint64_t *start, uint64_t *end);
	void *ctx;
};
#define SYMBOLIZER_KERNEL_RANGES 16384

/* Uses lookup (copied; its ctx must outlive sym) for kernel symbols. 0 or -ENOMEM. */
int symbolizer__set_kernel_lookup(struct symbolizer *sym, const struct symbolizer_kernel_lookup *lookup);

/*
 * The kernel function containing addr, written into buf (always
 * NUL-terminated, truncated to size). Returns SYM_FOUND or SYM_UNKNOWN.
 * Asked of the kernel lookup if set, else kallsyms is read on first use.
 */
enum sym_status symbolizer__kernel(struct symbolizer *sym, uint64_t addr, char *buf, size_t size);

/*
 * The address range [start, end) of the kernel text symbol called name
 * (the first one, if several share it), loading kallsyms if not yet done.
 * Returns 0, or -ENOENT when there is no such symbol or kallsyms cannot be
 * read.
 */
int symbolizer__kernel_symbol(struct symbolizer *sym, const char *name, uint64_t *start, uint64_t *end);

/*
 * Reads tgid's mappings now and holds its files open. Call it as early as
 * possible for processes that may exit. A process already known has its
 * maps read again unless that happened within the last second. Returns 0,
 * or -ESRCH if the process is gone, or another negative errno.
 */
int symbolizer__add_process(struct symbolizer *sym, uint32_t tgid);

/*
 * Forgets tgid's maps and name: call it when the process replaced its
 * program (execve), whose start time, and so the cache key, is unchanged.
 * The next lookup reads the process again.
 */
void symbolizer__forget_process(struct symbolizer *sym, uint32_t tgid);
/*
 * Forgets every process that has exited (or whose pid was reused), as
 * proccache__forget_gone: for a recording that runs for days, once what
 * they left in the ring buffer is resolved. Their files stay in the
 * bounded file cache until evicted or forgotten as unused. Returns how
 * many were forgotten.
 */
size_t symbolizer__forget_gone(struct symbolizer *sym);
/*
 * Drops the files (and their symbols) no lookup used since the previous
 * call, as filecache__forget_unused: once per interval of a recording of
 * days, so that it holds what the host runs now. Returns how many.
 */
size_t symbolizer__forget_unused_files(struct symbolizer *sym);

/*
 * The function of process tgid containing the user address addr, written
 * into buf (always NUL-terminated, truncated to size). Reads the process's
 * maps first if it is not known yet.
 */
enum sym_status symbolizer__user(struct symbolizer *sym, uint32_t tgid, uint64_t addr, char *buf,
				 size_t size);
/*
 * symbolizer__user, saying whether its answer lasts: *lasting is true when
 * the same address of the same process gets the same answer for as long as
 * symbolizer__generation stays the same (a symbol of, or an offset into, an
 * ELF file; the vDSO; a pseudo-mapping), false when it may change sooner
 * (a perf map's name, anonymous memory, a file not read, an unknown
 * address). For a caller that keeps answers by address.
 */
enum sym_status symbolizer__user_lasting(struct symbolizer *sym, uint32_t tgid, uint64_t addr, char *buf,
					 size_t size, bool *lasting);
/*
 * Changes whenever an answer said to last may have changed: some process's
 * maps read again, or a process forgotten or evicted.
 */
uint64_t symbolizer__generation(const struct symbolizer *sym);

/* The file a user address lies in, for formats that name it (pprof mappings). */
struct sym_module {
	char path[512];           /* as /proc/PID/maps says */
	uint8_t build_id[64];
	size_t build_id_len;      /* 0: the file has no build-id note, or is not ELF */
};

/*
 * The file mapping of process tgid that holds addr. Returns 0, or -ENOENT
 * when addr is in no file mapping (anonymous or unknown memory). Uses only
 * what symbolizer__user has already loaded for that address.
 */
int symbolizer__user_module(struct symbolizer *sym, uint32_t tgid, uint64_t addr, struct sym_module *out);

/*
 * The process's name (comm) as read when the process was first loaded
 * (loading it now if it is not known), or NULL if unknown. Valid until the
 * next call into the symbolizer.
 */
const char *symbolizer__process_name(struct symbolizer *sym, uint32_t tgid);

/*
 * The process's start time (clock ticks since boot, /proc/PID/stat), which
 * with its tgid names one process: a tgid reused by a later process, once
 * the symbolizer has seen that, gives another. 0 when unknown.
 */
uint64_t symbolizer__process_start(struct symbolizer *sym, uint32_t tgid);

/* The /proc the symbolizer reads (symbolizer_config.proc_root). */
const char *symbolizer__proc_root(const struct symbolizer *sym);

struct symbolizer_stats {
	uint64_t processes_loaded;   /* maps reads, including re-reads */
	uint64_t processes_evicted;
	uint64_t processes_held;     /* processes known now */
	uint64_t files_loaded;       /* ELF symbol tables parsed */
	uint64_t files_evicted;
	uint64_t files_forgotten;  /* unused for an interval (symbolizer__forget_unused_files) */
	uint64_t files_failed;       /* files that could not be opened or parsed */
	uint64_t tables_refused;     /* symbol tables or perf maps not kept: over max_bytes, or
					one section over ELF_MAX_SECTION_BYTES; a loss of names */
	uint64_t bytes_held;         /* memory the kept tables take now */
	uint64_t lookups;
	uint64_t unknown;            /* lookups that ended in SYM_OFFSET or SYM_UNKNOWN */
	uint64_t kernel_asked;       /* questions to the kernel lookup */
	int kernel_source;           /* SYMBOLIZER_KERNEL_*: where kernel names came from */
};
#define SYMBOLIZER_KERNEL_NONE 0     /* no kernel frame named yet */
#define SYMBOLIZER_KERNEL_LOOKUP 1   /* the kernel lookup only */
#define SYMBOLIZER_KERNEL_KALLSYMS 2 /* kallsyms was read */

void symbolizer__stats(const struct symbolizer *sym, struct symbolizer_stats *stats);

#endif /* JBPF_SYMBOLIZER_H */
