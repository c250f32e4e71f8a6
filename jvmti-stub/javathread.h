/*
 * javathread: what lets the signal handler find the JNIEnv of the thread it
 * interrupted without calling into the JVM, worked out here, outside
 * signal context.
 *
 * Why not GetEnv in the handler: it reads libjvm's __thread variable
 * (Thread::_thr_current). libjvm is dlopen'ed, so glibc allocates its TLS
 * block with malloc at a thread's first access, and an access after any
 * later dlopen may grow the thread's DTV with malloc too. A handler that
 * interrupted malloc and then mallocs deadlocks on the arena lock its own
 * thread holds, and the whole JVM stops behind it (every thread waits for a
 * safepoint, the Threads lock or the heap lock, for good).
 *
 * What HotSpot offers instead, safe in a signal handler:
 *
 *  1. Its own pthread key (ThreadLocalStorage), which it sets to the
 *     Thread * of every thread attached to the VM, in that thread, when it
 *     attaches (Thread::initialize_thread_current), and clears before that
 *     Thread is deleted (clear_thread_current). HotSpot's own signal
 *     handlers read it (Thread::current_or_null_safe). glibc's
 *     pthread_getspecific, for a key below 32, is one load from the
 *     calling thread's struct pthread: no lock, no allocation. The key is
 *     found by looking, on a Java thread, for the key whose value is that
 *     thread's JavaThread * (java.lang.Thread.eetop): exactly one of keys 0
 *     to 31 must hold it.
 *
 *  2. A Thread * is not yet a JavaThread * (the VM thread, GC workers and
 *     other VM threads have one too, and no JNIEnv). Every HotSpot thread
 *     is a polymorphic C++ object whose first word is its class's vtable
 *     pointer. The vtables of JavaThread classes are learned from threads
 *     known to be JavaThreads: every thread GetAllThreads lists when a
 *     recording starts (its JavaThread * from eetop, the first word read
 *     through vmstructs__read, eetop checked again after), and every
 *     thread whose ThreadStart event runs (from its own JNIEnv).
 *
 *  3. The JNIEnv is a member of JavaThread (_jni_environment), at one
 *     offset: JNIEnv * minus JavaThread *, measured on the calling thread.
 *
 * The handler then reads the key (NULL: not attached to the VM), compares
 * the object's first word with the learned vtables (no match: not a
 * JavaThread) and adds the offset. The object is the calling thread's own,
 * live while it runs, so reading its first word cannot fault; a match
 * proves its class, whatever object once lived at that address.
 *
 * Not async-signal-safe (JVMTI, JNI); thread-safe.
 */
#ifndef JBPF_JAVATHREAD_H
#define JBPF_JAVATHREAD_H

#include <stddef.h>

#include <jvmti.h>

/*
 * On a Java thread (the one starting a recording): the first time, finds
 * HotSpot's key and the JNIEnv offset; every time, learns the vtables of
 * the threads GetAllThreads lists, and hands both to the handler. jvm_code
 * is any address inside libjvm.so. Returns 0, or -1 with a one-line reason
 * in err: the handler could not tell Java threads apart, so a recording
 * must not start.
 */
int javathread__init(jvmtiEnv *jvmti, JNIEnv *jni, const void *jvm_code, char *err, size_t err_size);

/* On a thread starting (ThreadStart, with its own JNIEnv): learns its class, if new. */
void javathread__learn_current(JNIEnv *jni);

#endif /* JBPF_JAVATHREAD_H */
