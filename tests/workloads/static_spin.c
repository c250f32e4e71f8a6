/*
 * static_spin: a statically linked program (built with -static), which
 * maps no shared C library: -e nativemem has no allocator to probe in it.
 * It prints "ready" and sleeps until stopped.
 */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
