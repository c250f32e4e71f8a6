/*
 * vthreads: loading bpf/vthreads.bpf.c and probing each JVM's freezes and
 * thaws; contract in vthreads.h.
 */
#include "vthreads.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/elf.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"
#include "vthreads.skel.h"

/*
 * The functions probed, by their mangled names in libjvm's .symtab (local
 * symbols, JDK 24 and later): the freeze of each configuration a JVM
 * without ZGC or Shenandoah may run (narrow or whole oops; G1, the card
 * table of Serial and Parallel, Epsilon), the freeze of a virtual thread
 * that blocks on a monitor, and the thaw that mounts one.
 */
static const struct {
	const char *name;
	bool mount;
} functions[] = {
	{ "_Z6freezeI6ConfigIL8oop_kind0E12G1BarrierSetEEiP10JavaThreadPl", false },
	{ "_Z6freezeI6ConfigIL8oop_kind1E12G1BarrierSetEEiP10JavaThreadPl", false },
	{ "_Z6freezeI6ConfigIL8oop_kind0E19CardTableBarrierSetEEiP10JavaThreadPl", false },
	{ "_Z6freezeI6ConfigIL8oop_kind1E19CardTableBarrierSetEEiP10JavaThreadPl", false },
	{ "_Z6freezeI6ConfigIL8oop_kind0E17EpsilonBarrierSetEEiP10JavaThreadPl", false },
	{ "_Z6freezeI6ConfigIL8oop_kind1E17EpsilonBarrierSetEEiP10JavaThreadPl", false },
	{ "_ZN12Continuation11try_preemptEP10JavaThreadP7oopDesc", false },
	{ "_ZN12Continuation12prepare_thawEP10JavaThreadb", true },
};
#define NR_FUNCTIONS (sizeof(functions) / sizeof(functions[0]))
_Static_assert(NR_FUNCTIONS <= VTHREADS_MAX_FUNCTIONS, "room for every function found");

/* A process probed. */
struct probed {
	uint32_t tgid;
	uint64_t start_ticks;
};

struct vthreads {
	struct vthreads_bpf *skel;
	struct probed *probed;
	size_t nr_probed, cap_probed;
	/* Each probed process's link on its freezes, and on its thaws, in the order of probed. */
	struct loader_links unmounts, mounts;
};

int vthreads__open(const struct vthreads_config *config, const struct bpf_object *owner, struct vthreads **out,
		   char *err, size_t err_size)
{
	struct vthreads *vt = calloc(1, sizeof(*vt));
	int error;

	*out = NULL;
	if (!vt) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	vt->skel = vthreads_bpf__open();
	if (!vt->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF virtual thread program: %s", strerror(error));
		goto fail;
	}
	error = -loader__share_maps(vt->skel->obj, owner, "virtual thread program", err, err_size);
	if (error)
		goto fail;
	vt->skel->rodata->full_wait_ns = config->full_wait_ns ? config->full_wait_ns : 1;
	vt->skel->rodata->unwind_tables = true;
	vt->skel->rodata->hotspot_walk = true;
	vt->skel->rodata->hotspot_remember_blobs = config->remember_blobs;
	bpf_program__set_expected_attach_type(vt->skel->progs.vthread_unmount, LOADER_TRACE_UPROBE_SESSION);
	bpf_program__set_expected_attach_type(vt->skel->progs.vthread_mount, LOADER_TRACE_UPROBE_MULTI);
	error = -vthreads_bpf__load(vt->skel);
	if (error) {
		load_error__strerror(error, "BPF virtual thread program", err, err_size);
		goto fail;
	}
	*out = vt;
	return 0;
fail:
	vthreads__close(vt);
	return -(error ? error : EINVAL);
}

static bool is_libjvm(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strcmp(slash ? slash + 1 : path, "libjvm.so");
}

/* The first file mapping of process tgid named libjvm.so, open: its fd, or -1 with err. */
static int open_libjvm(const char *proc_root, uint32_t tgid, char *path_out, size_t path_size, char *err,
		       size_t err_size)
{
	struct procmaps_entry *entries;
	char path[PATH_MAX];
	size_t nr;
	int n, error, fd = -1;
	bool found = false;

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
	for (size_t i = 0; i < nr && !found; i++) {
		const struct procmaps_entry *e = &entries[i];

		if (e->kind != PROCMAPS_FILE || !e->path || !is_libjvm(e->path))
			continue;
		found = true;
		fd = proc__open_maps_entry(proc_root, tgid, e);
		snprintf(path_out, path_size, "%s", e->path);
		if (fd < 0)
			snprintf(err, err_size, "cannot open its %s: %s", e->path, strerror(-fd));
	}
	procmaps__free(entries, nr);
	if (!found)
		snprintf(err, err_size, "it maps no libjvm.so");
	return fd;
}

/* Room for one more probed process: 0 or -ENOMEM. */
static int room_for_one(struct vthreads *vt)
{
	size_t cap;
	struct probed *more;

	if (loader__links_reserve(&vt->unmounts, 1) || loader__links_reserve(&vt->mounts, 1))
		return -ENOMEM;
	if (vt->nr_probed < vt->cap_probed)
		return 0;
	cap = vt->cap_probed ? 2 * vt->cap_probed : 8;
	more = realloc(vt->probed, cap * sizeof(*more));
	if (!more)
		return -ENOMEM;
	vt->probed = more;
	vt->cap_probed = cap;
	return 0;
}

/* One link on offsets[0..nr) of file in process tgid: program prog, a session or entries only. fd or -errno. */
static int probe(struct bpf_program *prog, bool session, const char *file, const uint64_t *offsets, size_t nr,
		 uint32_t tgid)
{
	uint32_t type = session ? LOADER_TRACE_UPROBE_SESSION : LOADER_TRACE_UPROBE_MULTI;

	return loader__uprobe_multi(bpf_program__fd(prog), type, file, offsets, NULL, nr, tgid);
}

int vthreads__find_functions(int fd, uint64_t *freezes, size_t *nr_freezes, uint64_t *thaws, size_t *nr_thaws)
{
	const char *names[NR_FUNCTIONS];
	uint64_t vaddrs[NR_FUNCTIONS];
	struct elf_image img;
	int found;

	*nr_freezes = *nr_thaws = 0;
	for (size_t i = 0; i < NR_FUNCTIONS; i++)
		names[i] = functions[i].name;
	found = elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 1, names, NR_FUNCTIONS, vaddrs, &img);
	if (found <= 0)
		return found < 0 ? found : -ENOENT;
	for (size_t i = 0; i < NR_FUNCTIONS; i++) {
		uint64_t offset;

		/* Only where the file holds code: a symbol outside its loaded bytes is no function to probe. */
		if (!vaddrs[i] || elf__file_offset(&img, vaddrs[i], &offset))
			continue;
		if (functions[i].mount && *nr_thaws < VTHREADS_MAX_FUNCTIONS)
			thaws[(*nr_thaws)++] = offset;
		else if (!functions[i].mount && *nr_freezes < VTHREADS_MAX_FUNCTIONS)
			freezes[(*nr_freezes)++] = offset;
	}
	return *nr_freezes && *nr_thaws ? 0 : -ENOENT;
}

int vthreads__attach(struct vthreads *vt, const char *proc_root, uint32_t tgid, uint64_t start_ticks, char *err,
		     size_t err_size)
{
	uint64_t freezes[VTHREADS_MAX_FUNCTIONS], thaws[VTHREADS_MAX_FUNCTIONS];
	size_t nr_freezes, nr_thaws;
	char path[PATH_MAX], file[64];
	int fd, error, unmount = -1, mount = -1;

	for (size_t i = 0; i < vt->nr_probed; i++)
		if (vt->probed[i].tgid == tgid && vt->probed[i].start_ticks == start_ticks)
			return 0;
	if (room_for_one(vt)) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	fd = open_libjvm(proc_root, tgid, path, sizeof(path), err, err_size);
	if (fd < 0)
		return -1;
	if (vthreads__find_functions(fd, freezes, &nr_freezes, thaws, &nr_thaws)) {
		snprintf(err, err_size, "%s has no symbol for its %s (a libjvm stripped of its .symtab)", path,
			 nr_freezes ? "thaw" : "freeze");
		close(fd);
		return -1;
	}
	/* The uprobes are on the file opened and checked here, not on whatever its path names by then. */
	snprintf(file, sizeof(file), "/proc/self/fd/%d", fd);
	unmount = error = probe(vt->skel->progs.vthread_unmount, true, file, freezes, nr_freezes, tgid);
	if (error >= 0) {
		mount = error = probe(vt->skel->progs.vthread_mount, false, file, thaws, nr_thaws, tgid);
		/* Unmounts without their mounts would look unmounted for ever. */
		if (error < 0)
			close(unmount);
	}
	close(fd);
	if (error < 0) {
		snprintf(err, err_size, "cannot probe %s: %s%s", path, strerror(-error),
			 error == -EINVAL || error == -EOPNOTSUPP ? " (uprobe sessions need Linux 6.13)" : "");
		return -1;
	}
	/* Room was made for both (room_for_one): neither add fails. */
	loader__links_add(&vt->unmounts, unmount);
	loader__links_add(&vt->mounts, mount);
	vt->probed[vt->nr_probed++] = (struct probed){ .tgid = tgid, .start_ticks = start_ticks };
	return 0;
}

/* As bpf/vthreads.bpf.c's. */
struct unmounted_key {
	uint64_t id;
	uint32_t tgid, unused;
};

struct unmounted_since {
	uint64_t since;
	uint32_t state, unused;
};

void vthreads__for_each_unmounted(struct vthreads *vt, vthreads_unmounted_fn fn, void *ctx)
{
	int map = bpf_map__fd(vt->skel->maps.unmounted);
	struct unmounted_key key, next;
	struct unmounted_since at;
	void *prev = NULL;

	/* At most the map's size: a map that changed under the walk cannot make it go round for ever. */
	for (size_t n = 0; n < JBPF_MAX_UNMOUNTED && !bpf_map_get_next_key(map, prev, &next); n++) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(map, &key, &at))
			fn(ctx, key.tgid, key.id, at.since, at.state);
	}
}

void vthreads__detach(struct vthreads *vt)
{
	if (!vt)
		return;
	/*
	 * The mounts first: with the unmounts gone first, every mount in
	 * between would find no unmount and look unmounted since the start.
	 */
	loader__links_close(&vt->mounts);
	loader__links_close(&vt->unmounts);
	vt->nr_probed = 0;
}

void vthreads__close(struct vthreads *vt)
{
	if (!vt)
		return;
	vthreads__detach(vt);
	loader__links_free(&vt->mounts);
	loader__links_free(&vt->unmounts);
	free(vt->probed);
	vthreads_bpf__destroy(vt->skel);
	free(vt);
}

struct bpf_object *vthreads__object(const struct vthreads *vt)
{
	return vt->skel->obj;
}
