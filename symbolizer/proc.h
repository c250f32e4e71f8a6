/*
 * proc: everything the profiler reads from /proc but the memory maps
 * (procmaps.c), under a configurable proc root ("/proc", or a fixture
 * tree in tests):
 *
 *   <root>/<tgid>/stat               start time (field 22), to tell a reused
 *                                    pid from its predecessor
 *   <root>/<tgid>/task/<tid>/stat    a thread's state letter (field 3)
 *   <root>/<tgid>[/task/<tid>]/comm  a process's or a thread's name
 *   <root>/<tgid>/task/<tid>/stack   the kernel stack of a thread off CPU
 *   <root>/<tgid>[/task/<tid>]/status  Tgid, NSpid (the pid inside the
 *                                    innermost pid namespace), effective
 *                                    uid and gid, signal and capability masks
 *   <root>/<tgid>/environ            one variable of the environment
 *   <root>/ and <root>/<tgid>/task/  every process; a process's threads
 *   <root>/<tgid>/root/...           the process's own view of the filesystem
 *   <root>/<tgid>/map_files/<start>-<end>   a mapped file, even deleted
 *
 * Two layers. The parsers take a file's text and its length (no NUL
 * needed past len, nothing read past it) and do no I/O; the readers open
 * a file, read at most a fixed size of it (PROC_SMALL_MAX, or a limit the
 * caller gives), and parse. Everything in these files may be chosen by the
 * process (its comm, its environment) and is parsed as hostile input.
 *
 * Files inside the process root are opened as the design's rule for
 * target-controlled paths says (proc__open_target): resolved with
 * openat2(O_PATH | O_NOFOLLOW, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so
 * an absolute symlink in a container points into the container and never
 * at a host file, and a symlink as the last component is never followed;
 * checked by fstat (a regular file; owned by the target's user or, readable
 * by everyone, by root; the device and inode maps named); only then
 * reopened read-only through /proc/self/fd/N, so that a device, a FIFO or
 * a file the check refused is never opened at all.
 *
 * Every function is reentrant and none keeps state between calls.
 */
#ifndef JBPF_PROC_H
#define JBPF_PROC_H

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's TASK_COMM_LEN, with the NUL. */
#define PROC_COMM_LEN 16
/*
 * stat, status and comm are a few hundred bytes to a couple of KiB (64
 * supplementary groups make status longer): what is past this is not read.
 */
#define PROC_SMALL_MAX 8192
/* The kernel's MAX_PID_NS_LEVEL is 32: at most 33 NSpid fields. */
#define PROC_NSPID_MAX 33

/* ---- reading, bounded ---- */

/*
 * Reads at most size - 1 bytes of path (or of name relative to dirfd,
 * which may be AT_FDCWD) into buf and NUL-terminates it. The file must be
 * a regular file, as every /proc file is. Returns the length read or a
 * negative errno.
 */
long proc__read_small(const char *path, char *buf, size_t size);
long proc__read_small_at(int dirfd, const char *name, char *buf, size_t size);

/*
 * Reads at most max bytes of name relative to dirfd into a new buffer
 * (NUL-terminated, the caller frees it): for cmdline and environ, which
 * can be megabytes. Returns the length, or a negative errno with *out NULL.
 */
long proc__read_alloc_at(int dirfd, const char *name, size_t max, char **out);

/*
 * <root>/<tgid>/<leaf> and <root>/<tgid>/task/<tid>/<leaf> into buf, as
 * proc__read_small. -ENAMETOOLONG when the path does not fit PATH_MAX.
 */
long proc__read_process_file(const char *proc_root, uint32_t tgid, const char *leaf, char *buf, size_t size);
long proc__read_thread_file(const char *proc_root, uint32_t tgid, uint32_t tid, const char *leaf, char *buf,
			    size_t size);

/* ---- parsers (pure) ---- */

/* Parses a stat line's field 22 (the comm in it may hold spaces and ')'). 0 or -EINVAL. */
int proc__parse_start_time(const char *stat, uint64_t *start_time);

/* The state letter of a stat line (field 3, after the comm's last ')'), or 0. */
char proc__parse_state(const char *stat);

/*
 * The last number of status's "NSpid:" line: the pid as the innermost pid
 * namespace of the task sees it (one number per level, outermost first).
 * Returns 0; -ENOENT when there is no such line (before Linux 4.1, which
 * has no way to tell); -EINVAL when the line holds anything but 1 to
 * PROC_NSPID_MAX numbers from 1 to INT_MAX (then *nspid is unchanged).
 */
int proc__parse_nspid(const char *status, size_t len, uint32_t *nspid);

/* The "Tgid:" line of status: 0, or -EINVAL when missing or malformed. */
int proc__parse_tgid(const char *status, size_t len, uint32_t *tgid);

/*
 * The effective uid and gid of status: the second of the four numbers of
 * its "Uid:" and "Gid:" lines. 0, or -EINVAL when either line is missing,
 * malformed, or holds (uid_t)-1 (outputs then unchanged).
 */
int proc__parse_ids(const char *status, size_t len, uint32_t *euid, uint32_t *egid);

/*
 * A hex mask line of status (key "SigCgt:", "CapEff:" and the like, with
 * its colon): 1 to 16 hex digits and nothing else. 0 or -EINVAL.
 */
int proc__parse_mask(const char *status, size_t len, const char *key, uint64_t *mask);

/*
 * The value of the first NAME=... in a NUL-separated environment (len
 * bytes, as /proc/PID/environ holds it) with *vlen its length, or NULL.
 */
const char *proc__env_value(const char *env, size_t len, const char *name, size_t *vlen);

/* A /proc directory entry's name as a pid or tid (1 to INT_MAX, digits only), or 0. */
uint32_t proc__parse_id(const char *name);

/* ---- a process and its threads ---- */

/* Start time of tgid in clock ticks since boot. 0, or -ESRCH if gone. */
int proc__start_time(const char *proc_root, uint32_t tgid, uint64_t *start_time);

/*
 * The name of a process, newline removed, into buf (NUL-terminated; "" on
 * failure). 0 or a negative errno.
 */
int proc__comm(const char *proc_root, uint32_t tgid, char *buf, size_t size);

/* The state letter of a thread ('R', 'S', 'D', 'Z', ...), or 0 if it cannot be read. */
char proc__thread_state(const char *proc_root, uint32_t tgid, uint32_t tid);

/* tgid as its own pid namespace sees it (proc__parse_nspid); tgid when unknown. */
uint32_t proc__nspid(const char *proc_root, uint32_t tgid);

/*
 * Lists the processes of the host (every numeric entry of the root) or
 * one process's threads: open, then proc__next_id until it returns 0,
 * then close (NULL-safe, safe twice). Entries are what the directory
 * holds at the time; a process may exit before it is read.
 */
struct proc_ids {
	DIR *dir;
};
int proc__open_processes(struct proc_ids *ids, const char *proc_root);
int proc__open_threads(struct proc_ids *ids, const char *proc_root, uint32_t tgid);
uint32_t proc__next_id(struct proc_ids *ids);
void proc__close_ids(struct proc_ids *ids);

/* ---- files of a process ---- */

/*
 * What a file reached through a path the target controls must be, besides
 * a regular file. Zero-initialised: symlinks followed inside the root but
 * not as the last component, and no owner or identity check.
 */
struct proc_expect {
	/*
	 * PROC_FOLLOW_NONE: no symlink anywhere in the path (a path from maps,
	 * or one next to it, has none unless the target made one since);
	 * PROC_FOLLOW_INNER: directories may be symlinks, the file may not;
	 * PROC_FOLLOW_ALL: the file may be a symlink too (build-id links under
	 * a debug root), always inside the root.
	 */
	enum { PROC_FOLLOW_INNER, PROC_FOLLOW_NONE, PROC_FOLLOW_ALL } follow;
	/*
	 * The file must belong to uid, or to root and be readable by everyone:
	 * never read for a target a file its user could not read itself (a
	 * root-only file planted by a hard link or a bind mount).
	 */
	int check_owner;
	uint32_t uid;
	/* The file must be this device and inode (what maps says). */
	int check_identity;
	uint64_t dev, ino;
};

/*
 * Opens path (absolute, as process tgid sees it) inside its root, or on
 * the host when tgid is 0, as expect says. Returns an fd (O_CLOEXEC,
 * read-only) or a negative errno: -EINVAL for anything but a regular
 * file, -ELOOP for a symlink where none may be, -EPERM for a wrong owner,
 * -ESTALE for another file than expected, -ESRCH when the process is gone.
 */
int proc__open_target(const char *proc_root, uint32_t tgid, const char *path, const struct proc_expect *expect);

/*
 * The checks of expect on the file open at fd (O_PATH or not); 0 or the
 * negative errno proc__open_target would return.
 */
int proc__check_expect(int fd, const struct proc_expect *expect);

/* The effective uid of tgid (from status). 0, or a negative errno. */
int proc__uid(const char *proc_root, uint32_t tgid, uint32_t *uid);

/*
 * Opens path (absolute, as the process sees it) read-only inside the
 * process's root, symlinks followed inside that root: proc__open_target
 * with PROC_FOLLOW_ALL and no other check, for paths the target does not
 * name. Returns an fd (O_CLOEXEC) of a regular file, or a negative errno:
 * -EINVAL for anything else (FIFO, device, directory), -ESRCH when the
 * process is gone.
 */
int proc__open_in_root(const char *proc_root, uint32_t tgid, const char *path);

/*
 * Opens the file mapped at [start, end) through map_files, of <root>/<tgid>
 * or of the /proc/PID directory pid_dirfd. fd or a negative errno, as
 * above.
 */
int proc__open_map_file(const char *proc_root, uint32_t tgid, uint64_t start, uint64_t end);
int proc__open_map_file_at(int pid_dirfd, uint64_t start, uint64_t end);

/* A file mapping of a process, as its maps line names it. */
struct proc_mapping {
	uint64_t start, end;
	const char *path;   /* as the process sees it */
	int deleted;        /* the path ended in " (deleted)": no other file may stand for it */
	uint64_t dev, ino;
};

/*
 * Opens the file behind mapping m of process tgid: through map_files,
 * else (not deleted) by its path inside the process's root, which must be
 * the device and inode the maps name. fd or a negative errno, as above.
 */
int proc__open_mapping(const char *proc_root, uint32_t tgid, const struct proc_mapping *m);
/* The same for a line of the process's maps (symbolizer/procmaps.h). */
struct procmaps_entry;
int proc__open_maps_entry(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e);

/*
 * Opens path on the host the same way (O_PATH, fstat, reopen), without
 * the root confinement: for files named by the profiler's own
 * configuration. fd or a negative errno, as above.
 */
int proc__open_regular(const char *path);

/*
 * Finishes opening a file the target controls: fd (or a negative errno,
 * passed through) is kept only if it is a regular file, else closed and
 * -EINVAL returned. An O_PATH fd is reopened read-only through
 * /proc/self/fd/N and closed. PROC_OPEN_FLAGS are the flags of that
 * read-only open; its O_NONBLOCK keeps a FIFO from blocking an open
 * that got past the check in a race, and changes nothing for a regular file.
 */
int proc__regular_or_close(int fd);
#define PROC_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

#endif /* JBPF_PROC_H */
