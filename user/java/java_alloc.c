/*
 * java_alloc: the allocations an agent sampled (option alloc=BYTES, the
 * ALLOC message) as stacks of the profile: the thread's root frames, its
 * Java frames as the agent's trace names them (a METHOD before each), and
 * the class allocated as the last frame (FRAME_KIND_CLASS), weighing the
 * bytes the sample stands for (java_alloc_bytes) and the objects those
 * bytes are (profile__add_objects).
 */
#include "user/java/java_internal.h"

#include <math.h>
#include <string.h>

#include "user/java/javamap.h"
#include "user/java/join.h"
#include "user/java/merge.h"

uint64_t java_alloc_bytes(uint64_t size, uint64_t interval)
{
	double x;

	if (!interval)
		return size;
	if (!size)
		return 0;
	/*
	 * HotSpot samples where a thread's allocated bytes cross a point drawn
	 * at random, a mean of interval bytes after the last one (a Poisson
	 * process over bytes): an object of size bytes is sampled with
	 * probability 1 - e^(-size/interval), so each sample stands for
	 * 1 / that many such objects, size bytes each. Near interval for
	 * small objects, near size for objects much larger than it.
	 */
	x = (double)size / (double)interval;
	if (x < 1e-9)
		return interval;
	return (uint64_t)llround((double)size / -expm1(-x));
}

void java_add_alloc(struct java *java, struct jvm *jvm, const struct jbpf_msg_alloc *alloc,
		    const struct jbpf_trace_frame *frames, const char *class_name)
{
	static union {
		struct join_trace trace;
		char bytes[sizeof(struct join_trace) + JBPF_STREAM_MAX_FRAMES * sizeof(struct jbpf_trace_frame)];
	} buf;
	struct join_trace *t = &buf.trace;
	struct jbpf_sample s = {
		.type = JBPF_RECORD_CPU_SAMPLE,
		.time_ns = alloc->time_ns,
		.tgid = jvm->tgid,
		/* In a JVM of another pid namespace, the thread frame shows the JVM's own tid. */
		.tid = alloc->tid,
	};
	struct merge_java m = {
		.map = jvm->map,
		.trace = t,
		.leaf = class_name,
		.weight = java_alloc_bytes(alloc->size, alloc->interval),
	};

	java->stats.allocs++;
	if (!m.weight)
		m.weight = 1;
	/* The objects those bytes are: at least the one sampled. */
	m.objects = alloc->size ? (m.weight + alloc->size / 2) / alloc->size : 1;
	if (!m.objects)
		m.objects = 1;
	memcpy(s.comm, "java", sizeof("java"));
	*t = (struct join_trace){
		.time_ns = alloc->time_ns,
		.tid = alloc->tid,
		.status = (int32_t)alloc->frame_count,
		.flags = alloc->flags & JBPF_TRACE_TRUNCATED,
		.frame_count = alloc->frame_count,
	};
	memcpy(t->frames, frames, alloc->frame_count * sizeof(frames[0]));
	m.thread_name = javamap__thread(jvm->map, alloc->tid);
	if (!alloc->frame_count) {
		java->stats.allocs_no_java++;
		m.reason = "[no Java frames: allocated by the VM]";
	}
	merge__add(java->merge, &s, &m);
}
