/*
 * agent_error: the error of an agent that connected after a failed load
 * (contract in agent_error.h). The handler has the error callback only,
 * so the other messages, which would need a JVM's state, are parsed and
 * dropped by the stream reader.
 */
#include "agent_error.h"

#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/terminal.h"
#include "user/java/javastream.h"

struct said {
	char *out;
	size_t size;
	bool error;
};

static void on_error(void *ctx, const char *text)
{
	struct said *said = ctx;

	terminal__safe(text, said->out, said->size);
	said->error = true;
}

int agent_error__read(int fd, int timeout_ms, char *out, size_t size)
{
	struct javastream_reader *reader = malloc(sizeof(*reader));
	struct said said = { .out = out, .size = size };
	struct javastream_handler handler = { .ctx = &said, .error = on_error };
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (!reader || !size) {
		free(reader);
		return -1;
	}
	reader->len = 0;
	if (poll(&p, 1, timeout_ms) > 0)
		javastream__read(reader, fd, &handler);
	free(reader);
	return said.error ? 0 : -1;
}
