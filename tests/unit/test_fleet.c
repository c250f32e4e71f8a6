/*
 * Unit tests of the fleet side's pure parts: --label, service names from a
 * java command line, container ids from /proc/PID/cgroup (hostile inputs
 * included), the ingest query, and the spool's order and bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "user/fleet/labels.h"
#include "user/fleet/push.h"
#include "user/fleet/push_request.h"
#include "proto/pyroscope/push/v1/push.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "output/output.h"
#include "profile/profile.h"
#include "symbolizer/service.h"
#include "user/fleet/spool.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void label_parses_and_refuses(void **state)
{
	struct fleet_label l;
	char err[256];

	assert_int_equal(labels__parse("env=prod", &l, err, sizeof(err)), 0);
	assert_string_equal(l.key, "env");
	assert_string_equal(l.value, "prod");
	assert_int_equal(labels__parse("region.zone=eu-west-1a", &l, err, sizeof(err)), 0);
	/* Each of these would change or break the name Pyroscope parses. */
	const char *bad[] = { "env", "=x", "env=", "e v=x", "env=a,b", "env=a}", "env=a b", "env=a=b",
			      "__name__=x", "hostname=x", "container_id=x", "service_name=x", "k\x01=v", "k=v\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(labels__parse(bad[i], &l, err, sizeof(err)), -1);
	char longkey[200];
	memset(longkey, 'k', 100);
	strcpy(longkey + 100, "=v");
	assert_int_equal(labels__parse(longkey, &l, err, sizeof(err)), -1);
}

static void service_names_are_sanitized(void **state)
{
	char out[16];

	service__sanitize("my app{x}", out, sizeof(out));
	assert_string_equal(out, "my_app_x_");
	service__sanitize("", out, sizeof(out));
	assert_string_equal(out, "unknown");
	service__sanitize("averyveryverylongname", out, sizeof(out));
	assert_string_equal(out, "averyveryverylo");
}

static void app_name_is_pyroscopes_form(void **state)
{
	struct fleet_label l[2] = { { "hostname", "h1" }, { "env", "prod" } };
	char buf[64], tiny[10];

	assert_int_equal(labels__app_name(buf, sizeof(buf), "Main", "cpu", l, 2), (int)strlen("Main.cpu{hostname=h1,env=prod}"));
	assert_string_equal(buf, "Main.cpu{hostname=h1,env=prod}");
	assert_int_equal(labels__app_name(tiny, sizeof(tiny), "Main", "cpu", l, 2), -1);
}

static void service_of(const char *cmdline, size_t len, const char *expect)
{
	char out[SERVICE_NAME_MAX + 1] = "untouched";
	int rc = service__from_cmdline(cmdline, len, out, sizeof(out));

	if (!expect) {
		assert_int_equal(rc, 0);
		assert_string_equal(out, "untouched");
	} else {
		assert_int_equal(rc, 1);
		assert_string_equal(out, expect);
	}
}

#define CMD(s) s, sizeof(s) - 1

static void java_service_as_jps_names_it(void **state)
{
	service_of(CMD("/usr/lib/jvm/bin/java\0-Xmx1g\0-cp\0a.jar:b.jar\0com.example.Main\0arg"), "com.example.Main");
	service_of(CMD("java\0-jar\0/opt/app/app.jar\0--port\0080"), "app.jar");
	service_of(CMD("java\0--module-path\0mods\0-m\0com.app/com.app.Server"), "com.app.Server");
	service_of(CMD("java\0--module=com.app/com.app.Server"), "com.app.Server");
	service_of(CMD("java\0--module-path\0mods\0-m\0com.app"), "com.app");
	service_of(CMD("java\0-Dx=y\0Hello.java"), "Hello.java");
	service_of(CMD("java\0-Dx=y\0src/Hello.java"), "Hello.java");
	/* Hostile: no main class, cut short, empty parts, no NULs, a name to sanitize. */
	service_of(CMD("java\0-cp"), NULL);
	service_of(CMD("java\0-jar"), NULL);
	service_of(CMD("java\0-jar\0/opt/"), NULL);
	service_of(CMD("java\0\0Main"), NULL);
	service_of(CMD("java"), NULL);
	service_of("", 0, NULL);
	service_of(CMD("java\0x.y.{Evil}\x1b[31m"), "x.y._Evil___31m");
	service_of(CMD("java\0Main"), "Main");
	service_of("java\0Mainxxxx", 9, "Main");  /* len ends the command line, not a NUL */
}

/* An interpreter's script, or python's module; none for code on the command line. */
static void interpreter_service_is_its_script(void **state)
{
	service_of(CMD("/usr/bin/python3\0/srv/app.py\0--port\08080"), "app.py");
	service_of(CMD("python3.11\0-u\0-W\0ignore\0app.py"), "app.py");
	service_of(CMD("/usr/bin/python3\0-m\0http.server\08000"), "http.server");
	service_of(CMD("python3\0--\0app.py"), "app.py");
	service_of(CMD("node\0--require\0dotenv/config\0server.js"), "server.js");
	service_of(CMD("perl\0-w\0/usr/bin/script.pl"), "script.pl");
	service_of(CMD("/bin/sh\0/etc/init.d/cron\0start"), "cron");
	service_of(CMD("bash\0-x\0run.sh"), "run.sh");
	/* Code given inline or on the standard input: no script. */
	service_of(CMD("python3\0-c\0print(1)"), NULL);
	service_of(CMD("bash\0-c\0while :; do :; done"), NULL);
	service_of(CMD("ruby\0-e\0puts 1"), NULL);
	service_of(CMD("python3\0-"), NULL);
	service_of(CMD("python3"), NULL);
	/* Not interpreters: a name that only begins like one, env itself, a native program. */
	service_of(CMD("pythonista\0app.py"), NULL);
	service_of(CMD("/usr/bin/env\0python3\0app.py"), NULL);
	service_of(CMD("/usr/sbin/nginx\0-g\0daemon off;"), NULL);
	/* Hostile: cut short, an empty script, a directory, no NULs. */
	service_of(CMD("python3\0-m"), NULL);
	service_of(CMD("python3\0-W"), NULL);
	service_of(CMD("python3\0\0app.py"), NULL);
	service_of(CMD("python3\0dir/"), NULL);
	service_of("python3\0appxxxx", 11, "app");
}

static void container(const char *cgroup, const char *expect)
{
	char out[SERVICE_CONTAINER_ID_LEN + 1] = "";
	int rc = service__container_id(cgroup, strlen(cgroup), out, sizeof(out));

	assert_int_equal(rc, expect != NULL);
	if (expect)
		assert_string_equal(out, expect);
}

static void container_ids_from_cgroups(void **state)
{
	container("0::/system.slice/docker-" ID64 ".scope\n", ID64);
	container("12:memory:/docker/" ID64 "\n", ID64);
	container("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-" ID64
		  ".scope\n", ID64);
	container("0::/kubepods/besteffort/pod1234/" ID64 "\n", ID64);
	container("0::/machine.slice/libpod-" ID64 ".scope/container\n", ID64);
	container("0::/system.slice/crio-" ID64 ".scope\n", ID64);
	container("0::/user.slice/user-1000.slice/session-2.scope\n", NULL);
	container("0::/\n", NULL);
	/* Hostile: too short, not hex, upper case, no colons, a conmon scope, no newline at the end. */
	container("0::/docker/0123456789abcdef\n", NULL);
	container("0::/docker/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg" "\n", NULL);
	container("0::/docker/" "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF" "\n", NULL);
	container("/docker/" ID64, NULL);
	container("0::/machine.slice/libpod-conmon-" ID64 ".scope\n", NULL);
	container("0::/docker/" ID64, ID64);
	container("", NULL);
}

static void query_is_escaped(void **state)
{
	char buf[512], small[20];

	assert_true(push__query(buf, sizeof(buf), "Main.cpu{hostname=h1,env=prod}", 100, 160, 19) > 0);
	assert_string_equal(buf, "name=Main.cpu%7Bhostname%3Dh1%2Cenv%3Dprod%7D&from=100&until=160&sampleRate=19"
				 "&spyName=jbpfprof&units=samples&aggregationType=sum");
	assert_int_equal(push__query(small, sizeof(small), "Main.cpu{}", 1, 2, 19), -1);
	assert_int_equal(push__escape(small, sizeof(small), "a/b c&"), (int)strlen("a%2Fb%20c%26"));
	assert_string_equal(small, "a%2Fb%20c%26");
}

static char *temp_dir(void)
{
	char *d = strdup("/tmp/test_fleet_spool.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void remove_dir(char *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
	free(d);
}

/* Takes the oldest entry and checks it is query q with body b. */
static void expect_next(struct spool *s, const char *q, const char *b)
{
	uint64_t seq;
	char *query;
	const void *body;
	size_t len;

	assert_int_equal(spool__peek(s, &seq, &query, &body, &len), 0);
	assert_string_equal(query, q);
	assert_int_equal(len, strlen(b));
	assert_memory_equal(body, b, len);
	free(query);
	spool__done(s, seq);
}

static void spool_keeps_order_across_reopen(void **state)
{
	char *dir = temp_dir(), err[256], tmp[512];
	struct spool *s = spool__open(dir, 1 << 20, err, sizeof(err));
	uint64_t seq;
	char *query;
	const void *body;
	size_t len;
	FILE *f;

	assert_non_null(s);
	assert_int_equal(spool__put(s, "q1", "b1", 2, NULL), 0);
	assert_int_equal(spool__put(s, "q2", "b2", 2, NULL), 0);
	/* A failed send keeps the entry first. */
	assert_int_equal(spool__peek(s, &seq, &query, &body, &len), 0);
	free(query);
	spool__release(s, seq);
	spool__close(s);
	/* A writer killed mid-entry leaves a tmp- file: never an entry. */
	snprintf(tmp, sizeof(tmp), "%s/tmp-00000000000000000009", dir);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs("half", f);
	fclose(f);
	s = spool__open(dir, 1 << 20, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(spool__put(s, "q3", "b3", 2, NULL), 0);
	expect_next(s, "q1", "b1");
	expect_next(s, "q2", "b2");
	expect_next(s, "q3", "b3");
	assert_int_equal(spool__peek(s, &seq, &query, &body, &len), -ENOENT);
	spool__close(s);
	remove_dir(dir);
}

static void spool_bound_drops_oldest_not_in_flight(void **state)
{
	char *dir = temp_dir(), err[256], body[101];
	struct spool *s = spool__open(dir, 250, err, sizeof(err)); /* two entries of 103 bytes fit */
	struct spool_stats st;
	uint64_t dropped, seq;
	char *query;
	const void *b;
	size_t len;

	assert_non_null(s);
	memset(body, 'x', 100);
	body[100] = '\0';
	assert_int_equal(spool__put(s, "q1", body, 100, &dropped), 0);
	assert_int_equal(dropped, 0);
	assert_int_equal(spool__put(s, "q2", body, 100, &dropped), 0);
	assert_int_equal(dropped, 0);
	/* q1 is being sent: the bound takes q2 instead. */
	assert_int_equal(spool__peek(s, &seq, &query, &b, &len), 0);
	assert_string_equal(query, "q1");
	free(query);
	assert_int_equal(spool__put(s, "q3", body, 100, &dropped), 0);
	assert_int_equal(dropped, 1);
	spool__release(s, seq);
	assert_int_equal(spool__put(s, "q4", body, 100, &dropped), 0);
	assert_int_equal(dropped, 1);
	spool__stats(s, &st);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.entries, 2);
	expect_next(s, "q3", body);
	spool__close(s);
	remove_dir(dir);
}

/* The request the push API gets for an entry: decoded back with the vendored proto's code. */
static void push_request_carries_the_profile_and_its_labels(void **state)
{
	static const uint8_t profile[] = { 0x1f, 0x8b, 8, 0, 1, 2, 3 };
	char app[256], query[1024];
	struct fleet_label l[2] = { { "hostname", "h1" }, { "env", "prod" } };
	Push__V1__PushRequest *req;
	const Push__V1__RawProfileSeries *series;
	uint8_t *packed;
	size_t len;

	assert_true(labels__app_name(app, sizeof(app), "org.example.Main", "cpu", l, 2) > 0);
	assert_true(push__query(query, sizeof(query), app, 100, 160, 19) > 0);
	assert_int_equal(push_request__encode(query, profile, sizeof(profile), "id-1", &packed, &len), 0);
	req = push__v1__push_request__unpack(NULL, len, packed);
	assert_non_null(req);
	assert_int_equal(req->n_series, 1);
	series = req->series[0];
	assert_int_equal(series->n_labels, 4);
	assert_string_equal(series->labels[0]->name, "service_name");
	assert_string_equal(series->labels[0]->value, "org.example.Main");
	assert_string_equal(series->labels[1]->name, "__name__");
	assert_string_equal(series->labels[1]->value, "process_cpu");
	assert_string_equal(series->labels[2]->name, "hostname");
	assert_string_equal(series->labels[2]->value, "h1");
	assert_string_equal(series->labels[3]->name, "env");
	assert_string_equal(series->labels[3]->value, "prod");
	assert_int_equal(series->n_samples, 1);
	assert_string_equal(series->samples[0]->id, "id-1");
	assert_int_equal(series->samples[0]->raw_profile.len, sizeof(profile));
	assert_memory_equal(series->samples[0]->raw_profile.data, profile, sizeof(profile));
	push__v1__push_request__free_unpacked(req, NULL);
	free(packed);

	/* Wall time keeps its own name; no labels but the two. */
	assert_true(labels__app_name(app, sizeof(app), "app.py", "wall", NULL, 0) > 0);
	assert_true(push__query(query, sizeof(query), app, 1, 2, 19) > 0);
	assert_int_equal(push_request__encode(query, profile, sizeof(profile), "id-2", &packed, &len), 0);
	req = push__v1__push_request__unpack(NULL, len, packed);
	assert_non_null(req);
	assert_int_equal(req->series[0]->n_labels, 2);
	assert_string_equal(req->series[0]->labels[0]->value, "app.py");
	assert_string_equal(req->series[0]->labels[1]->value, "wall");
	push__v1__push_request__free_unpacked(req, NULL);
	free(packed);
}

/* Entries the push API cannot name (a spool file's first line is the target of no one but a corrupt disk). */
static void push_request_refuses_what_names_no_profile(void **state)
{
	static const char *const queries[] = {
		"from=1&until=2",                  /* no name */
		"name=",                           /* empty */
		"name=svc.cpu",                    /* no labels */
		"name=svc.cpu%7Ba=b",              /* unclosed */
		"name=svc.cpu%7Ba=b%7Dx",          /* after the braces */
		"name=svc.heap%7B%7D",             /* an event this does not make */
		"name=cpu%7B%7D",                  /* no service */
		"name=svc.cpu%7Ba%7D",             /* a label without a value */
		"name=svc.cpu%7B=b%7D",            /* ... without a name */
		"name=svc.cpu%7Bx%7",              /* a cut escape */
		"name=svc.cpu%7Ba=%00%7D",         /* a NUL */
	};
	uint8_t *packed;
	size_t len;

	for (size_t i = 0; i < sizeof(queries) / sizeof(queries[0]); i++)
		if (push_request__encode(queries[i], "x", 1, "id", &packed, &len) != -EINVAL)
			fail_msg("refused not: %s", queries[i]);
}

/* For an OTLP receiver: the entry's pprof read back and written as an export request, its labels the resource's. */
static void otlp_request_carries_the_profile_and_its_labels(void **state)
{
	const struct output_meta meta = { .event = "cpu", .frequency_hz = 19, .duration_s = 60,
					  .start_unix_ns = 1700000000000000000 };
	struct fleet_label l[3] = { { "hostname", "h1" }, { "container_id", "c0ffee" }, { "env", "prod" } };
	struct profile *p = profile__new(NULL);
	char *pprof = NULL, app[256], query[1024], err[128];
	size_t pprof_len = 0, len;
	FILE *f = open_memstream(&pprof, &pprof_len);
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *req;
	const Opentelemetry__Proto__Resource__V1__Resource *res;
	static const char *const want[][2] = {
		{ "service.name", "org.example.Main" }, { "host.name", "h1" }, { "container.id", "c0ffee" },
		{ "env", "prod" },
	};
	int64_t main_fn = profile__intern(p, "main", FRAME_KIND_NATIVE);
	uint8_t *out;

	assert_non_null(p);
	assert_non_null(f);
	assert_true(main_fn >= 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ (uint32_t)main_fn }, 1, 42), 0);
	assert_int_equal(output__pprof_write(p, &meta, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(labels__app_name(app, sizeof(app), "org.example.Main", "cpu", l, 3) > 0);
	assert_true(push__query(query, sizeof(query), app, 100, 160, 19) > 0);
	assert_int_equal(push_request__otlp(query, pprof, pprof_len, &out, &len, err, sizeof(err)), 0);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, out);
	assert_non_null(req);
	assert_int_equal(req->n_resource_profiles, 1);
	res = req->resource_profiles[0]->resource;
	assert_int_equal(res->n_attributes, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(res->attributes[i]->key, want[i][0]);
		assert_string_equal(res->attributes[i]->value->string_value, want[i][1]);
	}
	/* The sample, its count, and the recording's time. */
	assert_int_equal(req->resource_profiles[0]->scope_profiles[0]->profiles[0]->n_samples, 1);
	assert_int_equal(req->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0]->values[0], 42);
	assert_int_equal(req->resource_profiles[0]->scope_profiles[0]->profiles[0]->time_unix_nano,
			 1700000000000000000ull);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	free(out);
	/* A profile that does not read, a name that names none: refused for good. */
	assert_int_equal(push_request__otlp(query, "not gzip", 8, &out, &len, err, sizeof(err)), -EINVAL);
	assert_int_equal(push_request__otlp("name=x", pprof, pprof_len, &out, &len, err, sizeof(err)), -EINVAL);
	free(pprof);
	profile__free(p);
}

static void uuids_are_version_4(void **state)
{
	char a[40], b[40];

	push_request__uuid(a, sizeof(a));
	push_request__uuid(b, sizeof(b));
	assert_int_equal(strlen(a), 36);
	assert_true(a[8] == '-' && a[13] == '-' && a[18] == '-' && a[23] == '-');
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(label_parses_and_refuses),
		cmocka_unit_test(service_names_are_sanitized),
		cmocka_unit_test(app_name_is_pyroscopes_form),
		cmocka_unit_test(java_service_as_jps_names_it),
		cmocka_unit_test(interpreter_service_is_its_script),
		cmocka_unit_test(container_ids_from_cgroups),
		cmocka_unit_test(query_is_escaped),
		cmocka_unit_test(push_request_carries_the_profile_and_its_labels),
		cmocka_unit_test(push_request_refuses_what_names_no_profile),
		cmocka_unit_test(uuids_are_version_4),
		cmocka_unit_test(otlp_request_carries_the_profile_and_its_labels),
		cmocka_unit_test(spool_keeps_order_across_reopen),
		cmocka_unit_test(spool_bound_drops_oldest_not_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
