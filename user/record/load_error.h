/*
 * load_error: why a BPF object failed to load, in one line that tells the
 * truth.
 *
 * libbpf returns little more than an errno from a failed load, and the
 * errno misleads: a verifier rejection is EACCES ("Permission denied"),
 * the same as an LSM's refusal. What happened is in libbpf's own
 * messages, so this module is libbpf's print callback: it prints them as
 * -v asks and meanwhile remembers, within a fixed budget,
 *
 *   - the last program libbpf reported failing, its error and the tail of
 *     its verifier log (the verifier says why at the end of the log);
 *   - the last extern (a kernel function or variable) libbpf did not find
 *     in the kernel;
 *   - each program's section, as libbpf found it when the object opened
 *     (it names the program type).
 *
 * After a failed load, load_error__strerror turns what was remembered,
 * the errno, the kernel's release and the process's capabilities into
 * one line beginning with what failed, then forgets the failure. "Not
 * permitted" is said only for EPERM when the process lacks a capability,
 * and the line names the one(s) missing. load_error__compose is the same
 * composition as a pure function, for tests.
 *
 * Every function may be called from any thread: the remembered state has
 * a lock of its own.
 */
#ifndef JBPF_LOAD_ERROR_H
#define JBPF_LOAD_ERROR_H

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* What the callback remembered (load_error.c); the same object for the process's lifetime. */
struct load_error_capture;

/*
 * The capability bits of the kernel's checks for loading tracing programs
 * (linux/capability.h; CAP_BPF and CAP_PERFMON are Linux 5.8's).
 */
#define LOAD_ERROR_CAP_SYS_ADMIN 21
#define LOAD_ERROR_CAP_PERFMON 38
#define LOAD_ERROR_CAP_BPF 39
#define LOAD_ERROR_CAP(cap) ((uint64_t)1 << (cap))

/* What the callback prints: 0 nothing, 1 libbpf's warnings and information, 2 also its debug lines. */
void load_error__set_verbose(int level);

/* libbpf's print callback (libbpf_set_print): prints as load_error__set_verbose says, remembers always. */
int load_error__print(enum libbpf_print_level level, const char *format, va_list args);

/* The callback's memory, for load_error__compose. Read it only while no other thread loads. */
const struct load_error_capture *load_error__captured(void);

/* Forgets the last failure (program, log, missing extern); the sections stay. */
void load_error__forget(void);

/* The process's effective capabilities (capget), a bit per LOAD_ERROR_CAP; 0 if they cannot be read. */
uint64_t load_error__effective_caps(void);

/*
 * The one-line message for a failed load of the object what ("BPF
 * sampler"), error a positive errno, from capture, the kernel's release
 * (uname -r) and effective_caps (LOAD_ERROR_CAP bits), into err (always
 * terminated, cut to err_size). Depends on nothing else: in order,
 *
 *   1. EPERM without CAP_SYS_ADMIN and without CAP_BPF or CAP_PERFMON:
 *      not permitted, naming the capabilities missing;
 *   2. EPERM otherwise: the kernel refused the program (and its section,
 *      which names its type) despite the capabilities, and the log's last
 *      meaningful line if it has one;
 *   3. a verifier log: the program, the kernel, the verifier's last
 *      meaningful line (and the one before when that is a generic
 *      follow-up), and -v for the whole log;
 *   4. an extern not found: the kernel function or variable it lacks;
 *   5. else the program if known, and the errno.
 */
void load_error__compose(const struct load_error_capture *capture, int error, const char *what,
			 const char *kernel_release, uint64_t effective_caps, char *err, size_t err_size);

/* load_error__compose with what was captured, this kernel and this process, then load_error__forget. */
void load_error__strerror(int error, const char *what, char *err, size_t err_size);

#endif /* JBPF_LOAD_ERROR_H */
