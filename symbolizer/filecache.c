/*
 * filecache: open ELF files and their symbols (contract in filecache.h).
 *
 * Layout: a chained hash table over file_key for lookups, and a doubly
 * linked list in recency order (head: most recent) for eviction. Each
 * entry is in both. The bucket count is a power of two at least twice
 * max_files, so chains stay short.
 *
 * An entry goes UNPARSED (fd held) -> PARSED (fd closed, symbols or none)
 * or FAILED (fd closed, not ELF). Both final states are kept: a file that
 * failed once is not retried while it is cached.
 */
#include "symbolizer/filecache.h"
#include "symbolizer/budget.h"
#include "symbolizer/debuginfo.h"
#include "symbolizer/elf.h"
#include "symbolizer/symtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum entry_state { UNPARSED, PARSED, FAILED };

struct cached_file {
	struct file_key key;
	enum entry_state state;
	int fd;                  /* >= 0 while UNPARSED */
	char *path;              /* as process tgid saw it, for the debuglink search */
	uint32_t tgid;
	uint32_t uid;            /* tgid's user, for the debug file's owner */
	struct elf_image img;    /* valid when PARSED */
	struct symtab *symbols;  /* NULL: none */
	size_t charged;          /* bytes of symbols taken from the budget */
	bool used;               /* added or looked up since the last filecache__forget_unused */
	struct cached_file *hash_next;
	struct cached_file *lru_prev, *lru_next;
};

struct filecache {
	size_t max_files, nr_files;
	const char *proc_root, *debug_root;
	struct membudget *budget;
	struct cached_file **buckets;
	size_t nr_buckets;
	struct cached_file *lru_head, *lru_tail;
	struct filecache_stats stats;
};

static uint64_t key_hash(const struct file_key *key)
{
	uint64_t h = key->dev * 0x9e3779b97f4a7c15ull ^ key->ino;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static int key_equal(const struct file_key *a, const struct file_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

struct filecache *filecache__new(size_t max_files, const char *proc_root, const char *debug_root,
				 struct membudget *budget)
{
	struct filecache *fc = calloc(1, sizeof(*fc));
	size_t buckets = 16;

	if (!fc)
		return NULL;
	while (buckets < 2 * max_files)
		buckets *= 2;
	fc->buckets = calloc(buckets, sizeof(*fc->buckets));
	if (!fc->buckets) {
		free(fc);
		return NULL;
	}
	fc->nr_buckets = buckets;
	fc->max_files = max_files ? max_files : 1;
	fc->proc_root = proc_root;
	fc->debug_root = debug_root;
	fc->budget = budget;
	return fc;
}

static void lru_unlink(struct filecache *fc, struct cached_file *f)
{
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else
		fc->lru_head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		fc->lru_tail = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
}

static void lru_push_head(struct filecache *fc, struct cached_file *f)
{
	f->lru_prev = NULL;
	f->lru_next = fc->lru_head;
	if (fc->lru_head)
		fc->lru_head->lru_prev = f;
	fc->lru_head = f;
	if (!fc->lru_tail)
		fc->lru_tail = f;
}

static void entry_free(struct filecache *fc, struct cached_file *f)
{
	membudget__give(fc->budget, f->charged);
	if (f->fd >= 0)
		close(f->fd);
	symtab__free(f->symbols);
	free(f->path);
	free(f);
}

/* Unlinks f from the table and the list, and frees it. */
static void entry_remove(struct filecache *fc, struct cached_file *f)
{
	struct cached_file **link = &fc->buckets[key_hash(&f->key) & (fc->nr_buckets - 1)];

	while (*link && *link != f)
		link = &(*link)->hash_next;
	if (*link)
		*link = f->hash_next;
	lru_unlink(fc, f);
	fc->nr_files--;
	entry_free(fc, f);
}

void filecache__free(struct filecache *fc)
{
	if (!fc)
		return;
	while (fc->lru_head)
		entry_remove(fc, fc->lru_head);
	free(fc->buckets);
	free(fc);
}

static struct cached_file *find(struct filecache *fc, const struct file_key *key)
{
	struct cached_file *f = fc->buckets[key_hash(key) & (fc->nr_buckets - 1)];

	while (f && !key_equal(&f->key, key))
		f = f->hash_next;
	return f;
}

int filecache__add(struct filecache *fc, int fd, const char *path, uint32_t tgid, uint32_t uid,
		   struct file_key *key)
{
	struct cached_file *f;
	struct stat st;
	size_t bucket;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	key->dev = st.st_dev;
	key->ino = st.st_ino;
	key->size = (uint64_t)st.st_size;
	key->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;

	f = find(fc, key);
	if (f) {
		close(fd);
		f->used = true;
		lru_unlink(fc, f);
		lru_push_head(fc, f);
		return 0;
	}
	f = calloc(1, sizeof(*f));
	if (!f || (path && !(f->path = strdup(path)))) {
		free(f);
		close(fd);
		return -ENOMEM;
	}
	if (fc->nr_files >= fc->max_files && fc->lru_tail) {
		entry_remove(fc, fc->lru_tail);
		fc->stats.evicted++;
	}
	f->key = *key;
	f->fd = fd;
	f->tgid = tgid;
	f->uid = uid;
	f->used = true;
	f->state = UNPARSED;
	bucket = key_hash(key) & (fc->nr_buckets - 1);
	f->hash_next = fc->buckets[bucket];
	fc->buckets[bucket] = f;
	lru_push_head(fc, f);
	fc->nr_files++;
	return 0;
}

/*
 * Evicts the least recently used entries holding a table, except keep,
 * until bytes fit in the budget, then takes them. 0 or -ENOSPC.
 */
static int make_room(struct filecache *fc, struct cached_file *keep, size_t bytes)
{
	struct cached_file *f = fc->lru_tail;

	while (bytes > membudget__left(fc->budget) && f) {
		struct cached_file *prev = f->lru_prev;

		if (f != keep && f->charged) {
			entry_remove(fc, f);
			fc->stats.evicted++;
		}
		f = prev;
	}
	return membudget__take(fc->budget, bytes);
}

/* Keeps symbols for f if the budget has room for them, else frees them. */
static struct symtab *keep_symbols(struct filecache *fc, struct cached_file *f, struct symtab *symbols)
{
	size_t bytes = symtab__bytes(symbols);

	if (!symtab__count(symbols) || make_room(fc, f, bytes)) {
		symtab__free(symbols);
		return NULL;
	}
	f->charged = bytes;
	return symbols;
}

/* UNPARSED -> PARSED or FAILED; closes the fd either way. */
static void parse(struct filecache *fc, struct cached_file *f)
{
	struct symtab *symbols = symtab__new();
	struct stat self;

	if (!symbols || elf__read_fd_bounded(f->fd, &f->img, symbols, membudget__left(fc->budget))) {
		symtab__free(symbols);
		f->state = FAILED;
		fc->stats.failed++;
		goto out_close;
	}
	/* A stripped file: its names are in the debug file, at the same vaddrs. */
	if (!f->img.has_symtab && !fstat(f->fd, &self)) {
		struct debuginfo_where where = {
			.proc_root = fc->proc_root,
			.tgid = f->tgid,
			.debug_root = fc->debug_root,
			.path = f->path,
			.self = &self,
			.uid = f->uid,
		};
		struct elf_image debug_img;
		int debug_fd = debuginfo__open(&where, &f->img);

		if (debug_fd >= 0) {
			elf__read_fd_bounded(debug_fd, &debug_img, symbols, membudget__left(fc->budget));
			if (debug_img.over_bound)
				membudget__refuse(fc->budget);
			close(debug_fd);
		}
	}
	if (f->img.over_bound)
		membudget__refuse(fc->budget);
	symtab__finish(symbols, SYMTAB_OVERLAP_NEST);
	f->symbols = keep_symbols(fc, f, symbols);
	f->state = PARSED;
	fc->stats.loaded++;
out_close:
	close(f->fd);
	f->fd = -1;
}

int filecache__get(struct filecache *fc, const struct file_key *key, struct file_symbols *out)
{
	struct cached_file *f = find(fc, key);

	if (!f)
		return -ENOENT;
	f->used = true;
	lru_unlink(fc, f);
	lru_push_head(fc, f);
	if (f->state == UNPARSED)
		parse(fc, f);
	out->img = f->state == PARSED ? &f->img : NULL;
	out->symbols = f->symbols;
	return 0;
}

size_t filecache__forget_unused(struct filecache *fc)
{
	size_t forgotten = 0;

	for (struct cached_file *f = fc->lru_head, *next; f; f = next) {
		next = f->lru_next;
		if (f->used) {
			f->used = false;
			continue;
		}
		entry_remove(fc, f);
		fc->stats.forgotten++;
		forgotten++;
	}
	return forgotten;
}

void filecache__count_failure(struct filecache *fc)
{
	fc->stats.failed++;
}

void filecache__stats(const struct filecache *fc, struct filecache_stats *stats)
{
	*stats = fc->stats;
}
