/*
 * Hostile files: a target run by an unprivileged user names files for the
 * profiler, which runs as root, to open: the debug file beside its
 * program, its perf map, the files its maps list. Each trap here leads to
 * a canary, a file only root may read; the canary must never be opened
 * (an inotify watch on it sees every open) and nothing of it may reach
 * the profile. A program with a sparse 2 GiB .symtab must not cost the
 * profiler 2 GiB of memory.
 *
 * Traps that mount (a private /tmp, a tmpfs over a directory of mapped
 * files) run the target in a user and mount namespace of its own, which
 * any user may make where unprivileged user namespaces are allowed; where
 * they are not, those tests say SKIPPED.
 *
 * A path swapped between the profiler's maps read and its open is a race;
 * the tmpfs mounted over the mapped file's directory before the profiler
 * starts gives the same situation, deterministically: maps names a path
 * that now leads to another file.
 */
#include "harness.h"
#include "hostile.h"
#include "../shared/sparse_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define CANARY_TEXT "CANARY_ONLY_ROOT_MAY_READ_THIS"

/* The canary in a directory only root may enter, and the target's own directory. */
struct trap {
	char *root_dir, *canary;
	char *user_dir;
	int inotify;
	char *profile_dir, *profile;
};

static void trap_set(struct trap *t, const char *canary_text)
{
	int fd;

	memset(t, 0, sizeof(*t));
	/* Not under /tmp, which a target may cover with a /tmp of its own. */
	t->root_dir = strdup("/var/tmp/jbpfprof-canary-XXXXXX");
	assert_non_null(t->root_dir);
	assert_non_null(mkdtemp(t->root_dir));
	assert_int_equal(chmod(t->root_dir, 0700), 0);
	t->canary = harness_path(t->root_dir, "canary");
	fd = open(t->canary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, canary_text, strlen(canary_text)), (ssize_t)strlen(canary_text));
	close(fd);
	t->user_dir = harness_tmpdir();
	assert_non_null(t->user_dir);
	assert_int_equal(chmod(t->user_dir, 0755), 0);
	assert_int_equal(hostile_chown(t->user_dir), 0);
	t->profile_dir = harness_tmpdir();
	t->profile = harness_path(t->profile_dir, "profile.collapsed");
	t->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(t->inotify >= 0);
	assert_true(inotify_add_watch(t->inotify, t->canary, IN_OPEN | IN_ACCESS) >= 0);
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	if (!dir)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

static void trap_free(struct trap *t)
{
	close(t->inotify);
	rm_rf(t->root_dir);
	rm_rf(t->user_dir);
	rm_rf(t->profile_dir);
	free(t->root_dir);
	free(t->canary);
	free(t->user_dir);
	free(t->profile_dir);
	free(t->profile);
}

/* The canary was never opened nor read, and nothing of it is in the profile. */
static void assert_canary_untouched(struct trap *t)
{
	char events[4096], cmd[1024];
	ssize_t n = read(t->inotify, events, sizeof(events));

	if (n > 0)
		fprintf(stderr, "the canary %s was opened or read\n", t->canary);
	assert_true(n < 0 && errno == EAGAIN);
	snprintf(cmd, sizeof(cmd), "grep -q CANARY '%s'", t->profile);
	assert_int_not_equal(system(cmd), 0);
}

/* Starts argv as the user and waits for its "ready"; skips when user namespaces are refused. */
static void start_target(struct child *target, char *const argv[], int needs_userns)
{
	assert_int_equal(hostile_start(target, argv, 1), 0);
	if (harness_wait_for(target, "ready", 10)) {
		harness_finish(target, 5);
		if (needs_userns) {
			fprintf(stderr, "SKIPPED: the user cannot make a user and mount namespace here\n");
			skip();
		}
		fail_msg("the target did not start");
	}
}

/* Profiles the target by pid for a few seconds into t->profile; returns the profiler's status. */
/* Profiles target for 2 s; the profiler's stderr is left in profiler->buf. */
static int profile_target(struct trap *t, const struct child *target, struct child *profiler)
{
	char pid[16], *args[16];
	int status;

	snprintf(pid, sizeof(pid), "%d", (int)target->pid);
	harness_profiler_args(args, 16, pid, t->profile, (char *[]){ "-d", "2", "-F", "499", NULL });
	status = harness_run_profiler(profiler, args, 60);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler->buf);
	return status;
}

static char *run_capture(const char *cmd)
{
	if (system(cmd)) {
		fprintf(stderr, "failed: %s\n", cmd);
		return NULL;
	}
	return "";
}

/*
 * The target's program is stripped, its .gnu_debuglink names a file beside
 * it, and that file is a symlink to the canary.
 */
static void debuglink_symlink_to_canary_is_never_opened(void **state)
{
	char *workload = harness_workload("hostile_target"), *program, *debug, cmd[2048];
	struct child target, profiler;
	struct trap t;

	(void)state;
	harness_require_root();
	trap_set(&t, CANARY_TEXT "\n");
	program = harness_path(t.user_dir, "victim");
	debug = harness_path(t.user_dir, "victim.debug");
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s' && "
		 "rm '%s' && ln -s '%s' '%s' && chmod 0755 '%s'",
		 workload, debug, debug, workload, program, debug, t.canary, debug, program);
	assert_non_null(run_capture(cmd));
	start_target(&target, (char *[]){ program, "burn", NULL }, 0);
	assert_int_equal(profile_target(&t, &target, &profiler), 0);
	harness_stop_workload(&target);
	assert_canary_untouched(&t);
	trap_free(&t);
	free(program);
	free(debug);
	free(workload);
}

/* The target's private /tmp holds /tmp/perf-PID.map, a symlink to a canary written as a perf map. */
static void perf_map_symlink_to_canary_is_never_opened(void **state)
{
	char *workload = hostile_workload("hostile_target"), line[128];
	struct child target, profiler;
	struct trap t;
	long long jit;
	int fd;

	(void)state;
	harness_require_root();
	trap_set(&t, "");
	start_target(&target, (char *[]){ "/usr/bin/unshare", "-Urm", workload, "jit", t.canary, NULL }, 1);
	jit = (long long)strtoull(strstr(target.buf, "jit ") + 4, NULL, 16);
	assert_true(jit > 0);
	/* Lines naming the target's JIT code, so that a followed link would name its frames. */
	snprintf(line, sizeof(line), "%llx 1000 " CANARY_TEXT "\n", jit);
	fd = open(t.canary, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	/* The test's own write is not the profiler's open. */
	while (read(t.inotify, line, sizeof(line)) > 0)
		;
	assert_int_equal(profile_target(&t, &target, &profiler), 0);
	harness_stop_workload(&target);
	assert_canary_untouched(&t);
	trap_free(&t);
	free(workload);
}

/*
 * A mapped file's directory is covered by a tmpfs in which its name is a
 * symlink to the canary: the maps path no longer leads to the mapped file.
 */
static void covered_mapping_path_to_canary_is_never_opened(void **state)
{
	char *workload = hostile_workload("hostile_target"), *libdir, *lib, cmd[1024];
	struct child target, profiler;
	struct trap t;

	(void)state;
	harness_require_root();
	trap_set(&t, CANARY_TEXT "\n");
	libdir = harness_path(t.user_dir, "lib");
	lib = harness_path(libdir, "victim.so");
	snprintf(cmd, sizeof(cmd), "mkdir '%s' && cp '%s' '%s' && chown -R " HOSTILE_USER ": '%s'", libdir, workload,
		 lib, libdir);
	assert_non_null(run_capture(cmd));
	start_target(&target, (char *[]){ "/usr/bin/unshare", "-Urm", workload, "cover", lib, t.canary, NULL }, 1);
	assert_int_equal(profile_target(&t, &target, &profiler), 0);
	harness_stop_workload(&target);
	assert_canary_untouched(&t);
	trap_free(&t);
	free(lib);
	free(libdir);
	free(workload);
}

/* Points the .symtab of the ELF file at path to 2 GiB of holes at its end. */
static void make_symtab_sparse_and_huge(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	sparse_elf_make_symtab_huge(fd, 2ull << 30);
	close(fd);
}

/*
 * The target's program has a .symtab of 2 GiB, all holes: free for it,
 * and it must not cost the profiler that much. Run first, so that the
 * largest child this test process has waited for is this profiler.
 */
static void sparse_symtab_keeps_the_profiler_small(void **state)
{
	char *workload = harness_workload("hostile_target"), *program, cmd[1024];
	struct child target, profiler;
	struct rusage usage;
	struct trap t;

	(void)state;
	harness_require_root();
	trap_set(&t, CANARY_TEXT "\n");
	program = harness_path(t.user_dir, "sparse");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", workload, program, program);
	assert_non_null(run_capture(cmd));
	make_symtab_sparse_and_huge(program);
	start_target(&target, (char *[]){ program, "burn", NULL }, 0);
	assert_int_equal(profile_target(&t, &target, &profiler), 0);
	harness_stop_workload(&target);
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &usage), 0);
	fprintf(stderr, "  largest child's peak RSS: %ld MiB\n", usage.ru_maxrss / 1024);
	/* In KiB; the sanitized profiler runs in a few hundred MiB, the section alone is 2048. */
	assert_true(usage.ru_maxrss < 1024 * 1024);
	/* The table left unread is a loss, and the summary says so. */
	assert_non_null(strstr(profiler.buf, "symbol tables not read"));
	trap_free(&t);
	free(program);
	free(workload);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(sparse_symtab_keeps_the_profiler_small),
		HARNESS_TEST(debuglink_symlink_to_canary_is_never_opened),
		HARNESS_TEST(perf_map_symlink_to_canary_is_never_opened),
		HARNESS_TEST(covered_mapping_path_to_canary_is_never_opened),
	};

	return cmocka_run_group_tests_name("hostile files", tests, NULL, NULL);
}
