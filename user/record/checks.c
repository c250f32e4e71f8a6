/*
 * checks: preconditions of a recording (contract in checks.h).
 */
#include "checks.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Capability numbers from linux/capability.h, which older headers lack. */
#define CAP_NUMBER_SYS_ADMIN 21
#define CAP_NUMBER_PERFMON 38
#define CAP_NUMBER_BPF 39

int checks__has_capability(const char *status_path, unsigned cap)
{
	FILE *f = fopen(status_path, "re");
	char line[256];
	int result = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		uint64_t mask;

		if (sscanf(line, "CapEff: %" SCNx64, &mask) == 1) {
			result = cap < 64 && (mask >> cap) & 1;
			break;
		}
	}
	fclose(f);
	return result;
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
	char path[256], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			snprintf(err, err_size, "no process with PID %u (is it running? check with ps -p %u)",
				 pid, pid);
		else
			snprintf(err, err_size, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	*tgid = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned value;

		if (sscanf(line, "Tgid: %u", &value) == 1) {
			*tgid = value;
			break;
		}
	}
	fclose(f);
	if (!*tgid) {
		snprintf(err, err_size, "no process with PID %u (it has exited)", pid);
		return -1;
	}
	return 0;
}
