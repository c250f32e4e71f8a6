/*
 * javamap: one JVM's methods, code map and threads (contract in javamap.h).
 */
#include "javamap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_ENTRY UINT32_MAX
#define RECENT_MAX 256
#define LIVE UINT64_MAX

/*
 * A 64-bit key to entry index map: chained through an array of next
 * indices, buckets doubling with the entries. Entries are never removed.
 */
struct index {
	uint32_t *buckets, *next;
	uint64_t *keys;
	size_t nr_buckets, nr, cap;
};

static size_t hash_u64(uint64_t key, size_t nr_buckets)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)(key & (nr_buckets - 1));
}

static uint32_t index_find(const struct index *ix, uint64_t key)
{
	if (!ix->nr_buckets)
		return NO_ENTRY;
	for (uint32_t e = ix->buckets[hash_u64(key, ix->nr_buckets)]; e != NO_ENTRY; e = ix->next[e])
		if (ix->keys[e] == key)
			return e;
	return NO_ENTRY;
}

static int index_rehash(struct index *ix, size_t nr_buckets)
{
	uint32_t *buckets = malloc(nr_buckets * sizeof(*buckets));

	if (!buckets)
		return -ENOMEM;
	for (size_t i = 0; i < nr_buckets; i++)
		buckets[i] = NO_ENTRY;
	for (size_t e = 0; e < ix->nr; e++) {
		size_t b = hash_u64(ix->keys[e], nr_buckets);

		ix->next[e] = buckets[b];
		buckets[b] = (uint32_t)e;
	}
	free(ix->buckets);
	ix->buckets = buckets;
	ix->nr_buckets = nr_buckets;
	return 0;
}

/* Appends key as entry ix->nr; the caller fills its own arrays at that index. */
static int index_add(struct index *ix, uint64_t key, size_t max)
{
	size_t b;

	if (ix->nr >= max)
		return -ENOSPC;
	if (ix->nr == ix->cap) {
		size_t cap = ix->cap ? ix->cap * 2 : 256;
		uint32_t *next = realloc(ix->next, cap * sizeof(*next));
		uint64_t *keys;

		if (!next)
			return -ENOMEM;
		ix->next = next;
		keys = realloc(ix->keys, cap * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		ix->keys = keys;
		ix->cap = cap;
	}
	if (ix->nr >= ix->nr_buckets && index_rehash(ix, ix->nr_buckets ? ix->nr_buckets * 2 : 256))
		return -ENOMEM;
	b = hash_u64(key, ix->nr_buckets);
	ix->keys[ix->nr] = key;
	ix->next[ix->nr] = ix->buckets[b];
	ix->buckets[b] = (uint32_t)ix->nr;
	ix->nr++;
	return 0;
}

static void index_free(struct index *ix)
{
	free(ix->buckets);
	free(ix->next);
	free(ix->keys);
}

struct method {
	char *name;
	uint32_t flags;
	uint32_t live_blobs; /* compiled code loaded and not unloaded */
	int64_t slots[JAVAMAP_FRAME_SLOTS];
};

struct blob {
	uint64_t addr, size, method_id;
	uint64_t load_ns, unload_ns; /* unload_ns LIVE until unloaded */
	uint32_t kind;
	char *name;                  /* stubs only */
};

struct javamap {
	struct index method_index;
	struct method *methods;
	struct index thread_index;
	char **threads;
	/*
	 * blobs[0, nr_sorted) are sorted by address (then load time), and
	 * reach[i] is the highest end address among blobs[0..i], so a lookup
	 * walks down from the address only while some blob can still cover it.
	 * Blobs after them arrived since and are few (RECENT_MAX): a lookup
	 * scans them all, and when they are that many everything is sorted
	 * again, rather than on every insertion.
	 */
	struct blob *blobs;
	uint64_t *reach;
	size_t nr_blobs, nr_sorted, blob_cap;
	uint64_t refused;
	size_t name_bytes;  /* against JAVAMAP_MAX_NAME_BYTES */
};

/* A copy of name within the names budget, or NULL (counted). */
static char *copy_name(struct javamap *map, const char *name)
{
	size_t len = strlen(name) + 1;
	char *copy;

	if (map->name_bytes + len > JAVAMAP_MAX_NAME_BYTES || !(copy = malloc(len))) {
		map->refused++;
		return NULL;
	}
	memcpy(copy, name, len);
	map->name_bytes += len;
	return copy;
}

static void sort_blobs(struct javamap *map);

struct javamap *javamap__new(void)
{
	struct javamap *map = calloc(1, sizeof(*map));

	return map;
}

void javamap__free(struct javamap *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->method_index.nr; i++)
		free(map->methods[i].name);
	for (size_t i = 0; i < map->thread_index.nr; i++)
		free(map->threads[i]);
	for (size_t i = 0; i < map->nr_blobs; i++)
		free(map->blobs[i].name);
	index_free(&map->method_index);
	index_free(&map->thread_index);
	free(map->methods);
	free(map->threads);
	free(map->blobs);
	free(map->reach);
	free(map);
}

/* The method entry for id, created nameless if new; NULL past the limit. */
static struct method *method_entry(struct javamap *map, uint64_t method_id)
{
	uint32_t e = index_find(&map->method_index, method_id);

	if (e != NO_ENTRY)
		return &map->methods[e];
	if (map->method_index.nr == map->method_index.cap || !map->methods) {
		/* index_add grows its arrays to cap; keep ours as large. */
		size_t cap = map->method_index.cap ? map->method_index.cap * 2 : 256;
		struct method *methods = realloc(map->methods, cap * sizeof(*methods));

		if (!methods)
			return NULL;
		map->methods = methods;
	}
	if (index_add(&map->method_index, method_id, JAVAMAP_MAX_METHODS))
		return NULL;
	e = (uint32_t)(map->method_index.nr - 1);
	map->methods[e] = (struct method){ 0 };
	for (int i = 0; i < JAVAMAP_FRAME_SLOTS; i++)
		map->methods[e].slots[i] = -1;
	return &map->methods[e];
}

int javamap__add_method(struct javamap *map, uint64_t method_id, uint32_t flags, const char *name)
{
	struct method *m = method_entry(map, method_id);
	char *copy;

	if (!m) {
		map->refused++;
		return -ENOSPC;
	}
	copy = copy_name(map, name);
	if (!copy)
		return -ENOSPC;
	if (m->name)
		map->name_bytes -= strlen(m->name) + 1;
	free(m->name);
	m->name = copy;
	m->flags = flags;
	for (int i = 0; i < JAVAMAP_FRAME_SLOTS; i++)
		m->slots[i] = -1;
	return 0;
}

const char *javamap__method(const struct javamap *map, uint64_t method_id, uint32_t *flags)
{
	uint32_t e = index_find(&map->method_index, method_id);

	if (e == NO_ENTRY || !map->methods[e].name)
		return NULL;
	if (flags)
		*flags = map->methods[e].flags;
	return map->methods[e].name;
}

void javamap__forget_frame_slots(struct javamap *map)
{
	for (size_t e = 0; e < map->method_index.nr; e++)
		for (int i = 0; i < JAVAMAP_FRAME_SLOTS; i++)
			map->methods[e].slots[i] = -1;
}

int64_t *javamap__frame_slots(struct javamap *map, uint64_t method_id)
{
	uint32_t e = index_find(&map->method_index, method_id);

	return e == NO_ENTRY || !map->methods[e].name ? NULL : map->methods[e].slots;
}

bool javamap__is_compiled(const struct javamap *map, uint64_t method_id)
{
	uint32_t e = index_find(&map->method_index, method_id);

	return e != NO_ENTRY && map->methods[e].live_blobs > 0;
}

int javamap__add_code(struct javamap *map, const struct jbpf_msg_code_load *load, const char *name)
{
	struct blob *b;

	if (map->nr_blobs >= JAVAMAP_MAX_BLOBS || load->size > JAVAMAP_MAX_BLOB_SIZE) {
		map->refused++;
		return -ENOSPC;
	}
	if (map->nr_blobs == map->blob_cap) {
		size_t cap = map->blob_cap ? map->blob_cap * 2 : 1024;
		struct blob *blobs = realloc(map->blobs, cap * sizeof(*blobs));
		uint64_t *reach;

		if (!blobs) {
			map->refused++;
			return -ENOMEM;
		}
		map->blobs = blobs;
		reach = realloc(map->reach, cap * sizeof(*reach));
		if (!reach) {
			map->refused++;
			return -ENOMEM;
		}
		map->reach = reach;
		map->blob_cap = cap;
	}
	b = &map->blobs[map->nr_blobs];
	*b = (struct blob){
		.addr = load->addr,
		.size = load->size,
		.method_id = load->kind == JBPF_CODE_NMETHOD ? load->method_id : 0,
		.load_ns = load->time_ns,
		.unload_ns = LIVE,
		.kind = load->kind,
	};
	if (load->kind == JBPF_CODE_STUB && name[0]) {
		b->name = copy_name(map, name);
		if (!b->name)
			return -ENOSPC;
	}
	if (b->method_id) {
		struct method *m = method_entry(map, b->method_id);

		if (m)
			m->live_blobs++;
	}
	map->nr_blobs++;
	if (map->nr_blobs - map->nr_sorted >= RECENT_MAX)
		sort_blobs(map);
	return 0;
}

static int compare_blobs(const void *a, const void *b)
{
	const struct blob *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->load_ns < y->load_ns ? -1 : x->load_ns > y->load_ns;
}

static void sort_blobs(struct javamap *map)
{
	uint64_t reach = 0;

	if (map->nr_sorted == map->nr_blobs)
		return;
	qsort(map->blobs, map->nr_blobs, sizeof(*map->blobs), compare_blobs);
	for (size_t i = 0; i < map->nr_blobs; i++) {
		if (map->blobs[i].addr + map->blobs[i].size > reach)
			reach = map->blobs[i].addr + map->blobs[i].size;
		map->reach[i] = reach;
	}
	map->nr_sorted = map->nr_blobs;
}

/* Index one past the last blob starting at or below addr. */
static size_t blobs_upper_bound(const struct javamap *map, uint64_t addr)
{
	size_t lo = 0, hi = map->nr_sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (map->blobs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Marks blob b unloaded if it is the live blob of the method unloaded at its address. */
static bool unload_blob(struct javamap *map, struct blob *b, const struct jbpf_msg_code_unload *unload)
{
	uint32_t e;

	if (b->addr != unload->addr || b->unload_ns != LIVE || b->kind != JBPF_CODE_NMETHOD ||
	    b->method_id != unload->method_id)
		return false;
	b->unload_ns = unload->time_ns;
	e = index_find(&map->method_index, b->method_id);
	if (e != NO_ENTRY && map->methods[e].live_blobs)
		map->methods[e].live_blobs--;
	return true;
}

void javamap__unload_code(struct javamap *map, const struct jbpf_msg_code_unload *unload)
{
	for (size_t i = map->nr_sorted; i < map->nr_blobs; i++)
		if (unload_blob(map, &map->blobs[i], unload))
			return;
	for (size_t i = blobs_upper_bound(map, unload->addr); i-- > 0 && map->blobs[i].addr == unload->addr;)
		if (unload_blob(map, &map->blobs[i], unload))
			return;
}

/* Keeps in *before / *after the best candidates so far (see javamap.h). */
static void consider(const struct blob *b, uint64_t addr, uint64_t time_ns, const struct blob **before,
		     const struct blob **after)
{
	if (addr < b->addr || addr - b->addr >= b->size || b->unload_ns <= time_ns)
		return;
	if (b->load_ns <= time_ns) {
		if (!*before || b->load_ns > (*before)->load_ns)
			*before = b;
	} else if (!*after || b->load_ns < (*after)->load_ns) {
		*after = b;
	}
}

bool javamap__code_at(struct javamap *map, uint64_t addr, uint64_t time_ns, struct javamap_code *code)
{
	const struct blob *before = NULL, *after = NULL;

	for (size_t i = map->nr_sorted; i < map->nr_blobs; i++)
		consider(&map->blobs[i], addr, time_ns, &before, &after);
	/* Below the first blob whose reach ends at or before addr, none can hold it. */
	for (size_t i = blobs_upper_bound(map, addr); i-- > 0 && map->reach[i] > addr;)
		consider(&map->blobs[i], addr, time_ns, &before, &after);
	if (!before)
		before = after;
	if (!before)
		return false;
	code->addr = before->addr;
	code->size = before->size;
	code->method_id = before->method_id;
	code->kind = before->kind;
	code->name = before->name ? before->name : javamap__method(map, before->method_id, NULL);
	return true;
}

int javamap__add_thread(struct javamap *map, uint32_t tid, const char *name)
{
	uint32_t e = index_find(&map->thread_index, tid);
	char *copy = copy_name(map, name);

	if (!copy)
		return -ENOSPC;
	if (e == NO_ENTRY) {
		if (map->thread_index.nr == map->thread_index.cap || !map->threads) {
			size_t cap = map->thread_index.cap ? map->thread_index.cap * 2 : 256;
			char **threads = realloc(map->threads, cap * sizeof(*threads));

			if (!threads) {
				map->name_bytes -= strlen(copy) + 1;
				free(copy);
				map->refused++;
				return -ENOMEM;
			}
			map->threads = threads;
		}
		if (index_add(&map->thread_index, tid, JAVAMAP_MAX_THREADS)) {
			map->name_bytes -= strlen(copy) + 1;
			free(copy);
			map->refused++;
			return -ENOSPC;
		}
		e = (uint32_t)(map->thread_index.nr - 1);
		map->threads[e] = NULL;
	}
	if (map->threads[e])
		map->name_bytes -= strlen(map->threads[e]) + 1;
	free(map->threads[e]);
	map->threads[e] = copy;
	return 0;
}

const char *javamap__thread(const struct javamap *map, uint32_t tid)
{
	uint32_t e = index_find(&map->thread_index, tid);

	return e == NO_ENTRY ? NULL : map->threads[e];
}

void javamap__stats(const struct javamap *map, struct javamap_stats *stats)
{
	stats->methods = map->method_index.nr;
	stats->blobs = map->nr_blobs;
	stats->threads = map->thread_index.nr;
	stats->refused = map->refused;
}
