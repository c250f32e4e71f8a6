/*
 * attacher: the attach worker thread (contract in attacher.h).
 *
 * One ring of capacity job pointers, in submission order: the done ones
 * at its head, then the running one, then the queued ones. The mutex
 * guards the ring and the counts; the worker sleeps on the condition
 * variable while nothing is queued. done_fd (an eventfd) counts done jobs
 * not taken, so the session's poll wakes for them; cancel_fd, once
 * written, stays readable and wakes the worker's waits.
 */
#include "attacher.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct attacher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	attacher_run_fn run;
	attacher_discard_fn discard;
	void **ring;
	size_t capacity;
	size_t head;          /* the oldest job held */
	size_t nr_done;       /* jobs from head on that are done */
	size_t nr_held;       /* done + running + queued */
	bool running;         /* the job after the done ones is being run */
	bool stop;
	int done_fd, cancel_fd;
};

static void *worker(void *arg)
{
	struct attacher *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		void *job;
		uint64_t one = 1;

		while (!a->stop && a->nr_held == a->nr_done)
			pthread_cond_wait(&a->wake, &a->lock);
		if (a->stop)
			break;
		job = a->ring[(a->head + a->nr_done) % a->capacity];
		a->running = true;
		pthread_mutex_unlock(&a->lock);
		a->run(job, a->cancel_fd);
		pthread_mutex_lock(&a->lock);
		a->running = false;
		a->nr_done++;
		if (write(a->done_fd, &one, sizeof(one)) != sizeof(one)) {
			/* An eventfd counter cannot overflow with capacity jobs; the next poll still sees it. */
		}
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

struct attacher *attacher__new(size_t capacity, attacher_run_fn run, attacher_discard_fn discard)
{
	struct attacher *a = calloc(1, sizeof(*a));
	int error;

	if (!a)
		return NULL;
	a->ring = calloc(capacity ? capacity : 1, sizeof(*a->ring));
	a->capacity = capacity ? capacity : 1;
	a->run = run;
	a->discard = discard;
	a->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!a->ring || a->done_fd < 0 || a->cancel_fd < 0)
		goto fail;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->wake, NULL);
	error = pthread_create(&a->thread, NULL, worker, a);
	if (error) {
		pthread_cond_destroy(&a->wake);
		pthread_mutex_destroy(&a->lock);
		errno = error;
		goto fail;
	}
	return a;
fail:
	if (a->done_fd >= 0)
		close(a->done_fd);
	if (a->cancel_fd >= 0)
		close(a->cancel_fd);
	free(a->ring);
	free(a);
	return NULL;
}

int attacher__submit(struct attacher *a, void *job)
{
	int rc = 0;

	pthread_mutex_lock(&a->lock);
	if (a->nr_held == a->capacity) {
		rc = -EAGAIN;
	} else {
		a->ring[(a->head + a->nr_held++) % a->capacity] = job;
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}

void *attacher__take(struct attacher *a)
{
	void *job = NULL;
	uint64_t count;

	pthread_mutex_lock(&a->lock);
	if (a->nr_done) {
		job = a->ring[a->head];
		a->head = (a->head + 1) % a->capacity;
		a->nr_done--;
		a->nr_held--;
		/* Read the counter to zero, and put back what is still waiting, so the fd polls readable as long. */
		if (read(a->done_fd, &count, sizeof(count)) == sizeof(count) && a->nr_done) {
			count = a->nr_done;
			if (write(a->done_fd, &count, sizeof(count)) != sizeof(count)) {
				/* Cannot fail below the counter's maximum. */
			}
		}
	}
	pthread_mutex_unlock(&a->lock);
	return job;
}

size_t attacher__held(const struct attacher *a)
{
	size_t n;

	pthread_mutex_lock((pthread_mutex_t *)&a->lock);
	n = a->nr_held;
	pthread_mutex_unlock((pthread_mutex_t *)&a->lock);
	return n;
}

int attacher__fd(const struct attacher *a)
{
	return a->done_fd;
}

void attacher__free(struct attacher *a)
{
	uint64_t one = 1;

	if (!a)
		return;
	/* The running job sees cancel_fd readable in its next wait, and gives up. */
	if (write(a->cancel_fd, &one, sizeof(one)) != sizeof(one)) {
		/* A fresh eventfd takes a write of 1. */
	}
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	for (size_t i = 0; i < a->nr_held; i++)
		a->discard(a->ring[(a->head + i) % a->capacity]);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->lock);
	close(a->done_fd);
	close(a->cancel_fd);
	free(a->ring);
	free(a);
}
