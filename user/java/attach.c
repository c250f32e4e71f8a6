/*
 * attach: the HotSpot dynamic attach client and the target-filesystem
 * helpers (contract in attach.h).
 *
 * HotSpot on Linux starts its attach listener lazily. The client's side of
 * the handshake, with the JVM's view of the names (its /tmp is always
 * "/tmp", and <nspid> is its pid in its own pid namespace):
 *
 *   client                                   JVM
 *   ------                                   ---
 *   /tmp/.java_pid<nspid> a live socket? --- yes: skip to connect
 *   create /tmp/.attach_pid<nspid>,
 *     owned by the JVM's euid (or root)
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
 * The target is hostile: its /proc files are read with bounds, its /tmp
 * is reached only through the fd opened with RESOLVE_IN_ROOT, one name at
 * a time, and sockets are bound and connected through /proc/self/fd paths
 * (an absolute symlink in the target, followed from a path the profiler
 * builds, would resolve on the host).
 */
#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/random.h"
#include "symbolizer/lines.h"
#include "symbolizer/procmaps.h"

/* /proc/PID/status is about 1.5 KiB; 64 supplementary groups make it longer. */
#define STATUS_MAX 8192
/*
 * cmdline and environ: a single string is at most 128 KiB (MAX_ARG_STRLEN)
 * but a JVM's class path is often hundreds of KiB in many strings. Anything
 * past 4 MiB is not looked at.
 */
#define ARGS_MAX (4u << 20)
/* HotSpot's PerfDataMemorySize is 64 KiB by default (32 KiB on JDK 17). */
#define PERFDATA_MAX (1u << 20)
/* The kernel's MAX_PID_NS_LEVEL is 32: at most 33 NSpid fields. */
#define NSPID_MAX_FIELDS 33
/* Wait between checks for the attach socket: HotSpot sends no notice. */
#define SOCKET_POLL_FIRST_MS 2
#define SOCKET_POLL_MAX_MS 64
/* Names tried for the agent when its hashed name is taken by a stranger. */
#define INSTALL_ATTEMPTS 8

/* ---- small helpers ---- */

static int ms_left(int64_t deadline)
{
	int64_t left = deadline - clock_monotonic_ms();

	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* "5 s" or "2.5 s", for messages. */
static void format_seconds(char *buf, size_t size, int ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%d s", ms / 1000);
	else
		snprintf(buf, size, "%.1f s", ms / 1000.0);
}

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

/* Reads at most size bytes of fd; returns the count, or -1 with errno set. */
static ssize_t read_full(int fd, void *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = read(fd, (char *)buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

static int write_full(int fd, const void *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(fd, (const char *)buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0) {
			errno = EIO;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/*
 * Reads file name of the process directory dirfd, at most max bytes, into a
 * new NUL-terminated buffer. Returns the length, or -1 with errno set.
 */
static ssize_t read_proc_file(int dirfd, const char *name, size_t max, char **out)
{
	char *buf = malloc(max + 1);
	ssize_t n;
	int fd, saved;

	*out = NULL;
	if (!buf)
		return -1;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		free(buf);
		errno = saved;
		return -1;
	}
	n = read_full(fd, buf, max);
	saved = errno;
	close(fd);
	if (n < 0) {
		free(buf);
		errno = saved;
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	return n;
}

/* Removes name from dirfd only if it is still the inode *st describes. */
static void unlink_if_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;

	if (!fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == st->st_dev &&
	    now.st_ino == st->st_ino)
		unlinkat(dirfd, name, 0);
}

/* Whether the target has exited (its pidfd polls readable then). */
static int target_exited(const struct jvm_target *t, int timeout_ms)
{
	struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) > 0;
}

/* ---- parsers (pure) ---- */

/* Finds the line starting with key; returns what follows key, with *eol its end. */
static const char *find_line(const char *text, size_t len, const char *key, const char **eol)
{
	size_t klen = strlen(key);
	const char *p = text, *stop = text + len;

	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *end = nl ? nl : stop;

		if ((size_t)(end - p) >= klen && !memcmp(p, key, klen)) {
			*eol = end;
			return p + klen;
		}
		p = nl ? nl + 1 : stop;
	}
	return NULL;
}

/*
 * Parses the white-space separated decimal numbers in [p, end) into v.
 * Returns how many (0 to max), or -1 for anything else or more than max.
 */
static int parse_numbers(const char *p, const char *end, unsigned long long *v, int max)
{
	int n = 0;

	for (;;) {
		unsigned long long x = 0;
		int digits = 0;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			return n;
		if (n == max)
			return -1;
		for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits == 19)
				return -1;
			x = x * 10 + (unsigned long long)(*p - '0');
		}
		if (!digits || (p < end && *p != ' ' && *p != '\t'))
			return -1;
		v[n++] = x;
	}
}

int attach_parse_status(const char *status_text, size_t len, pid_t *nspid, uid_t *uid, gid_t *gid)
{
	unsigned long long ns[NSPID_MAX_FIELDS], u[4], g[4];
	const char *p, *eol;
	int n;

	p = find_line(status_text, len, "NSpid:", &eol);
	if (!p || (n = parse_numbers(p, eol, ns, NSPID_MAX_FIELDS)) < 1 || ns[n - 1] == 0 ||
	    ns[n - 1] > INT_MAX)
		return -1;
	p = find_line(status_text, len, "Uid:", &eol);
	if (!p || parse_numbers(p, eol, u, 4) != 4 || u[1] >= UINT32_MAX)
		return -1;
	p = find_line(status_text, len, "Gid:", &eol);
	if (!p || parse_numbers(p, eol, g, 4) != 4 || g[1] >= UINT32_MAX)
		return -1;
	*nspid = (pid_t)ns[n - 1];
	*uid = (uid_t)u[1];
	*gid = (gid_t)g[1];
	return 0;
}

int attach_status_catches(const char *status_text, size_t len, int sig)
{
	const char *p, *eol, *q;
	char hex[24];
	uint64_t mask;
	size_t n;

	if (sig < 1 || sig > 64)
		return -1;
	q = hex;
	p = find_line(status_text, len, "SigCgt:", &eol);
	if (!p)
		return -1;
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	/* lines__parse_hex wants a NUL after the digits; the line must hold nothing else. */
	n = (size_t)(eol - p);
	if (n == 0 || n >= sizeof(hex))
		return -1;
	memcpy(hex, p, n);
	hex[n] = '\0';
	if (lines__parse_hex(&q, 16, &mask) || *q)
		return -1;
	return (int)(mask >> (sig - 1) & 1);
}

/* -1 if arg is not the flag, else the state it sets. */
static int disable_flag(const char *arg, size_t len)
{
	static const char on[] = "-XX:+DisableAttachMechanism", off[] = "-XX:-DisableAttachMechanism";

	if (len == sizeof(on) - 1 && !memcmp(arg, on, len))
		return 1;
	if (len == sizeof(off) - 1 && !memcmp(arg, off, len))
		return 0;
	return -1;
}

/* java launcher options whose value is the next argument (JDK 8 to 25). */
static int takes_value(const char *arg)
{
	static const char *const options[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
		"--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
		"--patch-module", "--enable-native-access", "--source", "--describe-module", "-d",
	};

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (!strcmp(arg, options[i]))
			return 1;
	return 0;
}

int attach_cmdline_disables(const char *cmdline, size_t len, int disabled)
{
	const char *p = cmdline, *stop = cmdline + len;
	int first = 1, value_next = 0, last_next = 0;

	while (p < stop) {
		const char *nul = memchr(p, '\0', (size_t)(stop - p));
		size_t alen = nul ? (size_t)(nul - p) : (size_t)(stop - p);
		char arg[32];
		int flag;

		if (first) {
			first = 0; /* argv[0], the launcher */
		} else if (value_next) {
			value_next = 0;
		} else if (last_next) {
			break; /* what follows -jar JAR or -m MODULE is the program's */
		} else if (!alen || p[0] != '-') {
			break; /* the main class (or source file) */
		} else if ((flag = disable_flag(p, alen)) >= 0) {
			disabled = flag;
		} else if (alen < sizeof(arg)) {
			memcpy(arg, p, alen);
			arg[alen] = '\0';
			if (!strcmp(arg, "-jar") || !strcmp(arg, "-m") || !strcmp(arg, "--module"))
				last_next = 1;
			else if (!strncmp(arg, "--module=", 9))
				break;
			else
				value_next = takes_value(arg);
		}
		if (!nul)
			break;
		p = nul + 1;
	}
	return disabled;
}

int attach_options_disables(const char *options, size_t len, int disabled)
{
	const char *p = options, *stop = options + len;

	for (;;) {
		const char *start;
		size_t n;
		int flag;

		while (p < stop && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p == stop)
			return disabled;
		start = p;
		while (p < stop && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		n = (size_t)(p - start);
		if (n >= 2 && (start[0] == '"' || start[0] == '\'') && start[n - 1] == start[0]) {
			start++;
			n -= 2;
		}
		flag = disable_flag(start, n);
		if (flag >= 0)
			disabled = flag;
	}
}

/*
 * hsperfdata layout (HotSpot perfMemory.hpp): a 32-byte prologue, then
 * entries. Integers are in the byte order the prologue names.
 *
 *   prologue: u32 magic 0xcafec0c0 (big-endian bytes), u8 byte_order (0 big,
 *             1 little), u8 major, u8 minor, u8 accessible, i32 used,
 *             i32 overflow, i64 mod_time_stamp, i32 entry_offset,
 *             i32 num_entries
 *   entry:    i32 entry_length, i32 name_offset, i32 vector_length,
 *             u8 data_type ('B' for byte arrays: strings), u8 flags,
 *             u8 data_units, u8 data_variability, i32 data_offset;
 *             offsets are from the entry's start
 */
#define PERFDATA_PROLOGUE_SIZE 32
#define PERFDATA_ENTRY_SIZE 20
/* A JDK 25 JVM has about 200 entries. */
#define PERFDATA_MAX_ENTRIES 65536

static uint32_t perfdata_u32(const unsigned char *p, int little)
{
	if (little)
		return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

int attach_parse_perfdata(const void *image, size_t len, char *caps, size_t capslen)
{
	static const char key[] = "sun.rt.jvmCapabilities";
	const unsigned char *b = image;
	uint32_t nr, i;
	size_t off;
	int little;

	if (!capslen || len < PERFDATA_PROLOGUE_SIZE || memcmp(b, "\xca\xfe\xc0\xc0", 4) || b[4] > 1)
		return -1;
	little = b[4] == 1;
	off = perfdata_u32(b + 24, little);
	nr = perfdata_u32(b + 28, little);
	if (nr > PERFDATA_MAX_ENTRIES)
		return -1;
	for (i = 0; i < nr; i++) {
		const unsigned char *e = b + off;
		uint32_t elen, name_off, vlen, data_off;
		const unsigned char *name, *nul;

		if (off > len || len - off < PERFDATA_ENTRY_SIZE)
			return -1;
		elen = perfdata_u32(e, little);
		name_off = perfdata_u32(e + 4, little);
		vlen = perfdata_u32(e + 8, little);
		data_off = perfdata_u32(e + 16, little);
		if (elen < PERFDATA_ENTRY_SIZE || elen > len - off || name_off >= elen)
			return -1;
		name = e + name_off;
		nul = memchr(name, '\0', elen - name_off);
		if (!nul)
			return -1;
		if ((size_t)(nul - name) == sizeof(key) - 1 && !memcmp(name, key, sizeof(key) - 1) && e[12] == 'B') {
			size_t n;

			if (data_off > elen || vlen > elen - data_off)
				return -1;
			n = strnlen((const char *)e + data_off, vlen);
			if (n >= capslen)
				n = capslen - 1;
			memcpy(caps, e + data_off, n);
			caps[n] = '\0';
			return 0;
		}
		off += elen;
	}
	return -1;
}

/*
 * Copies [p, end) into msg as one printable ASCII line: line breaks
 * become spaces, other control and non-ASCII bytes '?', runs of blanks
 * one space; "..." marks a cut.
 */
static void one_line(const char *p, const char *end, char *msg, size_t msglen)
{
	size_t n = 0;
	int space = 1; /* drops leading blanks */

	if (!msglen)
		return;
	for (; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
			if (space)
				continue;
			c = ' ';
			space = 1;
		} else {
			/* Controls, and any byte of a multibyte sequence (C1 controls among them). */
			if (c < 0x20 || c >= 0x7f)
				c = '?';
			space = 0;
		}
		if (n + 1 >= msglen) {
			if (msglen > 4)
				memcpy(msg + msglen - 4, "...", 3);
			n = msglen - 1;
			break;
		}
		msg[n++] = (char)c;
	}
	while (n && msg[n - 1] == ' ')
		n--;
	msg[n] = '\0';
}

/* Parses an optional '-' and 1 to 10 digits making up all of [p, end) into an int. */
static int parse_int(const char *p, const char *end, int *out)
{
	long long v = 0;
	int neg = 0, digits = 0;

	while (end > p && (end[-1] == ' ' || end[-1] == '\r'))
		end--;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end; p++, digits++) {
		if (*p < '0' || *p > '9' || digits == 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (!digits || (neg ? -v < INT_MIN : v > INT_MAX))
		return -1;
	*out = (int)(neg ? -v : v);
	return 0;
}

int attach_parse_reply(const char *buf, size_t len, int *agent_rc, char *msg, size_t msglen)
{
	const char *end = buf + len, *nl, *rest, *line;
	int status, rc;

	if (msglen)
		msg[0] = '\0';
	if (len == 0) {
		snprintf(msg, msglen, "the JVM closed the connection without a reply (its log may say why)");
		return -1;
	}
	if (len > ATTACH_REPLY_MAX) {
		snprintf(msg, msglen, "the reply is longer than %d bytes", ATTACH_REPLY_MAX);
		return -1;
	}
	nl = memchr(buf, '\n', len);
	rest = nl ? nl + 1 : end;
	if (parse_int(buf, nl ? nl : end, &status)) {
		char text[160];

		one_line(buf, end, text, sizeof(text));
		snprintf(msg, msglen, "unrecognised reply \"%s\"", text);
		return -1;
	}
	if (status != 0) {
		one_line(rest, end, msg, msglen);
		if (msglen && !msg[0])
			snprintf(msg, msglen, "status %d, no message", status);
		return -1;
	}
	/* JDK 9+: a "return code: N" line; JDK 8: N alone on the second line. */
	for (line = rest; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		static const char key[] = "return code: ";

		if (!eol)
			eol = end;
		if (((size_t)(eol - line) > sizeof(key) - 1 && !memcmp(line, key, sizeof(key) - 1) &&
		     !parse_int(line + sizeof(key) - 1, eol, &rc)) ||
		    (line == rest && !parse_int(line, eol, &rc))) {
			size_t used;

			/* The other text, for warnings the JVM may add. */
			one_line(rest, line, msg, msglen);
			used = msglen ? strlen(msg) : 0;
			if (eol < end && used + 2 < msglen) {
				if (used)
					msg[used++] = ' ';
				one_line(eol, end, msg + used, msglen - used);
			}
			*agent_rc = rc;
			return 0;
		}
		line = eol + 1;
	}
	one_line(rest, end, msg, msglen);
	if (msglen && !msg[0])
		snprintf(msg, msglen, "the reply has no agent return code");
	return -1;
}

/* ---- the target's ids ---- */

struct saved_ids {
	uid_t euid;
	gid_t egid;
	int dumpable;
	int changed;
};

/*
 * Makes the calling thread's effective uid and gid the target's. Raw
 * system calls, because glibc's seteuid changes every thread of the
 * process; the real and saved ids stay root's, which is what makes
 * leave_target_ids unable to fail. The kernel clears the dumpable flag on
 * each change of effective id; it is put back after.
 */
static int enter_target_ids(const struct jvm_target *t, struct saved_ids *s, char *err, size_t errlen)
{
	s->euid = geteuid();
	s->egid = getegid();
	s->changed = 0;
	if (s->euid == t->uid && s->egid == t->gid)
		return 0;
	s->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (syscall(SYS_setresgid, -1, t->gid, -1)) {
		snprintf(err, errlen, "cannot take the group id %u of JVM pid %d: %s (jbpfprof must run as root)",
			 (unsigned)t->gid, (int)t->pid, strerror(errno));
		return -1;
	}
	if (syscall(SYS_setresuid, -1, t->uid, -1)) {
		int saved = errno;

		if (syscall(SYS_setresgid, -1, s->egid, -1))
			abort();
		snprintf(err, errlen, "cannot take the user id %u of JVM pid %d: %s (jbpfprof must run as root)",
			 (unsigned)t->uid, (int)t->pid, strerror(saved));
		return -1;
	}
	s->changed = 1;
	return 0;
}

static void leave_target_ids(const struct saved_ids *s)
{
	int saved = errno;

	if (!s->changed)
		return;
	/*
	 * Cannot fail: the saved uid is still root's. Should it anyway, going on
	 * as the JVM's user would be worse than stopping.
	 */
	if (syscall(SYS_setresuid, -1, s->euid, -1) || syscall(SYS_setresgid, -1, s->egid, -1)) {
		fprintf(stderr, "jbpfprof: cannot restore its own user id after attaching: %s\n", strerror(errno));
		abort();
	}
	if (s->dumpable > 0)
		prctl(PR_SET_DUMPABLE, s->dumpable, 0, 0, 0);
	errno = saved;
}

/* ---- jvm_target_open ---- */

void jvm_target_close(struct jvm_target *t)
{
	if (!t)
		return;
	if (t->tmp_fd >= 0)
		close(t->tmp_fd);
	if (t->proc_fd >= 0)
		close(t->proc_fd);
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->tmp_fd = t->proc_fd = t->pidfd = -1;
}

/* The first value of NAME=... in a NUL-separated environment, or NULL. */
static const char *env_value(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nlen = strlen(name);
	const char *p = env, *stop = env + len;

	while (p < stop) {
		const char *nul = memchr(p, '\0', (size_t)(stop - p));
		const char *end = nul ? nul : stop;

		if ((size_t)(end - p) > nlen && !memcmp(p, name, nlen) && p[nlen] == '=') {
			*vlen = (size_t)(end - p - nlen - 1);
			return p + nlen + 1;
		}
		p = nul ? nul + 1 : stop;
	}
	return NULL;
}

/* What the JVM was told about attach, in the order it reads its options. */
static int options_disable_attach(const struct jvm_target *t)
{
	char *cmdline = NULL, *env = NULL;
	ssize_t clen, elen;
	const char *v;
	size_t vlen;
	int disabled = 0;

	clen = read_proc_file(t->proc_fd, "cmdline", ARGS_MAX, &cmdline);
	elen = read_proc_file(t->proc_fd, "environ", ARGS_MAX, &env);
	if (elen > 0 && (v = env_value(env, (size_t)elen, "JAVA_TOOL_OPTIONS", &vlen)))
		disabled = attach_options_disables(v, vlen, disabled);
	if (elen > 0 && (v = env_value(env, (size_t)elen, "JDK_JAVA_OPTIONS", &vlen)))
		disabled = attach_options_disables(v, vlen, disabled);
	if (clen > 0)
		disabled = attach_cmdline_disables(cmdline, (size_t)clen, disabled);
	if (elen > 0 && (v = env_value(env, (size_t)elen, "_JAVA_OPTIONS", &vlen)))
		disabled = attach_options_disables(v, vlen, disabled);
	free(cmdline);
	free(env);
	return disabled;
}

struct maps_scan {
	int jvm;                    /* maps libjvm.so */
	uint64_t perf_start, perf_end; /* the hsperfdata mapping, if any */
};

static int is_basename(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');

	return slash && !strcmp(slash + 1, name);
}

static int scan_maps(const struct jvm_target *t, struct maps_scan *scan)
{
	char line[PROCMAPS_MAX_PATH + 256], perfname[16];
	size_t consumed = 0, lines = 0;
	FILE *f;
	long n;
	int fd;

	memset(scan, 0, sizeof(*scan));
	snprintf(perfname, sizeof(perfname), "%d", (int)t->nspid);
	fd = openat(t->proc_fd, "maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -1;
	}
	/* Malformed and overlong lines are skipped; the kernel bounds the count. */
	while ((n = lines__next(f, line, sizeof(line), &consumed)) != 0 && lines++ < 2 * PROCMAPS_MAX_ENTRIES) {
		struct procmaps_entry e;

		if (n < 0 || procmaps__parse_line(line, &e))
			continue;
		if (e.kind == PROCMAPS_FILE && e.path) {
			if (is_basename(e.path, "libjvm.so"))
				scan->jvm = 1;
			else if (!scan->perf_end && strstr(e.path, "/hsperfdata_") && is_basename(e.path, perfname)) {
				scan->perf_start = e.start;
				scan->perf_end = e.end;
			}
		}
		free(e.path);
	}
	fclose(f);
	return 0;
}

/*
 * The JVM's own answer, from the hsperfdata file it maps (read through
 * map_files, so it is that very file): 1 disabled, 0 enabled, -1 unknown
 * (-XX:-UsePerfData, or no CAP_SYS_ADMIN for map_files).
 */
static int perfdata_disables_attach(const struct jvm_target *t, const struct maps_scan *scan)
{
	char name[64], caps[8], *image = NULL;
	struct stat st;
	ssize_t len;
	int fd, result = -1;

	if (!scan->perf_end)
		return -1;
	snprintf(name, sizeof(name), "map_files/%llx-%llx", (unsigned long long)scan->perf_start,
		 (unsigned long long)scan->perf_end);
	fd = openat(t->proc_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != t->uid || !(image = malloc(PERFDATA_MAX)))
		goto out;
	len = read_full(fd, image, PERFDATA_MAX);
	if (len > 0 && !attach_parse_perfdata(image, (size_t)len, caps, sizeof(caps)) && caps[0])
		result = caps[0] == '0';
out:
	free(image);
	close(fd);
	return result;
}

static int open_target_tmp(struct jvm_target *t, char *err, size_t errlen)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root = openat(t->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0) {
		snprintf(err, errlen, "cannot open the root directory of JVM pid %d (/proc/%d/root): %s", (int)t->pid,
			 (int)t->pid, strerror(errno));
		return -1;
	}
	t->tmp_fd = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	/* Before Linux 5.6: one component, not followed if it is a symlink, stays inside too. */
	if (t->tmp_fd < 0 && errno == ENOSYS)
		t->tmp_fd = openat(root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->tmp_fd < 0) {
		snprintf(err, errlen, "cannot open /tmp of JVM pid %d (through /proc/%d/root): %s; HotSpot attaches "
			 "only through its /tmp", (int)t->pid, (int)t->pid, strerror(errno));
		close(root);
		return -1;
	}
	close(root);
	return 0;
}

/* pidfd_open refuses a thread that is not its process's leader (EINVAL; ENOENT since 6.9). */
static void describe_thread(pid_t pid, char *err, size_t errlen)
{
	unsigned long long tgid;
	char path[32], *status = NULL;
	const char *p, *eol;
	ssize_t len = -1;
	int dirfd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0) {
		len = read_proc_file(dirfd, "status", STATUS_MAX, &status);
		close(dirfd);
	}
	if (len > 0 && (p = find_line(status, (size_t)len, "Tgid:", &eol)) && parse_numbers(p, eol, &tgid, 1) == 1)
		snprintf(err, errlen, "pid %d is a thread of process %llu: name the process", (int)pid, tgid);
	else
		snprintf(err, errlen, "pid %d is not a process (a thread that has exited?)", (int)pid);
	free(status);
}

int jvm_target_open(pid_t pid, struct jvm_target *t, char *err, size_t errlen)
{
	char path[32], *status = NULL;
	unsigned long long tgid;
	struct maps_scan scan;
	const char *p, *eol;
	ssize_t len;
	int disabled, answer, result = -1;

	*t = (struct jvm_target){ .pid = pid, .tmp_fd = -1, .pidfd = -1, .proc_fd = -1 };
	if (pid <= 0) {
		snprintf(err, errlen, "invalid pid %d", (int)pid);
		return -1;
	}
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		if (errno == ESRCH)
			snprintf(err, errlen, "no process with PID %d (is it running? check with ps -p %d)", (int)pid,
				 (int)pid);
		else if (errno == EINVAL || errno == ENOENT)
			describe_thread(pid, err, errlen);
		else
			snprintf(err, errlen, "cannot open process %d (pidfd_open): %s", (int)pid, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	t->proc_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Alive after /proc/PID was opened: both name the same process, not a reuse of its pid. */
	if (t->proc_fd < 0 || target_exited(t, 0)) {
		snprintf(err, errlen, "no process with PID %d (it has exited)", (int)pid);
		goto fail;
	}
	len = read_proc_file(t->proc_fd, "status", STATUS_MAX, &status);
	if (len < 0) {
		snprintf(err, errlen, "cannot read /proc/%d/status: %s", (int)pid, strerror(errno));
		goto fail;
	}
	p = find_line(status, (size_t)len, "Tgid:", &eol);
	if (!p || parse_numbers(p, eol, &tgid, 1) != 1 ||
	    attach_parse_status(status, (size_t)len, &t->nspid, &t->uid, &t->gid)) {
		snprintf(err, errlen, "cannot parse /proc/%d/status (no Tgid, NSpid, Uid or Gid line)", (int)pid);
		goto fail;
	}
	if (tgid != (unsigned long long)pid) {
		snprintf(err, errlen, "pid %d is a thread of process %llu: name the process", (int)pid, tgid);
		goto fail;
	}
	if (scan_maps(t, &scan)) {
		snprintf(err, errlen, "cannot read /proc/%d/maps: %s (jbpfprof needs root with ptrace access to the "
			 "process)", (int)pid, strerror(errno));
		goto fail;
	}
	if (!scan.jvm) {
		snprintf(err, errlen, "pid %d is not a Java virtual machine (no libjvm.so in its memory maps)",
			 (int)pid);
		result = JVM_TARGET_NOT_JVM;
		goto fail;
	}
	disabled = options_disable_attach(t);
	answer = perfdata_disables_attach(t, &scan);
	if (answer >= 0)
		disabled = answer;
	if (disabled) {
		snprintf(err, errlen, "attach is disabled in JVM pid %d (-XX:+DisableAttachMechanism)", (int)pid);
		goto fail;
	}
	if (open_target_tmp(t, err, errlen))
		goto fail;
	free(status);
	return 0;
fail:
	free(status);
	jvm_target_close(t);
	return result;
}

/* ---- jvm_install_agent ---- */

/* Whether fd is a file only root can change holding exactly image. */
static int same_trusted_content(int fd, const void *image, size_t size)
{
	char buf[65536];
	struct stat st;
	size_t off = 0;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    st.st_size < 0 || (uint64_t)st.st_size != size)
		return 0;
	while (off < size) {
		size_t want = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t n = read_full(fd, buf, want);

		if (n != (ssize_t)want || memcmp(buf, (const char *)image + off, want))
			return 0;
		off += want;
	}
	return 1;
}

/* Creates name with image in it. 0, -1 with errno (EEXIST: name is taken). */
static int create_agent_file(int dirfd, const char *name, const void *image, size_t size)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	struct stat st;
	int saved;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		saved = errno;
		close(fd);
		unlinkat(dirfd, name, 0);
		errno = saved;
		return -1;
	}
	/* The mode is exact whatever the umask: the JVM may run as any user. */
	if (fchmod(fd, 0644) || write_full(fd, image, size) || fsync(fd)) {
		saved = errno;
		close(fd);
		unlink_if_same(dirfd, name, &st);
		errno = saved == EEXIST ? EIO : saved;
		return -1;
	}
	close(fd);
	return 0;
}

int jvm_install_agent(struct jvm_target *t, const void *image, size_t size, char *path, size_t pathlen, char *err,
		      size_t errlen)
{
	unsigned long long hash = (unsigned long long)content_hash(image, size);
	char name[64];
	int fd, i;

	snprintf(name, sizeof(name), "jbpfagent-%016llx.so", hash);
	if (pathlen < sizeof("/tmp/") + strlen(name) + 10) {
		snprintf(err, errlen, "internal error: agent path buffer too small");
		return -1;
	}
	if (!create_agent_file(t->tmp_fd, name, image, size))
		goto done;
	if (errno != EEXIST)
		goto fail;
	/* Someone's file by that name: ours from an earlier run, or a stranger's. */
	fd = openat(t->tmp_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		int same = same_trusted_content(fd, image, size);

		close(fd);
		if (same)
			goto done;
	}
	for (i = 0; i < INSTALL_ATTEMPTS; i++) {
		snprintf(name, sizeof(name), "jbpfagent-%016llx-%08x.so", hash, (unsigned)random_u64());
		if (!create_agent_file(t->tmp_fd, name, image, size))
			goto done;
		if (errno != EEXIST)
			goto fail;
	}
fail:
	snprintf(err, errlen, "cannot write the agent into /tmp of JVM pid %d: %s (is its /tmp full or read-only?)",
		 (int)t->pid, strerror(errno));
	return -1;
done:
	snprintf(path, pathlen, "/tmp/%s", name);
	return 0;
}

/* ---- jvm_listen, jvm_accept ---- */

int jvm_listen(struct jvm_target *t, char *path, size_t pathlen, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct saved_ids ids;
	char name[64];
	struct stat st;
	mode_t old_umask;
	int fd, rc, saved;

	snprintf(name, sizeof(name), "jbpfprof-%016llx.sock", (unsigned long long)random_u64());
	if ((size_t)snprintf(path, pathlen, "/tmp/%s", name) >= pathlen) {
		snprintf(err, errlen, "internal error: socket path buffer too small");
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", t->tmp_fd, name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a Unix socket: %s", strerror(errno));
		return -1;
	}
	/* Linux takes a socket file's mode from the socket's inode, less the umask: 0600 either way. */
	fchmod(fd, 0600);
	old_umask = umask(077);
	if (enter_target_ids(t, &ids, err, errlen)) {
		umask(old_umask);
		close(fd);
		return -1;
	}
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	saved = errno;
	leave_target_ids(&ids);
	umask(old_umask);
	if (rc) {
		snprintf(err, errlen, "cannot create a socket in /tmp of JVM pid %d as its user %u: %s", (int)t->pid,
			 (unsigned)t->uid, strerror(saved));
		close(fd);
		return -1;
	}
	if (fstatat(t->tmp_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode) || st.st_uid != t->uid ||
	    (st.st_mode & 07777) != 0600) {
		snprintf(err, errlen, "the socket created in /tmp of JVM pid %d is not a mode 0600 socket of uid %u",
			 (int)t->pid, (unsigned)t->uid);
		goto fail;
	}
	if (listen(fd, 8)) {
		snprintf(err, errlen, "cannot listen on %s in JVM pid %d's /tmp: %s", name, (int)t->pid,
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

void jvm_unlisten(struct jvm_target *t, int listen_fd, const char *path)
{
	if (listen_fd >= 0)
		close(listen_fd);
	unlink_socket(t, path);
}

int jvm_accept(struct jvm_target *t, int listen_fd, const char *path, int timeout_ms, char *err, size_t errlen)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	unsigned refused = 0;
	char secs[16];

	for (;;) {
		struct pollfd p[2] = { { .fd = listen_fd, .events = POLLIN }, { .fd = t->pidfd, .events = POLLIN } };
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int left = ms_left(deadline), fd;

		if (!left)
			break;
		if (poll(p, 2, left) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "waiting for the agent in JVM pid %d: poll: %s", (int)t->pid,
				 strerror(errno));
			goto fail;
		}
		if (p[0].revents) {
			fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) && cred.pid == t->pid) {
				unlink_socket(t, path);
				return fd;
			}
			close(fd);
			refused++;
			continue;
		}
		if (p[1].revents) {
			snprintf(err, errlen, "JVM pid %d exited before its agent connected to jbpfprof", (int)t->pid);
			goto fail;
		}
	}
	format_seconds(secs, sizeof(secs), timeout_ms);
	snprintf(err, errlen, "the agent in JVM pid %d did not connect within %s%s (see the JVM's stderr)",
		 (int)t->pid, secs, refused ? "; connections from other processes were refused" : "");
fail:
	unlink_socket(t, path);
	return -1;
}

/* ---- jvm_load_agent ---- */

enum { SOCKET_ABSENT = -2 };

/*
 * Connects to the attach socket name in the target's /tmp: fd, -1 with err
 * set, or SOCKET_ABSENT when nothing usable is there (*found then says what
 * was, if anything, so that a replacement can be told from it).
 */
static int connect_attach_socket(struct jvm_target *t, const char *name, int64_t deadline, struct stat *found,
				 int *have_found, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int pfd, fd, rc, saved;
	struct saved_ids ids;

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
		snprintf(err, errlen, "cannot create a Unix socket: %s", strerror(errno));
		close(pfd);
		return -1;
	}
	/* The very inode checked above, whatever the name points to by now. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	for (;;) {
		if (enter_target_ids(t, &ids, err, errlen)) {
			rc = -1;
			break;
		}
		rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		saved = errno;
		leave_target_ids(&ids);
		if (!rc)
			break;
		/* A full backlog: the listener is busy with another client. */
		if (saved == EAGAIN && ms_left(deadline)) {
			poll(NULL, 0, 10);
			continue;
		}
		if (saved == ECONNREFUSED) {
			rc = SOCKET_ABSENT; /* a stale file: nobody listens */
			break;
		}
		snprintf(err, errlen, "cannot connect to the attach socket /tmp/%s of JVM pid %d: %s", name,
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

static int signal_target(const struct jvm_target *t, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
}

/*
 * Creates the trigger, signals, waits for a socket other than *stale (if
 * have_stale), removes the trigger.
 */
static int start_listener(struct jvm_target *t, const char *sock_name, const struct stat *stale, int have_stale,
			  int64_t deadline, int timeout_ms, char *err, size_t errlen)
{
	int64_t start = clock_monotonic_ms(), resend_at = start + timeout_ms / 2;
	int step = SOCKET_POLL_FIRST_MS, resent = 0, fd, catches, result = -1;
	char trigger[32], secs[16], *status = NULL;
	struct stat trig;
	ssize_t len;

	/* Without a handler SIGQUIT kills (-Xrs, or a JVM still starting). */
	len = read_proc_file(t->proc_fd, "status", STATUS_MAX, &status);
	catches = len > 0 ? attach_status_catches(status, (size_t)len, SIGQUIT) : -1;
	free(status);
	if (catches != 1) {
		snprintf(err, errlen, "JVM pid %d does not handle SIGQUIT (started with -Xrs, or still starting up), "
			 "so signalling it to attach would kill it; start it with -XX:+StartAttachListener", (int)t->pid);
		return -1;
	}
	snprintf(trigger, sizeof(trigger), ".attach_pid%d", (int)t->nspid);
	fd = openat(t->tmp_fd, trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left by a client that died, or planted: it means nothing now. */
		unlinkat(t->tmp_fd, trigger, 0);
		fd = openat(t->tmp_fd, trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create the attach trigger /tmp/%s of JVM pid %d: %s", trigger,
			 (int)t->pid, strerror(errno));
		return -1;
	}
	/* HotSpot honours a trigger owned by its own euid (or root in its user namespace). */
	if (fstat(fd, &trig)) {
		snprintf(err, errlen, "cannot stat the attach trigger /tmp/%s: %s", trigger, strerror(errno));
		close(fd);
		unlinkat(t->tmp_fd, trigger, 0);
		return -1;
	}
	if (fchown(fd, t->uid, t->gid)) {
		snprintf(err, errlen, "cannot hand the attach trigger /tmp/%s to uid %u of JVM pid %d: %s", trigger,
			 (unsigned)t->uid, (int)t->pid, strerror(errno));
		close(fd);
		goto out;
	}
	close(fd);
	if (signal_target(t, SIGQUIT)) {
		snprintf(err, errlen, "cannot signal JVM pid %d: %s", (int)t->pid, strerror(errno));
		goto out;
	}
	for (;;) {
		struct stat st;

		if (!fstatat(t->tmp_fd, sock_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISSOCK(st.st_mode) &&
		    st.st_uid == t->uid && !(have_stale && st.st_dev == stale->st_dev && st.st_ino == stale->st_ino)) {
			result = 0;
			break;
		}
		if (!ms_left(deadline)) {
			format_seconds(secs, sizeof(secs), timeout_ms);
			snprintf(err, errlen, "JVM pid %d did not open its attach socket within %s (is it hung, or is "
				 "attach disabled?)", (int)t->pid, secs);
			break;
		}
		/* jcmd signals once more half way, in case the first came too early. */
		if (!resent && clock_monotonic_ms() >= resend_at) {
			resent = 1;
			signal_target(t, SIGQUIT);
		}
		if (target_exited(t, step < ms_left(deadline) ? step : ms_left(deadline))) {
			snprintf(err, errlen, "JVM pid %d exited while jbpfprof was attaching to it", (int)t->pid);
			break;
		}
		if (step < SOCKET_POLL_MAX_MS)
			step *= 2;
	}
out:
	unlink_if_same(t->tmp_fd, trigger, &trig);
	return result;
}

/* Sends all of buf on the nonblocking fd before deadline. */
static int send_request(int fd, const char *buf, size_t len, int64_t deadline)
{
	size_t done = 0;

	while (done < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t n = send(fd, buf + done, len - done, MSG_NOSIGNAL);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (!ms_left(deadline) || poll(&p, 1, ms_left(deadline)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* Reads to EOF before deadline, at most max bytes; -1 with errno (EMSGSIZE: longer). */
static ssize_t read_reply(int fd, char *buf, size_t max, int64_t deadline)
{
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
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
		if (!ms_left(deadline) || poll(&p, 1, ms_left(deadline)) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

int jvm_load_agent(struct jvm_target *t, const char *agent_path, const char *options, int timeout_ms, char *err,
		   size_t errlen)
{
	int64_t deadline = clock_monotonic_ms() + timeout_ms;
	char sock_name[32], request[2 * ATTACH_ARG_MAX + 32], msg[512], secs[16];
	char *reply = NULL;
	struct stat stale = { 0 };
	int fd, have_stale, rc, result = -1;
	size_t plen, olen, n = 0;
	ssize_t len;

	if (!options)
		options = "";
	plen = strlen(agent_path);
	olen = strlen(options);
	if (agent_path[0] != '/' || plen > ATTACH_ARG_MAX || olen > ATTACH_ARG_MAX) {
		snprintf(err, errlen, "cannot load an agent into JVM pid %d: its path must be absolute, and path and "
			 "options at most %d bytes each", (int)t->pid, ATTACH_ARG_MAX);
		return -1;
	}
	snprintf(sock_name, sizeof(sock_name), ".java_pid%d", (int)t->nspid);
	fd = connect_attach_socket(t, sock_name, deadline, &stale, &have_stale, err, errlen);
	if (fd == SOCKET_ABSENT) {
		if (start_listener(t, sock_name, &stale, have_stale, deadline, timeout_ms, err, errlen))
			return -1;
		fd = connect_attach_socket(t, sock_name, deadline, &stale, &have_stale, err, errlen);
		if (fd == SOCKET_ABSENT)
			snprintf(err, errlen, "JVM pid %d opened its attach socket but does not accept connections on "
				 "it", (int)t->pid);
	}
	if (fd < 0)
		return -1;

	/* Protocol 1: version, command and three arguments, each NUL-terminated. */
	memcpy(request, "1\0load\0", 7);
	n = 7;
	memcpy(request + n, agent_path, plen + 1);
	n += plen + 1;
	memcpy(request + n, "true", 5);
	n += 5;
	memcpy(request + n, options, olen + 1);
	n += olen + 1;
	format_seconds(secs, sizeof(secs), timeout_ms);
	if (send_request(fd, request, n, deadline)) {
		snprintf(err, errlen, "cannot send the load request to JVM pid %d: %s", (int)t->pid,
			 errno == ETIMEDOUT ? "timed out" : strerror(errno));
		goto out;
	}
	reply = malloc(ATTACH_REPLY_MAX);
	if (!reply) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	len = read_reply(fd, reply, ATTACH_REPLY_MAX, deadline);
	if (len < 0) {
		if (errno == ETIMEDOUT)
			snprintf(err, errlen, "JVM pid %d did not answer the load request within %s (is it hung, or "
				 "is the agent's Agent_OnAttach still running?)", (int)t->pid, secs);
		else if (errno == EMSGSIZE)
			snprintf(err, errlen, "JVM pid %d sent a reply longer than %d bytes to the load request",
				 (int)t->pid, ATTACH_REPLY_MAX);
		else
			snprintf(err, errlen, "cannot read the reply of JVM pid %d: %s", (int)t->pid, strerror(errno));
		goto out;
	}
	if (attach_parse_reply(reply, (size_t)len, &rc, msg, sizeof(msg))) {
		snprintf(err, errlen, "JVM pid %d could not load the agent: %s", (int)t->pid, msg);
		goto out;
	}
	if (rc) {
		snprintf(err, errlen, "the agent failed in JVM pid %d (Agent_OnAttach returned %d)", (int)t->pid, rc);
		goto out;
	}
	result = 0;
out:
	free(reply);
	close(fd);
	return result;
}
