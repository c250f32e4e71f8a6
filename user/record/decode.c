/*
 * decode: record lengths and frame counts checked once (contract in decode.h).
 */
#include "decode.h"

bool record_sample_is_valid(const void *data, size_t size)
{
	const struct jbpf_sample *s = data;

	if (size < sizeof(*s) || (s->type != JBPF_RECORD_CPU_SAMPLE && s->type != JBPF_RECORD_WAIT))
		return false;
	if (s->kstack_len > JBPF_MAX_STACK_DEPTH || s->ustack_len > JBPF_MAX_STACK_DEPTH)
		return false;
	return size >= record_sample_used_size(s);
}

size_t record_sample_used_size(const struct jbpf_sample *s)
{
	return sizeof(*s) + ((size_t)s->kstack_len + s->ustack_len) * sizeof(__u64);
}

static bool user_stack_is_valid(const struct jbpf_user_stack *u, size_t size)
{
	return size >= sizeof(*u) && u->len <= JBPF_MAX_STACK_DEPTH &&
	       size >= sizeof(*u) + (size_t)u->len * sizeof(__u64);
}

bool record_decode(const void *data, size_t size, struct record *r)
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
		return record_sample_is_valid(data, size);
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
	default:
		return false;
	}
}
