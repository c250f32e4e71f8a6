/*
 * agent_error (user/java/agent_error.c): after a load the JVM reported as
 * failed, the agent's connection is read for its error alone. An agent
 * that started anyway sends its hello, methods, code blobs and threads
 * first (a JVM exiting during its attach): they are dropped, never handed
 * to a JVM's state that does not exist, and the error comes out made safe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "user/java/agent_error.h"
#include "user/java/javastream.h"

/* Appends one message (header, fixed part, name) to buf at *len. */
static void put(uint8_t *buf, size_t *len, uint32_t type, const void *fixed, size_t size, const char *name)
{
	size_t name_len = name ? strlen(name) : 0;
	struct jbpf_msg_header h = { .type = type, .size = (uint32_t)(size + name_len) };

	memcpy(buf + *len, &h, sizeof(h));
	*len += sizeof(h);
	memcpy(buf + *len, fixed, size);
	*len += size;
	if (name_len)
		memcpy(buf + *len, name, name_len);
	*len += name_len;
}

/* An agent's whole start, then its error, on one end of a socket pair; the other end is read. */
static int read_after(const uint8_t *stream, size_t len, char *out, size_t size)
{
	int sv[2], rc;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], stream, len), (ssize_t)len);
	close(sv[1]);
	rc = agent_error__read(sv[0], 1000, out, size);
	close(sv[0]);
	return rc;
}

static void error_after_an_agents_start_is_taken_alone(void **state)
{
	struct jbpf_msg_hello hello = { .version = JBPF_STREAM_VERSION, .signo = 40, .pid = 1234 };
	struct jbpf_msg_method method = { .method_id = 0x1000, .name_len = (uint32_t)strlen("A.run()V") };
	struct jbpf_msg_code_load load = { .addr = 0x7f0000001000, .size = 64, .kind = JBPF_CODE_STUB,
					      .name_len = (uint32_t)strlen("Interpreter") };
	struct jbpf_msg_thread thread = { .tid = 99, .name_len = (uint32_t)strlen("main") };
	const char *said = "no JVMTI\x1b[31m env there";
	struct jbpf_msg_error error = { .len = (uint32_t)strlen(said) };
	uint8_t stream[1024];
	char out[256] = "";
	size_t len = 0;

	put(stream, &len, JBPF_MSG_HELLO, &hello, sizeof(hello), NULL);
	put(stream, &len, JBPF_MSG_METHOD, &method, sizeof(method), "A.run()V");
	put(stream, &len, JBPF_MSG_CODE_LOAD, &load, sizeof(load), "Interpreter");
	put(stream, &len, JBPF_MSG_THREAD, &thread, sizeof(thread), "main");
	put(stream, &len, JBPF_MSG_ERROR, &error, sizeof(error), said);
	assert_int_equal(read_after(stream, len, out, sizeof(out)), 0);
	/* The escape is not passed on to a terminal. */
	assert_null(strchr(out, '\x1b'));
	assert_non_null(strstr(out, "no JVMTI"));
	assert_non_null(strstr(out, "env there"));
}

static void start_without_an_error_says_nothing(void **state)
{
	struct jbpf_msg_hello hello = { .version = JBPF_STREAM_VERSION, .signo = 40, .pid = 1234 };
	struct jbpf_msg_code_load load = { .addr = 0x7f0000001000, .size = 64, .kind = JBPF_CODE_STUB,
					      .name_len = (uint32_t)strlen("Interpreter") };
	uint8_t stream[256];
	char out[64] = "untouched";
	size_t len = 0;

	put(stream, &len, JBPF_MSG_HELLO, &hello, sizeof(hello), NULL);
	put(stream, &len, JBPF_MSG_CODE_LOAD, &load, sizeof(load), "Interpreter");
	assert_int_equal(read_after(stream, len, out, sizeof(out)), -1);
	assert_string_equal(out, "untouched");
	/* Nothing at all, the connection closed. */
	assert_int_equal(read_after(stream, 0, out, sizeof(out)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(error_after_an_agents_start_is_taken_alone),
		cmocka_unit_test(start_without_an_error_says_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
