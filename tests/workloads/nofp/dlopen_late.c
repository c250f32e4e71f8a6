/*
 * nofp_dlopen_late: loads a library, built without frame pointers, only
 * when told to (SIGUSR1), i.e. after the profiler started, and then spends
 * its time in it: main > run_plugin > plugin_outer > plugin_middle >
 * plugin_inner. A walker that knows only the mappings of the start has no
 * table for the library; it must notice the new mapping.
 *
 * The library is libnofp_plugin.so next to this program. Prints "ready",
 * then "loaded" once the library is in, and works until SIGTERM or SIGINT.
 */
#include <dlfcn.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop, load;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		load = 1;
	else
		stop = 1;
}

__attribute__((noinline)) static unsigned long run_plugin(unsigned long (*outer)(unsigned long), unsigned long seed)
{
	unsigned long r = outer(seed);

	/* Used after the call: no tail call. */
	return r ^ seed;
}

int main(void)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	unsigned long (*outer)(unsigned long);
	unsigned long seed = 1, sink = 0;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *lib;

	if (len <= 0)
		return 1;
	self[len] = '\0';
	snprintf(path, sizeof(path), "%s/libnofp_plugin.so", dirname(self));
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGUSR1, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!load && !stop)
		pause();
	if (stop)
		return 0;
	lib = dlopen(path, RTLD_NOW);
	if (!lib || !(outer = (unsigned long (*)(unsigned long))dlsym(lib, "plugin_outer"))) {
		fprintf(stderr, "nofp_dlopen_late: %s\n", dlerror());
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	while (!stop)
		sink += run_plugin(outer, seed++);
	printf("sink %lu\n", sink & 1);
	return 0;
}
