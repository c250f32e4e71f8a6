/*
 * threads: a JVM's Java threads, each native thread id with its
 * JavaThread, read from the JVM's memory by its VMStructs.
 *
 * HotSpot keeps the live Java threads in the ThreadsList that
 * ThreadsSMRSupport::_java_thread_list points at: _length JavaThread
 * pointers at _threads. Each JavaThread's OSThread (_osthread: a
 * JavaThread field on JDK 17, a Thread field since) holds the native
 * thread id (_thread_id), as the JVM's pid namespace numbers it.
 *
 * The list is a snapshot HotSpot replaces as threads start and end, and
 * frees once no JVM thread reads it: the profiler is not one of them, so
 * a read may meet a list just freed, or a thread ending. Everything read
 * is checked (the length against HOTSPOT_THREADS_MAX, every pointer read
 * through hotspot_memory, a tid against 0 and the range of tids); a
 * thread whose OSThread cannot be read is left out, a list that cannot be
 * read fails the call, and the caller reads it again later.
 */
#ifndef JBPF_HOTSPOT_THREADS_H
#define JBPF_HOTSPOT_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

/* The most Java threads a list may hold; a JVM claiming more is refused. */
#define HOTSPOT_THREADS_MAX 65536

/* Where a JVM keeps its thread list, from its VMStructs. */
struct hotspot_threads__layout {
	uint64_t list;             /* &ThreadsSMRSupport::_java_thread_list */
	uint64_t list_length;      /* ThreadsList::_length, a uint */
	uint64_t list_threads;     /* ThreadsList::_threads, JavaThread *const * */
	uint64_t osthread;         /* (Java)Thread::_osthread, OSThread * */
	uint64_t thread_id;        /* OSThread::_thread_id, a pid_t */
};

struct hotspot_java_thread {
	uint32_t tid;              /* in the JVM's pid namespace */
	uint64_t java_thread;      /* its JavaThread, in the JVM's memory */
};

/* The layout from vm: 0, or -1 with a one-line reason in err (what HotSpot does not list). */
int hotspot_threads__layout(const struct hotspot_vm *vm, struct hotspot_threads__layout *out, char *err,
			   size_t err_size);
/*
 * The Java threads now, at most max of them into out, their number into
 * *nr: 0, or -1 with a one-line reason in err (the list unreadable, or
 * longer than HOTSPOT_THREADS_MAX).
 */
int hotspot_threads__read(struct hotspot_memory *mem, const struct hotspot_threads__layout *layout,
			 struct hotspot_java_thread *out, size_t max, size_t *nr, char *err, size_t err_size);

#endif /* JBPF_HOTSPOT_THREADS_H */
