/*
 * handler_install: everything about the signal handler that does not run
 * in signal context: mapping its ring, its wake-up eventfd, finding
 * AsyncGetCallTrace, choosing the signal and installing the handler
 * (contract in handler.h).
 *
 * handler__init runs with the agent's lock held (agent.c), so the fields
 * below are written by one thread at a time; the handler only sees what
 * handler__configure hands it before sigaction installs it.
 */
#include "handler.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

static struct {
	void *agct;
	bool agct_looked_up;
	struct ring *ring;
	int wake_fd;
	int signo; /* 0 until installed */
} hi = { .wake_fd = -1 };

static void find_agct(const void *jvm_code)
{
	Dl_info info;
	void *lib;

	hi.agct = dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	/* A JVM embedded with RTLD_LOCAL: look in the library the JVMTI functions live in. */
	if (!hi.agct && jvm_code && dladdr(jvm_code, &info) && info.dli_fname) {
		lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (lib) {
			hi.agct = dlsym(lib, "AsyncGetCallTrace");
			/* The reference is kept: libjvm outlives us anyway. */
		}
	}
	hi.agct_looked_up = true;
}

/* Installs the handler on the first free real-time signal in [SIGRTMIN+4, SIGRTMAX-4]. */
static int install(char *err, size_t err_size)
{
	int first = SIGRTMIN + 4, last = SIGRTMAX - 4;

	for (int signo = first; signo <= last; signo++) {
		struct sigaction old, sa;

		if (sigaction(signo, NULL, &old) || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = handler__on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(signo, &sa, NULL))
			continue;
		hi.signo = signo;
		return 0;
	}
	snprintf(err, err_size,
		 "no free real-time signal: SIGRTMIN+4 to SIGRTMAX-4 (%d to %d) all have handlers", first, last);
	return -1;
}

int handler__init(const void *jvm_code, char *err, size_t err_size)
{
	if (hi.signo)
		return 0;
	if (!hi.ring) {
		hi.ring = ring__create(HANDLER_RING_SLOTS);
		if (!hi.ring) {
			snprintf(err, err_size, "cannot map the trace ring (%zu KiB): %s",
				 (size_t)HANDLER_RING_SLOTS * sizeof(struct ring_slot) / 1024, strerror(errno));
			return -1;
		}
	}
	if (hi.wake_fd < 0) {
		hi.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (hi.wake_fd < 0) {
			snprintf(err, err_size, "cannot create an eventfd: %s", strerror(errno));
			return -1;
		}
	}
	if (!hi.agct_looked_up)
		find_agct(jvm_code);
	handler__configure(hi.agct, hi.ring, hi.wake_fd);
	return install(err, err_size);
}

int handler__signo(void)
{
	return hi.signo;
}

struct ring *handler__ring(void)
{
	return hi.ring;
}

int handler__wake_fd(void)
{
	return hi.wake_fd;
}
