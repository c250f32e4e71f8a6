/*
 * nativemem: loading bpf/nativemem.bpf.c and probing each target's
 * allocator; contract in nativemem.h.
 */
#include "nativemem.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/jbpfprof.h"
#include "common/random.h"
#include "nativemem.skel.h"
#include "symbolizer/elf.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"

/* As bpf/nativemem.bpf.c's: exponential draws of the interval. */
#define NATIVEMEM_DRAWS 65536

/*
 * The functions probed, malloc first: the allocator's, then the C
 * library's mmap and munmap (probed in the C library whatever the
 * allocator). The frees (free, munmap) only with --leaks, on entry.
 */
static const struct {
	const char *name;
	enum jbpf_native_fn fn;
	bool c_library; /* probed in the C library, not the allocator */
	bool frees;
} functions[] = {
	{ "malloc", JBPF_NATIVE_MALLOC, false, false },
	{ "calloc", JBPF_NATIVE_CALLOC, false, false },
	{ "realloc", JBPF_NATIVE_REALLOC, false, false },
	{ "posix_memalign", JBPF_NATIVE_POSIX_MEMALIGN, false, false },
	{ "aligned_alloc", JBPF_NATIVE_MEMALIGN, false, false },
	{ "memalign", JBPF_NATIVE_MEMALIGN, false, false },
	{ "valloc", JBPF_NATIVE_VALLOC, false, false },
	{ "pvalloc", JBPF_NATIVE_PVALLOC, false, false },
	{ "free", JBPF_NATIVE_FREE, false, true },
	{ "mmap", JBPF_NATIVE_MMAP, true, false },
	{ "munmap", JBPF_NATIVE_MUNMAP, true, true },
};
#define NR_FUNCTIONS (sizeof(functions) / sizeof(functions[0]))

struct nativemem {
	struct nativemem_bpf *skel;
	bool leaks;
	int *links;               /* the multi-uprobe links' fds */
	size_t nr_links, cap_links;
};

/*
 * The allocator of a process, or its C library: the file, open, where
 * each function is in it (0: not there), and where its code is mapped.
 */
struct allocator {
	int fd;
	char path[PATH_MAX];
	uint64_t offsets[NR_FUNCTIONS];
	uint64_t text_lo, text_hi;
};

static int fill_draws(struct nativemem *nm, uint64_t interval)
{
	int fd = bpf_map__fd(nm->skel->maps.draws);

	/* Quantiles of the exponential distribution, at the middle of each of NATIVEMEM_DRAWS equal slices. */
	for (uint32_t i = 0; i < NATIVEMEM_DRAWS; i++) {
		uint64_t draw = (uint64_t)llround(-log((i + 0.5) / NATIVEMEM_DRAWS) * (double)interval);

		if (bpf_map_update_elem(fd, &i, &draw, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Each CPU's countdown starts at a draw, so that the first calls are not all sampled. */
static int start_countdowns(struct nativemem *nm, uint64_t interval)
{
	int cpus = libbpf_num_possible_cpus(), error = 0;
	uint32_t zero = 0;
	int64_t *left;

	if (cpus <= 0)
		return cpus ? cpus : -EINVAL;
	left = calloc((size_t)cpus, sizeof(*left));
	if (!left)
		return -ENOMEM;
	for (int i = 0; i < cpus; i++)
		left[i] = (int64_t)llround(-log(((random_u64() >> 11) + 0.5) / 9007199254740992.0) * (double)interval);
	if (bpf_map_update_elem(bpf_map__fd(nm->skel->maps.countdown), &zero, left, BPF_ANY))
		error = -errno;
	free(left);
	return error;
}

int nativemem__open(const struct nativemem_config *config, const struct bpf_object *owner, struct nativemem **out,
		    char *err, size_t err_size)
{
	struct nativemem *nm = calloc(1, sizeof(*nm));
	long page = sysconf(_SC_PAGESIZE);
	int error;

	*out = NULL;
	if (!nm) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	nm->leaks = config->leaks;
	nm->skel = nativemem_bpf__open();
	if (!nm->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF native memory program: %s", strerror(error));
		goto fail;
	}
	error = -loader__share_maps(nm->skel->obj, owner, "native memory program", err, err_size);
	if (error)
		goto fail;
	nm->skel->rodata->follow_frees = config->leaks;
	nm->skel->rodata->page_size = page > 0 ? (uint64_t)page : 4096;
	nm->skel->rodata->unwind_tables = config->unwind_tables;
	nm->skel->rodata->hotspot_walk = config->unwind_tables && config->hotspot_walk;
	nm->skel->rodata->hotspot_remember_blobs = config->remember_blobs;
	bpf_map__set_max_entries(nm->skel->maps.live,
				 !config->leaks ? 1 : config->live_max ? config->live_max : NATIVEMEM_LIVE_DEFAULT);
	/* The session is loaded for --leaks only: a kernel without sessions still takes the entries. */
	bpf_program__set_expected_attach_type(nm->skel->progs.nativemem_call, LOADER_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(nm->skel->progs.nativemem_session, LOADER_TRACE_UPROBE_SESSION);
	bpf_program__set_autoload(nm->skel->progs.nativemem_session, config->leaks);
	error = -nativemem_bpf__load(nm->skel);
	if (error) {
		load_error__strerror(error, "BPF native memory program", err, err_size);
		goto fail;
	}
	error = fill_draws(nm, config->interval ? config->interval : 1);
	if (!error)
		error = start_countdowns(nm, config->interval ? config->interval : 1);
	if (error) {
		snprintf(err, err_size, "cannot set up the native memory sampling: %s", strerror(-error));
		error = -error;
		goto fail;
	}
	*out = nm;
	return 0;
fail:
	nativemem__close(nm);
	return -(error ? error : EINVAL);
}

static bool is_c_library(const char *path)
{
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;

	return !strncmp(name, "libc.so", 7) || !strncmp(name, "libc-", 5);
}

/*
 * Mapping e's file, if its .dynsym defines malloc: into *a (fd open), 1;
 * 0 when it does not (or cannot be read).
 */
static int examine(const char *proc_root, uint32_t tgid, const struct procmaps_entry *e, struct allocator *a)
{
	const char *names[NR_FUNCTIONS];
	uint64_t vaddrs[NR_FUNCTIONS];
	struct elf_image img;
	int fd = proc__open_maps_entry(proc_root, tgid, e);

	if (fd < 0)
		return 0;
	for (size_t i = 0; i < NR_FUNCTIONS; i++)
		names[i] = functions[i].name;
	if (elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 0, names, NR_FUNCTIONS, vaddrs, &img) <= 0 || !vaddrs[0]) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < NR_FUNCTIONS; i++)
		if (!vaddrs[i] || elf__file_offset(&img, vaddrs[i], &a->offsets[i]))
			a->offsets[i] = 0;
	if (!a->offsets[0]) {
		close(fd);
		return 0;
	}
	a->fd = fd;
	a->text_lo = e->start;
	a->text_hi = e->end;
	snprintf(a->path, sizeof(a->path), "%s", e->path);
	return 1;
}

/*
 * The allocator of process tgid (see nativemem.h) into *a, and its C
 * library into *libc when that is another file (else libc->fd is -1):
 * 0 with the files open (the caller closes them), or -1 with why.
 */
static int find_allocator(const char *proc_root, uint32_t tgid, struct allocator *a, struct allocator *libc,
			  char *why, size_t why_size)
{
	struct procmaps_entry *entries;
	char path[PATH_MAX];
	size_t nr;
	int n, err;

	a->fd = libc->fd = -1;
	n = snprintf(path, sizeof(path), "%s/%u/maps", proc_root, tgid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, why_size, "%s: path too long", proc_root);
		return -1;
	}
	err = procmaps__read(path, 1, &entries, &nr);
	if (err) {
		snprintf(why, why_size, "cannot read %s: %s", path, strerror(-err));
		return -1;
	}
	for (size_t i = 0; i < nr && a->fd < 0; i++) {
		const struct procmaps_entry *e = &entries[i];
		bool seen = false;

		if (e->kind != PROCMAPS_FILE || !e->path)
			continue;
		/* A file's executable mapping comes once, but a file may be mapped twice. */
		for (size_t j = 0; j < i && !seen; j++)
			seen = entries[j].kind == PROCMAPS_FILE && entries[j].inode == e->inode &&
			       entries[j].dev_major == e->dev_major && entries[j].dev_minor == e->dev_minor;
		if (seen)
			continue;
		if (is_c_library(e->path)) {
			if (libc->fd < 0)
				examine(proc_root, tgid, e, libc);
			continue;
		}
		examine(proc_root, tgid, e, a);
	}
	procmaps__free(entries, nr);
	if (a->fd >= 0)
		return 0;
	if (libc->fd >= 0) {
		*a = *libc;
		libc->fd = -1;
		return 0;
	}
	snprintf(why, why_size, "it maps no shared library that defines malloc (statically linked?)");
	return -1;
}

static int keep_link(struct nativemem *nm, int fd)
{
	if (nm->nr_links == nm->cap_links) {
		size_t cap = nm->cap_links ? 2 * nm->cap_links : 8;
		int *more = realloc(nm->links, cap * sizeof(*more));

		if (!more) {
			close(fd);
			return -ENOMEM;
		}
		nm->links = more;
		nm->cap_links = cap;
	}
	nm->links[nm->nr_links++] = fd;
	return 0;
}

/*
 * One link probing offsets[0..nr) of the file open as file, in process
 * tgid only (every thread of it; a per-thread perf event uprobe would see
 * only the thread named and those it starts), each with its cookie: with
 * --leaks a session (nativemem_session), else entries (nativemem_call).
 */
static int attach_multi(struct nativemem *nm, uint32_t tgid, const char *file, const uint64_t *offsets,
			const uint64_t *cookies, size_t nr, bool session)
{
	struct bpf_program *prog = session ? nm->skel->progs.nativemem_session : nm->skel->progs.nativemem_call;
	int fd = loader__uprobe_multi(bpf_program__fd(prog),
				      session ? LOADER_TRACE_UPROBE_SESSION : LOADER_TRACE_UPROBE_MULTI, file, offsets,
				      cookies, nr, tgid);

	return fd < 0 ? fd : keep_link(nm, fd);
}

/*
 * The probes of one file f: the allocator's functions (allocator), the C
 * library's mmap and munmap (c_library), or both when the allocator is the
 * C library. The calls that allocate in one link, with --leaks a session;
 * the frees in another, entries alone: a session's probe costs more at
 * every hit.
 */
static int probe_file(struct nativemem *nm, uint32_t tgid, const struct allocator *f, bool allocator, bool c_library)
{
	uint64_t offsets[2][NR_FUNCTIONS], cookies[2][NR_FUNCTIONS];
	size_t nr[2] = { 0, 0 };
	char file[64];
	int error = 0;

	for (size_t i = 0; i < NR_FUNCTIONS; i++) {
		size_t list = functions[i].frees;
		bool alias = false;

		if (!f->offsets[i] || (functions[i].frees && !nm->leaks) ||
		    (functions[i].c_library ? !c_library : !allocator))
			continue;
		/* aligned_alloc is memalign in some C libraries: one probe, or every call counts twice. */
		for (size_t j = 0; j < i && !alias; j++)
			alias = f->offsets[j] == f->offsets[i];
		if (alias)
			continue;
		offsets[list][nr[list]] = f->offsets[i];
		cookies[list][nr[list]++] = functions[i].fn;
	}
	/* The uprobes are on the file opened and checked here, not on whatever its path names by then. */
	snprintf(file, sizeof(file), "/proc/self/fd/%d", f->fd);
	if (nr[0])
		error = attach_multi(nm, tgid, file, offsets[0], cookies[0], nr[0], nm->leaks);
	if (!error && nr[1])
		error = attach_multi(nm, tgid, file, offsets[1], cookies[1], nr[1], false);
	return error;
}

int nativemem__attach(struct nativemem *nm, const char *proc_root, uint32_t tgid, char *why, size_t why_size)
{
	struct allocator a, libc;
	/* The allocator's code, and the C library's: an mmap called from either is theirs. */
	struct jbpf_native_text text = { { 0 }, { 0 } };
	const struct allocator *failed = &a;
	int error;

	if (find_allocator(proc_root, tgid, &a, &libc, why, why_size))
		return -1;
	text.lo[0] = a.text_lo;
	text.hi[0] = a.text_hi;
	if (libc.fd >= 0) {
		text.lo[1] = libc.text_lo;
		text.hi[1] = libc.text_hi;
	}
	error = bpf_map_update_elem(bpf_map__fd(nm->skel->maps.text), &tgid, &text, BPF_ANY) ? -errno : 0;
	if (!error)
		error = probe_file(nm, tgid, &a, true, libc.fd < 0 && is_c_library(a.path));
	if (!error && libc.fd >= 0) {
		failed = &libc;
		error = probe_file(nm, tgid, &libc, false, true);
	}
	if (error)
		snprintf(why, why_size, "cannot probe the allocator in %s: %s%s", failed->path, strerror(-error),
			 error == -EINVAL || error == -EOPNOTSUPP
				 ? nm->leaks ? " (--leaks needs uprobe sessions, Linux 6.13)" : " (multi-uprobe links need Linux 6.6)"
				 : "");
	close(a.fd);
	if (libc.fd >= 0)
		close(libc.fd);
	return error ? -1 : 0;
}

void nativemem__detach(struct nativemem *nm)
{
	if (!nm)
		return;
	for (size_t i = 0; i < nm->nr_links; i++)
		close(nm->links[i]);
	nm->nr_links = 0;
}

void nativemem__close(struct nativemem *nm)
{
	if (!nm)
		return;
	nativemem__detach(nm);
	free(nm->links);
	nativemem_bpf__destroy(nm->skel);
	free(nm);
}

struct bpf_object *nativemem__object(const struct nativemem *nm)
{
	return nm->skel->obj;
}
