/*
 * agent_path: where `make install` put the agent, for
 * java -agentpath:<it> (jbpfprof --agent-path prints it, and the error
 * for a JVM that refuses dynamically loaded agents names it).
 *
 * Looked for, in order: <the jbpfprof binary's directory>/../lib/jbpfprof/
 * libjbpfagent.so (an installed tree, wherever it was moved or staged with
 * DESTDIR), then $(PREFIX)/lib/jbpfprof/libjbpfagent.so as built.
 */
#ifndef JBPF_AGENT_PATH_H
#define JBPF_AGENT_PATH_H

#include <stddef.h>

/* The agent's place below PREFIX. */
#define AGENT_PATH_SUBDIR "lib/jbpfprof"

/*
 * The installed agent's absolute path into path. Returns 0 when that file
 * is a regular file; -1 when none is, with path then holding the built-in
 * $(PREFIX) one (for messages: "make install puts it there").
 */
int agent_path__installed(char *path, size_t size);

#endif /* JBPF_AGENT_PATH_H */
