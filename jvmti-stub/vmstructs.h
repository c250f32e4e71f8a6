/*
 * vmstructs: the native tid (gettid) of a Java thread that is not the
 * caller, read from HotSpot's memory without running code on that thread.
 *
 * JVMTI names a thread by its java.lang.Thread object and never says which
 * kernel task it is; ThreadStart is the one place to call gettid on it, and
 * threads started before the agent attached had theirs long ago. HotSpot
 * describes its own C++ fields for the serviceability agent, in tables
 * libjvm.so exports (src/hotspot/share/runtime/vmStructs.cpp):
 *
 *   gHotSpotVMStructs                   VMStructEntry *: {typeName, fieldName,
 *                                       typeString, isStatic, offset, address},
 *                                       ended by a NULL typeName
 *   gHotSpotVMStructEntry*Offset        where each member is inside an entry
 *   gHotSpotVMStructEntryArrayStride    the entry size
 *   gHotSpotVMTypes, gHotSpotVMTypeEntry*  the same for types, with sizes
 *
 * From them: the offset of the OSThread* in a JavaThread
 * (JavaThread::_osthread on JDK 17, Thread::_osthread on JDK 25) and of the
 * tid in an OSThread (OSThread::_thread_id, a 4-byte pid_t on Linux). The
 * JavaThread* of a live platform thread is java.lang.Thread's long field
 * "eetop" (0 before it starts and once it has exited). So:
 *
 *     tid = *(pid_t *)(*(OSThread **)(eetop + osthread_offset) + thread_id_offset)
 *
 * Safety, since this runs in someone else's JVM:
 *   - any symbol, entry or type missing, a size that is not the expected
 *     one, or a NULL pointer on the way means "unknown" (0), never a guess;
 *   - HotSpot's objects are read only through a pipe (write(2) from the
 *     address, then read(2)), so an address that is not mapped gives
 *     EFAULT rather than a fault in the JVM;
 *   - eetop is read again after the tid: HotSpot clears it (JavaThread::exit,
 *     ensure_join) before it frees the JavaThread and its OSThread, so an
 *     unchanged non-zero eetop means the reads saw the live thread;
 *   - the tid must name a thread of this process (tgkill with signal 0,
 *     which sends nothing).
 *
 * The same tables and the same care give javathread.c what it needs: a
 * thread's JavaThread * (eetop) and the first word of that object, its C++
 * vtable pointer.
 *
 * Not async-signal-safe (JNI, dlsym). Thread-safe; each caller uses a
 * reader of its own.
 */
#ifndef JBPF_VMSTRUCTS_H
#define JBPF_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jvmti.h>

/*
 * Layout look-ups for other modules (lastjava.c), valid once vmstructs__init
 * returned true; each reads the tables again, so call them at set-up, not
 * per sample. All answer false (or 0) when HotSpot does not list the item.
 */
/* The offset of the non-static field type::field and the size of its type. */
bool vmstructs__field(const char *type, const char *field, uint64_t *offset, uint64_t *size);
/* The address of the static field type::field. */
bool vmstructs__static_field(const char *type, const char *field, uintptr_t *address);
/* The size HotSpot gives type, 0 when it lists none. */
uint64_t vmstructs__type_size(const char *type);
/* The value of the integer constant name (gHotSpotVMIntConstants). */
bool vmstructs__int_constant(const char *name, int32_t *value);

/* What one batch of look-ups needs: the pipe memory is read through. */
struct vmstructs_reader {
	int pipe[2];
};

/*
 * Finds the offsets and the eetop field, the first time (later calls
 * return the first answer). jvm_code is any address inside libjvm.so, to
 * find its symbols when the JVM was loaded RTLD_LOCAL. Returns true when
 * tids can be read; false (for good) when this JVM does not tell.
 */
bool vmstructs__init(JNIEnv *jni, const void *jvm_code);

/* Opens the pipe. 0, or -1 (nothing to close then). */
int vmstructs__open(struct vmstructs_reader *reader);
void vmstructs__close(struct vmstructs_reader *reader);

/*
 * The native tid of thread (a java.lang.Thread, any thread of this JVM),
 * or 0 when unknown: not started, exited, or vmstructs__init failed.
 * Leaves no pending exception and no new local reference.
 */
uint32_t vmstructs__tid(const struct vmstructs_reader *reader, JNIEnv *jni, jthread thread);

/*
 * The JavaThread * of thread (java.lang.Thread.eetop): 0 when unknown, not
 * started or exited. Only safe to dereference for the calling thread's own
 * (it cannot exit meanwhile); any other is read with vmstructs__read.
 */
uintptr_t vmstructs__java_thread(JNIEnv *jni, jthread thread);

/*
 * The first word of thread's JavaThread (its vtable pointer), read through
 * the reader's pipe, into *vtable: true, or false when unknown (as for
 * vmstructs__tid, eetop is read again after, and must not have changed).
 */
bool vmstructs__vtable(const struct vmstructs_reader *reader, JNIEnv *jni, jthread thread, uintptr_t *vtable);

/*
 * Reads len bytes at addr through the reader's pipe: true, or false when
 * they are not all readable. Exposed for tests/integration/test_stub.c.
 */
bool vmstructs__read(const struct vmstructs_reader *reader, uintptr_t addr, void *out, size_t len);

#endif /* JBPF_VMSTRUCTS_H */
