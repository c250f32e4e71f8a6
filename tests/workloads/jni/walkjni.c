/*
 * walkjni: the native half of tests/workloads/java/WalkShapes.java, so a
 * Java stack reads Java -> JNI -> Java -> JNI: WalkShapes.nativeCallback
 * calls back into Java (WalkShapes.fromNative), which calls
 * WalkShapes.nativeLeaf, which spins here in C.
 */
#include <jni.h>

/* Not static: the profile names it from the library's symbol table. */
long walkjni_spin(int n);

long walkjni_spin(int n)
{
	volatile long x = 0;

	for (int i = 0; i < n; i++)
		x = x * 31 + i;
	return x;
}

JNIEXPORT jlong JNICALL Java_WalkShapes_nativeLeaf(JNIEnv *env, jclass cls, jint n)
{
	return walkjni_spin(n);
}

JNIEXPORT jlong JNICALL Java_WalkShapes_nativeCallback(JNIEnv *env, jclass cls, jint n)
{
	jmethodID from_native = (*env)->GetStaticMethodID(env, cls, "fromNative", "(I)J");

	if (!from_native)
		return 0;
	return (*env)->CallStaticLongMethod(env, cls, from_native, n) + walkjni_spin(100);
}
