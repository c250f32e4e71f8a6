/*
 * nofp_deep_stack: its time goes to a leaf 300 calls deep (descend calls
 * itself, not as a tail call), built without frame pointers: deeper than
 * any walk goes, for the walker's depth limit.
 *
 * Prints "ready", then works until SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>

#define DEPTH 300

static volatile sig_atomic_t stop;
static volatile unsigned long sink;

static void on_signal(int sig __attribute__((unused)))
{
	stop = 1;
}

__attribute__((noinline)) static unsigned long burn(unsigned long x)
{
	for (int i = 0; i < 1000000; i++)
		x = (x ^ (x >> 9)) * 0x9e3779b97f4a7c15ul + (unsigned long)i;
	return x;
}

__attribute__((noinline)) static unsigned long descend(int depth, unsigned long x)
{
	unsigned long r = depth ? descend(depth - 1, x + 1) : burn(x);

	/* Used after the call: no tail call. */
	return r + (unsigned long)depth;
}

int main(void)
{
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sink += descend(DEPTH, sink);
	return 0;
}
