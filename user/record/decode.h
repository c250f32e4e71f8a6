/*
 * decode: a ring buffer record, checked once and named by its type.
 *
 * The BPF programs write every record, but a record is still bytes of a
 * given length: decode__record checks the length against the type (and a
 * sample's frame counts against JBPF_MAX_STACK_DEPTH and against the bytes
 * received) before any stage reads a field. Every stage after it
 * (wall, the Java join, the aggregator) takes the decoded record and
 * checks nothing again.
 */
#ifndef JBPF_DECODE_H
#define JBPF_DECODE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/jbpfprof.h"

struct record {
	uint32_t type;      /* enum jbpf_record_type */
	size_t size;        /* bytes received; a sample's frames end within them */
	union {
		const void *data;
		const struct jbpf_sample *sample;           /* CPU_SAMPLE, WAIT, NATIVE_ALLOC, WAKER, VTHREAD_WAIT */
		const struct jbpf_exec *exec;
		const struct jbpf_signal_lost *signal_lost;
		const struct jbpf_wait_end *wait_end;
		const struct jbpf_user_stack *user_stack;
		const struct jbpf_thread_exit *thread_exit;
		const struct jbpf_unwind_miss *unwind_miss;
		const struct jbpf_native_address *native_address;
		const struct jbpf_native_free *native_free;
	};
};

/*
 * Fills r from data[0..size). False for a record too short for its type,
 * with more frames than BPF sends or than its bytes hold, or of a type no
 * program writes.
 */
bool decode__record(const void *data, size_t size, struct record *r);

/* Whether data[0..size) is a well-formed CPU sample, wait or sampled allocation. */
bool decode__sample_is_valid(const void *data, size_t size);

/* The bytes a valid sample's header and frames take (trailing bytes left out). */
size_t decode__sample_used_size(const struct jbpf_sample *s);

/* Whether a record of type is a struct jbpf_sample. */
static inline bool decode__type_is_sample(uint32_t type)
{
	return type == JBPF_RECORD_CPU_SAMPLE || type == JBPF_RECORD_WAIT || type == JBPF_RECORD_NATIVE_ALLOC ||
	       type == JBPF_RECORD_WAKER || type == JBPF_RECORD_VTHREAD_WAIT;
}

/*
 * A valid sample's Java frames (java_len of them, after the ips), each
 * checked: a known kind, a stop reason only on the last, and its place
 * among the user frames within them and never before the previous one's.
 */
const struct jbpf_java_frame *decode__sample_java_frames(const struct jbpf_sample *s);

#endif /* JBPF_DECODE_H */
