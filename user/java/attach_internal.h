/*
 * attach_internal: what the files of the attach client share and nobody
 * else uses. attach.h is the public contract; the client is split into
 *
 *   attach_parse.c     pure parsers of what the JVM and its /proc files say
 *   attach_target.c    opening a target: its ids, its /proc, its /tmp, the
 *                      checks made before anything is sent to it
 *   attach_tmp.c       what the profiler creates in the target's /tmp: the
 *                      agent file and the socket the agent connects to
 *   attach_protocol.c  HotSpot's attach protocol: trigger, connect, send,
 *                      read the reply
 */
#ifndef JBPF_ATTACH_INTERNAL_H
#define JBPF_ATTACH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "user/java/attach.h"

/*
 * Supplementary groups the profiler may have and give back after acting
 * as a target; root has one or two. More, and attaching is refused.
 */
#define ATTACH_MAX_GROUPS 64

/* The calling thread's effective ids and groups before attach__enter_ids changed them. */
struct attach_saved_ids {
	uid_t euid;
	gid_t egid;
	int ngroups;
	gid_t groups[ATTACH_MAX_GROUPS];
	int dumpable;
	int changed;
};

/*
 * Makes the calling thread's effective uid and gid the target's, with no
 * supplementary groups (root's would open what the target cannot), for
 * that thread only (raw system calls). 0, or -1 with err set. Every
 * success is paired with attach__leave_ids, which cannot fail and keeps
 * errno.
 */
int attach__enter_ids(const struct jvm_target *t, struct attach_saved_ids *s, char *err, size_t err_size);
void attach__leave_ids(const struct attach_saved_ids *s);

/* Whether the target has exited, waiting up to timeout_ms for it (its pidfd polls readable then). */
int attach__target_exited(const struct jvm_target *t, int timeout_ms);

/* Whether t->cancel_fd says to give up (never, when it is -1). */
int attach__cancelled(const struct jvm_target *t);

/*
 * poll of fd for events, up to timeout_ms, that also ends when the attach
 * is cancelled: 1 ready, 0 timed out (or interrupted), -1 with errno
 * ECANCELED or poll's.
 */
int attach__wait(const struct jvm_target *t, int fd, short events, int timeout_ms);

/* Milliseconds until deadline (CLOCK_MONOTONIC ms), 0 when past. */
int attach__ms_left(int64_t deadline);

/* "5 s" or "2.5 s", for messages. */
void attach__format_seconds(char *buf, size_t size, int ms);

/* Reads at most size bytes of fd; returns the count, or -1 with errno set. */
ssize_t attach__read_full(int fd, void *buf, size_t size);

/* Removes name from dirfd only if it is still the inode *st describes. */
void attach__unlink_if_same(int dirfd, const char *name, const struct stat *st);

#endif /* JBPF_ATTACH_INTERNAL_H */
