/*
 * Java thread names read from the JVM's memory (hotspot/thread_names.c),
 * end to end, on JDK 17 and JDK 25, with the JVM walked by BPF:
 *
 *  - ThreadNames' threads, named past the kernel's 15 bytes in Latin-1
 *    (ASCII and not) and UTF-16, have their samples under their whole
 *    names in --threads' collapsed stacks, and none under the kernel's cut
 *    ones but those the summary counts as taken while the collector moved
 *    the names (the workload collects every 50 ms);
 *  - the thread renamed every 300 ms is found under at least two of its
 *    names, and under the kernel's only so;
 *  - the VM's own threads, which are not Java threads, keep their kernel
 *    names (the collector's, "GC Thread#N" and the like): sampled as often
 *    as their CPU time, read from /proc over the recording, says;
 *  - a name longer than the profiler reads (5000 characters) is refused:
 *    that thread keeps its kernel name, and the summary counts it;
 *  - the same recording as pprof (read back by jbpfprof convert) has the
 *    same samples under the same names, and as JFR the JDK's own jfr tool
 *    finds as many samples under the first name;
 *  - with -XX:-CompactStrings (every String UTF-16), the same names.
 */
#include "harness.h"
#include "jvm.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel keeps 15 bytes of a thread's name. */
#define KERNEL_NAME_MAX 15

/* Samples of each thread, by the name its stacks begin with ("[NAME tid=N]"). */
struct by_thread {
	char names[256][128];
	uint64_t counts[256];
	size_t n;
};

static void by_thread_of(const struct collapsed *c, struct by_thread *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < c->n; i++) {
		const char *s = c->stacks[i], *end = strstr(s, " tid=");
		size_t len, k;

		if (s[0] != '[' || !end)
			continue;
		len = (size_t)(end - s - 1);
		if (len >= sizeof(t->names[0]))
			len = sizeof(t->names[0]) - 1;
		for (k = 0; k < t->n; k++)
			if (strlen(t->names[k]) == len && !strncmp(t->names[k], s + 1, len))
				break;
		if (k == t->n) {
			assert_true(t->n < 256);
			memcpy(t->names[t->n++], s + 1, len);
		}
		t->counts[k] += c->counts[i];
	}
}

static uint64_t samples_of(const struct by_thread *t, const char *name)
{
	for (size_t k = 0; k < t->n; k++)
		if (!strcmp(t->names[k], name))
			return t->counts[k];
	return 0;
}

/* Threads whose name starts with prefix: how many names, and their samples into *samples. */
static size_t names_starting(const struct by_thread *t, const char *prefix, uint64_t *samples)
{
	size_t n = 0;

	*samples = 0;
	for (size_t k = 0; k < t->n; k++)
		if (!strncmp(t->names[k], prefix, strlen(prefix))) {
			n++;
			*samples += t->counts[k];
		}
	return n;
}

/* The kernel's name of a thread named name: its first 15 bytes. */
static void kernel_name(const char *name, char out[KERNEL_NAME_MAX + 1])
{
	size_t len = strlen(name) < KERNEL_NAME_MAX ? strlen(name) : KERNEL_NAME_MAX;

	memcpy(out, name, len);
	out[len] = '\0';
}

/* A thread of the VM itself, not a Java thread: the collector's or the VM thread. */
static bool vm_thread_name(const char *name)
{
	return !strncmp(name, "GC Thread#", 10) || !strncmp(name, "G1 ", 3) || !strcmp(name, "VM Thread");
}

/* CPU time so far, in ns, of process pid's VM threads (their schedstat's first field). */
static unsigned long long vm_threads_cpu_ns(pid_t pid)
{
	unsigned long long total = 0, ns;
	char path[300], comm[64];
	struct dirent *e;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (!vm_thread_name(comm))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid, e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			total += ns;
		fclose(f);
	}
	closedir(d);
	return total;
}

/* The names the workload printed ("name NAME" lines), at most max into names: how many. */
static size_t workload_names(const struct jvm *jvm, char names[][128], size_t max)
{
	const char *at = jvm->out.buf;
	size_t n = 0;

	while (n < max && (at = strstr(at, "name "))) {
		const char *end = strchr(at, '\n');

		if (!end)
			break;
		if (at == jvm->out.buf || at[-1] == '\n')
			snprintf(names[n++], 128, "%.*s", (int)(end - at - 5), at + 5);
		at = end;
	}
	return n;
}

static void thread_names_on(const struct jdk *jdk, char *const jvm_opts[])
{
	static const char renamed[] = "renamed-generation-", huge[] = "huge-name-";
	char *dir, *collapsed, *pprof, *jfr, *converted, pid[16], *argv[32], names[8][128], tool[512];
	char cut[KERNEL_NAME_MAX + 1], cmd[2048];
	struct collapsed stacks, back;
	struct by_thread t, tb;
	struct child profiler;
	struct jvm jvm;
	unsigned long long vm_cpu_ns, moving;
	uint64_t gc, on_renamed, on_cut, under_cut;
	double gc_expected;
	size_t nr_names, generations;
	unsigned long long unreadable, invalid;
	const char *summary;
	FILE *json;

	jvm_require(jdk, "ThreadNames");
	jvm_start_opts(&jvm, jdk, jvm_opts, "ThreadNames", NULL);
	nr_names = workload_names(&jvm, names, 8);
	assert_int_equal(nr_names, 3);
	dir = harness_tmpdir();
	collapsed = harness_path(dir, "rec.collapsed");
	pprof = harness_path(dir, "rec.pb.gz");
	jfr = harness_path(dir, "rec.jfr");
	converted = harness_path(dir, "back.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	harness_profiler_args(argv, 32, pid, collapsed,
			      (char *[]){ "-d", "3", "-F", "499", "--threads", "-f", pprof, "-f", jfr, NULL });
	assert_int_equal(harness_start_profiler(&profiler, argv), 0);
	if (harness_wait_for(&profiler, "jbpfprof: sampling", 60))
		fail_msg("the profiler did not start: %s", profiler.buf);
	vm_cpu_ns = vm_threads_cpu_ns(jvm.out.pid);
	if (harness_finish(&profiler, 120) != 0)
		fail_msg("the profiler failed: %s", profiler.buf);
	/* From the first sample to the profiler's exit, a little more than it sampled. */
	vm_cpu_ns = vm_threads_cpu_ns(jvm.out.pid) - vm_cpu_ns;
	gc_expected = (double)vm_cpu_ns / 1e9 * 499;
	assert_int_equal(collapsed_load(collapsed, &stacks), 0);
	by_thread_of(&stacks, &t);

	/*
	 * Every named thread under its whole name, none under the kernel's cut
	 * one but the samples the summary says were taken while the collector
	 * moved the names (the workload collects every 50 ms).
	 */
	summary = strstr(profiler.buf, " samples named by the kernel while the collector moved");
	while (summary && summary > profiler.buf && summary[-1] >= '0' && summary[-1] <= '9')
		summary--;
	moving = summary ? strtoull(summary, NULL, 10) : 0;
	under_cut = 0;
	strcpy(names[nr_names++], "garbage-maker-thread-long");
	for (size_t i = 0; i < nr_names; i++) {
		kernel_name(names[i], cut);
		printf("  %s: %llu samples under \"%s\", %llu under \"%s\"\n", jdk->name,
		       (unsigned long long)samples_of(&t, names[i]), names[i], (unsigned long long)samples_of(&t, cut),
		       cut);
		assert_true(samples_of(&t, names[i]) > samples_of(&t, cut));
		under_cut += samples_of(&t, cut);
	}
	/* Renamed while recorded: under its names as they changed, never the kernel's but for the same reason. */
	generations = names_starting(&t, renamed, &on_renamed);
	kernel_name(renamed, cut);
	names_starting(&t, cut, &on_cut);
	printf("  %s: the renamed thread: %llu samples under %zu of its names, %llu under \"%s\"\n", jdk->name,
	       (unsigned long long)on_renamed, generations, (unsigned long long)(on_cut - on_renamed), cut);
	assert_true(generations >= 2);
	assert_true(on_renamed > on_cut - on_renamed);
	under_cut += on_cut - on_renamed;
	printf("  %s: %llu samples under cut names, %llu said to be taken while names moved\n", jdk->name,
	       (unsigned long long)under_cut, moving);
	assert_true(under_cut <= moving);
	/*
	 * The VM's own threads: their kernel names. The workload collects every
	 * 50 ms; with their CPU time worth 20 samples or more, none at all would
	 * be a chance below 1e-7.
	 */
	gc = 0;
	for (size_t k = 0; k < t.n; k++)
		if (vm_thread_name(t.names[k]))
			gc += t.counts[k];
	printf("  %s: %llu samples of the collector's and VM's threads, which used %.0f ms of CPU (%.0f samples)\n",
	       jdk->name, (unsigned long long)gc, vm_cpu_ns / 1e6, gc_expected);
	if (gc_expected < 20)
		fail_msg("the collector's and VM's threads used only %.1f ms of CPU", vm_cpu_ns / 1e6);
	assert_true(gc > 0);
	/* The name too long to read: the kernel's, counted. */
	kernel_name(huge, cut);
	memset(cut + strlen(huge), 'x', KERNEL_NAME_MAX - strlen(huge));
	assert_true(samples_of(&t, cut) > 0);
	summary = strstr(profiler.buf, "Java thread names not read, the kernel's kept: ");
	if (!summary || sscanf(summary, "Java thread names not read, the kernel's kept: %llu unreadable, %llu invalid",
			       &unreadable, &invalid) != 2)
		fail_msg("no count of names not read in the summary: %s", profiler.buf);
	assert_int_equal(unreadable, 0);
	assert_int_equal(invalid, 1);

	/* pprof: the same samples under the same names. */
	if (harness_run_profiler(&profiler, (char *[]){ "convert", pprof, "--threads", "-o", "collapsed", "-f",
							converted, NULL }, 120) != 0)
		fail_msg("convert failed: %s", profiler.buf);
	assert_int_equal(collapsed_load(converted, &back), 0);
	by_thread_of(&back, &tb);
	for (size_t k = 0; k < t.n; k++)
		assert_int_equal(samples_of(&tb, t.names[k]), t.counts[k]);
	assert_int_equal(tb.n, t.n);

	/* JFR, as the JDK's own tool reads it: each name once in the thread table, whole. */
	snprintf(tool, sizeof(tool), "%s", jdk_java_path(jdk));
	*strrchr(tool, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "'%s/jfr' print --events jdk.ExecutionSample '%s' | grep -c 'sampledThread = \"%s\"'",
		 tool, jfr, names[0]);
	json = popen(cmd, "r");
	assert_non_null(json);
	{
		unsigned long long events = 0;

		assert_int_equal(fscanf(json, "%llu", &events), 1);
		pclose(json);
		printf("  %s: jfr print: %llu samples of \"%s\"\n", jdk->name, events, names[0]);
		assert_int_equal(events, samples_of(&t, names[0]));
	}
	collapsed_free(&back);
	collapsed_free(&stacks);
	jvm_stop(&jvm);
	unlink(collapsed);
	unlink(pprof);
	unlink(jfr);
	unlink(converted);
	rmdir(dir);
	free(collapsed);
	free(pprof);
	free(jfr);
	free(converted);
	free(dir);
}

static void names_jdk17(void **state)
{
	(void)state;
	thread_names_on(&jdk17, NULL);
}

static void names_jdk25(void **state)
{
	(void)state;
	thread_names_on(&jdk25, NULL);
}

static void names_jdk25_without_compact_strings(void **state)
{
	(void)state;
	thread_names_on(&jdk25, (char *[]){ "-XX:-CompactStrings", NULL });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(names_jdk17),
		HARNESS_TEST(names_jdk25),
		HARNESS_TEST(names_jdk25_without_compact_strings),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("Java thread names from the JVM's memory", tests, NULL, NULL);
}
