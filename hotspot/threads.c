/*
 * threads: a JVM's Java threads, by native tid (contract in threads.h).
 */
#include "hotspot/threads.h"

#include <stdbool.h>
#include <stdio.h>

#include "common/refuse.h"

/* Threads' pointers read per gather from the list: a few reads for a JVM of a thousand threads. */
#define THREADS_PER_READ 512

int hotspot_threads__layout(const struct hotspot_vm *vm, struct hotspot_threads__layout *out, char *err,
			   size_t err_size)
{
	if (!hotspot_vm__static(vm, "ThreadsSMRSupport", "_java_thread_list", &out->list))
		return refuse__say(err, err_size, "HotSpot lists no ThreadsSMRSupport::_java_thread_list");
	if (!hotspot_vm__field(vm, "ThreadsList", "_length", &out->list_length, NULL) ||
	    !hotspot_vm__field(vm, "ThreadsList", "_threads", &out->list_threads, NULL))
		return refuse__say(err, err_size, "HotSpot lists no ThreadsList::_length or _threads");
	/* JDK 17 has it in JavaThread, later JDKs in Thread. */
	if (!hotspot_vm__field(vm, "JavaThread", "_osthread", &out->osthread, NULL) &&
	    !hotspot_vm__field(vm, "Thread", "_osthread", &out->osthread, NULL))
		return refuse__say(err, err_size, "HotSpot lists no JavaThread::_osthread or Thread::_osthread");
	if (!hotspot_vm__field(vm, "OSThread", "_thread_id", &out->thread_id, NULL))
		return refuse__say(err, err_size, "HotSpot lists no OSThread::_thread_id");
	return 0;
}

static bool read_u64(struct hotspot_memory *mem, uint64_t addr, uint64_t *value)
{
	return hotspot_memory__read(mem, addr, value, sizeof(*value));
}

/* The tid of JavaThread jt, or 0 when it cannot be read (a thread ending, a list freed). */
static uint32_t tid_of(struct hotspot_memory *mem, const struct hotspot_threads__layout *l, uint64_t jt)
{
	uint64_t osthread;
	int32_t tid;

	if (!jt || !read_u64(mem, jt + l->osthread, &osthread) || !osthread ||
	    !hotspot_memory__read(mem, osthread + l->thread_id, &tid, sizeof(tid)) || tid <= 0)
		return 0;
	return (uint32_t)tid;
}

int hotspot_threads__read(struct hotspot_memory *mem, const struct hotspot_threads__layout *layout,
			 struct hotspot_java_thread *out, size_t max, size_t *nr, char *err, size_t err_size)
{
	uint64_t list, threads, batch[THREADS_PER_READ];
	uint32_t length;

	*nr = 0;
	if (!read_u64(mem, layout->list, &list) || !list)
		return refuse__say(err, err_size, "its thread list cannot be read");
	if (!hotspot_memory__read(mem, list + layout->list_length, &length, sizeof(length)) ||
	    !read_u64(mem, list + layout->list_threads, &threads))
		return refuse__say(err, err_size, "its thread list (at 0x%llx) cannot be read", (unsigned long long)list);
	if (length > HOTSPOT_THREADS_MAX)
		return refuse__say(err, err_size, "its thread list claims %u threads, more than %u", length,
			    HOTSPOT_THREADS_MAX);
	for (uint32_t at = 0; at < length && *nr < max; at += THREADS_PER_READ) {
		uint32_t n = length - at < THREADS_PER_READ ? length - at : THREADS_PER_READ;

		if (!hotspot_memory__read(mem, threads + (uint64_t)at * sizeof(uint64_t), batch, n * sizeof(batch[0])))
			return refuse__say(err, err_size, "its thread list's threads (at 0x%llx) cannot be read",
				    (unsigned long long)threads);
		for (uint32_t i = 0; i < n && *nr < max; i++) {
			uint32_t tid = tid_of(mem, layout, batch[i]);

			if (tid)
				out[(*nr)++] = (struct hotspot_java_thread){ .tid = tid, .java_thread = batch[i] };
		}
	}
	return 0;
}
