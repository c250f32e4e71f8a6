/*
 * sampled_bytes: what one sampled allocation stands for (contract in
 * sampled_bytes.h).
 */
#include "common/sampled_bytes.h"

#include <math.h>

uint64_t sampled_bytes__of(uint64_t size, uint64_t interval)
{
	double x;

	if (!interval)
		return size;
	if (!size)
		return 0;
	/* Near interval for allocations far smaller than it, near size for those far larger. */
	x = (double)size / (double)interval;
	if (x < 1e-9)
		return interval;
	return (uint64_t)llround((double)size / -expm1(-x));
}

uint64_t sampled_bytes__objects(uint64_t bytes, uint64_t size)
{
	uint64_t objects = size ? (bytes + size / 2) / size : 1;

	return objects ? objects : 1;
}
