/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How every record in the struct jbpf_sample layout (a CPU sample or a
 * wait) starts. The programs build these records in per-CPU scratch
 * buffers that still hold the previous record, so every header field must
 * be written each time; this one function clears the whole header and then
 * sets what every record has, and the programs set only what differs from
 * zero. Setting fields one by one is how a new field (woken_ns) once
 * kept the previous record's value in CPU samples.
 *
 * Plain C over the types of jbpfprof.h, so that the unit tests compile it
 * too (tests/unit/test_sample_header.c); like jbpfprof.h, it needs the
 * __u32/__u64 types defined first (vmlinux.h, or <linux/types.h>).
 */
#ifndef JBPF_SAMPLE_HEADER_H
#define JBPF_SAMPLE_HEADER_H

#include "jbpfprof.h"

/*
 * Clears the header of sample (not the stack frames after it) and sets
 * its type, CPU, time and thread; every other field is 0, and
 * state is JBPF_STATE_RUNNING.
 */
static inline __attribute__((always_inline)) void sample_header__init(struct jbpf_sample *sample, __u32 type,
								       __u32 cpu, __u64 time_ns, __u32 tgid,
								       __u32 tid)
{
	__builtin_memset(sample, 0, sizeof(*sample));
	sample->type = type;
	sample->cpu = cpu;
	sample->time_ns = time_ns;
	sample->tgid = tgid;
	sample->tid = tid;
}

#endif /* JBPF_SAMPLE_HEADER_H */
