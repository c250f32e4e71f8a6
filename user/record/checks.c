/*
 * checks: preconditions of a recording (contract in checks.h).
 */
#include "checks.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/proc.h"

/* Capability numbers from linux/capability.h, which older headers lack. */
#define CAP_NUMBER_SYS_ADMIN 21
#define CAP_NUMBER_PERFMON 38
#define CAP_NUMBER_BPF 39

int checks__has_capability(const char *status_path, unsigned cap)
{
	char status[PROC_SMALL_MAX];
	long len = proc__read_small(status_path, status, sizeof(status));
	uint64_t mask;

	if (len < 0 || proc__parse_mask(status, (size_t)len, "CapEff:", &mask))
		return -1;
	return cap < 64 && (mask >> cap) & 1;
}

static int check_privileges(char *err, size_t err_size)
{
	const char *status = "/proc/self/status";

	if (geteuid() == 0)
		return 0;
	if (checks__has_capability(status, CAP_NUMBER_SYS_ADMIN) == 1)
		return 0;
	if (checks__has_capability(status, CAP_NUMBER_BPF) == 1 &&
	    checks__has_capability(status, CAP_NUMBER_PERFMON) == 1)
		return 0;
	snprintf(err, err_size,
		 "must run as root (or with CAP_BPF and CAP_PERFMON) to load BPF programs: try sudo jbpfprof ...");
	return -1;
}

int checks__environment(const char *btf_path, char *err, size_t err_size)
{
	if (check_privileges(err, err_size))
		return -1;
	if (access(btf_path, R_OK)) {
		snprintf(err, err_size,
			 "this kernel has no BTF type information (%s: %s); jbpfprof needs a kernel built "
			 "with CONFIG_DEBUG_INFO_BTF=y",
			 btf_path, strerror(errno));
		return -1;
	}
	if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) != 1) {
		snprintf(err, err_size,
			 "this kernel cannot run BPF perf_event programs, which CPU sampling needs "
			 "(CONFIG_BPF_EVENTS); jbpfprof cannot run here");
		return -1;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1) {
		snprintf(err, err_size,
			 "this kernel has no BPF ring buffer (Linux 5.8 or later is needed)");
		return -1;
	}
	return 0;
}

int checks__resolve_pid(const char *proc_root, uint32_t pid, uint32_t *tgid, char *err, size_t err_size)
{
	char status[PROC_SMALL_MAX];
	long len = proc__read_process_file(proc_root, pid, "status", status, sizeof(status));

	if (len == -ENOENT) {
		snprintf(err, err_size, "no process with PID %u (is it running? check with ps -p %u)", pid, pid);
		return -1;
	}
	if (len < 0) {
		snprintf(err, err_size, "cannot read %s/%u/status: %s", proc_root, pid, strerror((int)-len));
		return -1;
	}
	if (proc__parse_tgid(status, (size_t)len, tgid)) {
		snprintf(err, err_size, "no process with PID %u (it has exited)", pid);
		return -1;
	}
	return 0;
}

int checks__process_start(const char *proc_root, uint32_t tgid, uint64_t *start_ticks)
{
	char stat[PROC_SMALL_MAX];
	long len;

	/* USER_HZ is 100 on every architecture built; the programs divide by it. */
	if (sysconf(_SC_CLK_TCK) != JBPF_USER_HZ)
		return -EINVAL;
	len = proc__read_process_file(proc_root, tgid, "stat", stat, sizeof(stat));
	if (len == -ENOENT)
		return -ESRCH;
	if (len < 0)
		return (int)len;
	return proc__parse_start_time(stat, start_ticks) ? -ESRCH : 0;
}
