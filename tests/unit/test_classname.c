/*
 * classname (common/classname.c), as the agent and the BPF walk name frames: hidden classes lose the
 * address in their name in every spelling HotSpot uses, what is not an
 * address is kept, and a small buffer cuts at a UTF-8 character boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/classname.h"

static void check_name(const char *sig, const char *method, const char *want)
{
	char out[256];
	size_t len = classname__format(sig, method, out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(len, strlen(want));
}

static void classname_normalises_hidden_classes(void **state)
{
	char small[7];

	check_name("Ljava/lang/String;", "length", "java.lang.String.length");
	check_name("Lcom/x/Foo$1;", "run", "com.x.Foo$1.run");
	/* Lambdas: JDK 17 internal and external spellings, then JDK 21+. */
	check_name("Lcom/x/Foo$$Lambda$14.0x0000000800066840;", "run", "com.x.Foo$$Lambda.run");
	check_name("Lcom/x/Foo$$Lambda$14/0x0000000800066840;", "run", "com.x.Foo$$Lambda.run");
	check_name("Lcom/x/Foo$$Lambda/0x000001c0010c8c58;", "run", "com.x.Foo$$Lambda.run");
	check_name("Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0c000;", "invoke",
		   "java.lang.invoke.LambdaForm$MH.invoke");
	/* Not an address: kept. */
	check_name("Lcom/x/Foo/0xzz;", "m", "com.x.Foo.0xzz.m");
	check_name("Lcom/x/Foo/0x;", "m", "com.x.Foo.0x.m");
	check_name(NULL, "m", "[unknown class].m");
	check_name("LFoo;", NULL, "Foo.[unknown]");
	/* 6 bytes fit: "abcde" and half of 'é', which is cut whole. */
	assert_int_equal(classname__format("Labcde\xc3\xa9;", "x", small, sizeof(small)), 5);
	assert_string_equal(small, "abcde");
	assert_int_equal(classname__format("Labc\xc3\xa9;", "x", small, sizeof(small)), 6);
	assert_string_equal(small, "abc\xc3\xa9.");
}

static void check_type(const char *sig, const char *want)
{
	char out[256];
	size_t len = classname__type(sig, out, sizeof(out));

	assert_string_equal(out, want);
	assert_int_equal(len, strlen(want));
}

/* An allocated object's class as Java writes its type: arrays by their element and dimensions. */
static void classname_types_of_allocations(void **state)
{
	char small[6];

	(void)state;
	check_type("Ljava/lang/String;", "java.lang.String");
	check_type("[B", "byte[]");
	check_type("[[I", "int[][]");
	check_type("[Z", "boolean[]");
	check_type("[J", "long[]");
	check_type("[[Ljava/lang/Object;", "java.lang.Object[][]");
	check_type("Lcom/x/Foo$$Lambda$14.0x0000000800066840;", "com.x.Foo$$Lambda");
	check_type("[Lcom/x/Foo$$Lambda/0x000001c0010c8c58;", "com.x.Foo$$Lambda[]");
	/* A lone letter names a class, not a primitive, outside an array. */
	check_type("B", "B");
	check_type("[", "[]");
	check_type("", "[unknown class]");
	check_type(NULL, "[unknown class]");
	/* Cut to the room there is, terminated. */
	assert_int_equal(classname__type("[Ljava/lang/String;", small, sizeof(small)), 5);
	assert_string_equal(small, "java.");
	assert_int_equal(classname__type("[B", small, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classname_normalises_hidden_classes),
		cmocka_unit_test(classname_types_of_allocations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
