/*
 * The profiler killed outright (SIGKILL) in the middle of a recording with
 * uprobes attached: -e nativemem (the C library's allocator) and -e wall
 * on a JVM with virtual threads (their mount and unmount in libjvm), as
 * one recording, with the kernel's multi-uprobe links and again with one
 * perf-event uprobe per function (JBPFPROF_FORCE_FALLBACK=uprobe-multi).
 *
 * The target is JDK 25's "VThreads yields 8": eight virtual threads that
 * only yield, each yield an unmount and a mount, and print "yields N",
 * their count so far, every 500 ms. A probe left on those paths would
 * make every yield trap into the kernel. After the kill, with the
 * profiler reaped (its descriptors closed, and with them its links):
 *   - no BPF link the profiler held (its descriptors' fdinfo names
 *     them by id, and ids are not reused soon) exists any more: links of
 *     other processes, such as another profiler's, are not its;
 *   - /sys/kernel/tracing/uprobe_events has the lines it had before;
 *   - the target yields at least half as fast as before the recording,
 *     per second of its CPU time over the same 2 s window (the rate
 *     during the recording is printed beside, for what the probes cost):
 *     per CPU second, so that other load on the machine does not count,
 *     and in the best of up to AFTER_WINDOWS windows after the kill.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "jvm.h"

#define MAX_LINKS 4096
/* Rates are measured over this many "yields" lines, 500 ms apart. */
#define RATE_LINES 4
/* After the kill, the rate is measured up to this many times (until it passes). */
#define AFTER_WINDOWS 3

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ids of every BPF link on the host, in ids[] (up to max); their number. */
static size_t link_ids(uint32_t *ids, size_t max)
{
	union bpf_attr attr;
	size_t n = 0;
	uint32_t id = 0;

	for (;;) {
		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (syscall(SYS_bpf, BPF_LINK_GET_NEXT_ID, &attr, sizeof(attr)) != 0) {
			assert_int_equal(errno, ENOENT);
			return n;
		}
		id = attr.next_id;
		assert_true(n < max);
		ids[n++] = id;
	}
}

/*
 * The ids of the BPF links process pid holds (each link descriptor's
 * fdinfo names it), in ids[] (up to max); their number. Other processes'
 * links, such as another profiler's, are not counted.
 */
static size_t links_of(pid_t pid, uint32_t *ids, size_t max)
{
	char path[320], line[128];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "link_id:", 8) && n < max)
				ids[n++] = (uint32_t)strtoul(line + 8, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return n;
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* uprobe_events' content (empty when tracefs is not mounted); the caller frees. */
static char *uprobe_events(void)
{
	FILE *f = fopen("/sys/kernel/tracing/uprobe_events", "r");
	char *s = calloc(1, 65536);
	size_t n = 0;

	assert_non_null(s);
	if (f) {
		n = fread(s, 1, 65535, f);
		fclose(f);
	}
	s[n] = '\0';
	return s;
}

/* The count of the next "yields N" line the JVM prints (5 s at most), and when it was read. */
static long long next_yields(struct jvm *jvm, size_t *parsed, int64_t *at)
{
	int64_t deadline = now_ms() + harness_deadline_ms(5000);

	for (;;) {
		const char *line = jvm->out.buf + *parsed, *end;

		while ((end = memchr(line, '\n', jvm->out.len - *parsed))) {
			*parsed = (size_t)(end - jvm->out.buf) + 1;
			if (!strncmp(line, "yields ", 7)) {
				*at = now_ms();
				return atoll(line + 7);
			}
			line = jvm->out.buf + *parsed;
		}
		if (now_ms() > deadline || harness_read_some(&jvm->out, (int)(deadline - now_ms())) == 1)
			fail_msg("no \"yields\" line from the JVM; it printed:\n%s", jvm->out.buf);
	}
}

/*
 * Yields per second of the JVM's CPU time, over RATE_LINES lines printed
 * from now on (not those already waiting in the pipe). Per CPU second, not
 * per second: a probe left behind makes each yield cost more CPU, while a
 * machine loaded by others only gives the JVM less of it.
 */
static double yield_rate(struct jvm *jvm, size_t *parsed)
{
	int64_t t0, t1;
	long long first, last, cpu0, cpu1;
	const char *nl;

	while (harness_read_some(&jvm->out, 0) == 0)
		;
	nl = memrchr(jvm->out.buf + *parsed, '\n', jvm->out.len - *parsed);
	if (nl)
		*parsed = (size_t)(nl - jvm->out.buf) + 1;
	first = next_yields(jvm, parsed, &t0);
	cpu0 = harness_process_cpu_ms(jvm->out.pid);
	last = first;

	for (int i = 0; i < RATE_LINES; i++)
		last = next_yields(jvm, parsed, &t1);
	cpu1 = harness_process_cpu_ms(jvm->out.pid);
	assert_true(cpu0 >= 0 && cpu1 > cpu0);
	return (double)(last - first) * 1000.0 / (double)(cpu1 - cpu0);
}

static void killed_with_probes(const char *fallback)
{
	static uint32_t during[MAX_LINKS], after[MAX_LINKS];
	size_t nr_during, nr_after, parsed;
	char pid[16], *events_before, *events_after;
	double rate_before, rate_during, rate_after;
	struct child profiler;
	struct jvm jvm;

	jvm_require(&jdk25, "VThreads");
	if (fallback)
		setenv("JBPFPROF_FORCE_FALLBACK", fallback, 1);
	else
		unsetenv("JBPFPROF_FORCE_FALLBACK");
	jvm_start(&jvm, &jdk25, "VThreads", (char *[]){ "yields", "8", NULL });
	parsed = jvm.out.len;
	rate_before = yield_rate(&jvm, &parsed);
	events_before = uprobe_events();
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	assert_int_equal(harness_start_profiler(&profiler, (char *[]){ "-p", pid, "-e", "nativemem,wall", "-d", "60",
								       "-f", "/dev/null", "-o", "pprof", NULL }),
			 0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 30) != 0)
		fail_msg("the profiler did not start; it said:\n%s", profiler.buf);
	rate_during = yield_rate(&jvm, &parsed);
	nr_during = links_of(profiler.pid, during, MAX_LINKS);
	/* The recording holds links: the checks below can fail. */
	assert_true(nr_during > 0);
	kill(profiler.pid, SIGKILL);
	assert_int_equal(harness_finish(&profiler, 10), -1);
	unsetenv("JBPFPROF_FORCE_FALLBACK");

	nr_after = link_ids(after, MAX_LINKS);
	for (size_t i = 0; i < nr_during; i++)
		if (has_id(after, nr_after, during[i]))
			fail_msg("BPF link %u, the profiler's, outlived it", during[i]);
	events_after = uprobe_events();
	if (strcmp(events_before, events_after))
		fail_msg("uprobe_events was:\n%s\nand is after the profiler was killed:\n%s", events_before,
			 events_after);
	/*
	 * The best of a few windows: a JVM whose yields ran slow under the
	 * probes takes a while to come back up to speed (its compiled code
	 * was built meanwhile), while a probe left behind slows every window.
	 */
	rate_after = 0;
	for (int w = 0; w < AFTER_WINDOWS && rate_after < rate_before / 2; w++)
		rate_after = fmax(rate_after, yield_rate(&jvm, &parsed));
	fprintf(stderr, "  %s: %zu links held; yields per CPU second before %.0f, during %.0f, after the kill %.0f\n",
		fallback ? fallback : "multi-uprobe links", nr_during, rate_before, rate_during, rate_after);
	assert_true(rate_after >= rate_before / 2);
	jvm_stop(&jvm);
	free(events_before);
	free(events_after);
}

static void killed_with_uprobe_links(void **state)
{
	(void)state;
	killed_with_probes(NULL);
}

static void killed_with_perf_event_uprobes(void **state)
{
	(void)state;
	killed_with_probes("uprobe-multi");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(killed_with_uprobe_links),
		HARNESS_TEST(killed_with_perf_event_uprobes),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("killed", tests, NULL, NULL);
}
