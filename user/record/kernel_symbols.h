/*
 * kernel_symbols: kernel functions named by the kernel itself, one address
 * at a time, through two BPF syscall programs (bpf/kernel_symbols.bpf.c)
 * run with BPF_PROG_RUN, instead of reading all of /proc/kallsyms.
 *
 * A recording names a few hundred kernel functions; /proc/kallsyms makes
 * the kernel format every one of its symbols for each reader, tens of
 * milliseconds of CPU. Each question here costs a system call, and the
 * symbolizer keeps the answers (symbolizer__set_kernel_lookup).
 *
 * Kernels without syscall programs, bpf_snprintf's "%pS" or
 * bpf_kallsyms_lookup_name (before Linux 5.16) fail kernel_symbols__open;
 * the symbolizer then reads /proc/kallsyms as before.
 */
#ifndef JBPF_KERNEL_SYMBOLS_H
#define JBPF_KERNEL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct kernel_symbols;

/* Loads the programs. 0, or a negative errno (the kernel cannot answer). */
int kernel_symbols__open(struct kernel_symbols **out);
void kernel_symbols__close(struct kernel_symbols *ks);

/*
 * The function that contains addr: its name (without a module suffix,
 * truncated to size) and its range [start, end). -ENOENT when no symbol
 * covers addr, another negative errno when the kernel could not be asked.
 */
int kernel_symbols__name(struct kernel_symbols *ks, uint64_t addr, char *name, size_t size, uint64_t *start,
			 uint64_t *end);

/* The range [start, end) of the kernel symbol called name. -ENOENT when there is none. */
int kernel_symbols__address(struct kernel_symbols *ks, const char *name, uint64_t *start, uint64_t *end);

/*
 * Parses the kernel's "%pS" of addr: "name+0xOFF/0xSIZE", optionally
 * followed by " [module]"; the bare address when no symbol covers it
 * (-ENOENT). Fills name (truncated to size) and [start, end). -EINVAL for
 * anything else, or when OFF is not within SIZE or does not fit addr.
 */
int kernel_symbols__parse(const char *text, uint64_t addr, char *name, size_t size, uint64_t *start,
			  uint64_t *end);

#endif /* JBPF_KERNEL_SYMBOLS_H */
