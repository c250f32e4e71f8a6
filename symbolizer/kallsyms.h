/*
 * kallsyms: the kernel's text symbols from /proc/kallsyms.
 *
 * Keeps t/T/w/W symbols, module ones included (the "[module]" suffix is
 * dropped). Addresses are kernel virtual addresses, used as they are.
 * Symbols have no size in kallsyms: each covers up to the next one.
 */
#ifndef JBPF_KALLSYMS_H
#define JBPF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct symtab;

/* Kernel symbol names are at most KSYM_NAME_LEN (512) bytes. */
#define KALLSYMS_MAX_NAME 512

/*
 * Parses one kallsyms line ("ADDR TYPE NAME[\t[MODULE]]", trailing newline
 * allowed). Returns 1 and fills the out-params (name points into line, not
 * NUL-terminated at name_len) for a valid line, 0 for a malformed one.
 */
int kallsyms__parse_line(const char *line, uint64_t *addr, char *type, const char **name,
			 size_t *name_len);

/*
 * Reads path into a new sealed table in *out. Returns 0; -EPERM when every
 * address reads as zero (kernel.kptr_restrict hides them; no table is
 * made); -ENODATA when no text symbol was found; another negative errno
 * when the file cannot be read.
 */
int kallsyms__load(const char *path, struct symtab **out);

#endif /* JBPF_KALLSYMS_H */
