/*
 * outbox: the messages of the current recording waiting to be written to
 * the profiler, in order, and the set of methods they have named.
 *
 * Any thread appends (JVMTI callbacks on JVM threads, the attaching thread,
 * the agent thread); only the agent thread takes bytes out and writes them
 * to the socket. Appends copy into memory and return: no caller ever waits
 * for the profiler. The queue is bounded: an append that would take it
 * past its limit is dropped whole and counted in events_lost.
 *
 * Ordering: an append is one run of whole messages, never interleaved with
 * another. A method counts as named only once the append carrying its
 * METHOD has succeeded, under the same lock, so any later append that
 * relies on the name (a TRACE, a CODE_LOAD) lands after it in the stream.
 * Two threads may both name a method; the second METHOD is harmless.
 *
 * All functions are thread-safe; none is async-signal-safe (they lock and
 * allocate). Between outbox__close and the next outbox__open, appends are
 * refused and not counted.
 */
#ifndef JBPF_OUTBOX_H
#define JBPF_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

/* Bytes queued at most for JVMTI events; past it they are dropped. */
#define OUTBOX_LIMIT (16u << 20)
/* Queue memory comes in chunks this big (bigger for a bigger append). */
#define OUTBOX_CHUNK (64u << 10)
/* Set of named methods: 2^17 entries, 1 MiB, emptied when 3/4 full. */
#define OUTBOX_METHODSET_LOG2 17

struct outbox_chunk {
	struct outbox_chunk *next;
	size_t len; /* bytes of data used */
	size_t cap;
	char data[];
};

/* Allocates the method set; once, before anything else. -1 when out of memory. */
int outbox__init(void);
/* Starts a recording, with first (the HELLO) as its first message. -1 when out of memory. */
int outbox__open(const void *first, size_t len);
/* Ends it: drops what is queued, forgets named methods, refuses appends. */
void outbox__close(void);

/*
 * Writes to unnamed (room for n) the IDs among ids[0..n) that this
 * recording has not named, each once, and returns how many. They stay
 * unnamed until an outbox__append that names them succeeds.
 */
size_t outbox__unnamed(const uint64_t *ids, size_t n, uint64_t *unnamed);
/*
 * Queues len bytes of whole messages if the queued total stays within
 * limit, then marks named[0..n_named) as named. 0 on success; -1 if the
 * outbox is closed or the append is dropped (full: counted in events_lost,
 * or out of memory).
 */
int outbox__append(const void *buf, size_t len, size_t limit, const uint64_t *named, size_t n_named);

/* Agent thread: takes every queued chunk, oldest first; NULL if none. */
struct outbox_chunk *outbox__take(void);
/* Agent thread: frees one chunk it took, written or given up on. NULL-safe. */
void outbox__done(struct outbox_chunk *chunk);

/* Bytes queued or taken and not yet done. */
size_t outbox__bytes(void);
/* Appends dropped for a full queue since outbox__open. */
uint64_t outbox__events_lost(void);

#endif /* JBPF_OUTBOX_H */
