/*
 * fleet_harness: the stand-in server and what test_fleet.c reads back
 * (contract in fleet_harness.h).
 */
#include "fleet_harness.h"

#include "harness.h"
#include "jvm.h"
#include <dirent.h>
#include <errno.h>
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

void remove_tree(char *dir)
{
	if (dir)
		harness_remove_tree(dir);
	free(dir);
}

void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void server_start(struct server *s, int port)
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

void server_stop(struct server *s)
{
	kill(s->proc.pid, SIGTERM);
	assert_int_equal(harness_finish(&s->proc, 10), 0);
}

void server_free(struct server *s)
{
	free(s->dir);
	free(s->portfile);
	remove_tree(s->tmp);
}

char *server_url(const struct server *s)
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

size_t server_received(const struct server *s, struct received *r, size_t max)
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

int is_service(const struct received *r, const char *service)
{
	size_t n = strlen(service);

	return !strncmp(r->name, service, n) && !strncmp(r->name + n, ".cpu{", 5);
}

long last_interval(const struct child *profiler)
{
	const char *p = profiler->buf, *hit;
	long n = 0;

	while ((hit = strstr(p, "jbpfprof: interval "))) {
		n = strtol(hit + 19, NULL, 10);
		p = hit + 19;
	}
	return n;
}

size_t assert_in_order_once(const struct received *r, size_t n, const char *service)
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

void assert_all_in_order_once(const struct received *r, size_t n)
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

int have_go(void)
{
	return system("go version >/dev/null 2>&1") == 0;
}

void assert_pprof_reads(const char *file, const char *frame)
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

struct child *profiler_args_start(struct child *profiler, char *const args[])
{
	assert_int_equal(harness_start_profiler(profiler, args), 0);
	return profiler;
}

void wait_interval(struct child *profiler, long n, int timeout_s)
{
	char text[64], what[128];

	snprintf(text, sizeof(text), "jbpfprof: interval %ld:", n);
	if (harness_wait_for(profiler, text, timeout_s)) {
		snprintf(what, sizeof(what), "no \"%s\" within %d s", text, timeout_s);
		fail_stalled(profiler, what);
	}
}

time_t profiler_term(struct child *profiler)
{
	time_t t = time(NULL);

	kill(profiler->pid, SIGTERM);
	if (harness_finish(profiler, 60))
		fail_msg("the profiler did not exit cleanly on SIGTERM:\n%s", profiler->buf);
	return t;
}

void start_cpu_split(struct child *w)
{
	char *path = harness_workload("cpu_split");

	assert_int_equal(harness_start_workload(w, (char *[]){ path, "-t", "2", NULL }), 0);
	free(path);
}

size_t count_prefix_files(const char *dir, const char *suffix)
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

void drain(struct child *profiler)
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

void fail_stalled(struct child *profiler, const char *what)
{
	char threads[4096];

	thread_states(profiler->pid, threads, sizeof(threads));
	fail_msg("%s; the profiler's threads:\n%sits stderr:\n%s", what, threads, profiler->buf);
}

size_t server_count(const struct server *s, struct received *r, const char *service)
{
	size_t n = server_received(s, r, MAX_RECEIVED), count = 0;

	for (size_t i = 0; i < n; i++)
		count += is_service(&r[i], service);
	return count;
}
