/*
 * checks: what must hold before a recording can start, each failure
 * explained in one line (what is missing, why it matters, what to do).
 */
#ifndef JBPF_CHECKS_H
#define JBPF_CHECKS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Privileges (root, or CAP_BPF with CAP_PERFMON), kernel BTF and the BPF
 * program and map types the sampler uses. btf_path is normally
 * "/sys/kernel/btf/vmlinux". Returns 0 or -1 with the reason in err.
 */
int checks__environment(const char *btf_path, char *err, size_t err_size);

/*
 * The process (thread group) that pid names: pid itself, or, when pid is a
 * thread, the process it belongs to. proc_root is normally "/proc".
 * Returns 0, or -1 with the reason in err when there is no such process.
 */
int checks__resolve_pid(const char *proc_root, uint32_t pid, uint32_t *tgid, char *err, size_t err_size);

/*
 * When process tgid started, as /proc/<tgid>/stat says (field 22: clock
 * ticks since boot), the unit the BPF programs compare a task's process
 * with (bpf/jbpfprof.h, JBPF_CLOCK_TICK_NS): what tells a target from a
 * later process that got its pid. Returns 0, -ESRCH when there is no such
 * process, -EINVAL when /proc's ticks are not JBPF_USER_HZ, or -errno.
 */
int checks__process_start(const char *proc_root, uint32_t tgid, uint64_t *start_ticks);

/*
 * Whether the effective capability set holds capability cap, read from a
 * /proc/PID/status file ("CapEff:" line). Returns 1, 0, or -1 if unreadable
 * or malformed.
 */
int checks__has_capability(const char *status_path, unsigned cap);

#endif /* JBPF_CHECKS_H */
