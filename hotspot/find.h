/*
 * find: a process's libjvm.so and the addresses of its VMStructs symbols.
 *
 * The process's maps name the file; it is opened as everything a target
 * controls is (../symbolizer/proc.h: map_files, or openat2 inside the
 * process's root, checked against the mapping's device and inode), its
 * symbol tables read with a bound on their size, and each symbol's
 * address moved by the mapping's load bias.
 */
#ifndef JBPF_HOTSPOT_FIND_H
#define JBPF_HOTSPOT_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "hotspot/vmstructs.h"

/*
 * 1 when process tgid (as proc_root sees it) maps a libjvm.so whose
 * symbols were found into *syms (and *libjvm_base, its load bias),
 * 0 when it maps none or its maps cannot be read, -1 with a one-line
 * reason in err.
 */
int hotspot_find__jvm(const char *proc_root, uint32_t tgid, struct hotspot_vm_symbols *syms, uint64_t *libjvm_base,
		 char *err, size_t err_size);

#endif /* JBPF_HOTSPOT_FIND_H */
