/*
 * nativemem: the loader of bpf/nativemem.bpf.c (-e nativemem): its
 * sampling draws, and uprobes on each target's allocator.
 *
 * The allocator of a process is the one its calls to malloc reach: the
 * executable's own if it exports malloc, else a library other than the C
 * library that does (jemalloc, tcmalloc, put first by LD_PRELOAD), else
 * the C library. Its file is opened as everything a target controls is
 * (symbolizer/proc.h), its functions found in its .dynsym, and the
 * uprobes attached through that open file, limited to the process.
 *
 * Loaded after the CPU sampler, whose maps it shares (loader.h). Failures
 * are one line in err and a negative errno.
 */
#ifndef JBPF_NATIVEMEM_H
#define JBPF_NATIVEMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct nativemem;

/* Sampled allocations --leaks follows to their free at once, by default. */
#define NATIVEMEM_LIVE_DEFAULT 65536

struct nativemem_config {
	uint64_t interval;     /* mean bytes between samples */
	bool leaks;            /* follow each sampled allocation to its free */
	uint32_t live_max;     /* with leaks: allocations followed at once (0: NATIVEMEM_LIVE_DEFAULT) */
	bool unwind_tables;    /* as the CPU sampler's (sampler_config) */
	bool hotspot_walk;
	bool remember_blobs;
};

int nativemem__open(const struct nativemem_config *config, const struct bpf_object *owner, struct nativemem **out,
		    char *err, size_t err_size);
/*
 * Probes the allocator of process tgid (as proc_root sees it). 0, or -1
 * with a one-line reason in err: no allocator found (a statically linked
 * program), its file could not be opened, an attach failed.
 */
int nativemem__attach(struct nativemem *nm, const char *proc_root, uint32_t tgid, char *err, size_t err_size);
/* Removes every uprobe; the program stays loaded. */
void nativemem__detach(struct nativemem *nm);
/* Detaches and closes everything; NULL-safe. */
void nativemem__close(struct nativemem *nm);
struct bpf_object *nativemem__object(const struct nativemem *nm);

#endif /* JBPF_NATIVEMEM_H */
