/*
 * agent: the JVMTI entry points, JVMTI events and the recording's life
 * (contract in agent.h).
 *
 *   Agent_OnLoad    -agentpath:libjbpfagent.so[=OPTIONS]. Without
 *                   socket=PATH the agent lies dormant: it takes its JVMTI
 *                   environment, sets its callbacks and enables the one
 *                   event DataDumpRequest, which costs nothing until a
 *                   profiler posts it (wake.h); no other event, no signal
 *                   handler, no thread, no memory beyond the library. With
 *                   socket=PATH it records from VMInit.
 *   Agent_OnAttach  dynamic attach, once per recording; the library may
 *                   already be loaded (at start-up or by an earlier
 *                   recording): all state is static and reused.
 *   DataDumpRequest a profiler waking the agent loaded at start-up
 *                   (wake.h): the request file holds what Agent_OnAttach
 *                   would have been given, and the recording starts the
 *                   same way.
 *   Agent_OnUnload  the JVM is going: the handler stops taking signals.
 *
 * A recording starts (start_session) in this order: connect to the
 * profiler's socket, refuse if another recording is live, initialise what
 * is not yet, open the outbox with the HELLO, enable ClassLoad and
 * ClassPrepare, walk the loaded classes (GetClassMethods makes their
 * jmethodIDs), enable the code and thread events, replay existing code
 * with GenerateEvents, learn which threads are Java threads (javathread.h),
 * enable the handler, hand the socket to the agent
 * thread. Nothing here writes to the socket but a failure's ERROR message:
 * the profiler reads nothing before the attach reply, and the socket
 * buffer easily takes one small message, so that write cannot block.
 *
 * Initialisation done once and never undone: the JVMTI environment and
 * its event callbacks (at load or attach), then, at the first recording,
 * its capability (can_generate_compiled_method_load_events, which HotSpot
 * grants in the live phase too, so a dormant agent need not hold it), the
 * outbox's method set, the ring and the signal handler. The
 * library is linked with -z nodelete, because HotSpot dlcloses an agent
 * whose Agent_OnAttach fails, and our handler and thread must stay mapped.
 *
 * Return codes of Agent_OnLoad/Agent_OnAttach besides JNI_OK: enum below.
 * The attach client shows only the number; the reason goes to the
 * profiler as an ERROR whenever its socket could be reached.
 */
#include "agent.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "emit.h"
#include "handler.h"
#include "alloc.h"
#include "javathread.h"
#include "options.h"
#include "outbox.h"
#include "stream.h"
#include "wake.h"

enum agent_status {
	AGENT_EOPTIONS = 2, /* malformed options, or no socket */
	AGENT_ECONNECT = 3, /* the profiler's socket cannot be reached or is not trusted */
	AGENT_EBUSY = 4,    /* another recording is live */
	AGENT_EINIT = 5,    /* JVMTI, signal, memory or thread set-up failed */
	AGENT_ENOTLIVE = JBPF_AGENT_NOT_LIVE, /* the JVM is still starting: try again */
};

/* How long an attach waits for a recording whose profiler has gone to be wound up. */
#define AGENT_END_WAIT_MS 2000

#define ERR_SIZE 512

/* Events a recording enables; all are disabled when it ends. */
static const jvmtiEvent class_events[] = { JVMTI_EVENT_CLASS_LOAD, JVMTI_EVENT_CLASS_PREPARE };
static const jvmtiEvent code_events[] = {
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
	JVMTI_EVENT_THREAD_START,
};
/* Only with the nmethods option: see options.h for why. */
static const jvmtiEvent nmethod_events[] = {
	JVMTI_EVENT_COMPILED_METHOD_LOAD,
	JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
};
#define N_EVENTS(a) (sizeof(a) / sizeof((a)[0]))

static struct {
	pthread_mutex_t lock;   /* recording start and end, and every field below */
	pthread_cond_t ended;   /* broadcast when a recording ends; CLOCK_MONOTONIC */
	pthread_once_t once;    /* initialises `ended` */
	JavaVM *vm;
	jvmtiEnv *jvmti;
	bool env_ready;         /* environment taken, callbacks set */
	bool jvmti_ready;       /* and capability added, outbox allocated */
	uint32_t session;       /* the live recording, 0 when none */
	uint32_t last_session;
	int live_fd;            /* its socket, owned by the agent thread */
	struct agent_options startup; /* Agent_OnLoad's options, for VMInit */
} ag = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT, .live_fd = -1 };

static void init_cond(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&ag.ended, &attr);
	pthread_condattr_destroy(&attr);
}

/* "what failed: JVMTI_ERROR_X" into err. */
static void jvmti_failed(char *err, size_t err_size, const char *what, jvmtiError e)
{
	char *name = NULL;

	if (ag.jvmti && (*ag.jvmti)->GetErrorName(ag.jvmti, e, &name) == JVMTI_ERROR_NONE && name) {
		snprintf(err, err_size, "%s failed: %s", what, name);
		(*ag.jvmti)->Deallocate(ag.jvmti, (unsigned char *)name);
	} else {
		snprintf(err, err_size, "%s failed: JVMTI error %d", what, (int)e);
	}
}

static JNIEnv *current_jni(void)
{
	JNIEnv *jni = NULL;

	if (!ag.vm || (*ag.vm)->GetEnv(ag.vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return jni;
}

/* ---- JVMTI callbacks: on JVM threads; they queue messages and return. ---- */

static void make_method_ids(jvmtiEnv *jvmti, jclass klass)
{
	jint count = 0;
	jmethodID *methods = NULL;

	/* A class not prepared yet has no methods to list; its ClassPrepare will come. */
	if ((*jvmti)->GetClassMethods(jvmti, klass, &count, &methods) == JVMTI_ERROR_NONE && methods)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

/* AsyncGetCallTrace returns no frames unless ClassLoad events are enabled; nothing to do in them. */
static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
	make_method_ids(jvmti, klass);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jvmtiThreadInfo info;

	/* Before this thread runs Java: the handler must know its class by then. */
	javathread__learn_current(jni);
	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return;
	emit__thread((uint32_t)gettid(), info.name);
	if (info.name)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
	if (info.thread_group)
		(*jni)->DeleteLocalRef(jni, info.thread_group);
	if (info.context_class_loader)
		(*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length, const jvmtiAddrLocationMap *map,
					    const void *compile_info)
{
	emit__nmethod_load(jvmti, current_jni(), method, code_addr, code_size);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	emit__code_unload(method, code_addr);
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name, const void *address,
					      jint length)
{
	emit__stub_load(name, address, length);
}

static int start_session(JNIEnv *jni, const struct agent_options *opts, char *err, size_t err_size);

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	char err[ERR_SIZE];

	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_VM_INIT, NULL);
	/* Start-up, not an attach: nobody else would hear of the failure. */
	if (start_session(jni, &ag.startup, err, sizeof(err)))
		fprintf(stderr, "jbpfagent: not recording: %s\n", err);
}

/* ---- set-up, once ---- */

static void JNICALL on_data_dump_request(jvmtiEnv *jvmti);

/*
 * The JVMTI environment and its callbacks: all a dormant agent holds.
 * Called with ag.lock held. -1, or AGENT_ENOTLIVE before the JVM's live
 * phase.
 */
static int init_env(char *err, size_t err_size)
{
	jvmtiEventCallbacks callbacks;
	jvmtiError e;
	jint r;

	if (ag.env_ready)
		return 0;
	if (!ag.jvmti) {
		r = (*ag.vm)->GetEnv(ag.vm, (void **)&ag.jvmti, JVMTI_VERSION_1_2);
		if (r != JNI_OK || !ag.jvmti) {
			ag.jvmti = NULL;
			if (r == JNI_EDETACHED) {
				snprintf(err, err_size, "the JVM is still starting (no JVMTI environment before its live phase)");
				return AGENT_ENOTLIVE;
			}
			snprintf(err, err_size, "this JVM offers no JVMTI 1.2 environment (GetEnv returned %d)",
				 (int)r);
			return -1;
		}
	}
	memset(&callbacks, 0, sizeof(callbacks));
	callbacks.VMInit = on_vm_init;
	callbacks.ClassLoad = on_class_load;
	callbacks.ClassPrepare = on_class_prepare;
	callbacks.ThreadStart = on_thread_start;
	callbacks.CompiledMethodLoad = on_compiled_method_load;
	callbacks.CompiledMethodUnload = on_compiled_method_unload;
	callbacks.DynamicCodeGenerated = on_dynamic_code_generated;
	callbacks.DataDumpRequest = on_data_dump_request;
	callbacks.SampledObjectAlloc = alloc__on_sampled;
	e = (*ag.jvmti)->SetEventCallbacks(ag.jvmti, &callbacks, (jint)sizeof(callbacks));
	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "SetEventCallbacks", e);
		return -1;
	}
	ag.env_ready = true;
	return 0;
}

/*
 * The environment, its capability, the outbox: what a recording needs.
 * Called with ag.lock held. -1, or AGENT_ENOTLIVE (init_env).
 */
static int init_jvmti(char *err, size_t err_size)
{
	jvmtiCapabilities potential, caps;
	jvmtiError e;
	int r;

	if (ag.jvmti_ready)
		return 0;
	r = init_env(err, err_size);
	if (r)
		return r;
	memset(&potential, 0, sizeof(potential));
	e = (*ag.jvmti)->GetPotentialCapabilities(ag.jvmti, &potential);
	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "GetPotentialCapabilities", e);
		return -1;
	}
	if (!potential.can_generate_compiled_method_load_events) {
		snprintf(err, err_size,
			 "this JVM cannot report compiled methods (can_generate_compiled_method_load_events)");
		return -1;
	}
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	e = (*ag.jvmti)->AddCapabilities(ag.jvmti, &caps);
	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "AddCapabilities(can_generate_compiled_method_load_events)", e);
		return -1;
	}
	if (outbox__init()) {
		snprintf(err, err_size, "cannot allocate the method set (%u entries)",
			 1u << OUTBOX_METHODSET_LOG2);
		return -1;
	}
	ag.jvmti_ready = true;
	return 0;
}

/* Any address inside libjvm, to find its symbols if the JVM was not loaded globally. */
static const void *jvm_code(void)
{
	return (const void *)(uintptr_t)(*ag.jvmti)->GetErrorName;
}

static int init_all(char *err, size_t err_size)
{
	int r = init_jvmti(err, err_size);

	if (r)
		return r;
	return handler__init(jvm_code(), err, err_size);
}

static int set_events(jvmtiEventMode mode, const jvmtiEvent *events, size_t n, char *err, size_t err_size)
{
	for (size_t i = 0; i < n; i++) {
		jvmtiError e = (*ag.jvmti)->SetEventNotificationMode(ag.jvmti, mode, events[i], NULL);

		if (e != JVMTI_ERROR_NONE && mode == JVMTI_ENABLE) {
			char what[64];

			snprintf(what, sizeof(what), "enabling JVMTI event %d", (int)events[i]);
			jvmti_failed(err, err_size, what, e);
			return -1;
		}
	}
	return 0;
}

static void disable_all_events(void)
{
	alloc__stop(ag.jvmti);
	set_events(JVMTI_DISABLE, code_events, N_EVENTS(code_events), NULL, 0);
	set_events(JVMTI_DISABLE, nmethod_events, N_EVENTS(nmethod_events), NULL, 0);
	set_events(JVMTI_DISABLE, class_events, N_EVENTS(class_events), NULL, 0);
}

/* Makes the jmethodIDs of every loaded class, so AsyncGetCallTrace can name their frames. */
static int walk_loaded_classes(JNIEnv *jni, char *err, size_t err_size)
{
	jint count = 0;
	jclass *classes = NULL;
	jvmtiError e = (*ag.jvmti)->GetLoadedClasses(ag.jvmti, &count, &classes);

	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "GetLoadedClasses", e);
		return -1;
	}
	for (jint i = 0; i < count; i++) {
		make_method_ids(ag.jvmti, classes[i]);
		(*jni)->DeleteLocalRef(jni, classes[i]);
	}
	if (classes)
		(*ag.jvmti)->Deallocate(ag.jvmti, (unsigned char *)classes);
	return 0;
}

static int replay_code(bool nmethods, char *err, size_t err_size)
{
	jvmtiError e = (*ag.jvmti)->GenerateEvents(ag.jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);

	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "GenerateEvents(DYNAMIC_CODE_GENERATED)", e);
		return -1;
	}
	if (!nmethods)
		return 0;
	e = (*ag.jvmti)->GenerateEvents(ag.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	if (e != JVMTI_ERROR_NONE) {
		jvmti_failed(err, err_size, "GenerateEvents(COMPILED_METHOD_LOAD)", e);
		return -1;
	}
	return 0;
}

/* ---- the profiler's socket ---- */

/*
 * A non-blocking connection to path. The peer must be root or this
 * process's own user: the stream carries the JVM's code and stacks.
 */
static int connect_to(const char *path, char *err, size_t err_size)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred peer;
	socklen_t len = sizeof(peer);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0) {
		snprintf(err, err_size, "cannot create a Unix socket: %s", strerror(errno));
		return -1;
	}
	memcpy(addr.sun_path, path, strnlen(path, sizeof(addr.sun_path) - 1));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		snprintf(err, err_size, "cannot connect to the profiler's socket %.200s: %s", path,
			 errno == EAGAIN ? "it accepts no more connections" : strerror(errno));
		close(fd);
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) ||
	    (peer.uid != 0 && peer.uid != geteuid())) {
		snprintf(err, err_size,
			 "the socket %.200s belongs to neither root nor this JVM's user; not sending to it", path);
		close(fd);
		return -1;
	}
	return fd;
}

/* The one write to the socket outside the agent thread: nothing else was written, so it cannot block. */
static void send_error(int fd, const char *reason)
{
	char buf[EMIT_ERROR_MAX];
	size_t len = emit__error(buf, reason);

	if (send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* The profiler is gone too; the return code still tells the attach client. */
	}
}

/* Whether the live recording's profiler has closed its end. Called with ag.lock held. */
static bool live_peer_gone(void)
{
	struct pollfd p = { .fd = ag.live_fd, .events = POLLIN | POLLRDHUP };

	return ag.live_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/*
 * Returns 0 when no recording is live. A profiler that was killed just
 * before a new one attaches leaves a recording the agent thread has not
 * wound up yet: wait for it, a little. Called with ag.lock held.
 */
static int wait_until_idle(void)
{
	struct timespec deadline;

	if (!ag.session || !live_peer_gone())
		return ag.session ? -1 : 0;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += AGENT_END_WAIT_MS / 1000;
	deadline.tv_nsec += (AGENT_END_WAIT_MS % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	while (ag.session)
		if (pthread_cond_timedwait(&ag.ended, &ag.lock, &deadline) == ETIMEDOUT)
			break;
	return ag.session ? -1 : 0;
}

/* ---- a recording ---- */

static void vm_version(char *out, size_t size)
{
	char *value = NULL;

	out[0] = '\0';
	if ((*ag.jvmti)->GetSystemProperty(ag.jvmti, "java.vm.version", &value) == JVMTI_ERROR_NONE &&
	    value) {
		snprintf(out, size, "%s", value);
		(*ag.jvmti)->Deallocate(ag.jvmti, (unsigned char *)value);
	}
}

/* Starts a recording on opts->socket. 0, or an agent_status with the reason in err. */
static int start_session(JNIEnv *jni, const struct agent_options *opts, char *err, size_t err_size)
{
	char hello[EMIT_HELLO_SIZE], version[64];
	uint32_t session;
	int fd, status;

	if (!opts->socket[0]) {
		snprintf(err, err_size, "no socket=PATH option: the agent needs the profiler's socket");
		return AGENT_EOPTIONS;
	}
	fd = connect_to(opts->socket, err, err_size);
	if (fd < 0)
		return AGENT_ECONNECT;
	pthread_once(&ag.once, init_cond);
	pthread_mutex_lock(&ag.lock);
	if (wait_until_idle()) {
		snprintf(err, err_size, "another jbpfprof session is attached to this JVM");
		status = AGENT_EBUSY;
		goto fail;
	}
	status = init_all(err, err_size);
	if (status) {
		status = status == AGENT_ENOTLIVE ? AGENT_ENOTLIVE : AGENT_EINIT;
		goto fail;
	}
	status = AGENT_EINIT;
	session = ++ag.last_session ? ag.last_session : ++ag.last_session;
	vm_version(version, sizeof(version));
	if (outbox__open(hello, emit__hello(hello, (uint32_t)handler__signo(), version))) {
		snprintf(err, err_size, "out of memory for the send queue");
		goto fail;
	}
	if (set_events(JVMTI_ENABLE, class_events, N_EVENTS(class_events), err, err_size) ||
	    walk_loaded_classes(jni, err, err_size) ||
	    set_events(JVMTI_ENABLE, code_events, N_EVENTS(code_events), err, err_size) ||
	    (opts->nmethods && set_events(JVMTI_ENABLE, nmethod_events, N_EVENTS(nmethod_events), err, err_size)) ||
	    replay_code(opts->nmethods, err, err_size) ||
	    /* After ThreadStart is on: a thread started since is learned one way or the other. */
	    javathread__init(ag.jvmti, jni, jvm_code(), err, err_size) ||
	    (opts->alloc_interval && alloc__start(ag.jvmti, opts->alloc_interval, err, err_size)))
		goto fail_events;
	/* Counters reset before the agent thread can report them. */
	handler__enable(session, opts->sigqueue);
	if (channel__serve(ag.jvmti, jni, fd, session, err, err_size)) {
		handler__disable();
		goto fail_events;
	}
	/* The agent thread owns fd now; if it ends the recording at once, it waits for ag.lock. */
	ag.session = session;
	ag.live_fd = fd;
	pthread_mutex_unlock(&ag.lock);
	return 0;

fail_events:
	disable_all_events();
	outbox__close();
fail:
	send_error(fd, err);
	close(fd);
	pthread_mutex_unlock(&ag.lock);
	return status;
}

void agent__end_session(jvmtiEnv *jvmti, int fd)
{
	pthread_mutex_lock(&ag.lock);
	handler__disable();
	disable_all_events();
	outbox__close();
	close(fd);
	ag.session = 0;
	ag.live_fd = -1;
	pthread_cond_broadcast(&ag.ended);
	pthread_mutex_unlock(&ag.lock);
}

/* ---- entry points ---- */

/*
 * Starts a recording from an option string, as an attach or a wake-up
 * gives it: 0, or an agent_status. Failures go to the profiler as an ERROR
 * whenever its socket can be reached.
 */
static int start_from_options(const char *text, char *err, size_t err_size)
{
	struct agent_options opts;
	char ignored[ERR_SIZE];
	JNIEnv *jni;

	if (options__parse(text, &opts, err, err_size)) {
		int fd = opts.socket[0] ? connect_to(opts.socket, ignored, sizeof(ignored)) : -1;

		if (fd >= 0) {
			send_error(fd, err);
			close(fd);
		}
		return AGENT_EOPTIONS;
	}
	jni = current_jni();
	if (!jni) {
		int fd = connect_to(opts.socket, ignored, sizeof(ignored));

		snprintf(err, err_size, "the attaching thread has no JNIEnv");
		if (fd >= 0) {
			send_error(fd, err);
			close(fd);
		}
		return AGENT_EINIT;
	}
	return start_session(jni, &opts, err, err_size);
}

/*
 * A profiler waking the dormant agent (wake.h), or any other data dump
 * request (SIGQUIT, the attach "datadump" command): without a request
 * file there is nothing to do. Runs on the thread that posted it, a Java
 * thread (the attach listener, or the signal dispatcher).
 */
static void JNICALL on_data_dump_request(jvmtiEnv *jvmti)
{
	char text[WAKE_REQUEST_MAX + 1], err[ERR_SIZE];
	int rc = wake__read_request(text, sizeof(text), err, sizeof(err));

	if (rc == 1)
		return;
	/* The request names no socket that can be trusted: its profiler learns of it by a timeout. */
	if (rc < 0) {
		fprintf(stderr, "jbpfagent: not recording: %s\n", err);
		return;
	}
	start_from_options(text, err, sizeof(err));
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	static const jvmtiEvent wake_event[] = { JVMTI_EVENT_DATA_DUMP_REQUEST };
	static const jvmtiEvent vm_init_event[] = { JVMTI_EVENT_VM_INIT };
	char err[ERR_SIZE], ignored[ERR_SIZE];
	int status = JNI_OK;

	pthread_mutex_lock(&ag.lock);
	ag.vm = vm;
	if (options__parse(options, &ag.startup, err, sizeof(err))) {
		status = AGENT_EOPTIONS;
	} else if (init_env(err, sizeof(err)) ||
		   set_events(JVMTI_ENABLE, wake_event, N_EVENTS(wake_event), err, sizeof(err)) ||
		   (ag.startup.socket[0] && set_events(JVMTI_ENABLE, vm_init_event, 1, err, sizeof(err)))) {
		status = AGENT_EINIT;
	} else if (ag.startup.socket[0]) {
		/*
		 * Recording from VMInit: the signal is chosen now, before the
		 * application can take them all; a failure is reported when the
		 * recording starts. A dormant agent takes none until woken.
		 */
		handler__init(jvm_code(), ignored, sizeof(ignored));
	}
	pthread_mutex_unlock(&ag.lock);
	/* The user asked for the agent on the command line: say why the JVM will not start. */
	if (status != JNI_OK)
		fprintf(stderr, "jbpfagent: %s\n", err);
	return status;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	char err[ERR_SIZE];

	pthread_mutex_lock(&ag.lock);
	if (!ag.vm)
		ag.vm = vm;
	pthread_mutex_unlock(&ag.lock);
	return start_from_options(options, err, sizeof(err));
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	/* The handler stays installed: the process may still get a signal the BPF program queued. */
	handler__disable();
}
