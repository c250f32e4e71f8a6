/*
 * attach_target: opening a target JVM for the attach client (contract in
 * attach.h, the files' roles in attach_internal.h).
 *
 * The profiler runs as root and the target is hostile: its /proc files
 * are read through symbolizer/proc.c, bounded, from the /proc/PID
 * directory opened while the pidfd showed the process alive (so a reused
 * pid is never read); its /tmp is reached only through the fd opened with
 * openat2(RESOLVE_IN_ROOT), which keeps a container's absolute symlinks
 * inside the container. The ids the JVM runs as (attach__enter_ids) are
 * taken by the calling thread alone, and always given back.
 */
#include "user/java/attach_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/clock.h"
#include "symbolizer/lines.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"

/*
 * cmdline and environ: a single string is at most 128 KiB (MAX_ARG_STRLEN)
 * but a JVM's class path is often hundreds of KiB in many strings. Anything
 * past 4 MiB is not looked at.
 */
#define ARGS_MAX (4u << 20)
/* HotSpot's PerfDataMemorySize is 64 KiB by default (32 KiB on JDK 17). */
#define PERFDATA_MAX (1u << 20)

/* ---- shared helpers (attach_internal.h) ---- */

int attach__ms_left(int64_t deadline)
{
	int64_t left = deadline - clock__monotonic_ms();

	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

void attach__format_seconds(char *buf, size_t size, int ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%d s", ms / 1000);
	else
		snprintf(buf, size, "%.1f s", ms / 1000.0);
}

ssize_t attach__read_full(int fd, void *buf, size_t size)
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

void attach__unlink_if_same(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;

	if (!fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == st->st_dev &&
	    now.st_ino == st->st_ino)
		unlinkat(dirfd, name, 0);
}

int attach__target_exited(const struct jvm_target *t, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = t->pidfd, .events = POLLIN }, { .fd = t->cancel_fd, .events = POLLIN } };

	return poll(p, 2, timeout_ms) > 0 && p[0].revents;
}

int attach__cancelled(const struct jvm_target *t)
{
	struct pollfd p = { .fd = t->cancel_fd, .events = POLLIN };

	return t->cancel_fd >= 0 && poll(&p, 1, 0) > 0;
}

int attach__wait(const struct jvm_target *t, int fd, short events, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = t->cancel_fd, .events = POLLIN } };
	int n = poll(p, 2, timeout_ms);

	if (n > 0 && p[1].revents) {
		errno = ECANCELED;
		return -1;
	}
	return n < 0 && errno == EINTR ? 0 : n;
}
/* ---- the target's ids ---- */

/*
 * Makes the calling thread's effective uid and gid the target's. Raw
 * system calls, because glibc's seteuid and setgroups change every thread
 * of the process; the real and saved ids stay root's, which is what makes
 * attach__leave_ids unable to fail. The groups go first, while the thread
 * is still root (CAP_SETGID), and come back last. The kernel clears the
 * dumpable flag on each change of effective id; it is put back after.
 */
int attach__enter_ids(const struct jvm_target *t, struct attach_saved_ids *s, char *err, size_t err_size)
{
	s->euid = geteuid();
	s->egid = getegid();
	s->changed = 0;
	s->ngroups = getgroups(ATTACH_MAX_GROUPS, s->groups);
	if (s->ngroups < 0) {
		snprintf(err, err_size, "jbpfprof has more than %d supplementary groups: run it with fewer to attach",
			 ATTACH_MAX_GROUPS);
		return -1;
	}
	if (s->euid == t->uid && s->egid == t->gid && s->ngroups == 0)
		return 0;
	s->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (syscall(SYS_setgroups, 0, NULL)) {
		snprintf(err, err_size, "cannot drop the supplementary groups to act as JVM pid %d: %s (jbpfprof must "
			 "run as root)", (int)t->pid, strerror(errno));
		return -1;
	}
	if (syscall(SYS_setresgid, -1, t->gid, -1)) {
		int saved = errno;

		if (syscall(SYS_setgroups, s->ngroups, s->groups))
			abort();
		snprintf(err, err_size, "cannot take the group id %u of JVM pid %d: %s (jbpfprof must run as root)",
			 (unsigned)t->gid, (int)t->pid, strerror(saved));
		return -1;
	}
	if (syscall(SYS_setresuid, -1, t->uid, -1)) {
		int saved = errno;

		if (syscall(SYS_setresgid, -1, s->egid, -1) || syscall(SYS_setgroups, s->ngroups, s->groups))
			abort();
		snprintf(err, err_size, "cannot take the user id %u of JVM pid %d: %s (jbpfprof must run as root)",
			 (unsigned)t->uid, (int)t->pid, strerror(saved));
		return -1;
	}
	s->changed = 1;
	return 0;
}

void attach__leave_ids(const struct attach_saved_ids *s)
{
	int saved = errno;

	if (!s->changed)
		return;
	/*
	 * Cannot fail: the saved uid is still root's, and root's uid brings
	 * back CAP_SETGID. Should it anyway, going on as the JVM's user would
	 * be worse than stopping.
	 */
	if (syscall(SYS_setresuid, -1, s->euid, -1) || syscall(SYS_setresgid, -1, s->egid, -1) ||
	    syscall(SYS_setgroups, s->ngroups, s->groups)) {
		fprintf(stderr, "jbpfprof: cannot restore its own user id after attaching: %s\n", strerror(errno));
		abort();
	}
	if (s->dumpable > 0)
		prctl(PR_SET_DUMPABLE, s->dumpable, 0, 0, 0);
	errno = saved;
}

/* ---- attach__target_open ---- */

void attach__target_close(struct jvm_target *t)
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

/* What the JVM was told about attach, in the order it reads its options. */
static int options_disable_attach(const struct jvm_target *t)
{
	char *cmdline = NULL, *env = NULL;
	long clen, elen;
	const char *v;
	size_t vlen;
	int disabled = 0;

	clen = proc__read_alloc_at(t->proc_fd, "cmdline", ARGS_MAX, &cmdline);
	elen = proc__read_alloc_at(t->proc_fd, "environ", ARGS_MAX, &env);
	if (elen > 0 && (v = proc__env_value(env, (size_t)elen, "JAVA_TOOL_OPTIONS", &vlen)))
		disabled = attach__options_disables(v, vlen, disabled);
	if (elen > 0 && (v = proc__env_value(env, (size_t)elen, "JDK_JAVA_OPTIONS", &vlen)))
		disabled = attach__options_disables(v, vlen, disabled);
	if (clen > 0)
		disabled = attach__cmdline_disables(cmdline, (size_t)clen, disabled);
	if (elen > 0 && (v = proc__env_value(env, (size_t)elen, "_JAVA_OPTIONS", &vlen)))
		disabled = attach__options_disables(v, vlen, disabled);
	free(cmdline);
	free(env);
	return disabled;
}

struct maps_scan {
	int jvm;                    /* maps libjvm.so */
	int launcher;               /* maps libjli.so: a Java launcher, which loads libjvm.so soon */
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
			else if (is_basename(e.path, "libjli.so"))
				scan->launcher = 1;
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
	char caps[8], *image = NULL;
	struct stat st;
	ssize_t len;
	int fd, result = -1;

	if (!scan->perf_end)
		return -1;
	fd = proc__open_map_file_at(t->proc_fd, scan->perf_start, scan->perf_end);
	if (fd < 0)
		return -1;
	/* The JVM's own file: one of another user's could say anything. */
	if (fstat(fd, &st) || st.st_uid != t->uid || !(image = malloc(PERFDATA_MAX)))
		goto out;
	len = attach__read_full(fd, image, PERFDATA_MAX);
	if (len > 0 && !attach__parse_perfdata(image, (size_t)len, caps, sizeof(caps)) && caps[0])
		result = caps[0] == '0';
out:
	free(image);
	close(fd);
	return result;
}

/*
 * The profiler creates files in the target's /tmp (as the target's user),
 * so that /tmp must be one the target's user may fill: a shared one
 * (sticky and writable by all, as /tmp is) or the user's own. Any other
 * directory is one the target mounted there to have someone else write in
 * it (a user namespace lets anyone bind-mount /etc over its /tmp).
 */
static int check_target_tmp(const struct jvm_target *t, char *err, size_t err_size)
{
	struct stat st;

	if (fstat(t->tmp_fd, &st)) {
		snprintf(err, err_size, "cannot stat /tmp of JVM pid %d: %s", (int)t->pid, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode) &&
	    (((st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH)) || st.st_uid == t->uid))
		return 0;
	snprintf(err, err_size, "the /tmp of JVM pid %d is neither sticky and writable by all nor owned by its user "
		 "%u (owner %u, mode %04o): a directory mounted there, not a /tmp; jbpfprof creates nothing in it",
		 (int)t->pid, (unsigned)t->uid, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return -1;
}

static int open_target_tmp(struct jvm_target *t, char *err, size_t err_size)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int root = openat(t->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0) {
		snprintf(err, err_size, "cannot open the root directory of JVM pid %d (/proc/%d/root): %s", (int)t->pid,
			 (int)t->pid, strerror(errno));
		return -1;
	}
	t->tmp_fd = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	/* Before Linux 5.6: one component, not followed if it is a symlink, stays inside too. */
	if (t->tmp_fd < 0 && errno == ENOSYS)
		t->tmp_fd = openat(root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t->tmp_fd < 0) {
		snprintf(err, err_size, "cannot open /tmp of JVM pid %d (through /proc/%d/root): %s; HotSpot attaches "
			 "only through its /tmp", (int)t->pid, (int)t->pid, strerror(errno));
		close(root);
		return -1;
	}
	close(root);
	return check_target_tmp(t, err, err_size);
}

/* pidfd_open refuses a thread that is not its process's leader (EINVAL; ENOENT since 6.9). */
static void describe_thread(pid_t pid, char *err, size_t err_size)
{
	char status[PROC_SMALL_MAX];
	long len = proc__read_process_file("/proc", (uint32_t)pid, "status", status, sizeof(status));
	uint32_t tgid;

	if (len > 0 && !proc__parse_tgid(status, (size_t)len, &tgid))
		snprintf(err, err_size, "pid %d is a thread of process %u: name the process", (int)pid, tgid);
	else
		snprintf(err, err_size, "pid %d is not a process (a thread that has exited?)", (int)pid);
}

int attach__target_open(pid_t pid, struct jvm_target *t, char *err, size_t err_size)
{
	char path[32], status[PROC_SMALL_MAX];
	struct maps_scan scan;
	uint32_t tgid;
	long len;
	int disabled, answer, result = -1;

	*t = (struct jvm_target){ .pid = pid, .tmp_fd = -1, .pidfd = -1, .proc_fd = -1, .cancel_fd = -1 };
	if (pid <= 0) {
		snprintf(err, err_size, "invalid pid %d", (int)pid);
		return -1;
	}
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		if (errno == ESRCH) {
			snprintf(err, err_size, "no process with PID %d (is it running? check with ps -p %d)", (int)pid,
				 (int)pid);
			result = JVM_TARGET_UNKNOWN;
		}
		else if (errno == EINVAL || errno == ENOENT)
			describe_thread(pid, err, err_size);
		else
			snprintf(err, err_size, "cannot open process %d (pidfd_open): %s", (int)pid, strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	t->proc_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* Alive after /proc/PID was opened: both name the same process, not a reuse of its pid. */
	if (t->proc_fd < 0 || attach__target_exited(t, 0)) {
		snprintf(err, err_size, "no process with PID %d (it has exited)", (int)pid);
		result = JVM_TARGET_UNKNOWN;
		goto fail;
	}
	len = proc__read_small_at(t->proc_fd, "status", status, sizeof(status));
	if (len < 0) {
		snprintf(err, err_size, "cannot read /proc/%d/status: %s", (int)pid, strerror((int)-len));
		goto fail;
	}
	if (proc__parse_tgid(status, (size_t)len, &tgid) ||
	    attach__parse_status(status, (size_t)len, &t->nspid, &t->uid, &t->gid)) {
		snprintf(err, err_size, "cannot parse /proc/%d/status (no Tgid, NSpid, Uid or Gid line)", (int)pid);
		goto fail;
	}
	if (tgid != (uint32_t)pid) {
		snprintf(err, err_size, "pid %d is a thread of process %u: name the process", (int)pid, tgid);
		goto fail;
	}
	if (scan_maps(t, &scan)) {
		snprintf(err, err_size, "cannot read /proc/%d/maps: %s (jbpfprof needs root with ptrace access to the "
			 "process)", (int)pid, strerror(errno));
		result = JVM_TARGET_UNKNOWN;
		goto fail;
	}
	if (!scan.jvm && scan.launcher) {
		snprintf(err, err_size, "pid %d is a Java launcher that has not loaded libjvm.so yet", (int)pid);
		result = JVM_TARGET_STARTING;
		goto fail;
	}
	if (!scan.jvm) {
		snprintf(err, err_size, "pid %d is not a Java virtual machine (no libjvm.so in its memory maps)",
			 (int)pid);
		result = JVM_TARGET_NOT_JVM;
		goto fail;
	}
	disabled = options_disable_attach(t);
	answer = perfdata_disables_attach(t, &scan);
	if (answer >= 0)
		disabled = answer;
	if (disabled) {
		snprintf(err, err_size, "attach is disabled in JVM pid %d (-XX:+DisableAttachMechanism)", (int)pid);
		goto fail;
	}
	if (open_target_tmp(t, err, err_size))
		goto fail;
	return 0;
fail:
	attach__target_close(t);
	return result;
}
