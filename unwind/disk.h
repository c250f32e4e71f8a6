/*
 * disk: unwind tables kept on disk between runs, by build-id and digest.
 *
 * Building libjvm's and libc's tables takes about 100 ms at every start;
 * a build-id names the same bytes on every machine, so a table built once
 * can be read back in a few hundred microseconds. Only files with a
 * build-id are kept (device and inode do not survive a reboot or an
 * upgrade), and only under the digest of the bytes the table was built
 * from (unwind_digest__file): a build-id is only what a file claims, and
 * a target may map a file that claims libc's with other CFI.
 *
 * The directory is the profiler's own, never a path a target controls:
 * opened with O_NOFOLLOW, and used only when it is a directory owned by
 * the effective user and writable by nobody else (else the cache is off).
 * Every file is checked before use as if hostile: a regular file owned by
 * the effective user, one link, mode 0600, its size exactly what its
 * header says, the header's magic, format version, row size, builder (the
 * code that made the rows: disk.c), build-id and digest those asked for, the row count within UNWIND_DISK_MAX_ROWS, and a
 * checksum over header and rows. A file that fails any check is removed
 * and the table built again. Files are written under a temporary name
 * (O_CREAT | O_EXCL | O_NOFOLLOW, 0600) and renamed into place, so a
 * reader sees a whole file or none. The directory holds at most max_bytes
 * of tables: the least recently written go first.
 *
 * Not thread-safe; two processes may share a directory (the rename is
 * atomic, and each checks what it reads).
 */
#ifndef JBPF_UNWIND_DISK_H
#define JBPF_UNWIND_DISK_H

#include <stddef.h>
#include <stdint.h>

struct unwind_table;
struct unwind_disk;

/* Where jbpfprof keeps them when run as root. */
#define UNWIND_DISK_DIR "/var/cache/jbpfprof"
/* What it may take there: about twenty JDKs' worth of libjvm tables. */
#define UNWIND_DISK_MAX_BYTES (64u << 20)
/* A table file with more rows is refused: the per-table bound of table.c. */
#define UNWIND_DISK_MAX_ROWS (4u << 20)

/*
 * Opens (creating it, mode 0700, when absent) the directory dir.
 * NULL when it cannot be used (not ours, writable by others, a symlink,
 * out of memory): the caller builds every table as before.
 */
struct unwind_disk *unwind_disk__open(const char *dir, size_t max_bytes);
/* NULL-safe. */
void unwind_disk__close(struct unwind_disk *disk);

/*
 * The table kept for this build-id and digest (UNWIND_DIGEST_LEN bytes),
 * built with a debug file (with_debug) or not, in a new table for
 * unwind_table__free. 0 and *out, -ENOENT when none is kept, another
 * negative errno when one was kept but failed a check (it is removed).
 */
int unwind_disk__load(struct unwind_disk *disk, const uint8_t *build_id, size_t build_id_len, const uint8_t *digest,
		      int with_debug, struct unwind_table **out);
/* Keeps table for this build-id and digest; 0 or a negative errno (nothing kept). */
int unwind_disk__store(struct unwind_disk *disk, const uint8_t *build_id, size_t build_id_len, const uint8_t *digest,
		       int with_debug, const struct unwind_table *table);

#endif /* JBPF_UNWIND_DISK_H */
