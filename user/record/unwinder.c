/*
 * unwinder: the unwind tables of the target processes, fed to the BPF
 * walker (contract in unwinder.h).
 *
 * Address spaces, for one executable mapping of a file:
 *   runtime pc    an address in the process
 *   ELF vaddr     as the file's .eh_frame states it; elf__vaddr converts
 *                 (from the mapping's start and file offset and the
 *                 file's PT_LOAD segments)
 *   row pc        ELF vaddr - the table's base (bpf/unwind.h)
 * so row pc = runtime pc - bias with
 *   bias = start - (ELF vaddr of start - base)
 * which is what a mapping in the list carries.
 *
 * Files are known by device and inode, as maps names them; each holds its
 * placed range of rows (or none) and the number of listed processes that
 * map it. Processes and files are in small chained hash tables.
 */
#include "unwinder.h"

#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/jbpfprof.h"
#include "common/clock.h"
#include "symbolizer/debuginfo.h"
#include "symbolizer/elf.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"
#include "user/record/rowalloc.h"
#include "unwind/disk.h"
#include "unwind/unwind.h"

#define HASH_BUCKETS 1024
/* The array's element: the kernel rounds an array map's values up to 8 bytes. */
/* The array is mapped into our address space in chunks of this many bytes (a multiple of the page size). */
#define ROWS_MAP_CHUNK (1u << 20)
#define ROW_STRIDE ((sizeof(struct jbpf_unwind_row) + 7) & ~(size_t)7)

struct placed_file {
	struct placed_file *next;   /* in files[] */
	uint64_t dev, ino;
	struct elf_image img;       /* its PT_LOAD segments, for the bias */
	uint64_t base;              /* the table's base */
	uint32_t first_row, nr_rows;/* nr_rows 0: no table */
	uint32_t pc_end;
	uint32_t refs;              /* listed processes that map it */
};

struct process {
	struct process *next;       /* in processes[] */
	uint32_t tgid;
	uint64_t start_ticks;
	struct placed_file **files; /* one reference each */
	size_t nr_files;
	uint64_t last_read_ns;
	bool listed;                /* its list is in the map */
	bool reread_pending;        /* a miss came within UNWINDER_REREAD_NS of the last read */
	bool unreadable;            /* its maps could not be read: not tried again but after an exec */
	bool load_pending;          /* seen, not listed yet: unwinder__tick lists it */
};

struct unwinder {
	struct unwinder_config config;
	struct unwind_cache *cache;
	struct unwind_disk *disk;   /* tables kept between runs; NULL: none */
	unsigned char *rows_mem;    /* the array's address range: chunks in use mapped, the rest reserved */
	size_t rows_mem_size;
	uint32_t *chunk_users;      /* per ROWS_MAP_CHUNK of rows_mem: placed files in it (+1 for chunk 0) */
	size_t nr_chunks;
	struct rowalloc rows;       /* the array's free ranges */
	struct process *processes[HASH_BUCKETS];
	struct placed_file *files[HASH_BUCKETS];
	struct jbpf_unwind_process *list; /* the list being written */
	struct placed_file *vdso;   /* the vDSO's table, placed for good; NULL before the first try or without one */
	bool vdso_tried;
	uint64_t last_sweep_ns;
	uint64_t last_verify_ns;    /* the last sweep that read every start time */
	size_t rereads_pending;     /* processes with reread_pending set */
	size_t loads_pending;       /* processes with load_pending set */
	struct unwinder_stats stats;
};

/* ---- files ---- */

static size_t file_bucket(uint64_t dev, uint64_t ino)
{
	return (size_t)((dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full)) % HASH_BUCKETS;
}

static struct placed_file *file_find(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	for (struct placed_file *f = u->files[file_bucket(dev, ino)]; f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

/*
 * The array's chunks are mapped while a placed file has rows in them. The
 * kernel maps every page of a BPF array mapping at mmap, so a chunk mapped
 * counts whole in our RSS whether its rows are in use or not: a chunk no
 * file uses any more goes back to the reserved range. Otherwise a burst of
 * processes that came and went (a build: compilers, linkers) would leave
 * the RSS at its high-water mark for the rest of a recording of days. The
 * BPF map keeps its memory either way; only our view of it follows use.
 */
static int chunk_map(struct unwinder *u, size_t c)
{
	size_t off = c * ROWS_MAP_CHUNK, len = u->rows_mem_size - off < ROWS_MAP_CHUNK ? u->rows_mem_size - off : ROWS_MAP_CHUNK;

	if (mmap(u->rows_mem + off, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, u->config.rows_fd, (off_t)off) ==
	    MAP_FAILED)
		return -errno;
	u->stats.row_bytes_mapped += len;
	return 0;
}

/* Back to reserved; if that fails the chunk stays mapped, which is only RSS (chunk_map maps over it again). */
static void chunk_unmap(struct unwinder *u, size_t c)
{
	size_t off = c * ROWS_MAP_CHUNK, len = u->rows_mem_size - off < ROWS_MAP_CHUNK ? u->rows_mem_size - off : ROWS_MAP_CHUNK;

	if (mmap(u->rows_mem + off, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) !=
	    MAP_FAILED)
		u->stats.row_bytes_mapped -= len;
}

static void rows_chunks(uint32_t first, uint32_t n, size_t *lo, size_t *hi)
{
	*lo = (size_t)first * ROW_STRIDE / ROWS_MAP_CHUNK;
	*hi = ((size_t)first + n) * ROW_STRIDE - 1;
	*hi /= ROWS_MAP_CHUNK;
}

/* Rows [first, first + n) (n > 0) made writable: their chunks mapped. 0 or -errno (nothing held). */
static int rows_hold(struct unwinder *u, uint32_t first, uint32_t n)
{
	size_t lo, hi;
	int error;

	rows_chunks(first, n, &lo, &hi);
	for (size_t c = lo; c <= hi; c++) {
		if (u->chunk_users[c]++ || !(error = chunk_map(u, c)))
			continue;
		u->chunk_users[c]--;
		while (c-- > lo)
			if (!--u->chunk_users[c])
				chunk_unmap(u, c);
		return error;
	}
	return 0;
}

static void rows_release(struct unwinder *u, uint32_t first, uint32_t n)
{
	size_t lo, hi;

	rows_chunks(first, n, &lo, &hi);
	for (size_t c = lo; c <= hi; c++)
		if (!--u->chunk_users[c])
			chunk_unmap(u, c);
}

/* Copies the table's rows into a free range of the array; false when none is big enough. */
static bool file_place(struct unwinder *u, struct placed_file *f, const struct unwind_table *table)
{
	uint64_t span = table->end - table->base;

	if (!table->nr_rows || table->nr_rows > UINT32_MAX || !rowalloc__take(&u->rows, (uint32_t)table->nr_rows, &f->first_row)) {
		if (table->nr_rows)
			u->stats.rows_full++;
		return false;
	}
	if (rows_hold(u, f->first_row, (uint32_t)table->nr_rows)) {
		rowalloc__give(&u->rows, f->first_row, (uint32_t)table->nr_rows);
		u->stats.rows_full++;
		return false;
	}
	f->nr_rows = (uint32_t)table->nr_rows;
	f->pc_end = span > UINT32_MAX ? UINT32_MAX : (uint32_t)span;
	f->base = table->base;
	for (size_t i = 0; i < table->nr_rows; i++)
		memcpy(u->rows_mem + ((size_t)f->first_row + i) * ROW_STRIDE, &table->rows[i], sizeof(table->rows[i]));
	u->stats.files++;
	u->stats.rows += f->nr_rows;
	return true;
}

/*
 * The cache key: the build-id when the file has one that fits, with the
 * digest of the bytes its table is built from (fd's and debug_fd's), so
 * that a file claiming another's build-id never shares its table; else,
 * or when the digest cannot be made, the device and inode.
 */
static void cache_key(const struct elf_image *img, uint64_t dev, uint64_t ino, int fd, int debug_fd,
		      struct unwind_cache_key *key)
{
	memset(key, 0, sizeof(*key));
	key->dev = dev;
	key->ino = ino;
	if (img->build_id_len && img->build_id_len <= sizeof(key->build_id) &&
	    !unwind_digest__file(fd, debug_fd, key->digest)) {
		memcpy(key->build_id, img->build_id, img->build_id_len);
		key->build_id_len = (uint8_t)img->build_id_len;
	}
}

/*
 * The separate debug file of the file open at fd (its .debug_frame covers
 * code that has no .eh_frame), found as the symbolizer finds it and with
 * the same rules; -1 when there is none.
 */
static int debug_file_open(struct unwinder *u, uint32_t tgid, const struct procmaps_entry *m, int fd,
			   const struct elf_image *img)
{
	struct stat self;
	uint32_t uid;

	if (fstat(fd, &self) || proc__uid(u->config.proc_root, tgid, &uid))
		return -1;
	struct debuginfo_where where = {
		.proc_root = u->config.proc_root,
		.tgid = tgid,
		.debug_root = u->config.debug_root ? u->config.debug_root : UNWINDER_DEBUG_ROOT,
		.path = m->deleted ? NULL : m->path,
		.self = &self,
		.uid = uid,
	};
	int debug_fd = debuginfo__open(&where, img);

	return debug_fd >= 0 ? debug_fd : -1;
}

/*
 * The file mapped at m, with its table placed if it has one; a new entry
 * with no reference. NULL when the file cannot be opened or read as ELF
 * (the mapping is then listed without rows, and tried again on the
 * process's next read). Its debug file is opened first, since its
 * .debug_frame is part of the digest that keys the table; a file shared
 * by build-id and digest is still built once.
 */
static struct placed_file *file_open(struct unwinder *u, uint32_t tgid, const struct procmaps_entry *m, uint64_t dev)
{
	struct unwind_cache_key key;
	const struct unwind_table *table;
	struct placed_file *f;
	size_t b;
	int fd, debug_fd;

	fd = proc__open_map_file(u->config.proc_root, tgid, m->start, m->end);
	if (fd < 0)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || elf__read_fd(fd, &f->img, NULL)) {
		free(f);
		close(fd);
		return NULL;
	}
	f->dev = dev;
	f->ino = m->inode;
	debug_fd = debug_file_open(u, tgid, m, fd, &f->img);
	cache_key(&f->img, dev, m->inode, fd, debug_fd, &key);
	table = unwind_cache__get(u->cache, &key, fd, debug_fd);
	if (debug_fd >= 0)
		close(debug_fd);
	close(fd);
	if (table)
		file_place(u, f, table);
	/* The rows are copied: the cache may drop its table when it needs room. */
	unwind_cache__put(u->cache, table);
	b = file_bucket(f->dev, f->ino);
	f->next = u->files[b];
	u->files[b] = f;
	return f;
}

static void file_put(struct unwinder *u, struct placed_file *f)
{
	struct placed_file **p;

	if (--f->refs)
		return;
	for (p = &u->files[file_bucket(f->dev, f->ino)]; *p != f; p = &(*p)->next)
		;
	*p = f->next;
	if (f->nr_rows) {
		rows_release(u, f->first_row, f->nr_rows);
		rowalloc__give(&u->rows, f->first_row, f->nr_rows);
		u->stats.files--;
		u->stats.rows -= f->nr_rows;
	}
	free(f);
}

/*
 * The vDSO: the kernel maps one image into every process, the same as our
 * own (AT_SYSINFO_EHDR), with its own .eh_frame. Copied into a memfd for
 * the table builder, which reads files; placed once and kept.
 */
static struct placed_file *vdso_file(struct unwinder *u)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	struct procmaps_entry *entries;
	struct unwind_cache_key key;
	const struct unwind_table *table;
	struct placed_file *f;
	size_t nr;
	int fd = -1;

	if (u->vdso_tried)
		return u->vdso;
	u->vdso_tried = true;
	if (!base || procmaps__read("/proc/self/maps", 0, &entries, &nr))
		return NULL;
	for (size_t i = 0; i < nr && fd < 0; i++) {
		size_t size = entries[i].end - entries[i].start;

		if (entries[i].kind != PROCMAPS_VDSO || entries[i].start != base)
			continue;
		fd = memfd_create("vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, (const void *)(uintptr_t)base, size) != (ssize_t)size) {
			close(fd);
			fd = -1;
			break;
		}
	}
	procmaps__free(entries, nr);
	if (fd < 0 || !(f = calloc(1, sizeof(*f)))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (elf__read_fd(fd, &f->img, NULL)) {
		free(f);
		close(fd);
		return NULL;
	}
	cache_key(&f->img, 0, 0, fd, -1, &key);
	table = unwind_cache__get(u->cache, &key, fd, -1);
	close(fd);
	if (table)
		file_place(u, f, table);
	unwind_cache__put(u->cache, table);
	/* Its own reference: never let go while the unwinder lives. */
	f->refs = 1;
	u->vdso = f;
	return f;
}

/* ---- processes ---- */

static struct process **process_slot(struct unwinder *u, uint32_t tgid)
{
	struct process **p = &u->processes[tgid % HASH_BUCKETS];

	while (*p && (*p)->tgid != tgid)
		p = &(*p)->next;
	return p;
}

static void process_drop_files(struct unwinder *u, struct process *proc)
{
	for (size_t i = 0; i < proc->nr_files; i++)
		file_put(u, proc->files[i]);
	free(proc->files);
	proc->files = NULL;
	proc->nr_files = 0;
}

/* One mapping of the list for m; *file is the file it holds a reference to, or NULL. */
static void list_mapping(struct unwinder *u, uint32_t tgid, const struct procmaps_entry *m,
			 struct jbpf_unwind_mapping *out, struct placed_file **file)
{
	uint64_t dev = makedev(m->dev_major, m->dev_minor), vaddr;
	struct placed_file *f = NULL;

	memset(out, 0, sizeof(*out));
	out->start = m->start;
	out->end = m->end;
	*file = NULL;
	if (m->kind == PROCMAPS_FILE) {
		f = file_find(u, dev, m->inode);
		if (!f)
			f = file_open(u, tgid, m, dev);
	} else if (m->kind == PROCMAPS_VDSO) {
		f = vdso_file(u);
	} else {
		out->flags = JBPF_UNWIND_MAPPING_ANON;
	}
	if (!f)
		return;
	f->refs++;
	*file = f;
	if (!f->nr_rows || elf__vaddr(&f->img, m->start, m->pgoff, m->start, &vaddr))
		return;
	out->bias = m->start - (vaddr - f->base);
	out->first_row = f->first_row;
	out->nr_rows = f->nr_rows;
	out->pc_end = f->pc_end;
}

/* Sets proc's reread_pending, keeping the unwinder's count of them. */
static void set_reread_pending(struct unwinder *u, struct process *proc, bool pending)
{
	if (proc->reread_pending != pending)
		u->rereads_pending += pending ? 1 : (size_t)-1;
	proc->reread_pending = pending;
}

/*
 * Reads proc's maps and writes its list; the files of its previous list
 * are let go only after, so that a file still mapped keeps its rows.
 */
static int process_read(struct unwinder *u, struct process *proc, uint64_t now_ns)
{
	struct procmaps_entry *entries;
	struct placed_file **files;
	char path[64];
	size_t nr, used = 0, no_table = 0;
	int error;

	proc->last_read_ns = now_ns;
	set_reread_pending(u, proc, false);
	snprintf(path, sizeof(path), "%s/%u/maps", u->config.proc_root, proc->tgid);
	error = procmaps__read(path, 1, &entries, &nr);
	if (error)
		return error == -ENOENT ? -ESRCH : error;
	files = calloc(nr ? nr : 1, sizeof(*files));
	if (!files) {
		procmaps__free(entries, nr);
		return -ENOMEM;
	}
	memset(u->list, 0, sizeof(*u->list));
	u->list->start_ticks = proc->start_ticks;
	for (size_t i = 0; i < nr && u->list->nr < JBPF_UNWIND_MAX_MAPPINGS; i++) {
		struct jbpf_unwind_mapping *out = &u->list->mappings[u->list->nr++];

		list_mapping(u, proc->tgid, &entries[i], out, &files[used]);
		if (files[used])
			used++;
		if (!out->nr_rows)
			no_table++;
	}
	/*
	 * Mappings past the list's room are not listed: their pcs would be
	 * reported as misses forever, so the list says it has reported already.
	 */
	if (nr > JBPF_UNWIND_MAX_MAPPINGS) {
		u->list->flags |= JBPF_UNWIND_MISS_REPORTED;
		u->stats.lists_truncated++;
	}
	procmaps__free(entries, nr);
	error = 0;
	if (bpf_map_update_elem(u->config.procs_fd, &proc->tgid, u->list, BPF_ANY)) {
		error = errno == E2BIG || errno == ENOMEM ? -ENOSPC : -errno;
		if (error == -ENOSPC)
			u->stats.processes_full++;
	}
	process_drop_files(u, proc);
	proc->files = files;
	proc->nr_files = used;
	if (error) {
		/* The list in the map, if any, names rows just let go. */
		process_drop_files(u, proc);
		if (proc->listed) {
			bpf_map_delete_elem(u->config.procs_fd, &proc->tgid);
			u->stats.processes--;
			proc->listed = false;
		}
		return error;
	}
	if (!proc->listed)
		u->stats.processes++;
	proc->listed = true;
	u->stats.lists_written++;
	u->stats.mappings_no_table += no_table;
	return 0;
}

static void process_remove(struct unwinder *u, struct process **slot)
{
	struct process *proc = *slot;

	if (proc->listed) {
		bpf_map_delete_elem(u->config.procs_fd, &proc->tgid);
		u->stats.processes--;
	}
	process_drop_files(u, proc);
	set_reread_pending(u, proc, false);
	if (proc->load_pending)
		u->loads_pending--;
	*slot = proc->next;
	free(proc);
}

static struct process *process_new(struct unwinder *u, uint32_t tgid)
{
	struct process **slot = process_slot(u, tgid);
	struct process *proc;

	if (*slot)
		return *slot;
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	proc->tgid = tgid;
	*slot = proc;
	return proc;
}

/* (Re)reads proc from scratch: its start time, then its maps. */
static int process_load(struct unwinder *u, struct process *proc, uint64_t now_ns)
{
	int error = proc__start_time(u->config.proc_root, proc->tgid, &proc->start_ticks);

	if (!error)
		error = process_read(u, proc, now_ns);
	proc->unreadable = error != 0;
	return error;
}

/* ---- the interface ---- */

int unwinder__new(const struct unwinder_config *config, struct unwinder **out, char *err, size_t err_size)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	long page = sysconf(_SC_PAGESIZE);
	int error;

	*out = NULL;
	if (!u || !(u->list = calloc(1, sizeof(*u->list))) || !(u->cache = unwind_cache__new(config->cache_bytes))) {
		snprintf(err, err_size, "out of memory for the unwind tables");
		error = -ENOMEM;
		goto fail;
	}
	u->config = *config;
	/* Root's own directory only: a table read back is trusted as one built. */
	if (geteuid() == 0 && (u->disk = unwind_disk__open(UNWIND_DISK_DIR, UNWIND_DISK_MAX_BYTES)))
		unwind_cache__set_disk(u->cache, u->disk);
	u->rows_mem_size = ((size_t)config->max_rows * ROW_STRIDE + (size_t)page - 1) / (size_t)page * (size_t)page;
	u->nr_chunks = (u->rows_mem_size + ROWS_MAP_CHUNK - 1) / ROWS_MAP_CHUNK;
	/* Reserved only: rows_hold maps the array's chunks over it as rows are placed. */
	u->rows_mem = mmap(NULL, u->rows_mem_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (u->rows_mem == MAP_FAILED) {
		error = -errno;
		u->rows_mem = NULL;
	} else if (!(u->chunk_users = calloc(u->nr_chunks, sizeof(*u->chunk_users)))) {
		error = -ENOMEM;
	} else {
		/* The first chunk stays mapped: a failure to map shows now, not at the first table. */
		error = rows_hold(u, 0, 1);
	}
	if (error) {
		snprintf(err, err_size, "cannot map the BPF unwind rows: %s", strerror(-error));
		goto fail;
	}
	u->stats.row_bytes = (uint64_t)config->max_rows * ROW_STRIDE;
	if (rowalloc__init(&u->rows, config->max_rows)) {
		snprintf(err, err_size, "out of memory for the unwind tables");
		error = -ENOMEM;
		goto fail;
	}
	*out = u;
	return 0;
fail:
	unwinder__free(u);
	return error;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t b = 0; b < HASH_BUCKETS; b++)
		while (u->processes[b]) {
			struct process *proc = u->processes[b];

			u->processes[b] = proc->next;
			process_drop_files(u, proc);
			free(proc);
		}
	free(u->vdso);
	if (u->rows_mem)
		munmap(u->rows_mem, u->rows_mem_size);
	free(u->chunk_users);
	unwind_cache__free(u->cache);
	unwind_disk__close(u->disk);
	rowalloc__destroy(&u->rows);
	free(u->list);
	free(u);
}

int unwinder__add_process(struct unwinder *u, uint32_t tgid)
{
	struct process *proc = process_new(u, tgid);

	return proc ? process_load(u, proc, 0) : -ENOMEM;
}

void unwinder__saw(struct unwinder *u, uint32_t tgid, uint64_t now_ns)
{
	struct process *proc;

	(void)now_ns;
	if (*process_slot(u, tgid))
		return;
	/* Listed by unwinder__tick: building its tables here would hold up the records behind this one. */
	proc = process_new(u, tgid);
	if (proc) {
		proc->load_pending = true;
		u->loads_pending++;
	}
}

void unwinder__exec(struct unwinder *u, uint32_t tgid, uint64_t now_ns)
{
	struct process *proc = *process_slot(u, tgid);

	if (!proc || proc->load_pending)
		return;
	u->stats.rereads++;
	/* Its start time does not change, but its maps do. */
	proc->unreadable = process_read(u, proc, now_ns) != 0;
}

void unwinder__miss(struct unwinder *u, uint32_t tgid, uint64_t now_ns)
{
	struct process *proc = *process_slot(u, tgid);

	u->stats.misses++;
	if (!proc || proc->unreadable || proc->load_pending)
		return;
	if (now_ns - proc->last_read_ns < UNWINDER_REREAD_NS) {
		set_reread_pending(u, proc, true);
		return;
	}
	u->stats.rereads++;
	process_read(u, proc, now_ns);
}

/* Whether proc is still the process it was (its pid not given to another). */
/*
 * Whether the process listed is still there. A full check compares its
 * start time (a pid reused by another process is not it); between full
 * checks, on the real /proc, kill(0) says whether the pid is gone, which
 * costs one system call instead of an open, a read of /proc/PID/stat and
 * a close per process and sweep. A pid is reused only after the kernel's
 * pid counter wraps; the full check every UNWINDER_VERIFY_NS bounds how
 * long a reused pid could keep an old list.
 */
static bool process_alive(const struct unwinder *u, const struct process *proc, bool full)
{
	uint64_t start;

	if (!full && !strcmp(u->config.proc_root, "/proc"))
		return kill((pid_t)proc->tgid, 0) == 0 || errno != ESRCH;
	return !proc__start_time(u->config.proc_root, proc->tgid, &start) && start == proc->start_ticks;
}

/*
 * Lists processes seen since the last tick, while this tick has spent
 * less than UNWINDER_TICK_BUDGET_NS on them (one at least): a new table
 * can take seconds to build, and the recording loop reads its records and
 * the agents between ticks.
 */
static void load_pending(struct unwinder *u)
{
	uint64_t start = clock__monotonic_ns();

	for (size_t b = 0; b < HASH_BUCKETS; b++)
		for (struct process *proc = u->processes[b]; proc; proc = proc->next) {
			if (!proc->load_pending)
				continue;
			proc->load_pending = false;
			u->loads_pending--;
			process_load(u, proc, clock__monotonic_ns());
			if (clock__monotonic_ns() - start >= UNWINDER_TICK_BUDGET_NS)
				return;
		}
}

void unwinder__tick(struct unwinder *u, uint64_t now_ns)
{
	bool sweep = now_ns - u->last_sweep_ns >= UNWINDER_SWEEP_NS, verify = false;

	if (u->loads_pending)
		load_pending(u);
	/* Called at every wake-up of the session: most have nothing to do. */
	if (!sweep && !u->rereads_pending)
		return;
	if (sweep) {
		u->last_sweep_ns = now_ns;
		verify = now_ns - u->last_verify_ns >= UNWINDER_VERIFY_NS;
		if (verify)
			u->last_verify_ns = now_ns;
	}
	for (size_t b = 0; b < HASH_BUCKETS; b++) {
		struct process **slot = &u->processes[b];

		while (*slot) {
			struct process *proc = *slot;

			if (sweep && !proc->load_pending && !process_alive(u, proc, verify)) {
				process_remove(u, slot);
				continue;
			}
			if (proc->reread_pending && now_ns - proc->last_read_ns >= UNWINDER_REREAD_NS) {
				u->stats.rereads++;
				process_read(u, proc, now_ns);
			}
			slot = &proc->next;
		}
	}
}

void unwinder__stats(const struct unwinder *u, struct unwinder_stats *stats)
{
	*stats = u->stats;
	stats->row_bytes_used = stats->rows * ROW_STRIDE;
}

const struct unwind_cache *unwinder__cache(const struct unwinder *u)
{
	return u->cache;
}
