/*
 * output files on a filesystem without O_TMPFILE: the O_TMPFILE open is
 * made to fail as on NFS or FUSE (EOPNOTSUPP), and a symlink another user
 * planted at the output path must be replaced, never followed: the file it
 * points to keeps its content and its owner, and a dangling one creates
 * nothing. And paths meant to be written into, not replaced: /dev/null, a
 * pipe, the user's own symlink, with or without O_TMPFILE.
 *
 * Another user's files need root to make (lchown); without root those
 * tests skip.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "output/files.h"

/* Whom the planted files belong to: neither root nor the user running the tests. */
#define OTHER_UID 54320

struct dir {
	char path[64];
	char out[128], victim[128];
};

static int no_tmpfile(const char *dir)
{
	(void)dir;
	errno = EOPNOTSUPP;
	return -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static size_t entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/*
 * A directory with "victim" ("precious") and "out", a symlink to it that
 * another user planted (only root can make it so: without root, the tests
 * that need it skip).
 */
static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/jbpf-files-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	snprintf(d->out, sizeof(d->out), "%s/out", d->path);
	snprintf(d->victim, sizeof(d->victim), "%s/victim", d->path);
	write_file(d->victim, "precious");
	if (symlink(d->victim, d->out))
		return -1;
	if (geteuid() == 0 && lchown(d->out, OTHER_UID, OTHER_UID))
		return -1;
	output_file__open_unnamed = no_tmpfile;
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", d->path);
	if (system(cmd))
		return -1;
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	free(d);
	return 0;
}

static void fallback_replaces_a_planted_symlink(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char buf[64];
	struct stat st;

	if (geteuid() != 0)
		skip();

	assert_int_equal(output_file__open(&f, d->out, OUTPUT_COLLAPSED), 0);
	assert_false(f.unnamed);
	fputs("main 1\n", f.out);
	assert_int_equal(output_file__finish(&f, 0), 0);

	read_file(d->victim, buf, sizeof(buf));
	assert_string_equal(buf, "precious");
	assert_int_equal(lstat(d->out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	read_file(d->out, buf, sizeof(buf));
	assert_string_equal(buf, "main 1\n");
	assert_int_equal(entries(d->path), 2); /* no temporary left */
}

static void fallback_discard_leaves_the_path_alone(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char buf[64];
	struct stat st;

	if (geteuid() != 0)
		skip();

	assert_int_equal(output_file__open(&f, d->out, OUTPUT_COLLAPSED), 0);
	fputs("half", f.out);
	output_file__discard(&f);

	read_file(d->victim, buf, sizeof(buf));
	assert_string_equal(buf, "precious");
	assert_int_equal(lstat(d->out, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries(d->path), 2);
}

static void fallback_creates_nothing_through_a_dangling_symlink(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char elsewhere[160];

	if (geteuid() != 0)
		skip();
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", d->path);
	assert_int_equal(unlink(d->out), 0);
	assert_int_equal(symlink(elsewhere, d->out), 0);
	assert_int_equal(lchown(d->out, OTHER_UID, OTHER_UID), 0);
	assert_int_equal(output_file__open(&f, d->out, OUTPUT_COLLAPSED), 0);
	assert_int_equal(access(elsewhere, F_OK), -1);
	output_file__discard(&f);
	assert_int_equal(access(elsewhere, F_OK), -1);
}

/* Under sudo the file goes to the user; what a symlink points at keeps its owner. */
static void fallback_never_hands_over_what_a_link_points_to(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	struct stat st;

	if (geteuid() != 0)
		skip();
	setenv("SUDO_UID", "54321", 1);
	setenv("SUDO_GID", "54321", 1);
	assert_int_equal(output_file__open(&f, d->out, OUTPUT_COLLAPSED), 0);
	fputs("main 1\n", f.out);
	assert_int_equal(output_file__finish(&f, 0), 0);

	assert_int_equal(stat(d->victim, &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(lstat(d->out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, 54321);
}

/* /dev/null is written into, with or without O_TMPFILE, and stays the device it is. */
static void dev_null_stays_a_device(void **state)
{
	int (*saved)(const char *) = output_file__open_unnamed;
	struct output_file f;
	struct stat st;

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		output_file__open_unnamed = pass ? no_tmpfile : saved;
		assert_int_equal(output_file__open(&f, "/dev/null", OUTPUT_COLLAPSED), 0);
		fputs("main 1\n", f.out);
		assert_int_equal(output_file__finish(&f, 0), 0);
		assert_int_equal(lstat("/dev/null", &st), 0);
		assert_true(S_ISCHR(st.st_mode));
	}
	output_file__open_unnamed = saved;
}

/* A pipe of the user's (a shell's process substitution) is written into, and stays a pipe. */
static void a_users_pipe_is_written_into(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char fifo[160], buf[64];
	struct stat st;
	int reader;
	ssize_t n;

	snprintf(fifo, sizeof(fifo), "%s/fifo", d->path);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	reader = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_int_equal(output_file__open(&f, fifo, OUTPUT_COLLAPSED), 0);
	fputs("main 1\n", f.out);
	assert_int_equal(output_file__finish(&f, 0), 0);
	n = read(reader, buf, sizeof(buf) - 1);
	assert_int_equal(n, 7);
	buf[n] = '\0';
	assert_string_equal(buf, "main 1\n");
	close(reader);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

/* Another user's pipe is not written: it would hand them the profile. */
static void another_users_pipe_is_refused(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char fifo[160];

	if (geteuid() != 0)
		skip();
	snprintf(fifo, sizeof(fifo), "%s/fifo", d->path);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	assert_int_equal(chown(fifo, OTHER_UID, OTHER_UID), 0);
	assert_int_equal(output_file__open(&f, fifo, OUTPUT_COLLAPSED), -1);
}

/* The user's own symlink (as /dev/stdout is root's) is followed: what it leads to is written. */
static void a_users_own_symlink_is_followed(void **state)
{
	struct dir *d = *state;
	struct output_file f;
	char mine[160], buf[64];
	struct stat st;

	snprintf(mine, sizeof(mine), "%s/mine", d->path);
	assert_int_equal(symlink(d->victim, mine), 0);
	assert_int_equal(output_file__open(&f, mine, OUTPUT_COLLAPSED), 0);
	fputs("main 1\n", f.out);
	assert_int_equal(output_file__finish(&f, 0), 0);
	read_file(d->victim, buf, sizeof(buf));
	assert_string_equal(buf, "main 1\n");
	assert_int_equal(lstat(mine, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fallback_replaces_a_planted_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(fallback_discard_leaves_the_path_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(fallback_creates_nothing_through_a_dangling_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(fallback_never_hands_over_what_a_link_points_to, setup, teardown),
		cmocka_unit_test(dev_null_stays_a_device),
		cmocka_unit_test_setup_teardown(a_users_pipe_is_written_into, setup, teardown),
		cmocka_unit_test_setup_teardown(another_users_pipe_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(a_users_own_symlink_is_followed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
