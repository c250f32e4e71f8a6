/*
 * sampled_bytes: the bytes one sampled allocation stands for. Checked at
 * its limits, and for what it is for: over many allocations, each sampled
 * with the probability the samplers give it (1 - e^(-size/interval)),
 * the weights of the samples add up to what was allocated, for small
 * objects and for objects larger than the interval alike.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "common/sampled_bytes.h"

#define KIB 1024ull

static void weights_at_the_limits(void **state)
{
	(void)state;
	/* No interval: every allocation is sampled, each stands for itself. */
	assert_int_equal(sampled_bytes__of(100, 0), 100);
	assert_int_equal(sampled_bytes__of(0, 512 * KIB), 0);
	/* Far smaller than the interval: about one interval. */
	assert_true(llabs((long long)sampled_bytes__of(16, 512 * KIB) - (long long)(512 * KIB)) <= 8);
	/* As large as the interval: sampled with probability 1 - 1/e. */
	assert_int_equal(sampled_bytes__of(512 * KIB, 512 * KIB), (uint64_t)llround(512.0 * KIB / (1 - exp(-1))));
	/* Far larger: nearly always sampled, itself. */
	assert_int_equal(sampled_bytes__of(64 * 512 * KIB, 512 * KIB), 64 * 512 * KIB);
}

/* xorshift64*: the test's own, so its draws are the same on every machine. */
static double uniform(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

/*
 * n allocations of size bytes, each sampled with its probability: the
 * estimate within five standard deviations of what was allocated. A
 * sample's weight is w = size / p, so the estimate's variance is
 * n p (1 - p) w^2.
 */
static void estimate_is_unbiased(uint64_t size, uint64_t interval, uint64_t n)
{
	double p = 1 - exp(-(double)size / (double)interval), w = (double)sampled_bytes__of(size, interval);
	double sigma = sqrt((double)n * p * (1 - p)) * w, total = (double)size * (double)n, estimate = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ size;

	for (uint64_t i = 0; i < n; i++)
		if (uniform(&seed) < p)
			estimate += w;
	if (fabs(estimate - total) > 5 * sigma + 1)
		fail_msg("size %llu: estimated %.0f bytes of %.0f (sigma %.0f)", (unsigned long long)size, estimate,
			 total, sigma);
}

static void weights_add_up_to_what_was_allocated(void **state)
{
	(void)state;
	estimate_is_unbiased(24, 512 * KIB, 20000000);
	estimate_is_unbiased(1040, 512 * KIB, 2000000);
	estimate_is_unbiased(300 * KIB, 512 * KIB, 20000);
	estimate_is_unbiased(4096 * KIB, 512 * KIB, 2000);
}

/* The allocations a sample's bytes are: those bytes over the size asked for, rounded, and at least the one sampled. */
static void objects_of_the_bytes(void **state)
{
	(void)state;
	assert_int_equal(sampled_bytes__objects(512 * KIB, 16), 32768);
	assert_int_equal(sampled_bytes__objects(100, 40), 3);
	assert_int_equal(sampled_bytes__objects(10, 4096), 1);
	assert_int_equal(sampled_bytes__objects(10, 0), 1);
	assert_int_equal(sampled_bytes__objects(0, 16), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(weights_at_the_limits),
		cmocka_unit_test(weights_add_up_to_what_was_allocated),
		cmocka_unit_test(objects_of_the_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
