/*
 * Native stacks without frame pointers, walked by unwind tables in BPF:
 * programs built as distributions build them (plain -O2, no frame
 * pointers), Debian's own python3, a library loaded after the recording
 * started, a Java thread in zlib through JNI, and perf's DWARF unwinder as
 * an independent reference on the same workload.
 *
 * Each share the issue names is printed, so the run's log shows how far
 * above its bound it is.
 */
#include "jvm.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEBIAN_PYTHON "/usr/bin/python3"




/* Prints the summary's part on user stacks (how many were walked wholly by tables; with -v only). */
static void print_unwind_summary(const char *what, const struct child *profiler)
{
	const char *p = strstr(profiler->buf, "user stacks: ");

	fprintf(stderr, "  %s: %.*s\n", what, p ? (int)strcspn(p, ";\n") : 4, p ? p : "none");
}

/* Samples of stacks that have a frame that is any of names. */
static uint64_t count_any_frame(const struct collapsed *c, const char *const names[])
{
	uint64_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int found = 0;

		frames_split(&fr, c->stacks[i]);
		for (size_t k = 0; names[k] && !found; k++)
			found = find_frame(&fr, 0, names[k]) >= 0;
		free(fr.buf);
		if (found)
			n += c->counts[i];
	}
	return n;
}

/* ---- a plain -O2 program: qsort with a callback, snprintf ---- */

/*
 * The program's functions whose names the checks use. gcc may clone them
 * (format_numbers.constprop.0): a frame is one of them when its name is,
 * up to a '.'.
 */
static const char *const program_functions[] = {
	"main", "sort_round", "compare_keys", "mix_key", "format_round", "format_numbers", "format_words",
	"parse_round", "hash_round", "words_round", "compare_words", "copy_round", NULL,
};

/* The program function frame is (its name before any '.'), or NULL. */
static const char *program_function(const char *frame)
{
	size_t len = strcspn(frame, ".");

	for (size_t i = 0; program_functions[i]; i++)
		if (strlen(program_functions[i]) == len && !strncmp(frame, program_functions[i], len))
			return program_functions[i];
	return NULL;
}

static int find_function(const struct frames *fr, int from, const char *name)
{
	for (int i = from; i < fr->n; i++) {
		const char *f = program_function(fr->f[i]);

		if (f && !strcmp(f, name))
			return i;
	}
	return -1;
}

struct qsort_shares {
	uint64_t total, with_main;
	uint64_t callback, callback_with_caller; /* samples in compare_keys; of them, under sort_round > qsort */
};

/*
 * A stack of the callback shows the program's caller above qsort when it
 * has main > sort_round, then at least one frame of libc's sort (qsort_r
 * and its merge sort), then compare_keys.
 */
static void count_qsort_shares(const struct collapsed *c, struct qsort_shares *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		int main_at, sort_at, cb_at;

		frames_split(&fr, c->stacks[i]);
		s->total += c->counts[i];
		main_at = find_function(&fr, 0, "main");
		if (main_at >= 0)
			s->with_main += c->counts[i];
		cb_at = find_function(&fr, 0, "compare_keys");
		if (cb_at >= 0) {
			s->callback += c->counts[i];
			sort_at = main_at >= 0 ? find_function(&fr, main_at + 1, "sort_round") : -1;
			if (sort_at >= 0 && cb_at > sort_at + 1 && strstr(fr.f[sort_at + 1], "qsort"))
				s->callback_with_caller += c->counts[i];
		}
		free(fr.buf);
	}
}

static void profile_qsort_printf(char *const args[], struct qsort_shares *s, const char *what)
{
	struct profiled r;

	harness_profile(&r, "nofp_qsort_printf", NULL, args, 1, 60);
	assert_int_equal(r.profiler_status, 0);
	count_qsort_shares(&r.stacks, s);
	fprintf(stderr, "  %s: %llu samples, %.1f%% reach main; %llu in the callback, %.1f%% under sort_round > qsort\n",
		what, (unsigned long long)s->total, harness_percent(s->with_main, s->total),
		(unsigned long long)s->callback,
		harness_percent(s->callback_with_caller, s->callback));
	print_unwind_summary(what, &r.profiler);
	harness_profiled_free(&r);
}

/* At least 95% of the samples reach main, and the callback's show its caller above qsort. */
static void qsort_printf_reaches_main(void **state)
{
	struct qsort_shares s;

	harness_require_root();
	profile_qsort_printf((char *[]){ "-F", "499", "-d", "4", NULL }, &s, "tables");
	/* One busy thread for 4 s at 499 Hz: about 2000 samples. */
	assert_true(s.total >= 1000);
	assert_true(s.with_main * 100 >= s.total * 95);
	assert_true(s.callback >= 100);
	assert_true(s.callback_with_caller * 100 >= s.callback * 95);
}

/* The control: frame pointers alone lose main, so the test above can fail. */
static void qsort_printf_fp_loses_main(void **state)
{
	struct qsort_shares s;

	harness_require_root();
	profile_qsort_printf((char *[]){ "-F", "499", "-d", "2", "--unwind", "fp", NULL }, &s, "frame pointers");
	assert_true(s.total >= 400);
	assert_true(s.with_main * 100 < s.total * 50);
}

/* ---- Debian's python3 ---- */

/* harness_profile for a program outside WORKLOAD_DIR: argv[0] is its path. */
static void profile_command(struct profiled *r, char *const argv[], char *const args[])
{
	char *pargs[48], pid[16];

	memset(r, 0, sizeof(*r));
	r->dir = harness_tmpdir();
	assert_non_null(r->dir);
	r->file = harness_path(r->dir, "profile.collapsed");
	assert_int_equal(harness_start_workload(&r->workload, argv), 0);
	snprintf(pid, sizeof(pid), "%d", (int)r->workload.pid);
	harness_profiler_args(pargs, 48, pid, r->file, args);
	r->profiler_status = harness_run_profiler(&r->profiler, pargs, 60);
	r->workload_status = harness_stop_workload(&r->workload);
	if (r->profiler_status != 0)
		fprintf(stderr, "profiler exited with %d; its stderr:\n%s\n", r->profiler_status, r->profiler.buf);
	assert_int_equal(collapsed_load(r->file, &r->stacks), 0);
}

/* At least 90% of the samples of Debian's python3 running a Python loop reach Py_BytesMain or main. */
static void python3_reaches_main(void **state)
{
	static const char *const roots[] = { "Py_BytesMain", "main", NULL };
	struct profiled r;
	struct stat st;
	uint64_t reached;

	harness_require_root();
	if (stat(DEBIAN_PYTHON, &st))
		skip();
	profile_command(&r,
			(char *[]){ DEBIAN_PYTHON, "-c",
				    "print('ready', flush=True)\n"
				    "def work(n):\n"
				    "    return sum(i * i for i in range(n))\n"
				    "while True:\n"
				    "    work(10000)\n",
				    NULL },
			(char *[]){ "-F", "499", "-d", "4", NULL });
	assert_int_equal(r.profiler_status, 0);
	reached = count_any_frame(&r.stacks, roots);
	fprintf(stderr, "  python3: %llu samples, %.1f%% reach Py_BytesMain or main\n",
		(unsigned long long)r.stacks.total, harness_percent(reached, r.stacks.total));
	print_unwind_summary("python3", &r.profiler);
	assert_true(r.stacks.total >= 1000);
	assert_true(reached * 100 >= r.stacks.total * 90);
	harness_profiled_free(&r);
}

/* ---- call frame information only in a separate debug file ---- */

/* Copies the file at from to to, mode 0755. 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in >= 0 && out >= 0 && n == 0 ? 0 : -1;
}

/*
 * nofp_debug_frame is qsort_printf built with no .eh_frame of its own: its
 * functions' call frame information is in .debug_frame, and that only in
 * the debug file its .gnu_debuglink names, beside it. With that file the
 * walk reaches main as with .eh_frame; the same binary copied elsewhere
 * without it cannot, which shows that the debug file made the difference.
 */
static void debug_frame_of_debug_file_reaches_main(void **state)
{
	char *path = harness_workload("nofp_debug_frame"), *dir = harness_tmpdir(), *alone = harness_path(dir, "alone");
	struct qsort_shares with, without;
	struct profiled r;

	harness_require_root();
	harness_profile(&r, "nofp_debug_frame", NULL, (char *[]){ "-F", "499", "-d", "3", NULL }, 1, 60);
	assert_int_equal(r.profiler_status, 0);
	count_qsort_shares(&r.stacks, &with);
	print_unwind_summary("with its debug file", &r.profiler);
	harness_profiled_free(&r);
	assert_int_equal(copy_file(path, alone), 0);
	profile_command(&r, (char *[]){ alone, NULL }, (char *[]){ "-F", "499", "-d", "2", NULL });
	assert_int_equal(r.profiler_status, 0);
	count_qsort_shares(&r.stacks, &without);
	print_unwind_summary("without it", &r.profiler);
	harness_profiled_free(&r);
	fprintf(stderr, "  %.1f%% of %llu samples reach main with the debug file, %.1f%% of %llu without\n",
		harness_percent(with.with_main, with.total), (unsigned long long)with.total,
		harness_percent(without.with_main, without.total), (unsigned long long)without.total);
	assert_true(with.total >= 700 && without.total >= 400);
	assert_true(with.with_main * 100 >= with.total * 95);
	assert_true(without.with_main * 100 < without.total * 50);
	unlink(alone);
	rmdir(dir);
	free(alone);
	free(dir);
	free(path);
}

/* ---- a library loaded after the recording started ---- */

/*
 * nofp_dlopen_late loads its library when the profiler already samples
 * it. The library's code has no frame pointers, so only its table finds
 * plugin_inner's callers: at least 90% of its samples (those before the
 * walker reported the new mapping and its table came in fall back, a few)
 * must have main > run_plugin > plugin_outer > plugin_middle > plugin_inner.
 */
static void dlopen_after_start_walked_by_tables(void **state)
{
	static const char *const chain[] = { "main", "run_plugin", "plugin_outer", "plugin_middle", "plugin_inner" };
	char *path = harness_workload("nofp_dlopen_late"), *dir = harness_tmpdir(),
	     *file = harness_path(dir, "late.collapsed"), pid[16], *argv[16];
	struct child workload, profiler;
	struct collapsed stacks;
	uint64_t inner = 0, whole = 0;
	int status;

	harness_require_root();
	assert_int_equal(harness_start_workload(&workload, (char *[]){ path, NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)workload.pid);
	harness_profiler_args(argv, 16, pid, file, (char *[]){ "-F", "499", "-d", "4", "-v", NULL });
	assert_int_equal(harness_start_profiler(&profiler, argv), 0);
	assert_int_equal(harness_wait_for(&profiler, "sampling", 20), 0);
	kill(workload.pid, SIGUSR1);
	assert_int_equal(harness_wait_for(&workload, "loaded", 10), 0);
	status = harness_finish(&profiler, 60);
	harness_stop_workload(&workload);
	assert_int_equal(status, 0);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		int at = -1, ok = 1;

		frames_split(&fr, stacks.stacks[i]);
		if (find_frame(&fr, 0, "plugin_inner") >= 0) {
			inner += stacks.counts[i];
			for (size_t k = 0; k < sizeof(chain) / sizeof(chain[0]) && ok; k++) {
				int next = find_frame(&fr, at + 1, chain[k]);

				/* main first; then each directly under the one before. */
				ok = next >= 0 && (k == 0 || next == at + 1);
				at = next;
			}
			if (ok)
				whole += stacks.counts[i];
		}
		free(fr.buf);
	}
	fprintf(stderr, "  dlopen: %llu samples in plugin_inner, %.1f%% with main > ... > plugin_inner\n",
		(unsigned long long)inner, harness_percent(whole, inner));
	print_unwind_summary("dlopen", &profiler);
	{
		const char *p = strstr(profiler.buf, "unwind tables: "), *array;
		double used_mib = 0, array_mib = 0;
		unsigned long long left_out = 1;

		if (!p)
			fail_msg("no unwind tables line from -v");
		fprintf(stderr, "  %.*s\n", (int)strcspn(p, "\n"), p);
		array = strstr(p, " MiB, ");
		assert_non_null(array);
		/* One -p target: a quarter of the default 64 MiB budget, of which an eighth is for process lists. */
		while (array > p && array[-1] != '(')
			array--;
		assert_int_equal(sscanf(array, "%lf of %lf MiB", &used_mib, &array_mib), 2);
		assert_true(array_mib > 13.9 && array_mib < 14.1);
		assert_non_null(strstr(array, "did not fit"));
		assert_int_equal(sscanf(strstr(array, "; ") + 2, "%llu did not fit", &left_out), 1);
		assert_int_equal(left_out, 0);
	}
	assert_true(inner >= 500);
	assert_true(whole * 100 >= inner * 90);
	harness_output_free(&stacks, file, dir);
	free(path);
}

/* ---- Java: JNI into zlib ---- */

static const struct jdk *require_java(void **state)
{
	jvm_require(*state, "JniDeflate");
	return *state;
}

/*
 * JniDeflate's threads spend their time in zlib through Deflater's native
 * method. Among samples with java.util.zip.Deflater.deflateBytesBytes, at
 * least 95% must go on, with no gap, into the JNI entry
 * Java_java_util_zip_Deflater_deflateBytesBytes (libzip, no frame
 * pointers needed) and then only named native frames (zlib's deflate and
 * what it calls), none [unknown].
 */
static void deflate_jni_into_zlib_without_gap(void **state)
{
	const struct jdk *jdk = require_java(state);
	char pid[16], *file, *argv[24];
	uint64_t native = 0, whole = 0;
	struct child profiler;
	struct collapsed stacks;
	struct jvm jvm;
	int status;

	jvm_start(&jvm, jdk, "JniDeflate", (char *[]){ "2", NULL });
	file = harness_path(jvm.dir, "profile.collapsed");
	snprintf(pid, sizeof(pid), "%d", (int)jvm.out.pid);
	harness_profiler_args(argv, 24, pid, file, (char *[]){ "-F", "997", "-d", "5", "--annotate", NULL });
	status = harness_run_profiler(&profiler, argv, 60);
	if (status)
		fprintf(stderr, "the profiler exited with %d; its stderr:\n%s\n", status, profiler.buf);
	assert_int_equal(status, 0);
	jvm_assert_agent_loaded(&profiler);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	unlink(file);
	free(file);
	jvm_stop(&jvm);
	for (size_t i = 0; i < stacks.n; i++) {
		struct frames fr;
		int at, ok;

		frames_split(&fr, stacks.stacks[i]);
		at = find_frame(&fr, 0, "java.util.zip.Deflater.deflateBytesBytes");
		if (at >= 0) {
			native += stacks.counts[i];
			ok = at + 2 < fr.n &&
			     !strcmp(fr.f[at + 1], "Java_java_util_zip_Deflater_deflateBytesBytes");
			for (int k = at + 2; k < fr.n && ok; k++)
				ok = !strstr(fr.f[k], "[unknown]") && !strstr(fr.f[k], "_[j]") && !strstr(fr.f[k], "_[i]");
			if (ok)
				whole += stacks.counts[i];
		}
		free(fr.buf);
	}
	fprintf(stderr, "  %s: %llu samples in Deflater.deflateBytesBytes, %.1f%% with the JNI entry and zlib under it\n",
		jdk->name, (unsigned long long)native, harness_percent(whole, native));
	print_unwind_summary(jdk->name, &profiler);
	assert_true(native >= 2000);
	assert_true(whole * 100 >= native * 95);
	collapsed_free(&stacks);
}

/* ---- the depth limit ---- */

/*
 * A leaf 300 calls deep without frame pointers: the walk by tables goes
 * the whole 127 frames perf_event's own limit allows (JBPF_MAX_STACK_DEPTH)
 * in at least 90% of the samples, all of them the program's, and the
 * summary counts the stacks cut by the depth limit.
 */
static void deep_stack_walked_to_the_limit(void **state)
{
	uint64_t full = 0;
	struct profiled r;

	harness_require_root();
	/* -v: how stacks were walked, with the depth limit's count, is its detail. */
	harness_profile(&r, "nofp_deep_stack", NULL, (char *[]){ "-F", "499", "-d", "3", "-v", NULL }, 1, 60);
	assert_int_equal(r.profiler_status, 0);
	for (size_t i = 0; i < r.stacks.n; i++) {
		struct frames fr;
		int user = 0, ours = 0;

		frames_split(&fr, r.stacks.stacks[i]);
		for (int k = 0; k < fr.n; k++) {
			size_t len = strlen(fr.f[k]);

			if (len > 4 && !strcmp(fr.f[k] + len - 4, "_[k]"))
				continue;
			user++;
			ours += !strncmp(fr.f[k], "descend", 7) || !strncmp(fr.f[k], "burn", 4);
		}
		if (user == 127 && ours == 127)
			full += r.stacks.counts[i];
		free(fr.buf);
	}
	fprintf(stderr, "  deep: %llu samples, %.1f%% with 127 user frames of the recursion\n",
		(unsigned long long)r.stacks.total, harness_percent(full, r.stacks.total));
	print_unwind_summary("deep", &r.profiler);
	assert_true(r.stacks.total >= 500);
	assert_true(full * 100 >= r.stacks.total * 90);
	assert_non_null(strstr(r.profiler.buf, "depth limit"));
	harness_profiled_free(&r);
}

/* ---- perf --call-graph dwarf as the reference ---- */

/*
 * A call path, for comparing two profilers that name code differently:
 * the stack from root to leaf with each of the program's own functions
 * (from its symbol table, which both read alike) kept and every run of
 * other frames (libc, the dynamic loader, the kernel: named by each tool in
 * its own way, or not at all) replaced by one "[other]". So the path says
 * which of the program's frames the walk found and in what order, and
 * where it went through foreign code, which is what unwinding decides.
 */
#define MAX_PATHS 256
#define PATH_LEN 512

struct paths {
	char path[MAX_PATHS][PATH_LEN];
	uint64_t count[MAX_PATHS];
	size_t n;
	uint64_t total;
};

static void paths_add(struct paths *p, const char *path, uint64_t count)
{
	size_t i;

	p->total += count;
	for (i = 0; i < p->n; i++)
		if (!strcmp(p->path[i], path))
			break;
	if (i == p->n) {
		if (p->n == MAX_PATHS)
			return;
		snprintf(p->path[p->n++], PATH_LEN, "%s", path);
	}
	p->count[i] += count;
}

/* Appends frame to path (root first), folding foreign frames as described above. */
static void path_push(char *path, const char *frame)
{
	const char *f = program_function(frame);
	const char *name = f ? f : "[other]";
	size_t len = strlen(path);
	const char *last = strrchr(path, ';');

	if (!f && len && !strcmp(last ? last + 1 : path, "[other]"))
		return;
	snprintf(path + len, PATH_LEN - len, "%s%s", len ? ";" : "", name);
}

static void paths_from_collapsed(const struct collapsed *c, struct paths *p)
{
	for (size_t i = 0; i < c->n; i++) {
		struct frames fr;
		char path[PATH_LEN] = "";

		frames_split(&fr, c->stacks[i]);
		for (int k = 0; k < fr.n; k++)
			path_push(path, fr.f[k]);
		free(fr.buf);
		paths_add(p, path, c->counts[i]);
	}
}

/*
 * perf script's frames ("<ip> <symbol>" lines, leaf first, a blank line
 * after each sample) into paths.
 */
static int paths_from_perf_script(const char *path_of_script, struct paths *p)
{
	FILE *f = fopen(path_of_script, "r");
	char line[1024], *frames[MAX_FRAMES];
	int n = 0;

	if (!f)
		return -1;
	for (;;) {
		char *got = fgets(line, sizeof(line), f), *s = line, *sym;

		while (got && (*s == ' ' || *s == '\t'))
			s++;
		if (!got || *s == '\n' || !*s) {
			if (n) {
				char path[PATH_LEN] = "";

				for (int k = n - 1; k >= 0; k--)
					path_push(path, frames[k]);
				paths_add(p, path, 1);
				for (int k = 0; k < n; k++)
					free(frames[k]);
				n = 0;
			}
			if (!got)
				break;
			continue;
		}
		sym = strchr(s, ' ');
		if (!sym || n == MAX_FRAMES)
			continue;
		sym++;
		sym[strcspn(sym, "+ \n")] = '\0';
		frames[n++] = strdup(sym);
	}
	fclose(f);
	return 0;
}

static int by_count_desc(const void *a, const void *b, void *ctx)
{
	const struct paths *p = ctx;
	uint64_t x = p->count[*(const size_t *)a], y = p->count[*(const size_t *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Indexes of p's ten most frequent paths, most first; returns how many (fewer when p has fewer). */
static size_t top_ten(const struct paths *p, size_t top[10])
{
	size_t order[MAX_PATHS], n = p->n;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(order[0]), by_count_desc, (void *)p);
	for (size_t i = 0; i < n && i < 10; i++)
		top[i] = order[i];
	return n < 10 ? n : 10;
}

static double share_of(const struct paths *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->path[i], path))
			return harness_percent(p->count[i], p->total);
	return 0.0;
}

/* The workload's rounds: every sample of its main loop is under one of them. */
static const char *const rounds[] = { "sort_round", "format_round", "parse_round",
				      "hash_round", "words_round", "copy_round" };
#define NR_ROUNDS (sizeof(rounds) / sizeof(rounds[0]))

/* The index in rounds[] of the first round among path's frames, or -1 for a path under none. */
static int round_of(const char *path)
{
	for (const char *f = path; f; f = strchr(f, ';') ? strchr(f, ';') + 1 : NULL)
		for (size_t r = 0; r < NR_ROUNDS; r++) {
			size_t len = strlen(rounds[r]);

			if (!strncmp(f, rounds[r], len) && (f[len] == ';' || !f[len]))
				return (int)r;
		}
	return -1;
}

/* Samples of p under round r (-1: under none). */
static uint64_t round_count(const struct paths *p, int r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		if (round_of(p->path[i]) == r)
			n += p->count[i];
	return n;
}

/* Percent of the samples of path's round (or of those under none) that are on path. */
static double share_in_round(const struct paths *p, const char *path)
{
	uint64_t n = round_count(p, round_of(path));

	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->path[i], path))
			return harness_percent(p->count[i], n);
	return 0.0;
}

/*
 * How far apart two shares (percent of n_a and of n_b samples) may be, in
 * points, when both tools see the same split: four standard errors of the
 * difference of two sampled proportions (a false alarm once in some 15,000
 * comparisons), and never under 3 points.
 */
static double share_tolerance(double a, double b, uint64_t n_a, uint64_t n_b)
{
	double q = (a + b) / 200.0, se;

	if (!n_a || !n_b)
		return 3.0;
	se = 100.0 * sqrt(q * (1.0 - q) * (1.0 / (double)n_a + 1.0 / (double)n_b));
	return 4.0 * se > 3.0 ? 4.0 * se : 3.0;
}

/* Runs argv to the end with stdout to out_path (NULL: /dev/null). Its exit status, or -1. */
static int run_to_file(char *const argv[], const char *out_path)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		FILE *out = freopen(out_path ? out_path : "/dev/null", "w", stdout);

		if (!out || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * perf record --call-graph dwarf and the profiler sample the same
 * no-frame-pointer workload at the same time, and their call paths agree
 * where unwinding decides them:
 *
 * - each tool finds the workload's ten paths of at least 1.5%, and puts at
 *   least 98% of its samples under main and one of the rounds (a frame
 *   lost on the way up leaves a sample under none);
 * - within each round, every path among either tool's ten most frequent
 *   (those with 1% of its samples or more) has the same share of that
 *   round's samples in both, within four standard errors (a caller wrong
 *   moves samples between the paths of a round);
 * - each round's share of all samples is the same in both, within four
 *   standard errors (a sample walked into the wrong round).
 *
 * With some 2000 samples each, a share near 30% has a standard error near
 * 1 point per tool, so a real disagreement, which moves a whole path's
 * share, fails. perf's timer has a fixed period: the workload varies the
 * length of its rounds so that they do not repeat on one (see
 * bench/timer_bias.sh, and docs/benchmarks.md for what a periodic workload
 * did to perf's shares).
 */
static void perf_dwarf_agrees_on_top_paths(void **state)
{
	char *path = harness_workload("nofp_qsort_printf"), *dir = harness_tmpdir(),
	     *file = harness_path(dir, "jbpfprof.collapsed"), *data = harness_path(dir, "perf.data"),
	     *script = harness_path(dir, "perf.script"), pid[16], *argv[16];
	static struct paths ours, theirs;
	struct child workload, profiler, perf;
	struct collapsed stacks;
	size_t top[2][10], nr[2];
	int status;

	harness_require_root();
	if (run_to_file((char *[]){ "perf", "--version", NULL }, NULL))
		skip();
	memset(&ours, 0, sizeof(ours));
	memset(&theirs, 0, sizeof(theirs));
	assert_int_equal(harness_start_workload(&workload, (char *[]){ path, NULL }), 0);
	snprintf(pid, sizeof(pid), "%d", (int)workload.pid);
	assert_int_equal(harness_start_command(&perf,
					       (char *[]){ "/usr/bin/perf", "record", "-e", "cpu-clock", "-F", "499",
							   "--call-graph", "dwarf", "-p", pid, "-o", data, "--", "sleep",
							   "5", NULL },
					       2),
			 0);
	harness_profiler_args(argv, 16, pid, file, (char *[]){ "-F", "499", "-d", "4", NULL });
	status = harness_run_profiler(&profiler, argv, 60);
	assert_int_equal(harness_finish(&perf, 60), 0);
	harness_stop_workload(&workload);
	assert_int_equal(status, 0);
	assert_int_equal(run_to_file((char *[]){ "perf", "script", "-i", data, "-F", "ip,sym", NULL }, script), 0);
	assert_int_equal(collapsed_load(file, &stacks), 0);
	paths_from_collapsed(&stacks, &ours);
	assert_int_equal(paths_from_perf_script(script, &theirs), 0);
	assert_true(ours.total >= 1000 && theirs.total >= 1000);
	nr[0] = top_ten(&ours, top[0]);
	nr[1] = top_ten(&theirs, top[1]);
	fprintf(stderr, "  %-6s %-6s  %-6s %-6s  call path (jbpfprof %llu samples, perf %llu)\n", "ours", "perf",
		"ours", "perf", (unsigned long long)ours.total, (unsigned long long)theirs.total);
	fprintf(stderr, "  %-13s  %-13s\n", "of all", "of its round");
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < nr[t]; i++) {
			const char *p = t ? theirs.path[top[1][i]] : ours.path[top[0][i]];
			double a = share_of(&ours, p), b = share_of(&theirs, p);
			double in_a = share_in_round(&ours, p), in_b = share_in_round(&theirs, p);
			double bound = share_tolerance(in_a, in_b, round_count(&ours, round_of(p)),
							     round_count(&theirs, round_of(p)));
			int shown = 0;

			/* perf's paths already among ours are shown once. */
			for (size_t k = 0; t && k < nr[0]; k++)
				shown |= !strcmp(p, ours.path[top[0][k]]) && share_of(&ours, p) >= 1.0;
			if ((t ? b : a) < 1.0 || shown)
				continue;
			fprintf(stderr, "  %5.1f%% %5.1f%%  %5.1f%% %5.1f%%  %s%s\n", a, b, in_a, in_b, p,
				fabs(in_a - in_b) > bound ? "   <- disagree" : "");
		}
	fprintf(stderr, "  rounds:\n");
	for (size_t r = 0; r < NR_ROUNDS; r++)
		fprintf(stderr, "  %5.1f%% %5.1f%%  %s\n", harness_percent(round_count(&ours, (int)r), ours.total),
			harness_percent(round_count(&theirs, (int)r), theirs.total), rounds[r]);
	fprintf(stderr, "  %5.1f%% %5.1f%%  (under no round)\n", harness_percent(round_count(&ours, -1), ours.total),
		harness_percent(round_count(&theirs, -1), theirs.total));
	assert_int_equal(nr[0], 10);
	assert_int_equal(nr[1], 10);
	assert_true(share_of(&ours, ours.path[top[0][9]]) >= 1.5);
	assert_true(share_of(&theirs, theirs.path[top[1][9]]) >= 1.5);
	assert_true(round_count(&ours, -1) * 50 <= ours.total);
	assert_true(round_count(&theirs, -1) * 50 <= theirs.total);
	for (size_t r = 0; r < NR_ROUNDS; r++) {
		double a = harness_percent(round_count(&ours, (int)r), ours.total);
		double b = harness_percent(round_count(&theirs, (int)r), theirs.total);

		assert_true(fabs(a - b) <= share_tolerance(a, b, ours.total, theirs.total));
	}
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < nr[t]; i++) {
			const char *p = t ? theirs.path[top[1][i]] : ours.path[top[0][i]];
			double a = share_in_round(&ours, p), b = share_in_round(&theirs, p);

			if ((t ? share_of(&theirs, p) : share_of(&ours, p)) < 1.0)
				continue;
			assert_true(fabs(a - b) <= share_tolerance(a, b, round_count(&ours, round_of(p)),
									 round_count(&theirs, round_of(p))));
		}
	harness_output_free(&stacks, file, NULL);
	unlink(data);
	unlink(script);
	free(data);
	free(script);
	rmdir(dir);
	free(dir);
	free(path);
}

#define JDK_TEST(f, jdk) { #f " (" #jdk ")", f, NULL, harness_teardown, (void *)&(jdk) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(qsort_printf_reaches_main),
		HARNESS_TEST(qsort_printf_fp_loses_main),
		HARNESS_TEST(debug_frame_of_debug_file_reaches_main),
		HARNESS_TEST(python3_reaches_main),
		HARNESS_TEST(dlopen_after_start_walked_by_tables),
		HARNESS_TEST(deep_stack_walked_to_the_limit),
		HARNESS_TEST(perf_dwarf_agrees_on_top_paths),
		JDK_TEST(deflate_jni_into_zlib_without_gap, jdk17),
		JDK_TEST(deflate_jni_into_zlib_without_gap, jdk25),
	};

	harness_filter_tests();
	return cmocka_run_group_tests_name("unwind", tests, NULL, NULL);
}
