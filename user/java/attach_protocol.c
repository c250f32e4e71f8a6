/*
 * attach_protocol: HotSpot's dynamic attach protocol, the client side
 * (attach__load_agent and attach__jcmd in attach.h; both send one request and
 * read one reply, attach_request).
 *
 * HotSpot on Linux starts its attach listener lazily. The client's side of
 * the handshake, with the JVM's view of the names (its /tmp is always
 * "/tmp", and <nspid> is its pid in its own pid namespace):
 *
 *   client                                   JVM
 *   ------                                   ---
 *   /tmp/.java_pid<nspid> a live socket? --- yes: skip to connect
 *   create /tmp/.attach_pid<nspid>
 *     as the JVM's euid
 *   SIGQUIT ------------------------------>  signal thread: is there
 *                                            <cwd>/.attach_pid<nspid>, else
 *                                            /tmp/.attach_pid<nspid>, owned
 *                                            by my euid or root? then start
 *                                            the listener, bind
 *                                            /tmp/.java_pid<nspid> (0600);
 *                                            else print a thread dump
 *   poll for the socket, remove the trigger
 *   connect as the JVM's euid/egid  ------>  SO_PEERCRED: my euid/egid, or root?
 *   "1\0load\0PATH\0true\0OPTIONS\0" ----->  dlopen PATH, Agent_OnAttach(OPTIONS)
 *   read to EOF  <-------------------------  "0\nreturn code: N\n", close
 *
 * The attach socket is connected through /proc/self/fd/N of the very
 * inode checked (owner the JVM's uid, a socket), never through a path the
 * target could redirect; the trigger file is created as the JVM's user
 * with O_EXCL in the target's /tmp fd, and another user's is never
 * removed; every wait has a deadline and the reply a size bound.
 */
#include "user/java/attach_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "jvmti-stub/stream.h"
#include "symbolizer/proc.h"

/* Wait between checks for the attach socket: HotSpot sends no notice. */
#define SOCKET_POLL_FIRST_MS 2
#define SOCKET_POLL_MAX_MS 64

enum { SOCKET_ABSENT = -2 };

/*
 * Connects to the attach socket name in the target's /tmp: fd, -1 with err
 * set, or SOCKET_ABSENT when nothing usable is there (*found then says what
 * was, if anything, so that a replacement can be told from it).
 */
static int connect_attach_socket(struct jvm_target *t, const char *name, int64_t deadline, struct stat *found,
				 int *have_found, char *err, size_t err_size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int pfd, fd, rc, saved;
	struct attach_saved_ids ids;

	*have_found = 0;
	pfd = openat(t->tmp_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return SOCKET_ABSENT;
	if (fstat(pfd, found)) {
		close(pfd);
		return SOCKET_ABSENT;
	}
	*have_found = 1;
	if (!S_ISSOCK(found->st_mode) || found->st_uid != t->uid) {
		close(pfd);
		return SOCKET_ABSENT;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_size, "cannot create a Unix socket: %s", strerror(errno));
		close(pfd);
		return -1;
	}
	/* The very inode checked above, whatever the name points to by now. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	for (;;) {
		if (attach__enter_ids(t, &ids, err, err_size)) {
			rc = -1;
			break;
		}
		rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		saved = errno;
		attach__leave_ids(&ids);
		if (!rc)
			break;
		/* A full backlog: the listener is busy with another client. */
		if (saved == EAGAIN && attach__ms_left(deadline) && attach__wait(t, -1, 0, 10) == 0)
			continue;
		if (saved == ECONNREFUSED) {
			rc = SOCKET_ABSENT; /* a stale file: nobody listens */
			break;
		}
		snprintf(err, err_size, "cannot connect to the attach socket /tmp/%s of JVM pid %d: %s", name,
			 (int)t->pid, strerror(saved));
		break;
	}
	close(pfd);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/*
 * Creates the trigger name as the JVM's user, mode 0600: HotSpot honours a
 * trigger owned by its own euid. One already there is replaced only if it
 * is a regular file of that user (left by a client that died); anyone
 * else's is another client's, or planted, and is left alone. 0 with the
 * new file's identity in *st, or -1 with err set.
 */
static int create_trigger(const struct jvm_target *t, const char *name, struct stat *st, char *err, size_t err_size)
{
	struct attach_saved_ids ids;
	struct stat old;
	int fd, saved;

	if (attach__enter_ids(t, &ids, err, err_size))
		return -1;
	fd = openat(t->tmp_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && !fstatat(t->tmp_fd, name, &old, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISREG(old.st_mode) || old.st_uid != t->uid) {
			attach__leave_ids(&ids);
			snprintf(err, err_size, "/tmp/%s of JVM pid %d is already there and is not a file of its user "
				 "%u (owner %u): left alone; another client may be attaching, else remove it", name,
				 (int)t->pid, (unsigned)t->uid, (unsigned)old.st_uid);
			return -1;
		}
		attach__unlink_if_same(t->tmp_fd, name, &old);
		fd = openat(t->tmp_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	saved = errno;
	if (fd >= 0 && fstat(fd, st)) {
		saved = errno;
		close(fd);
		unlinkat(t->tmp_fd, name, 0);
		fd = -1;
	}
	attach__leave_ids(&ids);
	if (fd < 0) {
		snprintf(err, err_size, "cannot create the attach trigger /tmp/%s of JVM pid %d as its user %u: %s",
			 name, (int)t->pid, (unsigned)t->uid, strerror(saved));
		return -1;
	}
	close(fd);
	return 0;
}

static int signal_target(const struct jvm_target *t, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
}

/*
 * Creates the trigger, signals, waits for a socket other than *stale (if
 * have_stale), removes the trigger.
 */
static int start_listener(struct jvm_target *t, const char *sock_name, const struct stat *stale, int have_stale,
			  int64_t deadline, int timeout_ms, char *err, size_t err_size)
{
	int64_t start = clock__monotonic_ms(), resend_at = start + timeout_ms / 2;
	int step = SOCKET_POLL_FIRST_MS, resent = 0, catches, result = -1;
	char trigger[32], secs[16], status[PROC_SMALL_MAX];
	struct stat trig;
	long len;

	/* Without a handler SIGQUIT kills (-Xrs, or a JVM still starting). */
	len = proc__read_small_at(t->proc_fd, "status", status, sizeof(status));
	catches = len > 0 ? attach__status_catches(status, (size_t)len, SIGQUIT) : -1;
	if (catches != 1) {
		snprintf(err, err_size, "JVM pid %d does not handle SIGQUIT (started with -Xrs, or still starting up), "
			 "so signalling it to attach would kill it; start it with -XX:+StartAttachListener", (int)t->pid);
		return JVM_LOAD_NOT_LIVE;
	}
	snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)t->nspid);
	if (create_trigger(t, trigger, &trig, err, err_size))
		return -1;
	if (signal_target(t, SIGQUIT)) {
		snprintf(err, err_size, "cannot signal JVM pid %d: %s", (int)t->pid, strerror(errno));
		goto out;
	}
	for (;;) {
		struct stat st;

		if (!fstatat(t->tmp_fd, sock_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISSOCK(st.st_mode) &&
		    st.st_uid == t->uid && !(have_stale && st.st_dev == stale->st_dev && st.st_ino == stale->st_ino)) {
			result = 0;
			break;
		}
		if (!attach__ms_left(deadline)) {
			attach__format_seconds(secs, sizeof(secs), timeout_ms);
			snprintf(err, err_size, "JVM pid %d did not open its attach socket within %s (is it hung, or is "
				 "attach disabled?)", (int)t->pid, secs);
			break;
		}
		/* jcmd signals once more half way, in case the first came too early. */
		if (!resent && clock__monotonic_ms() >= resend_at) {
			resent = 1;
			signal_target(t, SIGQUIT);
		}
		if (attach__target_exited(t, step < attach__ms_left(deadline) ? step : attach__ms_left(deadline))) {
			snprintf(err, err_size, "JVM pid %d exited while jbpfprof was attaching to it", (int)t->pid);
			break;
		}
		if (attach__cancelled(t)) {
			snprintf(err, err_size, "attach to JVM pid %d given up: the recording ended", (int)t->pid);
			break;
		}
		if (step < SOCKET_POLL_MAX_MS)
			step *= 2;
	}
out:
	attach__unlink_if_same(t->tmp_fd, trigger, &trig);
	return result;
}

/* Sends all of buf on the nonblocking fd before deadline. */
static int send_request(const struct jvm_target *t, int fd, const char *buf, size_t len, int64_t deadline)
{
	size_t done = 0;
	int rc;

	while (done < len) {
		ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (!attach__ms_left(deadline) || (rc = attach__wait(t, fd, POLLOUT, attach__ms_left(deadline))) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Reads to EOF before deadline, at most max bytes; -1 with errno (EMSGSIZE: longer). */
static ssize_t read_reply(const struct jvm_target *t, int fd, char *buf, size_t max, int64_t deadline)
{
	size_t len = 0;
	int rc;

	for (;;) {
		char extra;
		ssize_t n = len < max ? read(fd, buf + len, max - len) : read(fd, &extra, 1);

		if (n == 0)
			return (ssize_t)len;
		if (n > 0 && len >= max) {
			errno = EMSGSIZE;
			return -1;
		}
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		if (!attach__ms_left(deadline) || (rc = attach__wait(t, fd, POLLIN, attach__ms_left(deadline))) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (rc < 0)
			return -1;
	}
}

/*
 * Connects to the JVM's attach listener (starting it if need be), sends
 * request (n bytes, protocol 1) and reads the reply to EOF, all before
 * deadline. Returns the reply's length with *reply allocated (the caller
 * frees it), or -1 with err set (JVM_LOAD_NOT_LIVE when the JVM does not
 * catch SIGQUIT yet); what names the request in messages.
 */
static ssize_t attach_request(struct jvm_target *t, const char *request, size_t n, const char *what,
			      int64_t deadline, int timeout_ms, char **reply, char *err, size_t err_size)
{
	char sock_name[32], secs[16];
	struct stat stale = { 0 };
	int fd, have_stale, rc;
	ssize_t len = -1;

	*reply = NULL;
	snprintf(sock_name, sizeof(sock_name), ".java_pid%d", (int)t->nspid);
	fd = connect_attach_socket(t, sock_name, deadline, &stale, &have_stale, err, err_size);
	if (fd == SOCKET_ABSENT) {
		rc = start_listener(t, sock_name, &stale, have_stale, deadline, timeout_ms, err, err_size);
		if (rc)
			return rc;
		fd = connect_attach_socket(t, sock_name, deadline, &stale, &have_stale, err, err_size);
		if (fd == SOCKET_ABSENT)
			snprintf(err, err_size, "JVM pid %d opened its attach socket but does not accept connections on "
				 "it", (int)t->pid);
	}
	if (fd < 0)
		return -1;
	attach__format_seconds(secs, sizeof(secs), timeout_ms);
	if (send_request(t, fd, request, n, deadline)) {
		snprintf(err, err_size, "cannot send the %s request to JVM pid %d: %s", what, (int)t->pid,
			 errno == ETIMEDOUT ? "timed out" : strerror(errno));
		goto out;
	}
	*reply = malloc(ATTACH_REPLY_MAX);
	if (!*reply) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	len = read_reply(t, fd, *reply, ATTACH_REPLY_MAX, deadline);
	if (len < 0) {
		if (errno == ETIMEDOUT)
			snprintf(err, err_size, "JVM pid %d did not answer the %s request within %s (is it hung, or "
				 "is the agent still starting?)", (int)t->pid, what, secs);
		else if (errno == EMSGSIZE)
			snprintf(err, err_size, "JVM pid %d sent a reply longer than %d bytes to the %s request",
				 (int)t->pid, ATTACH_REPLY_MAX, what);
		else
			snprintf(err, err_size, "cannot read the reply of JVM pid %d: %s", (int)t->pid, strerror(errno));
		free(*reply);
		*reply = NULL;
	}
out:
	close(fd);
	return len;
}

/*
 * A request of protocol 1 into buf: "1", the command, then its three
 * arguments, each NUL-terminated. The caller bounds the arguments so that
 * they fit. Returns its length.
 */
static size_t protocol1_request(char *buf, const char *command, const char *const args[3])
{
	const char *parts[] = { "1", command, args[0], args[1], args[2] };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t len = strlen(parts[i]) + 1;

		memcpy(buf + n, parts[i], len);
		n += len;
	}
	return n;
}

int attach__load_agent(struct jvm_target *t, const char *agent_path, const char *options, int timeout_ms, char *err,
		   size_t err_size)
{
	int64_t deadline = clock__monotonic_ms() + timeout_ms;
	char request[2 * ATTACH_ARG_MAX + 32], msg[512];
	char *reply = NULL;
	int rc, result = -1;
	size_t plen, olen, n = 0;
	ssize_t len;

	if (!options)
		options = "";
	plen = strlen(agent_path);
	olen = strlen(options);
	if (agent_path[0] != '/' || plen > ATTACH_ARG_MAX || olen > ATTACH_ARG_MAX) {
		snprintf(err, err_size, "cannot load an agent into JVM pid %d: its path must be absolute, and path and "
			 "options at most %d bytes each", (int)t->pid, ATTACH_ARG_MAX);
		return -1;
	}

	n = protocol1_request(request, "load", (const char *const[]){ agent_path, "true", options });
	len = attach_request(t, request, n, "load", deadline, timeout_ms, &reply, err, err_size);
	if (len < 0)
		return len == JVM_LOAD_NOT_LIVE ? JVM_LOAD_NOT_LIVE : -1;
	if (attach__parse_reply(reply, (size_t)len, &rc, msg, sizeof(msg))) {
		snprintf(err, err_size, "JVM pid %d could not load the agent: %s", (int)t->pid, msg);
		/*
		 * Recent JDKs refuse a load before the live phase themselves
		 * (OpenJDK's test EarlyDynamicLoad expects this text), before the
		 * agent could say so: the JVM is still starting.
		 */
		if (strstr(msg, "only permitted in the live phase"))
			result = JVM_LOAD_NOT_LIVE;
		goto out;
	}
	if (rc == JBPF_AGENT_NOT_LIVE) {
		snprintf(err, err_size, "JVM pid %d is still starting (not in its live phase yet)", (int)t->pid);
		result = JVM_LOAD_NOT_LIVE;
		goto out;
	}
	if (rc) {
		snprintf(err, err_size, "the agent failed in JVM pid %d (Agent_OnAttach returned %d)", (int)t->pid, rc);
		goto out;
	}
	result = 0;
out:
	free(reply);
	return result;
}

int attach__jcmd(struct jvm_target *t, const char *command, int timeout_ms, char *err, size_t err_size)
{
	int64_t deadline = clock__monotonic_ms() + timeout_ms;
	char request[ATTACH_ARG_MAX + 32], *reply = NULL;
	size_t clen = strlen(command), n;
	ssize_t len;
	int result = -1;

	if (clen > ATTACH_ARG_MAX) {
		snprintf(err, err_size, "internal error: diagnostic command longer than %d bytes", ATTACH_ARG_MAX);
		return -1;
	}
	/* The command line, then two empty arguments. */
	n = protocol1_request(request, "jcmd", (const char *const[]){ command, "", "" });
	len = attach_request(t, request, n, "jcmd", deadline, timeout_ms, &reply, err, err_size);
	if (len < 0)
		return -1;
	/* The first line is the status; what follows is the command's output. */
	if (len >= 2 && reply[0] == '0' && reply[1] == '\n') {
		result = 0;
	} else {
		char msg[256];
		size_t m = 0;

		for (ssize_t i = 0; i < len && m + 1 < sizeof(msg); i++)
			msg[m++] = reply[i] >= 0x20 && reply[i] < 0x7f ? reply[i] : ' ';
		msg[m] = '\0';
		snprintf(err, err_size, "JVM pid %d refused the diagnostic command %s: %s", (int)t->pid, command, msg);
	}
	free(reply);
	return result;
}
