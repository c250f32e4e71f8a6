/*
 * A whole-host profile tells its processes apart (-a, --group-by).
 *
 * Seven busy processes at once: three JVMs (CpuSplit, SpinRate, and
 * CpuSplit again from cpusplit.jar), two instances of the native
 * cpu_split, a python3 script and a shell loop. One recording with -a
 * --group-by service --threads writes collapsed stacks, a text report and a
 * pprof recording; then:
 *
 *   - convert --group-by process gives each process its own root frame,
 *     named for what it runs and its pid, and every stack under it is of
 *     one of that process's threads (each thread frame's tid belongs to
 *     the root's pid, read from /proc while all still run), with the
 *     frames of the program it runs;
 *   - the recording's own collapsed output, grouped by service, has the
 *     two cpu_split instances merged into one root whose count is theirs
 *     together, and the JVMs apart; convert --group-by service, and
 *     convert with no --group-by (the recording says how it grouped),
 *     give the very same stacks;
 *   - the text report lists the processes (here services) with the same
 *     counts.
 */
#include "harness.h"
#include "jvm.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NR_PROCESSES 7

struct process {
	struct child child;
	struct jvm jvm;
	bool is_jvm;
	char root[128];     /* its root frame under --group-by process */
	char service[128];  /* ... under --group-by service */
	const char *frame;  /* a frame its stacks must have, NULL for none */
	const char *never;  /* a frame its stacks must not have, NULL for none */
	uint64_t samples;
};

static pid_t pid_of(const struct process *p)
{
	return p->is_jvm ? p->jvm.out.pid : p->child.pid;
}

/* The tgid of thread tid, from /proc; -1 once it is gone. */
static long tgid_of(long tid)
{
	char path[64], line[256];
	long tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", tid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5))
			tgid = strtol(line + 5, NULL, 10);
	fclose(f);
	return tgid;
}

/* The tid of a stack's thread frame, "[name tid=N]" right after its root; -1 when it has none. */
static long thread_of(const char *stack)
{
	const char *semi = strchr(stack, ';'), *tid;

	if (!semi || semi[1] != '[')
		return -1;
	tid = strstr(semi, " tid=");
	if (!tid || (strchr(semi + 1, ';') && tid > strchr(semi + 1, ';')))
		return -1;
	return strtol(tid + 5, NULL, 10);
}

static bool has_root(const char *stack, const char *root)
{
	size_t n = strlen(root);

	return !strncmp(stack, root, n) && stack[n] == ';';
}

/* Samples whose stack begins with root. */
static uint64_t under(const struct collapsed *c, const char *root)
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++)
		n += has_root(c->stacks[i], root) ? c->counts[i] : 0;
	return n;
}

/* Whether a and b hold the same stacks with the same counts. */
static void assert_same_collapsed(const struct collapsed *a, const struct collapsed *b, const char *what)
{
	if (a->n != b->n || a->total != b->total)
		fail_msg("%s: %zu stacks, %" PRIu64 " samples against %zu, %" PRIu64, what, a->n, a->total, b->n,
			 b->total);
	for (size_t i = 0; i < a->n; i++) {
		size_t j = 0;

		while (j < b->n && strcmp(a->stacks[i], b->stacks[j]))
			j++;
		if (j == b->n || a->counts[i] != b->counts[j])
			fail_msg("%s: stack %s (%" PRIu64 ") is not the same in both", what, a->stacks[i], a->counts[i]);
	}
}

static void start(struct process *p, char *const argv[], const char *service, const char *frame,
		  const char *never)
{
	char comm[32];

	assert_int_equal(harness_start_workload(&p->child, argv), 0);
	snprintf(comm, sizeof(comm), "%s", strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
	if (!strcmp(service, comm)) {
		snprintf(p->root, sizeof(p->root), "%s (pid %d)", comm, (int)p->child.pid);
		snprintf(p->service, sizeof(p->service), "%s", comm);
	} else {
		snprintf(p->root, sizeof(p->root), "%s (%s, pid %d)", service, comm, (int)p->child.pid);
		snprintf(p->service, sizeof(p->service), "%s (%s)", service, comm);
	}
	p->frame = frame;
	p->never = never;
}

static void start_jvm(struct process *p, const char *class, char *const args[], const char *service,
		      const char *frame, const char *never)
{
	jvm_start(&p->jvm, &jdk17, class, args);
	p->is_jvm = true;
	snprintf(p->root, sizeof(p->root), "%s (java, pid %d)", service, (int)p->jvm.out.pid);
	snprintf(p->service, sizeof(p->service), "%s (java)", service);
	p->frame = frame;
	p->never = never;
}

/* A whole file, NUL-terminated (caller frees); fails the test when it cannot be read. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	int c;

	assert_non_null(f);
	assert_non_null(out);
	while ((c = fgetc(f)) != EOF)
		fputc(c, out);
	fclose(f);
	assert_int_equal(fclose(out), 0);
	return text;
}

/* A text report's row count for name in its processes table; 0 when absent. */
static uint64_t report_row(const char *report, const char *name)
{
	const char *table = strstr(report, "Processes by samples\n"), *line;
	uint64_t count = 0;

	assert_non_null(table);
	for (line = strchr(table, '\n') + 1; line && *line && *line != '\n'; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *eol = strchr(line, '\n');
		size_t n = strlen(name);

		if (eol && (size_t)(eol - line) > n && !strncmp(eol - n, name, n) && eol[-(long)n - 1] == ' ')
			count = strtoull(line, NULL, 10);
	}
	return count;
}

static void host_profile_names_each_process(void **state)
{
	char *cpu_split = harness_workload("cpu_split"), *dir, *script, *jar, *classes, *report;
	char *svc_file, *pprof_file, *text_file, *proc_file, *svc2_file, *default_file;
	struct collapsed svc, proc, svc2, defaulted;
	struct process ps[NR_PROCESSES] = { 0 };
	uint64_t checked = 0, ours = 0;
	struct child profiler, convert;
	FILE *f;

	(void)state;
	jvm_require(&jdk17, "CpuSplit");
	dir = harness_tmpdir();
	classes = jvm_class_dir();
	assert_non_null(classes);
	script = harness_path(dir, "spin.py");
	jar = harness_path(classes, "cpusplit.jar");
	assert_int_equal(access(jar, R_OK), 0);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs("print('ready', flush=True)\nwhile True:\n    pass\n", f);
	assert_int_equal(fclose(f), 0);
	svc_file = harness_path(dir, "svc.collapsed");
	pprof_file = harness_path(dir, "host.pb.gz");
	text_file = harness_path(dir, "host.report");
	proc_file = harness_path(dir, "proc.collapsed");
	svc2_file = harness_path(dir, "svc2.collapsed");
	default_file = harness_path(dir, "default.collapsed");

	start_jvm(&ps[0], "CpuSplit", (char *[]){ "-t", "1", NULL }, "CpuSplit", "CpuSplit.share50", "SpinRate.unit");
	start_jvm(&ps[1], "SpinRate", (char *[]){ "10", NULL }, "SpinRate", "SpinRate.unit", "CpuSplit.share50");
	start_jvm(&ps[2], "-jar", (char *[]){ jar, "-t", "1", NULL }, "cpusplit.jar", "CpuSplit.share50",
		  "SpinRate.unit");
	start(&ps[3], (char *[]){ cpu_split, "-t", "1", NULL }, "cpu_split", "share_50", "CpuSplit.share50");
	start(&ps[4], (char *[]){ cpu_split, "-t", "1", NULL }, "cpu_split", "share_50", "CpuSplit.share50");
	start(&ps[5], (char *[]){ "/usr/bin/python3", script, NULL }, "spin.py", NULL, "share_50");
	/* Debian's /bin/sh is dash, but it calls itself sh (its comm). */
	start(&ps[6], (char *[]){ "/bin/sh", "-c", "echo ready; while :; do :; done", NULL }, "sh", NULL, "share_50");
	/* python3's comm is the name it was run by, which start took from argv[0]. */

	assert_int_equal(harness_run_profiler(&profiler,
					      (char *[]){ "-a", "-F", "199", "-d", "5", "--threads", "--group-by",
							  "service", "-f", svc_file, "-f", pprof_file, "-o", "text",
							  "-f", text_file, NULL },
					      90),
			 0);
	assert_int_equal(harness_run_profiler(&convert, (char *[]){ "convert", pprof_file, "--group-by", "process",
								    "--threads", "-o", "collapsed", "-f",
								    proc_file, NULL },
					      60),
			 0);
	assert_int_equal(collapsed_load(proc_file, &proc), 0);

	/* Every stack under a process's root is one of its threads': asked of /proc while all still run. */
	for (size_t i = 0; i < proc.n; i++) {
		for (size_t k = 0; k < NR_PROCESSES; k++) {
			long tid, tgid;

			if (!has_root(proc.stacks[i], ps[k].root))
				continue;
			ours += proc.counts[i];
			ps[k].samples += proc.counts[i];
			tid = thread_of(proc.stacks[i]);
			if (tid < 0)
				fail_msg("no thread frame: %s", proc.stacks[i]);
			tgid = tgid_of(tid);
			if (tgid >= 0 && tgid != pid_of(&ps[k]))
				fail_msg("thread %ld of pid %ld under %s", tid, tgid, ps[k].root);
			checked += tgid >= 0 ? proc.counts[i] : 0;
			if (ps[k].never && strstr(proc.stacks[i], ps[k].never))
				fail_msg("%s under %s", ps[k].never, ps[k].root);
		}
	}
	for (size_t k = 0; k < NR_PROCESSES; k++) {
		uint64_t with_frame = 0;

		for (size_t i = 0; ps[k].frame && i < proc.n; i++)
			if (has_root(proc.stacks[i], ps[k].root) && strstr(proc.stacks[i], ps[k].frame))
				with_frame += proc.counts[i];
		fprintf(stderr, "  %-40s %5" PRIu64 " samples", ps[k].root, ps[k].samples);
		if (ps[k].frame)
			fprintf(stderr, ", %" PRIu64 " in %s", with_frame, ps[k].frame);
		fputc('\n', stderr);
		/* Seven busy processes share 2 CPUs for 5 s at 199 Hz: some 280 samples each. */
		if (ps[k].samples < 20)
			fail_msg("%s: %" PRIu64 " samples; the profiler said:\n%s", ps[k].root, ps[k].samples,
				 profiler.buf);
		if (ps[k].frame && with_frame * 4 < ps[k].samples)
			fail_msg("%s: only %" PRIu64 " of %" PRIu64 " samples in %s", ps[k].root, with_frame,
				 ps[k].samples, ps[k].frame);
	}
	/* The threads that ended (a JVM's start-up threads) could not be asked: most samples were. */
	assert_true(checked * 10 >= ours * 9);

	for (size_t k = 0; k < NR_PROCESSES; k++) {
		if (ps[k].is_jvm)
			jvm_stop(&ps[k].jvm);
		else
			harness_stop_workload(&ps[k].child);
	}

	/* Grouped by service: the two cpu_split merged, the JVMs apart, as each conversion gives it too. */
	assert_int_equal(collapsed_load(svc_file, &svc), 0);
	assert_int_equal(under(&svc, "cpu_split"), ps[3].samples + ps[4].samples);
	assert_int_equal(under(&svc, ps[0].service), ps[0].samples);
	assert_int_equal(under(&svc, ps[1].service), ps[1].samples);
	assert_int_equal(under(&svc, ps[2].service), ps[2].samples);
	assert_int_equal(under(&svc, ps[5].service), ps[5].samples);
	assert_int_equal(harness_run_profiler(&convert, (char *[]){ "convert", pprof_file, "--group-by", "service",
								    "--threads", "-o", "collapsed", "-f",
								    svc2_file, NULL },
					      60),
			 0);
	assert_int_equal(collapsed_load(svc2_file, &svc2), 0);
	assert_same_collapsed(&svc, &svc2, "convert --group-by service");
	assert_int_equal(harness_run_profiler(&convert, (char *[]){ "convert", pprof_file, "--threads", "-o",
								    "collapsed", "-f", default_file, NULL },
					      60),
			 0);
	assert_int_equal(collapsed_load(default_file, &defaulted), 0);
	assert_same_collapsed(&svc, &defaulted, "convert as recorded");

	report = read_text(text_file);
	assert_int_equal(report_row(report, "cpu_split"), ps[3].samples + ps[4].samples);
	assert_int_equal(report_row(report, ps[0].service), ps[0].samples);

	free(report);
	collapsed_free(&svc2);
	collapsed_free(&defaulted);
	collapsed_free(&svc);
	harness_output_free(&proc, proc_file, NULL);
	for (char *const *p = (char *const[]){ svc_file, svc2_file, default_file, pprof_file, text_file, script, NULL };
	     *p; p++) {
		unlink(*p);
		free(*p);
	}
	rmdir(dir);
	free(dir);
	free(jar);
	free(classes);
	free(cpu_split);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(host_profile_names_each_process),
	};

	return cmocka_run_group_tests_name("whole-host profiles", tests, NULL, NULL);
}
