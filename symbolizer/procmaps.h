/*
 * procmaps: /proc/PID/maps, one mapping per line:
 *
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
 *   7f3c2a000000-7f3c2a1b2000 r-xp 00028000 08:01 1835 /usr/lib/libc.so.6
 *
 * START and END are runtime virtual addresses in the process, OFFSET is the
 * file offset mapped at START (page aligned), all in hex. PATH may contain
 * spaces, may end in " (deleted)", may be absent (anonymous memory) or be a
 * pseudo-name such as [vdso], [heap] or [anon:name].
 *
 * Parsing is strict: a line that does not have exactly this shape, or
 * whose numbers are out of range (END <= START, an offset that would wrap),
 * is skipped rather than half-trusted.
 */
#ifndef JBPF_PROCMAPS_H
#define JBPF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* vm.max_map_count defaults to 65530; no process has more mappings. */
#define PROCMAPS_MAX_ENTRIES 65536
/* The kernel prints at most PATH_MAX bytes of path. */
#define PROCMAPS_MAX_PATH 4096

enum procmaps_kind {
	PROCMAPS_FILE,    /* path names a file ("/..."), deleted or not */
	PROCMAPS_ANON,    /* no path, or [anon:name]: JIT code lives here */
	PROCMAPS_VDSO,    /* [vdso] */
	PROCMAPS_SPECIAL, /* any other pseudo-name: [heap], [stack], [vsyscall] */
};

struct procmaps_entry {
	uint64_t start;     /* runtime VA, inclusive */
	uint64_t end;       /* runtime VA, exclusive */
	uint64_t pgoff;     /* file offset mapped at start */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	int executable;     /* 'x' in perms */
	int deleted;        /* path ended in " (deleted)", which is removed */
	enum procmaps_kind kind;
	char *path;         /* NUL-terminated, owned; NULL for anonymous memory */
};

/*
 * Parses one line (trailing newline allowed) into *entry, with path
 * allocated. Returns 0, -EINVAL for a malformed line (nothing allocated),
 * or -ENOMEM.
 */
int procmaps__parse_line(const char *line, struct procmaps_entry *entry);

/*
 * Reads a maps file, keeping only executable mappings when exec_only, at
 * most PROCMAPS_MAX_ENTRIES of them, malformed lines skipped. On success
 * returns 0 with *entries (free with procmaps__free) and *nr set, in file
 * order, which the kernel keeps sorted by address. Otherwise a negative
 * errno (-ENOENT when the file, and so the process, does not exist).
 */
int procmaps__read(const char *path, int exec_only, struct procmaps_entry **entries, size_t *nr);

void procmaps__free(struct procmaps_entry *entries, size_t nr);

#endif /* JBPF_PROCMAPS_H */
