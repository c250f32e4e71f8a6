/*
 * offcpu: the loader of bpf/offcpu.bpf.c, the scheduler programs of
 * wall-clock and off-CPU profiles (sched_switch,
 * sched_process_fork and sched_process_exit), and its `waits` map.
 *
 * Loaded only with config->waits, after the CPU sampler, whose maps it
 * shares (loader.h). Failures are one line in err and a negative errno.
 */
#ifndef JBPF_OFFCPU_H
#define JBPF_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "user/record/sampler.h"

struct bpf_object;
struct offcpu;

/* Opens the object, gives it owner's shared maps, configures it from config and loads it. */
int offcpu__open(const struct sampler_config *config, const struct bpf_object *owner, struct offcpu **out,
		 char *err, size_t err_size);
/* Starts following context switches, thread creations and exits. */
int offcpu__attach(struct offcpu *off, char *err, size_t err_size);
/*
 * Stops following them, and checking at a thread's return to user mode
 * that its switch-in was seen; the programs stay loaded and `waits` keeps
 * what it knows.
 */
void offcpu__detach(struct offcpu *off);
/* Detaches and closes everything; NULL-safe. */
void offcpu__close(struct offcpu *off);
struct bpf_object *offcpu__object(const struct offcpu *off);

/*
 * The threads alive now, of the nr_tgids processes tgids names (none: of
 * every process), each with its state now: its first wait then starts at
 * the window's start (bpf/offcpu.bpf.c seed_threads). A thread the program
 * already follows is left as it is. Returns the threads seeded, or -errno.
 */
int offcpu__seed_threads(struct offcpu *off, const uint32_t *tgids, size_t nr_tgids);
/* As sampler__for_each_thread (sampler.h). */
int offcpu__for_each_thread(struct offcpu *off, sampler_thread_fn fn, void *ctx);

#endif /* JBPF_OFFCPU_H */
