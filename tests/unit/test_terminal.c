/*
 * terminal: what a target controls shown on a terminal keeps no escape:
 * C0 controls, DEL, C1 controls in UTF-8 and as raw bytes, whole CSI and
 * OSC sequences are defused, printable UTF-8 is kept, and a short buffer
 * is cut at a whole character. Random bytes never leave a control behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/terminal.h"

static const char *safe(const char *s)
{
	static char buf[256];

	return terminal__safe(s, buf, sizeof(buf));
}

/* No byte a terminal could take for a control, and valid UTF-8 throughout. */
static void assert_harmless(const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t len = terminal__utf8_length(s);

		assert_true(c >= 0x20 && c != 0x7F);
		assert_true(len > 0);
		if (len == 2)
			assert_false(c == 0xC2 && (unsigned char)s[1] < 0xA0);
		s += len;
	}
}

static void c0_controls_and_del_become_question_marks(void **state)
{
	assert_string_equal(safe("a\x1b" "b\x07" "c\r\n\t\x7f" "d"), "a?b?c????d");
}

static void csi_and_osc_sequences_are_defused(void **state)
{
	assert_string_equal(safe("\x1b[2J\x1b[31mred"), "?[2J?[31mred");
	assert_string_equal(safe("\x1b]0;owned\x07"), "?]0;owned?");
}

static void c1_controls_in_utf8_become_question_marks(void **state)
{
	/* U+009B (CSI), U+0085 (NEL), U+0080 and U+009F: the whole C1 range. */
	assert_string_equal(safe("x\xc2\x9b" "1m\xc2\x85\xc2\x80\xc2\x9f" "y"), "x?1m???y");
	/* U+00A0 is the first character past C1, and printable. */
	assert_string_equal(safe("\xc2\xa0"), "\xc2\xa0");
}

static void raw_c1_bytes_become_replacement_characters(void **state)
{
	assert_string_equal(safe("a\x9b" "2J"), "a\xef\xbf\xbd" "2J");
	assert_string_equal(safe("\x80\xff"), "\xef\xbf\xbd\xef\xbf\xbd");
	/* An overlong form of CSI (C1 9B) is no character at all. */
	assert_string_equal(safe("\xc1\x9b"), "\xef\xbf\xbd\xef\xbf\xbd");
	/* A sequence cut short by the end of the string. */
	assert_string_equal(safe("\xe6\x97"), "\xef\xbf\xbd\xef\xbf\xbd");
}

static void printable_utf8_is_kept(void **state)
{
	const char *s = "java-\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5";

	assert_string_equal(safe(s), s);
}

static void a_short_buffer_is_cut_at_a_whole_character(void **state)
{
	char buf[6];

	/* "ab" and U+FFFD fit in 5 bytes; the next '?' would not. */
	assert_string_equal(terminal__safe("ab\x9b\x1b", buf, sizeof(buf)), "ab\xef\xbf\xbd");
	assert_string_equal(terminal__safe("abcd\xe6\x97\xa5", buf, sizeof(buf)), "abcd");
	assert_string_equal(terminal__safe(NULL, buf, sizeof(buf)), "");
}

static void random_bytes_leave_nothing_harmful(void **state)
{
	char in[64], out[256];

	srand(12);
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand() % 63);

		for (size_t i = 0; i < n; i++) {
			/* Biased towards the interesting bytes. */
			static const unsigned char pick[] = { 0x1b, 0x9b, 0xc2, 0x80, 0x9f, 0xa0, 0x07, 0x7f, 0xe2, 0xf0 };

			in[i] = (char)(rand() % 2 ? pick[rand() % (int)sizeof(pick)] : 1 + rand() % 255);
		}
		in[n] = '\0';
		assert_harmless(terminal__safe(in, out, sizeof(out)));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c0_controls_and_del_become_question_marks),
		cmocka_unit_test(csi_and_osc_sequences_are_defused),
		cmocka_unit_test(c1_controls_in_utf8_become_question_marks),
		cmocka_unit_test(raw_c1_bytes_become_replacement_characters),
		cmocka_unit_test(printable_utf8_is_kept),
		cmocka_unit_test(a_short_buffer_is_cut_at_a_whole_character),
		cmocka_unit_test(random_bytes_leave_nothing_harmful),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
