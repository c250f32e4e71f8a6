/*
 * wakers: threads of a native program that wake one another, for
 * tests/integration/test_wakers.c (--wakers).
 *
 *   wakers
 *
 * A thread "signaller" computes for about a millisecond (spin), then
 * signals a condition variable (signal_ready) that a thread "waiter"
 * waits on (wait_ready), forever. The waiter waits for the signaller and
 * for nothing else. Prints "ready" once both run.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned long items, taken;
static volatile unsigned long sink;

/* Not static, never inlined: the profile names them from the symbol table. */
__attribute__((noinline)) void spin(void);
__attribute__((noinline)) void signal_ready(void);
__attribute__((noinline)) void wait_ready(void);

void spin(void)
{
	for (unsigned long i = 0; i < 2000000; i++)
		sink = sink * 31 + i;
}

void signal_ready(void)
{
	pthread_mutex_lock(&lock);
	items++;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&lock);
}

void wait_ready(void)
{
	pthread_mutex_lock(&lock);
	while (taken == items)
		pthread_cond_wait(&ready_cond, &lock);
	taken++;
	pthread_mutex_unlock(&lock);
}

static void *signaller(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "signaller");
	for (;;) {
		spin();
		signal_ready();
	}
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	for (;;)
		wait_ready();
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	if (pthread_create(&t[0], NULL, waiter, NULL) || pthread_create(&t[1], NULL, signaller, NULL)) {
		perror("pthread_create");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	pthread_join(t[0], NULL);
	return 0;
}
