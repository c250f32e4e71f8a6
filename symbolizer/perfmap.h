/*
 * perfmap: /tmp/perf-<pid>.map, the symbol file JIT runtimes write (the
 * JVM through perf-map-agent or -XX:+DumpPerfMapAtExit, V8 --perf-basic-prof,
 * .NET, LuaJIT...). One entry per line:
 *
 *   START SIZE NAME
 *   7f3c1d2e4a80 1c0 Ljava/lang/String;::hashCode
 *
 * START (a runtime VA in the process) and SIZE are hex, with or without
 * "0x"; NAME is the rest of the line and may hold spaces. Code is freed and
 * reused, so a later line wins over an earlier one for the same range.
 *
 * The file is written by the target: reading stops after PERFMAP_MAX_BYTES
 * or PERFMAP_MAX_ENTRIES; lines that do not parse, and entries of zero or
 * absurd size, are skipped.
 */
#ifndef JBPF_PERFMAP_H
#define JBPF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct symtab;

#define PERFMAP_MAX_BYTES (64u << 20)
#define PERFMAP_MAX_ENTRIES (1u << 20)
/* No compiled method or stub is a gigabyte: such a size is garbage. */
#define PERFMAP_MAX_SIZE (1u << 30)

/*
 * Parses one line. Returns 1 with the out-params set (name points into
 * line, name_len excludes the newline), 0 for a malformed line.
 */
int perfmap__parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name,
			size_t *name_len);

/*
 * Reads the perf map open at fd (not closed) into a new sealed table.
 * Returns 0, or a negative errno (-ENOMEM, or a read error).
 */
int perfmap__read_fd(int fd, struct symtab **out);

#endif /* JBPF_PERFMAP_H */
