/*
 * attach: loading an agent into a running HotSpot JVM with the dynamic
 * attach protocol, without jcmd or jattach, and the helpers that reach
 * the JVM's own /tmp, which may live in a container (other mount, pid and
 * user namespaces).
 *
 * The profiler runs as root; everything read from or found in the target
 * (/proc/PID files, its /tmp, file names, owners, symlinks, the JVM's
 * reply) is hostile input. So:
 *
 *   - the target is pinned by a pidfd and a /proc/PID directory fd opened
 *     while the pidfd shows it alive; signals go through the pidfd, so a
 *     reused pid never receives one, and SIGQUIT (whose default action
 *     kills) goes only to a process that maps libjvm.so and catches it;
 *   - the target's /tmp is opened once, through /proc/PID/root with
 *     openat2(RESOLVE_IN_ROOT), and refused unless it is sticky and
 *     writable by all, or the target's user's own (anyone can bind-mount
 *     another directory over its /tmp in a user namespace); every file in
 *     it is named by one path component relative to that fd, created as
 *     the target's user with O_EXCL and O_NOFOLLOW, or looked at through
 *     O_PATH and fstat before it is opened or trusted; nothing in it that
 *     belongs to another user is removed;
 *   - sockets are bound and connected through /proc/self/fd/N paths, so
 *     no name in the target redirects them to the host;
 *   - every read is bounded (status 8 KiB, cmdline and environ 4 MiB,
 *     reply 64 KiB) and every wait has a deadline.
 *
 * Ids: pid is the process as the profiler sees it; nspid as the JVM sees
 * itself (the last NSpid field), which names its attach files. uid and gid
 * are the JVM's effective ids as the profiler's user namespace sees them.
 *
 * Every function returns 0 (or an fd) or -1 (attach__target_open also
 * JVM_TARGET_NOT_JVM), and on failure writes one line into err: what
 * failed, why, and what to do. None prints anything. The functions that
 * take the target's ids (attach__listen, attach__load_agent) change the effective
 * uid and gid of the calling thread only, and always restore them before
 * returning; they are not async-signal-safe, and one jvm_target must not
 * be used by two threads at once.
 *
 * The code: attach_parse.c (the pure parsers), attach_target.c (opening a
 * target), attach_tmp.c (the agent file and socket in its /tmp) and
 * attach_protocol.c (attach__load_agent, attach__jcmd); the status fields are parsed by
 * symbolizer/proc.c.
 */
#ifndef JBPF_ATTACH_H
#define JBPF_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

/*
 * HotSpot's protocol version 1 takes at most 1024 bytes per argument,
 * terminator included (JDK 25 closes the connection on a longer one).
 */
#define ATTACH_ARG_MAX 1023
/* Replies longer than this are refused (a load reply is a few lines). */
#define ATTACH_REPLY_MAX 65536

struct jvm_target {
	pid_t pid;      /* as the profiler sees it (a process, not a thread) */
	pid_t nspid;    /* as the JVM sees itself: last NSpid field of /proc/PID/status */
	uid_t uid;      /* effective uid of the JVM, from /proc/PID/status */
	gid_t gid;      /* effective gid of the JVM */
	int tmp_fd;     /* the JVM's /tmp (O_PATH), opened through /proc/PID/root with RESOLVE_IN_ROOT */
	int pidfd;      /* pins the process: signals and exit detection */
	int proc_fd;    /* /proc/PID (O_PATH): later reads of its files */
	/*
	 * -1 (attach__target_open's default), or an fd the caller sets that polls
	 * readable when the attach is to be given up (the recording ends): every
	 * wait of attach__load_agent, attach__jcmd and attach__accept then ends at once, as
	 * a failure with errno ECANCELED and err saying so. Not owned.
	 */
	int cancel_fd;
};

/*
 * Checks that pid is a process (not a thread) that maps libjvm.so, and
 * that attach is not disabled in it, before anything is sent to it:
 * -XX:[+-]DisableAttachMechanism in JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS,
 * the command line up to the main class, then _JAVA_OPTIONS (the JVM's own
 * order; the last one wins), overruled by the JVM's own answer in its
 * hsperfdata file (sun.rt.jvmCapabilities) when it maps one. Fills *t,
 * opening its pidfd, /proc/PID and /tmp; a /tmp neither sticky and
 * writable by all nor owned by the target's uid is refused. Returns 0; JVM_TARGET_NOT_JVM
 * when pid is a live process that does not map libjvm.so (so the caller
 * can profile it as a native process; err says so too); JVM_TARGET_STARTING
 * when it maps the Java launcher's libjli.so but not yet libjvm.so (a JVM
 * being started: ask again shortly); JVM_TARGET_UNKNOWN when it has exited
 * or its maps cannot be read; -1 for any other failure. On failure
 * *t holds no open fd (attach__target_close on it is harmless). Nothing is
 * sent to the process.
 */
#define JVM_TARGET_NOT_JVM (-2)
#define JVM_TARGET_STARTING (-3)
/* It has exited, or its /proc/PID/maps cannot be read (no ptrace access): not known to be a JVM. */
#define JVM_TARGET_UNKNOWN (-4)
int attach__target_open(pid_t pid, struct jvm_target *t, char *err, size_t err_size);

/* Closes what attach__target_open opened; NULL-safe, and safe to call twice. */
void attach__target_close(struct jvm_target *t);

/*
 * Writes the agent image into the target's /tmp as
 * jbpfagent-<64-bit content hash>-<uid>.so, mode 0600, created as the
 * target's user (effective uid and gid, no supplementary groups) with
 * O_EXCL and O_NOFOLLOW: never through a symlink, never over an existing
 * file, never where that user could not create it. A file of that name
 * already there is reused only if it is a regular file owned by the
 * target's uid or root, writable by neither group nor others, with exactly
 * this content (it is opened only after fstat of an O_PATH descriptor
 * showed that much); otherwise the image goes to a fresh unique name.
 * Returns in path the name as the JVM sees it ("/tmp/..."). The file is
 * left in place: the JVM maps it, and the next attach reuses it.
 */
int attach__install_agent(struct jvm_target *t, const void *image, size_t size, char *path, size_t pathlen, char *err,
		      size_t err_size);

/*
 * Creates a listening Unix stream socket in the target's /tmp with a
 * random name, mode 0600, owned by the target's uid and gid from birth:
 * it is bound under the target's effective ids from a socket whose inode
 * mode is 0600 (which the file takes, less the umask), through
 * /proc/self/fd/<tmp_fd>/<name>, so no symlink in the target redirects it
 * and nobody else can reach it even for an instant. Returns the listening
 * fd (nonblocking, close-on-exec; the caller closes it) and in path the
 * name as the JVM sees it. The process's umask is left alone, so other
 * threads may create files meanwhile.
 */
int attach__listen(struct jvm_target *t, char *path, size_t pathlen, char *err, size_t err_size);

/*
 * Gives up a socket from attach__listen without accepting: closes listen_fd
 * (if >= 0) and removes the socket file named path if it is still a socket
 * of the target's user. For error paths between attach__listen and attach__accept,
 * so that no socket file is left in the target's /tmp.
 */
void attach__unlisten(struct jvm_target *t, int listen_fd, const char *path);

/*
 * Waits up to timeout_ms for the agent's connection on listen_fd, made by
 * the target process itself as its own user (SO_PEERCRED pid == t->pid and
 * uid == t->uid; connections from any other peer are closed and the wait
 * goes on), then unlinks the
 * socket file named path (as attach__listen returned it) on every path.
 * Returns the connected fd (nonblocking, close-on-exec), or -1.
 */
int attach__accept(struct jvm_target *t, int listen_fd, const char *path, int timeout_ms, char *err, size_t err_size);

/*
 * Loads agent_path (absolute, as the JVM sees it, at most ATTACH_ARG_MAX
 * bytes) into the JVM with options (NULL for none, at most ATTACH_ARG_MAX
 * bytes), all within timeout_ms:
 *
 *   1. if /tmp/.java_pid<nspid> is not a socket of the JVM's user that
 *      accepts a connection, create the trigger /tmp/.attach_pid<nspid>
 *      as the JVM's user (a stale trigger of that user is replaced; a file
 *      of anyone else there is left alone and the attach refused), send
 *      SIGQUIT (only if the JVM catches it: with -Xrs it would die), and
 *      poll for the socket, sending SIGQUIT once more half way, as jcmd
 *      does; the trigger is removed on every path;
 *   2. connect with the calling thread's effective uid and gid set to the
 *      JVM's (HotSpot accepts only its own euid/egid, or root in its own
 *      user namespace);
 *   3. send "1\0load\0<agent_path>\0true\0<options>\0" ("true": the path is
 *      absolute; with "false" HotSpot looks for lib<name>.so in its own
 *      library directory);
 *   4. read the reply to EOF and check both the command status and the
 *      agent's own result (attach__parse_reply).
 *
 * Returns 0 only when Agent_OnAttach returned 0; JVM_LOAD_NOT_LIVE when
 * the JVM is still starting: it does not handle SIGQUIT yet (or never
 * will: -Xrs), or the agent found it before its live phase
 * (JBPF_AGENT_NOT_LIVE); -1 for any other failure.
 */
#define JVM_LOAD_NOT_LIVE (-2)
int attach__load_agent(struct jvm_target *t, const char *agent_path, const char *options, int timeout_ms, char *err,
		   size_t err_size);

/*
 * Runs the diagnostic command (as jcmd would: "JVMTI.data_dump") in the
 * JVM through the attach mechanism, as attach__load_agent reaches it, within
 * timeout_ms. Returns 0 when the JVM reports success (status 0); the
 * command's output is not kept.
 */
int attach__jcmd(struct jvm_target *t, const char *command, int timeout_ms, char *err, size_t err_size);

/*
 * Parses the attach listener's reply to "load" (len bytes, not
 * NUL-terminated). The first line is the command status; for a load that
 * reached the agent the status is 0 and a line "return code: N" (JDK 9
 * and later; JDK 8 writes N alone on the second line) carries what
 * Agent_OnAttach returned. Returns 0 with *agent_rc = N and in msg any
 * other text (JDK warnings), or -1 with in msg the JVM's own text (for
 * example "... was not loaded. ...: cannot open shared object file"; JDK 25
 * sends that with status 0 and no return code) or a description of a
 * malformed reply. msg is always one printable line, cut to msglen - 1
 * bytes. A reply longer than ATTACH_REPLY_MAX is malformed.
 */
int attach__parse_reply(const char *buf, size_t len, int *agent_rc, char *msg, size_t msglen);

/*
 * Parses /proc/PID/status text (len bytes): *nspid from the last field of
 * "NSpid:" (the pid in the innermost pid namespace), *uid and *gid from
 * the second (effective) field of "Uid:" and "Gid:". Returns 0, or -1 when
 * a field is missing or malformed (outputs then unchanged).
 */
int attach__parse_status(const char *status_text, size_t len, pid_t *nspid, uid_t *uid, gid_t *gid);

/*
 * Whether signal sig (1..64) has a handler, from the "SigCgt:" mask of
 * /proc/PID/status text. Returns 1, 0, or -1 when the line is missing or
 * malformed.
 */
int attach__status_catches(const char *status_text, size_t len, int sig);

/*
 * The state of -XX:[+-]DisableAttachMechanism after one source of JVM
 * options, given the state before it (1 disabled, 0 not): the last flag
 * wins. attach__cmdline_disables reads a NUL-separated command line
 * (/proc/PID/cmdline) and stops at the main class, -jar JAR or -m MODULE,
 * after which arguments belong to the program; it knows which java
 * launcher options take a separate value. attach__options_disables reads an
 * environment variable's value (JAVA_TOOL_OPTIONS and the like), split at
 * white space, one level of quotes removed.
 */
int attach__cmdline_disables(const char *cmdline, size_t len, int disabled);
int attach__options_disables(const char *options, size_t len, int disabled);

/*
 * Finds the string constant sun.rt.jvmCapabilities in an hsperfdata image
 * (len bytes, as the JVM maps it), whose first character is '1' when the
 * attach mechanism is enabled. Copies it, NUL-terminated and cut to
 * capslen - 1 bytes, into caps. Returns 0, or -1 if the image is malformed
 * or has no such entry.
 */
int attach__parse_perfdata(const void *image, size_t len, char *caps, size_t capslen);

#endif /* JBPF_ATTACH_H */
