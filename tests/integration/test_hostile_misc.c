/*
 * Hostile targets and hostile files, the smaller classes: a target whose
 * pid is recycled by another process of its user, a target naming itself
 * with terminal escapes, and a pprof file that inflates into millions of
 * empty records. Targets run as HOSTILE_USER (hostile.h).
 */
#include "hostile.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The recycled-pid process, which the harness does not know of. */
static pid_t reused_pid = -1;

static int teardown(void **state)
{
	if (reused_pid > 0) {
		kill(reused_pid, SIGKILL);
		waitpid(reused_pid, NULL, 0);
		reused_pid = -1;
	}
	return harness_teardown(state);
}

#define HOSTILE_TEST(f) cmocka_unit_test_teardown(f, teardown)

/* Starts comm_target as the hostile user with thread name comm_hex, and waits for "ready". */
static void start_target(struct child *c, const char *comm_hex)
{
	char *target = hostile_workload("comm_target");

	assert_int_equal(hostile_start(c, (char *[]){ target, (char *)comm_hex, NULL }, STDOUT_FILENO), 0);
	assert_int_equal(harness_wait_for(c, "ready", 10), 0);
	free(target);
}

/*
 * The name a target gives itself is its own: ESC [ ... and a raw 0x9b
 * (CSI to an 8-bit terminal) in its comm must not reach the profiler's
 * stderr, which says "sampling pid N (comm)".
 */
static void escapes_in_comm_never_reach_the_terminal(void **state)
{
	/* "\x1b[31mX\x9b" "2Jpwn" */
	const char *hex = "1b5b33316d589b324a70776e";
	char *dir, *file, pid[16], *argv[16];
	struct child target, profiler;

	harness_require_root();
	start_target(&target, hex);
	dir = harness_tmpdir();
	assert_non_null(dir);
	file = harness_path(dir, "comm.txt");
	snprintf(pid, sizeof(pid), "%d", (int)target.pid);
	harness_profiler_args(argv, 16, pid, file, (char *[]){ "-d", "1", NULL });
	assert_int_equal(harness_run_profiler(&profiler, argv, 60), 0);
	assert_non_null(strstr(profiler.buf, "sampling pid"));
	assert_null(memchr(profiler.buf, 0x1b, profiler.len));
	assert_null(memchr(profiler.buf, 0x9b, profiler.len));
	fprintf(stderr, "  profiler said:\n%s", profiler.buf);
	harness_stop_workload(&target);
	harness_output_free(&(struct collapsed){ 0 }, file, dir);
}

/*
 * Forks a process of the hostile user that gets pid want, through
 * ns_last_pid; it runs comm_target with thread name comm_hex, its
 * stdout piped to c. Other processes of the host may take the pid first,
 * so a few tries. 0, or -1 when the pid could not be had (or ns_last_pid
 * cannot be written).
 */
static int fork_with_pid(struct child *c, pid_t want, const char *comm_hex)
{
	char *target = hostile_workload("comm_target");
	uid_t uid;
	gid_t gid;

	assert_int_equal(hostile_user(&uid, &gid), 0);
	for (int attempt = 0; attempt < 50; attempt++) {
		int last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC), out[2];
		char value[16];
		pid_t pid;

		if (last < 0)
			break;
		snprintf(value, sizeof(value), "%d", (int)want - 1);
		if (pipe2(out, O_CLOEXEC) || write(last, value, strlen(value)) < 0) {
			close(last);
			break;
		}
		close(last);
		pid = fork();
		if (pid == 0) {
			if (getpid() != want)
				_exit(0);
			dup2(out[1], STDOUT_FILENO);
			if (setgroups(0, NULL) || setgid(gid) || setuid(uid))
				_exit(126);
			execv(target, (char *[]){ target, (char *)comm_hex, NULL });
			_exit(127);
		}
		close(out[1]);
		if (pid == want) {
			memset(c, 0, sizeof(*c));
			c->pid = pid;
			c->out_fd = out[0];
			reused_pid = pid;
			free(target);
			return 0;
		}
		close(out[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	free(target);
	return -1;
}

static uint64_t stacks_with(const struct collapsed *c, const char *text)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		if (strstr(c->stacks[i], text))
			n += c->counts[i];
	return n;
}

/*
 * A target exits and another process of its user gets its pid (the
 * recording goes on for a second target). The newcomer is not the target:
 * it must not be sampled, nor signalled, and it must live on.
 */
static void a_reused_pid_is_not_the_target(void **state)
{
	struct child first, keeper, reused, profiler;
	char *dir, *file, pids[32], *argv[16];
	struct collapsed stacks;
	pid_t first_pid;
	int status;

	harness_require_root();
	start_target(&first, "6a6270662d6669727374");   /* "jbpf-first" */
	start_target(&keeper, "6a6270662d6b6565706572"); /* "jbpf-keeper" */
	first_pid = first.pid;
	dir = harness_tmpdir();
	assert_non_null(dir);
	file = harness_path(dir, "reuse.txt");
	snprintf(pids, sizeof(pids), "%d,%d", (int)first.pid, (int)keeper.pid);
	harness_profiler_args(argv, 16, pids, file, (char *[]){ "-F", "499", "--threads", "-d", "60", NULL });
	assert_int_equal(harness_start_profiler(&profiler, argv), 0);
	assert_int_equal(harness_wait_for(&profiler, "sampling", 30), 0);

	kill(first.pid, SIGKILL);
	harness_finish(&first, 10);
	assert_int_equal(harness_wait_for(&profiler, "exited after", 10), 0);
	if (fork_with_pid(&reused, first_pid, "6a6270662d726575736564" /* "jbpf-reused" */)) {
		kill(profiler.pid, SIGKILL);
		harness_finish(&profiler, 10);
		skip();
	}
	assert_int_equal(harness_wait_for(&reused, "ready", 10), 0);
	/* Half a second of its CPU time: dozens of samples at 499 Hz, were it sampled. */
	assert_int_equal(harness_wait_for(&reused, "spent", 30), 0);

	kill(profiler.pid, SIGINT);
	assert_int_equal(harness_finish(&profiler, 60), 0);
	fprintf(stderr, "  profiler said:\n%s", profiler.buf);
	assert_int_equal(waitpid(reused.pid, &status, WNOHANG), 0);
	assert_int_equal(kill(reused.pid, 0), 0);

	assert_int_equal(collapsed_load(file, &stacks), 0);
	fprintf(stderr, "  %llu samples: %llu of the keeper, %llu of the newcomer\n",
		(unsigned long long)stacks.total, (unsigned long long)stacks_with(&stacks, "jbpf-keeper"),
		(unsigned long long)stacks_with(&stacks, "jbpf-reused"));
	assert_true(stacks_with(&stacks, "jbpf-keeper") > 0);
	assert_int_equal(stacks_with(&stacks, "jbpf-reused"), 0);
	harness_stop_workload(&keeper);
	harness_output_free(&stacks, file, dir);
}

/* Twenty million empty samples: 40 MB of protobuf, some 40 KB gzipped. */
#define BOMB_SAMPLES 20000000u
/* Peak RSS allowed for converting it, KiB (before the fix: over 2 GiB). */
#define BOMB_MAX_RSS_KIB (512u << 10)

static void write_bomb(const char *path)
{
	static char chunk[1 << 16];
	char command[512];
	FILE *gz;

	/* Field 2 (sample), length-delimited, length 0. */
	for (size_t i = 0; i < sizeof(chunk); i += 2) {
		chunk[i] = 0x12;
		chunk[i + 1] = 0;
	}
	snprintf(command, sizeof(command), "gzip -c > '%s'", path);
	gz = popen(command, "w");
	assert_non_null(gz);
	for (size_t left = BOMB_SAMPLES * 2u; left;) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		assert_int_equal(fwrite(chunk, 1, n, gz), n);
		left -= n;
	}
	assert_int_equal(pclose(gz), 0);
}

/* Runs argv with stderr to err_path; its exit status and peak RSS (KiB). */
static int run_measured(char *const argv[], const char *err_path, long *max_rss_kib)
{
	struct rusage usage;
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(wait4(pid, &status, 0, &usage), pid);
	*max_rss_kib = usage.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A small file that unpacks into millions of records: convert ends with
 * one clear line, or a result, either way without the memory the records
 * would take.
 */
static void a_pprof_bomb_is_refused_in_bounded_memory(void **state)
{
	char *dir = harness_tmpdir(), *bomb, *out, *err_path, said[4096] = "";
	long rss_kib;
	FILE *f;
	int status;

	harness_require_root();
	assert_non_null(dir);
	bomb = harness_path(dir, "bomb.pb.gz");
	out = harness_path(dir, "bomb.txt");
	err_path = harness_path(dir, "stderr");
	write_bomb(bomb);
	status = run_measured((char *[]){ (char *)harness_profiler(), "convert", bomb, "-o", "collapsed", "-f", out,
					 NULL },
			      err_path, &rss_kib);
	f = fopen(err_path, "r");
	assert_non_null(f);
	said[fread(said, 1, sizeof(said) - 1, f)] = '\0';
	fclose(f);
	fprintf(stderr, "  convert: status %d, peak RSS %ld MiB, said: %s", status, rss_kib >> 10, said);
	assert_true(rss_kib < (long)BOMB_MAX_RSS_KIB);
	if (status) {
		/* One line, that names memory as the reason. */
		assert_non_null(strstr(said, "memory"));
		assert_ptr_equal(strchr(said, '\n'), said + strlen(said) - 1);
	}
	unlink(bomb);
	unlink(err_path);
	harness_output_free(&(struct collapsed){ 0 }, out, dir);
	free(bomb);
	free(err_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HOSTILE_TEST(escapes_in_comm_never_reach_the_terminal),
		HOSTILE_TEST(a_reused_pid_is_not_the_target),
		HOSTILE_TEST(a_pprof_bomb_is_refused_in_bounded_memory),
	};

	harness_filter_tests();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
