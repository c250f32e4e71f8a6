/*
 * Unit tests for output/pprof.c and input/pprof_read.c: a profile written
 * and read back, the pprof message itself, the reader on corrupt input.
 * Hand-built messages, for each error the reader names, are
 * test_pprof_hand.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "pprof_fixture.h"
#include "profile_fixture.h"

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "output/output.h"
#include "proto/profile.pb-c.h"
#include "input/pprof_read.h"
#include "profile/view.h"
#include "profile/profile.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the recordings written --------------------------------------------------- */

struct frame_spec {
	const char *name;
	enum frame_kind kind;
	int64_t number;  /* as frame_ok takes it */
};

/* One stack of a full profile and the labels its root and state frames stand for. */
struct stack_spec {
	struct frame_spec frames[9];  /* root first; ends at a NULL name */
	uint64_t count;               /* distinct within a table: it tells the samples apart */
	const char *process, *thread, *state;
	int64_t pid, tid;
};

#define APP { "app", FRAME_KIND_PROCESS, 42 }
#define DB { "db", FRAME_KIND_PROCESS, 7 }
#define T43 { "worker", FRAME_KIND_THREAD, 43 }
#define T44 { "worker", FRAME_KIND_THREAD, 44 }
#define DB_MAIN { "db main", FRAME_KIND_THREAD, 7 }
#define MAIN { "main", FRAME_KIND_NATIVE, 0 }
#define BAR { "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, 0 }
#define BAZ { "Foo.baz_[i]", FRAME_KIND_JAVA_INLINED, 0 }
#define QUX { "Foo.qux_[0]", FRAME_KIND_JAVA_INTERP, 0 }
#define PLAIN { "Foo.plain", FRAME_KIND_JAVA, 0 }
#define STUB { "Interpreter", FRAME_KIND_JIT, 0 }
#define READ { "read_[k]", FRAME_KIND_KERNEL, 0 }
#define LOST { "[no user stack]", FRAME_KIND_LOST, 0 }
#define STATE(s) { #s, FRAME_KIND_STATE, JBPF_STATE_##s }

/* cpu: counts are samples. */
static const struct stack_spec cpu_stacks[] = {
	{ { APP, T43, MAIN, BAR, BAZ, READ }, 5, "app", "worker", NULL, 42, 43 },
	{ { APP, T43, MAIN, BAR, QUX }, 3, "app", "worker", NULL, 42, 43 },
	{ { APP, T44, MAIN, STUB, PLAIN }, 2, "app", "worker", NULL, 42, 44 },
	{ { APP, T43, LOST }, 1, "app", "worker", NULL, 42, 43 },
	{ { DB, DB_MAIN, MAIN }, 4, "db", "db main", NULL, 7, 7 },
};

/* wall: counts are microseconds; every stack ends in its state. */
static const struct stack_spec wall_stacks[] = {
	{ { APP, T43, MAIN, BAR, BAZ, READ, STATE(SLEEPING) }, 1500000, "app", "worker", "sleeping", 42, 43 },
	{ { APP, T43, MAIN, BAR, QUX, STATE(RUNNING) }, 250, "app", "worker", "running", 42, 43 },
	{ { APP, T44, MAIN, STUB, PLAIN, STATE(RUNNABLE) }, 3, "app", "worker", "runnable", 42, 44 },
	{ { APP, T43, LOST, STATE(BLOCKED) }, 999, "app", "worker", "blocked", 42, 43 },
	{ { DB, DB_MAIN, MAIN, STATE(SLEEPING) }, 12, "db", "db main", "sleeping", 7, 7 },
};

/* What the format says a code frame of each kind becomes: its mapping, the suffix its name loses. */
static const struct {
	const char *mapping, *suffix;
} code_kinds[FRAME_KIND_NR] = {
	[FRAME_KIND_NATIVE] = { "[native]", "" },
	[FRAME_KIND_KERNEL] = { "[kernel.kallsyms]", "_[k]" },
	[FRAME_KIND_JIT] = { "[jit]", "" },
	[FRAME_KIND_JAVA] = { "[java]", "" },
	[FRAME_KIND_JAVA_INLINED] = { "[java inlined]", "_[i]" },
	[FRAME_KIND_JAVA_INTERP] = { "[java interpreted]", "_[0]" },
	[FRAME_KIND_JAVA_COMPILED] = { "[java compiled]", "_[j]" },
	[FRAME_KIND_LOST] = { "[jbpfprof]", "" },
};

static struct profile *profile_of(const struct stack_spec *stacks, size_t n)
{
	struct profile *p = profile__new(NULL);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		uint32_t ids[ARRAY_SIZE(stacks[i].frames)];
		size_t depth = 0;

		for (; stacks[i].frames[depth].name; depth++)
			ids[depth] = frame_ok(p, stacks[i].frames[depth].name, stacks[i].frames[depth].kind,
					      stacks[i].frames[depth].number);
		assert_int_equal(profile__add(p, ids, depth, stacks[i].count), 0);
	}
	return p;
}

static const struct output_meta cpu_meta = {
	.title = "CPU profile of app",
	.duration_s = 2.5,
	.frequency_hz = 99,
	.summary = "15 samples, 0 lost",
	.event = "cpu",
	.start_unix_ns = 1700000000123456789,
	.process_roots = "pid",
};

static const struct output_meta wall_meta = {
	.title = "Wall-clock profile of app",
	.duration_s = 10.25,
	.frequency_hz = 99,
	.summary = "all threads, 3 short waits not sampled",
	.event = "wall",
	.start_unix_ns = 1700000000000000000,
	.process_roots = "pid",
};

/* The pprof file of p, as bytes; the caller frees them. */
static uint8_t *write_pprof(const struct profile *p, const struct output_meta *meta, size_t *len)
{
	return (uint8_t *)written(OUTPUT_PPROF, p, meta, 0, len);
}

static uint8_t *written_file(const struct stack_spec *stacks, size_t n, const struct output_meta *meta, size_t *len)
{
	struct profile *p = profile_of(stacks, n);
	uint8_t *data = write_pprof(p, meta, len);

	profile__free(p);
	return data;
}

/* ---- written, then read back ------------------------------------------------- */

static void read_ok(const uint8_t *data, size_t len, struct pprof_recording *rec)
{
	char err[256] = "";

	if (pprof_read__buffer(data, len, rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
}

static void assert_same_stacks(const struct profile *want, const struct profile *got)
{
	char *a = profile_text(want), *b = profile_text(got);

	assert_string_equal(b, a);
	free(a);
	free(b);
}

static void check_round_trip(const struct stack_spec *stacks, size_t n, const struct output_meta *meta,
			     bool time_weights, bool has_states)
{
	struct profile *p = profile_of(stacks, n);
	size_t len;
	uint8_t *data = write_pprof(p, meta, &len);
	struct pprof_recording rec;

	read_ok(data, len, &rec);
	assert_same_stacks(p, rec.profile);
	assert_string_equal(rec.event, meta->event);
	assert_string_equal(rec.title, meta->title);
	assert_string_equal(rec.summary, meta->summary);
	assert_string_equal(rec.process_roots, meta->process_roots);
	assert_int_equal(rec.frequency_hz, meta->frequency_hz);
	assert_true(fabs(rec.duration_s - meta->duration_s) < 1e-9);
	assert_int_equal(rec.start_unix_ns, meta->start_unix_ns);
	assert_int_equal(rec.time_weights, time_weights);
	assert_int_equal(rec.has_states, has_states);
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

static void cpu_profile_reads_back_as_written(void **state)
{
	check_round_trip(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, false, false);
}

static void wall_profile_reads_back_as_written(void **state)
{
	check_round_trip(wall_stacks, ARRAY_SIZE(wall_stacks), &wall_meta, true, true);
}

/* What a view leaves in a profile (no thread frames, process names alone) reads back as it was. */
static void profile_without_thread_frames_reads_back(void **state)
{
	static const struct stack_spec stacks[] = {
		{ .frames = { { "app", FRAME_KIND_PROCESS, -1 }, MAIN, BAR }, .count = 6 },
		{ .frames = { MAIN, READ }, .count = 2 },
	};
	struct output_meta meta = cpu_meta;

	meta.process_roots = "name";
	check_round_trip(stacks, ARRAY_SIZE(stacks), &meta, false, false);
}

/*
 * A stack counted 1000 times, one sample a tick over ticks 0..999, and
 * another over 1000..1999: each span's part of the count survives the file,
 * so ticks 100..399 read back as 300 of the first stack. (A count of 1000
 * was once shared out in units of 1000, as a time in ns is: the whole count
 * landed on the stack's last span.)
 */
static void spans_keep_their_part_of_a_round_count(void **state)
{
	struct profile *p = profile__new(NULL), *cut = profile__new(NULL);
	uint32_t a, b, index;
	struct pprof_recording rec;
	uint8_t *data;
	size_t len;
	int found = 0;

	(void)state;
	assert_non_null(p);
	assert_non_null(cut);
	a = (uint32_t)profile__intern(p, "a", FRAME_KIND_NATIVE);
	b = (uint32_t)profile__intern(p, "b", FRAME_KIND_NATIVE);
	for (uint32_t tick = 0; tick < 2000; tick++) {
		assert_int_equal(profile__add_indexed(p, tick < 1000 ? &a : &b, 1, 1, &index), 0);
		assert_int_equal(profile__add_span(p, index, tick, tick, 1), 0);
	}
	data = write_pprof(p, &cpu_meta, &len);
	read_ok(data, len, &rec);
	assert_int_equal(view__apply(rec.profile, &(struct view_config){ .time_range = true, .from_tick = 100,
									  .to_tick = 400 },
				     cut, NULL),
			 0);
	for (size_t i = 0; i < profile__stack_count(cut); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(cut, i, &depth, &count);

		if (!strcmp(profile__frame_name(cut, frames[depth - 1]), "a")) {
			assert_int_equal(count, 300);
			found = 1;
		} else {
			assert_int_equal(count, 0);
		}
	}
	assert_true(found);
	pprof_recording__free(&rec);
	free(data);
	profile__free(cut);
	profile__free(p);
}

static void empty_profile_reads_back_empty(void **state)
{
	struct profile *p = profile__new(NULL);
	size_t len;
	uint8_t *data;
	struct pprof_recording rec;

	assert_non_null(p);
	data = write_pprof(p, &cpu_meta, &len);
	read_ok(data, len, &rec);
	assert_int_equal(profile__stack_count(rec.profile), 0);
	assert_string_equal(rec.event, "cpu");
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

/* ---- the message itself ------------------------------------------------------- */

static const PLocation *location_of(const PProfile *msg, uint64_t id)
{
	for (size_t i = 0; i < msg->n_location; i++)
		if (msg->location[i]->id == id)
			return msg->location[i];
	fail_msg("no location %" PRIu64, id);
	return NULL;
}

static const PFunction *function_of(const PProfile *msg, uint64_t id)
{
	for (size_t i = 0; i < msg->n_function; i++)
		if (msg->function[i]->id == id)
			return msg->function[i];
	fail_msg("no function %" PRIu64, id);
	return NULL;
}

static const PMapping *mapping_of(const PProfile *msg, uint64_t id)
{
	for (size_t i = 0; i < msg->n_mapping; i++)
		if (msg->mapping[i]->id == id)
			return msg->mapping[i];
	fail_msg("no mapping %" PRIu64, id);
	return NULL;
}

/* The sample's one label with this key, or NULL. */
static const PLabel *label_of(const PProfile *msg, const PSample *s, const char *key)
{
	const PLabel *found = NULL;

	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(string_of(msg, s->label[i]->key), key)) {
			assert_null(found);
			found = s->label[i];
		}
	return found;
}

static void assert_string_label(const PProfile *msg, const PSample *s, const char *key, const char *value)
{
	const PLabel *l = label_of(msg, s, key);

	if (!value) {
		assert_null(l);
		return;
	}
	assert_non_null(l);
	assert_string_equal(string_of(msg, l->str), value);
	assert_int_equal(l->num, 0);
}

static void assert_number_label(const PProfile *msg, const PSample *s, const char *key, int64_t value)
{
	const PLabel *l = label_of(msg, s, key);

	assert_non_null(l);
	assert_int_equal(l->str, 0);
	assert_int_equal(l->num, value);
}

static void assert_value_type(const PProfile *msg, const PValueType *t, const char *type, const char *unit)
{
	assert_non_null(t);
	assert_string_equal(string_of(msg, t->type), type);
	assert_string_equal(string_of(msg, t->unit), unit);
}

/* The sample's code frames, leaf first, are the spec's code frames reversed, each as the format says. */
static void assert_locations(const PProfile *msg, const PSample *s, const struct stack_spec *spec)
{
	size_t depth = 0, n = 0;

	while (spec->frames[depth].name)
		depth++;
	for (size_t k = depth; k-- > 0;) {
		const struct frame_spec *f = &spec->frames[k];
		const PLocation *loc;
		const PFunction *fn;
		size_t name_len = strlen(f->name);

		if (!code_kinds[f->kind].mapping)
			continue;
		assert_true(n < s->n_location_id);
		loc = location_of(msg, s->location_id[n++]);
		assert_int_equal(loc->n_line, 1);
		fn = function_of(msg, loc->line[0]->function_id);
		assert_string_equal(string_of(msg, fn->system_name), f->name);
		name_len -= strlen(code_kinds[f->kind].suffix);
		assert_int_equal(strlen(string_of(msg, fn->name)), name_len);
		assert_memory_equal(string_of(msg, fn->name), f->name, name_len);
		assert_string_equal(string_of(msg, mapping_of(msg, loc->mapping_id)->filename),
				    code_kinds[f->kind].mapping);
	}
	assert_int_equal(s->n_location_id, n);
}

/* One mapping per kind of code frame the stacks have. */
static size_t code_kinds_used(const struct stack_spec *stacks, size_t n)
{
	bool used[FRAME_KIND_NR] = { false };
	size_t nr = 0;

	for (size_t i = 0; i < n; i++)
		for (const struct frame_spec *f = stacks[i].frames; f->name; f++)
			if (code_kinds[f->kind].mapping && !used[f->kind]) {
				used[f->kind] = true;
				nr++;
			}
	return nr;
}

static void check_message(const struct stack_spec *stacks, size_t n, const struct output_meta *meta,
			  bool time_weights)
{
	int64_t period_ns = 1000000000 / meta->frequency_hz;
	size_t len;
	uint8_t *data = written_file(stacks, n, meta, &len);
	PProfile *msg = decode(data, len);

	assert_string_equal(string_of(msg, 0), "");
	if (time_weights) {
		assert_int_equal(msg->n_sample_type, 1);
		assert_value_type(msg, msg->sample_type[0], meta->event, "nanoseconds");
	} else {
		assert_int_equal(msg->n_sample_type, 2);
		assert_value_type(msg, msg->sample_type[0], "samples", "count");
		assert_value_type(msg, msg->sample_type[1], "cpu", "nanoseconds");
	}
	assert_value_type(msg, msg->period_type, time_weights ? "wall" : "cpu", "nanoseconds");
	assert_int_equal(msg->period, period_ns);
	assert_int_equal(msg->duration_nanos, (int64_t)(meta->duration_s * 1e9));
	assert_int_equal(msg->time_nanos, meta->start_unix_ns);
	assert_int_equal(msg->n_mapping, code_kinds_used(stacks, n));

	assert_int_equal(msg->n_sample, n);
	for (size_t i = 0; i < msg->n_sample; i++) {
		const PSample *s = msg->sample[i];
		const struct stack_spec *spec = NULL;
		uint64_t count;

		assert_int_equal(s->n_value, msg->n_sample_type);
		count = time_weights ? (uint64_t)s->value[0] / 1000 : (uint64_t)s->value[0];
		for (size_t j = 0; j < n; j++)
			if (stacks[j].count == count)
				spec = &stacks[j];
		if (!spec)
			fail_msg("sample %zu has value %" PRId64 ", which no stack counts", i, s->value[0]);
		if (time_weights) {
			assert_int_equal(s->value[0], spec->count * 1000);
		} else {
			assert_int_equal(s->value[0], spec->count);
			assert_int_equal(s->value[1], spec->count * period_ns);
		}
		assert_string_label(msg, s, "process", spec->process);
		assert_number_label(msg, s, "pid", spec->pid);
		assert_string_label(msg, s, "thread", spec->thread);
		assert_number_label(msg, s, "tid", spec->tid);
		assert_string_label(msg, s, "state", spec->state);
		assert_locations(msg, s, spec);
	}
	perftools__profiles__profile__free_unpacked(msg, NULL);
	free(data);
}

/*
 * A process frame's parts (program, container) travel as labels and come
 * back as the same frame, so a later view can group by them; a frame with
 * no program names its service by its name.
 */
static void process_parts_travel_as_labels(void **state)
{
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const struct process_parts parts[] = {
		{ .name = "java", .program = "com.example.Main", .container = id, .pid = 12 },
		{ .name = "cron", .pid = 13 },
	};
	struct profile *p = profile__new(NULL);
	struct pprof_recording rec;
	struct process_parts back;
	size_t len;
	uint8_t *data;
	PProfile *msg;

	assert_non_null(p);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		int64_t process = profile__intern_process_parts(p, &parts[i]);
		int64_t code = profile__intern(p, "main", FRAME_KIND_NATIVE);
		uint32_t ids[2] = { (uint32_t)process, (uint32_t)code };

		assert_true(process >= 0 && code >= 0);
		assert_int_equal(profile__add(p, ids, 2, i + 1), 0);
	}
	data = write_pprof(p, &cpu_meta, &len);
	msg = decode(data, len);
	assert_int_equal(msg->n_sample, 2);
	for (size_t i = 0; i < msg->n_sample; i++) {
		const PSample *s = msg->sample[i];
		const struct process_parts *want = &parts[s->value[0] - 1];

		assert_string_label(msg, s, "process", want->name);
		assert_number_label(msg, s, "pid", want->pid);
		assert_string_label(msg, s, "service_name", want->program ? want->program : want->name);
		assert_string_label(msg, s, "container_id", want->container);
	}
	perftools__profiles__profile__free_unpacked(msg, NULL);

	read_ok(data, len, &rec);
	assert_same_stacks(p, rec.profile);
	for (size_t i = 0; i < profile__frame_count(rec.profile); i++) {
		if (profile__frame_kind(rec.profile, (uint32_t)i) != FRAME_KIND_PROCESS)
			continue;
		profile__process_parts(rec.profile, (uint32_t)i, &back);
		if (back.pid == 12) {
			assert_string_equal(back.program, "com.example.Main");
			assert_string_equal(back.container, id);
		} else {
			assert_int_equal(back.pid, 13);
			assert_null(back.program);
			assert_null(back.container);
		}
		assert_string_equal(back.name, back.pid == 12 ? "java" : "cron");
	}
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

/*
 * A Java frame's line goes into its location's line and its class's file
 * into its function's filename; read back, the frames have them again (no
 * bytecode index: pprof has no field for it), and frames without a
 * position none.
 */
static void java_lines_and_files_travel(void **state)
{
	const struct frame_position at = { 23, 9, "Foo.java" }, other = { 31, 40, "Foo.java" };
	struct profile *p = profile__new(NULL);
	struct pprof_recording rec;
	int64_t native, bar23, bar31;
	size_t len, with_line = 0;
	uint8_t *data;
	PProfile *msg;

	(void)state;
	assert_non_null(p);
	native = profile__intern(p, "main", FRAME_KIND_NATIVE);
	bar23 = profile__intern_at(p, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at);
	bar31 = profile__intern_at(p, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &other);
	assert_true(native >= 0 && bar23 >= 0 && bar31 >= 0 && bar23 != bar31);
	assert_int_equal(profile__add(p, (uint32_t[]){ (uint32_t)native, (uint32_t)bar23 }, 2, 2), 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ (uint32_t)native, (uint32_t)bar31 }, 2, 3), 0);
	data = write_pprof(p, &cpu_meta, &len);
	msg = decode(data, len);
	for (size_t i = 0; i < msg->n_location; i++) {
		const PLocation *loc = msg->location[i];
		const PFunction *fn = function_of(msg, loc->line[0]->function_id);

		if (strcmp(msg->string_table[fn->name], "Foo.bar"))
			continue;
		assert_string_equal(msg->string_table[fn->filename], "Foo.java");
		assert_true(loc->line[0]->line == 23 || loc->line[0]->line == 31);
		with_line++;
	}
	assert_int_equal(with_line, 2);
	perftools__profiles__profile__free_unpacked(msg, NULL);

	read_ok(data, len, &rec);
	with_line = 0;
	for (uint32_t f = 0; f < profile__frame_count(rec.profile); f++) {
		struct frame_position pos = profile__frame_position(rec.profile, f);

		if (profile__frame_kind(rec.profile, f) != FRAME_KIND_JAVA_COMPILED) {
			assert_int_equal(pos.line, 0);
			continue;
		}
		assert_string_equal(profile__frame_name(rec.profile, f), "Foo.bar_[j]");
		assert_true(pos.line == 23 || pos.line == 31);
		assert_int_equal(pos.bci, -1);
		assert_string_equal(pos.file, "Foo.java");
		with_line++;
	}
	assert_int_equal(with_line, 2);
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

static void cpu_message_has_samples_and_cpu_time(void **state)
{
	check_message(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, false);
}

static void wall_message_has_nanoseconds_and_states(void **state)
{
	check_message(wall_stacks, ARRAY_SIZE(wall_stacks), &wall_meta, true);
}

static bool has_comment(const PProfile *msg, const char *text)
{
	for (size_t i = 0; i < msg->n_comment; i++)
		if (!strcmp(string_of(msg, msg->comment[i]), text))
			return true;
	return false;
}

static void message_comments_describe_the_recording(void **state)
{
	size_t len;
	uint8_t *data = written_file(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, &len);
	PProfile *msg = decode(data, len);
	char line[256];

	snprintf(line, sizeof(line), "event: %s", cpu_meta.event);
	assert_true(has_comment(msg, line));
	snprintf(line, sizeof(line), "title: %s", cpu_meta.title);
	assert_true(has_comment(msg, line));
	snprintf(line, sizeof(line), "summary: %s", cpu_meta.summary);
	assert_true(has_comment(msg, line));
	snprintf(line, sizeof(line), "frequency: %u Hz", cpu_meta.frequency_hz);
	assert_true(has_comment(msg, line));
	snprintf(line, sizeof(line), "process roots: %s", cpu_meta.process_roots);
	assert_true(has_comment(msg, line));
	perftools__profiles__profile__free_unpacked(msg, NULL);
	free(data);
}

/* ---- corrupt input -------------------------------------------------------------- */

/*
 * Reads data and checks the outcome is one the contract allows: 0 with a
 * recording, or -1 with a one-line reason and nothing left to free.
 */
static int read_any(const uint8_t *data, size_t len)
{
	struct pprof_recording rec;
	char err[256];
	int ret;

	err[0] = '\0';
	ret = pprof_read__buffer(data, len, &rec, err, sizeof(err));
	if (ret == 0) {
		assert_non_null(rec.profile);
		assert_non_null(rec.event);
	} else {
		assert_int_equal(ret, -1);
		assert_true(err[0] != '\0');
		if (strchr(err, '\n'))
			fail_msg("reason on more than one line: %s", err);
		assert_null(rec.profile);
	}
	pprof_recording__free(&rec);
	return ret;
}

static void every_truncation_of_the_gzip_file_fails(void **state)
{
	size_t len;
	uint8_t *data = written_file(wall_stacks, ARRAY_SIZE(wall_stacks), &wall_meta, &len);

	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		/* A copy of exactly cut bytes, so that ASan sees a read past the end. */
		assert_non_null(copy);
		memcpy(copy, data, cut);
		if (read_any(copy, cut) != -1)
			fail_msg("the first %zu of %zu bytes read as a profile", cut, len);
		free(copy);
	}
	assert_int_equal(read_any(data, len), 0);
	free(data);
}

static void every_truncation_of_the_plain_message_reads_or_fails(void **state)
{
	size_t gz_len, len;
	uint8_t *gz = written_file(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, &gz_len);
	uint8_t *plain = gunzip(gz, gz_len, &len);

	for (size_t cut = 0; cut <= len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);

		assert_non_null(copy);
		memcpy(copy, plain, cut);
		read_any(copy, cut);
		free(copy);
	}
	assert_int_equal(read_any(plain, len), 0);
	free(plain);
	free(gz);
}

enum { FLIPPED_BYTES = 512 };

static void single_bit_flips_of_the_message_read_or_fail(void **state)
{
	size_t gz_len, len;
	uint8_t *gz = written_file(wall_stacks, ARRAY_SIZE(wall_stacks), &wall_meta, &gz_len);
	uint8_t *plain = gunzip(gz, gz_len, &len);
	size_t bytes = len < FLIPPED_BYTES ? len : FLIPPED_BYTES;

	for (size_t bit = 0; bit < bytes * 8; bit++) {
		plain[bit / 8] ^= (uint8_t)(1u << bit % 8);
		read_any(plain, len);
		plain[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	/* The same flips, gzipped: the reader's gzip path, then the same message checks. */
	for (size_t bit = 0; bit < bytes * 8; bit += 7) {
		size_t flipped_len;
		uint8_t *flipped;

		plain[bit / 8] ^= (uint8_t)(1u << bit % 8);
		flipped = gzip(plain, len, &flipped_len);
		read_any(flipped, flipped_len);
		free(flipped);
		plain[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	free(plain);
	free(gz);
}

static void single_bit_flips_of_the_gzip_file_read_or_fail(void **state)
{
	size_t len;
	uint8_t *data = written_file(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, &len);

	for (size_t bit = 0; bit < len * 8; bit++) {
		data[bit / 8] ^= (uint8_t)(1u << bit % 8);
		read_any(data, len);
		data[bit / 8] ^= (uint8_t)(1u << bit % 8);
	}
	free(data);
}

static uint32_t next_random(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

static void random_bytes_read_or_fail(void **state)
{
	uint32_t seed = 20240611;
	uint8_t buf[1024];

	for (int i = 0; i < 3000; i++) {
		size_t len = next_random(&seed) % sizeof(buf);

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)next_random(&seed);
		/* Every third buffer claims to be gzip. */
		if (i % 3 == 0 && len >= 2) {
			buf[0] = 0x1f;
			buf[1] = 0x8b;
		}
		read_any(buf, len);
	}
}

/* A few bytes of a valid message replaced: the message mostly parses, and its meaning is what breaks. */
static void random_byte_changes_of_the_message_read_or_fail(void **state)
{
	size_t gz_len, len;
	uint8_t *gz = written_file(wall_stacks, ARRAY_SIZE(wall_stacks), &wall_meta, &gz_len);
	uint8_t *plain = gunzip(gz, gz_len, &len);
	uint8_t *copy = malloc(len);
	uint32_t seed = 7;

	assert_non_null(copy);
	for (int i = 0; i < 5000; i++) {
		int changes = 1 + (int)(next_random(&seed) % 4);

		memcpy(copy, plain, len);
		for (int c = 0; c < changes; c++)
			copy[next_random(&seed) % len] = (uint8_t)next_random(&seed);
		read_any(copy, len);
	}
	free(copy);
	free(plain);
	free(gz);
}

static void empty_buffer_is_refused(void **state)
{
	uint8_t none = 0;
	struct pprof_recording rec;
	char err[256] = "";

	assert_int_equal(pprof_read__buffer(&none, 0, &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a pprof profile"));
}

static void gzipped_text_is_refused_as_not_a_profile(void **state)
{
	static const char text[] = "this is not a pprof profile, only some text\n";
	size_t len;
	uint8_t *gz = gzip((const uint8_t *)text, strlen(text), &len);
	struct pprof_recording rec;
	char err[256] = "";

	assert_int_equal(pprof_read__buffer(gz, len, &rec, err, sizeof(err)), -1);
	assert_string_equal(err, "not a pprof profile (not gzip, and not a protobuf message of that shape)");
	free(gz);
}

/*
 * Millions of empty samples (two bytes each on the wire, a struct each
 * unpacked) in a few KB of gzip: refused for the memory they would take,
 * before they take it.
 */
static void gzipped_empty_samples_are_refused_for_memory(void **state)
{
	size_t raw_len = 16u << 20, len;
	uint8_t *raw = malloc(raw_len), *gz;
	struct pprof_recording rec;
	char err[256] = "";

	assert_non_null(raw);
	for (size_t i = 0; i < raw_len; i += 2) {
		raw[i] = 0x12; /* field 2 (sample), length-delimited */
		raw[i + 1] = 0;
	}
	gz = gzip(raw, raw_len, &len);
	free(raw);
	assert_true(len < 64u << 10);
	assert_int_equal(pprof_read__buffer(gz, len, &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "would take more than 64 MiB of memory"));
	assert_null(rec.profile);
	free(gz);
}

static void truncated_gzip_is_named_as_such(void **state)
{
	size_t len;
	uint8_t *data = written_file(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, &len);
	struct pprof_recording rec;
	char err[256] = "";

	assert_int_equal(pprof_read__buffer(data, len / 2, &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "truncated gzip data"));
	free(data);
}

/* ---- files ---------------------------------------------------------------------- */

static void read_from_a_file_matches_read_from_memory(void **state)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	int fd = mkstemp(path);
	size_t len;
	uint8_t *data = written_file(cpu_stacks, ARRAY_SIZE(cpu_stacks), &cpu_meta, &len);
	struct pprof_recording from_file, from_memory;
	char err[256] = "", *a, *b;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	if (pprof_read__file(path, &from_file, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	read_ok(data, len, &from_memory);
	a = profile_text(from_memory.profile);
	b = profile_text(from_file.profile);
	assert_string_equal(b, a);
	free(a);
	free(b);
	pprof_recording__free(&from_file);
	pprof_recording__free(&from_memory);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pprof_read__file(path, &from_file, err, sizeof(err)), -1);
	assert_string_equal(err, "empty file, not a pprof profile");
	unlink(path);
	assert_int_equal(pprof_read__file("/dev/null", &from_file, err, sizeof(err)), -1);
	assert_string_equal(err, "not a regular file");
	assert_int_equal(pprof_read__file(path, &from_file, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpu_profile_reads_back_as_written),
		cmocka_unit_test(process_parts_travel_as_labels),
		cmocka_unit_test(java_lines_and_files_travel),
		cmocka_unit_test(wall_profile_reads_back_as_written),
		cmocka_unit_test(profile_without_thread_frames_reads_back),
		cmocka_unit_test(spans_keep_their_part_of_a_round_count),
		cmocka_unit_test(empty_profile_reads_back_empty),
		cmocka_unit_test(cpu_message_has_samples_and_cpu_time),
		cmocka_unit_test(wall_message_has_nanoseconds_and_states),
		cmocka_unit_test(message_comments_describe_the_recording),
		cmocka_unit_test(every_truncation_of_the_gzip_file_fails),
		cmocka_unit_test(every_truncation_of_the_plain_message_reads_or_fails),
		cmocka_unit_test(single_bit_flips_of_the_message_read_or_fail),
		cmocka_unit_test(single_bit_flips_of_the_gzip_file_read_or_fail),
		cmocka_unit_test(random_bytes_read_or_fail),
		cmocka_unit_test(random_byte_changes_of_the_message_read_or_fail),
		cmocka_unit_test(empty_buffer_is_refused),
		cmocka_unit_test(gzipped_text_is_refused_as_not_a_profile),
		cmocka_unit_test(gzipped_empty_samples_are_refused_for_memory),
		cmocka_unit_test(truncated_gzip_is_named_as_such),
		cmocka_unit_test(read_from_a_file_matches_read_from_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
