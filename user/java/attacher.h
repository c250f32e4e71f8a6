/*
 * attacher: one thread that runs the blocking part of agent attaches, so
 * that a JVM that is hung, stopped or slow to answer never holds up the
 * recording loop (an attach may wait up to its 10 s timeout, and then
 * some, on such a JVM).
 *
 * The session thread submits jobs into a bounded queue and takes them
 * back, done, from a second one; attacher__fd polls readable while a done
 * job waits. A job is an opaque pointer run by the function given to
 * attacher__new, on the worker thread.
 *
 * Ownership: a job belongs to the caller until attacher__submit accepts
 * it, then to the attacher (the worker runs it, touching nothing but the
 * job) until attacher__take hands it back. The run function must touch
 * nothing shared with the session thread; anything it needs is copied into
 * the job before submitting, anything it makes is in the job when it is
 * taken back.
 *
 * Cancellation: attacher__cancel_fd is an eventfd that polls readable once
 * attacher__free started; the run function polls it beside every wait so
 * that it gives up at once, undoing what it started. attacher__free then
 * joins the thread and hands every job still held (queued, running or
 * done) to the discard function, on the calling thread.
 *
 * All functions are for the session thread only (one thread), except
 * attacher__cancel_fd, which the worker reads.
 */
#ifndef JBPF_ATTACHER_H
#define JBPF_ATTACHER_H

#include <stddef.h>

struct attacher;

/* Runs one job on the worker thread; cancel_fd as attacher__cancel_fd. */
typedef void (*attacher_run_fn)(void *job, int cancel_fd);
/* Frees a job never taken back (attacher__free), undoing what it holds. */
typedef void (*attacher_discard_fn)(void *job);

/*
 * Starts the worker. capacity bounds the jobs held at once (queued,
 * running and done). NULL on failure (errno set).
 */
struct attacher *attacher__new(size_t capacity, attacher_run_fn run, attacher_discard_fn discard);

/*
 * Hands job to the worker. 0, or -EAGAIN when capacity jobs are held
 * already (the job stays the caller's: try again later).
 */
int attacher__submit(struct attacher *a, void *job);

/* A done job, back to the caller, oldest first; NULL when none is done. Never blocks. */
void *attacher__take(struct attacher *a);

/* Jobs held: queued, running or done and not yet taken. */
size_t attacher__held(const struct attacher *a);

/* Polls readable while a done job waits to be taken. */
int attacher__fd(const struct attacher *a);

/*
 * Tells the worker to give up, waits for it to end, and discards every
 * job not taken back. NULL-safe.
 */
void attacher__free(struct attacher *a);

#endif /* JBPF_ATTACHER_H */
