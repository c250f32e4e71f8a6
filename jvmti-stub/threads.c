/*
 * threads: THREAD messages for the threads running at attach, and the
 * THREAD_STACK messages of a JBPF_REQ_THREAD_STACKS request (contract in
 * threads.h).
 *
 * JVMTI hands out one buffer per call (GetAllThreads, GetAllStackTraces),
 * given back with Deallocate, and a JNI local reference per thread, deleted
 * here as soon as its tid is read. A request's tids are read right after
 * its stacks are taken, so they name the threads the stacks were taken on
 * (a thread that exits meanwhile reads as unknown and is left out).
 */
#include "threads.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "outbox.h"
#include "vmstructs.h"

struct threads_stacks {
	jvmtiStackInfo *info; /* from GetAllStackTraces; jthreads already deleted */
	uint32_t *tids;       /* native tid of info[i].thread, 0 when unknown */
	jint count;
	jint next;            /* the first not sent yet */
};

/* Any address inside libjvm, where vmstructs looks for its symbols. */
static const void *jvm_code(jvmtiEnv *jvmti)
{
	return (const void *)(uintptr_t)(*jvmti)->GetErrorName;
}

static bool open_reader(jvmtiEnv *jvmti, JNIEnv *jni, struct vmstructs_reader *reader)
{
	return vmstructs__init(jni, jvm_code(jvmti)) && !vmstructs__open(reader);
}

static void delete_ref(JNIEnv *jni, jobject ref)
{
	if (ref)
		(*jni)->DeleteLocalRef(jni, ref);
}

void threads__announce(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct vmstructs_reader reader;
	jthread *threads = NULL;
	jint count = 0;

	if (!open_reader(jvmti, jni, &reader))
		return;
	if ((*jvmti)->GetAllThreads(jvmti, &count, &threads) != JVMTI_ERROR_NONE)
		threads = NULL;
	for (jint i = 0; threads && i < count; i++) {
		uint32_t tid = vmstructs__tid(&reader, jni, threads[i]);
		jvmtiThreadInfo info;

		memset(&info, 0, sizeof(info));
		if (tid && (*jvmti)->GetThreadInfo(jvmti, threads[i], &info) == JVMTI_ERROR_NONE) {
			emit__thread(tid, info.name);
			if (info.name)
				(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
			delete_ref(jni, info.thread_group);
			delete_ref(jni, info.context_class_loader);
		}
		delete_ref(jni, threads[i]);
	}
	if (threads)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
	vmstructs__close(&reader);
}

struct threads_stacks *threads__take_stacks(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct threads_stacks *s = calloc(1, sizeof(*s));
	struct vmstructs_reader reader;
	bool can_read;

	if (!s)
		return NULL;
	/* One more frame than a message carries: a stack that fills them all is cut, and flagged. */
	if ((*jvmti)->GetAllStackTraces(jvmti, JBPF_STREAM_MAX_FRAMES + 1, &s->info, &s->count) != JVMTI_ERROR_NONE ||
	    s->count < 0) {
		free(s);
		return NULL;
	}
	s->tids = calloc(s->count ? (size_t)s->count : 1, sizeof(*s->tids));
	can_read = s->tids && open_reader(jvmti, jni, &reader);
	for (jint i = 0; i < s->count; i++) {
		if (can_read)
			s->tids[i] = vmstructs__tid(&reader, jni, s->info[i].thread);
		delete_ref(jni, s->info[i].thread);
		s->info[i].thread = NULL;
	}
	if (can_read)
		vmstructs__close(&reader);
	if (!s->tids) {
		threads__free_stacks(jvmti, s);
		return NULL;
	}
	return s;
}

bool threads__send_stacks(struct threads_stacks *s, jvmtiEnv *jvmti, JNIEnv *jni, struct emit_scratch *scratch)
{
	/* As drain_ring: the agent's headroom over OUTBOX_LIMIT takes one stack with all its METHODs. */
	while (s->next < s->count && outbox__bytes() < OUTBOX_LIMIT) {
		const jvmtiStackInfo *si = &s->info[s->next];
		uint32_t tid = s->tids[s->next++];

		if (tid)
			emit__thread_stack(jvmti, jni, tid, si->state, si->frame_buffer, si->frame_count, scratch);
	}
	return s->next >= s->count;
}

void threads__free_stacks(jvmtiEnv *jvmti, struct threads_stacks *s)
{
	if (!s)
		return;
	if (s->info)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)s->info);
	free(s->tids);
	free(s);
}
