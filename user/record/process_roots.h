/*
 * process_roots: the frame that begins each process's stacks, made once
 * per process.
 *
 * A process is named by what it runs (symbolizer/service.h: a JVM's main
 * class or jar, an interpreter's script), what it calls itself (its comm),
 * its pid and its container, then shown as the grouping asks
 * (view__process_frame): "org.example.Main (java, pid 12)", "app.py
 * (python3)", "java". Where the command line names no program, an
 * executable whose name the 15 bytes of comm cut short is named in full.
 *
 * Naming a process reads its command line, cgroup and executable link
 * once; the frame's id is then kept in a direct-mapped table of
 * PROCESS_ROOTS_SLOTS entries by (tgid, start time), so a tgid reused by
 * another process (told apart by the symbolizer's start time) is named
 * anew, and so is a process that ran exec (process_roots__forget). The
 * owner empties the table when the ids stop naming anything (a new
 * profile).
 */
#ifndef JBPF_PROCESS_ROOTS_H
#define JBPF_PROCESS_ROOTS_H

#include <stdint.h>

#include "profile/profile.h"
#include "profile/view.h"
#include "symbolizer/symbolizer.h"

#define PROCESS_ROOTS_SLOTS 4096

struct process_roots;

/* NULL on out of memory. grouping is not VIEW_ROOT_NONE. */
struct process_roots *process_roots__new(enum view_process_root grouping);
void process_roots__free(struct process_roots *roots);

/*
 * The id in profile of process tgid's root frame, interned if new; comm is
 * the sample's, used when the process can no longer be read. A negative
 * errno when the profile is full.
 */
int64_t process_roots__frame(struct process_roots *roots, struct profile *profile, struct symbolizer *sym,
			     uint32_t tgid, const char *comm);

/* Process tgid ran exec: it is named again at its next sample. */
void process_roots__forget(struct process_roots *roots, uint32_t tgid);

/* Forgets every id. */
void process_roots__clear(struct process_roots *roots);

#endif /* JBPF_PROCESS_ROOTS_H */
