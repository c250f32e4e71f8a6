/*
 * random: the kernel's generator (contract in random.h).
 */
#include "random.h"

#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"

uint64_t random__u64(void)
{
	uint64_t value = 0;

	if (getrandom(&value, sizeof(value), GRND_NONBLOCK) != sizeof(value))
		value = ((uint64_t)getpid() << 32 ^ clock__monotonic_ns()) * 0x9e3779b97f4a7c15ull;
	return value;
}
