/*
 * emit: message encoding into the outbox (contract in emit.h).
 *
 * Messages are built in a caller's buffer sized by the *_MAX bounds in
 * emit.h, then appended in one piece. Names are cut to
 * JBPF_STREAM_MAX_NAME bytes; payloads are copied with memcpy since the
 * stream's structs are unaligned in the byte stream.
 */
#include "emit.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "names.h"

struct msgbuf {
	char *data;
	size_t len, cap;
};

/*
 * Appends one message: header, fixed part, tail bytes, then name bytes
 * (an ALLOC's frames, then its class). Sizes are checked by the callers'
 * bounds.
 */
/* One piece of a message's payload. */
struct part {
	const void *bytes;
	size_t len;
};

/* Appends one message: header, then its parts in order. */
static void put_parts(struct msgbuf *b, uint32_t type, const struct part *parts, size_t nr)
{
	struct jbpf_msg_header h = { .type = type };
	char *at;

	for (size_t i = 0; i < nr; i++)
		h.size += (uint32_t)parts[i].len;
	if (b->cap - b->len < sizeof(h) + h.size)
		return; /* cannot happen with the *_MAX bounds; a short batch is still whole messages */
	memcpy(b->data + b->len, &h, sizeof(h));
	at = b->data + b->len + sizeof(h);
	for (size_t i = 0; i < nr; i++) {
		if (parts[i].len)
			memcpy(at, parts[i].bytes, parts[i].len);
		at += parts[i].len;
	}
	b->len += sizeof(h) + h.size;
}

/* Appends one message: header, fixed part, then tail bytes. */
static void put_msg(struct msgbuf *b, uint32_t type, const void *fixed, size_t fixed_len, const void *tail,
		    size_t tail_len)
{
	const struct part parts[] = { { fixed, fixed_len }, { tail, tail_len } };

	put_parts(b, type, parts, 2);
}

/* A METHOD for method, resolved now. */
static void put_method(struct msgbuf *b, jvmtiEnv *jvmti, JNIEnv *jni, uint64_t method)
{
	char name[JBPF_STREAM_MAX_NAME + 1];
	struct jbpf_msg_method m = { .method_id = method };

	m.name_len = (uint32_t)names__resolve(jvmti, jni, (jmethodID)(uintptr_t)method, name, sizeof(name),
					      &m.flags);
	put_msg(b, JBPF_MSG_METHOD, &m, sizeof(m), name, m.name_len);
}

/*
 * The METHODs still owed for scratch->ids[0..n), into b; their ids are
 * left in scratch->unnamed for the append that names them. Their number.
 */
static size_t put_unnamed(struct msgbuf *b, jvmtiEnv *jvmti, JNIEnv *jni, struct emit_scratch *scratch, size_t n)
{
	size_t n_unnamed = outbox__unnamed(scratch->ids, n, scratch->unnamed);

	for (size_t i = 0; i < n_unnamed; i++)
		put_method(b, jvmti, jni, scratch->unnamed[i]);
	return n_unnamed;
}

static size_t bounded_len(const char *s)
{
	return s ? strnlen(s, JBPF_STREAM_MAX_NAME) : 0;
}

uint64_t emit__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t emit__hello(void *buf, uint32_t signo, const char *vm_version)
{
	struct msgbuf b = { .data = buf, .cap = EMIT_HELLO_SIZE };
	struct jbpf_msg_hello h = {
		.version = JBPF_STREAM_VERSION,
		.signo = signo,
		.pid = (uint32_t)getpid(),
		.max_frames = JBPF_STREAM_MAX_FRAMES,
	};

	/* NUL-padded, not terminated when all 64 bytes are used. */
	if (vm_version)
		memcpy(h.vm_version, vm_version, strnlen(vm_version, sizeof(h.vm_version)));
	put_msg(&b, JBPF_MSG_HELLO, &h, sizeof(h), NULL, 0);
	return b.len;
}

size_t emit__error(void *buf, const char *text)
{
	struct msgbuf b = { .data = buf, .cap = EMIT_ERROR_MAX };
	struct jbpf_msg_error e = { .len = (uint32_t)bounded_len(text) };

	put_msg(&b, JBPF_MSG_ERROR, &e, sizeof(e), text, e.len);
	return b.len;
}

void emit__notice(const char *text)
{
	char buf[EMIT_ERROR_MAX];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };
	struct jbpf_msg_error e = { .len = (uint32_t)bounded_len(text) };

	put_msg(&b, JBPF_MSG_NOTICE, &e, sizeof(e), text, e.len);
	outbox__append(b.data, b.len, OUTBOX_LIMIT, NULL, 0);
}

void emit__thread(uint32_t tid, const char *name)
{
	char buf[EMIT_HEADER + sizeof(struct jbpf_msg_thread) + JBPF_STREAM_MAX_NAME];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };
	struct jbpf_msg_thread t = { .tid = tid, .name_len = (uint32_t)bounded_len(name) };

	put_msg(&b, JBPF_MSG_THREAD, &t, sizeof(t), name, t.name_len);
	outbox__append(b.data, b.len, OUTBOX_LIMIT, NULL, 0);
}

void emit__nmethod_load(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, const void *addr, jint size)
{
	char buf[EMIT_METHOD_MAX + EMIT_HEADER + sizeof(struct jbpf_msg_code_load)];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };
	uint64_t id = (uint64_t)(uintptr_t)method, unnamed;
	size_t n = outbox__unnamed(&id, 1, &unnamed);
	struct jbpf_msg_code_load c = {
		.addr = (uint64_t)(uintptr_t)addr,
		.size = size > 0 ? (uint64_t)size : 0,
		.time_ns = emit__now_ns(),
		.method_id = id,
		.kind = JBPF_CODE_NMETHOD,
	};

	if (n)
		put_method(&b, jvmti, jni, id);
	put_msg(&b, JBPF_MSG_CODE_LOAD, &c, sizeof(c), NULL, 0);
	outbox__append(b.data, b.len, OUTBOX_LIMIT, &unnamed, n);
}

void emit__stub_load(const char *name, const void *addr, jint size)
{
	char buf[EMIT_HEADER + sizeof(struct jbpf_msg_code_load) + JBPF_STREAM_MAX_NAME];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };
	struct jbpf_msg_code_load c = {
		.addr = (uint64_t)(uintptr_t)addr,
		.size = size > 0 ? (uint64_t)size : 0,
		.time_ns = emit__now_ns(),
		.kind = JBPF_CODE_STUB,
		.name_len = (uint32_t)bounded_len(name),
	};

	put_msg(&b, JBPF_MSG_CODE_LOAD, &c, sizeof(c), name, c.name_len);
	outbox__append(b.data, b.len, OUTBOX_LIMIT, NULL, 0);
}

void emit__code_unload(jmethodID method, const void *addr)
{
	char buf[EMIT_HEADER + sizeof(struct jbpf_msg_code_unload)];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };
	struct jbpf_msg_code_unload u = {
		.addr = (uint64_t)(uintptr_t)addr,
		.time_ns = emit__now_ns(),
		.method_id = (uint64_t)(uintptr_t)method,
	};

	put_msg(&b, JBPF_MSG_CODE_UNLOAD, &u, sizeof(u), NULL, 0);
	outbox__append(b.data, b.len, OUTBOX_LIMIT, NULL, 0);
}

void emit__trace(jvmtiEnv *jvmti, JNIEnv *jni, const struct ring_slot *slot, struct emit_scratch *scratch)
{
	struct msgbuf b = { .data = scratch->batch, .cap = sizeof(scratch->batch) };
	struct jbpf_msg_trace t = {
		.seq = slot->seq,
		.time_ns = slot->time_ns,
		.tid = slot->tid,
		.status = slot->num_frames,
		.flags = slot->how & (JBPF_TRACE_FROM_ANCHOR | JBPF_TRACE_FROM_CALLER),
	};
	struct jbpf_trace_frame *frames = scratch->frames;
	size_t n_unnamed;

	if (slot->num_frames > JBPF_STREAM_MAX_FRAMES) {
		t.status = JBPF_STREAM_MAX_FRAMES;
		t.flags |= JBPF_TRACE_TRUNCATED;
	}
	t.frame_count = t.status > 0 ? (uint32_t)t.status : 0;
	for (uint32_t i = 0; i < t.frame_count; i++) {
		scratch->ids[i] = (uint64_t)(uintptr_t)slot->frames[i].method_id;
		frames[i] = (struct jbpf_trace_frame){
			.method_id = scratch->ids[i],
			.bci = slot->frames[i].lineno,
			.kind = slot->frames[i].kind,
		};
	}
	n_unnamed = put_unnamed(&b, jvmti, jni, scratch, t.frame_count);
	put_msg(&b, JBPF_MSG_TRACE, &t, sizeof(t), frames, t.frame_count * sizeof(*frames));
	outbox__append(b.data, b.len, EMIT_AGENT_LIMIT, scratch->unnamed, n_unnamed);
}

_Static_assert(sizeof(struct jbpf_msg_thread_stack) <= sizeof(struct jbpf_msg_trace),
	       "EMIT_TRACE_BATCH_MAX must hold a THREAD_STACK batch too");

/* JVMTI's location of a native method's frame; AsyncGetCallTrace says -3. */
#define JVMTI_NATIVE_LOCATION (-1)
#define TRACE_NATIVE_BCI (-3)

/*
 * The frames a THREAD_STACK or an ALLOC carries, from JVMTI's, into
 * scratch->frames and ->ids: their count, at most JBPF_STREAM_MAX_FRAMES
 * (count may be one more: the stack is then cut and *flags gets
 * JBPF_TRACE_TRUNCATED); a negative count gives none.
 */
static uint32_t jvmti_frames(const jvmtiFrameInfo *frames, jint count, struct emit_scratch *scratch, uint32_t *flags)
{
	uint32_t n = count > 0 ? (uint32_t)count : 0;

	if (n > JBPF_STREAM_MAX_FRAMES) {
		n = JBPF_STREAM_MAX_FRAMES;
		*flags |= JBPF_TRACE_TRUNCATED;
	}
	for (uint32_t i = 0; i < n; i++) {
		jlocation loc = frames[i].location;

		scratch->ids[i] = (uint64_t)(uintptr_t)frames[i].method;
		scratch->frames[i] = (struct jbpf_trace_frame){
			.method_id = scratch->ids[i],
			.bci = loc == JVMTI_NATIVE_LOCATION ? TRACE_NATIVE_BCI
			       : loc < 0 || loc > INT32_MAX ? -1 : (int32_t)loc,
		};
	}
	return n;
}

void emit__thread_stack(jvmtiEnv *jvmti, JNIEnv *jni, uint32_t tid, jint state, const jvmtiFrameInfo *frames,
			jint count, struct emit_scratch *scratch)
{
	struct msgbuf b = { .data = scratch->batch, .cap = sizeof(scratch->batch) };
	struct jbpf_msg_thread_stack t = { .tid = tid, .jvmti_state = state };
	size_t n_unnamed;

	t.frame_count = jvmti_frames(frames, count, scratch, &t.flags);
	n_unnamed = put_unnamed(&b, jvmti, jni, scratch, t.frame_count);
	put_msg(&b, JBPF_MSG_THREAD_STACK, &t, sizeof(t), scratch->frames, t.frame_count * sizeof(scratch->frames[0]));
	outbox__append(b.data, b.len, EMIT_AGENT_LIMIT, scratch->unnamed, n_unnamed);
}

int emit__alloc(jvmtiEnv *jvmti, JNIEnv *jni, const struct jbpf_msg_alloc *alloc, const jvmtiFrameInfo *frames,
		jint count, const char *class_name, const uint64_t *native, uint32_t nr_native,
		struct emit_scratch *scratch)
{
	struct msgbuf b = { .data = scratch->batch, .cap = sizeof(scratch->batch) };
	struct jbpf_msg_alloc a = *alloc;
	size_t n_unnamed;

	if (nr_native > JBPF_ALLOC_MAX_NATIVE)
		nr_native = JBPF_ALLOC_MAX_NATIVE;
	a.class_len = (uint32_t)bounded_len(class_name);
	a.flags = nr_native ? alloc->flags & (JBPF_ALLOC_NATIVE | JBPF_ALLOC_NATIVE_CUT) : 0;
	a.frame_count = jvmti_frames(frames, count, scratch, &a.flags);
	n_unnamed = put_unnamed(&b, jvmti, jni, scratch, a.frame_count);
	put_parts(&b, JBPF_MSG_ALLOC,
		  (const struct part[]){ { &a, sizeof(a) },
					 { scratch->frames, a.frame_count * sizeof(scratch->frames[0]) },
					 { class_name, a.class_len },
					 { native, nr_native * sizeof(native[0]) } },
		  4);
	return outbox__append(b.data, b.len, OUTBOX_LIMIT, scratch->unnamed, n_unnamed);
}

void emit__stats(const struct jbpf_msg_stats *stats)
{
	char buf[EMIT_HEADER + sizeof(struct jbpf_msg_stats)];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };

	put_msg(&b, JBPF_MSG_STATS, stats, sizeof(*stats), NULL, 0);
	outbox__append(b.data, b.len, EMIT_AGENT_LIMIT, NULL, 0);
}

void emit__flushed(void)
{
	char buf[EMIT_HEADER];
	struct msgbuf b = { .data = buf, .cap = sizeof(buf) };

	put_msg(&b, JBPF_MSG_FLUSHED, NULL, 0, NULL, 0);
	outbox__append(b.data, b.len, EMIT_AGENT_LIMIT, NULL, 0);
}
