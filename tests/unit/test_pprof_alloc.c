/*
 * An allocation profile in pprof (output/pprof.c, input/pprof_read.c): its
 * bytes as alloc_space, the default, and the objects beside them as
 * alloc_objects when the profile counts them; the class frames as
 * locations. Written, then read back the same, objects included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile_fixture.h"

#include "output/output.h"
#include "profile/profile.h"
#include "input/pprof_read.h"

static const struct output_meta alloc_meta = {
	.title = "Allocation profile of app",
	.unit = "bytes",
	.duration_s = 3,
	.summary = "5 allocations sampled, 5 written, 0 lost",
	.event = "alloc",
};

/* Two stacks of Java frames ending in their class; objects given or not. */
static struct profile *alloc_profile(bool objects)
{
	struct profile *p = profile__new(NULL);
	uint32_t a[3], b[3];

	assert_non_null(p);
	a[0] = b[0] = frame_ok(p, "Main.run", FRAME_KIND_JAVA, 0);
	a[1] = frame_ok(p, "Main.fill", FRAME_KIND_JAVA, 0);
	a[2] = frame_ok(p, "long[]", FRAME_KIND_CLASS, 0);
	b[1] = frame_ok(p, "Main.box", FRAME_KIND_JAVA, 0);
	b[2] = frame_ok(p, "Main$Box", FRAME_KIND_CLASS, 0);
	assert_int_equal(profile__add_objects(p, a, 3, 3u << 20, objects ? 3024 : 0), 0);
	assert_int_equal(profile__add_objects(p, b, 3, 1u << 20, objects ? 16384 : 0), 0);
	assert_int_equal(profile__add_objects(p, a, 3, 512u << 10, objects ? 504 : 0), 0);
	return p;
}

static void check_event(bool objects, const char *event)
{
	struct profile *p = alloc_profile(objects);
	struct output_meta meta = alloc_meta;
	struct pprof_recording rec;
	char err[256] = "", *want, *got;
	size_t len;
	void *data;

	meta.event = event;
	data = written(OUTPUT_PPROF, p, &meta, 0, &len);

	if (pprof_read__buffer(data, len, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	assert_true(rec.bytes);
	assert_false(rec.time_weights);
	assert_string_equal(rec.event, event);
	want = profile_text(p);
	got = profile_text(rec.profile);
	assert_string_equal(got, want);
	assert_int_equal(profile__total(rec.profile), (3u << 20) + (1u << 20) + (512u << 10));
	assert_int_equal(profile__has_objects(rec.profile), objects);
	for (size_t i = 0; i < profile__stack_count(p); i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(p, i, &depth, &count);
		const char *leaf = profile__frame_name(p, frames[depth - 1]);
		uint64_t read_objects = 0;

		/* The same stack in what was read: matched by its count, distinct here. */
		for (size_t j = 0; j < profile__stack_count(rec.profile); j++) {
			size_t d;
			uint64_t c;

			profile__stack(rec.profile, j, &d, &c);
			if (c == count)
				read_objects = profile__stack_objects(rec.profile, j);
		}
		assert_int_equal(read_objects, profile__stack_objects(p, i));
		assert_true(!objects || read_objects > 0);
		assert_true(!strcmp(leaf, "long[]") || !strcmp(leaf, "Main$Box"));
	}
	free(want);
	free(got);
	pprof_recording__free(&rec);
	free(data);
	profile__free(p);
}

static void check(bool objects)
{
	check_event(objects, "alloc");
}

/*
 * Native memory, and what of it is still allocated at the end (its
 * values named inuse_objects and inuse_space, as Go's heap profiles
 * name memory in use): both read back as allocation profiles, their
 * event kept.
 */
static void native_memory_and_leaks_read_back(void **state)
{
	(void)state;
	check_event(true, "nativemem");
	check_event(true, "leaks");
	assert_string_equal(output__space_type("leaks"), "inuse_space");
	assert_string_equal(output__objects_type("nativemem"), "alloc_objects");
	assert_true(output__event_allocates("leaks") && !output__event_allocates("wall"));
}

static void bytes_and_objects_read_back(void **state)
{
	(void)state;
	check(true);
}

static void bytes_alone_read_back(void **state)
{
	(void)state;
	check(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_and_objects_read_back),
		cmocka_unit_test(bytes_alone_read_back),
		cmocka_unit_test(native_memory_and_leaks_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
