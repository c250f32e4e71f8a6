/*
 * thread_names: a walked JVM's thread names by tid (contract in thread_names.h).
 */
#include "thread_names.h"

#include <stdlib.h>
#include <string.h>

struct thread_entry {
	uint32_t tid;
	uint64_t java_thread;  /* its JavaThread */
	uint64_t string;       /* the String its name was read from; 0 when it has none */
	char *name;            /* NULL when it has none */
	uint8_t failed;        /* why it has none: enum hotspot_thread_name_result, OK when unnamed by the JVM */
	bool kept;             /* its name is the one of the list read before, not read again */
};

/* Tids sampled but not listed, remembered until the next list so that they ask for no other; a bound. */
#define UNLISTED_MAX 1024

struct thread_names {
	const struct hotspot_thread_names__layout *layout;
	struct thread_entry *entries;  /* sorted by tid */
	size_t nr;
	uint32_t unlisted[UNLISTED_MAX];
	size_t nr_unlisted;
	struct thread_names_stats stats;
	uint32_t epoch;   /* the heap's count of collections when the names were read */
	bool settled;     /* and they were read with no collection under way */
};

struct thread_names *thread_names__new(const struct hotspot_thread_names__layout *layout)
{
	struct thread_names *names = calloc(1, sizeof(*names));

	if (names)
		names->layout = layout;
	return names;
}

static void free_entries(struct thread_entry *entries, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(entries[i].name);
	free(entries);
}

void thread_names__free(struct thread_names *names)
{
	if (!names)
		return;
	free_entries(names->entries, names->nr);
	free(names);
}

static int by_tid(const void *a, const void *b)
{
	const struct thread_entry *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct thread_entry *find(const struct thread_names *names, uint32_t tid)
{
	struct thread_entry key = { .tid = tid };

	return names->nr ? bsearch(&key, names->entries, names->nr, sizeof(key), by_tid) : NULL;
}

/* A name not read: counted once per thread and reason, not at every list read that meets it again. */
static void count(struct thread_names *names, const struct thread_entry *e, const struct thread_entry *old)
{
	if (old && old->java_thread == e->java_thread && old->failed == e->failed)
		return;
	if (e->failed == HOTSPOT_THREAD_NAME_UNREADABLE)
		names->stats.unreadable++;
	else if (e->failed == HOTSPOT_THREAD_NAME_INVALID)
		names->stats.invalid++;
}

/*
 * Entry e of a thread now listed: its name kept from old when its String
 * is the same one (same_heap: no collection since old was read), else read.
 */
static void name_entry(struct thread_names *names, struct hotspot_memory *mem, struct thread_entry *e,
		       struct thread_entry *old, bool same_heap)
{
	char name[HOTSPOT_THREAD_NAME_MAX];
	enum hotspot_thread_name_result r = hotspot_thread_names__string(mem, names->layout, e->java_thread, &e->string);

	if (r != HOTSPOT_THREAD_NAME_OK) {
		e->failed = (uint8_t)r;
		return;
	}
	if (same_heap && old && old->java_thread == e->java_thread && old->string == e->string && old->name) {
		e->name = old->name;
		e->kept = true;
		old->name = NULL;
		names->stats.kept++;
		return;
	}
	r = hotspot_thread_names__read(mem, names->layout, e->string, name);
	if (r != HOTSPOT_THREAD_NAME_OK) {
		e->failed = (uint8_t)r;
		e->string = 0;
		return;
	}
	e->name = strdup(name);
	names->stats.read += e->name != NULL;
}

void thread_names__update(struct thread_names *names, struct hotspot_memory *mem,
			  const struct hotspot_java_thread *list, size_t nr)
{
	struct thread_entry *entries = calloc(nr ? nr : 1, sizeof(*entries));
	uint32_t epoch, after;
	bool settled, same_heap;

	if (!entries)
		return;
	for (size_t i = 0; i < nr; i++)
		entries[i] = (struct thread_entry){ .tid = list[i].tid, .java_thread = list[i].java_thread };
	qsort(entries, nr, sizeof(*entries), by_tid);
	settled = hotspot_thread_names__heap_settled(mem, names->layout, &epoch);
	same_heap = settled && names->settled && epoch == names->epoch;
	/* A pause under way: nothing read now would be believed, so nothing is read. */
	for (size_t i = 0; settled && i < nr; i++)
		name_entry(names, mem, &entries[i], find(names, entries[i].tid), same_heap);
	settled = settled && hotspot_thread_names__heap_settled(mem, names->layout, &after) && after == epoch;
	for (size_t i = 0; i < nr; i++) {
		struct thread_entry *e = &entries[i], *old = find(names, e->tid);

		if (settled) {
			count(names, e, old);
			continue;
		}
		/*
		 * Objects moved under these reads: a name read may be another
		 * object's. The names read before are kept, to be read again
		 * (the next list finds this one not settled).
		 */
		if (e->kept)
			continue;
		free(e->name);
		e->name = NULL;
		e->failed = HOTSPOT_THREAD_NAME_OK;
		if (old && old->java_thread == e->java_thread) {
			e->name = old->name;
			e->failed = old->failed;
			old->name = NULL;
		}
	}
	names->epoch = epoch;
	names->settled = settled;
	free_entries(names->entries, names->nr);
	names->entries = entries;
	names->nr = nr;
}

void thread_names__forget_unlisted(struct thread_names *names)
{
	if (names)
		names->nr_unlisted = 0;
}

void thread_names__mark_unlisted(struct thread_names *names, uint32_t tid)
{
	if (names && names->nr_unlisted < UNLISTED_MAX)
		names->unlisted[names->nr_unlisted++] = tid;
}

bool thread_names__known(const struct thread_names *names, uint32_t tid)
{
	if (!names)
		return false;
	for (size_t i = 0; i < names->nr_unlisted; i++)
		if (names->unlisted[i] == tid)
			return true;
	return find(names, tid) != NULL;
}

bool thread_names__settled(const struct thread_names *names)
{
	return names && names->settled;
}

const char *thread_names__get(const struct thread_names *names, uint32_t tid)
{
	const struct thread_entry *e = names ? find(names, tid) : NULL;

	return e ? e->name : NULL;
}

void thread_names__stats(const struct thread_names *names, struct thread_names_stats *out)
{
	if (!names)
		return;
	out->read += names->stats.read;
	out->kept += names->stats.kept;
	out->unreadable += names->stats.unreadable;
	out->invalid += names->stats.invalid;
}
