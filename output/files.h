/*
 * outputs: the files a command writes, opened before the work and named
 * only once complete.
 *
 * Each file is created unnamed (O_TMPFILE) in its directory, so a path that
 * cannot be written is reported before a recording starts, and a command
 * that fails or is killed leaves no file behind and no existing file
 * damaged: output_file__finish gives the finished file its name with one
 * rename. On a filesystem without O_TMPFILE (NFS, FUSE, some overlayfs)
 * the file is created under a fresh temporary name beside path instead
 * (O_CREAT | O_EXCL | O_NOFOLLOW, so nothing that already exists there, a
 * symlink least of all, is opened) and renamed over path the same way.
 * Neither way opens path itself: a symlink planted at path is replaced,
 * never followed. "-" is standard output.
 *
 * A path that is a device or a pipe (/dev/null), or a symlink (/dev/stdout),
 * belonging to root or to the user running the profiler (SUDO_UID under
 * sudo), is written in place instead, as the user means: replacing it would
 * destroy it. Another user's symlink is replaced as above; another user's
 * device, pipe or socket is refused.
 *
 * Under sudo each file is handed to the user who asked for it, through the
 * descriptor of the file just created, never through a name.
 */
#ifndef JBPF_OUTPUTS_H
#define JBPF_OUTPUTS_H

#include <stdbool.h>
#include <stdio.h>

#include "output/output.h"

struct output_file {
	char path[4096];
	enum output_format format;
	FILE *out;          /* open until finished or discarded */
	bool unnamed;       /* an O_TMPFILE, named when finished */
	bool to_stdout;
	bool in_place;      /* a device, a pipe, or a file through a trusted symlink: written as it is */
	char temp[4096 + 48]; /* without O_TMPFILE: the name it has until finished, else "" */
};

/*
 * Opens an unnamed file in dir (O_TMPFILE): a descriptor, or -1 with errno.
 * A variable so that tests can make it fail as a filesystem without
 * O_TMPFILE does (EOPNOTSUPP) and reach the fallback.
 */
extern int (*output_file__open_unnamed)(const char *dir);

/*
 * Opens path ("-" for standard output) for format. Returns 0, or -1 after
 * printing one line saying why.
 */
int output_file__open(struct output_file *f, const char *path, enum output_format format);
/*
 * After the writer: error is what it returned. Flushes, names and closes
 * the file; returns 0, or -1 after printing one line saying why (the file
 * is then discarded).
 */
int output_file__finish(struct output_file *f, int error);
/* Closes a file not finished; an unnamed one vanishes, a named one is removed. */
void output_file__discard(struct output_file *f);

#endif /* JBPF_OUTPUTS_H */
