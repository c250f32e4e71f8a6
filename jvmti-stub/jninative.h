/*
 * jninative: the native frames of an allocation that JNI code made, read
 * in the allocating thread's SampledObjectAlloc callback.
 *
 * GetStackTrace names the Java native method that called into C, but not
 * the C functions between it and the allocation (a JNI library's
 * NewByteArray, NewObject, NewStringUTF...). Those frames are walked here
 * by the unwind tables of the code that runs them (libgcc's unwinder,
 * linked into the agent), from the callback outwards. The walk skips the
 * agent's own frames and the VM's (the callback's callers in libjvm, down
 * to the JNI function), and ends where the unwind tables do: at the code
 * HotSpot generated for the native method, which has none (the last
 * address then lies in it), or at a library built without them.
 *
 * Not for a signal handler: the unwinder looks its tables up through the
 * dynamic loader. The callback runs in the thread's own context, in native
 * state, where that is allowed.
 */
#ifndef JBPF_JNINATIVE_H
#define JBPF_JNINATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include <jvmti.h>

/*
 * Finds the agent's code and the VM's (the library that holds jvmti's
 * functions). Before the first jninative__frames; again is harmless.
 */
void jninative__init(jvmtiEnv *jvmti);
/*
 * The calling thread's return addresses outside the agent and the VM,
 * innermost first, at most max of them, into pcs. Their number; *cut is
 * set when there were more.
 */
uint32_t jninative__frames(uint64_t *pcs, uint32_t max, bool *cut);

#endif /* JBPF_JNINATIVE_H */
