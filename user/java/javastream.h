/*
 * javastream: the agent's byte stream (jvmti-stub/stream.h) parsed into
 * checked messages.
 *
 * The agent runs inside a process the profiler does not trust, so every
 * header, count and length is checked against the limits in stream.h and
 * against the bytes actually received; a message that breaks them ends the
 * stream (-EPROTO) rather than being half-believed. Names are handed on
 * NUL-terminated, cut to JBPF_STREAM_MAX_NAME, with control characters and
 * ';' (the collapsed format's separator) replaced by '?'.
 *
 * javastream__parse works on a buffer and is what the tests drive;
 * javastream__read feeds it from a non-blocking socket.
 */
#ifndef JBPF_JAVASTREAM_H
#define JBPF_JAVASTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvmti-stub/stream.h"

/* Callbacks; any may be NULL. Pointers are valid only during the call. */
struct javastream_handler {
	void *ctx;
	void (*hello)(void *ctx, const struct jbpf_msg_hello *hello);
	void (*method)(void *ctx, uint64_t method_id, uint32_t flags, const char *name);
	void (*trace)(void *ctx, const struct jbpf_msg_trace *trace, const struct jbpf_trace_frame *frames);
	void (*thread)(void *ctx, uint32_t tid, const char *name);
	void (*code_load)(void *ctx, const struct jbpf_msg_code_load *load, const char *name);
	void (*code_unload)(void *ctx, const struct jbpf_msg_code_unload *unload);
	void (*stats)(void *ctx, const struct jbpf_msg_stats *stats);
	void (*error)(void *ctx, const char *text);
	void (*notice)(void *ctx, const char *text); /* one line for the user; the agent goes on */
	void (*flushed)(void *ctx);
	/* frames: stack->frame_count of them; tid is never 0. */
	void (*thread_stack)(void *ctx, const struct jbpf_msg_thread_stack *stack,
			     const struct jbpf_trace_frame *frames);
	/*
	 * frames: alloc->frame_count of them; class_name the allocated class,
	 * never empty; native: nr_native return addresses (JBPF_ALLOC_NATIVE),
	 * at most JBPF_ALLOC_MAX_NATIVE, or none.
	 */
	void (*alloc)(void *ctx, const struct jbpf_msg_alloc *alloc, const struct jbpf_trace_frame *frames,
		      const char *class_name, const uint64_t *native, uint32_t nr_native);
};

/*
 * Dispatches every complete message in buf[0..len). Returns the bytes
 * consumed (a trailing partial message is left for the next call), or
 * -EPROTO if the stream is malformed. Unknown message types are skipped.
 */
ssize_t javastream__parse(const void *buf, size_t len, const struct javastream_handler *handler);

/* Room for the largest message twice over, so a partial one always fits. */
#define JAVASTREAM_BUFFER (2 * (sizeof(struct jbpf_msg_header) + JBPF_STREAM_MAX_PAYLOAD))

struct javastream_reader {
	size_t len;
	uint8_t buf[JAVASTREAM_BUFFER];
};

/*
 * Bytes read per javastream__read at most: an agent that writes as fast as
 * the profiler reads must not keep it from its deadlines and signals. A
 * few milliseconds of parsing; the agent's normal output is far less per
 * poll wakeup.
 */
#define JAVASTREAM_READ_BUDGET (1u << 20)

/*
 * Reads what fd has (it must be non-blocking), JAVASTREAM_READ_BUDGET
 * bytes at most, and dispatches it. Returns 0 while the stream goes on (it
 * may have more: poll the fd, level-triggered, to come back for it), 1 at
 * its end (EOF), or a negative errno (-EPROTO for a malformed stream).
 */
int javastream__read(struct javastream_reader *reader, int fd, const struct javastream_handler *handler);

#endif /* JBPF_JAVASTREAM_H */
