/*
 * Processes that change under the profiler: one that replaces its program
 * with execve, and a stream of processes too short-lived to wait for.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * exec_into spins in spin_before_exec for 300 ms, then becomes cpu_split.
 * Its maps were read before the exec; samples after it must resolve in
 * cpu_split, not be looked up in the program that is gone.
 */
static void exec_replaces_what_is_known(void **state)
{
	char *target = harness_workload("cpu_split");
	uint64_t before = 0, after = 0, total;
	struct profiled r;

	harness_require_root();
	harness_profile(&r, "exec_into", (char *[]){ target, "-t", "1", NULL },
			(char *[]){ "-F", "997", "-d", "2.5", NULL }, 1, 60);
	assert_int_equal(r.profiler_status, 0);
	total = r.stacks.total;
	before = collapsed_count_frame(&r.stacks, "spin_before_exec");
	for (const char *const *f = (const char *const[]){ "share_50", "share_30", "share_20", NULL }; *f; f++)
		after += collapsed_count_frame(&r.stacks, *f);
	fprintf(stderr, "  %llu samples: %llu before the exec, %llu after it in cpu_split's functions\n",
		(unsigned long long)total, (unsigned long long)before, (unsigned long long)after);
	/* About 2 s of cpu_split at 997 Hz after the exec. */
	assert_true(after >= 1200);
	assert_true((before + after) * 100 >= total * 95);
	harness_profiled_free(&r);
	free(target);
}

/*
 * short_lived runs one child at a time, each for 30 ms of CPU, renamed
 * "sl_child" after its exec ("exe" before). The first sample of a process
 * wakes the profiler, which reads its maps while it still lives.
 */
static void short_lived_processes_resolve(void **state)
{
	uint64_t children = 0, resolved = 0;
	struct profiled r;

	harness_require_root();
	harness_profile(&r, "short_lived", (char *[]){ "30", NULL }, (char *[]){ "-a", "-F", "997", "-d", "4", NULL },
			0, 60);
	assert_int_equal(r.profiler_status, 0);
	for (size_t i = 0; i < r.stacks.n; i++) {
		const char *s = r.stacks.stacks[i];

		/* Each child its own process frame: "sl_child (pid N)", or "exe (pid N)" before its exec. */
		if (strncmp(s, "sl_child (pid ", 14) && strncmp(s, "exe (pid ", 9))
			continue;
		children += r.stacks.counts[i];
		if (strstr(s, ";child_work"))
			resolved += r.stacks.counts[i];
	}
	fprintf(stderr, "  child samples %llu, %llu resolved to child_work\n", (unsigned long long)children,
		(unsigned long long)resolved);
	assert_true(children >= 1000);
	assert_true(resolved * 100 >= children * 80);
	harness_profiled_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(exec_replaces_what_is_known),
		HARNESS_TEST(short_lived_processes_resolve),
	};

	return cmocka_run_group_tests_name("changing processes", tests, NULL, NULL);
}
