/*
 * agent_loaded: the agent a JVM loaded at start-up
 * (java -agentpath:.../libjbpfagent.so), dormant until a profiler wakes it
 * (jvmti-stub/wake.h). jbpfprof -p connects to that agent instead of
 * copying one into the JVM's /tmp and loading it: which works where
 * dynamic loading is refused (-XX:-EnableDynamicAgentLoading, JDK 21+),
 * never prints JEP 451's warning, and never puts two agents (two signal
 * handlers) in one JVM.
 *
 * Both functions take a target opened by attach__target_open (attach.h), and
 * treat what they read from it as hostile: the maps through the pinned
 * /proc/PID directory, the agent's file through map_files (opened as the
 * design's rule for target-controlled paths says, proc__open_map_file_at),
 * read in bounded chunks, never mapped.
 */
#ifndef JBPF_AGENT_LOADED_H
#define JBPF_AGENT_LOADED_H

#include <stddef.h>

#include "user/java/attach.h"

/* The file name the agent is installed and loaded under. */
#define AGENT_LOADED_NAME "libjbpfagent.so"
/* An agent file larger than this is not looked through (ours is a few hundred KiB). */
#define AGENT_LOADED_MAX_SIZE (64u << 20)

/*
 * Whether the JVM maps an executable file named AGENT_LOADED_NAME that
 * holds WAKE_MARKER. Returns 1 with its path (as the JVM sees it) in path;
 * 0 when no such name is mapped; -1 with err set when one is, but is not
 * an agent this jbpfprof can wake (another build, an unrelated file) or
 * cannot be read: loading a second agent beside it would put two signal
 * handlers in the JVM, so the caller gives up.
 */
int agent_loaded__find(struct jvm_target *t, char *path, size_t pathlen, char *err, size_t err_size);

/*
 * Wakes the dormant agent with options (the string an attach would pass,
 * at most WAKE_REQUEST_MAX bytes): creates the request file in the JVM's
 * /tmp as its user (O_EXCL, O_NOFOLLOW, 0600; a stale one of that user is
 * replaced, anyone else's refused), runs JVMTI.data_dump through the
 * attach mechanism within timeout_ms, and removes the file. The agent has
 * connected to the socket the options name, or given up, by the time the
 * command returns. 0, or -1 with err set.
 */
int agent_loaded__wake(struct jvm_target *t, const char *options, int timeout_ms, char *err, size_t err_size);

#endif /* JBPF_AGENT_LOADED_H */
