/*
 * names: a jmethodID to the name a METHOD message carries,
 * "package.Class.method" (format in classname.h).
 *
 * Call it while the ID is still valid: a method whose class was unloaded
 * can no longer be named, and reads "[unknown method]". JVMTI rejects a
 * stale ID with an error rather than crashing, so any ID AsyncGetCallTrace
 * returned may be passed.
 *
 * Not async-signal-safe: JVMTI calls. Call from a thread attached to the
 * JVM (an agent thread or a JVMTI callback); jni is that thread's JNIEnv.
 */
#ifndef JBPF_NAMES_H
#define JBPF_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

#define NAMES_UNKNOWN "[unknown method]"

/*
 * Writes the name of method into out (cap bytes, NUL-terminated, cut at a
 * character boundary) and returns its length; sets *flags to JBPF_METHOD_*.
 * Never fails: anything JVMTI refuses gives NAMES_UNKNOWN.
 */
size_t names__resolve(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID method, char *out, size_t cap, uint32_t *flags);

#endif /* JBPF_NAMES_H */
