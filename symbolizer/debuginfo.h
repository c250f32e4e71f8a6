/*
 * debuginfo: finding the separate debug file of a stripped ELF file.
 *
 * Search order, first match wins:
 *   1. <debug_root>/.build-id/<xx>/<rest>.debug, where xx is the first
 *      byte of the build-id in hex and rest the others: inside the process
 *      root, then on the host. Its build-id must equal the file's.
 *   2. The .gnu_debuglink name, next to the file (<dir>/<link>), in
 *      <dir>/.debug/<link>, then <debug_root><dir>/<link>: each inside the
 *      process root, the last also on the host. Its CRC-32 must equal the
 *      one in the debuglink, and its build-id the file's when both have one.
 *
 * A debug file carries the same ELF vaddrs as the file it was split from,
 * so its symbols are used with the original file's PT_LOAD segments.
 *
 * Every candidate is opened by proc__open_target and must belong to the
 * process's user or be root's and readable by everyone. In 2, the
 * directory and the name are the target's to choose: <dir>/<link> and
 * <dir>/.debug/<link> are reached without any symlink, so a link planted
 * there to a root-only file or a device node is never followed. Under a
 * debug root, which root owns, build-id symlinks are followed.
 */
#ifndef JBPF_DEBUGINFO_H
#define JBPF_DEBUGINFO_H

#include <stdint.h>
#include <sys/stat.h>

struct elf_image;

/* Debug files larger than this are not checksummed, and so not used. */
#define DEBUGINFO_MAX_CRC_BYTES (2ull << 30)

struct debuginfo_where {
	const char *proc_root;  /* "/proc" or a fixture tree */
	uint32_t tgid;          /* whose root to search; 0: the host only */
	const char *debug_root; /* "/usr/lib/debug" */
	const char *path;       /* the file as the process sees it; NULL if unknown */
	const struct stat *self; /* the file itself, never taken as its own debug file */
	uint32_t uid;           /* the process's user: who may own a debug file besides root */
};

/* Opens the debug file of the file described by img. fd or -ENOENT. */
int debuginfo__open(const struct debuginfo_where *where, const struct elf_image *img);

/* CRC-32 (the debuglink's, zlib's) of the whole file at fd. 0 or -errno. */
int debuginfo__crc32(int fd, uint32_t *crc);

#endif /* JBPF_DEBUGINFO_H */
