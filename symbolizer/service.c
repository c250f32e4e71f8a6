/*
 * service: a process's service and container (contract in service.h).
 */
#include "service.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runes.h"
#include "symbolizer/proc.h"

static bool service_rune_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       c == '-' || c == '/';
}

void service__sanitize(const char *in, char *out, size_t size)
{
	runes__replace(in, out, size, service_rune_ok);
}

/* java launcher options whose value is the next argument (JDK 8 to 25). */
static bool takes_value(const char *arg, size_t len)
{
	static const char *const options[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
		"--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
		"--patch-module", "--enable-native-access", "--source", "--describe-module", "-d",
	};

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (strlen(options[i]) == len && !memcmp(arg, options[i], len))
			return true;
	return false;
}

static bool arg_is(const char *arg, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(arg, word, len);
}

/* The part of arg[0..len) after its last sep, or all of it. */
static const char *last_part(const char *arg, size_t *len, char sep)
{
	const char *p = memrchr(arg, sep, *len);

	if (!p)
		return arg;
	*len -= (size_t)(p + 1 - arg);
	return p + 1;
}

/* Whether argv[0] names a java launcher: ".../java" (what jps itself would list). */
static bool is_java_launcher(const char *arg, size_t len)
{
	const char *base = last_part(arg, &len, '/');

	return arg_is(base, len, "java");
}

static void put(const char *s, size_t len, char *out, size_t size)
{
	char tmp[SERVICE_NAME_MAX + 1];

	if (len > SERVICE_NAME_MAX)
		len = SERVICE_NAME_MAX;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	service__sanitize(tmp, out, size);
}

static int java_program(const char *cmdline, size_t len, char *out, size_t size)
{
	const char *p = cmdline, *stop = cmdline + len;
	enum { LAUNCHER, OPTION, VALUE, JAR, MODULE } want = LAUNCHER;

	while (p < stop) {
		const char *nul = memchr(p, '\0', (size_t)(stop - p));
		size_t alen = nul ? (size_t)(nul - p) : (size_t)(stop - p);
		const char *name;

		switch (want) {
		case LAUNCHER:
			if (!is_java_launcher(p, alen))
				return 0;
			want = OPTION;
			break;
		case VALUE:
			want = OPTION;
			break;
		case JAR:
			name = last_part(p, &alen, '/');
			if (!alen)
				return 0;
			put(name, alen, out, size);
			return 1;
		case MODULE:
			/* MODULE/CLASS: the class; MODULE alone: the module. */
			name = last_part(p, &alen, '/');
			if (!alen)
				return 0;
			put(name, alen, out, size);
			return 1;
		case OPTION:
			if (arg_is(p, alen, "-jar")) {
				want = JAR;
			} else if (arg_is(p, alen, "-m") || arg_is(p, alen, "--module")) {
				want = MODULE;
			} else if (alen > 9 && !memcmp(p, "--module=", 9)) {
				size_t mlen = alen - 9;

				name = last_part(p + 9, &mlen, '/');
				if (!mlen)
					return 0;
				put(name, mlen, out, size);
				return 1;
			} else if (alen && p[0] == '-') {
				want = takes_value(p, alen) ? VALUE : OPTION;
			} else if (alen) {
				/* The main class, or a source file (java Hello.java: jps names it too by the file). */
				size_t clen = alen;

				name = p;
				if (clen > 5 && !memcmp(p + clen - 5, ".java", 5))
					name = last_part(p, &clen, '/');
				if (!clen)
					return 0;
				put(name, clen, out, size);
				return 1;
			} else {
				return 0;
			}
			break;
		}
		if (!nul)
			break;
		p = nul + 1;
	}
	return 0;
}

/* Whether base, a file name, is name followed only by a version ("python3.11"). */
static bool versioned(const char *base, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len < n || memcmp(base, name, n))
		return false;
	for (size_t i = n; i < len; i++)
		if (!((base[i] >= '0' && base[i] <= '9') || base[i] == '.'))
			return false;
	return true;
}

/* Whether argv[0] names an interpreter that takes a script as its first argument. */
static bool is_interpreter(const char *arg, size_t len)
{
	static const char *const names[] = { "python", "pypy", "node", "nodejs", "ruby", "perl", "php", "lua",
					     "bash", "sh", "dash", "zsh", "ksh" };
	const char *base = last_part(arg, &len, '/');

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (versioned(base, len, names[i]))
			return true;
	return false;
}

/*
 * An interpreter's script (its file name), or the module of python's -m.
 * Code given on the command line (-c, -e, -p and their kin) or read from
 * the standard input ("-") names no script.
 */
static int interpreter_program(const char *cmdline, size_t len, char *out, size_t size)
{
	static const char *const inline_code[] = { "-c", "-e", "-E", "--eval", "-p", "--print", "-" };
	static const char *const with_value[] = { "-W", "-X", "-r", "--require", "--import", "--loader", "-I",
						  "-o", "-O" };
	const char *p = cmdline, *stop = cmdline + len;
	enum { INTERPRETER, OPTION, VALUE, SCRIPT } want = INTERPRETER;

	while (p < stop) {
		const char *nul = memchr(p, '\0', (size_t)(stop - p));
		size_t alen = nul ? (size_t)(nul - p) : (size_t)(stop - p);
		const char *name;
		bool listed = false;

		switch (want) {
		case INTERPRETER:
			if (!is_interpreter(p, alen))
				return 0;
			want = OPTION;
			break;
		case VALUE:
			want = OPTION;
			break;
		case OPTION:
			for (size_t i = 0; i < sizeof(inline_code) / sizeof(inline_code[0]); i++)
				if (arg_is(p, alen, inline_code[i]))
					return 0;
			if (arg_is(p, alen, "-m") || arg_is(p, alen, "--")) {
				want = SCRIPT;
				break;
			}
			for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
				listed |= arg_is(p, alen, with_value[i]);
			if (listed) {
				want = VALUE;
				break;
			}
			if (alen && p[0] == '-')
				break;
			/* The first argument that is no option is the script. */
			__attribute__((fallthrough));
		case SCRIPT:
			name = last_part(p, &alen, '/');
			if (!alen)
				return 0;
			put(name, alen, out, size);
			return 1;
		}
		if (!nul)
			break;
		p = nul + 1;
	}
	return 0;
}

int service__from_cmdline(const char *cmdline, size_t len, char *out, size_t size)
{
	return java_program(cmdline, len, out, size) || interpreter_program(cmdline, len, out, size);
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * A path component that is, or holds, a container id: "ID", "docker-ID.scope",
 * "cri-containerd-ID.scope", "crio-ID.scope", "libpod-ID.scope". A
 * "crio-conmon-" or "libpod-conmon-" scope is the monitor, not the container.
 */
static bool component_id(const char *c, size_t n, char *out)
{
	static const char *const prefixes[] = { "", "docker-", "cri-containerd-", "crio-", "libpod-" };

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t plen = strlen(prefixes[i]);

		if (n == plen + SERVICE_CONTAINER_ID_LEN && !memcmp(c, prefixes[i], plen) &&
		    is_hex(c + plen, SERVICE_CONTAINER_ID_LEN)) {
			memcpy(out, c + plen, SERVICE_CONTAINER_ID_LEN);
			out[SERVICE_CONTAINER_ID_LEN] = '\0';
			return true;
		}
	}
	return false;
}

int service__container_id(const char *cgroup, size_t len, char *out, size_t size)
{
	const char *line = cgroup, *stop = cgroup + len;

	if (size < SERVICE_CONTAINER_ID_LEN + 1)
		return 0;
	/* Lines "hierarchy:controllers:path"; the innermost id of any path wins over none. */
	while (line < stop) {
		const char *eol = memchr(line, '\n', (size_t)(stop - line));
		const char *end = eol ? eol : stop;
		const char *path = memchr(line, ':', (size_t)(end - line));

		path = path ? memchr(path + 1, ':', (size_t)(end - path - 1)) : NULL;
		if (path) {
			const char *c = path + 1;
			bool found = false;

			while (c < end) {
				const char *slash = memchr(c, '/', (size_t)(end - c));
				const char *cend = slash ? slash : end;

				if (cend > c && component_id(c, (size_t)(cend - c), out))
					found = true; /* keep going: the innermost one names the container */
				c = cend + 1;
			}
			if (found)
				return 1;
		}
		line = end + 1;
	}
	return 0;
}

/* The executable's file name, from the /proc/PID/exe link: "" when it cannot be read. */
static void exe_name(const char *proc_root, uint32_t tgid, char *out, size_t size)
{
	char path[64], target[PATH_MAX];
	ssize_t n;
	size_t len;
	const char *base;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, tgid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	len = (size_t)n;
	if (len > 10 && !memcmp(target + len - 10, " (deleted)", 10))
		len -= 10;
	base = last_part(target, &len, '/');
	put(base, len, out, size);
}

void service__of_process(const char *proc_root, uint32_t tgid, const char *fallback, struct service_info *out)
{
	char dir[64], cgroup[PROC_SMALL_MAX];
	char *cmdline = NULL;
	long n;
	int dirfd;

	out->name[0] = '\0';
	out->from_cmdline = 0;
	out->container_id[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/%u", proc_root, tgid);
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd >= 0) {
		n = proc__read_alloc_at(dirfd, "cmdline", SERVICE_CMDLINE_MAX, &cmdline);
		if (n > 0)
			out->from_cmdline = service__from_cmdline(cmdline, (size_t)n, out->name, sizeof(out->name));
		free(cmdline);
		n = proc__read_small_at(dirfd, "cgroup", cgroup, sizeof(cgroup));
		if (n > 0)
			service__container_id(cgroup, (size_t)n, out->container_id, sizeof(out->container_id));
		close(dirfd);
	}
	if (!out->name[0])
		exe_name(proc_root, tgid, out->name, sizeof(out->name));
	if (!out->name[0])
		service__sanitize(fallback ? fallback : "", out->name, sizeof(out->name));
}
