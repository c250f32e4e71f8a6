/*
 * interval_sim: how far a profile of periodic work can be off, for a range
 * of base periods of the randomised sampling interval (docs/architecture.md,
 * "Randomised sampling intervals"). A simulation, not a measurement: no
 * profiler runs.
 *
 *   interval_sim [SAMPLES [DRAWS]]    (defaults 2000 and 4000)
 *
 * The work has a cycle of T (in units of the mean interval 1/F) spent
 * 50/30/20 in three functions. For each range [lo, hi] and each T, DRAWS
 * recordings draw a base period b uniformly from the range and a random
 * start phase, tick every b, keep each tick with probability b (b*F), and
 * stop at SAMPLES kept ticks. A recording's error is its largest distance,
 * in percentage points, between a function's share of the samples and its
 * true share. Printed per range and T: the mean error, and the fraction of
 * recordings more than 3 points off (the bound of the aliasing test,
 * tests/integration/test_cpu_sampling.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* Uniform in [0, 1): xorshift64*, seeded above so that runs repeat. */
static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

static double recording_error(double lo, double hi, double cycle, long samples)
{
	double b = lo + (hi - lo) * uniform(), start = uniform() * cycle;
	long counts[3] = { 0, 0, 0 }, kept = 0;

	for (long tick = 0; kept < samples; tick++) {
		double phase;

		if (uniform() >= b)
			continue;
		phase = fmod(start + (double)tick * b, cycle) / cycle;
		counts[phase < 0.5 ? 0 : phase < 0.8 ? 1 : 2]++;
		kept++;
	}
	return 100 * fmax(fabs((double)counts[0] / kept - 0.5),
			  fmax(fabs((double)counts[1] / kept - 0.3), fabs((double)counts[2] / kept - 0.2)));
}

int main(int argc, char **argv)
{
	static const double ranges[][2] = { { 0.5, 0.8 }, { 0.9, 0.97 } };
	static const double cycles[] = { 0.1, 0.25, 1.0 / 3, 0.5, 2.0 / 3, 1, 1.5, 2, 3, 4, 5, 7, 10 };
	long samples = argc > 1 ? atol(argv[1]) : 2000, draws = argc > 2 ? atol(argv[2]) : 4000;

	if (samples <= 0 || draws <= 0) {
		fprintf(stderr, "usage: interval_sim [SAMPLES [DRAWS]]\n");
		return 2;
	}
	printf("interval_sim: %ld samples per recording, %ld recordings per cycle; mean error, share > 3 points\n",
	       samples, draws);
	for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		double worst_mean = 0, worst_tail = 0;

		printf("  b in [%.2f/F, %.2f/F]\n", ranges[r][0], ranges[r][1]);
		for (size_t c = 0; c < sizeof(cycles) / sizeof(cycles[0]); c++) {
			double sum = 0;
			long off = 0;

			for (long d = 0; d < draws; d++) {
				double e = recording_error(ranges[r][0], ranges[r][1], cycles[c], samples);

				sum += e;
				off += e > 3;
			}
			printf("    cycle %5.2f/F: %.2f points, %.2f%%\n", cycles[c], sum / draws, 100.0 * off / draws);
			worst_mean = fmax(worst_mean, sum / draws);
			worst_tail = fmax(worst_tail, 100.0 * off / draws);
		}
		printf("    worst cycle: %.2f points, %.2f%%\n", worst_mean, worst_tail);
	}
	return 0;
}
