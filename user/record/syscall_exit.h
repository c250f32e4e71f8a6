/*
 * syscall_exit: the loader of bpf/syscall_exit.bpf.c, what the end of a
 * system call owes a thread (a deferred Java stack signal, a wait's user
 * stack, a missed switch back).
 *
 * The fallback for kernels without BPF task work (see sampler.c and
 * bpf/deferral.bpf.h); loaded only there, and only when something can be
 * owed: with JVMs to signal, or with waits. It runs on every system call return of the host, so of its two
 * programs only one is loaded: with JVMs the tracepoint one, the only kind
 * that may send the signal, attached through tracefs (mounted here if it
 * is not); else the cheaper raw tracepoint one. It shares the CPU
 * sampler's maps (loader.h). Failures are one line in err and a negative
 * errno.
 */
#ifndef JBPF_SYSCALL_EXIT_H
#define JBPF_SYSCALL_EXIT_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;
struct syscall_exit;

/* Opens the object, gives it owner's shared maps and loads the program for java (see above). */
int syscall_exit__open(bool java, const struct bpf_object *owner, struct syscall_exit **out, char *err,
		       size_t err_size);
/* Whether it is the tracepoint program, the one that can send a deferred Java signal. */
bool syscall_exit__signals(const struct syscall_exit *se);
/* Attaches the program; does nothing once attached. */
int syscall_exit__attach(struct syscall_exit *se, char *err, size_t err_size);
/*
 * The scheduler program is detached: from now on a thread found off CPU
 * is no missed switch. The program stays (deferred Java signals).
 */
void syscall_exit__stop_waits(struct syscall_exit *se);
/* Detaches and closes everything; NULL-safe. */
void syscall_exit__close(struct syscall_exit *se);
struct bpf_object *syscall_exit__object(const struct syscall_exit *se);

#endif /* JBPF_SYSCALL_EXIT_H */
