/*
 * names: jmethodID -> "package.Class.method" through JVMTI (contract in
 * names.h). Every JVMTI string is given back with Deallocate, and the class
 * reference is deleted: the agent thread names methods in a loop that never
 * returns to Java, so its local references would otherwise pile up.
 */
#include "names.h"

#include <string.h>

#include "stream.h"
#include "common/classname.h"

static void deallocate(jvmtiEnv *jvmti, char *p)
{
	if (p)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)p);
}

size_t names__resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, char *out, size_t cap, uint32_t *flags)
{
	jclass klass = NULL;
	char *sig = NULL, *name = NULL;
	jboolean native = JNI_FALSE;
	size_t len = 0;

	*flags = 0;
	if (!cap)
		return 0;
	if (method && (*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) == JVMTI_ERROR_NONE && klass) {
		if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
			sig = NULL;
		if ((*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) != JVMTI_ERROR_NONE)
			name = NULL;
		if ((*jvmti)->IsMethodNative(jvmti, method, &native) == JVMTI_ERROR_NONE && native)
			*flags |= JBPF_METHOD_NATIVE;
		if (sig || name)
			len = classname__format(sig, name, out, cap);
		deallocate(jvmti, sig);
		deallocate(jvmti, name);
		(*jni)->DeleteLocalRef(jni, klass);
	}
	if (!len) {
		*flags = 0;
		len = strlen(NAMES_UNKNOWN) < cap ? strlen(NAMES_UNKNOWN) : cap - 1;
		memcpy(out, NAMES_UNKNOWN, len);
		out[len] = '\0';
	}
	return len;
}
