/*
 * load_error: libbpf's messages remembered, and the one line they make
 * after a failed load (contract in load_error.h).
 *
 * libbpf 1.1 reports a program the kernel refused as
 *
 *   libbpf: prog 'sample_cpu': BPF program load failed: Permission denied
 *   libbpf: prog 'sample_cpu': -- BEGIN PROG LOAD LOG --
 *   ...the verifier's log, possibly megabytes...
 *   -- END PROG LOAD LOG --
 *   libbpf: prog 'sample_cpu': failed to load: -13
 *   libbpf: failed to load object 'sample_bpf'
 *
 * (the log is one message, "%s" of the whole log), a kfunc the kernel
 * lacks as "libbpf: extern (func ksym) 'NAME': not found in kernel or
 * module BTFs" before any program loads, and each program, when its
 * object opens, at debug level as "libbpf: sec 'SECTION': found program
 * 'NAME' at insn offset ...". Each message is formatted into a stream
 * that hands its bytes over as they come, cut here into lines: a line
 * longer than LINE_BYTES is cut, and of the log only the tail is kept,
 * so memory stays fixed however long the log.
 *
 * The verifier says why at the end of its log; what comes before is the
 * path it took (instructions, "; source" lines, register states), and
 * after the reason come statistics. last_meaningful_lines skips both.
 */
#include "load_error.h"

#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <unistd.h>

/*
 * The tail of a verifier log kept: the reason is in the last lines, and a
 * log at the verifier's first level can run to megabytes (one line per
 * instruction on each path it walked).
 */
#define LOG_TAIL_BYTES (64 * 1024)
#define LINE_BYTES 1024 /* one libbpf line; a verifier line is at most a few hundred */
#define NAME_BYTES 128  /* a program's or an extern's name, a section */
#define MAX_SECTIONS 64 /* programs remembered from their objects' open: more than all of ours */
/* One verifier line quoted in a message: enough for any reason, short enough for one line of 512. */
#define QUOTED_BYTES 160

struct program_section {
	char program[NAME_BYTES];
	char section[NAME_BYTES]; /* "iter/bpf_map_elem", "perf_event": the program's type */
};

struct load_error_capture {
	char program[NAME_BYTES];     /* the last program libbpf said failed to load; "" if none */
	char log[2 * LOG_TAIL_BYTES]; /* its verifier log: at least its last LOG_TAIL_BYTES, whole lines */
	size_t log_len;
	bool in_log;                  /* between libbpf's BEGIN and END PROG LOAD LOG */
	char extern_name[NAME_BYTES]; /* the last extern not found in the kernel; "" if none */
	bool extern_is_func;          /* a kfunc, else a kernel variable */
	struct program_section sections[MAX_SECTIONS]; /* a ring, the newest at next_section - 1 */
	size_t next_section;
	char line[LINE_BYTES];        /* the line being assembled, cut at LINE_BYTES - 1 */
	size_t line_len;
	enum libbpf_print_level line_level; /* of the message the line is in */
};

static struct load_error_capture captured;
static pthread_mutex_t captured_lock = PTHREAD_MUTEX_INITIALIZER;
static int verbose_level;

void load_error__set_verbose(int level)
{
	verbose_level = level;
}

const struct load_error_capture *load_error__captured(void)
{
	return &captured;
}

static void forget_failure(struct load_error_capture *c)
{
	c->program[0] = '\0';
	c->log_len = 0;
	c->in_log = false;
	c->extern_name[0] = '\0';
}

void load_error__forget(void)
{
	pthread_mutex_lock(&captured_lock);
	forget_failure(&captured);
	pthread_mutex_unlock(&captured_lock);
}

/*
 * If line is prefix NAME suffix..., with NAME running to the next quote,
 * copies NAME into name (cut to name_size) and returns what follows
 * suffix; else NULL.
 */
static const char *match_quoted(const char *line, const char *prefix, const char *suffix, char *name,
				size_t name_size)
{
	size_t prefix_len = strlen(prefix), suffix_len = strlen(suffix);
	const char *start, *end;

	if (strncmp(line, prefix, prefix_len) != 0)
		return NULL;
	start = line + prefix_len;
	end = strchr(start, '\'');
	if (!end || strncmp(end, suffix, suffix_len) != 0)
		return NULL;
	snprintf(name, name_size, "%.*s", (int)(end - start), start);
	return end + suffix_len;
}

/* Appends one line of the log; past 2 * LOG_TAIL_BYTES, keeps the last LOG_TAIL_BYTES from a line's start. */
static void append_log_line(struct load_error_capture *c, const char *line, size_t len)
{
	if (c->log_len + len + 1 > sizeof(c->log)) {
		size_t from = c->log_len > LOG_TAIL_BYTES ? c->log_len - LOG_TAIL_BYTES : 0;

		while (from < c->log_len && c->log[from] != '\n')
			from++;
		if (from < c->log_len)
			from++;
		memmove(c->log, c->log + from, c->log_len - from);
		c->log_len -= from;
	}
	if (c->log_len + len + 1 > sizeof(c->log))
		return; /* a line longer than the tail: LINE_BYTES makes it impossible */
	memcpy(c->log + c->log_len, line, len);
	c->log_len += len;
	c->log[c->log_len++] = '\n';
}

static void remember_section(struct load_error_capture *c, const char *section, const char *program)
{
	struct program_section *s = &c->sections[c->next_section++ % MAX_SECTIONS];

	snprintf(s->program, sizeof(s->program), "%s", program);
	snprintf(s->section, sizeof(s->section), "%s", section);
}

static const char *section_of(const struct load_error_capture *c, const char *program)
{
	/* Newest first: an object opened again finds its own. */
	for (size_t i = 0; i < MAX_SECTIONS && i < c->next_section; i++) {
		const struct program_section *s = &c->sections[(c->next_section - 1 - i) % MAX_SECTIONS];

		if (strcmp(s->program, program) == 0)
			return s->section;
	}
	return NULL;
}

/* One whole line of libbpf's output (no newline), at the level of the message it came in. */
static void take_line(struct load_error_capture *c, const char *line, enum libbpf_print_level level)
{
	static const char libbpf_prefix[] = "libbpf: ";
	const char *end_marker, *rest;
	char name[NAME_BYTES], section[NAME_BYTES];

	if (c->in_log) {
		/* libbpf adds the marker right after the log, on its last line if the log lacks a newline. */
		end_marker = strstr(line, "-- END PROG LOAD LOG --");
		if (end_marker) {
			if (end_marker > line)
				append_log_line(c, line, (size_t)(end_marker - line));
			c->in_log = false;
		} else {
			append_log_line(c, line, strlen(line));
		}
		return;
	}
	if (strncmp(line, libbpf_prefix, sizeof(libbpf_prefix) - 1) == 0)
		line += sizeof(libbpf_prefix) - 1;

	if (level == LIBBPF_DEBUG) {
		rest = match_quoted(line, "sec '", "': found program '", section, sizeof(section));
		if (rest && match_quoted(rest, "", "' at insn offset", name, sizeof(name)))
			remember_section(c, section, name);
		return;
	}
	/* A failure is reported as a warning; a debug-level log is that of a program that loaded. */
	if (match_quoted(line, "prog '", "': BPF program load failed", name, sizeof(name))) {
		forget_failure(c);
		snprintf(c->program, sizeof(c->program), "%s", name);
	} else if (match_quoted(line, "prog '", "': -- BEGIN PROG LOAD LOG --", name, sizeof(name)) &&
		   strcmp(name, c->program) == 0) {
		c->log_len = 0;
		c->in_log = true;
	} else if (match_quoted(line, "extern (func ksym) '", "': not found in kernel", name, sizeof(name)) ||
		   match_quoted(line, "extern (var ksym) '", "': not found in kernel", name, sizeof(name))) {
		forget_failure(c);
		snprintf(c->extern_name, sizeof(c->extern_name), "%s", name);
		c->extern_is_func = strncmp(line, "extern (func", strlen("extern (func")) == 0;
	}
}

struct message {
	struct load_error_capture *capture;
	enum libbpf_print_level level;
};

/* The stream's write: bytes of one message, cut into lines. */
static ssize_t take_bytes(void *cookie, const char *buf, size_t size)
{
	struct message *m = cookie;
	struct load_error_capture *c = m->capture;

	for (size_t i = 0; i < size; i++) {
		if (c->line_len == 0)
			c->line_level = m->level;
		if (buf[i] == '\n') {
			c->line[c->line_len] = '\0';
			take_line(c, c->line, c->line_level);
			c->line_len = 0;
		} else if (c->line_len < sizeof(c->line) - 1) {
			c->line[c->line_len++] = buf[i];
		}
	}
	return (ssize_t)size;
}

int load_error__print(enum libbpf_print_level level, const char *format, va_list args)
{
	struct message message = { .capture = &captured, .level = level };
	cookie_io_functions_t io = { .write = take_bytes };
	int printed = 0;
	va_list copy;
	FILE *stream;

	if (verbose_level > 0 && (level != LIBBPF_DEBUG || verbose_level >= 2)) {
		va_copy(copy, args);
		printed = vfprintf(stderr, format, copy);
		va_end(copy);
	}
	pthread_mutex_lock(&captured_lock);
	stream = fopencookie(&message, "w", io);
	if (stream) {
		vfprintf(stream, format, args);
		fclose(stream);
	}
	pthread_mutex_unlock(&captured_lock);
	return printed;
}

uint64_t load_error__effective_caps(void)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &header, data))
		return 0;
	return data[0].effective | (uint64_t)data[1].effective << 32;
}

/* The message under construction: appends cut at the end of the buffer, which stays terminated. */
struct out {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *format, ...)
{
	va_list args;
	int n;

	if (o->len + 1 >= o->size)
		return;
	va_start(args, format);
	n = vsnprintf(o->buf + o->len, o->size - o->len, format, args);
	va_end(args);
	if (n > 0)
		o->len = o->len + (size_t)n < o->size ? o->len + (size_t)n : o->size - 1;
}

/* text in quotes, at most QUOTED_BYTES of it, with what the kernel wrote made printable. */
static void put_quoted(struct out *o, const char *text)
{
	char quoted[QUOTED_BYTES + 1];
	size_t len = 0;

	for (; *text && len < QUOTED_BYTES; text++)
		quoted[len++] = (unsigned char)*text < 0x20 || *text == 0x7f ? ' ' : *text;
	if (*text)
		memcpy(quoted + len - 3, "...", 3);
	quoted[len] = '\0';
	put(o, "\"%s\"", quoted);
}

static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{ LOAD_ERROR_CAP_BPF, "CAP_BPF" },
	{ LOAD_ERROR_CAP_PERFMON, "CAP_PERFMON" },
	{ LOAD_ERROR_CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
};

/* The capabilities of caps among ours, as "A", "A and B" or "A, B and C". */
static void put_caps(struct out *o, uint64_t caps)
{
	size_t n = 0, total = 0;

	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		total += (caps & LOAD_ERROR_CAP(cap_names[i].cap)) != 0;
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		if (!(caps & LOAD_ERROR_CAP(cap_names[i].cap)))
			continue;
		n++;
		put(o, "%s%s", n == 1 ? "" : n == total ? " and " : ", ", cap_names[i].name);
	}
}

/*
 * The capabilities the kernel wants for our programs and the process
 * lacks: CAP_BPF to load, CAP_PERFMON for tracing programs (Linux 5.8);
 * CAP_SYS_ADMIN stands for both. 0 when none is missing.
 */
static uint64_t missing_caps(uint64_t caps)
{
	uint64_t wanted = LOAD_ERROR_CAP(LOAD_ERROR_CAP_BPF) | LOAD_ERROR_CAP(LOAD_ERROR_CAP_PERFMON);

	if (caps & LOAD_ERROR_CAP(LOAD_ERROR_CAP_SYS_ADMIN))
		return 0;
	return wanted & ~caps;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "R7" and the like: the register a verifier line is about. Returns what follows, or NULL. */
static const char *after_register(const char *line)
{
	if (line[0] != 'R' || line[1] < '0' || line[1] > '9')
		return NULL;
	line++;
	while (*line >= '0' && *line <= '9')
		line++;
	return line;
}

/*
 * Whether a verifier line says something of its own rather than show the
 * path walked or count it: not an instruction ("12: (bf) r1 = r6") or a
 * state at one ("12: R0=..."), a "; source" line, a register state, the
 * walk between functions, or a statistic.
 */
static bool is_meaningful(const char *line)
{
	static const char *const noise[] = {
		"processed ",    "verification time", "stack depth ", "caller:",   "callee:",
		"returning from callee:", "to caller at ", "Validating ", "mark_precise:", "last_idx ",
		"regs=",         "parent didn't have", "propagating ",
	};
	const char *rest;

	if (line[0] == '\0' || line[0] == ';')
		return false;
	/* "12: ...", "from 12 to 15: ...", "frame1: R1=...": where the walk is, not why it stopped. */
	rest = line;
	if (starts_with(line, "from "))
		rest += strlen("from ");
	else if (starts_with(line, "frame"))
		rest += strlen("frame");
	if (*rest >= '0' && *rest <= '9') {
		while (*rest >= '0' && *rest <= '9')
			rest++;
		if (*rest == ':' || starts_with(rest, " to "))
			return false;
	}
	rest = after_register(line);
	if (rest && (*rest == '=' || *rest == '_'))
		return false;
	if (starts_with(line, "Func#") && strstr(line, " is safe for any args"))
		return false;
	if (starts_with(line, "func#") && strstr(line, " @")) /* "func#0 @0": where a function starts */
		return false;
	for (size_t i = 0; i < sizeof(noise) / sizeof(noise[0]); i++)
		if (starts_with(line, noise[i]))
			return false;
	return true;
}

/*
 * Whether a line only follows up the one before it: after "invalid
 * access to map value, value_size=8192 off=8200 size=8" the verifier adds
 * "R0 max value is outside of the allowed memory range", true of many a
 * bound; the reason is the pair.
 */
static bool is_follow_up(const char *line)
{
	static const char *const follow_ups[] = {
		" min value is outside of the allowed memory range",
		" max value is outside of the allowed memory range",
		" min value is negative",
		" unbounded memory access",
		" offset is outside of the packet",
	};
	const char *rest = after_register(line);

	for (size_t i = 0; rest && i < sizeof(follow_ups) / sizeof(follow_ups[0]); i++)
		if (starts_with(rest, follow_ups[i]))
			return true;
	return false;
}

/*
 * The log's last meaningful line, and the one before it when that is a
 * follow-up, into lines[0] (the earlier) and lines[1]; returns how many
 * (0 to 2). Lines are trimmed of surrounding blanks.
 */
static size_t last_meaningful_lines(const char *log, size_t len, char lines[2][LINE_BYTES])
{
	char found[2][LINE_BYTES];
	size_t nr = 0, pos = len;

	while (pos > 0 && nr < 2) {
		size_t end = log[pos - 1] == '\n' ? pos - 1 : pos, start = end;

		while (start > 0 && log[start - 1] != '\n')
			start--;
		pos = start;
		while (start < end && (log[start] == ' ' || log[start] == '\t'))
			start++;
		while (end > start && (log[end - 1] == ' ' || log[end - 1] == '\t' || log[end - 1] == '\r'))
			end--;
		if (end - start >= LINE_BYTES)
			end = start + LINE_BYTES - 1;
		snprintf(found[nr], LINE_BYTES, "%.*s", (int)(end - start), log + start);
		if (!is_meaningful(found[nr]))
			continue;
		nr++;
		if (nr == 1 && !is_follow_up(found[0]))
			break;
	}
	for (size_t i = 0; i < nr; i++)
		memcpy(lines[i], found[nr - 1 - i], LINE_BYTES);
	return nr;
}

static const char *error_text(int error)
{
	/* The kernel's ENOTSUPP, which no C library names. */
	return error == 524 ? "not supported (ENOTSUPP)" : strerror(error);
}

/* "Linux 6.1.0-56-amd64", or "the kernel" when the release is unknown. */
static void put_kernel(struct out *o, const char *kernel_release)
{
	if (kernel_release && kernel_release[0])
		put(o, "Linux %s", kernel_release);
	else
		put(o, "the kernel");
}

static void put_program(struct out *o, const struct load_error_capture *c)
{
	const char *section = section_of(c, c->program);

	put(o, "its program %s", c->program);
	if (section)
		put(o, " (%s)", section);
}

void load_error__compose(const struct load_error_capture *c, int error, const char *what,
			 const char *kernel_release, uint64_t caps, char *err, size_t err_size)
{
	struct out o = { .buf = err, .size = err_size, .len = 0 };
	char lines[2][LINE_BYTES];
	size_t nr_lines;

	if (!err_size)
		return;
	err[0] = '\0';
	nr_lines = last_meaningful_lines(c->log, c->log_len, lines);
	if (error == EPERM && missing_caps(caps)) {
		put(&o, "not permitted to load the %s: this process lacks ", what);
		put_caps(&o, missing_caps(caps));
		put(&o, " (and CAP_SYS_ADMIN, which would do instead); run as root or with CAP_BPF and CAP_PERFMON");
	} else if (error == EPERM) {
		put(&o, "cannot load the %s: ", what);
		put_kernel(&o, kernel_release);
		put(&o, " refused ");
		if (c->program[0])
			put_program(&o, c);
		else
			put(&o, "it");
		put(&o, " with EPERM although this process has ");
		put_caps(&o, caps);
		for (size_t i = 0; i < nr_lines; i++) {
			put(&o, i == 0 ? ", saying " : " then ");
			put_quoted(&o, lines[i]);
		}
		put(&o, "; a security policy (an LSM such as SELinux or AppArmor, a BPF LSM program, seccomp) likely "
			"forbids it, or the capabilities count only inside a user namespace");
	} else if (c->program[0] && c->log_len) {
		put(&o, "cannot load the %s: the verifier of ", what);
		put_kernel(&o, kernel_release);
		put(&o, " rejected its program %s", c->program);
		if (!nr_lines)
			put(&o, " (%s)", error_text(error));
		for (size_t i = 0; i < nr_lines; i++) {
			put(&o, i == 0 ? ": " : ", then ");
			put_quoted(&o, lines[i]);
		}
		put(&o, "; run with -v to see the verifier's whole log");
	} else if (c->extern_name[0]) {
		put(&o, "cannot load the %s: ", what);
		put_kernel(&o, kernel_release);
		put(&o, " lacks the kernel %s %s that it uses (in neither the kernel's BTF nor its modules')",
		    c->extern_is_func ? "function" : "variable", c->extern_name);
	} else if (c->program[0]) {
		put(&o, "cannot load the %s: ", what);
		put_kernel(&o, kernel_release);
		put(&o, " refused ");
		put_program(&o, c);
		put(&o, ": %s", error_text(error));
		if (error == EINVAL)
			put(&o, " (likely a program or attach type this kernel does not have)");
		else if (error == EACCES)
			put(&o, " without a verifier log (likely a security module such as SELinux)");
		put(&o, "; run with -v to see libbpf's messages");
	} else {
		put(&o, "cannot load the %s on ", what);
		put_kernel(&o, kernel_release);
		put(&o, ": %s; run with -v to see libbpf's messages", error_text(error));
	}
}

void load_error__strerror(int error, const char *what, char *err, size_t err_size)
{
	struct utsname u;
	uint64_t caps = load_error__effective_caps();

	if (uname(&u))
		u.release[0] = '\0';
	pthread_mutex_lock(&captured_lock);
	load_error__compose(&captured, error, what, u.release, caps, err, err_size);
	forget_failure(&captured);
	pthread_mutex_unlock(&captured_lock);
}
