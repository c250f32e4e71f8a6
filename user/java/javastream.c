/*
 * javastream: parsing the agent's stream (contract in javastream.h).
 */
#include "javastream.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* A name from the agent, bounded, terminated and made safe to print. */
static void copy_name(char *dst, const uint8_t *src, size_t len)
{
	if (len > JBPF_STREAM_MAX_NAME)
		len = JBPF_STREAM_MAX_NAME;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = src[i];

		dst[i] = (c < 0x20 || c == 0x7f || c == ';') ? '?' : (char)c;
	}
	dst[len] = '\0';
}

/*
 * The name that follows a message's fixed part of fixed_size bytes: it must
 * take the rest of the payload exactly. Returns 0 with the name in dst, or
 * -EPROTO.
 */
static int name_after(const uint8_t *p, size_t size, size_t fixed_size, uint32_t name_len, char *dst)
{
	if (name_len > JBPF_STREAM_MAX_NAME || size != fixed_size + name_len)
		return -EPROTO;
	copy_name(dst, p + fixed_size, name_len);
	return 0;
}

/* One message's payload; returns 0, or -EPROTO if it contradicts its size. */
static int dispatch(uint32_t type, const uint8_t *p, size_t size, const struct javastream_handler *h)
{
	char name[JBPF_STREAM_MAX_NAME + 1];

	switch (type) {
	case JBPF_MSG_HELLO: {
		struct jbpf_msg_hello m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (h->hello)
			h->hello(h->ctx, &m);
		return 0;
	}
	case JBPF_MSG_METHOD: {
		struct jbpf_msg_method m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (name_after(p, size, sizeof(m), m.name_len, name))
			return -EPROTO;
		if (h->method)
			h->method(h->ctx, m.method_id, m.flags, name);
		return 0;
	}
	case JBPF_MSG_TRACE: {
		struct jbpf_trace_frame frames[JBPF_STREAM_MAX_FRAMES];
		struct jbpf_msg_trace m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (m.frame_count > JBPF_STREAM_MAX_FRAMES ||
		    size != sizeof(m) + (size_t)m.frame_count * sizeof(frames[0]))
			return -EPROTO;
		/* A positive status is the frame count; anything else carries none. */
		if ((m.status > 0 && (uint32_t)m.status != m.frame_count) || (m.status <= 0 && m.frame_count))
			return -EPROTO;
		memcpy(frames, p + sizeof(m), (size_t)m.frame_count * sizeof(frames[0]));
		if (h->trace)
			h->trace(h->ctx, &m, frames);
		return 0;
	}
	case JBPF_MSG_THREAD: {
		struct jbpf_msg_thread m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (name_after(p, size, sizeof(m), m.name_len, name))
			return -EPROTO;
		if (h->thread)
			h->thread(h->ctx, m.tid, name);
		return 0;
	}
	case JBPF_MSG_CODE_LOAD: {
		struct jbpf_msg_code_load m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (name_after(p, size, sizeof(m), m.name_len, name))
			return -EPROTO;
		if (m.kind != JBPF_CODE_NMETHOD && m.kind != JBPF_CODE_STUB)
			return -EPROTO;
		/* A blob wrapping around the address space is no blob. */
		if (m.size == 0 || m.addr + m.size < m.addr)
			return -EPROTO;
		if (h->code_load)
			h->code_load(h->ctx, &m, name);
		return 0;
	}
	case JBPF_MSG_CODE_UNLOAD: {
		struct jbpf_msg_code_unload m;

		if (size != sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (h->code_unload)
			h->code_unload(h->ctx, &m);
		return 0;
	}
	case JBPF_MSG_STATS: {
		struct jbpf_msg_stats m = { 0 };

		/* An agent without the allocation counters ends the struct before them. */
		if (size < offsetof(struct jbpf_msg_stats, allocs))
			return -EPROTO;
		memcpy(&m, p, size < sizeof(m) ? size : sizeof(m));
		if (h->stats)
			h->stats(h->ctx, &m);
		return 0;
	}
	case JBPF_MSG_ERROR:
	case JBPF_MSG_NOTICE: {
		struct jbpf_msg_error m;
		void (*cb)(void *, const char *) = type == JBPF_MSG_ERROR ? h->error : h->notice;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (name_after(p, size, sizeof(m), m.len, name))
			return -EPROTO;
		if (cb)
			cb(h->ctx, name);
		return 0;
	}
	case JBPF_MSG_FLUSHED:
		if (h->flushed)
			h->flushed(h->ctx);
		return 0;
	case JBPF_MSG_THREAD_STACK: {
		struct jbpf_trace_frame frames[JBPF_STREAM_MAX_FRAMES];
		struct jbpf_msg_thread_stack m;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (m.tid == 0 || m.frame_count > JBPF_STREAM_MAX_FRAMES ||
		    size != sizeof(m) + (size_t)m.frame_count * sizeof(frames[0]))
			return -EPROTO;
		memcpy(frames, p + sizeof(m), (size_t)m.frame_count * sizeof(frames[0]));
		if (h->thread_stack)
			h->thread_stack(h->ctx, &m, frames);
		return 0;
	}
	case JBPF_MSG_ALLOC: {
		struct jbpf_trace_frame frames[JBPF_STREAM_MAX_FRAMES];
		uint64_t native[JBPF_ALLOC_MAX_NATIVE];
		struct jbpf_msg_alloc m;
		size_t frames_size, named_size, native_size = 0;

		if (size < sizeof(m))
			return -EPROTO;
		memcpy(&m, p, sizeof(m));
		if (m.tid == 0 || m.frame_count > JBPF_STREAM_MAX_FRAMES || !m.interval ||
		    m.class_len > JBPF_STREAM_MAX_NAME)
			return -EPROTO;
		frames_size = (size_t)m.frame_count * sizeof(frames[0]);
		named_size = sizeof(m) + frames_size + m.class_len;
		/* Native frames fill what the name leaves: one at least, a whole number, not too many. */
		if (m.flags & JBPF_ALLOC_NATIVE) {
			if (size <= named_size || (size - named_size) % sizeof(native[0]) ||
			    size - named_size > sizeof(native))
				return -EPROTO;
			native_size = size - named_size;
		}
		if (name_after(p, size - native_size, sizeof(m) + frames_size, m.class_len, name) || !m.class_len)
			return -EPROTO;
		memcpy(frames, p + sizeof(m), frames_size);
		memcpy(native, p + named_size, native_size);
		if (h->alloc)
			h->alloc(h->ctx, &m, frames, name, native, (uint32_t)(native_size / sizeof(native[0])));
		return 0;
	}
	default:
		return 0; /* a later agent's message: its size says how far to skip */
	}
}

ssize_t javastream__parse(const void *buf, size_t len, const struct javastream_handler *handler)
{
	const uint8_t *p = buf;
	size_t used = 0;

	while (len - used >= sizeof(struct jbpf_msg_header)) {
		struct jbpf_msg_header hdr;

		memcpy(&hdr, p + used, sizeof(hdr));
		if (hdr.size > JBPF_STREAM_MAX_PAYLOAD)
			return -EPROTO;
		if (len - used - sizeof(hdr) < hdr.size)
			break;
		if (dispatch(hdr.type, p + used + sizeof(hdr), hdr.size, handler))
			return -EPROTO;
		used += sizeof(hdr) + hdr.size;
	}
	return (ssize_t)used;
}

int javastream__read(struct javastream_reader *reader, int fd, const struct javastream_handler *handler)
{
	size_t taken = 0;

	while (taken < JAVASTREAM_READ_BUDGET) {
		ssize_t n = read(fd, reader->buf + reader->len, sizeof(reader->buf) - reader->len);
		ssize_t used;

		if (n == 0)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		taken += (size_t)n;
		reader->len += (size_t)n;
		used = javastream__parse(reader->buf, reader->len, handler);
		if (used < 0)
			return (int)used;
		memmove(reader->buf, reader->buf + used, reader->len - (size_t)used);
		reader->len -= (size_t)used;
	}
	/* More may wait: a level-triggered poll reports the socket again at once. */
	return 0;
}
