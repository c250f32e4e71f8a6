/*
 * jfr_read: a JDK Flight Recorder file's samples into a profile, read by
 * the file's own metadata, never by field orders known in advance.
 *
 * Every chunk: its header (magic, version 2, its size and its offsets
 * checked against the chunk and the file), its metadata (the classes and
 * their fields), its constant pools (the checkpoint events, from the
 * header's offset back through each one's delta to the one before), then
 * its events. The samples become stacks, one each:
 *
 *   jdk.ExecutionSample, jdk.NativeMethodSample   sampledThread, stackTrace, state
 *   jdk.CPUTimeSample (JDK 25's CPU-time sampler) eventThread, stackTrace
 *
 * rooted in their thread ("[javaName tid=osThreadId]"), frames root first
 * (a frame: its method's class and name, "java.lang.Thread.run"; a frame
 * with no class, such as async-profiler's native ones, its name alone;
 * the kind from the frame's type: Interpreted, JIT compiled, Inlined,
 * Native, C++, Kernel), and, for a thread that was waiting, a state frame
 * ([sleeping] for a wait, sleep or park, [blocked] for a monitor's entry;
 * a running thread's stack has none, as in a CPU profile). The counts are
 * samples: the recording reads as a CPU profile (--state sleeping keeps
 * the waiting threads' samples). Other events are skipped by their size;
 * samples the file says were lost (jdk.CPUTimeSamplesLost) are counted in
 * the summary.
 *
 * The file is the target's, or anyone's: every size, count, offset and
 * reference is checked before use, nesting is bounded, memory is
 * proportional to the file, and what does not read is one line in err.
 */
#ifndef JBPF_JFR_READ_H
#define JBPF_JFR_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/pprof_read.h"

/* Whether data (len bytes) begins as a JFR file does ("FLR\0"). */
bool jfr_read__looks_like(const uint8_t *data, size_t len);

/* Reads a JFR file's bytes into rec. 0, or -1 with a one-line reason in err. */
int jfr_read__buffer(const uint8_t *data, size_t len, struct pprof_recording *rec, char *err, size_t err_size);

#endif /* JBPF_JFR_READ_H */
