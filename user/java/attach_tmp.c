/*
 * attach_tmp: what the profiler creates in a target JVM's /tmp: the agent
 * file and the socket the agent connects back to (contracts in attach.h).
 *
 * Every name is one path component relative to the target's /tmp fd
 * (attach__target_open), created as the target's user (its effective uid and
 * gid, no supplementary groups) with O_EXCL and O_NOFOLLOW, so the
 * profiler can create nothing there that the target's user could not, and
 * what it finds there is looked at through O_PATH and fstat before it is
 * opened or trusted. The socket is bound through
 * /proc/self/fd/<tmp_fd>/<name>, so no symlink in the target redirects
 * it to the host.
 */
#include "user/java/attach_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fdio.h"
#include "common/random.h"

/* Names tried for the agent when its hashed name is taken by a stranger. */
#define INSTALL_ATTEMPTS 8

/*
 * FNV-1a, 64 bits. It only names the file: a file found under that name is
 * compared byte for byte before it is reused, so no collision can matter.
 */
static uint64_t content_hash(const void *data, size_t size)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}



/* ---- attach__install_agent ---- */

/*
 * Whether name in dirfd is a regular file that only the target's user (or
 * root) can change, holding exactly image. It is looked at through an
 * O_PATH descriptor first and opened for reading only once it is known to
 * be such a file: opening a device node, even to read, can have effects,
 * and a FIFO would block.
 */
static int same_trusted_content(const struct jvm_target *t, int dirfd, const char *name, const void *image,
				size_t size)
{
	char buf[65536], self[64];
	struct stat st, st2;
	size_t off = 0;
	int pfd, fd, same = 0;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return 0;
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != t->uid && st.st_uid != 0) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size < 0 || (uint64_t)st.st_size != size) {
		close(pfd);
		return 0;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	/* No O_NOFOLLOW: /proc/self/fd/N is itself the (magic) link to follow. */
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st2) || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino)
		goto out;
	while (off < size) {
		size_t want = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t n = attach__read_full(fd, buf, want);

		if (n != (ssize_t)want || memcmp(buf, (const char *)image + off, want))
			goto out;
		off += want;
	}
	same = 1;
out:
	close(fd);
	return same;
}

/*
 * Creates name with image in it, as the target's user, mode 0600 (the JVM
 * reads it as that user). 0, -1 with errno (EEXIST: name is taken; EACCES:
 * the target's user may not write there, and neither may the profiler).
 */
static int write_agent_file(int dirfd, const char *name, const void *image, size_t size)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	int saved, written = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		saved = errno;
		close(fd);
		unlinkat(dirfd, name, 0);
		errno = saved;
		return -1;
	}
	/* The mode is exact whatever the umask. */
	if (!fchmod(fd, 0600) && (written = fdio__write_all(fd, image, size)) < 0)
		errno = -written;
	if (written || fsync(fd)) {
		saved = errno;
		close(fd);
		attach__unlink_if_same(dirfd, name, &st);
		errno = saved == EEXIST ? EIO : saved;
		return -1;
	}
	close(fd);
	return 0;
}

static int create_agent_file(const struct jvm_target *t, const char *name, const void *image, size_t size,
			     char *err, size_t err_size)
{
	struct attach_saved_ids ids;
	int rc, saved;

	if (attach__enter_ids(t, &ids, err, err_size)) {
		errno = EPERM;
		return -2;
	}
	rc = write_agent_file(t->tmp_fd, name, image, size);
	saved = errno;
	attach__leave_ids(&ids);
	errno = saved;
	return rc;
}

int attach__install_agent(struct jvm_target *t, const void *image, size_t size, char *path, size_t pathlen, char *err,
		      size_t err_size)
{
	unsigned long long hash = (unsigned long long)content_hash(image, size);
	char name[80];
	int i, rc;

	/* The user in the name: in a shared /tmp each user has a file of its own. */
	snprintf(name, sizeof(name), "jbpfagent-%016llx-%u.so", hash, (unsigned)t->uid);
	if (pathlen < sizeof("/tmp/") + strlen(name) + 10) {
		snprintf(err, err_size, "internal error: agent path buffer too small");
		return -1;
	}
	rc = create_agent_file(t, name, image, size, err, err_size);
	if (!rc)
		goto done;
	if (rc == -2)
		return -1;
	if (errno != EEXIST)
		goto fail;
	/* A file by that name: ours from an earlier run, or planted. */
	if (same_trusted_content(t, t->tmp_fd, name, image, size))
		goto done;
	for (i = 0; i < INSTALL_ATTEMPTS; i++) {
		snprintf(name, sizeof(name), "jbpfagent-%016llx-%u-%08x.so", hash, (unsigned)t->uid,
			 (unsigned)random__u64());
		rc = create_agent_file(t, name, image, size, err, err_size);
		if (!rc)
			goto done;
		if (rc == -2)
			return -1;
		if (errno != EEXIST)
			goto fail;
	}
fail:
	snprintf(err, err_size, "cannot write the agent into /tmp of JVM pid %d as its user %u: %s (is its /tmp full "
		 "or read-only?)", (int)t->pid, (unsigned)t->uid, strerror(errno));
	return -1;
done:
	snprintf(path, pathlen, "/tmp/%s", name);
	return 0;
}

/* ---- attach__listen, attach__accept ---- */

int attach__listen(struct jvm_target *t, char *path, size_t pathlen, char *err, size_t err_size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct attach_saved_ids ids;
	char name[64];
	struct stat st;
	int fd, rc, saved;

	snprintf(name, sizeof(name), "jbpfprof-%016llx.sock", (unsigned long long)random__u64());
	if ((size_t)snprintf(path, pathlen, "/tmp/%s", name) >= pathlen) {
		snprintf(err, err_size, "internal error: socket path buffer too small");
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", t->tmp_fd, name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_size, "cannot create a Unix socket: %s", strerror(errno));
		return -1;
	}
	/*
	 * Linux takes a socket file's mode from the socket's inode, less the
	 * umask: 0600 at most. Not umask(077): the umask is the whole
	 * process's, and other threads of the profiler create files meanwhile.
	 */
	if (fchmod(fd, 0600)) {
		snprintf(err, err_size, "cannot set the mode of a Unix socket: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (attach__enter_ids(t, &ids, err, err_size)) {
		close(fd);
		return -1;
	}
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	saved = errno;
	attach__leave_ids(&ids);
	if (rc) {
		snprintf(err, err_size, "cannot create a socket in /tmp of JVM pid %d as its user %u: %s", (int)t->pid,
			 (unsigned)t->uid, strerror(saved));
		close(fd);
		return -1;
	}
	if (fstatat(t->tmp_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode) || st.st_uid != t->uid ||
	    (st.st_mode & 07777) != 0600) {
		snprintf(err, err_size, "the socket created in /tmp of JVM pid %d is not a mode 0600 socket of uid %u",
			 (int)t->pid, (unsigned)t->uid);
		goto fail;
	}
	if (listen(fd, 8)) {
		snprintf(err, err_size, "cannot listen on %s in JVM pid %d's /tmp: %s", name, (int)t->pid,
			 strerror(errno));
		goto fail;
	}
	return fd;
fail:
	unlinkat(t->tmp_fd, name, 0);
	close(fd);
	return -1;
}

/* Removes the socket file at path ("/tmp/NAME") if it is still a socket of the target's user. */
static void unlink_socket(const struct jvm_target *t, const char *path)
{
	const char *name = strncmp(path, "/tmp/", 5) ? NULL : path + 5;
	struct stat st;

	if (!name || !*name || strchr(name, '/'))
		return;
	if (!fstatat(t->tmp_fd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISSOCK(st.st_mode) && st.st_uid == t->uid)
		unlinkat(t->tmp_fd, name, 0);
}

void attach__unlisten(struct jvm_target *t, int listen_fd, const char *path)
{
	if (listen_fd >= 0)
		close(listen_fd);
	unlink_socket(t, path);
}

int attach__accept(struct jvm_target *t, int listen_fd, const char *path, int timeout_ms, char *err, size_t err_size)
{
	int64_t deadline = clock__monotonic_ms() + timeout_ms;
	unsigned refused = 0;
	char secs[16];

	for (;;) {
		struct pollfd p[3] = { { .fd = listen_fd, .events = POLLIN }, { .fd = t->pidfd, .events = POLLIN },
				       { .fd = t->cancel_fd, .events = POLLIN } };
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int left = attach__ms_left(deadline), fd;

		if (!left)
			break;
		if (poll(p, 3, left) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, err_size, "waiting for the agent in JVM pid %d: poll: %s", (int)t->pid,
				 strerror(errno));
			goto fail;
		}
		if (p[2].revents) {
			snprintf(err, err_size, "attach to JVM pid %d given up: the recording ended", (int)t->pid);
			goto fail;
		}
		if (p[0].revents) {
			fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			/* Only the JVM itself, as its own user: the socket's mode keeps others out, not root. */
			if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) && cred.pid == t->pid &&
			    cred.uid == t->uid) {
				unlink_socket(t, path);
				return fd;
			}
			close(fd);
			refused++;
			continue;
		}
		if (p[1].revents) {
			snprintf(err, err_size, "JVM pid %d exited before its agent connected to jbpfprof", (int)t->pid);
			goto fail;
		}
	}
	attach__format_seconds(secs, sizeof(secs), timeout_ms);
	snprintf(err, err_size, "the agent in JVM pid %d did not connect within %s%s (see the JVM's stderr)",
		 (int)t->pid, secs, refused ? "; connections from other processes were refused" : "");
fail:
	unlink_socket(t, path);
	return -1;
}
