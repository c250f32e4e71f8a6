/*
 * spool: profiles waiting to be pushed, on disk, in order, bounded.
 *
 * Every profile to push is put here first and sent from here, oldest
 * first, so a server that is down for hours delays profiles but neither
 * reorders nor loses them (up to the bound), and a profiler that is
 * restarted sends what the last one could not.
 *
 * An entry is one file "<seq>.prof", seq twenty decimal digits, so names
 * sort as they were made; it holds the ingest query (one line) and the
 * gzipped pprof after it. It is written as "tmp-<seq>", synced, then
 * renamed: a profiler killed while writing leaves a tmp- file, removed at
 * the next open, never a half entry. An entry is unlinked once the server
 * took it; the one window for a double send is a kill between the
 * server's answer and that unlink.
 *
 * The bound is in bytes: putting an entry past it drops the oldest ones
 * (never the one being sent), counted. Thread-safe: the recording puts,
 * the pusher's thread takes.
 */
#ifndef JBPF_FLEET_SPOOL_H
#define JBPF_FLEET_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define SPOOL_MAX_ENTRIES 100000 /* with the byte bound, what the index in memory may hold */

struct spool;

struct spool_stats {
	uint64_t entries, bytes;   /* waiting now */
	uint64_t put, sent;        /* since open */
	uint64_t dropped;          /* removed by the bound, oldest first */
};

/* Opens (creates, 0700) dir. NULL after writing one line into err. */
struct spool *spool__open(const char *dir, uint64_t max_bytes, char *err, size_t err_size);
void spool__close(struct spool *s);

/*
 * Adds an entry; *dropped (may be NULL) gets how many old entries the bound
 * removed for it. 0, or a negative errno (the entry is not added).
 */
int spool__put(struct spool *s, const char *query, const void *body, size_t len, uint64_t *dropped);

/*
 * The oldest entry, read into *query and *body (the caller frees both;
 * *body points into the same allocation as *query, free *query only) and
 * marked in flight. 0, -ENOENT when empty, or a negative errno.
 */
int spool__peek(struct spool *s, uint64_t *seq, char **query, const void **body, size_t *len);
/* The entry in flight was delivered (removed) or not (kept for the next peek). */
void spool__done(struct spool *s, uint64_t seq);
void spool__release(struct spool *s, uint64_t seq);

void spool__stats(struct spool *s, struct spool_stats *stats);

#endif /* JBPF_FLEET_SPOOL_H */
