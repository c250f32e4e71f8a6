/*
 * javathread: HotSpot's thread key, the JNIEnv offset and the vtables of
 * JavaThread classes, for the signal handler (contract and argument in
 * javathread.h).
 *
 * lock serialises the writers (a recording's start, ThreadStart callbacks
 * on any thread); the handler reads what handler.c publishes, lock-free.
 */
#include "javathread.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "codewalk.h"
#include "emit.h"
#include "handler.h"
#include "lastjava.h"
#include "vmstructs.h"

/*
 * Keys glibc keeps in struct pthread itself (PTHREAD_KEY_2NDLEVEL_SIZE).
 * A higher key's value sits in a block glibc frees while a thread exits,
 * which a handler could then read: such a key is not used.
 */
#define JAVATHREAD_MAX_KEY 32
/* A JavaThread is a few KiB; an offset beyond this is no member of it. */
#define JAVATHREAD_MAX_ENV_OFFSET (64u << 10)

static struct {
	pthread_mutex_t lock;
	bool found;          /* key and offset handed to the handler */
	ptrdiff_t env_offset;
} jt = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The key whose value on this thread is self, if exactly one is. */
static int find_key(uintptr_t self, pthread_key_t *key)
{
	int matches = 0;

	for (pthread_key_t k = 0; k < JAVATHREAD_MAX_KEY; k++)
		if ((uintptr_t)pthread_getspecific(k) == self) {
			*key = k;
			matches++;
		}
	return matches == 1 ? 0 : -1;
}

/* Key and offset from the calling thread. Called with jt.lock held. */
static int find_key_and_offset(jvmtiEnv *jvmti, JNIEnv *jni, char *err, size_t err_size)
{
	jthread current = NULL;
	uintptr_t self;
	pthread_key_t key;

	if ((*jvmti)->GetCurrentThread(jvmti, &current) != JVMTI_ERROR_NONE || !current) {
		snprintf(err, err_size, "cannot tell Java threads apart: GetCurrentThread failed");
		return -1;
	}
	self = vmstructs__java_thread(jni, current);
	(*jni)->DeleteLocalRef(jni, current);
	if (!self) {
		snprintf(err, err_size, "cannot tell Java threads apart: this JVM does not describe its threads "
					"(VMStructs, java.lang.Thread.eetop)");
		return -1;
	}
	if (find_key(self, &key)) {
		snprintf(err, err_size, "cannot tell Java threads apart: no single thread key among the first %d "
					"holds the current JavaThread",
			 JAVATHREAD_MAX_KEY);
		return -1;
	}
	if ((uintptr_t)jni <= self || (uintptr_t)jni - self >= JAVATHREAD_MAX_ENV_OFFSET) {
		snprintf(err, err_size, "cannot tell Java threads apart: the JNIEnv is not inside its JavaThread");
		return -1;
	}
	jt.env_offset = (ptrdiff_t)((uintptr_t)jni - self);
	handler__set_java_threads(key, jt.env_offset);
	jt.found = true;
	return 0;
}

/* Learns the class of every thread GetAllThreads lists. Called with jt.lock held. */
static void learn_all(jvmtiEnv *jvmti, JNIEnv *jni)
{
	struct vmstructs_reader reader;
	jthread *threads = NULL;
	jint count = 0;

	if (vmstructs__open(&reader))
		return;
	if ((*jvmti)->GetAllThreads(jvmti, &count, &threads) != JVMTI_ERROR_NONE)
		threads = NULL;
	for (jint i = 0; threads && i < count; i++) {
		uintptr_t vtable;

		if (vmstructs__vtable(&reader, jni, threads[i], &vtable))
			handler__add_java_vtable(vtable);
		(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	if (threads)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
	vmstructs__close(&reader);
}

int javathread__init(jvmtiEnv *jvmti, JNIEnv *jni, const void *jvm_code, char *err, size_t err_size)
{
	int status = 0;

	pthread_mutex_lock(&jt.lock);
	if (!vmstructs__init(jni, jvm_code)) {
		snprintf(err, err_size, "cannot tell Java threads apart: this JVM does not describe its threads "
					"(VMStructs, java.lang.Thread.eetop)");
		status = -1;
	} else if (jt.found || !find_key_and_offset(jvmti, jni, err, err_size)) {
		char reason[200], notice[320];

		/* Not a failure: AsyncGetCallTrace's own answers stay as they are. */
		if (lastjava__init(reason, sizeof(reason))) {
			snprintf(notice, sizeof(notice),
				 "no second walk where AsyncGetCallTrace gives up: this JVM's layout is not understood (%s)",
				 reason);
			emit__notice(notice);
		}
		if (codewalk__init(reason, sizeof(reason))) {
			snprintf(notice, sizeof(notice),
				 "Java frame kinds inferred, not walked: this JVM's code cache is not understood (%s)",
				 reason);
			emit__notice(notice);
		}
		learn_all(jvmti, jni);
		if (!handler__nr_java_vtables()) {
			snprintf(err, err_size, "cannot tell Java threads apart: no thread's class could be read");
			status = -1;
		}
	} else {
		status = -1;
	}
	pthread_mutex_unlock(&jt.lock);
	return status;
}

void javathread__learn_current(JNIEnv *jni)
{
	pthread_mutex_lock(&jt.lock);
	/* The calling thread's own JavaThread: alive while it runs this, read directly. */
	if (jt.found && jni)
		handler__add_java_vtable(*(const uintptr_t *)((uintptr_t)jni - (uintptr_t)jt.env_offset));
	pthread_mutex_unlock(&jt.lock);
}
