// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel symbols asked of the kernel itself, one at a time, instead of
 * reading /proc/kallsyms: the kernel formats its 100,000-odd lines for
 * every reader (80 ms of CPU on the test machine, most of a short
 * recording's start-up), where a recording names a few hundred functions.
 *
 * Two syscall programs, run by userspace with BPF_PROG_RUN
 * (user/record/kernel_symbols.c), talk through `query` in .bss, which
 * userspace maps:
 *
 *   name_address  addr in, text out: the kernel's "%pS" of addr,
 *                 "function+0xOFFSET/0xSIZE" with " [module]" for a
 *                 module's, or the bare address when no symbol covers it;
 *   find_name     text in (a NUL-terminated name), addr out: the
 *                 symbol's address (bpf_kallsyms_lookup_name).
 *
 * err is the helper's result (bytes written, or a negative errno).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "jbpfprof.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct jbpf_kernel_query query = {};

SEC("syscall")
int name_address(void *ctx)
{
	__u64 args[1] = { query.addr };

	query.err = bpf_snprintf(query.text, sizeof(query.text), "%pS", args, sizeof(args));
	return 0;
}

SEC("syscall")
int find_name(void *ctx)
{
	__u64 addr = 0;

	/* The helper takes the buffer's size and reads up to its NUL, which must end it. */
	query.text[sizeof(query.text) - 1] = '\0';
	query.err = bpf_kallsyms_lookup_name(query.text, sizeof(query.text), 0, &addr);
	query.addr = addr;
	return 0;
}
