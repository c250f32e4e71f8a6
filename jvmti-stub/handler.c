/*
 * handler: the profiling signal's handler and its set-up (contract in
 * handler.h).
 *
 * Everything the handler reads (vm, agct, ring, wake_fd) is written before
 * the handler is installed and never changes after; the recording it works
 * for is one atomic word, `session`, 0 when disabled. Each trace carries
 * that session, so the agent thread can discard a trace that a handler
 * started for an earlier recording finished late.
 */
#include "handler.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "stream.h"

/* HotSpot's AsyncGetCallTrace interface (forte.cpp), not in any JDK header. */
typedef struct {
	jint lineno; /* bytecode index, or -3 for a native method */
	jmethodID method_id;
} ASGCT_CallFrame;

typedef struct {
	JNIEnv *env_id;
	jint num_frames; /* frames written, or a negative reason (see stream.h) */
	ASGCT_CallFrame *frames;
} ASGCT_CallTrace;

typedef void (*asgct_fn)(ASGCT_CallTrace *trace, jint depth, void *ucontext);

/* AsyncGetCallTrace writes straight into the ring's frames. */
_Static_assert(sizeof(ASGCT_CallFrame) == sizeof(struct ring_frame), "ring_frame must match ASGCT_CallFrame");
_Static_assert(offsetof(ASGCT_CallFrame, method_id) == offsetof(struct ring_frame, method_id),
	       "ring_frame must match ASGCT_CallFrame");

static struct {
	JavaVM *vm;
	asgct_fn agct;        /* NULL: this JVM has none */
	bool agct_looked_up;
	struct ring *ring;
	int wake_fd;
	int signo;            /* 0 until installed */
	_Atomic uint32_t session;
	_Atomic bool accept_sigqueue;
	_Atomic bool wake_pending;
	_Atomic uint64_t signals, traces, ring_full, foreign, handler_ns;
	_Atomic pid_t agent_tid;
} hs = { .wake_fd = -1 };

static void count(_Atomic uint64_t *counter)
{
	atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

static bool accepted(const siginfo_t *info)
{
	if (info->si_code == SI_KERNEL)
		return true;
	return info->si_code == SI_QUEUE && atomic_load_explicit(&hs.accept_sigqueue, memory_order_relaxed);
}

static void on_signal(int signo, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	uint32_t session = atomic_load_explicit(&hs.session, memory_order_acquire);
	struct ring_slot *slot;
	struct timespec now;
	JNIEnv *env = NULL;

	if (!session)
		goto out;
	count(&hs.signals);
	if (!accepted(info)) {
		count(&hs.foreign);
		goto out;
	}
	slot = ring__claim(hs.ring);
	if (!slot) {
		count(&hs.ring_full);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	slot->seq = (uint64_t)(uintptr_t)info->si_value.sival_ptr;
	slot->time_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	slot->session = session;
	slot->tid = (uint32_t)gettid();
	if ((pid_t)slot->tid == atomic_load_explicit(&hs.agent_tid, memory_order_relaxed)) {
		slot->num_frames = JBPF_TRACE_NOT_JAVA_THREAD;
	} else if ((*hs.vm)->GetEnv(hs.vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK || !env) {
		slot->num_frames = JBPF_TRACE_NOT_JAVA_THREAD;
	} else if (!hs.agct) {
		slot->num_frames = JBPF_TRACE_NO_AGCT;
	} else {
		ASGCT_CallTrace trace = { .env_id = env, .frames = (ASGCT_CallFrame *)slot->frames };

		hs.agct(&trace, RING_MAX_FRAMES, ucontext);
		slot->num_frames = trace.num_frames;
	}
	ring__publish(hs.ring, slot);
	count(&hs.traces);
	{
		struct timespec end;

		clock_gettime(CLOCK_MONOTONIC, &end);
		atomic_fetch_add_explicit(&hs.handler_ns,
					  (uint64_t)((end.tv_sec - now.tv_sec) * 1000000000ll + (end.tv_nsec - now.tv_nsec)),
					  memory_order_relaxed);
	}
	if (ring__used(hs.ring) >= ring__nr_slots(hs.ring) / 2 &&
	    !atomic_exchange_explicit(&hs.wake_pending, true, memory_order_relaxed)) {
		uint64_t one = 1;

		if (write(hs.wake_fd, &one, sizeof(one)) < 0) {
			/* The eventfd counter cannot overflow at one write per wake-up; nothing to do. */
		}
	}
out:
	errno = saved_errno;
}

static void find_agct(const void *jvm_code)
{
	Dl_info info;
	void *lib;

	hs.agct = (asgct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	/* A JVM embedded with RTLD_LOCAL: look in the library the JVMTI functions live in. */
	if (!hs.agct && jvm_code && dladdr(jvm_code, &info) && info.dli_fname) {
		lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (lib) {
			hs.agct = (asgct_fn)dlsym(lib, "AsyncGetCallTrace");
			/* The reference is kept: libjvm outlives us anyway. */
		}
	}
	hs.agct_looked_up = true;
}

/* Installs on_signal on the first free real-time signal in [SIGRTMIN+4, SIGRTMAX-4]. */
static int install(char *err, size_t err_size)
{
	int first = SIGRTMIN + 4, last = SIGRTMAX - 4;

	for (int signo = first; signo <= last; signo++) {
		struct sigaction old, sa;

		if (sigaction(signo, NULL, &old) || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(signo, &sa, NULL))
			continue;
		hs.signo = signo;
		return 0;
	}
	snprintf(err, err_size,
		 "no free real-time signal: SIGRTMIN+4 to SIGRTMAX-4 (%d to %d) all have handlers", first, last);
	return -1;
}

int handler__init(JavaVM *vm, const void *jvm_code, char *err, size_t err_size)
{
	if (hs.signo)
		return 0;
	hs.vm = vm;
	if (!hs.ring) {
		hs.ring = ring__create(HANDLER_RING_SLOTS);
		if (!hs.ring) {
			snprintf(err, err_size, "cannot map the trace ring (%zu KiB): %s",
				 (size_t)HANDLER_RING_SLOTS * sizeof(struct ring_slot) / 1024, strerror(errno));
			return -1;
		}
	}
	if (hs.wake_fd < 0) {
		hs.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (hs.wake_fd < 0) {
			snprintf(err, err_size, "cannot create an eventfd: %s", strerror(errno));
			return -1;
		}
	}
	if (!hs.agct_looked_up)
		find_agct(jvm_code);
	return install(err, err_size);
}

int handler__signo(void)
{
	return hs.signo;
}

struct ring *handler__ring(void)
{
	return hs.ring;
}

void handler__enable(uint32_t session, bool accept_sigqueue)
{
	atomic_store(&hs.signals, 0);
	atomic_store(&hs.traces, 0);
	atomic_store(&hs.ring_full, 0);
	atomic_store(&hs.foreign, 0);
	atomic_store(&hs.handler_ns, 0);
	atomic_store(&hs.wake_pending, false);
	atomic_store(&hs.accept_sigqueue, accept_sigqueue);
	atomic_store_explicit(&hs.session, session, memory_order_release);
}

void handler__disable(void)
{
	atomic_store_explicit(&hs.session, 0, memory_order_release);
	atomic_store(&hs.accept_sigqueue, false);
}

void handler__stats(struct handler_stats *out)
{
	out->signals = atomic_load(&hs.signals);
	out->traces = atomic_load(&hs.traces);
	out->ring_full = atomic_load(&hs.ring_full);
	out->foreign = atomic_load(&hs.foreign);
	out->handler_ns = atomic_load(&hs.handler_ns);
}

int handler__wake_fd(void)
{
	return hs.wake_fd;
}

void handler__woken(void)
{
	atomic_store_explicit(&hs.wake_pending, false, memory_order_relaxed);
}

void handler__set_agent_tid(pid_t tid)
{
	atomic_store_explicit(&hs.agent_tid, tid, memory_order_relaxed);
}
