/*
 * vthreadsjni: the native half of tests/workloads/java/VThreads.java's
 * pinned mode: VThreads.viaNative calls back into Java (VThreads.sleepPinned),
 * so that the virtual thread sleeps with a native frame on its stack, which
 * pins it to its carrier.
 */
#include <jni.h>

JNIEXPORT void JNICALL Java_VThreads_viaNative(JNIEnv *env, jclass cls, jlong ms)
{
	jmethodID sleep_pinned = (*env)->GetStaticMethodID(env, cls, "sleepPinned", "(J)V");

	if (sleep_pinned)
		(*env)->CallStaticVoidMethod(env, cls, sleep_pinned, ms);
}
