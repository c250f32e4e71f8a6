/*
 * java_walk_run: a JVM recorded, and the walk checked against the agent
 * (contract in java_walk_run.h).
 */
#include "java_walk_run.h"

#include "harness.h"
#include "jvm.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct jdk *require_java(void **state)
{
	jvm_require(*state, "WalkShapes");
	return *state;
}

void record(struct child *profiler, struct collapsed *stacks, pid_t pid, const char *dir, char *const args[],
	    int timeout_s)
{
	char pid_text[16], *file = harness_path(dir, "walk.collapsed"), *argv[48];
	int status;

	snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
	harness_profiler_args(argv, 48, pid_text, file, args);
	status = harness_run_profiler(profiler, argv, timeout_s);
	if (status != 0)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler->buf);
	assert_int_equal(status, 0);
	assert_int_equal(collapsed_load(file, stacks), 0);
	unlink(file);
	free(file);
}

static int parse_agreement(const char *text, struct agreement *a)
{
	const char *p = strstr(text, "BPF walk against the agent: ");

	return p && sscanf(p,
			   "BPF walk against the agent: %llu samples, %lf%% the same methods (%llu without Java "
			   "frames, %llu ended early), %lf%% of %llu bytecode indexes and %lf%% of %llu kinds",
			   &a->samples, &a->methods, &a->none, &a->stopped, &a->bci, &a->bci_pairs, &a->kinds,
			   &a->kind_pairs) == 8
		       ? 0
		       : -1;
}

double three_errors(double aim_percent, double n)
{
	double p = aim_percent / 100.0;

	return n > 0 ? 300.0 * sqrt(p * (1.0 - p) / n) : 100.0;
}

double share_of(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

void compare_once(struct jvm *jvm, const struct jdk *jdk, const char *what, char *const args[],
		  struct agreement_sum *sum, struct collapsed *stacks)
{
	struct child profiler;
	struct agreement a;

	record(&profiler, stacks, jvm->out.pid, jvm->dir, args, 60);
	if (parse_agreement(profiler.buf, &a)) {
		fprintf(stderr, "no comparison in the summary; the profiler's stderr:\n%s\n", profiler.buf);
		fail();
	}
	/* The walk's own figures count no sample here (each is compared instead): not said as "0 of 0". */
	if (strstr(profiler.buf, " 0 of 0 JVM thread samples"))
		fail_msg("the summary counts no sample of the walk: %s", profiler.buf);
	sum->rounds++;
	fprintf(stderr, "  %s, %s round %d: %llu samples, %.1f%% the same methods, %.1f%% of %llu bcis, %.1f%% of %llu "
		"kinds%.*s\n", jdk->name, what, sum->rounds, a.samples, a.methods, a.bci, a.bci_pairs, a.kinds,
		a.kind_pairs, strstr(profiler.buf, "; kinds that differ") ? (int)strcspn(strstr(profiler.buf,
		"; kinds that differ"), "\n") : 0, strstr(profiler.buf, "; kinds that differ") ? strstr(profiler.buf,
		"; kinds that differ") : "");
	sum->samples += (double)a.samples;
	sum->methods += a.methods * (double)a.samples / 100.0;
	sum->bci_pairs += (double)a.bci_pairs;
	sum->bci += a.bci * (double)a.bci_pairs / 100.0;
	sum->kind_pairs += (double)a.kind_pairs;
	sum->kinds += a.kinds * (double)a.kind_pairs / 100.0;
}

void agrees(const struct jdk *jdk, const char *what, char *const jvm_opts[], const char *class,
	    char *const args[])
{
	struct agreement_sum sum = { 0 };
	struct jvm jvm;

	jvm_start_opts(&jvm, jdk, jvm_opts, class, args);
	while (sum.samples < AGREE_SAMPLES && sum.rounds < RECORD_ROUNDS) {
		struct collapsed stacks;

		compare_once(&jvm, jdk, what, (char *[]){ "-F", "997", "-d", "4", "--java-stacks", "both", NULL }, &sum,
			     &stacks);
		collapsed_free(&stacks);
	}
	jvm_assert_no_crash_report(&jvm);
	jvm_stop(&jvm);
	fprintf(stderr, "  %s, %s: %.0f samples, %.2f%% the same methods, %.2f%% of %.0f bcis, %.2f%% of %.0f kinds\n",
		jdk->name, what, sum.samples, share_of(sum.methods, sum.samples), share_of(sum.bci, sum.bci_pairs),
		sum.bci_pairs, share_of(sum.kinds, sum.kind_pairs), sum.kind_pairs);
	/* Busy threads at 997 Hz: 1,000 samples in one recording unless the machine is very busy. */
	assert_true(sum.samples >= AGREE_FEWEST);
	assert_true(share_of(sum.methods, sum.samples) >= 99.0 - three_errors(99.0, sum.samples));
	assert_true(sum.bci_pairs >= sum.samples && share_of(sum.bci, sum.bci_pairs) >= 99.0 - three_errors(99.0,
		    sum.bci_pairs));
	assert_true(sum.kind_pairs >= sum.samples / 2 &&
		    share_of(sum.kinds, sum.kind_pairs) >= 99.0 - three_errors(99.0, sum.kind_pairs));
}

char *walkjni_path(void)
{
	char *dir = realpath(harness_getenv("WORKLOAD_DIR", "build/workloads"), NULL), *path;

	assert_non_null(dir);
	path = harness_path(dir, "libwalkjni.so");
	free(dir);
	return path;
}

void count_thread_frame(const struct collapsed *c, const char *prefix, const char *frame, uint64_t *on_threads,
			uint64_t *with_frame)
{
	size_t len = strlen(prefix);

	*on_threads = *with_frame = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 0 && fr.f[0][0] == '[' && !strncmp(fr.f[0] + 1, prefix, len)) {
			*on_threads += c->counts[i];
			if (find_frame(&fr, 1, frame) >= 0)
				*with_frame += c->counts[i];
		}
		free(fr.buf);
	}
}

void count_tid_frame(const struct collapsed *c, const char *tid_suffix, const char *frame, uint64_t *on_tid,
		     uint64_t *with_frame)
{
	size_t slen = strlen(tid_suffix);

	*on_tid = *with_frame = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		size_t len;

		frames_split(&fr, c->stacks[i]);
		len = fr.n > 0 ? strlen(fr.f[0]) : 0;
		if (len > slen && fr.f[0][0] == '[' && !strcmp(fr.f[0] + len - slen, tid_suffix) &&
		    find_frame(&fr, 1, "JNI_CreateJavaVM") < 0 &&
		    find_frame(&fr, 1, "sun.launcher.LauncherHelper.checkAndLoadMain") < 0) {
			*on_tid += c->counts[i];
			if (find_frame(&fr, 1, frame) >= 0)
				*with_frame += c->counts[i];
		}
		free(fr.buf);
	}
}

/* Thread roots told apart by busiest_root. */
#define MAX_ROOTS 512

/*
 * The thread root with the most samples that reach frame, in one pass (the
 * recordings have thousands of stacks): its whole frame less the '[' when
 * by_tid is false, its " tid=N]" when true; "" when none.
 */
static void busiest_root(const struct collapsed *c, const char *frame, bool by_tid, char *out, size_t size)
{
	static char roots[MAX_ROOTS][128];
	uint64_t counts[MAX_ROOTS] = { 0 }, best = 0;
	size_t nr = 0;

	out[0] = '\0';
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		const char *key = NULL;
		size_t k;

		frames_split(&fr, c->stacks[i]);
		if (fr.n > 0 && fr.f[0][0] == '[')
			key = by_tid ? strstr(fr.f[0], " tid=") : fr.f[0] + 1;
		if (key && strlen(key) < sizeof(roots[0]) && find_frame(&fr, 1, frame) >= 0) {
			for (k = 0; k < nr && strcmp(roots[k], key); k++)
				;
			if (k == nr && nr < MAX_ROOTS)
				strcpy(roots[nr++], key);
			if (k < nr)
				counts[k] += c->counts[i];
		}
		free(fr.buf);
	}
	for (size_t k = 0; k < nr; k++)
		if (counts[k] > best && strlen(roots[k]) < size) {
			best = counts[k];
			strcpy(out, roots[k]);
		}
}

void thread_running(const struct collapsed *c, const char *frame, char *root, size_t size)
{
	busiest_root(c, frame, false, root, size);
}

void busiest_tid(const struct collapsed *c, const char *frame, char *out, size_t size)
{
	busiest_root(c, frame, true, out, size);
}

void count_loop_compiled(const struct collapsed *c, uint64_t *with_java, uint64_t *compiled)
{
	*with_java = *compiled = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		bool own = false;

		frames_split(&fr, c->stacks[i]);
		for (int k = 1; k < fr.n && !own; k++)
			own = !strncmp(fr.f[k], "DeepInline", 10);
		if (fr.n > 0 && !strncmp(fr.f[0], "[inline-", 8) && own) {
			*with_java += c->counts[i];
			if (find_frame(&fr, 1, "DeepInline.run_[j]") >= 0)
				*compiled += c->counts[i];
		}
		free(fr.buf);
	}
}
