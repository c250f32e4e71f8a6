/*
 * options: the agent's option string, as given after "=" in
 * -agentpath:libjbpfagent.so=OPTIONS or to a dynamic attach.
 *
 * Format: ITEM[,ITEM...], each ITEM a whole key, with or without "=value":
 *
 *   socket=PATH  Unix stream socket the profiler listens on (required for
 *                a recording; at start-up the agent connects at VMInit)
 *   nmethods     also report compiled methods (CompiledMethodLoad/Unload,
 *                with a replay of those already compiled). HotSpot builds
 *                each method's address and inlining maps for the event,
 *                which costs a compile-heavy JVM several percent, so the
 *                profiler asks only when it needs them (--annotate).
 *   alloc=BYTES  also sample Java heap allocations, one per BYTES allocated
 *                by a thread on average (JVMTI SampledObjectAlloc; HotSpot
 *                draws each distance at random around the mean), each sent
 *                as an ALLOC with its Java stack and class. 1 to 2^31 - 1.
 *   sigqueue     also accept signals sent with sigqueue(3) (si_code
 *                SI_QUEUE), not only those from the BPF program
 *                (SI_KERNEL). A hook for tests/integration/test_stub.c.
 *
 * Keys are compared whole, unknown keys and repeated keys are rejected,
 * and PATH cannot contain ','. Pure string handling: no JNI, no allocation.
 */
#ifndef JBPF_OPTIONS_H
#define JBPF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/un.h>

struct agent_options {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "" when not given */
	bool sigqueue;
	bool nmethods;
	unsigned alloc_interval; /* alloc=BYTES; 0: allocations not sampled */
};

/*
 * Parses text (NULL or "" means no options) into opts. Returns 0, or -1
 * with a one-line reason in err. opts->socket is set even when a later
 * item is wrong, so that the reason can still be sent to the profiler.
 */
int options__parse(const char *text, struct agent_options *opts, char *err, size_t err_size);

#endif /* JBPF_OPTIONS_H */
