/*
 * loader: the maps the BPF objects share, kernel features, tracefs (see
 * loader.h).
 */
#include "loader.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/*
 * The maps of bpf/shared.bpf.h. Every object that includes it declares
 * them all, even those it does not use: an unshared one would be created
 * empty and be a second, unseen filter or ring buffer.
 */
static const char *const shared_maps[] = {
	"targets", "java_targets", "no_java_tids", "java_seqs", "deferred", "owed", "waits", "events", "counters",
};

/*
 * The walker's maps (bpf/unwind.bpf.h, bpf/hotspot.bpf.h), shared with the
 * objects that walk too: the CPU sampler creates them, the scheduler
 * program walks the waits of walked JVMs' threads with them.
 */
static const char *const walker_maps[] = { "unwind_rows", "unwind_procs", "hotspot_jvms", "hotspot_blobs",
					   "java_threads" };

static int share_map(struct bpf_map *mine, const struct bpf_map *shared, const char *what, char *err,
		     size_t err_size)
{
	int error;

	if (!bpf_map__reuse_fd(mine, bpf_map__fd(shared)))
		return 0;
	error = errno;
	snprintf(err, err_size, "cannot share the BPF maps with the %s: %s", what, strerror(error));
	return -error;
}

int loader__share_maps(struct bpf_object *obj, const struct bpf_object *owner, const char *what, char *err,
		       size_t err_size)
{
	for (size_t i = 0; i < sizeof(shared_maps) / sizeof(shared_maps[0]); i++) {
		struct bpf_map *mine = bpf_object__find_map_by_name(obj, shared_maps[i]);
		const struct bpf_map *shared = bpf_object__find_map_by_name(owner, shared_maps[i]);
		int error;

		if (!mine || !shared) {
			snprintf(err, err_size, "cannot share the BPF maps with the %s: map %s is missing", what,
				 shared_maps[i]);
			return -ENOENT;
		}
		error = share_map(mine, shared, what, err, err_size);
		if (error)
			return error;
	}
	/* An object that does not walk does not declare them. */
	for (size_t i = 0; i < sizeof(walker_maps) / sizeof(walker_maps[0]); i++) {
		struct bpf_map *mine = bpf_object__find_map_by_name(obj, walker_maps[i]);
		const struct bpf_map *shared = bpf_object__find_map_by_name(owner, walker_maps[i]);
		int error;

		if (!mine || !shared)
			continue;
		error = share_map(mine, shared, what, err, err_size);
		if (error)
			return error;
	}
	return 0;
}

/*
 * The kfunc bpf/deferral.bpf.h calls, by the name it calls. The kernel's
 * own BTF lists every kfunc it has; a kernel without BTF has no CO-RE
 * either, and the checks refused it before this.
 */
bool loader__has_task_work(void)
{
	static int known = -1;

	if (known < 0)
		known = loader__kernel_has_function("bpf_task_work_schedule_resume_impl");
	return known;
}

bool loader__has_bpf_loop(void)
{
	static int known = -1;

	if (known >= 0)
		return known;
	known = !loader__fallback_forced("bpf-loop") && libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop,
										   NULL) == 1;
	if (!known)
		loader__note_fallback("bpf-loop",
				      loader__fallback_forced("bpf-loop") ? "forced (JBPFPROF_FORCE_FALLBACK)"
									  : "the kernel has no bpf_loop (Linux 5.17)",
				      "user stacks by frame pointers, as with --unwind fp, and Java frames from the agent");
	return known;
}

bool loader__kernel_has_function(const char *name)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool has = vmlinux && btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC) > 0;

	btf__free(vmlinux);
	return has;
}

bool loader__kernel_at_least(unsigned int major, unsigned int minor)
{
	struct utsname u;
	unsigned int have_major, have_minor;

	if (uname(&u) || sscanf(u.release, "%u.%u", &have_major, &have_minor) != 2)
		return false;
	return have_major > major || (have_major == major && have_minor >= minor);
}

size_t loader__add_run_times(const struct bpf_object *obj, struct loader_run_time *times, size_t nr, size_t max)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);
		size_t i;

		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		for (i = 0; i < nr && strncmp(times[i].name, info.name, sizeof(times[i].name)) != 0; i++)
			;
		if (i == nr) {
			if (nr == max)
				continue;
			memset(&times[i], 0, sizeof(times[i]));
			memcpy(times[i].name, info.name, sizeof(times[i].name) - 1);
			nr++;
		}
		times[i].ns += info.run_time_ns;
		times[i].runs += info.run_cnt;
	}
	return nr;
}

bool loader__fallback_forced(const char *name)
{
	const char *list = getenv("JBPFPROF_FORCE_FALLBACK");
	size_t len = strlen(name);

	if (!list)
		return false;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if ((n == 3 && !strncmp(p, "all", 3)) || (n == len && !strncmp(p, name, len)))
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* The notes already given: one line per feature and recording, not one per JVM or per load. */
#define NOTES_MAX 32
static char notes_given[NOTES_MAX][48];

static bool first_note(const char *key)
{
	size_t i;

	for (i = 0; i < NOTES_MAX && notes_given[i][0]; i++)
		if (!strncmp(notes_given[i], key, sizeof(notes_given[i]) - 1))
			return false;
	if (i < NOTES_MAX)
		snprintf(notes_given[i], sizeof(notes_given[i]), "%s", key);
	return true;
}

void loader__note_fallback(const char *feature, const char *err, const char *instead)
{
	if (first_note(feature))
		fprintf(stderr, "jbpfprof: fallback: %s: %s; %s\n", feature, err, instead);
}

void loader__note_unavailable(const char *part, const char *err)
{
	if (first_note(part))
		fprintf(stderr, "jbpfprof: unavailable: %s: %s\n", part, err);
}

/* Harmless, and what perf and bpftrace do too. */
void loader__ensure_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0 || stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return;
	mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
}

#define LINK_CREATE_COMMAND 28

/* The link_create part of union bpf_attr that a multi-uprobe link reads. */
union link_create_attr {
	struct {
		uint32_t prog_fd;
		uint32_t target_fd;
		uint32_t attach_type;
		uint32_t flags;
		uint64_t path;
		uint64_t offsets;
		uint64_t ref_ctr_offsets;
		uint64_t cookies;
		uint32_t cnt;
		uint32_t multi_flags;
		uint32_t pid;
	};
	/* The kernel reads the size given and wants any tail it does not know to be zero. */
	uint8_t bytes[128];
};

#define UPROBE_MULTI_RETURN 1 /* BPF_F_UPROBE_MULTI_RETURN */

static int link_uprobe_multi(int prog_fd, uint32_t attach_type, uint32_t flags, const char *file,
			     const uint64_t *offsets, const uint64_t *cookies, size_t nr, uint32_t pid)
{
	union link_create_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = attach_type;
	attr.multi_flags = flags;
	attr.path = (uint64_t)(uintptr_t)file;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = (uint32_t)nr;
	attr.pid = pid;
	fd = (int)syscall(__NR_bpf, LINK_CREATE_COMMAND, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int loader__uprobe_multi(int prog_fd, uint32_t attach_type, const char *file, const uint64_t *offsets,
			 const uint64_t *cookies, size_t nr, uint32_t pid)
{
	return link_uprobe_multi(prog_fd, attach_type, 0, file, offsets, cookies, nr, pid);
}

int loader__uretprobe_multi(int prog_fd, const char *file, const uint64_t *offsets, const uint64_t *cookies,
			    size_t nr, uint32_t pid)
{
	return link_uprobe_multi(prog_fd, LOADER_TRACE_UPROBE_MULTI, UPROBE_MULTI_RETURN, file, offsets, cookies, nr,
				 pid);
}

/*
 * The answer of link_create for attach_type on "/" with pid, for a
 * program that returns 0 loaded for that attach type: a negative errno
 * (or 0 if a link was made, which no kernel does for a directory).
 */
static int uprobe_link_errno(uint32_t attach_type, uint32_t pid)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	uint64_t offset = 0;
	int prog, link, error;

	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog < 0)
		return -errno;
	link = link_uprobe_multi(prog, attach_type, 0, "/", &offset, NULL, 1, pid);
	error = link < 0 ? link : 0;
	if (link >= 0)
		close(link);
	close(prog);
	return error;
}

bool loader__has_uprobe_multi(void)
{
	static int known = -1;

	if (known < 0)
		known = uprobe_link_errno(LOADER_TRACE_UPROBE_MULTI, 0) == -EBADF &&
			uprobe_link_errno(LOADER_TRACE_UPROBE_MULTI, (uint32_t)-1) == -EINVAL;
	return known;
}

bool loader__has_uprobe_session(void)
{
	static int known = -1;

	if (known < 0)
		known = uprobe_link_errno(LOADER_TRACE_UPROBE_SESSION, 0) == -EBADF;
	return known;
}

int loader__links_reserve(struct loader_links *links, size_t more)
{
	size_t cap = links->cap ? links->cap : 8;
	int *fds;

	if (links->nr + more <= links->cap)
		return 0;
	while (cap < links->nr + more)
		cap *= 2;
	fds = realloc(links->fds, cap * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	links->fds = fds;
	links->cap = cap;
	return 0;
}

int loader__links_add(struct loader_links *links, int fd)
{
	if (loader__links_reserve(links, 1)) {
		close(fd);
		return -ENOMEM;
	}
	links->fds[links->nr++] = fd;
	return 0;
}

void loader__links_close(struct loader_links *links)
{
	for (size_t i = 0; i < links->nr; i++)
		close(links->fds[i]);
	links->nr = 0;
}

void loader__links_free(struct loader_links *links)
{
	loader__links_close(links);
	free(links->fds);
	links->fds = NULL;
	links->cap = 0;
}
