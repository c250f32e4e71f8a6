/*
 * decode: record lengths and frame counts checked once (contract in decode.h).
 */
#include "decode.h"

const struct jbpf_java_frame *decode__sample_java_frames(const struct jbpf_sample *s)
{
	return (const struct jbpf_java_frame *)(s->ips + s->kstack_len + s->ustack_len);
}

/* The Java frames' order and kinds (see decode__sample_java_frames). */
static bool java_frames_are_valid(const struct jbpf_sample *s)
{
	const struct jbpf_java_frame *f = decode__sample_java_frames(s);
	unsigned before = 0, carriers = 0;

	for (unsigned i = 0; i < s->java_len; i++) {
		bool last = i + 1 == s->java_len;

		if (f[i].native_before < before || f[i].native_before > s->ustack_len)
			return false;
		before = f[i].native_before;
		if (f[i].kind < JBPF_JAVA_INTERPRETED || f[i].kind > JBPF_JAVA_CARRIER)
			return false;
		/* One carrier marker at most, with a reason of its own; a stop's reason is never 0. */
		if (f[i].kind == JBPF_JAVA_CARRIER) {
			if (carriers++ || f[i].reason >= JBPF_JAVA_CARRIER_NR)
				return false;
			continue;
		}
		if ((f[i].kind == JBPF_JAVA_STOP) != (f[i].reason != 0) || (f[i].kind == JBPF_JAVA_STOP && !last) ||
		    f[i].reason >= JBPF_JAVA_STOP_NR)
			return false;
	}
	return true;
}

bool decode__sample_is_valid(const void *data, size_t size)
{
	const struct jbpf_sample *s = data;

	if (size < sizeof(*s) || !decode__type_is_sample(s->type))
		return false;
	if (s->kstack_len > JBPF_MAX_STACK_DEPTH || s->ustack_len > JBPF_MAX_STACK_DEPTH ||
	    s->java_len > JBPF_MAX_JAVA_FRAMES)
		return false;
	return size >= decode__sample_used_size(s) && java_frames_are_valid(s);
}

size_t decode__sample_used_size(const struct jbpf_sample *s)
{
	return sizeof(*s) + ((size_t)s->kstack_len + s->ustack_len) * sizeof(__u64) +
	       (size_t)s->java_len * sizeof(struct jbpf_java_frame);
}

static bool user_stack_is_valid(const struct jbpf_user_stack *u, size_t size)
{
	return size >= sizeof(*u) && u->len <= JBPF_MAX_STACK_DEPTH &&
	       size >= sizeof(*u) + (size_t)u->len * sizeof(__u64);
}

bool decode__record(const void *data, size_t size, struct record *r)
{
	r->data = data;
	r->size = size;
	r->type = 0;
	if (size < sizeof(__u32))
		return false;
	r->type = *(const __u32 *)data;
	switch (r->type) {
	case JBPF_RECORD_CPU_SAMPLE:
	case JBPF_RECORD_WAIT:
	case JBPF_RECORD_NATIVE_ALLOC:
	case JBPF_RECORD_WAKER:
	case JBPF_RECORD_VTHREAD_WAIT:
		return decode__sample_is_valid(data, size);
	case JBPF_RECORD_EXEC:
		return size >= sizeof(struct jbpf_exec);
	case JBPF_RECORD_SIGNAL_LOST:
		return size >= sizeof(struct jbpf_signal_lost);
	case JBPF_RECORD_WAIT_END:
		return size >= sizeof(struct jbpf_wait_end);
	case JBPF_RECORD_USER_STACK:
		return user_stack_is_valid(data, size);
	case JBPF_RECORD_THREAD_EXIT:
		return size >= sizeof(struct jbpf_thread_exit);
	case JBPF_RECORD_UNWIND_MISS:
		return size >= sizeof(struct jbpf_unwind_miss);
	case JBPF_RECORD_NATIVE_ADDRESS:
		return size >= sizeof(struct jbpf_native_address);
	case JBPF_RECORD_NATIVE_FREE:
		return size >= sizeof(struct jbpf_native_free);
	default:
		return false;
	}
}
