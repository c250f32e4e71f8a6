/*
 * agent options (jvmti-stub/options.c): keys are compared whole, values
 * are required or refused as each key says, repeats and empty items are
 * errors, each error names its reason, and the socket path is known even
 * when another item is wrong, so the agent can report through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jvmti-stub/options.h"

static void parse_fails(const char *text, const char *reason)
{
	struct agent_options o;
	char err[256] = "";

	assert_int_equal(options__parse(text, &o, err, sizeof(err)), -1);
	if (!strstr(err, reason))
		fail_msg("options \"%s\": reason \"%s\" does not say \"%s\"", text, err, reason);
}

static void options_take_whole_keys(void **state)
{
	struct agent_options o;
	char err[256], long_path[200];

	assert_int_equal(options__parse("socket=/tmp/a.sock,sigqueue", &o, err, sizeof(err)), 0);
	assert_string_equal(o.socket, "/tmp/a.sock");
	assert_true(o.sigqueue);
	assert_false(o.nmethods);
	assert_int_equal(options__parse("sigqueue,socket=/s,nmethods", &o, err, sizeof(err)), 0);
	assert_string_equal(o.socket, "/s");
	assert_true(o.nmethods);
	parse_fails("nmethods=yes", "takes no value");
	assert_int_equal(options__parse(NULL, &o, err, sizeof(err)), 0);
	assert_false(o.sigqueue);
	assert_string_equal(o.socket, "");
	assert_int_equal(options__parse("", &o, err, sizeof(err)), 0);
	parse_fails("socket", "needs a path");
	parse_fails("socket=", "needs a path");
	parse_fails("sigqueue=1", "takes no value");
	parse_fails("sigqueuex", "unknown option \"sigqueuex\"");
	parse_fails("socket=/a,socket=/b", "twice");
	parse_fails("socket=/a,,sigqueue", "empty item");
	/* The socket is known even when another item is wrong, to report through it. */
	assert_int_equal(options__parse("bogus,socket=/s", &o, err, sizeof(err)), -1);
	assert_string_equal(o.socket, "/s");
	memset(long_path, 'a', sizeof(long_path) - 1);
	long_path[sizeof(long_path) - 1] = '\0';
	memcpy(long_path, "socket=/", 8);
	parse_fails(long_path, "the limit is 107");
}

/* alloc=BYTES: a whole decimal number of bytes, from 1 to INT32_MAX (SetHeapSamplingInterval's jint). */
static void options_take_an_allocation_interval(void **state)
{
	struct agent_options o;
	char err[256];

	(void)state;
	assert_int_equal(options__parse("socket=/s", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_interval, 0);
	assert_int_equal(options__parse("socket=/s,alloc=524288", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_interval, 524288);
	assert_int_equal(options__parse("alloc=1,socket=/s", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_interval, 1);
	assert_int_equal(options__parse("alloc=2147483647", &o, err, sizeof(err)), 0);
	assert_int_equal(o.alloc_interval, 2147483647);
	parse_fails("alloc", "needs a number of bytes");
	parse_fails("alloc=", "needs a number of bytes");
	parse_fails("alloc=0", "needs a number of bytes");
	parse_fails("alloc=2147483648", "needs a number of bytes");
	parse_fails("alloc=99999999999999999999999", "needs a number of bytes");
	parse_fails("alloc=12k", "needs a number of bytes");
	parse_fails("alloc=-5", "needs a number of bytes");
	parse_fails("alloc=1,alloc=2", "twice");
	parse_fails("allocx=1", "unknown option");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_take_whole_keys),
		cmocka_unit_test(options_take_an_allocation_interval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
