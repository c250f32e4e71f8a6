/*
 * cache: unwind tables shared by file identity (API in unwind.h).
 *
 *   entries  one per key: a built table, or a remembered failure (the
 *            negative errno of the build, no rows)
 *   index    a chained hash table on the key, doubled as it fills
 *   order    a doubly linked list, most recently used first
 *
 * Each entry is charged its table's bytes plus its own size, failures
 * included, so that max_bytes bounds everything the cache holds and a
 * stream of files without CFI cannot grow it without bound. When an entry
 * added takes the total past max_bytes, entries are dropped from the tail
 * of the list until it fits. A dropped entry whose table is still held
 * (references from unwind_cache__get not yet put back) leaves the index
 * and the budget but stays allocated; the last put frees it.
 *
 * A key with a build-id matches only keys with the same build-id and the
 * same digest of the bytes the table is built from: the same build
 * installed twice (a container image, a copied JDK) is built once, and a
 * file that only claims a build-id (a target may write any) gets a table
 * of its own, never another file's. Without one, device and inode
 * identify the file.
 *
 * With a disk store (unwind_cache__set_disk), a table of a file with a
 * build-id is first looked for there under its build-id and digest, and
 * one built is kept there, so a later run reads it instead of building it
 * again (disk.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "unwind/disk.h"
#include "unwind/unwind.h"

struct entry {
	struct unwind_table table;   /* handed out; rows NULL for a failure */
	struct unwind_cache_key key;
	int error;                   /* 0, or the build's negative errno */
	unsigned refs;               /* tables handed out, not yet put back */
	bool cached;                 /* in the index and the order list */
	size_t bytes;                /* charged against max_bytes */
	struct entry *chain;         /* next in the hash bucket */
	struct entry *newer, *older; /* the order list */
};

struct unwind_cache {
	size_t max_bytes;
	struct entry **buckets;
	size_t nr_buckets;           /* a power of two */
	size_t nr_entries;
	struct entry *newest, *oldest;
	struct unwind_cache_stats stats;
	struct unwind_disk *disk;    /* NULL: every table is built */
};

#define INITIAL_BUCKETS 64

static struct entry *entry_of(const struct unwind_table *table)
{
	return (struct entry *)((char *)table - offsetof(struct entry, table));
}

static bool key_equal(const struct unwind_cache_key *a, const struct unwind_cache_key *b)
{
	if (a->build_id_len != b->build_id_len)
		return false;
	if (a->build_id_len)
		return memcmp(a->build_id, b->build_id, a->build_id_len) == 0 &&
		       memcmp(a->digest, b->digest, sizeof(a->digest)) == 0;
	return a->dev == b->dev && a->ino == b->ino;
}

/* FNV-1a over the bytes that identify the key. */
static uint64_t key_hash(const struct unwind_cache_key *key)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uint8_t buf[sizeof(key->dev) + sizeof(key->ino)];
	const uint8_t *p = buf;
	size_t len = sizeof(buf);

	/* The digest alone: it is a hash already, and keys with a build-id differ in it. */
	if (key->build_id_len) {
		p = key->digest;
		len = sizeof(key->digest);
	} else {
		memcpy(buf, &key->dev, sizeof(key->dev));
		memcpy(buf + sizeof(key->dev), &key->ino, sizeof(key->ino));
	}
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct entry **bucket(const struct unwind_cache *cache, const struct unwind_cache_key *key)
{
	return &cache->buckets[key_hash(key) & (cache->nr_buckets - 1)];
}

struct unwind_cache *unwind_cache__new(size_t max_bytes)
{
	struct unwind_cache *cache = calloc(1, sizeof(*cache));

	if (!cache)
		return NULL;
	cache->buckets = calloc(INITIAL_BUCKETS, sizeof(*cache->buckets));
	if (!cache->buckets) {
		free(cache);
		return NULL;
	}
	cache->nr_buckets = INITIAL_BUCKETS;
	cache->max_bytes = max_bytes;
	return cache;
}

static void entry_free(struct entry *e)
{
	free(e->table.rows);
	free(e);
}

void unwind_cache__free(struct unwind_cache *cache)
{
	struct entry *e, *older;

	if (!cache)
		return;
	for (e = cache->newest; e; e = older) {
		older = e->older;
		entry_free(e);
	}
	free(cache->buckets);
	free(cache);
}

static void order_unlink(struct unwind_cache *cache, struct entry *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		cache->newest = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		cache->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void order_push_newest(struct unwind_cache *cache, struct entry *e)
{
	e->older = cache->newest;
	e->newer = NULL;
	if (cache->newest)
		cache->newest->newer = e;
	else
		cache->oldest = e;
	cache->newest = e;
}

static struct entry *lookup(const struct unwind_cache *cache, const struct unwind_cache_key *key)
{
	for (struct entry *e = *bucket(cache, key); e; e = e->chain)
		if (key_equal(&e->key, key))
			return e;
	return NULL;
}

/* Doubles the buckets; on out of memory the chains just grow longer. */
static void grow_index(struct unwind_cache *cache)
{
	size_t nr = cache->nr_buckets * 2;
	struct entry **buckets = calloc(nr, sizeof(*buckets));

	if (!buckets)
		return;
	for (size_t i = 0; i < cache->nr_buckets; i++) {
		struct entry *e = cache->buckets[i], *chain;

		for (; e; e = chain) {
			size_t b = key_hash(&e->key) & (nr - 1);

			chain = e->chain;
			e->chain = buckets[b];
			buckets[b] = e;
		}
	}
	free(cache->buckets);
	cache->buckets = buckets;
	cache->nr_buckets = nr;
}

static void insert(struct unwind_cache *cache, struct entry *e)
{
	struct entry **b;

	if (cache->nr_entries >= cache->nr_buckets)
		grow_index(cache);
	b = bucket(cache, &e->key);
	e->chain = *b;
	*b = e;
	e->cached = true;
	order_push_newest(cache, e);
	cache->nr_entries++;
	cache->stats.bytes += e->bytes;
	if (!e->error) {
		cache->stats.tables++;
		cache->stats.rows += e->table.nr_rows;
	}
}

static void evict(struct unwind_cache *cache, struct entry *e)
{
	struct entry **p = bucket(cache, &e->key);

	while (*p != e)
		p = &(*p)->chain;
	*p = e->chain;
	order_unlink(cache, e);
	e->cached = false;
	cache->nr_entries--;
	cache->stats.bytes -= e->bytes;
	if (!e->error) {
		cache->stats.tables--;
		cache->stats.rows -= e->table.nr_rows;
	}
	cache->stats.evicted++;
	if (e->refs == 0)
		entry_free(e);
}

/* Drops the least recently used entries, never keep, until the total fits. */
static void shrink(struct unwind_cache *cache, const struct entry *keep)
{
	while (cache->stats.bytes > cache->max_bytes && cache->oldest && cache->oldest != keep)
		evict(cache, cache->oldest);
}

/* The table from the disk store when it holds it, else built (and then stored). */
static int read_or_build(struct unwind_cache *cache, const struct unwind_cache_key *key, int fd, int debug_fd,
			 struct unwind_table **table, char *err, size_t err_size)
{
	bool kept = cache->disk && key->build_id_len;
	int error;

	if (kept && !unwind_disk__load(cache->disk, key->build_id, key->build_id_len, key->digest, debug_fd >= 0,
				       table)) {
		cache->stats.disk_read++;
		return 0;
	}
	error = unwind_table__build(fd, debug_fd, table, err, err_size);
	if (!error && kept &&
	    !unwind_disk__store(cache->disk, key->build_id, key->build_id_len, key->digest, debug_fd >= 0, *table))
		cache->stats.disk_written++;
	return error;
}

/* A new entry for key: its table, or the reason there is none. */
static struct entry *build_entry(struct unwind_cache *cache, const struct unwind_cache_key *key, int fd,
				 int debug_fd)
{
	uint64_t start_ns = clock__monotonic_ns();
	struct entry *e = calloc(1, sizeof(*e));
	struct unwind_table *table;
	char err[160];

	if (!e)
		return NULL;
	e->key = *key;
	e->error = read_or_build(cache, key, fd, debug_fd, &table, err, sizeof(err));
	if (!e->error && unwind_table__bytes(table) + sizeof(*e) > cache->max_bytes) {
		unwind_table__free(table);
		e->error = -EFBIG;
	}
	if (!e->error) {
		/* The entry takes the rows over; the table's own struct goes. */
		e->table = *table;
		free(table);
		e->bytes = unwind_table__bytes(&e->table) - sizeof(e->table);
		cache->stats.built++;
	} else {
		cache->stats.failed++;
	}
	e->bytes += sizeof(*e);
	cache->stats.build_ns += clock__monotonic_ns() - start_ns;
	return e;
}

void unwind_cache__set_disk(struct unwind_cache *cache, struct unwind_disk *disk)
{
	cache->disk = disk;
}

const struct unwind_table *unwind_cache__get(struct unwind_cache *cache, const struct unwind_cache_key *key,
					     int fd, int debug_fd)
{
	struct entry *e = lookup(cache, key);

	if (e) {
		order_unlink(cache, e);
		order_push_newest(cache, e);
	} else {
		/* Nothing to build from: not a failure of the file. */
		if (fd < 0)
			return NULL;
		e = build_entry(cache, key, fd, debug_fd);
		if (!e)
			return NULL;
		insert(cache, e);
		shrink(cache, e);
	}
	if (e->error)
		return NULL;
	e->refs++;
	return &e->table;
}

void unwind_cache__put(struct unwind_cache *cache, const struct unwind_table *table)
{
	struct entry *e;

	if (!table)
		return;
	e = entry_of(table);
	if (--e->refs == 0 && !e->cached)
		entry_free(e);
}

void unwind_cache__stats(const struct unwind_cache *cache, struct unwind_cache_stats *stats)
{
	*stats = cache->stats;
}
