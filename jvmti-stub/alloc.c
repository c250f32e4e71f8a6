/*
 * alloc: sampled Java heap allocations to ALLOC messages (contract in
 * alloc.h).
 */
#include "alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emit.h"
#include "jninative.h"
#include "stream.h"
#include "common/classname.h"

/*
 * Scratch buffers, each under its own lock, a thread's chosen by its tid:
 * threads that sample at once rarely share one. Static and mostly never
 * touched (the METHOD batch is used only as far as a stack's new methods
 * go), so they cost address space, not memory.
 */
#define ALLOC_STRIPES 8

struct alloc_stripe {
	pthread_mutex_t lock;
	jvmtiFrameInfo frames[JBPF_STREAM_MAX_FRAMES + 1];
	char class_name[JBPF_STREAM_MAX_NAME + 1];
	uint64_t native[JBPF_ALLOC_MAX_NATIVE];
	struct emit_scratch scratch;
};

static struct {
	atomic_uint interval; /* 0: not sampling */
	atomic_ullong taken, lost;
	struct alloc_stripe stripes[ALLOC_STRIPES];
} al;

static pthread_once_t stripes_once = PTHREAD_ONCE_INIT;

static void init_stripes(void)
{
	for (int i = 0; i < ALLOC_STRIPES; i++)
		pthread_mutex_init(&al.stripes[i].lock, NULL);
}

int alloc__start(jvmtiEnv *jvmti, unsigned interval, char *err, size_t err_size)
{
	jvmtiCapabilities potential = { 0 }, caps = { 0 };
	jvmtiError e;

	pthread_once(&stripes_once, init_stripes);
	jninative__init(jvmti);
	if ((*jvmti)->GetPotentialCapabilities(jvmti, &potential) != JVMTI_ERROR_NONE ||
	    !potential.can_generate_sampled_object_alloc_events) {
		snprintf(err, err_size,
			 "this JVM cannot sample allocations (JVMTI can_generate_sampled_object_alloc_events, JDK 11 "
			 "and later)");
		return -1;
	}
	caps.can_generate_sampled_object_alloc_events = 1;
	e = (*jvmti)->AddCapabilities(jvmti, &caps);
	if (e == JVMTI_ERROR_NONE)
		e = (*jvmti)->SetHeapSamplingInterval(jvmti, (jint)interval);
	if (e != JVMTI_ERROR_NONE) {
		snprintf(err, err_size, "cannot sample allocations every %u bytes: JVMTI error %d", interval, (int)e);
		return -1;
	}
	atomic_store(&al.taken, 0);
	atomic_store(&al.lost, 0);
	atomic_store(&al.interval, interval);
	e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	if (e != JVMTI_ERROR_NONE) {
		atomic_store(&al.interval, 0);
		snprintf(err, err_size, "cannot turn on SampledObjectAlloc: JVMTI error %d", (int)e);
		return -1;
	}
	return 0;
}

void alloc__stop(jvmtiEnv *jvmti)
{
	if (!atomic_exchange(&al.interval, 0))
		return;
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
}

void alloc__counts(uint64_t *taken, uint64_t *lost)
{
	*taken = atomic_load(&al.taken);
	*lost = atomic_load(&al.lost);
}

/*
 * An allocation whose innermost Java frame is a native method was made by
 * native code (JNI): its native frames, with flags saying so. None for one
 * made by Java code.
 */
static uint32_t native_frames(jvmtiEnv *jvmti, struct alloc_stripe *st, jint count, uint32_t *flags)
{
	jboolean is_native = JNI_FALSE;
	uint32_t n;
	bool cut = false;

	if (count <= 0 || (*jvmti)->IsMethodNative(jvmti, st->frames[0].method, &is_native) != JVMTI_ERROR_NONE ||
	    !is_native)
		return 0;
	n = jninative__frames(st->native, JBPF_ALLOC_MAX_NATIVE, &cut);
	if (n)
		*flags |= JBPF_ALLOC_NATIVE | (cut ? JBPF_ALLOC_NATIVE_CUT : 0);
	return n;
}

void JNICALL alloc__on_sampled(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
			       jlong size)
{
	unsigned interval = atomic_load(&al.interval);
	struct alloc_stripe *st;
	struct jbpf_msg_alloc a;
	jint count = 0;
	char *sig = NULL;
	uint32_t nr_native;
	bool sent;

	(void)thread;
	(void)object;
	if (!interval)
		return;
	atomic_fetch_add(&al.taken, 1);
	a = (struct jbpf_msg_alloc){
		.size = size > 0 ? (uint64_t)size : 0,
		.time_ns = emit__now_ns(),
		.tid = (uint32_t)syscall(SYS_gettid),
		.interval = interval,
	};
	st = &al.stripes[a.tid % ALLOC_STRIPES];
	pthread_mutex_lock(&st->lock);
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, JBPF_STREAM_MAX_FRAMES + 1, st->frames, &count) != JVMTI_ERROR_NONE)
		count = 0;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
		sig = NULL;
	classname__type(sig, st->class_name, sizeof(st->class_name));
	if (sig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	nr_native = native_frames(jvmti, st, count, &a.flags);
	sent = !emit__alloc(jvmti, jni, &a, st->frames, count, st->class_name, st->native, nr_native, &st->scratch);
	pthread_mutex_unlock(&st->lock);
	if (!sent)
		atomic_fetch_add(&al.lost, 1);
}
