/*
 * proccache: processes, their mappings and perf maps (contract in
 * proccache.h).
 *
 * Layout: as in filecache.c, a chained hash table (by tgid) plus a
 * recency list; the bucket count is fixed at creation.
 *
 * Reading a process:
 *   1. stat: its start time; failure means the process is gone
 *   2. comm and NSpid
 *   3. maps, executable mappings only; for each file mapping, the file is
 *      opened through map_files/<start>-<end>, which is the mapped file
 *      itself for as long as the process lives, whatever its path names
 *      by now. Its device and inode are not compared with maps: overlayfs
 *      shows the lower layer's in maps and its own in stat, and the file
 *      is the mapping's by construction (at worst, one the process mapped
 *      at that range since, which it could read). Only where map_files
 *      cannot be opened (no CAP_SYS_ADMIN, a fixture tree) is the path
 *      opened inside the process root, and then the file must be a
 *      regular file with the very device and inode maps names, reached
 *      without a symlink: the target may have swapped the path since
 *      (rename, a mount over a directory), even for a file of the same
 *      inode number on another device.
 *
 * The perf map is the target's own file: it is not followed if a symlink,
 * and must belong to the process's user (or be root's and readable by
 * everyone), as perf requires.
 */
#include "symbolizer/proccache.h"
#include "common/clock.h"
#include "symbolizer/budget.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/symtab.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

struct proccache {
	size_t max_processes, nr_processes;
	const char *proc_root;
	struct filecache *files;
	struct membudget *budget;
	struct process **buckets;
	size_t nr_buckets;
	struct process *lru_head, *lru_tail;
	struct proccache_stats stats;
	uint64_t generation;
};

static size_t bucket_of(const struct proccache *pc, uint32_t tgid)
{
	return (size_t)((tgid * 0x9e3779b1u) & (pc->nr_buckets - 1));
}

struct proccache *proccache__new(size_t max_processes, const char *proc_root,
				 struct filecache *files, struct membudget *budget)
{
	struct proccache *pc = calloc(1, sizeof(*pc));
	size_t buckets = 16;

	if (!pc)
		return NULL;
	while (buckets < 2 * max_processes)
		buckets *= 2;
	pc->buckets = calloc(buckets, sizeof(*pc->buckets));
	if (!pc->buckets) {
		free(pc);
		return NULL;
	}
	pc->nr_buckets = buckets;
	pc->max_processes = max_processes ? max_processes : 1;
	pc->proc_root = proc_root;
	pc->files = files;
	pc->budget = budget;
	return pc;
}

static void free_maps(struct process *p)
{
	size_t i;

	for (i = 0; i < p->nr_maps; i++)
		free(p->maps[i].path);
	free(p->maps);
	p->maps = NULL;
	p->nr_maps = 0;
}

static void forget_perfmap(struct proccache *pc, struct process *p)
{
	membudget__give(pc->budget, p->perfmap_bytes);
	p->perfmap_bytes = 0;
	symtab__free(p->perfmap);
	p->perfmap = NULL;
	p->perfmap_checked = 0;
	p->perfmap_size = 0;
	p->perfmap_mtime_ns = 0;
}

static void lru_unlink(struct proccache *pc, struct process *p)
{
	if (p->lru_prev)
		p->lru_prev->lru_next = p->lru_next;
	else
		pc->lru_head = p->lru_next;
	if (p->lru_next)
		p->lru_next->lru_prev = p->lru_prev;
	else
		pc->lru_tail = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
}

static void lru_push_head(struct proccache *pc, struct process *p)
{
	p->lru_prev = NULL;
	p->lru_next = pc->lru_head;
	if (pc->lru_head)
		pc->lru_head->lru_prev = p;
	pc->lru_head = p;
	if (!pc->lru_tail)
		pc->lru_tail = p;
}

static void process_remove(struct proccache *pc, struct process *p)
{
	struct process **link = &pc->buckets[bucket_of(pc, p->tgid)];

	while (*link && *link != p)
		link = &(*link)->hash_next;
	if (*link)
		*link = p->hash_next;
	lru_unlink(pc, p);
	pc->nr_processes--;
	pc->generation++;
	free_maps(p);
	forget_perfmap(pc, p);
	free(p);
}

void proccache__free(struct proccache *pc)
{
	if (!pc)
		return;
	while (pc->lru_head)
		process_remove(pc, pc->lru_head);
	free(pc->buckets);
	free(pc);
}

/* Opens the file behind m (see the file comment) and adds it to the filecache. */
static int open_mapping_file(struct proccache *pc, struct process *p, struct mapping *m)
{
	int fd, err;

	m->has_file = 0;
	fd = proc__open_mapping(pc->proc_root, p->tgid,
				&(struct proc_mapping){ .start = m->start, .end = m->end, .path = m->path,
							.deleted = m->deleted, .dev = m->dev, .ino = m->inode });
	if (fd < 0) {
		filecache__count_failure(pc->files);
		return fd;
	}
	err = filecache__add(pc->files, fd, m->path, p->tgid, p->uid, &m->key);
	if (err) {
		filecache__count_failure(pc->files);
		return err;
	}
	m->has_file = 1;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int read_maps(struct proccache *pc, struct process *p)
{
	struct procmaps_entry *entries;
	struct mapping *maps;
	char path[PATH_MAX];
	size_t i, nr, out = 0;
	int n, err;

	n = snprintf(path, sizeof(path), "%s/%u/maps", pc->proc_root, p->tgid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	err = procmaps__read(path, 1, &entries, &nr);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	pc->stats.loaded++;
	maps = calloc(nr ? nr : 1, sizeof(*maps));
	if (!maps) {
		procmaps__free(entries, nr);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		struct procmaps_entry *e = &entries[i];
		struct mapping *m = &maps[out];

		/* The kernel lists mappings in order; anything else is not a real maps file. */
		if (out && e->start < maps[out - 1].end)
			continue;
		m->start = e->start;
		m->end = e->end;
		m->pgoff = e->pgoff;
		m->dev = (uint64_t)makedev(e->dev_major, e->dev_minor);
		m->inode = e->inode;
		m->kind = e->kind;
		m->deleted = e->deleted;
		m->path = e->path;
		e->path = NULL;
		m->name = m->path ? basename_of(m->path) : "[anon]";
		if (m->kind == PROCMAPS_FILE)
			open_mapping_file(pc, p, m);
		out++;
	}
	procmaps__free(entries, nr);
	free_maps(p);
	p->maps = maps;
	p->nr_maps = out;
	p->maps_read_ns = clock__monotonic_ns();
	return 0;
}

/* Unknown, the uid is root's: only files owned by root and readable by everyone pass. */
static void read_uid(struct proccache *pc, struct process *p)
{
	if (proc__uid(pc->proc_root, p->tgid, &p->uid))
		p->uid = 0;
}

/* Reads everything about p->tgid into p, which holds nothing yet. */
static int load(struct proccache *pc, struct process *p)
{
	int err = proc__start_time(pc->proc_root, p->tgid, &p->start_time);

	if (err)
		return err;
	if (proc__comm(pc->proc_root, p->tgid, p->comm, sizeof(p->comm)))
		p->comm[0] = '\0';
	p->nspid = proc__nspid(pc->proc_root, p->tgid);
	read_uid(pc, p);
	return read_maps(pc, p);
}

struct process *proccache__get(struct proccache *pc, uint32_t tgid, int *err)
{
	struct process *p = pc->buckets[bucket_of(pc, tgid)];
	size_t bucket;

	while (p && p->tgid != tgid)
		p = p->hash_next;
	if (p) {
		lru_unlink(pc, p);
		lru_push_head(pc, p);
		return p;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	p->tgid = tgid;
	*err = load(pc, p);
	if (*err) {
		free_maps(p);
		free(p);
		return NULL;
	}
	if (pc->nr_processes >= pc->max_processes && pc->lru_tail) {
		process_remove(pc, pc->lru_tail);
		pc->stats.evicted++;
	}
	bucket = bucket_of(pc, tgid);
	p->hash_next = pc->buckets[bucket];
	pc->buckets[bucket] = p;
	lru_push_head(pc, p);
	pc->nr_processes++;
	return p;
}

void proccache__forget(struct proccache *pc, uint32_t tgid)
{
	struct process *p = pc->buckets[bucket_of(pc, tgid)];

	while (p && p->tgid != tgid)
		p = p->hash_next;
	if (p)
		process_remove(pc, p);
}

size_t proccache__forget_gone(struct proccache *pc)
{
	struct process *p = pc->lru_head;
	size_t dropped = 0;

	while (p) {
		struct process *next = p->lru_next;
		uint64_t start_time;

		if (proc__start_time(pc->proc_root, p->tgid, &start_time) || start_time != p->start_time) {
			process_remove(pc, p);
			dropped++;
		}
		p = next;
	}
	return dropped;
}

int proccache__refresh(struct proccache *pc, struct process *p)
{
	uint64_t start_time;
	int err;

	if (clock__monotonic_ns() - p->maps_read_ns < PROCCACHE_REFRESH_NS)
		return 0;
	/* Whatever comes of it, the maps answered before may not hold now. */
	pc->generation++;
	err = proc__start_time(pc->proc_root, p->tgid, &start_time);
	if (err) {
		/* Gone: what was read before is all there will be. */
		p->maps_read_ns = clock__monotonic_ns();
		return 0;
	}
	if (start_time != p->start_time) {
		/* The pid was reused: a different program, nothing carries over. */
		forget_perfmap(pc, p);
		p->start_time = start_time;
		if (proc__comm(pc->proc_root, p->tgid, p->comm, sizeof(p->comm)))
			p->comm[0] = '\0';
		p->nspid = proc__nspid(pc->proc_root, p->tgid);
		read_uid(pc, p);
	}
	if (read_maps(pc, p)) {
		p->maps_read_ns = clock__monotonic_ns();
		return 0;
	}
	return 1;
}

struct mapping *process__find_mapping(const struct process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct mapping *m = &p->maps[mid];

		if (addr < m->start)
			hi = mid;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

int proccache__reopen(struct proccache *pc, struct process *p, struct mapping *m)
{
	if (m->kind != PROCMAPS_FILE || !m->path)
		return -EINVAL;
	return open_mapping_file(pc, p, m);
}

const char *proccache__perfmap_lookup(struct proccache *pc, struct process *p, uint64_t addr)
{
	char path[64];
	struct proc_expect owned = { .follow = PROC_FOLLOW_INNER, .check_owner = 1, .uid = p->uid };
	struct symtab *table;
	struct stat st;
	int64_t mtime_ns;
	long idx;
	int fd;

	if (p->perfmap) {
		idx = symtab__lookup(p->perfmap, addr);
		if (idx >= 0)
			return symtab__name(p->perfmap, idx);
	}
	if (p->perfmap_checked && clock__monotonic_ns() - p->perfmap_checked_ns < PROCCACHE_REFRESH_NS)
		return NULL;
	p->perfmap_checked = 1;
	p->perfmap_checked_ns = clock__monotonic_ns();

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->nspid);
	fd = proc__open_target(pc->proc_root, p->tgid, path, &owned);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (p->perfmap && (uint64_t)st.st_size == p->perfmap_size && mtime_ns == p->perfmap_mtime_ns) {
		close(fd);
		return NULL;
	}
	if (perfmap__read_fd(fd, &table)) {
		close(fd);
		return NULL;
	}
	close(fd);
	forget_perfmap(pc, p);
	p->perfmap_checked = 1;
	if (membudget__take(pc->budget, symtab__bytes(table))) {
		symtab__free(table);
		return NULL;
	}
	p->perfmap = table;
	p->perfmap_bytes = symtab__bytes(table);
	p->perfmap_size = (uint64_t)st.st_size;
	p->perfmap_mtime_ns = mtime_ns;
	idx = symtab__lookup(table, addr);
	return idx >= 0 ? symtab__name(table, idx) : NULL;
}

void proccache__stats(const struct proccache *pc, struct proccache_stats *stats)
{
	*stats = pc->stats;
	stats->held = pc->nr_processes;
}

uint64_t proccache__generation(const struct proccache *pc)
{
	return pc->generation;
}
