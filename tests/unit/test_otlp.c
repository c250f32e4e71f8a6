/*
 * Unit tests for output/otlp.c: what it writes is decoded with the code
 * generated from the vendored OpenTelemetry protos, and must hold the
 * profile's stacks and values (every sample read back as its resource,
 * thread, frames and state), follow the format's rules (each dictionary
 * table begins with its zero entry; every index within its table), and
 * describe frames and resources as the header comment of otlp.c says.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest ORequest;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary ODictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile OProfile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample OSample;
typedef Opentelemetry__Proto__Common__V1__KeyValue OKeyValue;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct process_parts app = { .name = "java", .program = "org.example.Main", .container = ID64,
					  .pid = 12 };
static const struct process_parts tool = { .name = "cron", .pid = 13 };

/*
 * Stacks: two processes, threads, each kind of code frame (a native one
 * with its file), a state on the wall stacks; one stack with no process
 * frame and no thread.
 */
static struct profile *made(bool wall)
{
	struct profile *p = profile__new(NULL);
	uint32_t main_fn, read_k, bar_j, baz_i, qux_0, stub, lost, t1, t2, t3;
	int64_t a = profile__intern_process_parts(p, &app), c = profile__intern_process_parts(p, &tool);
	uint32_t st_sleep = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_SLEEPING);
	uint32_t st_run = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_RUNNING);

	assert_true(a >= 0 && c >= 0);
	main_fn = intern_ok(p, "main", FRAME_KIND_NATIVE);
	profile__set_frame_module(p, main_fn, profile__module(p, "/usr/bin/app", "abcdef01"));
	read_k = intern_ok(p, "read_[k]", FRAME_KIND_KERNEL);
	bar_j = intern_ok(p, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED);
	baz_i = intern_ok(p, "Foo.baz_[i]", FRAME_KIND_JAVA_INLINED);
	qux_0 = intern_ok(p, "Foo.qux_[0]", FRAME_KIND_JAVA_INTERP);
	stub = intern_ok(p, "Interpreter", FRAME_KIND_JIT);
	lost = intern_ok(p, "[no user stack]", FRAME_KIND_LOST);
	t1 = frame_ok(p, "worker", FRAME_KIND_THREAD, 43);
	t2 = frame_ok(p, "main", FRAME_KIND_THREAD, 12);
	t3 = frame_ok(p, "cron", FRAME_KIND_THREAD, 13);
	{
		const uint32_t s1[] = { (uint32_t)a, t1, main_fn, bar_j, baz_i, read_k, st_sleep };
		const uint32_t s2[] = { (uint32_t)a, t1, main_fn, bar_j, qux_0, st_run };
		const uint32_t s3[] = { (uint32_t)a, t2, main_fn, stub, st_run };
		const uint32_t s4[] = { (uint32_t)c, t3, main_fn, read_k, st_sleep };
		const uint32_t s5[] = { lost, st_run };
		/* The same code as s1 in another thread: one stack table entry for both. */
		const uint32_t s6[] = { (uint32_t)a, t2, main_fn, bar_j, baz_i, read_k, st_sleep };

		assert_int_equal(profile__add(p, s1, ARRAY_SIZE(s1) - !wall, 5), 0);
		assert_int_equal(profile__add(p, s2, ARRAY_SIZE(s2) - !wall, 3), 0);
		assert_int_equal(profile__add(p, s3, ARRAY_SIZE(s3) - !wall, 2), 0);
		assert_int_equal(profile__add(p, s4, ARRAY_SIZE(s4) - !wall, 7), 0);
		assert_int_equal(profile__add(p, s5, ARRAY_SIZE(s5) - !wall, 1), 0);
		assert_int_equal(profile__add(p, s6, ARRAY_SIZE(s6) - !wall, 4), 0);
	}
	return p;
}

static const struct output_meta cpu_meta = {
	.title = "CPU profile",
	.duration_s = 2.5,
	.frequency_hz = 100,
	.event = "cpu",
	.start_unix_ns = 1700000000123456789,
};
static const struct output_meta wall_meta = {
	.unit = "microseconds",
	.duration_s = 3,
	.frequency_hz = 99,
	.event = "wall",
	.start_unix_ns = 1700000000000000000,
};

static ORequest *decoded(const struct profile *p, const struct output_meta *meta)
{
	size_t len;
	char *data = written(OUTPUT_OTLP, p, meta, 0, &len);
	ORequest *req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, (const uint8_t *)data);

	assert_non_null(req);
	free(data);
	return req;
}

static const char *string_at(const ODictionary *d, int32_t i)
{
	assert_true(i >= 0 && (size_t)i < d->n_string_table);
	return d->string_table[i];
}

/* The resource attribute key's value as text ("" when absent). */
static void resource_value(const Opentelemetry__Proto__Resource__V1__Resource *r, const char *key, char *out,
			   size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; r && i < r->n_attributes; i++) {
		const OKeyValue *kv = r->attributes[i];

		if (strcmp(kv->key, key))
			continue;
		if (kv->value->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
			snprintf(out, size, "%" PRId64, kv->value->int_value);
		else
			snprintf(out, size, "%s", kv->value->string_value);
	}
}

/* Every dictionary table begins with its zero entry. */
static void assert_zero_entries(const ODictionary *d)
{
	assert_true(d->n_string_table > 0 && !strcmp(d->string_table[0], ""));
	assert_true(d->n_mapping_table > 0 && !d->mapping_table[0]->filename_strindex &&
		    !d->mapping_table[0]->n_attribute_indices);
	assert_true(d->n_location_table > 0 && !d->location_table[0]->n_lines &&
		    !d->location_table[0]->mapping_index);
	assert_true(d->n_function_table > 0 && !d->function_table[0]->name_strindex);
	assert_true(d->n_link_table > 0 && !d->link_table[0]->trace_id.len);
	assert_true(d->n_attribute_table > 0 && !d->attribute_table[0]->key_strindex);
	assert_true(d->n_stack_table > 0 && !d->stack_table[0]->n_location_indices);
}

/* A sample's attribute key, as text ("" when absent). */
static void sample_value(const ODictionary *d, const OSample *s, const char *key, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; i < s->n_attribute_indices; i++) {
		int32_t a = s->attribute_indices[i];

		assert_true(a > 0 && (size_t)a < d->n_attribute_table);
		if (strcmp(string_at(d, d->attribute_table[a]->key_strindex), key))
			continue;
		if (d->attribute_table[a]->value->value_case ==
		    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
			snprintf(out, size, "%" PRId64, d->attribute_table[a]->value->int_value);
		else
			snprintf(out, size, "%s", string_at(d, d->attribute_table[a]->value->string_value_strindex));
	}
}

/*
 * Each sample of profile t read back as a line: its resource's service and
 * pid, thread name and id, frames root first by their system names (with
 * their frame types), state, and value; sorted into one text.
 */
static char *samples_text(const ORequest *req, size_t t)
{
	const ODictionary *d = req->dictionary;
	char **lines = NULL, *text;
	size_t n = 0;

	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		char service[128], pid[32];
		const OProfile *p;

		resource_value(req->resource_profiles[r]->resource, "service.name", service, sizeof(service));
		resource_value(req->resource_profiles[r]->resource, "process.pid", pid, sizeof(pid));
		assert_int_equal(req->resource_profiles[r]->n_scope_profiles, 1);
		assert_string_equal(req->resource_profiles[r]->scope_profiles[0]->scope->name, "jbpfprof");
		assert_true(t < req->resource_profiles[r]->scope_profiles[0]->n_profiles);
		p = req->resource_profiles[r]->scope_profiles[0]->profiles[t];
		for (size_t i = 0; i < p->n_samples; i++) {
			const OSample *s = p->samples[i];
			const Opentelemetry__Proto__Profiles__V1development__Stack *st;
			char thread[64], tid[32], state[32];
			size_t len = 0;
			FILE *out;

			assert_true(s->stack_index > 0 && (size_t)s->stack_index < d->n_stack_table);
			assert_int_equal(s->n_values, 1);
			st = d->stack_table[s->stack_index];
			sample_value(d, s, "thread.name", thread, sizeof(thread));
			sample_value(d, s, "thread.id", tid, sizeof(tid));
			sample_value(d, s, "state", state, sizeof(state));
			lines = realloc(lines, (n + 1) * sizeof(*lines));
			assert_non_null(lines);
			out = open_memstream(&lines[n], &len);
			assert_non_null(out);
			fprintf(out, "%s/%s|%s/%s|", service, pid, thread, tid);
			/* Leaf first in the stack: printed root first. */
			for (size_t k = st->n_location_indices; k-- > 0;) {
				int32_t li = st->location_indices[k];
				const Opentelemetry__Proto__Profiles__V1development__Location *loc;
				const Opentelemetry__Proto__Profiles__V1development__Function *fn;
				char type[16] = "-";

				assert_true(li > 0 && (size_t)li < d->n_location_table);
				loc = d->location_table[li];
				assert_int_equal(loc->n_lines, 1);
				assert_true(loc->mapping_index > 0 && (size_t)loc->mapping_index < d->n_mapping_table);
				assert_true(loc->lines[0]->function_index > 0 &&
					    (size_t)loc->lines[0]->function_index < d->n_function_table);
				fn = d->function_table[loc->lines[0]->function_index];
				if (loc->n_attribute_indices)
					snprintf(type, sizeof(type), "%s",
						 string_at(d, d->attribute_table[loc->attribute_indices[0]]
								      ->value->string_value_strindex));
				fprintf(out, "%s(%s,%s,%s);", string_at(d, fn->system_name_strindex),
					string_at(d, fn->name_strindex), type,
					string_at(d, d->mapping_table[loc->mapping_index]->filename_strindex));
			}
			fprintf(out, "|%s %" PRId64, state, s->values[0]);
			assert_int_equal(fclose(out), 0);
			n++;
		}
	}
	text = sorted_text(lines, n);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	return text;
}

static void cpu_profile_holds_the_stacks_and_values(void **state)
{
	struct profile *p = made(false);
	ORequest *req = decoded(p, &cpu_meta);
	const ODictionary *d = req->dictionary;
	static const char *const counts[] = {
		"org.example.Main/12|worker/43|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.baz_[i](Foo.baz,jvm,[java inlined]);read_[k](read,kernel,[kernel.kallsyms]);| 5",
		"org.example.Main/12|worker/43|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.qux_[0](Foo.qux,jvm,[java interpreted]);| 3",
		"org.example.Main/12|main/12|main(main,native,/usr/bin/app);Interpreter(Interpreter,native,[jit]);| 2",
		"org.example.Main/12|main/12|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.baz_[i](Foo.baz,jvm,[java inlined]);read_[k](read,kernel,[kernel.kallsyms]);| 4",
		"cron/13|cron/13|main(main,native,/usr/bin/app);read_[k](read,kernel,[kernel.kallsyms]);| 7",
		"/|/|[no user stack]([no user stack],-,[jbpfprof]);| 1",
	};
	char *want = lines_text(counts, ARRAY_SIZE(counts)), *got = samples_text(req, 0), *want_ns, *got_ns;
	const char *ns[ARRAY_SIZE(counts)];
	char buf[ARRAY_SIZE(counts)][512];

	assert_zero_entries(d);
	assert_string_equal(got, want);
	/* The second profile: the same samples, each count times the period (10 ms at 100 Hz). */
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		const char *space = strrchr(counts[i], ' ');

		snprintf(buf[i], sizeof(buf[i]), "%.*s %lld", (int)(space - counts[i]), counts[i],
			 atoll(space + 1) * 10000000ll);
		ns[i] = buf[i];
	}
	want_ns = lines_text(ns, ARRAY_SIZE(ns));
	got_ns = samples_text(req, 1);
	assert_string_equal(got_ns, want_ns);
	/* Types, period and time, as pprof.c has them. */
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const OProfile *p0 = req->resource_profiles[r]->scope_profiles[0]->profiles[0];
		const OProfile *p1 = req->resource_profiles[r]->scope_profiles[0]->profiles[1];

		assert_string_equal(string_at(d, p0->sample_type->type_strindex), "samples");
		assert_string_equal(string_at(d, p0->sample_type->unit_strindex), "count");
		assert_string_equal(string_at(d, p1->sample_type->type_strindex), "cpu");
		assert_string_equal(string_at(d, p1->sample_type->unit_strindex), "nanoseconds");
		assert_string_equal(string_at(d, p0->period_type->type_strindex), "cpu");
		assert_int_equal(p0->period, 10000000);
		assert_int_equal(p0->time_unix_nano, 1700000000123456789ull);
		assert_int_equal(p0->duration_nano, 2500000000ull);
	}
	/* Two stacks of the same code in two threads share one stack entry: five distinct, and the zero one. */
	assert_int_equal(d->n_stack_table, 6);
	free(want);
	free(got);
	free(want_ns);
	free(got_ns);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	profile__free(p);
}

static void resources_are_the_processes(void **state)
{
	struct profile *p = made(false);
	ORequest *req = decoded(p, &cpu_meta);
	size_t seen = 0;

	/* The two processes, and the stacks without one. */
	assert_int_equal(req->n_resource_profiles, 3);
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Resource__V1__Resource *res = req->resource_profiles[r]->resource;
		char service[128], exe[64], pid[32], container[80];

		resource_value(res, "service.name", service, sizeof(service));
		resource_value(res, "process.executable.name", exe, sizeof(exe));
		resource_value(res, "process.pid", pid, sizeof(pid));
		resource_value(res, "container.id", container, sizeof(container));
		if (!strcmp(pid, "12")) {
			assert_string_equal(service, "org.example.Main");
			assert_string_equal(exe, "java");
			assert_string_equal(container, ID64);
			seen |= 1;
		} else if (!strcmp(pid, "13")) {
			assert_string_equal(service, "cron");
			assert_string_equal(exe, "cron");
			assert_string_equal(container, "");
			seen |= 2;
		} else {
			assert_string_equal(service, "");
			assert_true(!res || !res->n_attributes);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	profile__free(p);
}

/* A wall profile: one sample type in nanoseconds (counts are microseconds), states as attributes. */
static void wall_profile_has_states_and_nanoseconds(void **state)
{
	struct profile *p = made(true);
	ORequest *req = decoded(p, &wall_meta);
	static const char *const lines[] = {
		"org.example.Main/12|worker/43|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.baz_[i](Foo.baz,jvm,[java inlined]);read_[k](read,kernel,[kernel.kallsyms]);|sleeping 5000",
		"org.example.Main/12|worker/43|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.qux_[0](Foo.qux,jvm,[java interpreted]);|running 3000",
		"org.example.Main/12|main/12|main(main,native,/usr/bin/app);Interpreter(Interpreter,native,[jit]);"
		"|running 2000",
		"org.example.Main/12|main/12|main(main,native,/usr/bin/app);Foo.bar_[j](Foo.bar,jvm,[java compiled]);"
		"Foo.baz_[i](Foo.baz,jvm,[java inlined]);read_[k](read,kernel,[kernel.kallsyms]);|sleeping 4000",
		"cron/13|cron/13|main(main,native,/usr/bin/app);read_[k](read,kernel,[kernel.kallsyms]);|sleeping 7000",
		"/|/|[no user stack]([no user stack],-,[jbpfprof]);|running 1000",
	};
	char *want = lines_text(lines, ARRAY_SIZE(lines)), *got = samples_text(req, 0);
	const OProfile *p0 = req->resource_profiles[0]->scope_profiles[0]->profiles[0];

	assert_string_equal(got, want);
	assert_int_equal(req->resource_profiles[0]->scope_profiles[0]->n_profiles, 1);
	assert_string_equal(string_at(req->dictionary, p0->sample_type->type_strindex), "wall");
	assert_string_equal(string_at(req->dictionary, p0->sample_type->unit_strindex), "nanoseconds");
	free(want);
	free(got);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	profile__free(p);
}

/* The native frame's file carries its build-id. */
static void native_mapping_has_its_build_id(void **state)
{
	struct profile *p = made(false);
	ORequest *req = decoded(p, &cpu_meta);
	const ODictionary *d = req->dictionary;
	int found = 0;

	for (size_t i = 1; i < d->n_mapping_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Mapping *m = d->mapping_table[i];

		if (strcmp(string_at(d, m->filename_strindex), "/usr/bin/app"))
			continue;
		assert_int_equal(m->n_attribute_indices, 1);
		assert_string_equal(string_at(d, d->attribute_table[m->attribute_indices[0]]->key_strindex),
				    "process.executable.build_id.gnu");
		assert_string_equal(string_at(d, d->attribute_table[m->attribute_indices[0]]->value->string_value_strindex),
				    "abcdef01");
		found++;
	}
	assert_int_equal(found, 1);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	profile__free(p);
}

/* An empty profile is a valid request with no resources, its dictionary still begun. */
static void empty_profile(void **state)
{
	struct profile *p = profile__new(NULL);
	ORequest *req = decoded(p, NULL);

	assert_int_equal(req->n_resource_profiles, 0);
	assert_zero_entries(req->dictionary);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req,
														   NULL);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_profile_holds_the_stacks_and_values),
		cmocka_unit_test(resources_are_the_processes),
		cmocka_unit_test(wall_profile_has_states_and_nanoseconds),
		cmocka_unit_test(native_mapping_has_its_build_id),
		cmocka_unit_test(empty_profile),
	};

	return cmocka_run_group_tests_name("otlp", tests, NULL, NULL);
}
