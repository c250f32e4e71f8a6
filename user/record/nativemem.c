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
	bool multi;               /* multi-uprobe links (Linux 6.6), else one perf-event uprobe per function */
	bool session;             /* --leaks with sessions (Linux 6.13), else entry and return probes */
	struct loader_links links; /* the multi-uprobe links */
	struct bpf_link **probes; /* the perf-event uprobes */
	size_t nr_probes, cap_probes;
};

/* How a list of functions is probed. */
enum probe_kind {
	PROBE_ENTRY,   /* nativemem_call */
	PROBE_RETURN,  /* nativemem_return: --leaks without sessions */
	PROBE_SESSION, /* nativemem_session */
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
		left[i] = (int64_t)llround(-log(((random__u64() >> 11) + 0.5) / 9007199254740992.0) * (double)interval);
	if (bpf_map_update_elem(bpf_map__fd(nm->skel->maps.countdown), &zero, left, BPF_ANY))
		error = -errno;
	free(left);
	return error;
}

/*
 * Which probes this kernel takes, asked of it (loader.h), or forced to the
 * fallbacks by JBPFPROF_FORCE_FALLBACK; each fallback said once.
 */
static void choose_probes(struct nativemem *nm)
{
	bool multi_forced = loader__fallback_forced("uprobe-multi");
	bool session_forced = loader__fallback_forced("uprobe-session");

	nm->multi = !multi_forced && loader__has_uprobe_multi();
	if (!nm->multi)
		loader__note_fallback("uprobe-multi",
				      multi_forced ? "forced by JBPFPROF_FORCE_FALLBACK"
						   : "this kernel has no multi-uprobe links limited to a process "
						     "(Linux 6.6, with the process filter of 6.10)",
				      "-e nativemem attaches one uprobe per function and process");
	if (!nm->leaks)
		return;
	/* A session is a kind of multi-uprobe link. */
	nm->session = nm->multi && !session_forced && loader__has_uprobe_session();
	if (!nm->session)
		loader__note_fallback("uprobe-session",
				      session_forced ? "forced by JBPFPROF_FORCE_FALLBACK"
				      : !nm->multi   ? "uprobe sessions are multi-uprobe links"
						     : "this kernel has no uprobe sessions (Linux 6.13)",
				      "--leaks probes the allocation functions' returns too: every call pays a "
				      "second trap, not only the sampled ones");
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
	choose_probes(nm);
	nm->skel->rodata->uprobe_session = nm->session;
	/*
	 * A kernel loads only the programs it can attach: a perf-event uprobe's
	 * program has no expected attach type, and the session's is loaded
	 * where sessions are used alone.
	 */
	if (nm->multi) {
		bpf_program__set_expected_attach_type(nm->skel->progs.nativemem_call, LOADER_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(nm->skel->progs.nativemem_return, LOADER_TRACE_UPROBE_MULTI);
	}
	bpf_program__set_expected_attach_type(nm->skel->progs.nativemem_session, LOADER_TRACE_UPROBE_SESSION);
	bpf_program__set_autoload(nm->skel->progs.nativemem_session, nm->session);
	bpf_program__set_autoload(nm->skel->progs.nativemem_return, nm->leaks && !nm->session);
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
 * 0 with the files open (the caller closes them), or -1 with err.
 */
static int find_allocator(const char *proc_root, uint32_t tgid, struct allocator *a, struct allocator *libc,
			  char *err, size_t err_size)
{
	struct procmaps_entry *entries;
	char path[PATH_MAX];
	size_t nr;
	int n, error;

	a->fd = libc->fd = -1;
	n = snprintf(path, sizeof(path), "%s/%u/maps", proc_root, tgid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, err_size, "%s: path too long", proc_root);
		return -1;
	}
	error = procmaps__read(path, 1, &entries, &nr);
	if (error) {
		snprintf(err, err_size, "cannot read %s: %s", path, strerror(-error));
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
	snprintf(err, err_size, "it maps no shared library that defines malloc (statically linked?)");
	return -1;
}

static int keep_probe(struct nativemem *nm, struct bpf_link *probe)
{
	if (nm->nr_probes == nm->cap_probes) {
		size_t cap = nm->cap_probes ? 2 * nm->cap_probes : 16;
		struct bpf_link **more = realloc(nm->probes, cap * sizeof(*more));

		if (!more) {
			bpf_link__destroy(probe);
			return -ENOMEM;
		}
		nm->probes = more;
		nm->cap_probes = cap;
	}
	nm->probes[nm->nr_probes++] = probe;
	return 0;
}

static struct bpf_program *probe_program(const struct nativemem *nm, enum probe_kind kind)
{
	switch (kind) {
	case PROBE_RETURN:
		return nm->skel->progs.nativemem_return;
	case PROBE_SESSION:
		return nm->skel->progs.nativemem_session;
	default:
		return nm->skel->progs.nativemem_call;
	}
}

/*
 * Probes offsets[0..nr) of the file open as file, each with its cookie,
 * in process tgid only, every thread of it, those running now and those
 * to come: one multi-uprobe link, or without them one perf-event uprobe
 * per function. A perf-event uprobe's pid is the tgid: the kernel (6.1,
 * 6.12 and 6.18 alike) runs its program for every thread sharing the
 * address space of the thread the event names, while that thread lives
 * (an exiting thread gives its address space up). Named by the group
 * leader, the probe sees every thread, those started later too; named by
 * another, it goes blind when that one exits. So a process whose main
 * thread exits during the recording (pthread_exit from main) is not seen
 * from then on, and one whose main thread had exited is refused at attach;
 * multi-uprobe links, which filter by process, do not have that limit.
 */
static int attach_list(struct nativemem *nm, uint32_t tgid, const char *file, const uint64_t *offsets,
		       const uint64_t *cookies, size_t nr, enum probe_kind kind)
{
	struct bpf_program *prog = probe_program(nm, kind);
	int fd;

	if (nm->multi) {
		if (kind == PROBE_RETURN)
			fd = loader__uretprobe_multi(bpf_program__fd(prog), file, offsets, cookies, nr, tgid);
		else
			fd = loader__uprobe_multi(bpf_program__fd(prog),
						  kind == PROBE_SESSION ? LOADER_TRACE_UPROBE_SESSION
									: LOADER_TRACE_UPROBE_MULTI,
						  file, offsets, cookies, nr, tgid);
		return fd < 0 ? fd : loader__links_add(&nm->links, fd);
	}
	for (size_t i = 0; i < nr; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookies[i], .retprobe = kind == PROBE_RETURN);
		struct bpf_link *probe = bpf_program__attach_uprobe_opts(prog, (pid_t)tgid, file, offsets[i], &opts);
		int error;

		if (!probe)
			return -(errno ? errno : EINVAL);
		error = keep_probe(nm, probe);
		if (error)
			return error;
	}
	return 0;
}

/*
 * The probes of one file f: the allocator's functions (allocator), the C
 * library's mmap and munmap (c_library), or both when the allocator is the
 * C library. The calls that allocate in one list, with --leaks a session
 * (or without sessions, entries and returns); the frees in another,
 * entries alone: a session's probe costs more at every hit.
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
		error = attach_list(nm, tgid, file, offsets[0], cookies[0], nr[0],
				    nm->session ? PROBE_SESSION : PROBE_ENTRY);
	if (!error && nr[0] && nm->leaks && !nm->session)
		error = attach_list(nm, tgid, file, offsets[0], cookies[0], nr[0], PROBE_RETURN);
	if (!error && nr[1])
		error = attach_list(nm, tgid, file, offsets[1], cookies[1], nr[1], PROBE_ENTRY);
	return error;
}

int nativemem__attach(struct nativemem *nm, const char *proc_root, uint32_t tgid, char *err, size_t err_size)
{
	struct allocator a, libc;
	/* The allocator's code, and the C library's: an mmap called from either is theirs. */
	struct jbpf_native_text text = { { 0 }, { 0 } };
	const struct allocator *failed = &a;
	int error;

	/* A perf-event uprobe sees the threads of its named thread's address space, which an exited one gave up. */
	if (!nm->multi && proc__thread_state(proc_root, tgid, tgid) == 'Z') {
		snprintf(err, err_size,
			 "its main thread has exited, and without multi-uprobe links (Linux 6.6) a uprobe per process "
			 "sees its other threads only through the main one");
		return -1;
	}
	if (find_allocator(proc_root, tgid, &a, &libc, err, err_size))
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
		snprintf(err, err_size, "cannot probe the allocator in %s: %s", failed->path, strerror(-error));
	close(a.fd);
	if (libc.fd >= 0)
		close(libc.fd);
	return error ? -1 : 0;
}

void nativemem__detach(struct nativemem *nm)
{
	if (!nm)
		return;
	loader__links_close(&nm->links);
	for (size_t i = 0; i < nm->nr_probes; i++)
		bpf_link__destroy(nm->probes[i]);
	nm->nr_probes = 0;
}

void nativemem__close(struct nativemem *nm)
{
	if (!nm)
		return;
	nativemem__detach(nm);
	loader__links_free(&nm->links);
	free(nm->probes);
	nativemem_bpf__destroy(nm->skel);
	free(nm);
}

struct bpf_object *nativemem__object(const struct nativemem *nm)
{
	return nm->skel->obj;
}
