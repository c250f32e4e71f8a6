/*
 * outbox: bounded send queue and named-method set (contract in outbox.h).
 *
 * The queue is a list of heap chunks. An append fills the last chunk if it
 * fits whole, else allocates one chunk of max(OUTBOX_CHUNK, len), so an
 * append needs at most one allocation and either happens entirely or not
 * at all. The agent thread takes the whole list at once and writes it
 * without the lock; `bytes` keeps counting those chunks until they are
 * done, so the limit covers everything in memory.
 */
#include "outbox.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "methodset.h"

static struct {
	pthread_mutex_t lock;
	bool open;                   /* a recording is on */
	struct outbox_chunk *head;   /* queued, oldest first */
	struct outbox_chunk *tail;
	size_t bytes;                /* data in queued and taken chunks */
	uint64_t events_lost;
	struct methodset *named;
} ob = { .lock = PTHREAD_MUTEX_INITIALIZER };

int outbox__init(void)
{
	struct methodset *set = methodset__new(OUTBOX_METHODSET_LOG2);

	if (!set)
		return -1;
	pthread_mutex_lock(&ob.lock);
	methodset__free(ob.named);
	ob.named = set;
	pthread_mutex_unlock(&ob.lock);
	return 0;
}

/* Frees the queued list. Called with the lock held. */
static void drop_queued(void)
{
	struct outbox_chunk *c = ob.head, *next;

	for (; c; c = next) {
		next = c->next;
		ob.bytes -= c->len;
		free(c);
	}
	ob.head = ob.tail = NULL;
}

/* Appends without checks but the allocation. Called with the lock held. */
static int push(const void *buf, size_t len)
{
	struct outbox_chunk *c = ob.tail;

	if (!c || c->cap - c->len < len) {
		size_t cap = len > OUTBOX_CHUNK ? len : OUTBOX_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -1;
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		if (ob.tail)
			ob.tail->next = c;
		else
			ob.head = c;
		ob.tail = c;
	}
	memcpy(c->data + c->len, buf, len);
	c->len += len;
	ob.bytes += len;
	return 0;
}

int outbox__open(const void *first, size_t len)
{
	bool opened;

	pthread_mutex_lock(&ob.lock);
	drop_queued();
	if (ob.named)
		methodset__clear(ob.named);
	ob.events_lost = 0;
	opened = ob.named && !push(first, len);
	ob.open = opened;
	pthread_mutex_unlock(&ob.lock);
	return opened ? 0 : -1;
}

void outbox__close(void)
{
	pthread_mutex_lock(&ob.lock);
	ob.open = false;
	drop_queued();
	if (ob.named)
		methodset__clear(ob.named);
	pthread_mutex_unlock(&ob.lock);
}

size_t outbox__unnamed(const uint64_t *ids, size_t n, uint64_t *unnamed)
{
	size_t count = 0;

	pthread_mutex_lock(&ob.lock);
	for (size_t i = 0; ob.open && i < n; i++) {
		bool dup = methodset__contains(ob.named, ids[i]);

		/* A stack repeats methods (recursion); n is at most a stack's depth. */
		for (size_t j = 0; !dup && j < count; j++)
			dup = unnamed[j] == ids[i];
		if (!dup)
			unnamed[count++] = ids[i];
	}
	pthread_mutex_unlock(&ob.lock);
	return count;
}

int outbox__append(const void *buf, size_t len, size_t limit, const uint64_t *named, size_t n_named)
{
	int err = -1;

	pthread_mutex_lock(&ob.lock);
	if (!ob.open)
		goto out;
	if (ob.bytes + len > limit) {
		ob.events_lost++;
		goto out;
	}
	err = push(buf, len);
	if (err)
		goto out;
	for (size_t i = 0; i < n_named; i++)
		methodset__insert(ob.named, named[i]);
out:
	pthread_mutex_unlock(&ob.lock);
	return err;
}

struct outbox_chunk *outbox__take(void)
{
	struct outbox_chunk *c;

	pthread_mutex_lock(&ob.lock);
	c = ob.head;
	ob.head = ob.tail = NULL;
	pthread_mutex_unlock(&ob.lock);
	return c;
}

void outbox__done(struct outbox_chunk *chunk)
{
	if (!chunk)
		return;
	pthread_mutex_lock(&ob.lock);
	ob.bytes -= chunk->len;
	pthread_mutex_unlock(&ob.lock);
	free(chunk);
}

size_t outbox__bytes(void)
{
	size_t bytes;

	pthread_mutex_lock(&ob.lock);
	bytes = ob.bytes;
	pthread_mutex_unlock(&ob.lock);
	return bytes;
}

uint64_t outbox__events_lost(void)
{
	uint64_t lost;

	pthread_mutex_lock(&ob.lock);
	lost = ob.events_lost;
	pthread_mutex_unlock(&ob.lock);
	return lost;
}
