/*
 * Fleet mode: -a --continuous with --push to a Pyroscope stand-in
 * (tests/fleet/ingest_server.py, $INGEST_SERVER) that takes the push API
 * (push.v1.PusherService/Push, the default) and /ingest (--push-api
 * ingest), and with --dir/--keep.
 *
 * What each test reads back is what the server kept, in the order
 * received: per profile an NNNNNN.push (a PushRequest, decoded here with
 * the code generated from the vendored proto/pyroscope, its labels read as
 * the ingest name they stand for and its interval from the pprof it holds),
 * an NNNNNN.otlp (an OTLP export request, --push-otlp, read likewise from
 * its resource and profile) or an NNNNNN.query and NNNNNN.pb.gz; the files
 * of --dir and
 * the spool, and the profiler's -v lines "interval N: ..." (one per
 * interval handed over). The known workload is cpu_split, whose service is
 * "cpu_split"; it spins on two threads, so it has samples in every
 * interval. Intervals are 2 s at 97 Hz: short enough for a test, long
 * enough that a loaded machine still gives cpu_split samples in each.
 *
 * Waits are on the profiler's stderr or by polling with a deadline; the
 * only sleeps give the interval in progress some length before SIGTERM.
 */
#include "harness.h"
#include "fleet_harness.h"
#include "jvm.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "proto/profile.pb-c.h"
#include "proto/pyroscope/push/v1/push.pb-c.h"
#include "../unit/pprof_fixture.h"

static void intervals_arrive(const char *api)
{
	struct server s = { 0 };
	struct child w, profiler;
	struct received *r = calloc(MAX_RECEIVED, sizeof(*r));
	char *spool = harness_tmpdir(), *url, interval[32];
	size_t n, mine = 0, last = 0, before_last = 0;
	long long first_from = 0, first_mine = 0;
	long intervals;
	time_t term;

	harness_require_root();
	assert_non_null(r);
	server_start(&s, 0);
	url = server_url(&s);
	/*
	 * 2 s intervals, as long again as the deadlines on a machine that runs
	 * far slower (JBPF_TIMEOUT_SCALE: a kernel under emulation), where a
	 * sample's record may otherwise be read an interval after it was taken.
	 */
	snprintf(interval, sizeof(interval), "%lldms", (long long)harness_deadline_ms(2000));
	start_cpu_split(&w);
	if (!strcmp(api, "otlp"))
		profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", interval, "-F", "97",
							   "--push-otlp", url, "--spool", spool, "--label",
							   "env=fleettest", "-v", NULL });
	else
		profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", interval, "-F", "97",
							   "--push", url, "--push-api", (char *)api, "--spool", spool,
							   "--label", "env=fleettest", "-v", NULL });
	wait_interval(&profiler, 3, 60);
	/* The interval in progress has about half its length when stopped: the partial one. */
	sleep_ms(harness_deadline_ms(1000));
	term = profiler_term(&profiler);
	harness_stop_workload(&w);
	server_stop(&s);

	intervals = last_interval(&profiler);
	n = server_received(&s, r, MAX_RECEIVED);
	fprintf(stderr, "  %s: %ld intervals, %zu profiles received\n", api, intervals, n);
	assert_true(intervals >= 4);
	/* Each by the API asked for. */
	assert_int_equal(count_prefix_files(s.dir, !strcmp(api, "push") ? ".push" : !strcmp(api, "otlp") ? ".otlp"
												     : ".query"),
			 n);
	assert_int_equal(count_prefix_files(spool, ".prof"), 0);
	for (size_t i = 0; i < n; i++) {
		if (!strstr(r[i].name, "hostname=") || !strstr(r[i].name, "env=fleettest"))
			fail_msg("profile %zu (%s) lacks the host or --label", i, r[i].name);
		first_from = i == 0 || r[i].from < first_from ? r[i].from : first_from;
		if (is_service(&r[i], SERVICE)) {
			if (!mine || r[i].from < first_mine)
				first_mine = r[i].from;
			mine++;
			before_last = last;
			last = i;
		}
	}
	assert_all_in_order_once(r, n);
	/*
	 * Every interval handed over has cpu_split's profile: one each, none
	 * lost. The first may lack it where the profiler starts slower than an
	 * interval (two kernels emulated side by side: each process's tables
	 * built first, the first interval's samples drained in the next, the
	 * one a record belongs to), and only the first.
	 */
	if (mine + 1 == (size_t)intervals && first_mine > first_from)
		fprintf(stderr, "  the first interval, from %lld ms, has no profile of %s\n", first_from, SERVICE);
	else
		assert_int_equal(mine, (size_t)intervals);
	/* The last is the partial interval: cut at SIGTERM, not at the grid before it. */
	fprintf(stderr, "  SIGTERM at %lld s; the last profile from %lld until %lld ms\n", (long long)term,
		r[last].from, r[last].until);
	assert_true(r[last].until >= (long long)term * 1000);
	/*
	 * It began before SIGTERM, or SIGTERM came while the interval before
	 * it was being cut (a cut of -a on a loaded machine was seen to take
	 * seconds), and the stop cut what followed.
	 */
	assert_true(r[last].from <= (long long)term * 1000 ||
		    (mine >= 2 && r[before_last].from <= (long long)term * 1000 && r[before_last].until == r[last].from));
	if (!r[last].file[0])
		fprintf(stderr, "  an OTLP request holds no pprof: the check that go tool pprof reads it is skipped\n");
	else if (have_go())
		assert_pprof_reads(r[last].file, "share_50");
	else
		fprintf(stderr, "  go is not installed: the check that go tool pprof reads the profiles is skipped\n");
	free(url);
	free(r);
	remove_tree(spool);
	server_free(&s);
}

/* By Pyroscope's push API, the default: PushRequests. */
static void each_interval_arrives(void **state)
{
	intervals_arrive("push");
}

/* To an OTLP receiver (--push-otlp): export requests, the same intervals in the same order. */
static void each_interval_arrives_by_otlp(void **state)
{
	intervals_arrive("otlp");
}

/* By /ingest, for servers older than the push API. */
static void each_interval_arrives_by_ingest(void **state)
{
	intervals_arrive("ingest");
}

/*
 * The server down for several intervals, then up: the spool keeps what
 * could not be sent and sends it when the server is back, every interval
 * once and in order. Progress is read from the server's received list,
 * polled with deadlines; a profiler that stops cutting intervals fails
 * the test with where its threads wait (the session thread must never wait
 * on the network or on the push thread).
 */
static void server_down_then_up(void **state)
{
	struct server s = { 0 };
	struct child w, profiler;
	struct received *r = calloc(MAX_RECEIVED, sizeof(*r));
	char *spool = harness_tmpdir(), *url;
	size_t n, mine;
	long intervals, down_at;
	long long deadline;

	harness_require_root();
	assert_non_null(r);
	server_start(&s, 0);
	url = server_url(&s);
	start_cpu_split(&w);
	profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", "2s", "-F", "97", "--push", url,
						   "--spool", spool, "-v", NULL });
	/* Up: the first interval of cpu_split arrives. */
	for (deadline = now_ms() + 90000; !server_count(&s, r, SERVICE); sleep_ms(100)) {
		drain(&profiler);
		if (now_ms() > deadline)
			fail_stalled(&profiler, "no profile of " SERVICE " arrived within 90 s");
	}
	server_stop(&s);
	drain(&profiler);
	down_at = last_interval(&profiler);
	/* Three intervals go to a server that is not there. */
	wait_interval(&profiler, down_at + 3, 90);
	if (!strstr(profiler.buf, "failed"))
		fail_msg("no push failure said while the server was down:\n%s", profiler.buf);
	assert_true(count_prefix_files(spool, ".prof") > 0);
	server_start(&s, s.port);
	/*
	 * Up again: every interval handed over so far arrives (the backoff is
	 * at most 16 s after these few intervals down) and the spool empties.
	 */
	for (deadline = now_ms() + 120000;; sleep_ms(100)) {
		drain(&profiler);
		intervals = last_interval(&profiler);
		if (server_count(&s, r, SERVICE) >= (size_t)intervals && !count_prefix_files(spool, ".prof"))
			break;
		if (now_ms() > deadline)
			fail_stalled(&profiler, "the spool was not sent within 120 s of the server's return");
	}
	if (!strstr(profiler.buf, "the server takes profiles again"))
		fail_msg("no recovery said:\n%s", profiler.buf);
	/* And the recording goes on cutting intervals. */
	wait_interval(&profiler, intervals + 1, 60);
	/*
	 * The partial interval cut at SIGTERM gets about a second of the
	 * workload, as in each_interval_arrives: stopped at once, it could hold
	 * no sample of it, and no profile of it would be owed.
	 */
	sleep_ms(1000);
	profiler_term(&profiler);
	harness_stop_workload(&w);
	server_stop(&s);

	intervals = last_interval(&profiler);
	n = server_received(&s, r, MAX_RECEIVED);
	mine = assert_in_order_once(r, n, SERVICE);
	fprintf(stderr, "  %ld intervals (server down after %ld), %zu profiles received, %zu of %s\n", intervals,
		down_at, n, mine, SERVICE);
	assert_all_in_order_once(r, n);
	assert_int_equal(mine, (size_t)intervals);
	assert_int_equal(count_prefix_files(spool, ".prof"), 0);
	free(url);
	free(r);
	remove_tree(spool);
	server_free(&s);
}

/* The N of the profiler's last "... N in all" (the spool's drops), or -1. */
static long long spool_dropped_said(const struct child *profiler)
{
	const char *p = profiler->buf, *hit;
	long long n = -1;

	while ((hit = strstr(p, "the spool is full"))) {
		const char *all = strstr(hit, " in all");
		const char *num = all;

		if (!all)
			break;
		while (num > hit && num[-1] >= '0' && num[-1] <= '9')
			num--;
		n = atoll(num);
		p = all;
	}
	return n;
}

/*
 * A small --spool-size with no server: the oldest profiles are dropped,
 * the profiler says so with a count, and what stays are the newest, each
 * one that is gone counted. The one the sender is trying to push (in
 * flight, the oldest when it began) is not dropped under it: it may stay
 * below the newest.
 */
static void spool_bound_drops_oldest(void **state)
{
	struct server s = { 0 };
	struct child w, profiler;
	char *spool = harness_tmpdir(), *url;
	unsigned long long lo = ~0ull, hi = 0, kept = 0, bytes = 0, newest_from;
	bool held[4096] = { false };
	long long dropped;
	struct dirent *de;
	DIR *d;

	harness_require_root();
	/* A port where nothing listens: one the server had. */
	server_start(&s, 0);
	url = server_url(&s);
	server_stop(&s);
	start_cpu_split(&w);
	profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", "2s", "-F", "97", "--push", url,
						   "--spool", spool, "--spool-size", "12K", "-v", NULL });
	if (harness_wait_for(&profiler, "the spool is full", 90))
		fail_msg("no spool drop said:\n%s", profiler.buf);
	wait_interval(&profiler, last_interval(&profiler) + 1, 60);
	profiler_term(&profiler);
	harness_stop_workload(&w);

	dropped = spool_dropped_said(&profiler);
	assert_non_null(d = opendir(spool));
	while ((de = readdir(d))) {
		char path[1024];
		struct stat st;
		unsigned long long seq;

		if (strlen(de->d_name) != 25 || strcmp(de->d_name + 20, ".prof"))
			continue;
		seq = strtoull(de->d_name, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s", spool, de->d_name);
		assert_int_equal(stat(path, &st), 0);
		bytes += (unsigned long long)st.st_size;
		kept++;
		lo = seq < lo ? seq : lo;
		hi = seq > hi ? seq : hi;
		assert_true(seq < sizeof(held) / sizeof(held[0]));
		held[seq] = true;
	}
	closedir(d);
	fprintf(stderr, "  spool: %llu kept (%llu bytes, seq %llu to %llu), %lld dropped said\n", kept, bytes, lo, hi,
		dropped);
	assert_true(kept > 0);
	assert_true(bytes <= 12 * 1024);
	/* The newest are kept without a gap, and below them at most the one in flight; the rest dropped, counted. */
	for (newest_from = hi; newest_from > 0 && held[newest_from - 1]; newest_from--)
		;
	assert_true(kept == hi - newest_from + 1 || (kept == hi - newest_from + 2 && lo < newest_from));
	assert_true(newest_from > 0);
	assert_int_equal(dropped, (long long)(hi + 1 - kept));
	free(url);
	remove_tree(spool);
	server_free(&s);
}

/* The seq of a --dir file "<UTC>-<seq>-<service>....pb.gz", or -1. */
static long long dir_file_seq(const char *name)
{
	const char *dash = strchr(name, '-');

	if (name[0] == '.' || !dash || !strstr(name, ".pb.gz"))
		return -1;
	return strtoll(dash + 1, NULL, 10);
}

/*
 * --dir with --keep: the directory stays within the bound, the newest files
 * kept. One service (-p), whose profile is about 1 KiB an interval, so that
 * six intervals never fit in 4 KiB (the least --keep takes) whatever else the host runs.
 */
static void dir_keep_bound(void **state)
{
	struct child w, profiler;
	char *dir = harness_tmpdir(), pid[16];
	long long lo = -1, hi = -1, kept = 0, bytes = 0, cpu_split_file = 0, oldest_seq = -1;
	char oldest[1024] = "";
	struct dirent *de;
	DIR *d;

	harness_require_root();
	start_cpu_split(&w);
	snprintf(pid, sizeof(pid), "%d", (int)w.pid);
	profiler_args_start(&profiler, (char *[]){ "-p", pid, "--continuous", "--interval", "2s", "-F", "97", "--dir",
						   dir, "--keep", "4K", "-v", NULL });
	wait_interval(&profiler, 6, 90);
	profiler_term(&profiler);
	harness_stop_workload(&w);

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d))) {
		long long seq = dir_file_seq(de->d_name);
		char path[1024];
		struct stat st;

		if (seq < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		assert_int_equal(stat(path, &st), 0);
		bytes += st.st_size;
		kept++;
		lo = lo < 0 || seq < lo ? seq : lo;
		hi = seq > hi ? seq : hi;
		if (strstr(de->d_name, "-" SERVICE ".cpu.pb.gz")) {
			if (oldest_seq < 0 || seq < oldest_seq) {
				oldest_seq = seq;
				snprintf(oldest, sizeof(oldest), "%s", path);
			}
			cpu_split_file++;
		}
	}
	closedir(d);
	/* The oldest file kept holds a whole interval; the newest may be the few milliseconds before SIGTERM. */
	if (oldest[0] && have_go())
		assert_pprof_reads(oldest, "share_50");
	fprintf(stderr, "  --dir: %lld files kept (%lld bytes, seq %lld to %lld), %lld of %s\n", kept, bytes, lo, hi,
		cpu_split_file, SERVICE);
	assert_true(kept > 0 && cpu_split_file > 0);
	assert_true(bytes <= 4 * 1024);
	/* Files were removed (six intervals do not fit), the oldest ones. */
	assert_true(lo > 0);
	assert_int_equal(hi - lo + 1, kept);
	remove_tree(dir);
}

/*
 * A process in a cgroup named as Docker names a container's is labelled
 * with its container id, and its --dir file named with the id's first 12.
 */
static void container_labelled(void **state)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char cgroup[256], procs[300], pid[32];
	const char *root = NULL;
	struct server s = { 0 };
	struct child w, profiler;
	struct received *r = calloc(MAX_RECEIVED, sizeof(*r));
	char *spool = harness_tmpdir(), *url;
	size_t n, labelled = 0;
	int fd;

	harness_require_root();
	assert_non_null(r);
	/* The unified hierarchy: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host. */
	if (!access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		root = "/sys/fs/cgroup";
	else if (!access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK))
		root = "/sys/fs/cgroup/unified";
	else {
		fprintf(stderr, "  no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified: skipped\n");
		skip();
	}
	snprintf(cgroup, sizeof(cgroup), "%s/docker-%s.scope", root, id);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	if (mkdir(cgroup, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", cgroup, strerror(errno));
	start_cpu_split(&w);
	snprintf(pid, sizeof(pid), "%d\n", (int)w.pid);
	fd = open(procs, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, pid, strlen(pid)), (ssize_t)strlen(pid));
	close(fd);
	server_start(&s, 0);
	url = server_url(&s);
	profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", "2s", "-F", "97", "--push", url,
						   "--spool", spool, "-v", NULL });
	wait_interval(&profiler, 2, 60);
	profiler_term(&profiler);
	harness_stop_workload(&w);
	server_stop(&s);
	rmdir(cgroup);

	n = server_received(&s, r, MAX_RECEIVED);
	for (size_t i = 0; i < n; i++) {
		if (!is_service(&r[i], SERVICE))
			continue;
		if (!strstr(r[i].name, "container_id=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
			fail_msg("%s has no container_id label", r[i].name);
		labelled++;
	}
	fprintf(stderr, "  %zu profiles of %s, each with container_id\n", labelled, SERVICE);
	assert_true(labelled >= 2);
	free(url);
	free(r);
	remove_tree(spool);
	server_free(&s);
}

/*
 * Many short-lived processes across intervals: what the profiler holds per
 * process goes back down once they are gone. -v says, per interval, how
 * many processes its tables hold ("held: N processes ...").
 */
static long held_processes(const char *line)
{
	const char *h = strstr(line, "held: ");

	return h ? strtol(h + 6, NULL, 10) : -1;
}

static void processes_forgotten(void **state)
{
	char *path = harness_workload("short_lived"), *dir = harness_tmpdir();
	struct child w, profiler;
	long baseline, end = -1, started_at, stopped_at;
	const char *p, *line;

	harness_require_root();
	profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", "2s", "-F", "97", "--dir", dir,
						   "--keep", "64K", "-v", NULL });
	wait_interval(&profiler, 1, 60);
	started_at = last_interval(&profiler);
	baseline = held_processes(strstr(profiler.buf, "jbpfprof: interval "));
	/*
	 * Children of 20 ms CPU each, one after another: about 300 in three
	 * intervals, most of them sampled and so loaded by the symbolizer.
	 */
	assert_int_equal(harness_start_workload(&w, (char *[]){ path, "20", NULL }), 0);
	free(path);
	wait_interval(&profiler, started_at + 3, 90);
	harness_stop_workload(&w);
	/* Two more intervals without them: each cut forgets the processes gone by then. */
	stopped_at = last_interval(&profiler);
	wait_interval(&profiler, stopped_at + 2, 60);
	profiler_term(&profiler);
	for (p = profiler.buf; (line = strstr(p, "jbpfprof: interval ")); p = line + 1) {
		if (held_processes(line) < 0)
			fail_msg("no \"held: N processes\" in %.200s", line);
		if (strtol(line + 19, NULL, 10) == stopped_at + 2)
			end = held_processes(line);
	}
	fprintf(stderr, "  processes held: %ld before the churn, %ld two intervals after it\n", baseline, end);
	/* What the host runs besides may change a little; hundreds of children held would not be a little. */
	assert_true(baseline >= 0 && end >= 0);
	assert_true(end <= baseline + 50);
	remove_tree(dir);
}

/* Samples of file (a pprof) whose stack has a frame containing name, by go tool pprof -raw; -1 without go. */
static long pprof_samples_with(const char *file, const char *name)
{
	char cmd[1200], line[4096];
	long n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "go tool pprof -raw '%s' 2>/dev/null", file);
	if (!(p = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strstr(line, name))
			n++;
	pclose(p);
	return n;
}

/* One --dir profile of the JVM's service: its file's seq, and whether it has a Java frame. */
struct jvm_profile {
	long long seq;
	int java;
};

static int cmp_jvm_profile(const void *a, const void *b)
{
	const struct jvm_profile *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* How the JVM of a case is run, relative to the -a --continuous recording. */
enum jvm_case {
	JVM_FROM_START,    /* running before the profiler starts */
	JVM_MID_RECORDING, /* started after the first interval */
	JVM_CONTAINER,     /* its own pid and mount namespaces, a private /tmp, a container's cgroup */
};

#define JVM_CONTAINER_ID "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

/* The unified cgroup hierarchy's root, or NULL. */
static const char *cgroup2_root(void)
{
	if (!access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		return "/sys/fs/cgroup";
	if (!access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK))
		return "/sys/fs/cgroup/unified";
	return NULL;
}

/*
 * Starts CpuSplit (-t 2 -b: two spinning threads and a heartbeat) as in
 * a container: a shell moves itself into cgroup (named as Docker names a
 * container's), then unshare gives the JVM its own pid namespace (it is
 * pid 1 there) and mount namespace, where /tmp is a fresh tmpfs: its
 * attach files are not in the host's /tmp. It runs in jvm->dir (a
 * directory of the host's /tmp, entered before the tmpfs hides it), and
 * finds its classes bound into the new /tmp from a descriptor opened
 * before the tmpfs hid them (the build may itself be under /tmp).
 */
static void jvm_start_container(struct jvm *jvm, const struct jdk *jdk, const char *cgroup)
{
	char *classes = jvm_class_dir();
	char *const argv[] = { "/bin/sh", "-c",
			       "echo $$ > \"$0/cgroup.procs\" && cd \"$1\" && exec unshare --pid --mount --fork "
			       "--kill-child sh -c 'exec 3<\"$1\" && mount -t tmpfs tmpfs /tmp && mkdir /tmp/classes && "
			       "mount --bind /proc/self/fd/3 /tmp/classes && exec \"$0\" -cp /tmp/classes CpuSplit -t 2 -b' "
			       "\"$2\" \"$3\"",
			       (char *)cgroup, NULL, (char *)jdk_java_path(jdk), classes, NULL };
	char *args[8];

	assert_non_null(classes);
	memset(jvm, 0, sizeof(*jvm));
	jvm->dir = harness_tmpdir();
	memcpy(args, argv, sizeof(argv));
	args[4] = jvm->dir;
	if (harness_start_workload(&jvm->out, args))
		fail_msg("%s CpuSplit in a container did not print ready in 10 s; its output:\n%s", jdk->name,
			 jvm->out.buf);
	free(classes);
}

/* The pid (on the host) of the JVM that unshare (pid) forked. */
static pid_t container_jvm_pid(pid_t unshare_pid)
{
	char path[64];
	int child = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)unshare_pid, (int)unshare_pid);
	assert_non_null(f = fopen(path, "r"));
	assert_int_equal(fscanf(f, "%d", &child), 1);
	fclose(f);
	return child;
}

/* SIGTERM to the JVM itself; it runs its shutdown hook and exits 143, and unshare with it. */
static void jvm_stop_container(struct jvm *jvm)
{
	kill(container_jvm_pid(jvm->out.pid), SIGTERM);
	jvm->status = harness_finish(&jvm->out, 20);
	jvm_assert_no_crash_report(jvm);
	remove_tree(jvm->dir);
	jvm->dir = NULL;
	assert_int_equal(jvm->status, 143);
}

/*
 * Under -a --continuous --dir, a JVM's service (its main class, CpuSplit)
 * has Java frames (CpuSplit's share50) in its profiles, whether it ran from
 * the start, started mid-recording or runs in a container (where its files
 * are also named with the container's id); which intervals are checked is
 * said below. The JVM keeps making progress (its heartbeat) during and
 * after the recording.
 */
static void jvm_case(const struct jdk *jdk, enum jvm_case c)
{
	struct child profiler;
	struct jvm jvm;
	char *dir = harness_tmpdir(), cgroup[512] = "", suffix[128];
	long started_in = 1, beats_before, profiles = 0, checked = 0, with_java = 0;
	struct jvm_profile got[64];
	struct dirent *de;
	DIR *d;

	jvm_require(jdk, "CpuSplit");
	if (!have_go()) {
		fprintf(stderr, "  go is not installed: this test reads the profiles with go tool pprof; skipped\n");
		skip();
	}
	snprintf(suffix, sizeof(suffix), "-CpuSplit.cpu.pb.gz");
	if (c == JVM_CONTAINER) {
		const char *root = cgroup2_root();

		if (!root || system("unshare --help >/dev/null 2>&1")) {
			fprintf(stderr, "  no cgroup v2 hierarchy or no unshare: skipped\n");
			skip();
		}
		snprintf(cgroup, sizeof(cgroup), "%s/docker-%s.scope", root, JVM_CONTAINER_ID);
		if (mkdir(cgroup, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", cgroup, strerror(errno));
		snprintf(suffix, sizeof(suffix), "-CpuSplit-%.12s.cpu.pb.gz", JVM_CONTAINER_ID);
		jvm_start_container(&jvm, jdk, cgroup);
	} else if (c == JVM_FROM_START) {
		jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "2", "-b", NULL });
	}
	profiler_args_start(&profiler, (char *[]){ "-a", "--continuous", "--interval", "2s", "-F", "97", "--dir", dir,
						   "-v", NULL });
	wait_interval(&profiler, 1, 60);
	if (c == JVM_MID_RECORDING) {
		jvm_start(&jvm, jdk, "CpuSplit", (char *[]){ "-t", "2", "-b", NULL });
		drain(&profiler);
		started_in = last_interval(&profiler) + 1;
	}
	wait_interval(&profiler, started_in + 4, 90);
	harness_read_some(&jvm.out, 0);
	beats_before = (long)strlen(jvm.out.buf);
	profiler_term(&profiler);
	/* Still beating after the recording: the JVM was not stopped by it. */
	for (long long deadline = now_ms() + 5000; (long)strlen(jvm.out.buf) == beats_before && now_ms() < deadline;)
		harness_read_some(&jvm.out, 200);
	if ((long)strlen(jvm.out.buf) <= beats_before)
		fail_msg("the JVM made no progress after the recording; its output:\n%s", jvm.out.buf);
	if (c == JVM_CONTAINER) {
		jvm_stop_container(&jvm);
		rmdir(cgroup);
	} else {
		jvm_stop(&jvm);
	}

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), sl = strlen(suffix);
		char path[1024];
		long long seq = dir_file_seq(de->d_name);

		if (de->d_name[0] == '.' || l <= sl || strcmp(de->d_name + l - sl, suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (profiles < (long)(sizeof(got) / sizeof(got[0])))
			got[profiles++] = (struct jvm_profile){ seq, pprof_samples_with(path, "share50") > 0 };
	}
	closedir(d);
	qsort(got, (size_t)profiles, sizeof(got[0]), cmp_jvm_profile);
	/*
	 * Its first interval is left out (the agent goes in while it runs: at
	 * the start of the recording, a JVM still starting is attached when
	 * it is live), and with it the next when the JVM started
	 * mid-recording (2 s here; a JVM takes about that to open its attach
	 * listener on a loaded machine); so is the last, cut by SIGTERM right
	 * after an interval line and too short to count on. Every one between
	 * has Java frames.
	 */
	for (long i = c == JVM_MID_RECORDING ? 2 : 1; i < profiles - 1; i++) {
		checked++;
		with_java += got[i].java;
	}
	fprintf(stderr, "  %s: %ld of the JVM's %ld profiles (%s) checked, %ld of them with Java frames\n", jdk->name,
		checked, profiles, suffix + 1, with_java);
	if (checked < 2 || with_java < checked) {
		fprintf(stderr, "the profiler's stderr:\n%s\n", profiler.buf);
		for (long i = 0; i < profiles; i++)
			fprintf(stderr, "  file %lld: %s\n", got[i].seq, got[i].java ? "Java frames" : "no Java frame");
		fail_msg("%ld of %ld profiles checked have Java frames (at least 2 checked, all with them)", with_java,
			 checked);
	}
	remove_tree(dir);
}

/* One JVM case on one JDK, the state of its test. */
struct jvm_case_spec {
	const struct jdk *jdk;
	enum jvm_case where;
};

static const struct jvm_case_spec from_start17 = { &jdk17, JVM_FROM_START },
				  from_start25 = { &jdk25, JVM_FROM_START },
				  mid_recording17 = { &jdk17, JVM_MID_RECORDING },
				  mid_recording25 = { &jdk25, JVM_MID_RECORDING },
				  in_container17 = { &jdk17, JVM_CONTAINER },
				  in_container25 = { &jdk25, JVM_CONTAINER };

static void jvm_case_test(void **state)
{
	const struct jvm_case_spec *spec = *state;

	jvm_case(spec->jdk, spec->where);
}

#define JVM_CASE_TEST(name, spec) { name, jvm_case_test, NULL, harness_teardown, (void *)&(spec) }

int main(void)
{
	const struct CMUnitTest tests[] = {
		HARNESS_TEST(each_interval_arrives),
		HARNESS_TEST(each_interval_arrives_by_ingest),
		HARNESS_TEST(each_interval_arrives_by_otlp),
		HARNESS_TEST(server_down_then_up),
		HARNESS_TEST(spool_bound_drops_oldest),
		HARNESS_TEST(dir_keep_bound),
		HARNESS_TEST(container_labelled),
		HARNESS_TEST(processes_forgotten),
		JVM_CASE_TEST("jvm17_from_start", from_start17),
		JVM_CASE_TEST("jvm25_from_start", from_start25),
		JVM_CASE_TEST("jvm17_started_mid_recording", mid_recording17),
		JVM_CASE_TEST("jvm25_started_mid_recording", mid_recording25),
		JVM_CASE_TEST("jvm17_in_container", in_container17),
		JVM_CASE_TEST("jvm25_in_container", in_container25),
	};

	harness_filter_tests();

	return cmocka_run_group_tests_name("fleet: --continuous, --push, --dir", tests, NULL, NULL);
}
