/*
 * vthreads: the loader of bpf/vthreads.bpf.c, the time virtual threads
 * spend unmounted (wall-clock and off-CPU profiles of JVMs whose Java
 * frames BPF walks, JDK 24 and later).
 *
 * A JVM's libjvm.so is opened as everything a target controls is
 * (symbolizer/proc.h), its freeze and thaw functions found in its .symtab
 * (local symbols: a libjvm stripped of them cannot be probed, and says
 * so), and one multi-uprobe link attached through that open file, limited
 * to the process.
 *
 * Loaded after the CPU sampler, whose maps it shares (loader.h). Failures
 * are one line in err or why and a negative errno, or -1.
 */
#ifndef JBPF_VTHREADS_H
#define JBPF_VTHREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct vthreads;

struct vthreads_config {
	uint64_t full_wait_ns; /* as the scheduler program's: a shorter wait is recorded by chance */
	bool remember_blobs;   /* as the CPU sampler's (sampler_config) */
};

/* Functions of one kind (freezes, thaws) found at most. */
#define VTHREADS_MAX_FUNCTIONS 8

/*
 * The file offsets of the freezes and of the thaws in the libjvm open at
 * fd (at most VTHREADS_MAX_FUNCTIONS each), found by name in its .symtab
 * and inside its loaded bytes. 0 when both kinds are there, -ENOENT when
 * either is missing (a stripped libjvm), -ENOEXEC for no readable ELF.
 */
int vthreads__find_functions(int fd, uint64_t *freezes, size_t *nr_freezes, uint64_t *thaws, size_t *nr_thaws);

int vthreads__open(const struct vthreads_config *config, const struct bpf_object *owner, struct vthreads **out,
		   char *err, size_t err_size);
/*
 * Probes the freezes and thaws of JVM tgid (as proc_root sees it, started
 * at start_ticks: JBPF_USER_HZ ticks), whose layout (hotspot_jvms) has
 * JBPF_HOTSPOT_UNMOUNTS; a process probed already is left as it is (a
 * second probe would see every thaw twice). 0, or -1 with a one-line
 * reason in err: no libjvm.so mapped, its file could not be opened, its
 * functions are not in its symbols, the attach failed.
 */
int vthreads__attach(struct vthreads *vt, const char *proc_root, uint32_t tgid, uint64_t start_ticks, char *err,
		     size_t err_size);
/* A virtual thread still unmounted: its process, id, when it unmounted and the enum jbpf_state of its wait. */
typedef void (*vthreads_unmounted_fn)(void *ctx, uint32_t tgid, uint64_t id, uint64_t since, uint32_t state);
/* Calls fn for each virtual thread the probes saw unmount and not mount again (at the end, after the stop). */
void vthreads__for_each_unmounted(struct vthreads *vt, vthreads_unmounted_fn fn, void *ctx);
/* Removes every uprobe; the program stays loaded. */
void vthreads__detach(struct vthreads *vt);
/* Detaches and closes everything; NULL-safe. */
void vthreads__close(struct vthreads *vt);
struct bpf_object *vthreads__object(const struct vthreads *vt);

#endif /* JBPF_VTHREADS_H */
