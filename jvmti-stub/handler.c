/*
 * handler: the profiling signal's handler, and the state it reads
 * (contract in handler.h).
 *
 * This file holds the code that runs in signal context, and nothing else
 * that calls out of it: the functions below the handler only load and
 * store atomics. `make check-handler` compiles it alone and fails if its
 * object calls any function outside this list, each async-signal-safe in
 * every state the interrupted thread can be in (newly created, exiting,
 * inside malloc, inside the dynamic linker, in a VM transition):
 *
 *   clock_gettime        the vDSO: reads the clock pages, no lock, no memory
 *   gettid               one system call
 *   write                one system call, to the eventfd (never blocks:
 *                        non-blocking, and one write per wake-up)
 *   pthread_getspecific  glibc: for a key below 32, one load from the
 *                        calling thread's own struct pthread (THREAD_SELF),
 *                        plus a sequence check; no lock, no allocation
 *   __errno_location     glibc's errno lives in libc's static TLS: no
 *                        allocation on any thread
 *   ring__claim, ring__publish, ring__used, ring__nr_slots
 *                        ring.c: loads, stores and compare-and-swap on the
 *                        mapped ring, bounded retries
 *   AsyncGetCallTrace    through a pointer; HotSpot's own entry for this
 *                        use. What it reaches is argued in
 *                        docs/architecture.md ("The signal handler").
 *   lastjava__begin(thread, &regs, &search, &anchor)
 *   lastjava__next(&search, &regs, &from_anchor_pc)
 *                        lastjava.c: loads from the calling thread's own
 *                        JavaThread (the `thread` current_env found) at
 *                        VMStructs offsets, and from its stack between the
 *                        interrupted sp and its base, bounds checked, at
 *                        most LASTJAVA_MAX_LINKS or LASTJAVA_MAX_SCAN words;
 *                        no calls (check-handler checks lastjava.o too)
 *   lastjava__top(thread, &at, &top, &from_anchor, &lo, &base)
 *                        lastjava.c: the same loads from the calling
 *                        thread's JavaThread (stack bounds, anchor); no calls
 *   codewalk__kinds(&top, from_anchor, lo, base, frames, n)
 *                        codewalk.c: loads from the stack in use [lo, base),
 *                        from the code heaps' committed memory and segment
 *                        maps (their ends read at each look-up), from the
 *                        trace's jmethodID slots (never freed), from the
 *                        PcDescs and scopes of nmethods live on this stack
 *                        (inside the blob, or its immutable data on JDK
 *                        25) and, on JDK 17, from libjvm's read-only
 *                        segments; at most CODEWALK_MAX_FRAMES frames,
 *                        CODEWALK_MAX_HOPS segment map steps a look-up and
 *                        CODEWALK_MAX_SCOPES scopes a frame; writes only the
 *                        slot's frame kinds; no calls (check-handler checks
 *                        codewalk.o too)
 *
 * Not on the list, on purpose: GetEnv or any JNI/JVMTI function (they read
 * libjvm's __thread variables, whose first access on a thread, or any
 * access after a later dlopen, can call malloc: the JVM hang this file was
 * rewritten for), and any __thread variable of our own (the agent has none;
 * check-handler also fails on a TLS relocation).
 *
 * The thread's JNIEnv comes from HotSpot's own pthread key and a vtable
 * check (current_env; why it is sound: javathread.h). Everything the
 * handler reads is written before it can need it: agct, ring and wake_fd
 * before the handler is installed; the key and offset before the first
 * recording enables it (java_threads_known, release/acquire); vtables are
 * appended and published by count. The recording it works for is one
 * atomic word, `session`, 0 when disabled. Each trace carries it, so the
 * agent thread can discard a trace that a handler started for an earlier
 * recording finished late.
 */
#include "handler.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "codewalk.h"
#include "lastjava.h"
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

/* AsyncGetCallTrace's codes for a top frame it could not find or walk from (see stream.h). */
#define AGCT_UNKNOWN_NOT_JAVA (-3)
#define AGCT_NOT_WALKABLE_JAVA (-6)
/* Places AsyncGetCallTrace is called from again, at most, after it gave up (lastjava.h). */
#define HANDLER_MAX_RETRIES 4

/* AsyncGetCallTrace writes straight into the ring's frames. */
_Static_assert(sizeof(ASGCT_CallFrame) == sizeof(struct ring_frame), "ring_frame must match ASGCT_CallFrame");
_Static_assert(offsetof(ASGCT_CallFrame, method_id) == offsetof(struct ring_frame, method_id),
	       "ring_frame must match ASGCT_CallFrame");

static struct {
	asgct_fn agct;        /* NULL: this JVM has none */
	struct ring *ring;
	int wake_fd;
	/* How to find the interrupted thread's JNIEnv (javathread.h). */
	pthread_key_t thread_key;
	ptrdiff_t env_offset;
	_Atomic bool java_threads_known;
	_Atomic uintptr_t java_vtables[HANDLER_MAX_JAVA_VTABLES];
	_Atomic unsigned nr_java_vtables;
	_Atomic uint32_t session;
	_Atomic bool accept_sigqueue;
	_Atomic bool wake_pending;
	_Atomic uint64_t signals, traces, ring_full, foreign, not_java, handler_ns;
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

/*
 * The JNIEnv of the calling thread if it is a JavaThread, else NULL, found
 * without calling into the JVM: HotSpot's key gives the live Thread object
 * of the calling thread (or NULL: not attached to the VM), its first word
 * is its class's vtable, and a JavaThread's JNIEnv is a member at
 * env_offset. *java_thread is then that JavaThread.
 */
static JNIEnv *current_env(const char **java_thread)
{
	const char *thread;
	uintptr_t vtable;
	unsigned n;

	if (!atomic_load_explicit(&hs.java_threads_known, memory_order_acquire))
		return NULL;
	thread = pthread_getspecific(hs.thread_key);
	if (!thread)
		return NULL;
	vtable = *(const volatile uintptr_t *)thread;
	n = atomic_load_explicit(&hs.nr_java_vtables, memory_order_acquire);
	for (unsigned i = 0; i < n && i < HANDLER_MAX_JAVA_VTABLES; i++)
		if (atomic_load_explicit(&hs.java_vtables[i], memory_order_relaxed) == vtable) {
			*java_thread = thread;
			return (JNIEnv *)(uintptr_t)(thread + hs.env_offset);
		}
	return NULL;
}

#if defined(__x86_64__)
static struct lastjava_regs context_regs(const ucontext_t *uc)
{
	return (struct lastjava_regs){ .pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
				       .sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
				       .fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP] };
}

static void set_context_regs(ucontext_t *uc, const struct lastjava_regs *r)
{
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)r->pc;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)r->sp;
	uc->uc_mcontext.gregs[REG_RBP] = (greg_t)r->fp;
}

static void set_anchor(const struct lastjava_anchor *a, const struct lastjava_regs *r)
{
	/* sp last, as HotSpot sets an anchor: whoever sees an sp sees the rest. */
	*(volatile uintptr_t *)a->pc = r->pc;
	*(volatile uintptr_t *)a->fp = r->fp;
	*(volatile uintptr_t *)a->sp = r->sp;
}

/*
 * AsyncGetCallTrace again where it gave up (lastjava.h), from each place
 * lastjava__next gives in turn, through the anchor or through the signal's
 * own context, put back as they were after each call. The first place that
 * gives frames wins; *how says which kind it was, *from what it was, and
 * *anchored whether it was given through the anchor.
 */
static void retry(ASGCT_CallTrace *trace, const char *thread, ucontext_t *uc, uint32_t *how,
		  struct lastjava_regs *from, bool *anchored)
{
	struct lastjava_regs at = context_regs(uc), place, saved = { 0 };
	struct lastjava_search search;
	struct lastjava_anchor anchor;
	bool anchor_pc;

	if (!lastjava__begin(thread, &at, &search, &anchor))
		return;
	if (search.anchored)
		saved = (struct lastjava_regs){ .pc = *anchor.pc, .sp = *anchor.sp, .fp = *anchor.fp };
	for (int i = 0; i < HANDLER_MAX_RETRIES && lastjava__next(&search, &place, &anchor_pc); i++) {
		if (search.anchored)
			set_anchor(&anchor, &place);
		else
			set_context_regs(uc, &place);
		atomic_signal_fence(memory_order_seq_cst);
		hs.agct(trace, RING_MAX_FRAMES, uc);
		atomic_signal_fence(memory_order_seq_cst);
		if (search.anchored)
			set_anchor(&anchor, &saved);
		else
			set_context_regs(uc, &at);
		if (trace->num_frames > 0) {
			*how = anchor_pc ? JBPF_TRACE_FROM_ANCHOR : JBPF_TRACE_FROM_CALLER;
			*from = place;
			*anchored = search.anchored;
			return;
		}
	}
}

/*
 * The kinds of the trace's frames (codewalk.h), walked from where
 * AsyncGetCallTrace started: *from when a retry found the frames (through
 * the anchor when anchored), else where it starts from the signal's
 * context (lastjava__top).
 */
static void frame_kinds(struct ring_slot *slot, const char *thread, const ucontext_t *uc,
			const struct lastjava_regs *from, bool anchored)
{
	struct lastjava_regs at = context_regs(uc), top = { 0 };
	uintptr_t lo = 0, base = 0;
	bool from_anchor = false;
	int n = slot->num_frames < RING_MAX_FRAMES ? slot->num_frames : RING_MAX_FRAMES;

	if (lastjava__top(thread, &at, &top, &from_anchor, &lo, &base) && from) {
		top = *from;
		from_anchor = anchored;
	}
	codewalk__kinds(&top, from_anchor, lo, base, slot->frames, n);
}
#endif

/* The Java stack of the calling thread, a JavaThread, into slot, with its frames' kinds. */
static void walk(struct ring_slot *slot, JNIEnv *env, const char *thread, void *ucontext)
{
	ASGCT_CallTrace trace = { .env_id = env, .frames = (ASGCT_CallFrame *)slot->frames };

	hs.agct(&trace, RING_MAX_FRAMES, ucontext);
#if defined(__x86_64__)
	struct lastjava_regs from;
	bool retried = false, anchored = false;

	if (trace.num_frames <= AGCT_UNKNOWN_NOT_JAVA && trace.num_frames >= AGCT_NOT_WALKABLE_JAVA) {
		jint first = trace.num_frames;

		retry(&trace, thread, ucontext, &slot->how, &from, &anchored);
		retried = trace.num_frames > 0;
		/* Every retry failed too: the first reason is the one that says where the thread was. */
		if (trace.num_frames <= 0)
			trace.num_frames = first;
	}
	slot->num_frames = trace.num_frames;
	if (trace.num_frames > 0)
		frame_kinds(slot, thread, ucontext, retried ? &from : NULL, anchored);
#else
	slot->num_frames = trace.num_frames;
	for (jint i = 0; i < trace.num_frames && i < RING_MAX_FRAMES; i++)
		slot->frames[i].kind = 0;
#endif
}

void handler__on_signal(int signo, siginfo_t *info, void *ucontext)
{
	int saved_errno = errno;
	uint32_t session = atomic_load_explicit(&hs.session, memory_order_acquire);
	struct ring_slot *slot;
	struct timespec now, end;
	const char *thread = NULL;
	JNIEnv *env;

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
	slot->how = 0;
	env = current_env(&thread);
	if ((pid_t)slot->tid == atomic_load_explicit(&hs.agent_tid, memory_order_relaxed) || !env) {
		slot->num_frames = JBPF_TRACE_NOT_JAVA_THREAD;
		count(&hs.not_java);
	} else if (!hs.agct) {
		slot->num_frames = JBPF_TRACE_NO_AGCT;
	} else {
		walk(slot, env, thread, ucontext);
	}
	ring__publish(hs.ring, slot);
	count(&hs.traces);
	clock_gettime(CLOCK_MONOTONIC, &end);
	atomic_fetch_add_explicit(&hs.handler_ns,
				  (uint64_t)((end.tv_sec - now.tv_sec) * 1000000000ll + (end.tv_nsec - now.tv_nsec)),
				  memory_order_relaxed);
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

/* ---- outside signal context: atomics only (see the list above) ---- */

void handler__configure(void *agct, struct ring *ring, int wake_fd)
{
	hs.agct = (asgct_fn)(uintptr_t)agct;
	hs.ring = ring;
	hs.wake_fd = wake_fd;
}

void handler__set_java_threads(pthread_key_t key, ptrdiff_t env_offset)
{
	if (atomic_load(&hs.java_threads_known))
		return;
	hs.thread_key = key;
	hs.env_offset = env_offset;
	atomic_store_explicit(&hs.java_threads_known, true, memory_order_release);
}

bool handler__add_java_vtable(uintptr_t vtable)
{
	unsigned n = atomic_load_explicit(&hs.nr_java_vtables, memory_order_relaxed);

	for (unsigned i = 0; i < n; i++)
		if (atomic_load_explicit(&hs.java_vtables[i], memory_order_relaxed) == vtable)
			return true;
	if (n == HANDLER_MAX_JAVA_VTABLES)
		return false;
	atomic_store_explicit(&hs.java_vtables[n], vtable, memory_order_relaxed);
	atomic_store_explicit(&hs.nr_java_vtables, n + 1, memory_order_release);
	return true;
}

unsigned handler__nr_java_vtables(void)
{
	return atomic_load(&hs.nr_java_vtables);
}

void handler__enable(uint32_t session, bool accept_sigqueue)
{
	atomic_store(&hs.signals, 0);
	atomic_store(&hs.traces, 0);
	atomic_store(&hs.ring_full, 0);
	atomic_store(&hs.foreign, 0);
	atomic_store(&hs.not_java, 0);
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
	out->not_java = atomic_load(&hs.not_java);
	out->handler_ns = atomic_load(&hs.handler_ns);
}

void handler__woken(void)
{
	atomic_store_explicit(&hs.wake_pending, false, memory_order_relaxed);
}

void handler__set_agent_tid(pid_t tid)
{
	atomic_store_explicit(&hs.agent_tid, tid, memory_order_relaxed);
}
