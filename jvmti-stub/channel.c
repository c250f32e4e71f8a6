/*
 * channel: the agent thread and its socket loop (contract in channel.h).
 *
 * The thread owns, for the recording it serves: the socket, the outbox
 * chunks it has taken (`sending`, written in order before taking more), a
 * copy of the ring slot being named, and the emit scratch buffer (about
 * 280 KiB, allocated with the thread and kept).
 *
 * Hand-over: channel__serve puts (fd, session) in `next` under ch.lock and
 * signals; the thread, idle between recordings, waits on that condition in
 * native code, where it holds up no safepoint.
 */
#include "channel.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "alloc.h"
#include "emit.h"
#include "handler.h"
#include "outbox.h"
#include "threads.h"

#define MS 1000000ull

static struct {
	pthread_mutex_t lock;
	pthread_cond_t handed;
	bool started;               /* the agent thread runs */
	int next_fd;                /* a recording to serve, -1 when none */
	uint32_t next_session;
	struct emit_scratch *scratch;
	struct ring_slot *slot;     /* copy of the slot being sent */
} ch = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.handed = PTHREAD_COND_INITIALIZER,
	.next_fd = -1,
};

/* What ends a recording. All end it the same way; the JVM's stderr is not ours to report on. */
enum end_reason { RUNNING, PEER_CLOSED, SOCKET_ERROR, STALLED };

struct serving {
	int fd;
	uint32_t session;
	struct outbox_chunk *sending; /* taken from the outbox, oldest first */
	size_t offset;                /* bytes of sending already written */
	uint64_t stalled_since;       /* when a write last found the socket full; 0: not stalled */
	unsigned int flushes;         /* 'F' requests not answered yet */
	uint64_t flush_deadline;
	uint64_t next_stats;
	bool stacks_wanted;           /* a 'W' request not taken yet */
	struct threads_stacks *stacks; /* taken, not all queued yet */
};

static void queue_stats(void)
{
	struct handler_stats h;
	struct jbpf_msg_stats s;
	uint64_t allocs, allocs_lost;

	handler__stats(&h);
	alloc__counts(&allocs, &allocs_lost);
	s = (struct jbpf_msg_stats){
		.signals = h.signals,
		.traces = h.traces,
		.ring_full = h.ring_full,
		.foreign = h.foreign,
		.events_lost = outbox__events_lost(),
		.handler_ns = h.handler_ns,
		.allocs = allocs,
		.allocs_lost = allocs_lost,
	};
	emit__stats(&s);
}

/* Moves ring slots into the outbox while it has room; discards traces of earlier recordings. */
static void drain_ring(jvmtiEnv *jvmti, JNIEnv *jni, uint32_t session)
{
	struct ring *ring = handler__ring();
	struct ring_slot *slot, *copy = ch.slot;

	while (outbox__bytes() < OUTBOX_LIMIT && (slot = ring__peek(ring))) {
		bool ours = slot->session == session;

		if (ours) {
			int n = slot->num_frames > RING_MAX_FRAMES ? RING_MAX_FRAMES : slot->num_frames;

			copy->seq = slot->seq;
			copy->time_ns = slot->time_ns;
			copy->session = slot->session;
			copy->tid = slot->tid;
			copy->num_frames = slot->num_frames;
			copy->how = slot->how;
			for (int i = 0; i < n; i++)
				copy->frames[i] = slot->frames[i];
		}
		/* Free the slot before naming methods, which can take a while. */
		ring__pop(ring);
		if (ours)
			emit__trace(jvmti, jni, copy, ch.scratch);
	}
}

/* Writes what it can without blocking. */
static enum end_reason write_out(struct serving *s, uint64_t now)
{
	for (;;) {
		struct outbox_chunk *c = s->sending;
		ssize_t n;

		if (!c) {
			c = s->sending = outbox__take();
			s->offset = 0;
			if (!c) {
				s->stalled_since = 0;
				return RUNNING;
			}
		}
		if (s->offset == c->len) {
			s->sending = c->next;
			s->offset = 0;
			outbox__done(c);
			continue;
		}
		n = send(s->fd, c->data + s->offset, c->len - s->offset, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			s->offset += (size_t)n;
			s->stalled_since = 0;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!s->stalled_since)
				s->stalled_since = now;
			return RUNNING;
		}
		return SOCKET_ERROR;
	}
}

/* Reads the profiler's requests. */
static enum end_reason read_requests(struct serving *s, uint64_t now)
{
	char buf[64];
	ssize_t n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n == 0)
		return PEER_CLOSED;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? RUNNING : SOCKET_ERROR;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == JBPF_REQ_FLUSH && s->flushes < 1000) {
			if (!s->flushes)
				s->flush_deadline = now + CHANNEL_FLUSH_WAIT_MS * MS;
			s->flushes++;
		}
		/* Requests while one is being sent are one request: the stacks are taken once. */
		if (buf[i] == JBPF_REQ_THREAD_STACKS && !s->stacks)
			s->stacks_wanted = true;
	}
	/* Other bytes are not requests this version knows; they are ignored. */
	return RUNNING;
}

/*
 * How long the next poll may sleep. The eventfd and the socket end it
 * sooner for everything else; the timers are for what nothing signals: a
 * flush waiting for a handler still mid-way, stacks left for a later
 * turn when the outbox filled, the STATS every second, and traces fewer
 * than half the ring.
 */
static int poll_timeout_ms(const struct serving *s, uint64_t now)
{
	uint64_t idle = CHANNEL_IDLE_MS;

	if (s->flushes || s->stacks_wanted || s->stacks)
		return CHANNEL_TICK_MS;
	if (s->next_stats <= now)
		return 0;
	if ((s->next_stats - now) / MS < idle)
		idle = (s->next_stats - now + MS - 1) / MS;
	return (int)idle;
}

static void serve(jvmtiEnv *jvmti, JNIEnv *jni, int fd, uint32_t session)
{
	struct serving s = {
		.fd = fd,
		.session = session,
		.next_stats = emit__now_ns() + CHANNEL_STATS_INTERVAL_MS * MS,
	};
	enum end_reason end = RUNNING;
	struct pollfd fds[2];

	threads__announce(jvmti, jni);
	while (end == RUNNING) {
		uint64_t now = emit__now_ns();

		drain_ring(jvmti, jni, session);
		if (s.stacks_wanted) {
			s.stacks_wanted = false;
			s.stacks = threads__take_stacks(jvmti, jni);
		}
		if (s.stacks && threads__send_stacks(s.stacks, jvmti, jni, ch.scratch)) {
			threads__free_stacks(jvmti, s.stacks);
			s.stacks = NULL;
		}
		/*
		 * Answer a flush once every published trace is queued (not while a
		 * full outbox holds them in the ring), and no handler is mid-way;
		 * a slot a handler still fills after the deadline comes later.
		 * Thread stacks asked for before are all queued first.
		 */
		if (s.flushes && !s.stacks_wanted && !s.stacks && !ring__peek(handler__ring()) &&
		    (ring__idle(handler__ring()) || now >= s.flush_deadline)) {
			queue_stats();
			for (; s.flushes; s.flushes--)
				emit__flushed();
			s.next_stats = now + CHANNEL_STATS_INTERVAL_MS * MS;
		}
		if (now >= s.next_stats) {
			queue_stats();
			s.next_stats = now + CHANNEL_STATS_INTERVAL_MS * MS;
		}
		end = write_out(&s, now);
		if (end != RUNNING)
			break;
		if (s.stalled_since && now - s.stalled_since >= CHANNEL_STALL_S * 1000 * MS) {
			end = STALLED;
			break;
		}
		fds[0] = (struct pollfd){ .fd = fd, .events = POLLIN | (s.sending ? POLLOUT : 0) };
		fds[1] = (struct pollfd){ .fd = handler__wake_fd(), .events = POLLIN };
		if (poll(fds, 2, poll_timeout_ms(&s, now)) < 0 && errno != EINTR) {
			end = SOCKET_ERROR;
			break;
		}
		if (fds[1].revents & POLLIN) {
			uint64_t count;

			if (read(fds[1].fd, &count, sizeof(count)) < 0) {
				/* EAGAIN: another read took it; the flag below is what matters. */
			}
			handler__woken();
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
			end = read_requests(&s, now);
	}
	while (s.sending) {
		struct outbox_chunk *next = s.sending->next;

		outbox__done(s.sending);
		s.sending = next;
	}
	threads__free_stacks(jvmti, s.stacks);
}

static void JNICALL agent_thread(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	handler__set_agent_tid(gettid());
	for (;;) {
		int fd;
		uint32_t session;

		pthread_mutex_lock(&ch.lock);
		while (ch.next_fd < 0)
			pthread_cond_wait(&ch.handed, &ch.lock);
		fd = ch.next_fd;
		session = ch.next_session;
		ch.next_fd = -1;
		pthread_mutex_unlock(&ch.lock);

		serve(jvmti, jni, fd, session);
		agent__end_session(jvmti, fd);
	}
}

/* A java.lang.Thread named "jbpfprof agent" for RunAgentThread; NULL with err set. */
static jthread new_thread_object(JNIEnv *jni, char *err, size_t err_size)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = init ? (*jni)->NewStringUTF(jni, "jbpfprof agent") : NULL;
	jthread thread = name ? (*jni)->NewObject(jni, cls, init, name) : NULL;

	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		thread = NULL;
	}
	if (!thread)
		snprintf(err, err_size, "cannot create the agent's java.lang.Thread object through JNI");
	if (name)
		(*jni)->DeleteLocalRef(jni, name);
	if (cls)
		(*jni)->DeleteLocalRef(jni, cls);
	return thread;
}

static int start_thread(jvmtiEnv *jvmti, JNIEnv *jni, char *err, size_t err_size)
{
	jthread thread;
	jvmtiError e;

	if (!ch.scratch)
		ch.scratch = malloc(sizeof(*ch.scratch));
	if (!ch.slot)
		ch.slot = malloc(sizeof(*ch.slot));
	if (!ch.scratch || !ch.slot) {
		snprintf(err, err_size, "cannot allocate the agent thread's buffers (%zu KiB)",
			 (sizeof(*ch.scratch) + sizeof(*ch.slot)) / 1024);
		return -1;
	}
	thread = new_thread_object(jni, err, err_size);
	if (!thread)
		return -1;
	e = (*jvmti)->RunAgentThread(jvmti, thread, agent_thread, NULL, JVMTI_THREAD_NORM_PRIORITY);
	(*jni)->DeleteLocalRef(jni, thread);
	if (e != JVMTI_ERROR_NONE) {
		snprintf(err, err_size, "RunAgentThread failed: JVMTI error %d", (int)e);
		return -1;
	}
	return 0;
}

int channel__serve(jvmtiEnv *jvmti, JNIEnv *jni, int fd, uint32_t session, char *err, size_t err_size)
{
	int ret = 0;

	pthread_mutex_lock(&ch.lock);
	if (!ch.started) {
		ret = start_thread(jvmti, jni, err, err_size);
		ch.started = !ret;
	}
	if (!ret) {
		ch.next_fd = fd;
		ch.next_session = session;
		pthread_cond_signal(&ch.handed);
	}
	pthread_mutex_unlock(&ch.lock);
	return ret;
}
