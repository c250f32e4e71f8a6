/*
 * Hostile JVMs: what an unprivileged user can make of the attach and of
 * the agent's stream, played by fake_jvm (tests/workloads/fake_jvm.c: maps
 * a file named libjvm.so, speaks the attach protocol, plays the agent) run
 * as HOSTILE_USER.
 *
 *   - A /tmp that is another directory bind-mounted in a user namespace (a
 *     root-owned one here) is refused in one line, and nothing is created
 *     in it.
 *   - An agent that floods valid messages does not hold the profiler: it
 *     stops at -d, and on SIGTERM.
 *   - Files planted in the target's /tmp: a device node under the agent
 *     file's name is never opened (inotify says so); another user's
 *     .attach_pid is never removed; a .java_pid symlink to a root socket
 *     is never connected.
 *   - A connection to the profiler's socket from anyone but the target
 *     (here root, another process and another uid) is refused, and the
 *     target's own is then taken.
 *
 * Private /tmp directories are made with unshare -Urm (the user becomes
 * root of a user namespace of its own and bind-mounts a directory over
 * its /tmp); where user namespaces are off, those tests say SKIPPED.
 */
#include "harness.h"
#include "hostile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A directory the hostile user can reach: harness_tmpdir opened to all (not writable). */
static char *reachable_dir(void)
{
	char *dir = harness_tmpdir();

	assert_non_null(dir);
	assert_int_equal(chmod(dir, 0755), 0);
	return dir;
}

/* A non-empty file named libjvm.so in dir, readable by all: what makes a JVM to the profiler. */
static char *make_libjvm(const char *dir)
{
	char *path = harness_path(dir, "libjvm.so");
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs("not really a JVM\n", f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0644), 0);
	return path;
}

/* Whether the hostile user may make a user and mount namespace of its own. */
static void require_userns(void)
{
	struct child probe;

	assert_int_equal(hostile_start(&probe, (char *[]){ "/usr/bin/unshare", "-Urm", "/bin/true", NULL }, 1), 0);
	if (harness_finish(&probe, 10) != 0) {
		fprintf(stderr, "SKIPPED: %s cannot make a user namespace (unshare -Urm)\n", HOSTILE_USER);
		skip();
	}
}

/*
 * Starts fake_jvm LIBJVM MODE as the hostile user, with tmp bind-mounted
 * over its /tmp in a user and mount namespace of its own, and waits for
 * its "ready". LIBJVM is opened before the mount hides it, and mapped
 * through that descriptor. Skips the test when user namespaces are off.
 */
static void start_fake(struct child *fake, const char *libjvm, const char *mode, const char *tmp)
{
	char *workload = hostile_workload("fake_jvm");
	int rc;

	require_userns();
	rc = hostile_start(fake,
			   (char *[]){ "/usr/bin/unshare", "-Urm", "/bin/sh", "-c",
				       "exec 3<\"$2\" && mount --bind \"$0\" /tmp && exec \"$1\" /proc/self/fd/3 \"$3\"",
				       (char *)tmp, workload, (char *)libjvm, (char *)mode, NULL },
			   1);
	free(workload);
	assert_int_equal(rc, 0);
	if (harness_wait_for(fake, "ready", 10)) {
		harness_finish(fake, 5);
		fail_msg("fake_jvm did not start: %s", fake->buf);
	}
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* The one entry of dir whose name starts with prefix (copied into name), or fails. */
static void find_entry(const char *dir, const char *prefix, char *name, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	name[0] = '\0';
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			snprintf(name, size, "%s", e->d_name);
	closedir(d);
	if (!name[0])
		fail_msg("no %s* in %s", prefix, dir);
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* A root-owned directory mounted over the target's /tmp: refused, and left empty. */
static void bind_mounted_tmp_is_refused(void **state)
{
	char *top, *root_dir, *libjvm, pid[16];
	struct child fake, prof;
	int status;

	harness_require_root();
	top = reachable_dir();
	libjvm = make_libjvm(top);
	root_dir = harness_path(top, "rootdir");
	assert_int_equal(mkdir(root_dir, 0755), 0);
	start_fake(&fake, libjvm, "quiet", root_dir);
	snprintf(pid, sizeof(pid), "%d", (int)fake.pid);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", pid, "-d", "1", NULL }, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 1);
	assert_non_null(strstr(prof.buf, "neither sticky and writable by all nor owned by its user"));
	assert_int_equal(count_lines(prof.buf), 1);
	assert_int_equal(count_entries(root_dir), 0);
	assert_int_equal(harness_stop_workload(&fake), 0);
	rmdir(root_dir);
	unlink(libjvm);
	rmdir(top);
	free(root_dir);
	free(libjvm);
	free(top);
}

/* A private /tmp of the hostile user's own, in dir: what its fake JVM sees as /tmp. */
static char *private_tmp(const char *top)
{
	char *tmp = harness_path(top, "tmp");

	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_equal(hostile_chown(tmp), 0);
	return tmp;
}

/* A fake JVM of the hostile user, with its private /tmp and its libjvm.so. */
struct fake_target {
	char *top, *tmp, *libjvm;
	struct child child;
	char pid[16];
};

/* Makes a directory with a libjvm.so and a private /tmp in it, and starts fake_jvm in mode there. */
static void fake_target_start(struct fake_target *t, const char *mode)
{
	t->top = reachable_dir();
	t->libjvm = make_libjvm(t->top);
	t->tmp = private_tmp(t->top);
	start_fake(&t->child, t->libjvm, mode, t->tmp);
	snprintf(t->pid, sizeof(t->pid), "%d", (int)t->child.pid);
}

/* Stops the fake, which must exit with 0 when clean_exit, and removes what was made for it. */
static void fake_target_finish(struct fake_target *t, bool clean_exit)
{
	int status = harness_stop_workload(&t->child);

	if (clean_exit)
		assert_int_equal(status, 0);
	harness_remove_tree(t->top);
	free(t->tmp);
	free(t->libjvm);
	free(t->top);
}

/* An agent writing valid messages as fast as they are read: -d still ends the run. */
static void flood_stops_at_duration(void **state)
{
	struct fake_target t;
	struct child prof;
	int status;

	harness_require_root();
	fake_target_start(&t, "flood");
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "2", "-o", "collapsed", "-f", "/dev/null", NULL },
				      60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	/* harness_run_profiler kills it after 60 s and says -1. */
	assert_int_equal(status, 0);
	assert_non_null(strstr(prof.buf, "with Java frames"));
	fake_target_finish(&t, true);
}

/* The same flood, no duration: SIGTERM ends the run. */
static void flood_stops_on_sigterm(void **state)
{
	struct fake_target t;
	struct child prof;
	int status;

	harness_require_root();
	fake_target_start(&t, "flood");
	assert_int_equal(harness_start_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-o", "collapsed", "-f", "/dev/null", NULL }), 0);
	if (harness_wait_for(&prof, "with Java frames", 30)) {
		harness_finish(&prof, 5);
		fail_msg("the profiler did not start recording: %s", prof.buf);
	}
	assert_int_equal(kill(prof.pid, SIGTERM), 0);
	status = harness_finish(&prof, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 0);
	fake_target_finish(&t, true);
}

/*
 * Planted in the target's /tmp: a device node under the agent file's name
 * (learned from a first attach) is never opened; the attach goes on under
 * another name.
 */
static void planted_agent_file_is_never_opened(void **state)
{
	char *agent, name[NAME_MAX + 1];
	struct fake_target t;
	struct child prof;
	char events[4096];
	int status, in;

	harness_require_root();
	fake_target_start(&t, "quiet");
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "1", "-o", "collapsed", "-f", "/dev/null", NULL }, 60);
	fprintf(stderr, "  first profiler: %s", prof.buf);
	assert_int_equal(status, 0);
	find_entry(t.tmp, "jbpfagent-", name, sizeof(name));
	agent = harness_path(t.tmp, name);
	assert_int_equal(unlink(agent), 0);
	/* /dev/null's numbers: harmless here, and inotify sees any open of it. */
	assert_int_equal(mknod(agent, S_IFCHR | 0666, makedev(1, 3)), 0);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, agent, IN_OPEN) >= 0);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "1", "-o", "collapsed", "-f", "/dev/null", NULL }, 60);
	fprintf(stderr, "  second profiler: %s", prof.buf);
	assert_int_equal(status, 0);
	if (read(in, events, sizeof(events)) > 0)
		fail_msg("the profiler opened the device node planted as %s", name);
	assert_int_equal(errno, EAGAIN);
	close(in);
	fake_target_finish(&t, true);
	free(agent);
}

/* Another user's .attach_pid in the target's /tmp: refused in one line, and left there. */
static void another_users_trigger_is_left_alone(void **state)
{
	char *trigger, name[32];
	struct fake_target t;
	struct child prof;
	struct stat before, after;
	int status, fd;

	harness_require_root();
	fake_target_start(&t, "quiet");
	/* Not a t.pid namespace of its own: its t.pid is its nspid. */
	snprintf(name, sizeof(name), ".attach_pid%d", (int)t.child.pid);
	trigger = harness_path(t.tmp, name);
	fd = open(trigger, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	assert_int_equal(fstat(fd, &before), 0);
	close(fd);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "1", NULL }, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 1);
	assert_non_null(strstr(prof.buf, name));
	assert_non_null(strstr(prof.buf, "left alone"));
	assert_int_equal(count_lines(prof.buf), 1);
	assert_int_equal(lstat(trigger, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_uid, 65534);
	fake_target_finish(&t, true);
	free(trigger);
}

/* A listening socket of root's at path; returns its fd. */
static int root_listener(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* .java_pid<pid> planted as a symlink to a root socket: never connected to, never removed. */
static void planted_attach_socket_symlink_is_not_followed(void **state)
{
	char *link, *sock, name[32];
	struct fake_target t;
	struct child prof;
	struct stat st;
	int status, lfd;

	harness_require_root();
	fake_target_start(&t, "quiet");
	sock = harness_path(t.top, "root.sock");
	lfd = root_listener(sock);
	snprintf(name, sizeof(name), ".java_pid%d", (int)t.child.pid);
	link = harness_path(t.tmp, name);
	assert_int_equal(symlink(sock, link), 0);
	assert_int_equal(lchown(link, 65534, 65534), 0);
	status = harness_run_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "1", NULL }, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	/* The fake cannot bind its socket over the symlink either: the attach fails, in one line. */
	assert_int_equal(status, 1);
	assert_int_equal(count_lines(prof.buf), 1);
	assert_int_equal(accept(lfd, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	close(lfd);
	fake_target_finish(&t, false);
	free(link);
	free(sock);
}

/*
 * A peer that is not the target (root, in another process) connects to the
 * profiler's socket first: it is refused (the profiler closes it), and the
 * target's own connection is then taken.
 */
static void a_peer_other_than_the_target_is_refused(void **state)
{
	char *at, path[PATH_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fake_target t;
	struct child prof;
	struct pollfd p;
	int status, fd;
	char c;

	harness_require_root();
	fake_target_start(&t, "handoff");
	assert_int_equal(harness_start_profiler(&prof, (char *[]){ "--java", "--java-stacks", "agent", "-p", t.pid, "-d", "2", "-o", "collapsed", "-f", "/dev/null",
								     NULL }),
			 0);
	if (harness_wait_for(&t.child, "socket /tmp/", 30)) {
		harness_finish(&prof, 5);
		fail_msg("the fake JVM was not asked to load the agent: %s", prof.buf);
	}
	at = strstr(t.child.buf, "socket /tmp/") + strlen("socket /tmp/");
	snprintf(path, sizeof(path), "%s/%.*s", t.tmp, (int)strcspn(at, "\n"), at);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 10000), 1);
	assert_int_equal(read(fd, &c, 1), 0); /* closed on us */
	close(fd);
	assert_int_equal(kill(t.child.pid, SIGUSR1), 0);
	status = harness_finish(&prof, 60);
	fprintf(stderr, "  profiler: %s", prof.buf);
	assert_int_equal(status, 0);
	assert_non_null(strstr(prof.buf, "with Java frames"));
	assert_int_equal(harness_wait_for(&t.child, "connected", 10), 0);
	fake_target_finish(&t, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(bind_mounted_tmp_is_refused),
		HARNESS_TEST(flood_stops_at_duration),
		HARNESS_TEST(flood_stops_on_sigterm),
		HARNESS_TEST(planted_agent_file_is_never_opened),
		HARNESS_TEST(another_users_trigger_is_left_alone),
		HARNESS_TEST(planted_attach_socket_symlink_is_not_followed),
		HARNESS_TEST(a_peer_other_than_the_target_is_refused),
	};

	return cmocka_run_group_tests_name("hostile JVMs", tests, NULL, NULL);
}
