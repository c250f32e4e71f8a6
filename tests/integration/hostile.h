/*
 * hostile: what the hostile-input tests share: an unprivileged user of
 * their own, and commands run as that user.
 *
 * The profiler runs as root against processes of other users; these tests
 * play such a user. The user, HOSTILE_USER, is created on first use
 * (useradd, no home, no login shell) and stays, so a rerun finds it. Its
 * commands run through setpriv with its uid and gid, no supplementary
 * groups and no capabilities.
 */
#ifndef JBPF_TEST_HOSTILE_H
#define JBPF_TEST_HOSTILE_H

#include <sys/types.h>

#include "harness.h"

#define HOSTILE_USER "jbpfprof-hostile"

/* The user's ids, creating it if it does not exist. 0, or -1 with a message on stderr. */
int hostile_user(uid_t *uid, gid_t *gid);

/*
 * Starts argv (argv[0] a path) as the user, its descriptor fd (1 or 2)
 * piped, as harness_start_command does. 0 or -1.
 */
int hostile_start(struct child *child, char *const argv[], int fd);

/*
 * The path of a copy of the file at path, named name ("dir/file" allowed),
 * that the user may read and run, or NULL with a message on stderr. The
 * checkout may be where the user cannot go (a clone in a directory of mode
 * 0700), so the copy is made in a directory of this process under
 * /var/tmp, once per name; the process that made the directory removes it
 * when it exits. Free the result.
 */
char *hostile_copy(const char *path, const char *name);

/* hostile_copy of the workload name, as harness_workload names it. */
char *hostile_workload(const char *name);

/* Gives path (a file or directory the test made) to the user. 0 or -1. */
int hostile_chown(const char *path);

#endif /* JBPF_TEST_HOSTILE_H */
