/*
 * syscall_exit: loading and attaching the system call exit program
 * (bpf/syscall_exit.bpf.c); contract in syscall_exit.h.
 */
#include "syscall_exit.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscall_exit.skel.h"
#include "user/record/load_error.h"
#include "user/record/loader.h"

struct syscall_exit {
	struct syscall_exit_bpf *skel;
	struct bpf_link *link; /* raw_syscalls/sys_exit */
	bool java;             /* the tracepoint program, else the raw one */
};

int syscall_exit__open(bool java, const struct bpf_object *owner, struct syscall_exit **out, char *err,
		       size_t err_size)
{
	struct syscall_exit *se = calloc(1, sizeof(*se));
	int error;

	*out = NULL;
	if (!se) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	se->java = java;
	se->skel = syscall_exit_bpf__open();
	if (!se->skel) {
		error = errno;
		snprintf(err, err_size, "cannot open the BPF system call exit program: %s", strerror(error));
		goto fail;
	}
	error = -loader__share_maps(se->skel->obj, owner, "system call exit program", err, err_size);
	if (error)
		goto fail;
	bpf_program__set_autoload(se->skel->progs.syscall_exit, java);
	bpf_program__set_autoload(se->skel->progs.syscall_exit_raw, !java);
	error = -syscall_exit_bpf__load(se->skel);
	if (error) {
		load_error__strerror(error, "BPF system call exit program", err, err_size);
		goto fail;
	}
	*out = se;
	return 0;
fail:
	syscall_exit__close(se);
	return -(error ? error : EINVAL);
}

bool syscall_exit__signals(const struct syscall_exit *se)
{
	return se->java;
}

int syscall_exit__attach(struct syscall_exit *se, char *err, size_t err_size)
{
	int error;

	if (se->link)
		return 0;
	if (!se->java) {
		se->link = bpf_program__attach(se->skel->progs.syscall_exit_raw);
		if (!se->link) {
			error = errno;
			snprintf(err, err_size, "cannot attach to the sys_exit raw tracepoint: %s", strerror(error));
			return -error;
		}
		return 0;
	}
	loader__ensure_tracefs();
	se->link = bpf_program__attach(se->skel->progs.syscall_exit);
	if (!se->link) {
		error = errno;
		snprintf(err, err_size,
			 "cannot attach to the raw_syscalls/sys_exit tracepoint (%s); is tracefs mountable?",
			 strerror(error));
		return -error;
	}
	return 0;
}

void syscall_exit__stop_waits(struct syscall_exit *se)
{
	se->skel->bss->waits_stopped = true;
}

void syscall_exit__close(struct syscall_exit *se)
{
	if (!se)
		return;
	bpf_link__destroy(se->link);
	syscall_exit_bpf__destroy(se->skel);
	free(se);
}

struct bpf_object *syscall_exit__object(const struct syscall_exit *se)
{
	return se->skel->obj;
}
