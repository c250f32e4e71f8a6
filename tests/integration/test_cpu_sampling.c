/*
 * CPU sampling, end to end: the real profiler on real workloads, shares
 * compared with the truth each workload measures with its own CPU clock.
 */
#include "harness.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const functions[] = { "share_50", "share_30", "share_20" };

struct shares {
	double measured[3]; /* percent of the three functions' samples */
	double truth[3];    /* percent of their CPU time, from the workload */
	uint64_t samples;
};

/*
 * Profiles cpu_split with workload_args at hz for seconds, into shares.
 * extra is one more profiler option or NULL.
 */
static void profile_cpu_split(const char *workload_args[], const char *hz, const char *seconds,
			      const char *extra, struct shares *out)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *file, pid[16];
	char *wargv[16] = { workload };
	struct child w, prof;
	struct collapsed c;
	long long truth[3], truth_total = 0;
	uint64_t counted = 0, n[3];

	assert_non_null(dir);
	file = harness_path(dir, "out.collapsed");
	for (size_t i = 0; workload_args[i]; i++)
		wargv[i + 1] = (char *)workload_args[i];
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);

	char *args[] = { "-p", pid, "-F", (char *)hz, "-d", (char *)seconds, "-f", file, (char *)extra, NULL };
	int status = harness_run_profiler(&prof, args, 120);

	assert_int_equal(harness_stop_workload(&w), 0);
	if (status != 0)
		fprintf(stderr, "profiler stderr:\n%s\n", prof.buf);
	assert_int_equal(status, 0);
	assert_int_equal(collapsed_load(file, &c), 0);
	for (int i = 0; i < 3; i++) {
		n[i] = collapsed_count_frame(&c, functions[i]);
		counted += n[i];
		truth[i] = harness_truth(&w, functions[i]);
		assert_true(truth[i] > 0);
		truth_total += truth[i];
	}
	assert_true(counted > 0);
	for (int i = 0; i < 3; i++) {
		out->measured[i] = 100.0 * (double)n[i] / (double)counted;
		out->truth[i] = 100.0 * (double)truth[i] / (double)truth_total;
		fprintf(stderr, "  %s: measured %.1f%%, truth %.1f%% (%llu samples)\n", functions[i],
			out->measured[i], out->truth[i], (unsigned long long)n[i]);
	}
	out->samples = counted;
	collapsed_free(&c);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

static double worst_error(const struct shares *s)
{
	double worst = 0;

	for (int i = 0; i < 3; i++)
		worst = fmax(worst, fabs(s->measured[i] - s->truth[i]));
	return worst;
}

/* 50/30/20 split by thread CPU time, two threads, 997 Hz: within 2 pp. */
static void shares_at_997_hz(void **state)
{
	const char *args[] = { "-t", "2", "-c", "10", NULL };
	struct shares s;

	harness_require_root();
	profile_cpu_split(args, "997", "6", NULL, &s);
	/* Two busy threads for 6 s at 997 Hz: about 12,000 samples. */
	assert_in_range(s.samples, 6000, 14000);
	assert_true(worst_error(&s) <= 2.0);
}

/*
 * A cycle of exactly 10 ms on the sampling timer's own clock, one thread
 * pinned per CPU, sampled at exactly 100 Hz on average: a fixed period would
 * see one phase only. Randomised intervals must stay within 3 pp.
 */
static void no_aliasing_at_100_hz(void **state)
{
	const char *args[] = { "-t", "2", "-c", "10", "-p", "-w", NULL };
	struct shares s;

	harness_require_root();
	profile_cpu_split(args, "100", "20", NULL, &s);
	assert_true(s.samples > 2000);
	assert_true(worst_error(&s) <= 3.0);
}

/*
 * The control: the same workload with --fixed-interval does alias, which
 * shows the previous test would catch a sampler that lines up with work.
 */
static void fixed_interval_aliases(void **state)
{
	const char *args[] = { "-t", "2", "-c", "10", "-p", "-w", NULL };
	struct shares s;

	harness_require_root();
	profile_cpu_split(args, "100", "5", "--fixed-interval", &s);
	assert_true(worst_error(&s) > 10.0);
}

/* Kernel frames sit above the user function that made the system call. */
static void kernel_frames_under_user_frames(void **state)
{
	char *workload = harness_workload("syscall_heavy"), *dir = harness_tmpdir(), *file, pid[16];
	char *wargv[] = { workload, NULL };
	uint64_t in_func = 0, with_kernel = 0, kernel_frames = 0, unknown_kernel = 0;
	struct child w, prof;
	struct collapsed c;

	harness_require_root();
	file = harness_path(dir, "out.collapsed");
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	char *args[] = { "-p", pid, "-F", "997", "-d", "3", "-f", file, NULL };

	assert_int_equal(harness_run_profiler(&prof, args, 60), 0);
	harness_stop_workload(&w);
	assert_int_equal(collapsed_load(file, &c), 0);
	for (size_t i = 0; i < c.n; i++) {
		char *user = strstr(c.stacks[i], "read_zero_blocks;");

		if (!strstr(c.stacks[i], "read_zero_blocks"))
			continue;
		in_func += c.counts[i];
		/* Everything after the user function must be kernel frames. */
		if (user) {
			char *frames = strdup(user + strlen("read_zero_blocks;")), *save = NULL;
			int all_kernel = 1;

			for (char *f = strtok_r(frames, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
				size_t len = strlen(f);

				/* libc's read wrapper may sit between the function and the kernel. */
				if (len < 4 || strcmp(f + len - 4, "_[k]")) {
					if (strstr(f, "read"))
						continue;
					all_kernel = 0;
					continue;
				}
				kernel_frames += c.counts[i];
				if (!strncmp(f, "[unknown]", 9))
					unknown_kernel += c.counts[i];
			}
			if (all_kernel)
				with_kernel += c.counts[i];
			free(frames);
		}
	}
	fprintf(stderr, "  read_zero_blocks: %llu samples, %llu with kernel frames above it\n",
		(unsigned long long)in_func, (unsigned long long)with_kernel);
	assert_true(in_func > 1000);
	/* Reading 1 MiB of zeros is almost all kernel work. */
	assert_true(with_kernel * 100 >= in_func * 80);
	assert_true(unknown_kernel * 100 <= kernel_frames);
	collapsed_free(&c);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

/* -a: the workload is found among every process on the host, under its name. */
static void all_processes_finds_workload(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *file;
	char *wargv[] = { workload, "-t", "1", NULL };
	struct child w, prof;
	struct collapsed c;
	uint64_t found = 0;

	harness_require_root();
	file = harness_path(dir, "all.collapsed");
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	char *args[] = { "-a", "-F", "499", "-d", "2", "-f", file, NULL };

	assert_int_equal(harness_run_profiler(&prof, args, 60), 0);
	harness_stop_workload(&w);
	assert_int_equal(collapsed_load(file, &c), 0);
	for (size_t i = 0; i < c.n; i++)
		if (!strncmp(c.stacks[i], "cpu_split;", 10) && strstr(c.stacks[i], ";share_50"))
			found += c.counts[i];
	/* One busy thread for 2 s at 499 Hz is about 1000 samples; half go to share_50. */
	fprintf(stderr, "  cpu_split;...;share_50 under -a: %llu samples of %llu\n",
		(unsigned long long)found, (unsigned long long)c.total);
	assert_true(found >= 200);
	collapsed_free(&c);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

/*
 * A target that exits mid-recording: the profiler stops early, says so, and
 * still writes a symbolized profile of the time before.
 */
static void target_exits_mid_recording(void **state)
{
	char *workload = harness_workload("cpu_split"), *dir = harness_tmpdir(), *file, pid[16];
	char *wargv[] = { workload, "-t", "1", "-d", "2", NULL };
	struct child w, prof;
	struct collapsed c;

	harness_require_root();
	file = harness_path(dir, "exit.collapsed");
	assert_int_equal(harness_start_workload(&w, wargv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	char *args[] = { "-p", pid, "-F", "997", "-d", "60", "-f", file, NULL };

	/* Well under the 60 s asked for: the exit must end the recording. */
	assert_int_equal(harness_run_profiler(&prof, args, 30), 0);
	assert_int_equal(harness_finish(&w, 10), 0);
	assert_non_null(strstr(prof.buf, "exited after"));
	assert_int_equal(collapsed_load(file, &c), 0);
	assert_true(collapsed_count_frame(&c, "share_50") > 100);
	assert_true(collapsed_count_frame(&c, "worker") > 100);
	collapsed_free(&c);
	unlink(file);
	rmdir(dir);
	free(file);
	free(dir);
	free(workload);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(shares_at_997_hz),
		HARNESS_TEST(no_aliasing_at_100_hz),
		HARNESS_TEST(fixed_interval_aliases),
		HARNESS_TEST(kernel_frames_under_user_frames),
		HARNESS_TEST(all_processes_finds_workload),
		HARNESS_TEST(target_exits_mid_recording),
	};

	return cmocka_run_group_tests_name("cpu sampling", tests, NULL, NULL);
}
