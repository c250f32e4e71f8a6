/*
 * fdio: whole writes to a file descriptor, retried after EINTR and short
 * writes, for the modules that write files of their own (the unwind table
 * store, the push spool, the agent file of an attach).
 */
#ifndef JBPF_FDIO_H
#define JBPF_FDIO_H

#include <stddef.h>

/* Writes all len bytes of buf to fd. 0, or a negative errno (-EIO when write returns 0). */
int fdio__write_all(int fd, const void *buf, size_t len);

#endif /* JBPF_FDIO_H */
