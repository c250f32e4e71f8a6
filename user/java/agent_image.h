/*
 * agent_image: the agent library (build/libjbpfagent.so) embedded in the
 * profiler, so that one binary is all a host needs; it is copied into each
 * target JVM's /tmp when attaching.
 */
#ifndef JBPF_AGENT_IMAGE_H
#define JBPF_AGENT_IMAGE_H

#include <stddef.h>

/* The image's bytes and size. */
const void *agent_image__bytes(size_t *size);

#endif /* JBPF_AGENT_IMAGE_H */
