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

#define SERVICE "cpu_split"
#define MAX_RECEIVED 4096

struct server {
	struct child proc;
	char *tmp;       /* its files, removed by server_free */
	char *dir;       /* what it keeps */
	char *portfile;
	int port;
};

/* One profile the server kept, or one file --dir wrote. */
struct received {
	char name[512];   /* the query's name, decoded: service.event{labels} */
	long long from, until; /* ms since the epoch */
	char file[600];   /* its pprof */
};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path); /* what cannot be removed stays behind in /tmp; the walk goes on */
	return 0;
}

/* Removes dir and what it holds, and frees the name. */
static void remove_tree(char *dir)
{
	if (dir)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Starts the server on port (0: a free one) and waits, polling with a
 * deadline, for its port file. A port just freed by an earlier server may
 * take a moment to bind: the server then exits and is started again.
 */
static void server_start(struct server *s, int port)
{
	const char *script = harness_getenv("INGEST_SERVER", "tests/fleet/ingest_server.py");
	char portarg[16];
	long long deadline = now_ms() + 20000;

	if (!s->dir) {
		s->tmp = harness_tmpdir();
		s->dir = harness_path(s->tmp, "received");
		s->portfile = harness_path(s->tmp, "port");
	}
	snprintf(portarg, sizeof(portarg), "%d", port);
	for (;;) {
		FILE *f;
		int status;

		unlink(s->portfile);
		assert_int_equal(harness_start_command(&s->proc,
						       (char *[]){ "/usr/bin/python3", (char *)script, s->dir,
								   s->portfile, portarg, NULL },
						       2),
				 0);
		while (!(f = fopen(s->portfile, "r")) && waitpid(s->proc.pid, &status, WNOHANG) == 0 &&
		       now_ms() < deadline)
			sleep_ms(50);
		if (f) {
			assert_int_equal(fscanf(f, "%d", &s->port), 1);
			fclose(f);
			return;
		}
		harness_finish(&s->proc, 5);
		if (now_ms() >= deadline)
			fail_msg("the ingest server did not start: %s", s->proc.buf);
		sleep_ms(200);
	}
}

/* SIGTERM: it ends between requests (ingest_server.py). */
static void server_stop(struct server *s)
{
	kill(s->proc.pid, SIGTERM);
	assert_int_equal(harness_finish(&s->proc, 10), 0);
}

static void server_free(struct server *s)
{
	free(s->dir);
	free(s->portfile);
	remove_tree(s->tmp);
}

static char *server_url(const struct server *s)
{
	char *url;

	assert_true(asprintf(&url, "http://127.0.0.1:%d", s->port) > 0);
	return url;
}

static int from_hex(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Parameter key of a query string, percent-decoded into out; 0 or -1. */
static int query_param(const char *query, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key), n = 0;
	const char *p = query;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			for (p += klen + 1; *p && *p != '&' && *p != '\n' && n + 1 < size; p++) {
				if (*p == '%' && p[1] && p[2]) {
					out[n++] = (char)(from_hex(p[1]) * 16 + from_hex(p[2]));
					p += 2;
				} else {
					out[n++] = *p == '+' ? ' ' : *p;
				}
			}
			out[n] = '\0';
			return 0;
		}
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return -1;
}

/* A whole file (caller frees); fails the test when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	assert_true(size >= 0);
	rewind(f);
	data = malloc((size_t)size + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	*len = (size_t)size;
	return data;
}

/*
 * One PushRequest the server kept, as the profile it carries: its labels
 * as the ingest name they stand for (service_name.event{k=v,...}, the
 * event cpu for __name__ process_cpu), its interval from the pprof, which
 * is kept as r->file for the checks that read profiles.
 */
static void push_received(const char *path, struct received *r)
{
	size_t len, used = 0;
	uint8_t *data = slurp(path, &len);
	Push__V1__PushRequest *req = push__v1__push_request__unpack(NULL, len, data);
	const Push__V1__RawProfileSeries *series;
	const char *service = NULL, *kind = NULL;
	Perftools__Profiles__Profile *pprof;
	char pairs[400] = "";
	FILE *f;

	assert_non_null(req);
	assert_int_equal(req->n_series, 1);
	series = req->series[0];
	assert_int_equal(series->n_samples, 1);
	/* A UUID names the sample. */
	assert_int_equal(strlen(series->samples[0]->id), 36);
	for (size_t i = 0; i < series->n_labels; i++) {
		const Types__V1__LabelPair *l = series->labels[i];

		if (!strcmp(l->name, "service_name"))
			service = l->value;
		else if (!strcmp(l->name, "__name__"))
			kind = l->value;
		else
			used += (size_t)snprintf(pairs + used, sizeof(pairs) - used, "%s%s=%s", used ? "," : "",
						 l->name, l->value);
		assert_true(used < sizeof(pairs));
	}
	assert_non_null(service);
	assert_non_null(kind);
	snprintf(r->name, sizeof(r->name), "%s.%s{%s}", service, strcmp(kind, "process_cpu") ? kind : "cpu", pairs);
	f = fopen(r->file, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(series->samples[0]->raw_profile.data, 1, series->samples[0]->raw_profile.len, f),
			 series->samples[0]->raw_profile.len);
	assert_int_equal(fclose(f), 0);
	pprof = decode(series->samples[0]->raw_profile.data, series->samples[0]->raw_profile.len);
	r->from = pprof->time_nanos / 1000000;
	r->until = (pprof->time_nanos + pprof->duration_nanos) / 1000000;
	perftools__profiles__profile__free_unpacked(pprof, NULL);
	push__v1__push_request__free_unpacked(req, NULL);
	free(data);
}

/* The OTLP resource attributes that stand for the ingest name's labels, and back. */
static const char *label_of(const char *attribute)
{
	return !strcmp(attribute, "host.name") ? "hostname" : !strcmp(attribute, "container.id") ? "container_id"
											   : attribute;
}

/*
 * One OTLP export request the server kept, as the profile it carries: its
 * resource's service.name and other attributes as the ingest name they
 * stand for (service.event{k=v,...}), its interval from its profile. It
 * has no pprof: r->file is left empty.
 */
static void otlp_received(const char *path, struct received *r)
{
	size_t len, used = 0;
	uint8_t *data = slurp(path, &len);
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req =
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
			NULL, len, data);
	const Opentelemetry__Proto__Resource__V1__Resource *res;
	const Opentelemetry__Proto__Profiles__V1development__Profile *p;
	const char *service = NULL, *type;
	char pairs[400] = "";

	assert_non_null(req);
	/* One service per request: one resource, one scope; cpu has two sample types. */
	assert_int_equal(req->n_resource_profiles, 1);
	assert_int_equal(req->resource_profiles[0]->n_scope_profiles, 1);
	res = req->resource_profiles[0]->resource;
	p = req->resource_profiles[0]->scope_profiles[0]->profiles[0];
	assert_non_null(res);
	for (size_t i = 0; i < res->n_attributes; i++) {
		const Opentelemetry__Proto__Common__V1__KeyValue *kv = res->attributes[i];

		if (!strcmp(kv->key, "service.name"))
			service = kv->value->string_value;
		else
			used += (size_t)snprintf(pairs + used, sizeof(pairs) - used, "%s%s=%s", used ? "," : "",
						 label_of(kv->key), kv->value->string_value);
		assert_true(used < sizeof(pairs));
	}
	assert_non_null(service);
	type = req->dictionary->string_table[p->sample_type->type_strindex];
	snprintf(r->name, sizeof(r->name), "%s.%s{%s}", service, strcmp(type, "samples") ? type : "cpu", pairs);
	r->from = (long long)(p->time_unix_nano / 1000000);
	r->until = (long long)((p->time_unix_nano + p->duration_nano) / 1000000);
	r->file[0] = '\0';
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	free(data);
}

/* What the server kept, in the order received. */
static size_t server_received(const struct server *s, struct received *r, size_t max)
{
	size_t n = 0;

	for (; n < max; n++) {
		char path[700], query[4096], v[64];
		FILE *f;

		snprintf(r[n].file, sizeof(r[n].file), "%s/%06zu.pb.gz", s->dir, n);
		snprintf(path, sizeof(path), "%s/%06zu.push", s->dir, n);
		if (!access(path, F_OK)) {
			push_received(path, &r[n]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%06zu.otlp", s->dir, n);
		if (!access(path, F_OK)) {
			otlp_received(path, &r[n]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%06zu.query", s->dir, n);
		if (!(f = fopen(path, "r")))
			break;
		assert_non_null(fgets(query, sizeof(query), f));
		fclose(f);
		assert_int_equal(query_param(query, "name", r[n].name, sizeof(r[n].name)), 0);
		assert_int_equal(query_param(query, "from", v, sizeof(v)), 0);
		r[n].from = atoll(v) * 1000;
		assert_int_equal(query_param(query, "until", v, sizeof(v)), 0);
		r[n].until = atoll(v) * 1000;
	}
	return n;
}

/* Whether r is a profile of service (the name up to ".event{"). */
static int is_service(const struct received *r, const char *service)
{
	size_t n = strlen(service);

	return !strncmp(r->name, service, n) && !strncmp(r->name + n, ".cpu{", 5);
}

/* The N of the last "interval N:" line of the profiler's stderr, 0 if none. */
static long last_interval(const struct child *profiler)
{
	const char *p = profiler->buf, *hit;
	long n = 0;

	while ((hit = strstr(p, "jbpfprof: interval "))) {
		n = strtol(hit + 19, NULL, 10);
		p = hit + 19;
	}
	return n;
}

/*
 * The profiles of service, in the order received: each interval once and
 * in order (from strictly increasing, until not decreasing). Returns how many.
 */
static size_t assert_in_order_once(const struct received *r, size_t n, const char *service)
{
	long long last_from = -1, last_until = -1;
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		if (!is_service(&r[i], service))
			continue;
		if (r[i].from <= last_from || r[i].until < last_until)
			fail_msg("%s: profile %zu (from %lld until %lld) after one from %lld until %lld: "
				 "out of order or sent twice", service, i, r[i].from, r[i].until, last_from, last_until);
		assert_true(r[i].from <= r[i].until);
		last_from = r[i].from;
		last_until = r[i].until;
		count++;
	}
	return count;
}

/* Every service's profiles in order and once. */
static void assert_all_in_order_once(const struct received *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char service[512];
		char *dot;

		snprintf(service, sizeof(service), "%s", r[i].name);
		dot = strstr(service, ".cpu{");
		assert_non_null(dot);
		*dot = '\0';
		assert_in_order_once(r, n, service);
	}
}

static int have_go(void)
{
	return system("go version >/dev/null 2>&1") == 0;
}

/* `go tool pprof -raw FILE` reads it, and its samples have a frame named frame. */
static void assert_pprof_reads(const char *file, const char *frame)
{
	char cmd[1200], line[4096];
	int found = 0, samples = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "go tool pprof -raw '%s' 2>&1", file);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Samples:", 8))
			samples = 1;
		if (samples && strstr(line, frame))
			found = 1;
	}
	assert_int_equal(pclose(p), 0);
	if (!samples || !found)
		fail_msg("go tool pprof -raw %s: %s", file, samples ? "no frame named as expected" : "no samples");
}

static struct child *profiler_args_start(struct child *profiler, char *const args[])
{
	assert_int_equal(harness_start_profiler(profiler, args), 0);
	return profiler;
}

static void fail_stalled(struct child *profiler, const char *what);

/* Waits for "interval N:" in the profiler's stderr; fails after timeout_s, saying where its threads are. */
static void wait_interval(struct child *profiler, long n, int timeout_s)
{
	char text[64], what[128];

	snprintf(text, sizeof(text), "jbpfprof: interval %ld:", n);
	if (harness_wait_for(profiler, text, timeout_s)) {
		snprintf(what, sizeof(what), "no \"%s\" within %d s", text, timeout_s);
		fail_stalled(profiler, what);
	}
}

/* SIGTERM, then its exit (it flushes the spool for up to 10 s). Returns the time it was sent. */
static time_t profiler_term(struct child *profiler)
{
	time_t t = time(NULL);

	kill(profiler->pid, SIGTERM);
	if (harness_finish(profiler, 60))
		fail_msg("the profiler did not exit cleanly on SIGTERM:\n%s", profiler->buf);
	return t;
}

static void start_cpu_split(struct child *w)
{
	char *path = harness_workload("cpu_split");

	assert_int_equal(harness_start_workload(w, (char *[]){ path, "-t", "2", NULL }), 0);
	free(path);
}

static size_t count_prefix_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0, sl = strlen(suffix);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l > sl && !strcmp(de->d_name + l - sl, suffix))
			n++;
	}
	closedir(d);
	return n;
}

/* Reads what the profiler has written so far without waiting: its stderr pipe never fills. */
static void drain(struct child *profiler)
{
	while (profiler->len + 1 < sizeof(profiler->buf) && harness_read_some(profiler, 0) == 0)
		;
}

/* Where each of pid's threads is: name, state and kernel wait channel, for a failure message. */
static void thread_states(pid_t pid, char *buf, size_t size)
{
	char path[384];
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d)) && used + 1 < size) {
		char comm[64] = "", wchan[128] = "", stat[512] = "", *state;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(wchan, sizeof(wchan), f))
				wchan[0] = '\0';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
		if ((f = fopen(path, "r"))) {
			if (!fgets(stat, sizeof(stat), f))
				stat[0] = '\0';
			fclose(f);
		}
		state = strrchr(stat, ')');
		used += (size_t)snprintf(buf + used, size - used, "  thread %s (%s): state %c, waiting in %s\n",
					 de->d_name, comm, state && state[1] ? state[2] : '?', wchan[0] ? wchan : "-");
	}
	closedir(d);
}

/* Fails with the profiler's stderr and where its threads are. */
static void fail_stalled(struct child *profiler, const char *what)
{
	char threads[4096];

	thread_states(profiler->pid, threads, sizeof(threads));
	fail_msg("%s; the profiler's threads:\n%sits stderr:\n%s", what, threads, profiler->buf);
}

/* Profiles of service the server has received so far. */
static size_t server_count(const struct server *s, struct received *r, const char *service)
{
	size_t n = server_received(s, r, MAX_RECEIVED), count = 0;

	for (size_t i = 0; i < n; i++)
		count += is_service(&r[i], service);
	return count;
}

/*
 * Each interval of cpu_split arrives, labelled with the host and --label,
 * once and in order, as a pprof that go tool pprof reads with cpu_split's
 * functions; SIGTERM delivers the partial interval.
 */
static void intervals_arrive(const char *api)
{
	struct server s = { 0 };
	struct child w, profiler;
	struct received *r = calloc(MAX_RECEIVED, sizeof(*r));
	char *spool = harness_tmpdir(), *url, interval[32];
	size_t n, mine = 0, last = 0, before_last = 0;
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
		if (is_service(&r[i], SERVICE)) {
			mine++;
			before_last = last;
			last = i;
		}
	}
	assert_all_in_order_once(r, n);
	/* Every interval handed over has cpu_split's profile: one each, none lost. */
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
	free(s.dir);
	free(s.portfile);
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
