/*
 * java_alloc: the allocations an agent sampled (option alloc=BYTES, the
 * ALLOC message) as stacks of the profile: the thread's root frames, its
 * Java frames as the agent's trace names them (a METHOD before each), for
 * an allocation native code made (JNI) the native frames the agent read,
 * and the class allocated as the last frame (FRAME_KIND_CLASS), weighing
 * the bytes the sample stands for (common/sampled_bytes.h) and the objects
 * those bytes are (profile__add_objects).
 */
#include "user/java/java_internal.h"

#include <string.h>

#include "common/sampled_bytes.h"
#include "user/java/javamap.h"
#include "user/java/join.h"
#include "user/java/merge.h"

void java__add_alloc(struct java *java, struct jvm *jvm, const struct jbpf_msg_alloc *alloc,
		    const struct jbpf_trace_frame *frames, const char *class_name, const uint64_t *native,
		    uint32_t nr_native)
{
	static union {
		struct join_trace trace;
		char bytes[sizeof(struct join_trace) + JBPF_STREAM_MAX_FRAMES * sizeof(struct jbpf_trace_frame)];
	} buf;
	static union {
		struct jbpf_sample sample;
		char bytes[sizeof(struct jbpf_sample) + JBPF_ALLOC_MAX_NATIVE * sizeof(uint64_t)];
	} sample_buf;
	struct join_trace *t = &buf.trace;
	struct jbpf_sample *s = &sample_buf.sample;
	struct merge_java m = {
		.map = jvm->map,
		.trace = t,
		.leaf = class_name,
		.weight = sampled_bytes__of(alloc->size, alloc->interval),
	};

	java->stats.allocs++;
	if (!m.weight)
		m.weight = 1;
	m.objects = sampled_bytes__objects(m.weight, alloc->size);
	if (nr_native > JBPF_ALLOC_MAX_NATIVE)
		nr_native = JBPF_ALLOC_MAX_NATIVE;
	*s = (struct jbpf_sample){
		.type = JBPF_RECORD_CPU_SAMPLE,
		.time_ns = alloc->time_ns,
		.tgid = jvm->tgid,
		/* In a JVM of another pid namespace, the thread frame shows the JVM's own tid. */
		.tid = alloc->tid,
		/*
		 * Native code's frames, innermost first, as a sample's user stack:
		 * merge__add puts the Java frames where the code HotSpot generated
		 * for the native method begins. Frames that do not reach it (cut
		 * at the agent's bound, or at a library without unwind tables)
		 * end short: merge__add says so when USER_CUT is set.
		 */
		.ustack_len = (__u16)nr_native,
		.flags = nr_native ? JBPF_SAMPLE_USER_CUT : 0,
	};
	memcpy(s->ips, native, nr_native * sizeof(native[0]));
	if (nr_native)
		java->stats.allocs_native++;
	memcpy(s->comm, "java", sizeof("java"));
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
	merge__add(java->merge, s, &m);
}
