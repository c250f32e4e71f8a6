/*
 * procfs: the few per-process files the symbolizer reads, under a
 * configurable proc root ("/proc", or a fixture tree in tests):
 *
 *   <proc_root>/<tgid>/stat       start time (field 22), to tell a reused
 *                                 pid from its predecessor
 *   <proc_root>/<tgid>/comm       the process name
 *   <proc_root>/<tgid>/status     NSpid, the pid inside its pid namespace
 *   <proc_root>/<tgid>/root/...   the process's own view of the filesystem
 *   <proc_root>/<tgid>/map_files/<start>-<end>   a mapped file, even deleted
 *
 * Paths inside the process root are resolved with openat2(RESOLVE_IN_ROOT),
 * so an absolute symlink in a container points into the container, not at
 * the host file of the same name. Every read is bounded.
 */
#ifndef JBPF_PROCFS_H
#define JBPF_PROCFS_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's TASK_COMM_LEN, with the NUL. */
#define PROCFS_COMM_LEN 16

/* Start time of tgid in clock ticks since boot. 0, or -ESRCH if gone. */
int procfs__start_time(const char *proc_root, uint32_t tgid, uint64_t *start_time);

/* Parses a stat line's field 22 (the comm in it may hold spaces and ')'). */
int procfs__parse_start_time(const char *stat, uint64_t *start_time);

/* The process name, newline removed, into buf (NUL-terminated). 0 or -errno. */
int procfs__comm(const char *proc_root, uint32_t tgid, char *buf, size_t size);

/* The last number of the "NSpid:" line of status; tgid when there is none. */
uint32_t procfs__nspid(const char *proc_root, uint32_t tgid);

/*
 * Opens path (absolute, as the process sees it) read-only inside the
 * process's root. Returns an fd (O_CLOEXEC) of a regular file, or a
 * negative errno: -EINVAL for anything else (FIFO, device, directory).
 */
int procfs__open_in_root(const char *proc_root, uint32_t tgid, const char *path);

/* Opens the file mapped at [start, end) through map_files. fd or -errno, as above. */
int procfs__open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end);

/*
 * Finishes opening a file the target controls: fd (or a negative errno,
 * passed through) is kept only if it is a regular file, else closed and
 * -EINVAL returned. Every open of such a file uses PROCFS_OPEN_FLAGS, whose
 * O_NONBLOCK keeps a FIFO from blocking the open itself; for a regular file
 * it changes nothing.
 */
int procfs__regular_or_close(int fd);
#define PROCFS_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/*
 * Reads at most size - 1 bytes of path into buf and NUL-terminates it.
 * Returns the length read or a negative errno.
 */
long procfs__read_small(const char *path, char *buf, size_t size);

#endif /* JBPF_PROCFS_H */
