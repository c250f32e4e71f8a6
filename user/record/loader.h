/*
 * loader: what the loaders of the BPF objects have in common.
 *
 * Each BPF object has its own loader in user/record/: cpu_sampler.c
 * (bpf/sample.bpf.c, which creates the maps every object shares),
 * offcpu.c (bpf/offcpu.bpf.c) and syscall_exit.c (bpf/syscall_exit.bpf.c);
 * sampler.c runs them in order. Here: handing the shared maps of
 * bpf/shared.bpf.h to an object before it loads, the kernel's BPF task
 * work, multi-uprobe links and what the kernel has of them, the other
 * optional features and their fallbacks, and tracefs for tracepoint
 * programs. Why a load failed is load_error.h's.
 *
 * Failures are one line in err (what failed, the likely cause, what to
 * do) and a negative errno.
 */
#ifndef JBPF_LOADER_H
#define JBPF_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;

/*
 * Makes obj, opened but not loaded, use owner's maps for every map of
 * bpf/shared.bpf.h (bpf_map__reuse_fd), so that both objects share one
 * filter, ring buffer and set of counters. what names obj in messages
 * ("scheduler program"). 0 or -errno.
 */
int loader__share_maps(struct bpf_object *obj, const struct bpf_object *owner, const char *what, char *err,
		       size_t err_size);

/*
 * Whether the kernel has BPF task work (bpf_task_work_schedule_resume,
 * Linux 6.18), read from its BTF; the question is asked once per process.
 */
bool loader__has_task_work(void);

/*
 * Whether programs may call bpf_loop (Linux 5.17), which the walks by
 * unwind tables and through HotSpot's frames, and --wakers' search for an
 * interrupt's frames, step with. false too when the fallback "bpf-loop" is
 * forced; either way said once (loader__note_fallback).
 */
bool loader__has_bpf_loop(void);

/* Whether the running kernel's BTF lists a function (a kfunc) of this name. */
bool loader__kernel_has_function(const char *name);

/* Whether the running kernel's release (uname) is major.minor or later. */
bool loader__kernel_at_least(unsigned int major, unsigned int minor);

/*
 * The kernel's count of a program's runs and their time, kept while
 * kernel.bpf_stats_enabled is 1 (0 otherwise), summed by program name.
 */
struct loader_run_time {
	char name[16]; /* BPF_OBJ_NAME_LEN */
	uint64_t ns, runs;
};

/*
 * Adds each program of obj to times, nr of max entries used: a program
 * whose name is there adds to it, another takes a new entry while there
 * is room. Returns the entries used.
 */
size_t loader__add_run_times(const struct bpf_object *obj, struct loader_run_time *times, size_t nr, size_t max);

/*
 * Linux 6.6's multi-uprobe link (BPF_TRACE_UPROBE_MULTI), which libbpf 1.1
 * and the system's uapi headers predate: its attach types, for the
 * programs' expected attach type before load.
 */
#define LOADER_TRACE_UPROBE_MULTI 48
#define LOADER_TRACE_UPROBE_SESSION 57 /* Linux 6.13: entry and return in one program */

/*
 * One link putting program prog_fd (attach_type, one of the two above)
 * on offsets[0..nr) of file, in process pid only (every thread of it,
 * those running now and those to come), each with its cookie. The link's
 * fd, or a negative errno.
 */
int loader__uprobe_multi(int prog_fd, uint32_t attach_type, const char *file, const uint64_t *offsets,
			 const uint64_t *cookies, size_t nr, uint32_t pid);

/* The same link for the functions' returns (uretprobes); prog_fd's expected attach type LOADER_TRACE_UPROBE_MULTI. */
int loader__uretprobe_multi(int prog_fd, const char *file, const uint64_t *offsets, const uint64_t *cookies,
			    size_t nr, uint32_t pid);

/*
 * The links a uprobe loader made (-e nativemem's, the virtual threads'),
 * kept until it detaches: fds, closed in the order they were added.
 */
struct loader_links {
	int *fds;
	size_t nr, cap;
};

/* Room for more links, so that as many adds cannot fail: 0 or -ENOMEM. */
int loader__links_reserve(struct loader_links *links, size_t more);
/* Keeps link fd: 0, or -ENOMEM with fd closed (a link not kept is no link left behind). */
int loader__links_add(struct loader_links *links, int fd);
/* Closes every link kept (the probes are gone once it returns); the list stays, empty. */
void loader__links_close(struct loader_links *links);
/* Closes every link and frees the list. */
void loader__links_free(struct loader_links *links);

/*
 * Whether the kernel makes multi-uprobe links (Linux 6.6) whose pid
 * limits them to a process. Kernels before the fix of 6.10 (and of the
 * stable releases it went to) limited them to the one thread of that id,
 * and are treated as having none. Asked of the kernel once per process:
 * a link made on a directory fails with EBADF only where the link type
 * exists, and a pid of -1 fails with EINVAL only where it is checked.
 */
bool loader__has_uprobe_multi(void);

/* Whether the kernel makes uprobe sessions (Linux 6.13), asked the same way. */
bool loader__has_uprobe_session(void);

/*
 * Optional kernel features. Each has a fallback (another way to the same
 * result) or, where there is none, a refusal of the part that needs it
 * alone. The environment variable JBPFPROF_FORCE_FALLBACK, a
 * comma-separated list of fallback names or "all", forces fallbacks on a
 * kernel that has the feature, so that tests run every fallback path on
 * every kernel. Names: "map-elem-iter", "uprobe-multi", "uprobe-session",
 * "task-work", "bpf-loop" (see docs/architecture.md, "Kernels").
 */
bool loader__fallback_forced(const char *name);

/*
 * Says once, on standard error, that the profiler goes on without a
 * feature: "jbpfprof: fallback: FEATURE: WHY; INSTEAD". The kernel matrix
 * (tests/kernels/) reads these lines: keep the prefix.
 */
void loader__note_fallback(const char *feature, const char *err, const char *instead);

/*
 * Says once that a part of the recording is left out for want of a
 * feature: "jbpfprof: unavailable: PART: WHY". Same prefix rule.
 */
void loader__note_unavailable(const char *part, const char *err);

/*
 * libbpf attaches tracepoint programs by the event's id, which only tracefs
 * tells; mounts tracefs where the kernel expects it when it is not mounted.
 */
void loader__ensure_tracefs(void);

#endif /* JBPF_LOADER_H */
