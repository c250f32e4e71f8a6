/*
 * wake: how a profiler wakes an agent that was loaded at start-up and
 * lies dormant (agent.c), when it cannot or should not load a copy.
 *
 * JDK 21 and later refuse every dynamic load, even of a library the JVM
 * already loaded, when started with -XX:-EnableDynamicAgentLoading
 * (jvmtiAgent.cpp, invoke_Agent_OnAttach). The attach mechanism itself
 * still answers, and its diagnostic command JVMTI.data_dump posts
 * JVMTI's DataDumpRequest event, on the attach listener thread (a Java
 * thread), to every environment that enabled it. So the dormant agent
 * enables that one event, which costs nothing until it is posted, and the
 * profiler:
 *
 *   1. creates the request file /tmp/.jbpfprof_pid<pid> (pid as the JVM
 *      sees itself), as the JVM's user, mode 0600, holding the option
 *      string an attach would pass (options.h: socket=PATH[,nmethods]);
 *   2. sends "jcmd JVMTI.data_dump" through the attach mechanism;
 *   3. the agent's DataDumpRequest reads the file and starts a recording
 *      as Agent_OnAttach would: connect, HELLO or ERROR, on the socket;
 *   4. the profiler removes the file.
 *
 * The same event comes from a SIGQUIT (kill -3) and the attach "datadump"
 * command; with no request file the agent does nothing then. The file is
 * trusted only if it is a regular file of the JVM's own effective user,
 * not a symlink, with one link, writable by nobody else, and at most
 * WAKE_REQUEST_MAX bytes: whoever can make such a file can already attach
 * to the JVM.
 */
#ifndef JBPF_WAKE_H
#define JBPF_WAKE_H

#include <stddef.h>

/* The request file's name in /tmp; the JVM's pid follows. */
#define WAKE_REQUEST_PREFIX ".jbpfprof_pid"
/*
 * A string the agent's file holds (wake.c keeps it), by which the profiler
 * tells the library a JVM loaded at start-up is this agent and speaks this
 * wake-up; a new way of waking gets a new number.
 */
#define WAKE_MARKER "jbpfagent: wakes on JVMTI.data_dump with /tmp/" WAKE_REQUEST_PREFIX ", v1"

/* An option string longer than this is refused (socket paths are < 108 bytes). */
#define WAKE_REQUEST_MAX 1024

/*
 * Reads this process's request file into opts (NUL-terminated, a trailing
 * newline removed). Returns 0; 1 when there is no request file (a plain
 * SIGQUIT); -1 with a one-line reason in err when the file is there but
 * not to be trusted or not readable. Not async-signal-safe.
 */
int wake__read_request(char *opts, size_t size, char *err, size_t err_size);

#endif /* JBPF_WAKE_H */
