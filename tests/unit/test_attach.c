/*
 * attach: the parsers that read what a target JVM and its /proc files say.
 * Everything here is hostile input: replies are cut, overlong or binary,
 * status files miss fields, option strings and hsperfdata images lie about
 * their sizes. Every parser must answer, never read past its length.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/java/attach.h"

/* Parses a string literal's bytes, NULs included, without its terminator. */
#define REPLY(s, rc, msg) attach__parse_reply((s), sizeof(s) - 1, (rc), (msg), sizeof(msg))

static void assert_printable_line(const char *msg)
{
	for (const char *p = msg; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
}

static void reply_success_and_agent_codes(void **state)
{
	char msg[256];
	int rc = -100;

	assert_int_equal(REPLY("0\nreturn code: 0\n", &rc, msg), 0);
	assert_int_equal(rc, 0);
	assert_string_equal(msg, "");
	assert_int_equal(REPLY("0\nreturn code: 7\n", &rc, msg), 0);
	assert_int_equal(rc, 7);
	assert_int_equal(REPLY("0\nreturn code: -1", &rc, msg), 0);
	assert_int_equal(rc, -1);
	/* JDK 8 writes the code alone on the second line. */
	assert_int_equal(REPLY("0\n0\n", &rc, msg), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(REPLY("0\n12\n", &rc, msg), 0);
	assert_int_equal(rc, 12);
	/* Text around the code (warnings) is kept as one line. */
	assert_int_equal(REPLY("0\nWARNING: something\nreturn code: 3\nmore\n", &rc, msg), 0);
	assert_int_equal(rc, 3);
	assert_string_equal(msg, "WARNING: something more");
	/* The length is what counts, not a terminator: "0\nreturn code: 1" of "...12". */
	assert_int_equal(attach__parse_reply("0\nreturn code: 12", 16, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, 1);
}

static void reply_jvm_errors_carry_the_jvm_text(void **state)
{
	char msg[256];
	int rc = -100;

	assert_int_equal(REPLY("-1\n/tmp/a.so was not loaded.\n/tmp/a.so: cannot open shared object file: "
			       "No such file or directory\n", &rc, msg), -1);
	assert_string_equal(msg, "/tmp/a.so was not loaded. /tmp/a.so: cannot open shared object file: "
				 "No such file or directory");
	/* JDK 25: status 0, but no return code, when the library did not load. */
	assert_int_equal(REPLY("0\n/tmp/a.so was not loaded.\n/tmp/a.so: invalid ELF header\n", &rc, msg), -1);
	assert_string_equal(msg, "/tmp/a.so was not loaded. /tmp/a.so: invalid ELF header");
	assert_int_equal(REPLY("-1\nOperation load not recognized!", &rc, msg), -1);
	assert_string_equal(msg, "Operation load not recognized!");
	assert_int_equal(REPLY("101\n", &rc, msg), -1);
	assert_string_equal(msg, "status 101, no message");
	assert_int_equal(rc, -100);
}

static void reply_truncated_or_garbage(void **state)
{
	char msg[256], big[ATTACH_REPLY_MAX + 2];
	int rc = -100;

	assert_int_equal(REPLY("", &rc, msg), -1);
	assert_non_null(strstr(msg, "without a reply"));
	assert_int_equal(REPLY("0", &rc, msg), -1);
	assert_string_equal(msg, "the reply has no agent return code");
	assert_int_equal(REPLY("0\n", &rc, msg), -1);
	assert_int_equal(REPLY("0\nreturn co", &rc, msg), -1);
	assert_int_equal(REPLY("0\nreturn code: ", &rc, msg), -1);
	assert_int_equal(REPLY("0\nreturn code: 7x\n", &rc, msg), -1);
	assert_int_equal(REPLY("0\nreturn code: 99999999999\n", &rc, msg), -1);
	assert_int_equal(REPLY("99999999999\nreturn code: 0\n", &rc, msg), -1);
	assert_int_equal(REPLY("HTTP/1.1 200 OK\r\n\r\n", &rc, msg), -1);
	assert_non_null(strstr(msg, "unrecognised reply \"HTTP/1.1 200 OK\""));
	assert_int_equal(REPLY("-\n", &rc, msg), -1);
	assert_int_equal(REPLY("\n0\nreturn code: 0\n", &rc, msg), -1);
	/* Binary: the message stays one printable line. */
	assert_int_equal(REPLY("-1\n\x01\x1b[31mred\0zero\x7f\xff\n\ttab\n", &rc, msg), -1);
	assert_printable_line(msg);
	assert_non_null(strstr(msg, "red?zero"));
	assert_int_equal(rc, -100);

	/* Overlong: refused even if it would parse. */
	memset(big, ' ', sizeof(big));
	memcpy(big, "0\nreturn code: 0\n", 17);
	assert_int_equal(attach__parse_reply(big, ATTACH_REPLY_MAX + 1, &rc, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "longer than"));
	assert_int_equal(attach__parse_reply(big, ATTACH_REPLY_MAX, &rc, msg, sizeof(msg)), 0);
	assert_int_equal(rc, 0);
	/* A long error is cut to the buffer, marked, and still terminated. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "-1\n", 3);
	assert_int_equal(attach__parse_reply(big, ATTACH_REPLY_MAX, &rc, msg, 16), -1);
	assert_int_equal(strlen(msg), 15);
	assert_string_equal(msg + 12, "...");
	assert_int_equal(attach__parse_reply(big, ATTACH_REPLY_MAX, &rc, msg, 1), -1);
	assert_string_equal(msg, "");
}

static const char status_text[] =
	"Name:\tjava\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t4242\n"
	"Pid:\t4242\n"
	"Uid:\t1000\t1001\t1002\t1003\n"
	"Gid:\t2000\t2001\t2002\t2003\n"
	"NSpid:\t4242\t17\t1\n"
	"SigBlk:\t0000000000000000\n"
	"SigIgn:\t0000000000000002\n"
	"SigCgt:\t0000000101005ccd\n";

static void status_effective_ids_and_innermost_pid(void **state)
{
	pid_t nspid = 0;
	uid_t uid = 0;
	gid_t gid = 0;

	assert_int_equal(attach__parse_status(status_text, sizeof(status_text) - 1, &nspid, &uid, &gid), 0);
	assert_int_equal(nspid, 1);
	assert_int_equal(uid, 1001);
	assert_int_equal(gid, 2001);
	{
		static const char s[] = "NSpid:\t99\nUid:\t0\t0\t0\t0\nGid:\t5\t6\t7\t8";

		assert_int_equal(attach__parse_status(s, sizeof(s) - 1, &nspid, &uid, &gid), 0);
	}
	assert_int_equal(nspid, 99);
	assert_int_equal(uid, 0);
	assert_int_equal(gid, 6);
	assert_int_equal(attach__status_catches(status_text, sizeof(status_text) - 1, 3), 1);  /* SIGQUIT */
	assert_int_equal(attach__status_catches(status_text, sizeof(status_text) - 1, 2), 0);  /* SIGINT */
	assert_int_equal(attach__status_catches(status_text, sizeof(status_text) - 1, 33), 1);
}

static void status_missing_or_garbage_fields(void **state)
{
	static const char *const bad[] = {
		"Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",                      /* no NSpid */
		"NSpid:\t5\nGid:\t1\t1\t1\t1\n",                             /* no Uid */
		"NSpid:\t5\nUid:\t1\t1\t1\t1\n",                             /* no Gid */
		"NSpid:\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",              /* empty NSpid */
		"NSpid:\t5 x\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",
		"NSpid:\t0\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",
		"NSpid:\t99999999999999999999999\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",
		"NSpid:\t4294967296\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",
		"NSpid:\t5\nUid:\t1\t1\t1\nGid:\t1\t1\t1\t1\n",              /* three ids */
		"NSpid:\t5\nUid:\t1\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",        /* five */
		"NSpid:\t5\nUid:\t1\t4294967295\t1\t1\nGid:\t1\t1\t1\t1\n",  /* (uid_t)-1 */
		"NSpid:\t5\nUid:\t1\t-1\t1\t1\nGid:\t1\t1\t1\t1\n",
		"Name:\tNSpid: 5\nxUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n",     /* keys only at line starts */
		"\x01\x02\xff garbage",
		"",
	};
	pid_t nspid = 77;
	uid_t uid = 77;
	gid_t gid = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (attach__parse_status(bad[i], strlen(bad[i]), &nspid, &uid, &gid) != -1)
			fail_msg("accepted status #%zu", i);
	}
	assert_int_equal(nspid, 77);
	assert_int_equal(uid, 77);
	assert_int_equal(gid, 77);
	/* The NSpid line past len does not count. */
	assert_int_equal(attach__parse_status(status_text, strstr(status_text, "NSpid") - status_text, &nspid, &uid, &gid),
			 -1);
	assert_int_equal(attach__status_catches("SigCgt:\tzz\n", 11, 3), -1);
	assert_int_equal(attach__status_catches("SigCgt:\t00000000000000001\n", 26, 3), -1);
	assert_int_equal(attach__status_catches("SigCgt:\t\n", 9, 3), -1);
	assert_int_equal(attach__status_catches("SigIgn:\t4\n", 10, 3), -1);
	assert_int_equal(attach__status_catches(status_text, sizeof(status_text) - 1, 0), -1);
	assert_int_equal(attach__status_catches(status_text, sizeof(status_text) - 1, 65), -1);
}

/* A command line as /proc/PID/cmdline holds it: each argument NUL-terminated. */
static size_t cmdline(char *buf, size_t size, const char *const *argv)
{
	size_t n = 0;

	for (; *argv; argv++) {
		size_t len = strlen(*argv) + 1;

		assert_true(n + len <= size);
		memcpy(buf + n, *argv, len);
		n += len;
	}
	return n;
}

static int cmdline_disables(int before, const char *const *argv)
{
	char buf[512];
	size_t n = cmdline(buf, sizeof(buf), argv);

	return attach__cmdline_disables(buf, n, before);
}

#define CMD(before, ...) cmdline_disables((before), (const char *const[]){ __VA_ARGS__, NULL })

static void disable_flag_on_the_command_line(void **state)
{
	char buf[64];
	size_t n;

	assert_int_equal(CMD(0, "java", "-XX:+DisableAttachMechanism", "Main"), 1);
	assert_int_equal(CMD(0, "java", "-cp", "x", "Main"), 0);
	/* The last one wins, and the state before carries through. */
	assert_int_equal(CMD(0, "java", "-XX:+DisableAttachMechanism", "-XX:-DisableAttachMechanism", "Main"), 0);
	assert_int_equal(CMD(1, "java", "-Xmx1g", "Main"), 1);
	assert_int_equal(CMD(1, "java", "-XX:-DisableAttachMechanism", "Main"), 0);
	/* After the main class, -jar JAR or -m MODULE, arguments are the program's. */
	assert_int_equal(CMD(0, "java", "Main", "-XX:+DisableAttachMechanism"), 0);
	assert_int_equal(CMD(0, "java", "-jar", "app.jar", "-XX:+DisableAttachMechanism"), 0);
	assert_int_equal(CMD(0, "java", "-m", "mod/Main", "-XX:+DisableAttachMechanism"), 0);
	assert_int_equal(CMD(0, "java", "--module=mod/Main", "-XX:+DisableAttachMechanism"), 0);
	/* A value that is not an option does not end the options. */
	assert_int_equal(CMD(0, "java", "-cp", "lib/*", "--add-opens", "a/b=ALL-UNNAMED", "-XX:+DisableAttachMechanism",
			     "Main"), 1);
	assert_int_equal(CMD(0, "java", "--class-path=x", "-XX:+DisableAttachMechanism", "M"), 1);
	/* Near misses are other flags. */
	assert_int_equal(CMD(0, "java", "-XX:+DisableAttachMechanismX", "Main"), 0);
	assert_int_equal(CMD(0, "java", " -XX:+DisableAttachMechanism", "Main"), 0);
	/* Cut short (no terminator), or empty. */
	n = cmdline(buf, sizeof(buf), (const char *const[]){ "java", "-XX:+DisableAttachMechanism", NULL });
	assert_int_equal(attach__cmdline_disables(buf, n - 1, 0), 1);
	assert_int_equal(attach__cmdline_disables(buf, n - 2, 0), 0);
	assert_int_equal(attach__cmdline_disables(buf, 0, 0), 0);
}

static void disable_flag_in_option_variables(void **state)
{
#define OPTS(s, before) attach__options_disables((s), strlen(s), (before))
	assert_int_equal(OPTS("-XX:+DisableAttachMechanism", 0), 1);
	assert_int_equal(OPTS("  -Xmx1g\t-XX:+DisableAttachMechanism  -Dx=y\n", 0), 1);
	assert_int_equal(OPTS("-XX:+DisableAttachMechanism -XX:-DisableAttachMechanism", 0), 0);
	assert_int_equal(OPTS("\"-XX:+DisableAttachMechanism\"", 0), 1);
	assert_int_equal(OPTS("'-XX:+DisableAttachMechanism'", 0), 1);
	assert_int_equal(OPTS("-Dflag=-XX:+DisableAttachMechanism", 0), 0);
	assert_int_equal(OPTS("", 1), 1);
	assert_int_equal(OPTS("   ", 0), 0);
	assert_int_equal(OPTS("\"", 0), 0);
#undef OPTS
}

/* Builds an hsperfdata image: prologue, then entries {name, type, value}. */
struct pd_entry {
	const char *name;
	char type;
	const char *value;
};

static void put32(unsigned char *p, uint32_t v, int little)
{
	for (int i = 0; i < 4; i++)
		p[little ? i : 3 - i] = (unsigned char)(v >> (8 * i));
}

static size_t perfdata(unsigned char *img, size_t size, int little, const struct pd_entry *e, size_t nr)
{
	size_t off = 32;

	memset(img, 0, size);
	memcpy(img, "\xca\xfe\xc0\xc0", 4);
	img[4] = (unsigned char)little;
	img[5] = 2;
	put32(img + 24, 32, little);
	put32(img + 28, (uint32_t)nr, little);
	for (size_t i = 0; i < nr; i++) {
		size_t nlen = strlen(e[i].name) + 1, vlen = strlen(e[i].value) + 1;
		size_t len = (20 + nlen + vlen + 7) & ~(size_t)7;

		assert_true(off + len <= size);
		put32(img + off, (uint32_t)len, little);
		put32(img + off + 4, 20, little);
		put32(img + off + 8, (uint32_t)vlen, little);
		img[off + 12] = (unsigned char)e[i].type;
		put32(img + off + 16, (uint32_t)(20 + nlen), little);
		memcpy(img + off + 20, e[i].name, nlen);
		memcpy(img + off + 20 + nlen, e[i].value, vlen);
		off += len;
	}
	return off;
}

static void perfdata_capabilities(void **state)
{
	static const struct pd_entry entries[] = {
		{ "sun.rt._sync_Inflations", 'J', "" },
		{ "java.property.java.vm.name", 'B', "OpenJDK 64-Bit Server VM" },
		{ "sun.rt.jvmCapabilities", 'B', "0100000000000000000000000000000000000000000000000000000000000000" },
	};
	unsigned char img[1024];
	char caps[8];
	size_t len;

	for (int little = 0; little <= 1; little++) {
		len = perfdata(img, sizeof(img), little, entries, 3);
		assert_int_equal(attach__parse_perfdata(img, len, caps, sizeof(caps)), 0);
		assert_string_equal(caps, "0100000"); /* cut to the buffer */
	}
	/* Not there, or not a string. */
	len = perfdata(img, sizeof(img), 1, entries, 2);
	assert_int_equal(attach__parse_perfdata(img, len, caps, sizeof(caps)), -1);
	len = perfdata(img, sizeof(img), 1, (const struct pd_entry[]){ { "sun.rt.jvmCapabilities", 'J', "1" } }, 1);
	assert_int_equal(attach__parse_perfdata(img, len, caps, sizeof(caps)), -1);
}

static void perfdata_malformed(void **state)
{
	static const struct pd_entry entry[] = { { "sun.rt.jvmCapabilities", 'B', "1100" } };
	unsigned char img[256], copy[256];
	char caps[8];
	size_t len = perfdata(img, sizeof(img), 1, entry, 1);

	assert_int_equal(attach__parse_perfdata(img, len, caps, sizeof(caps)), 0);
	assert_string_equal(caps, "1100");
	/* Every cut of the image fails cleanly (ASan checks the reads). */
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *exact = malloc(cut ? cut : 1);

		memcpy(exact, img, cut);
		if (attach__parse_perfdata(exact, cut, caps, sizeof(caps)) != -1)
			fail_msg("accepted an image cut at %zu bytes", cut);
		free(exact);
	}
#define BROKEN(offset, value)                                                                   \
	do {                                                                                        \
		memcpy(copy, img, len);                                                             \
		put32(copy + (offset), (value), 1);                                                 \
		assert_int_equal(attach__parse_perfdata(copy, len, caps, sizeof(caps)), -1);         \
	} while (0)
	BROKEN(0, 0xdeadbeef);      /* magic */
	BROKEN(24, 0xfffffff0);     /* entry offset past the end */
	BROKEN(28, 0x7fffffff);     /* entry count */
	BROKEN(32, 0);              /* entry length 0: would loop */
	BROKEN(32, 0xffffffff);     /* entry length past the end */
	BROKEN(32 + 4, 0x1000);     /* name past the entry */
	BROKEN(32 + 8, 0x1000);     /* value past the entry */
	BROKEN(32 + 16, 0xffffffff); /* value offset past the entry */
#undef BROKEN
	/* A name with no terminator inside its entry. */
	memcpy(copy, img, len);
	memset(copy + 32 + 20, 'x', len - 32 - 20);
	assert_int_equal(attach__parse_perfdata(copy, len, caps, sizeof(caps)), -1);
	/* Byte order flag other than 0 or 1. */
	memcpy(copy, img, len);
	copy[4] = 2;
	assert_int_equal(attach__parse_perfdata(copy, len, caps, sizeof(caps)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reply_success_and_agent_codes),
		cmocka_unit_test(reply_jvm_errors_carry_the_jvm_text),
		cmocka_unit_test(reply_truncated_or_garbage),
		cmocka_unit_test(status_effective_ids_and_innermost_pid),
		cmocka_unit_test(status_missing_or_garbage_fields),
		cmocka_unit_test(disable_flag_on_the_command_line),
		cmocka_unit_test(disable_flag_in_option_variables),
		cmocka_unit_test(perfdata_capabilities),
		cmocka_unit_test(perfdata_malformed),
	};

	return cmocka_run_group_tests_name("attach parsers", tests, NULL, NULL);
}
