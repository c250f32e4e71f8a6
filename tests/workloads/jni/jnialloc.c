/*
 * jnialloc: the native half of tests/workloads/java/JniAlloc.java: heap
 * allocations made by C code, two C frames below the Java native method
 * (Java_JniAlloc_nativeArrays, then jnialloc_arrays, which calls
 * NewByteArray).
 */
#include <jni.h>

/* Not static, never inlined: the profile names it from the library's symbol table. */
__attribute__((noinline)) void jnialloc_arrays(JNIEnv *env, jobjectArray sink, jint bytes);

void jnialloc_arrays(JNIEnv *env, jobjectArray sink, jint bytes)
{
	jsize n = (*env)->GetArrayLength(env, sink);

	for (jsize i = 0; i < n; i++) {
		jbyteArray a = (*env)->NewByteArray(env, bytes);

		if (!a)
			return; /* an OutOfMemoryError is pending: Java sees it */
		(*env)->SetObjectArrayElement(env, sink, i, a);
		(*env)->DeleteLocalRef(env, a);
	}
}

JNIEXPORT void JNICALL Java_JniAlloc_nativeArrays(JNIEnv *env, jclass cls, jobjectArray sink, jint bytes)
{
	jnialloc_arrays(env, sink, bytes);
	/* A call after it, so the call above is no tail call and this frame stays on the stack. */
	(*env)->ExceptionCheck(env);
}
