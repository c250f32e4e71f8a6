/*
 * attach_parse: the attach client's pure parsers (contracts in attach.h):
 * the attach listener's reply, the java launcher's command line and the
 * JVM option variables, and the hsperfdata image. The status fields come
 * from symbolizer/proc.c, the one parser of /proc/PID/status. No I/O;
 * every input is hostile and bounded by its length.
 */
#include "user/java/attach.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "symbolizer/proc.h"

int attach__parse_status(const char *status_text, size_t len, pid_t *nspid, uid_t *uid, gid_t *gid)
{
	uint32_t ns, euid, egid;

	if (proc__parse_nspid(status_text, len, &ns) || proc__parse_ids(status_text, len, &euid, &egid))
		return -1;
	*nspid = (pid_t)ns;
	*uid = (uid_t)euid;
	*gid = (gid_t)egid;
	return 0;
}

int attach__status_catches(const char *status_text, size_t len, int sig)
{
	uint64_t mask;

	if (sig < 1 || sig > 64 || proc__parse_mask(status_text, len, "SigCgt:", &mask))
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

int attach__cmdline_disables(const char *cmdline, size_t len, int disabled)
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

int attach__options_disables(const char *options, size_t len, int disabled)
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

int attach__parse_perfdata(const void *image, size_t len, char *caps, size_t capslen)
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

int attach__parse_reply(const char *buf, size_t len, int *agent_rc, char *msg, size_t msglen)
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
