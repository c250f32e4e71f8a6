/*
 * agent_error: what an agent said before giving up, read after a load the
 * JVM reported as failed. The agent may have started anyway (a JVM that
 * exits during its attach answers nothing, after its agent connected) and
 * sent its hello, methods, code blobs and threads before its error: only
 * the error is taken, everything else read and dropped.
 */
#ifndef JBPF_AGENT_ERROR_H
#define JBPF_AGENT_ERROR_H

#include <stddef.h>

/*
 * Reads what fd holds within timeout_ms (one wait, one read of at most a
 * reader's buffer) and puts the agent's error, made safe for a terminal,
 * into out. 0 when there was one, else -1 (out untouched).
 */
int agent_error__read(int fd, int timeout_ms, char *out, size_t size);

#endif /* JBPF_AGENT_ERROR_H */
