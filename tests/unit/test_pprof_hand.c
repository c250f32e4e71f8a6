/*
 * The pprof reader (input/pprof_read.c) on messages built by hand
 * (pprof_hand.h), as other tools write them: what it reads from one, and
 * every way a message is refused, each with its reason.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pprof_hand.h"
#include "profile_fixture.h"

#include "input/pprof_read.h"
#include "profile/profile.h"

static void go_style_profile_reads_with_names_as_given(void **state)
{
	struct hand h;
	struct pprof_recording rec;
	char err[256] = "", *text;

	hand_init(&h);
	if (hand_read(&h, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	text = profile_text(rec.profile);
	assert_string_equal(text, "main|native;work|native 7\n");
	free(text);
	assert_string_equal(rec.event, hand_strings[S_SAMPLES]);
	assert_null(rec.title);
	assert_null(rec.summary);
	assert_null(rec.process_roots);
	assert_int_equal(rec.frequency_hz, 1000000000 / HAND_PERIOD_NS);
	assert_true(fabs(rec.duration_s - (double)h.msg.duration_nanos / 1e9) < 1e-9);
	assert_false(rec.time_weights);
	assert_false(rec.has_states);
	pprof_recording__free(&rec);
}

/* A file of another tool that says neither samples nor count: its default sample type counts. */
static void default_sample_type_counts_when_no_samples_type(void **state)
{
	struct hand h;
	struct pprof_recording rec;
	char err[256] = "";

	hand_init(&h);
	h.types[0].type = S_CPU;
	h.types[0].unit = S_NANOSECONDS;
	h.types[1].type = S_WORK;
	h.types[1].unit = S_NANOSECONDS;
	h.msg.default_sample_type = S_WORK;
	if (hand_read(&h, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	assert_int_equal(profile__total(rec.profile), h.values[1]);
	assert_string_equal(rec.event, hand_strings[S_WORK]);
	pprof_recording__free(&rec);
}

static void labels_become_root_and_state_frames(void **state)
{
	struct hand h;
	struct pprof_recording rec;
	char err[256] = "", *text;

	hand_init(&h);
	hand_label(&h, S_SPAN, S_MAIN, 0); /* another tool's label: ignored */
	hand_label(&h, S_PROCESS, S_APP, 0);
	hand_label(&h, S_PID, 0, 42);
	hand_label(&h, S_THREAD, S_WORKER, 0);
	hand_label(&h, S_TID, 0, 43);
	hand_label(&h, S_STATE, S_SLEEPING, 0);
	if (hand_read(&h, &rec, err, sizeof(err)))
		fail_msg("read failed: %s", err);
	text = profile_text(rec.profile);
	assert_string_equal(text, "app (pid 42)|process;[worker tid=43]|thread;main|native;work|native;"
				  "[sleeping]|state 7\n");
	free(text);
	assert_true(rec.has_states);
	pprof_recording__free(&rec);
}

static void string_table_must_start_with_empty_string(void **state)
{
	struct hand h;

	hand_init(&h);
	h.strings[0] = (char *)"x";
	assert_refused(&h, "its string table does not start with \"\"");
	h.msg.n_string_table = 0;
	assert_refused(&h, "its string table does not start with \"\"");
}

static void sample_naming_a_missing_location_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.location_ids[1] = 9;
	assert_refused(&h, "sample 0 names location 9, which does not exist");
	h.location_ids[1] = 0;
	assert_refused(&h, "sample 0 names location 0, which does not exist");
}

static void location_naming_a_missing_function_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.lines[1].function_id = 9;
	assert_refused(&h, "location 2 names function 9, which does not exist");
}

static void location_naming_a_missing_mapping_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.locations[0].mapping_id = 9;
	assert_refused(&h, "location 1 names mapping 9, which does not exist");
}

static void duplicate_ids_are_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.functions[1].id = 1;
	assert_refused(&h, "two functions have id 1");
	hand_init(&h);
	h.locations[0].id = 2;
	assert_refused(&h, "two locations have id 2");
	hand_init(&h);
	h.mappings[1].id = 1;
	assert_refused(&h, "two mappings have id 1");
}

static void id_zero_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.functions[1].id = 0;
	assert_refused(&h, "function 1 has id 0");
	hand_init(&h);
	h.locations[0].id = 0;
	assert_refused(&h, "location 0 has id 0");
	hand_init(&h);
	h.mappings[1].id = 0;
	assert_refused(&h, "mapping 1 has id 0");
}

static void string_index_out_of_range_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.functions[0].name = S_NR;
	assert_refused(&h, "function 1 has a name outside the string table");
	hand_init(&h);
	h.functions[1].system_name = -1;
	assert_refused(&h, "function 2 has a name outside the string table");
	hand_init(&h);
	h.types[1].unit = S_NR;
	assert_refused(&h, "sample type 1 refers outside the string table");
	hand_init(&h);
	hand_label(&h, S_NR + 100, S_APP, 0);
	assert_refused(&h, "sample 0: a label refers outside the string table");
	hand_init(&h);
	hand_label(&h, S_PROCESS, -5, 0);
	assert_refused(&h, "sample 0: a label refers outside the string table");
	hand_init(&h);
	h.mappings[1].filename = S_NR;
	assert_refused(&h, "mapping 2 has a file name or build-id outside the string table");
	hand_init(&h);
	h.comments[0] = S_NR;
	h.msg.n_comment = 1;
	assert_refused(&h, "comment 0 refers outside the string table");
}

static void numeric_labels_given_as_strings_are_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	hand_label(&h, S_TID, S_43, 0);
	assert_refused(&h, "sample 0: label tid must be a number, not \"43\"");
	hand_init(&h);
	hand_label(&h, S_PID, S_43, 0);
	assert_refused(&h, "sample 0: label pid must be a number, not \"43\"");
}

static void numeric_labels_out_of_range_are_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	hand_label(&h, S_PID, 0, -1);
	assert_refused(&h, "sample 0: label pid is -1, not a process or thread id");
	hand_init(&h);
	hand_label(&h, S_TID, 0, (int64_t)UINT32_MAX + 1);
	assert_refused(&h, "sample 0: label tid is 4294967296, not a process or thread id");
}

static void string_labels_given_as_numbers_are_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	hand_label(&h, S_THREAD, 0, 43);
	assert_refused(&h, "sample 0: label thread must be a string, not a number");
	hand_init(&h);
	hand_label(&h, S_PROCESS, 0, 42);
	assert_refused(&h, "sample 0: label process must be a string, not a number");
	hand_init(&h);
	hand_label(&h, S_STATE, 0, 2);
	assert_refused(&h, "sample 0: label state must be a string, not a number");
}

static void unknown_state_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	hand_label(&h, S_STATE, S_DOZING, 0);
	assert_refused(&h, "sample 0: label state is \"dozing\", not one of running, runnable, sleeping, blocked");
	/* A known state with more after it, past what the reader compares. */
	hand_init(&h);
	h.strings[S_DOZING] = (char *)"sleepingsleepingsleeping";
	hand_label(&h, S_STATE, S_DOZING, 0);
	assert_refused(&h, "sample 0: label state is \"sleepingsleepingsleeping\"");
}

/* Text from the file is quoted in the reason with its control characters replaced: one line, no escapes. */
static void hostile_label_text_stays_on_one_line(void **state)
{
	struct hand h;

	hand_init(&h);
	h.strings[S_DOZING] = (char *)"run\nning\x1b[2J";
	hand_label(&h, S_STATE, S_DOZING, 0);
	assert_refused(&h, "sample 0: label state is \"run?ning?[2J\", not one of");
	hand_init(&h);
	h.strings[S_43] = (char *)"4\r\n3";
	hand_label(&h, S_TID, S_43, 0);
	assert_refused(&h, "sample 0: label tid must be a number, not \"4??3\"");
}

static void value_count_must_match_sample_types(void **state)
{
	struct hand h;

	hand_init(&h);
	h.sample.n_value = 1;
	assert_refused(&h, "sample 0 has 1 values for 2 sample types");
	h.msg.n_sample_type = 1;
	h.sample.n_value = 2;
	assert_refused(&h, "sample 0 has 2 values for 1 sample types");
}

static void negative_value_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.values[0] = -HAND_SAMPLES;
	assert_refused(&h, "sample 0 has a negative value");
}

static void profile_without_sample_types_is_refused(void **state)
{
	struct hand h;

	hand_init(&h);
	h.msg.n_sample_type = 0;
	h.sample.n_value = 0;
	assert_refused(&h, "the profile has no sample type");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(go_style_profile_reads_with_names_as_given),
		cmocka_unit_test(default_sample_type_counts_when_no_samples_type),
		cmocka_unit_test(labels_become_root_and_state_frames),
		cmocka_unit_test(string_table_must_start_with_empty_string),
		cmocka_unit_test(sample_naming_a_missing_location_is_refused),
		cmocka_unit_test(location_naming_a_missing_function_is_refused),
		cmocka_unit_test(location_naming_a_missing_mapping_is_refused),
		cmocka_unit_test(duplicate_ids_are_refused),
		cmocka_unit_test(id_zero_is_refused),
		cmocka_unit_test(string_index_out_of_range_is_refused),
		cmocka_unit_test(numeric_labels_given_as_strings_are_refused),
		cmocka_unit_test(numeric_labels_out_of_range_are_refused),
		cmocka_unit_test(string_labels_given_as_numbers_are_refused),
		cmocka_unit_test(unknown_state_is_refused),
		cmocka_unit_test(hostile_label_text_stays_on_one_line),
		cmocka_unit_test(value_count_must_match_sample_types),
		cmocka_unit_test(negative_value_is_refused),
		cmocka_unit_test(profile_without_sample_types_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
