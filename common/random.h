/*
 * random: unpredictable numbers, for names in a directory a target can
 * write (which must not be guessable in advance) and for the sampling
 * period's random part.
 */
#ifndef JBPF_RANDOM_H
#define JBPF_RANDOM_H

#include <stdint.h>

/*
 * A uniform 64-bit number from the kernel's generator, never blocking.
 * Before the generator is seeded (early boot) it falls back on the pid and
 * the clock: weaker, but a name is still checked when it is created.
 */
uint64_t random__u64(void);

#endif /* JBPF_RANDOM_H */
