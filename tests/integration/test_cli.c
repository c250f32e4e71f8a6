/*
 * The command line as a user meets it: usage errors (exit 2, one line),
 * runtime errors (exit 1, one line naming cause and fix), the default
 * output file, --threads, standard output, Ctrl-C ending a recording
 * that still writes its output, and make install with --agent-path.
 */
#include "harness.h"
#include "hostile.h"

#include <dirent.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The number of lines in s that start with "jbpfprof: ". */
static int message_lines(const char *s)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += !strncmp(p, "jbpfprof: ", 10);
	return n;
}

static void expect_usage_error(char *const args[], const char *expected)
{
	struct child prof;
	int status = harness_run_profiler(&prof, args, 10);

	if (!strstr(prof.buf, expected))
		fprintf(stderr, "stderr was:\n%s\n", prof.buf);
	assert_int_equal(status, 2);
	assert_non_null(strstr(prof.buf, expected));
	assert_int_equal(message_lines(prof.buf), 1);
}

static void usage_errors_exit_2(void **state)
{
	if (access(harness_profiler(), X_OK))
		skip();
	expect_usage_error((char *[]){ NULL }, "say what to profile");
	expect_usage_error((char *[]){ "-p", "1", "-a", NULL }, "exclude each other");
	expect_usage_error((char *[]){ "-p", "abc", NULL }, "'abc' is not a whole number");
	expect_usage_error((char *[]){ "-p", "1,,2", NULL }, "not a list of process ids");
	expect_usage_error((char *[]){ "-a", "-F", "0", NULL }, "out of range");
	expect_usage_error((char *[]){ "-a", "-F", "99x", NULL }, "not a whole number");
	expect_usage_error((char *[]){ "-a", "-d", "-3", NULL }, "not a duration");
	expect_usage_error((char *[]){ "-a", "-d", "10parsecs", NULL }, "not a duration");
	expect_usage_error((char *[]){ "-a", "-o", "svg", NULL }, "unknown format 'svg'");
	expect_usage_error((char *[]){ "-a", "-f", "out.pdf", NULL }, "cannot tell the format");
	expect_usage_error((char *[]){ "-a", "--bogus", NULL }, "unknown option '--bogus'");
	expect_usage_error((char *[]){ "-a", "-d", NULL }, "needs a value");
}

/* The README's usage block is --help, word for word. */
static void help_matches_readme(void **state)
{
	char *argv[] = { (char *)harness_profiler(), "--help", NULL };
	char readme[65536];
	struct child prof;
	size_t n;
	FILE *f;

	if (access(harness_profiler(), X_OK))
		skip();
	assert_int_equal(harness_start_command(&prof, argv, STDOUT_FILENO), 0);
	assert_int_equal(harness_finish(&prof, 10), 0);
	assert_non_null(strstr(prof.buf, "Usage: jbpfprof"));
	f = fopen("README.md", "r");
	assert_non_null(f);
	n = fread(readme, 1, sizeof(readme) - 1, f);
	readme[n] = '\0';
	fclose(f);
	if (!strstr(readme, prof.buf))
		fprintf(stderr, "README.md does not hold this --help text:\n%s\n", prof.buf);
	assert_non_null(strstr(readme, prof.buf));
}

static void version(void **state)
{
	char *argv[] = { (char *)harness_profiler(), "--version", NULL };
	struct child prof;

	if (access(harness_profiler(), X_OK))
		skip();
	assert_int_equal(harness_start_command(&prof, argv, STDOUT_FILENO), 0);
	assert_int_equal(harness_finish(&prof, 10), 0);
	assert_true(!strncmp(prof.buf, "jbpfprof ", 9));
}

/* A pid that existed and is gone: a reaped child's. */
static void missing_pid_is_one_clear_line(void **state)
{
	struct child prof;
	char pid[16];
	pid_t child;

	harness_require_root();
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	assert_int_equal(harness_run_profiler(&prof, (char *[]){ "-p", pid, "-d", "1", NULL }, 10), 1);
	assert_non_null(strstr(prof.buf, "no process with PID"));
	assert_int_equal(message_lines(prof.buf), 1);
}

/* Without root the profiler says so instead of failing somewhere deep. */
static void not_root_is_one_clear_line(void **state)
{
	struct child prof;
	char *profiler;

	harness_require_root();
	if (access("/usr/bin/setpriv", X_OK))
		skip();
	/* A copy: the checkout itself may be out of the user's reach. */
	profiler = hostile_copy(harness_profiler(), "jbpfprof");
	assert_non_null(profiler);
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 "--inh-caps=-all", "--bounding-set=-all", profiler, "-a", "-d", "1", NULL };

	assert_int_equal(harness_start_command(&prof, argv, STDERR_FILENO), 0);
	assert_int_equal(harness_finish(&prof, 10), 1);
	assert_non_null(strstr(prof.buf, "must run as root"));
	assert_int_equal(message_lines(prof.buf), 1);
	free(profiler);
}

/*
 * A path that cannot be written fails before the recording, not after it:
 * a 30 s recording must end at once with one line.
 */
static void unwritable_output_fails_first(void **state)
{
	struct child prof;

	harness_require_root();
	assert_int_equal(harness_run_profiler(&prof, (char *[]){ "-a", "-d", "30", "-f", "/nonexistent-dir/p.html", NULL }, 10), 1);
	assert_non_null(strstr(prof.buf, "cannot write /nonexistent-dir/p.html"));
	assert_null(strstr(prof.buf, "sampling"));
	assert_int_equal(message_lines(prof.buf), 1);
}

/*
 * A recording killed outright (SIGKILL, no chance to clean up) leaves an
 * existing output file as it was, and no half-written file beside it.
 */
static void killed_recording_keeps_existing_file(void **state)
{
	char *dir = harness_tmpdir(), *file, *content;
	struct child prof;
	size_t len;
	int entries = 0;
	DIR *d;
	FILE *f;

	harness_require_root();
	file = harness_path(dir, "old.collapsed");
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("main;old_profile 7\n", f);
	fclose(f);
	assert_int_equal(harness_start_profiler(&prof, (char *[]){ "-a", "-F", "997", "-f", file, NULL }), 0);
	assert_int_equal(harness_wait_for(&prof, "jbpfprof: sampling", 20), 0);
	kill(prof.pid, SIGKILL);
	assert_int_equal(harness_finish(&prof, 10), -1);
	f = fopen(file, "r");
	assert_non_null(f);
	content = NULL;
	assert_true(getline(&content, &len, f) > 0);
	fclose(f);
	assert_string_equal(content, "main;old_profile 7\n");
	d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));)
		entries += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(entries, 1);
	unlink(file);
	rmdir(dir);
	free(content);
	free(file);
	free(dir);
}

/* No -f: a flame graph named after the pid and the time, its path printed. */
static void default_output_file(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *cwd, pid[16];
	char *wargv[] = { workload, NULL };
	char name_pattern[64];
	struct child w, prof;
	struct dirent *entry;
	int found = 0;
	regex_t re;
	DIR *d;

	harness_require_root();
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	cwd = getcwd(NULL, 0);
	/* The harness resolves the profiler's path before the chdir. */
	char *profiler = realpath(harness_profiler(), NULL);

	assert_non_null(profiler);
	setenv("JBPFPROF", profiler, 1);
	assert_int_equal(chdir(dir), 0);
	int status = harness_run_profiler(&prof, (char *[]){ "-p", pid, "-d", "1", NULL }, 30);

	assert_int_equal(chdir(cwd), 0);
	harness_stop_workload(&w);
	assert_int_equal(status, 0);
	snprintf(name_pattern, sizeof(name_pattern), "^jbpfprof-%s-[0-9]{8}-[0-9]{6}\\.html$", pid);
	assert_int_equal(regcomp(&re, name_pattern, REG_EXTENDED | REG_NOSUB), 0);
	d = opendir(dir);
	assert_non_null(d);
	while ((entry = readdir(d))) {
		if (regexec(&re, entry->d_name, 0, NULL, 0))
			continue;
		found++;
		assert_non_null(strstr(prof.buf, entry->d_name));
		char *path = harness_path(dir, entry->d_name);

		unlink(path);
		free(path);
	}
	closedir(d);
	regfree(&re);
	assert_int_equal(found, 1);
	rmdir(dir);
	free(profiler);
	free(cwd);
	free(dir);
	free(workload);
}

/* --threads: every stack starts with "[<thread name> tid=<tid>]". */
static void threads_root_frame(void **state)
{
	struct profiled r;
	regex_t re;

	harness_require_root();
	harness_profile(&r, "cpu_split", (char *[]){ "-t", "2", NULL }, (char *[]){ "-d", "1", "--threads", NULL }, 1,
			30);
	assert_int_equal(r.profiler_status, 0);
	assert_true(r.stacks.n > 0);
	assert_int_equal(regcomp(&re, "^\\[cpu_split tid=[0-9]+\\];", REG_EXTENDED | REG_NOSUB), 0);
	for (size_t i = 0; i < r.stacks.n; i++)
		assert_int_equal(regexec(&re, r.stacks.stacks[i], 0, NULL, 0), 0);
	regfree(&re);
	harness_profiled_free(&r);
}

/*
 * No -d: the recording runs until SIGINT, which ends it and still writes the
 * profile. The signal is sent once the profiler says it samples.
 */
static void sigint_stops_and_writes(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *file, pid[16];
	char *wargv[] = { workload, NULL };
	struct child w, prof;
	struct collapsed c;

	harness_require_root();
	file = harness_path(dir, "int.collapsed");
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	assert_int_equal(harness_start_profiler(&prof, (char *[]){ "-p", pid, "-F", "997", "-f", file, NULL }), 0);
	assert_int_equal(harness_wait_for(&prof, "jbpfprof: sampling", 20), 0);
	kill(prof.pid, SIGINT);
	assert_int_equal(harness_finish(&prof, 20), 0);
	harness_stop_workload(&w);
	/* The summary line: the recording's length, then its counts. */
	assert_non_null(strstr(prof.buf, "jbpfprof: recorded "));
	assert_non_null(strstr(strstr(prof.buf, "jbpfprof: recorded "), " s: "));
	assert_non_null(strstr(prof.buf, "samples taken"));
	/* The file exists and parses, however short the recording was. */
	assert_int_equal(collapsed_load(file, &c), 0);
	collapsed_free(&c);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

/* The whole of a regular file, or NULL; *size its length. */
static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)len)) &&
	    fread(buf, 1, (size_t)len, f) == (size_t)len) {
		*size = (size_t)len;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/*
 * make install DESTDIR=...: the binary and the agent, and the installed
 * binary's --agent-path names the installed agent, the very file the
 * build made ($AGENT).
 */
static void install_puts_agent_where_agent_path_says(void **state)
{
	char *dir, destdir[4200], bin[4300], expected[4300], real[4300];
	char *agent, *installed;
	size_t agent_size = 0, installed_size = 0;
	struct child make, prof;

	if (access("Makefile", R_OK) || access(harness_getenv("AGENT", "build/libjbpfagent.so"), R_OK))
		skip();
	dir = harness_tmpdir();
	assert_non_null(dir);
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s/stage", dir);
	assert_int_equal(harness_start_command(&make, (char *[]){ "/usr/bin/make", "-s", "install", destdir, NULL },
					       STDERR_FILENO),
			 0);
	if (harness_finish(&make, 600)) {
		fprintf(stderr, "make install failed:\n%s\n", make.buf);
		fail();
	}
	snprintf(bin, sizeof(bin), "%s/stage/usr/local/bin/jbpfprof", dir);
	snprintf(expected, sizeof(expected), "%s/stage/usr/local/lib/jbpfprof/libjbpfagent.so", dir);
	assert_int_equal(access(bin, X_OK), 0);
	assert_non_null(realpath(expected, real));
	assert_int_equal(harness_start_command(&prof, (char *[]){ bin, "--agent-path", NULL }, STDOUT_FILENO), 0);
	assert_int_equal(harness_finish(&prof, 10), 0);
	strcat(real, "\n");
	assert_string_equal(prof.buf, real);
	agent = read_file(harness_getenv("AGENT", "build/libjbpfagent.so"), &agent_size);
	installed = read_file(expected, &installed_size);
	assert_non_null(agent);
	assert_non_null(installed);
	assert_true(agent_size == installed_size && !memcmp(agent, installed, agent_size));
	free(agent);
	free(installed);
	snprintf(destdir, sizeof(destdir), "rm -rf '%s'", dir);
	assert_int_equal(system(destdir), 0);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(usage_errors_exit_2),
		HARNESS_TEST(help_matches_readme),
		HARNESS_TEST(version),
		HARNESS_TEST(missing_pid_is_one_clear_line),
		HARNESS_TEST(not_root_is_one_clear_line),
		HARNESS_TEST(unwritable_output_fails_first),
		HARNESS_TEST(killed_recording_keeps_existing_file),
		HARNESS_TEST(default_output_file),
		HARNESS_TEST(threads_root_frame),
		HARNESS_TEST(sigint_stops_and_writes),
		HARNESS_TEST(install_puts_agent_where_agent_path_says),
	};

	return cmocka_run_group_tests_name("command line", tests, NULL, NULL);
}
