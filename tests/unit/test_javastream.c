/*
 * javastream: the agent's stream is hostile input. Well-formed messages
 * arrive with their fields; partial ones wait; any size, count or length
 * that contradicts the bytes, or passes a limit, ends the stream; names are
 * bounded and made safe. A peer that writes as fast as it is read gets a
 * bounded share of each read, the rest waiting for the next.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "user/java/javastream.h"

struct seen {
	int hellos, methods, traces, threads, loads, unloads, flushed, stacks;
	struct jbpf_msg_thread_stack stack;
	struct jbpf_trace_frame stack_frames[JBPF_STREAM_MAX_FRAMES];
	uint64_t method_id, trace_seq, load_addr;
	char name[JBPF_STREAM_MAX_NAME + 1];
	uint32_t frame_count;
	uint64_t first_frame_method;
	int allocs;
	struct jbpf_msg_alloc alloc;
	char class_name[JBPF_STREAM_MAX_NAME + 1];
	uint64_t native[JBPF_ALLOC_MAX_NATIVE];
	uint32_t nr_native;
};

static void on_hello(void *ctx, const struct jbpf_msg_hello *m)
{
	struct seen *s = ctx;

	s->hellos++;
	assert_int_equal(m->version, JBPF_STREAM_VERSION);
}

static void on_method(void *ctx, uint64_t id, uint32_t flags, const char *name)
{
	struct seen *s = ctx;

	s->methods++;
	s->method_id = id;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

static void on_trace(void *ctx, const struct jbpf_msg_trace *t, const struct jbpf_trace_frame *frames)
{
	struct seen *s = ctx;

	s->traces++;
	s->trace_seq = t->seq;
	s->frame_count = t->frame_count;
	s->first_frame_method = t->frame_count ? frames[0].method_id : 0;
}

static void on_thread(void *ctx, uint32_t tid, const char *name)
{
	struct seen *s = ctx;

	s->threads++;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

static void on_load(void *ctx, const struct jbpf_msg_code_load *m, const char *name)
{
	struct seen *s = ctx;

	s->loads++;
	s->load_addr = m->addr;
}

static void on_flushed(void *ctx)
{
	((struct seen *)ctx)->flushed++;
}

static void on_stack(void *ctx, const struct jbpf_msg_thread_stack *m, const struct jbpf_trace_frame *frames)
{
	struct seen *s = ctx;

	s->stacks++;
	s->stack = *m;
	memcpy(s->stack_frames, frames, m->frame_count * sizeof(frames[0]));
}

static void on_alloc(void *ctx, const struct jbpf_msg_alloc *m, const struct jbpf_trace_frame *frames,
		     const char *class_name, const uint64_t *native, uint32_t nr_native)
{
	struct seen *s = ctx;

	assert_true(nr_native <= JBPF_ALLOC_MAX_NATIVE);
	s->nr_native = nr_native;
	memcpy(s->native, native, nr_native * sizeof(native[0]));
	s->allocs++;
	s->alloc = *m;
	memcpy(s->stack_frames, frames, m->frame_count * sizeof(frames[0]));
	snprintf(s->class_name, sizeof(s->class_name), "%s", class_name);
}

static struct javastream_handler handler(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return (struct javastream_handler){ .ctx = s, .hello = on_hello, .method = on_method, .trace = on_trace,
					     .thread = on_thread, .code_load = on_load, .flushed = on_flushed,
					     .thread_stack = on_stack, .alloc = on_alloc };
}

/* Appends one message to buf at *len. */
static void put(uint8_t *buf, size_t *len, uint32_t type, const void *payload, size_t size, const void *tail,
		size_t tail_size)
{
	struct jbpf_msg_header h = { .type = type, .size = (uint32_t)(size + tail_size) };

	memcpy(buf + *len, &h, sizeof(h));
	*len += sizeof(h);
	if (size)
		memcpy(buf + *len, payload, size);
	*len += size;
	if (tail_size)
		memcpy(buf + *len, tail, tail_size);
	*len += tail_size;
}

static size_t put_method(uint8_t *buf, size_t len, uint64_t id, const char *name)
{
	struct jbpf_msg_method m = { .method_id = id, .name_len = (uint32_t)strlen(name) };

	put(buf, &len, JBPF_MSG_METHOD, &m, sizeof(m), name, strlen(name));
	return len;
}

static void parses_each_message_type(void **state)
{
	static uint8_t buf[8192];
	struct jbpf_msg_hello hello = { .version = JBPF_STREAM_VERSION, .signo = 40 };
	struct jbpf_msg_trace t = { .seq = 77, .status = 2, .frame_count = 2 };
	struct jbpf_trace_frame frames[2] = { { .method_id = 5, .bci = 3 }, { .method_id = 6, .bci = 1 } };
	struct jbpf_msg_code_load load = { .addr = 0x1000, .size = 0x40, .kind = JBPF_CODE_NMETHOD, .method_id = 5 };
	struct jbpf_msg_thread th = { .tid = 9, .name_len = 4 };
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = 0;

	put(buf, &len, JBPF_MSG_HELLO, &hello, sizeof(hello), NULL, 0);
	len = put_method(buf, len, 5, "a.B.c");
	put(buf, &len, JBPF_MSG_TRACE, &t, sizeof(t), frames, sizeof(frames));
	put(buf, &len, JBPF_MSG_CODE_LOAD, &load, sizeof(load), NULL, 0);
	put(buf, &len, JBPF_MSG_THREAD, &th, sizeof(th), "main", 4);
	put(buf, &len, 99, "future", 6, NULL, 0); /* unknown types are skipped */
	put(buf, &len, JBPF_MSG_FLUSHED, NULL, 0, NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.hellos, 1);
	assert_int_equal(s.methods, 1);
	assert_int_equal(s.method_id, 5);
	assert_int_equal(s.traces, 1);
	assert_int_equal(s.trace_seq, 77);
	assert_int_equal(s.frame_count, 2);
	assert_int_equal(s.first_frame_method, 5);
	assert_int_equal(s.loads, 1);
	assert_int_equal(s.load_addr, 0x1000);
	assert_int_equal(s.threads, 1);
	assert_string_equal(s.name, "main");
	assert_int_equal(s.flushed, 1);
}

static int notices, errors;
static char notice_text[JBPF_STREAM_MAX_NAME + 1];

static void on_notice(void *ctx, const char *text)
{
	notices++;
	snprintf(notice_text, sizeof(notice_text), "%s", text);
}

static void on_error(void *ctx, const char *text)
{
	errors++;
}

/* A NOTICE goes to its own callback, never to the error one; a handler without one skips it. */
static void notices_are_not_errors(void **state)
{
	static uint8_t buf[256];
	struct jbpf_msg_error n = { .len = 6 };
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = 0;

	put(buf, &len, JBPF_MSG_NOTICE, &n, sizeof(n), "layout", 6);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	h.notice = on_notice;
	h.error = on_error;
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(notices, 1);
	assert_int_equal(errors, 0);
	assert_string_equal(notice_text, "layout");
	/* Its length must agree with its size, as an ERROR's. */
	n.len = 7;
	len = 0;
	put(buf, &len, JBPF_MSG_NOTICE, &n, sizeof(n), "layout", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
}

static void partial_message_waits_for_the_rest(void **state)
{
	static uint8_t buf[4096];
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = put_method(buf, 0, 1, "x.Y.z"), first;

	first = len;
	len = put_method(buf, len, 2, "x.Y.w");
	/* Everything but the last byte: the first message only. */
	assert_int_equal(javastream__parse(buf, len - 1, &h), (ssize_t)first);
	assert_int_equal(s.methods, 1);
	/* A header alone is not a message either. */
	assert_int_equal(javastream__parse(buf, sizeof(struct jbpf_msg_header), &h), 0);
}

static void names_are_bounded_and_made_safe(void **state)
{
	static uint8_t buf[4096];
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = put_method(buf, 0, 1, "a;b\nc\x01" "d");

	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_string_equal(s.name, "a?b?c?d");
}

static void contradictions_end_the_stream(void **state)
{
	static uint8_t buf[2 * JBPF_STREAM_MAX_PAYLOAD];
	struct seen s;
	struct javastream_handler h = handler(&s);
	struct jbpf_msg_header big = { .type = JBPF_MSG_METHOD, .size = JBPF_STREAM_MAX_PAYLOAD + 1 };
	struct jbpf_msg_method m = { .method_id = 1, .name_len = 100 };
	struct jbpf_msg_trace t = { .seq = 1, .status = 3, .frame_count = 2 };
	struct jbpf_msg_trace deep = { .seq = 1, .status = JBPF_STREAM_MAX_FRAMES + 1,
				       .frame_count = JBPF_STREAM_MAX_FRAMES + 1 };
	struct jbpf_trace_frame frames[2] = { { 0 } };
	struct jbpf_msg_code_load wrap = { .addr = UINT64_MAX - 4, .size = 16, .kind = JBPF_CODE_STUB };
	size_t len;

	/* A payload over the limit, even before its bytes arrive. */
	memcpy(buf, &big, sizeof(big));
	assert_int_equal(javastream__parse(buf, sizeof(big), &h), -EPROTO);
	/* A name longer than its message. */
	len = 0;
	put(buf, &len, JBPF_MSG_METHOD, &m, sizeof(m), "short", 5);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* A status that disagrees with the frame count. */
	len = 0;
	put(buf, &len, JBPF_MSG_TRACE, &t, sizeof(t), frames, sizeof(frames));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* More frames than allowed, however the sizes add up. */
	len = 0;
	put(buf, &len, JBPF_MSG_TRACE, &deep, sizeof(deep), NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* Code that wraps around the address space. */
	len = 0;
	put(buf, &len, JBPF_MSG_CODE_LOAD, &wrap, sizeof(wrap), NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* A payload too short for its type. */
	len = 0;
	put(buf, &len, JBPF_MSG_HELLO, "x", 1, NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	assert_int_equal(s.methods + s.traces + s.loads + s.hellos, 0);
}

/* Two frames, the innermost a native method (bci -3), as the agent sends GetAllStackTraces's. */
static void thread_stacks_arrive_with_their_frames(void **state)
{
	static uint8_t buf[2 * JBPF_STREAM_MAX_PAYLOAD];
	struct jbpf_msg_thread_stack st = { .tid = 4321, .jvmti_state = 0x191, .frame_count = 2 };
	struct jbpf_msg_thread_stack bare = { .tid = 4322, .jvmti_state = 0x15 };
	struct jbpf_msg_thread_stack deep = { .tid = 4323, .frame_count = JBPF_STREAM_MAX_FRAMES,
					      .flags = JBPF_TRACE_TRUNCATED };
	struct jbpf_trace_frame frames[2] = { { .method_id = 11, .bci = -3 }, { .method_id = 12, .bci = 7 } };
	static struct jbpf_trace_frame many[JBPF_STREAM_MAX_FRAMES];
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = 0;

	len = put_method(buf, len, 11, "java.lang.Thread.sleep0");
	put(buf, &len, JBPF_MSG_THREAD_STACK, &st, sizeof(st), frames, sizeof(frames));
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.stacks, 1);
	assert_int_equal(s.stack.tid, 4321);
	assert_int_equal(s.stack.jvmti_state, 0x191);
	assert_int_equal(s.stack.frame_count, 2);
	assert_int_equal(s.stack_frames[0].method_id, 11);
	assert_int_equal(s.stack_frames[0].bci, -3);
	assert_int_equal(s.stack_frames[1].method_id, 12);
	assert_int_equal(s.stack_frames[1].bci, 7);

	/* A thread with no Java frame still has its message. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &bare, sizeof(bare), NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.stacks, 2);
	assert_int_equal(s.stack.tid, 4322);
	assert_int_equal(s.stack.frame_count, 0);

	/* The deepest one fits a payload, and waits whole for its last byte. */
	for (int i = 0; i < JBPF_STREAM_MAX_FRAMES; i++)
		many[i] = (struct jbpf_trace_frame){ .method_id = 100 + (uint64_t)i, .bci = i };
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &deep, sizeof(deep), many, sizeof(many));
	assert_int_equal(javastream__parse(buf, len - 1, &h), 0);
	assert_int_equal(s.stacks, 2);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.stacks, 3);
	assert_int_equal(s.stack.flags, JBPF_TRACE_TRUNCATED);
	assert_int_equal(s.stack_frames[JBPF_STREAM_MAX_FRAMES - 1].method_id, 100 + JBPF_STREAM_MAX_FRAMES - 1);
}

static void malformed_thread_stacks_end_the_stream(void **state)
{
	static uint8_t buf[2 * JBPF_STREAM_MAX_PAYLOAD];
	static struct jbpf_trace_frame many[JBPF_STREAM_MAX_FRAMES + 1];
	struct jbpf_trace_frame frames[3] = { { .method_id = 1 } };
	struct jbpf_msg_thread_stack two = { .tid = 5, .frame_count = 2 };
	struct jbpf_msg_thread_stack no_tid = { .tid = 0, .frame_count = 1 };
	struct jbpf_msg_thread_stack too_deep = { .tid = 5, .frame_count = JBPF_STREAM_MAX_FRAMES + 1 };
	struct jbpf_msg_thread_stack huge = { .tid = 5, .frame_count = UINT32_MAX };
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len;

	/* Fewer frame bytes than the count says. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &two, sizeof(two), frames, sizeof(frames[0]));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* More. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &two, sizeof(two), frames, sizeof(frames));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* Half a frame more. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &two, sizeof(two), frames, 2 * sizeof(frames[0]) + 8);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* Over the depth limit, with the bytes to match. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &too_deep, sizeof(too_deep), many, sizeof(many));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* A count whose byte size would wrap a 32-bit multiplication. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &huge, sizeof(huge), NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* No thread has tid 0. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &no_tid, sizeof(no_tid), frames, sizeof(frames[0]));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	/* Shorter than its fixed part. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &two, sizeof(two) - 1, NULL, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	assert_int_equal(s.stacks, 0);
	/* A good one after a bad one is never reached: the stream has ended. */
	len = 0;
	put(buf, &len, JBPF_MSG_THREAD_STACK, &no_tid, sizeof(no_tid), frames, sizeof(frames[0]));
	put(buf, &len, JBPF_MSG_THREAD_STACK, &two, sizeof(two), frames, 2 * sizeof(frames[0]));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	assert_int_equal(s.stacks, 0);
}

/* An ALLOC: its fixed part, its frames, then its class's name, each bounded by the bytes received. */
static void put_alloc(uint8_t *buf, size_t *len, const struct jbpf_msg_alloc *a, const struct jbpf_trace_frame *frames,
		      size_t frames_size, const char *name, size_t name_size)
{
	static uint8_t tail[JBPF_STREAM_MAX_PAYLOAD];

	memcpy(tail, frames, frames_size);
	memcpy(tail + frames_size, name, name_size);
	put(buf, len, JBPF_MSG_ALLOC, a, sizeof(*a), tail, frames_size + name_size);
}

static void allocations_arrive_with_their_class(void **state)
{
	static uint8_t buf[2 * JBPF_STREAM_MAX_PAYLOAD];
	static struct jbpf_trace_frame many[JBPF_STREAM_MAX_FRAMES + 1];
	struct jbpf_trace_frame frames[2] = { { .method_id = 7, .bci = 3 }, { .method_id = 8, .bci = -3 } };
	struct jbpf_msg_alloc good = { .size = 1040, .tid = 9, .frame_count = 2, .class_len = 6, .interval = 524288 };
	struct jbpf_msg_alloc bad;
	char long_name[JBPF_STREAM_MAX_NAME + 1];
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = 0;

	(void)state;
	put_alloc(buf, &len, &good, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.allocs, 1);
	assert_int_equal(s.alloc.size, 1040);
	assert_int_equal(s.alloc.interval, 524288);
	assert_int_equal(s.stack_frames[1].method_id, 8);
	assert_string_equal(s.class_name, "long[]");
	/* A name with a separator or a control character is made safe. */
	len = 0;
	bad = good;
	bad.class_len = 5;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "a;b\nc", 5);
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_string_equal(s.class_name, "a?b?c");

	/* Each contradiction ends the stream, and nothing reaches the handler. */
	h = handler(&s);
	bad = good;
	bad.frame_count = 3; /* more frames than sent */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.class_len = 7; /* a name longer than the bytes left */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.class_len = 0; /* no class */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "", 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.interval = 0; /* a weight that cannot be computed */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.tid = 0;
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.frame_count = JBPF_STREAM_MAX_FRAMES + 1; /* past the depth limit, with the bytes to match */
	len = 0;
	put_alloc(buf, &len, &bad, many, sizeof(many), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	bad = good;
	bad.frame_count = UINT32_MAX; /* a count whose byte size wraps 32 bits */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), "long[]", 6);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	memset(long_name, 'x', sizeof(long_name));
	bad = good;
	bad.class_len = JBPF_STREAM_MAX_NAME + 1; /* past the name limit */
	len = 0;
	put_alloc(buf, &len, &bad, frames, sizeof(frames), long_name, sizeof(long_name));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	len = 0;
	put(buf, &len, JBPF_MSG_ALLOC, &good, sizeof(good) - 1, NULL, 0); /* shorter than its fixed part */
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	assert_int_equal(s.allocs, 0);
}

/* An ALLOC made by native code: its name, then size bytes of return addresses (pcs). */
static void put_native_alloc(uint8_t *buf, size_t *len, const struct jbpf_msg_alloc *a, const uint64_t *pcs,
			     size_t size)
{
	static uint8_t tail[JBPF_STREAM_MAX_PAYLOAD];

	memcpy(tail, "byte[]", 6);
	memcpy(tail + 6, pcs, size);
	put(buf, len, JBPF_MSG_ALLOC, a, sizeof(*a), tail, 6 + size);
}

static void native_frames_fill_what_the_name_leaves(void **state)
{
	static uint8_t buf[2 * JBPF_STREAM_MAX_PAYLOAD];
	uint64_t pcs[JBPF_ALLOC_MAX_NATIVE + 1];
	struct jbpf_msg_alloc good = { .size = 4112, .tid = 9, .class_len = 6, .interval = 524288,
				       .flags = JBPF_ALLOC_NATIVE };
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++)
		pcs[i] = 0x7f0000001000 + 16 * i;
	put_native_alloc(buf, &len, &good, pcs, 2 * sizeof(pcs[0]));
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.allocs, 1);
	assert_string_equal(s.class_name, "byte[]");
	assert_int_equal(s.nr_native, 2);
	assert_true(s.native[0] == pcs[0] && s.native[1] == pcs[1]);
	len = 0;
	put_native_alloc(buf, &len, &good, pcs, JBPF_ALLOC_MAX_NATIVE * sizeof(pcs[0]));
	assert_int_equal(javastream__parse(buf, len, &h), (ssize_t)len);
	assert_int_equal(s.nr_native, JBPF_ALLOC_MAX_NATIVE);
	assert_true(s.native[JBPF_ALLOC_MAX_NATIVE - 1] == pcs[JBPF_ALLOC_MAX_NATIVE - 1]);

	/* Flagged with none, with too many, with a piece of one; or not flagged and some anyway. */
	h = handler(&s);
	len = 0;
	put_native_alloc(buf, &len, &good, pcs, 0);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	len = 0;
	put_native_alloc(buf, &len, &good, pcs, sizeof(pcs));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	len = 0;
	put_native_alloc(buf, &len, &good, pcs, sizeof(pcs[0]) + 4);
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	good.flags = 0;
	len = 0;
	put_native_alloc(buf, &len, &good, pcs, sizeof(pcs[0]));
	assert_int_equal(javastream__parse(buf, len, &h), -EPROTO);
	assert_int_equal(s.allocs, 0);
}

static void reads_a_socket_in_pieces(void **state)
{
	static uint8_t buf[4096];
	static struct javastream_reader reader;
	struct seen s;
	struct javastream_handler h = handler(&s);
	size_t len = put_method(buf, 0, 1, "p.Q.r");
	int sv[2];

	len = put_method(buf, len, 2, "p.Q.s");
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(write(sv[1], buf, 7), 7);
	assert_int_equal(javastream__read(&reader, sv[0], &h), 0);
	assert_int_equal(s.methods, 0);
	assert_int_equal(write(sv[1], buf + 7, len - 7), (ssize_t)(len - 7));
	assert_int_equal(javastream__read(&reader, sv[0], &h), 0);
	assert_int_equal(s.methods, 2);
	assert_string_equal(s.name, "p.Q.s");
	close(sv[1]);
	assert_int_equal(javastream__read(&reader, sv[0], &h), 1);
	close(sv[0]);
}

/*
 * A peer that keeps up: every message read makes it write one more, until
 * FLOOD_TOTAL bytes were written.
 */
#define FLOOD_NAME 1000
#define FLOOD_TOTAL (16u * JAVASTREAM_READ_BUDGET)

struct flood {
	int fd;               /* the peer's end */
	uint8_t msg[sizeof(struct jbpf_msg_header) + sizeof(struct jbpf_msg_method) + FLOOD_NAME];
	size_t msg_len;
	size_t written, methods_written, methods_read;
};

static void flood_write(struct flood *f)
{
	if (f->written < FLOOD_TOTAL && write(f->fd, f->msg, f->msg_len) == (ssize_t)f->msg_len) {
		f->written += f->msg_len;
		f->methods_written++;
	}
}

static void flood_on_method(void *ctx, uint64_t id, uint32_t flags, const char *name)
{
	struct flood *f = ctx;

	(void)id, (void)flags, (void)name;
	f->methods_read++;
	flood_write(f);
}

static void a_peer_that_keeps_up_gets_a_bounded_share(void **state)
{
	static struct javastream_reader reader;
	static struct flood f;
	struct javastream_handler h = { .ctx = &f, .method = flood_on_method };
	char name[FLOOD_NAME + 1];
	size_t first_read;
	int sv[2], calls = 0;

	memset(name, 'm', FLOOD_NAME);
	name[FLOOD_NAME] = '\0';
	f.msg_len = put_method(f.msg, 0, 7, name);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	f.fd = sv[1];
	for (int i = 0; i < 64; i++)
		flood_write(&f);
	assert_int_equal(javastream__read(&reader, sv[0], &h), 0);
	first_read = f.methods_read * f.msg_len;
	/* Returned while the peer still had more to say, and it was not lost. */
	assert_true(first_read <= JAVASTREAM_READ_BUDGET + sizeof(reader.buf));
	assert_true(f.written < FLOOD_TOTAL);
	while ((f.written < FLOOD_TOTAL || f.methods_read < f.methods_written) && calls++ < 10000) {
		if (f.methods_read == f.methods_written)
			flood_write(&f);
		assert_int_equal(javastream__read(&reader, sv[0], &h), 0);
	}
	assert_true(f.written >= FLOOD_TOTAL);
	assert_int_equal(f.methods_read, f.methods_written);
	close(sv[1]);
	assert_int_equal(javastream__read(&reader, sv[0], &h), 1);
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_each_message_type),
		cmocka_unit_test(notices_are_not_errors),
		cmocka_unit_test(a_peer_that_keeps_up_gets_a_bounded_share),
		cmocka_unit_test(partial_message_waits_for_the_rest),
		cmocka_unit_test(names_are_bounded_and_made_safe),
		cmocka_unit_test(contradictions_end_the_stream),
		cmocka_unit_test(thread_stacks_arrive_with_their_frames),
		cmocka_unit_test(malformed_thread_stacks_end_the_stream),
		cmocka_unit_test(allocations_arrive_with_their_class),
		cmocka_unit_test(native_frames_fill_what_the_name_leaves),
		cmocka_unit_test(reads_a_socket_in_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
