/*
 * Unit tests for output/jfr.c and input/jfr_read.c together: a profile
 * written as JFR reads back as the same stacks (threads, frames and their
 * kinds, waiting states, counts); and the reader refuses, without a crash
 * or unbounded memory, every truncation and single-bit flip of such a
 * file, and what is not JFR. That the JDK's own tools read what the writer
 * writes, and that the reader reads the JDK's files, is checked in
 * tests/integration/test_jfr.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "common/clock.h"
#include "input/jfr_internal.h"
#include "input/jfr_read.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Two threads of one process; Java frames of each kind, native and kernel frames; wall stacks with states. */
static struct profile *made(bool wall)
{
	struct profile *p = profile__new(NULL);
	int64_t proc = profile__intern_process(p, "java", 12);
	uint32_t t1 = frame_ok(p, "worker", FRAME_KIND_THREAD, 43),
	         t2 = frame_ok(p, "main", FRAME_KIND_THREAD, 12);
	uint32_t start = intern_ok(p, "start_thread", FRAME_KIND_NATIVE);
	uint32_t run = intern_ok(p, "java.lang.Thread.run_[j]", FRAME_KIND_JAVA_COMPILED);
	uint32_t work = intern_ok(p, "com.example.Work.loop_[i]", FRAME_KIND_JAVA_INLINED);
	uint32_t calc = intern_ok(p, "com.example.Work.calc_[0]", FRAME_KIND_JAVA_INTERP);
	uint32_t plain = intern_ok(p, "Main.main", FRAME_KIND_JAVA);
	uint32_t read_k = intern_ok(p, "read_[k]", FRAME_KIND_KERNEL);
	uint32_t sleeping = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_SLEEPING);
	uint32_t blocked = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_BLOCKED);
	uint32_t running = frame_ok(p, NULL, FRAME_KIND_STATE, JBPF_STATE_RUNNING);

	assert_non_null(p);
	assert_true(proc >= 0);
	{
		const uint32_t s1[] = {(uint32_t)proc, t1, start, run, work, calc, running};
		const uint32_t s2[] = {(uint32_t)proc, t1, start, run, work, read_k, sleeping};
		const uint32_t s3[] = {(uint32_t)proc, t2, start, plain, blocked};
		const uint32_t s4[] = {(uint32_t)proc, t2, start, plain, calc, running};

		/* Wall counts are microseconds: at 100 Hz, 10 ms each event. */
		assert_int_equal(profile__add(p, s1, ARRAY_SIZE(s1) - !wall, wall ? 50000 : 5), 0);
		assert_int_equal(profile__add(p, s2, ARRAY_SIZE(s2) - !wall, wall ? 30000 : 3), 0);
		assert_int_equal(profile__add(p, s3, ARRAY_SIZE(s3) - !wall, wall ? 20000 : 2), 0);
		assert_int_equal(profile__add(p, s4, ARRAY_SIZE(s4) - !wall, wall ? 10000 : 1), 0);
	}
	return p;
}

static const struct output_meta cpu_meta = {
    .event = "cpu", .frequency_hz = 100, .duration_s = 2, .start_unix_ns = 1700000000000000000};
static const struct output_meta wall_meta = {.event = "wall",
                                             .unit = "microseconds",
                                             .frequency_hz = 100,
                                             .duration_s = 2,
                                             .start_unix_ns = 1700000000000000000};

static void read_back(const struct profile *p, const struct output_meta *meta, struct pprof_recording *rec)
{
	size_t len;
	char *data = written(OUTPUT_JFR, p, meta, 0, &len), err[256] = "";

	if (jfr_read__buffer((const uint8_t *)data, len, rec, err, sizeof(err)))
		fail_msg("the file written does not read back: %s", err);
	free(data);
}

static void cpu_recording_reads_back(void **state)
{
	struct profile *p = made(false);
	struct pprof_recording rec;
	/* The threads are the roots (JFR has no process), the kinds as written, no states: all ran. */
	static const char *const expected[] = {
	    "[worker tid=43]|thread;start_thread|native;java.lang.Thread.run_[j]|compiled;"
	    "com.example.Work.loop_[i]|inlined;com.example.Work.calc_[0]|interpreted 5",
	    "[worker tid=43]|thread;start_thread|native;java.lang.Thread.run_[j]|compiled;"
	    "com.example.Work.loop_[i]|inlined;read_[k]|kernel 3",
	    "[main tid=12]|thread;start_thread|native;Main.main|java 2",
	    "[main tid=12]|thread;start_thread|native;Main.main|java;com.example.Work.calc_[0]|interpreted 1",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;

	read_back(p, &cpu_meta, &rec);
	got = profile_text(rec.profile);
	assert_string_equal(got, want);
	assert_string_equal(rec.event, "cpu");
	assert_false(rec.has_states);
	assert_int_equal(rec.start_unix_ns, cpu_meta.start_unix_ns);
	free(want);
	free(got);
	pprof_recording__free(&rec);
	profile__free(p);
}

/*
 * Java frames with positions: each frame's lineNumber and bytecodeIndex,
 * read back as they were; one method of two lines is one method of the
 * file; a frame without a position (native) has none read back; a profile
 * of default-package classes alone (no package) still reads.
 */
static void lines_and_bytecode_indexes_read_back(void **state)
{
	const struct frame_position at23 = { 23, 9, "Foo.java" }, at31 = { 31, 40, "Foo.java" };
	struct profile *p = profile__new(NULL);
	struct pprof_recording rec;
	int64_t t, native, a, b;
	size_t seen = 0;

	(void)state;
	assert_non_null(p);
	t = profile__intern_thread(p, "main", 12);
	native = profile__intern(p, "start_thread", FRAME_KIND_NATIVE);
	a = profile__intern_at(p, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at23);
	b = profile__intern_at(p, "Foo.bar_[j]", FRAME_KIND_JAVA_COMPILED, &at31);
	assert_true(t >= 0 && native >= 0 && a >= 0 && b >= 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ (uint32_t)t, (uint32_t)native, (uint32_t)a }, 3, 2), 0);
	assert_int_equal(profile__add(p, (uint32_t[]){ (uint32_t)t, (uint32_t)native, (uint32_t)b }, 3, 3), 0);
	read_back(p, &cpu_meta, &rec);
	for (uint32_t f = 0; f < profile__frame_count(rec.profile); f++) {
		struct frame_position pos = profile__frame_position(rec.profile, f);

		if (profile__frame_kind(rec.profile, f) != FRAME_KIND_JAVA_COMPILED) {
			assert_int_equal(pos.line, 0);
			assert_int_equal(pos.bci, -1);
			continue;
		}
		assert_string_equal(profile__frame_name(rec.profile, f), "Foo.bar_[j]");
		assert_true((pos.line == 23 && pos.bci == 9) || (pos.line == 31 && pos.bci == 40));
		seen++;
	}
	assert_int_equal(seen, 2);
	pprof_recording__free(&rec);
	profile__free(p);
}

/* Wall time: one event per 10 ms, read back as samples; waiting stacks keep their states, running ones none.
 */
static void wall_recording_reads_back_with_states(void **state)
{
	struct profile *p = made(true);
	struct pprof_recording rec;
	static const char *const expected[] = {
	    "[worker tid=43]|thread;start_thread|native;java.lang.Thread.run_[j]|compiled;"
	    "com.example.Work.loop_[i]|inlined;com.example.Work.calc_[0]|interpreted 5",
	    "[worker tid=43]|thread;start_thread|native;java.lang.Thread.run_[j]|compiled;"
	    "com.example.Work.loop_[i]|inlined;read_[k]|kernel;[sleeping]|state 3",
	    "[main tid=12]|thread;start_thread|native;Main.main|java;[blocked]|state 2",
	    "[main tid=12]|thread;start_thread|native;Main.main|java;com.example.Work.calc_[0]|interpreted 1",
	};
	char *want = lines_text(expected, ARRAY_SIZE(expected)), *got;

	read_back(p, &wall_meta, &rec);
	got = profile_text(rec.profile);
	assert_string_equal(got, want);
	assert_true(rec.has_states);
	free(want);
	free(got);
	pprof_recording__free(&rec);
	profile__free(p);
}

/* Written in chunks of three events (each chunk whole: its metadata, its pools), it reads back the same. */
static void chunks_read_back_as_one_recording(void **state)
{
	struct profile *p = made(false);
	struct pprof_recording one, chunked;
	char *data = NULL, err[256] = "", *a, *b;
	size_t len = 0;
	FILE *f = open_memstream(&data, &len);
	size_t chunks = 0;

	assert_non_null(f);
	assert_int_equal(output__jfr_write_chunks(p, &cpu_meta, 3, f), 0);
	assert_int_equal(fclose(f), 0);
	/* 11 events in chunks of 3: four chunks, each beginning with the magic. */
	for (size_t i = 0; i + 4 <= len; i++)
		chunks += !memcmp(data + i, "FLR\0", 4) && (i == 0 || data[i + 4] == 0);
	assert_int_equal(chunks, 4);
	if (jfr_read__buffer((const uint8_t *)data, len, &chunked, err, sizeof(err)))
		fail_msg("the chunked file does not read back: %s", err);
	read_back(p, &cpu_meta, &one);
	a = profile_text(one.profile);
	b = profile_text(chunked.profile);
	assert_string_equal(b, a);
	free(a);
	free(b);
	free(data);
	pprof_recording__free(&one);
	pprof_recording__free(&chunked);
	profile__free(p);
}

/* Every truncation, and every single-bit flip, reads or fails: never a crash, never more than ASan allows. */
static void damaged_files_read_or_fail(void **state)
{
	struct profile *p = made(true);
	size_t len;
	char *data = written(OUTPUT_JFR, p, &wall_meta, 0, &len), err[256];
	uint8_t *copy = malloc(len);
	size_t failed = 0, flips = 0;
	struct pprof_recording rec;

	assert_non_null(copy);
	for (size_t n = 0; n < len; n++) {
		memcpy(copy, data, n);
		if (jfr_read__buffer(copy, n, &rec, err, sizeof(err)))
			failed++;
		else
			pprof_recording__free(&rec);
	}
	/* A cut file is refused: its header's size says more. */
	assert_int_equal(failed, len);
	for (size_t i = 0; i < len; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(copy, data, len);
			copy[i] ^= (uint8_t)(1u << bit);
			if (!jfr_read__buffer(copy, len, &rec, err, sizeof(err)))
				pprof_recording__free(&rec);
			flips++;
		}
	assert_int_equal(flips, len * 8);
	free(copy);
	free(data);
	profile__free(p);
}

/*
 * async-profiler's JFR (tests/fixtures/jfr/README.md): the samples, and
 * their innermost frames, the JDK's own jfr print reads in it.
 */
static void async_profiler_file_reads(void **state)
{
	static const struct {
		const char *frame;
		uint64_t leaf;
	} expected[] = { { "CpuSplit.share50", 145 }, { "CpuSplit.share20", 22 }, { "CpuSplit.share30", 8 } };
	char path[4096], err[256] = "";
	const char *source = __FILE__, *slash = strrchr(source, '/');
	uint64_t leaf[3] = { 0 };
	struct pprof_recording rec;

	snprintf(path, sizeof(path), "%.*s/../fixtures/jfr/async-profiler-cpusplit.jfr",
		 slash ? (int)(slash - source) : 1, slash ? source : ".");
	if (pprof_read__file(path, &rec, err, sizeof(err)))
		fail_msg("%s: %s", path, err);
	assert_int_equal(profile__total(rec.profile), 198);
	for (size_t i = 0; i < profile__stack_count(rec.profile); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(rec.profile, i, &depth, &count);
		const char *name = depth ? profile__frame_name(rec.profile, frames[depth - 1]) : "";

		for (size_t k = 0; k < ARRAY_SIZE(expected); k++)
			leaf[k] += !strncmp(name, expected[k].frame, strlen(expected[k].frame)) ? count : 0;
	}
	for (size_t k = 0; k < ARRAY_SIZE(expected); k++)
		assert_int_equal(leaf[k], expected[k].leaf);
	pprof_recording__free(&rec);
}

/*
 * A file whose metadata names a class with a line break and control
 * characters (tests/fuzz/regressions/fuzz_jfr, found by fuzz_jfr): the
 * reason it is refused for names that class, made safe, on one line.
 */
static void file_names_in_reasons_are_made_safe(void **state)
{
	char path[4096], err[256] = "";
	const char *source = __FILE__, *slash = strrchr(source, '/');
	struct pprof_recording rec;

	snprintf(path, sizeof(path), "%.*s/../fuzz/regressions/fuzz_jfr/class-name-with-newline",
		 slash ? (int)(slash - source) : 1, slash ? source : ".");
	assert_int_equal(pprof_read__file(path, &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "has a class the metadata lacks"));
	for (const char *c = err; *c; c++)
		assert_true((unsigned char)*c >= ' ' && *c != 0x7f);
}

static void what_is_not_jfr_is_refused(void **state)
{
	struct pprof_recording rec;
	char err[256];
	static const uint8_t pprof_like[] = {0x1f, 0x8b, 8, 0};
	static const uint8_t old_version[68] = {'F', 'L', 'R', 0, 0, 1, 0, 0};

	assert_false(jfr_read__looks_like(pprof_like, sizeof(pprof_like)));
	assert_int_equal(jfr_read__buffer(pprof_like, sizeof(pprof_like), &rec, err, sizeof(err)), -1);
	assert_string_equal(err, "not a JFR file");
	assert_int_equal(jfr_read__buffer(old_version, sizeof(old_version), &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not 2"));
	assert_int_equal(jfr_read__buffer(old_version, 4, &rec, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no JFR header"));
}

/*
 * Keys a file chooses so that the map's mix as it was, without a secret,
 * sends them all to one slot: the mix inverted, for hashes whose low 32
 * bits are 0.
 */
static uint64_t aimed_key(uint64_t i)
{
	const uint64_t c = 0xff51afd7ed558ccdull;
	uint64_t inverse = c, h = i << 32;

	for (int n = 0; n < 6; n++) /* Newton: each step doubles the bits of c's inverse mod 2^64 */
		inverse *= 2 - c * inverse;
	h ^= h >> 33;
	h *= inverse;
	return h ^ (h >> 33);
}

/* 200,000 keys aimed at one slot go in and come back out in well under the bound on an input's time. */
static void map_keys_cannot_be_aimed(void **state)
{
	struct map m = { 0 };
	uint64_t start = clock__monotonic_ns(), value;
	const uint64_t nr = 200000;

	for (uint64_t i = 0; i < nr; i++)
		assert_int_equal(jfr_read__map_put(&m, aimed_key(i), i), 0);
	for (uint64_t i = 0; i < nr; i++) {
		assert_true(jfr_read__map_get(&m, aimed_key(i), &value));
		assert_int_equal(value, i);
	}
	assert_false(jfr_read__map_get(&m, aimed_key(nr), &value));
	/* Aimed, they took minutes; spread, a few tens of milliseconds. */
	assert_true(clock__monotonic_ns() - start < 5000000000ull);
	free(m.keys);
	free(m.values);
	free(m.used);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cpu_recording_reads_back),
	    cmocka_unit_test(lines_and_bytecode_indexes_read_back),
	    cmocka_unit_test(wall_recording_reads_back_with_states),
	    cmocka_unit_test(chunks_read_back_as_one_recording),
	    cmocka_unit_test(damaged_files_read_or_fail),
	    cmocka_unit_test(async_profiler_file_reads),
	    cmocka_unit_test(file_names_in_reasons_are_made_safe),
	    cmocka_unit_test(what_is_not_jfr_is_refused),
		cmocka_unit_test(map_keys_cannot_be_aimed),
	};

	return cmocka_run_group_tests_name("jfr", tests, NULL, NULL);
}
