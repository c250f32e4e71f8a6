/*
 * nofp_qsort_printf: a program built the way distributions build, plain
 * -O2 without frame pointers (see the Makefile), whose CPU time goes to
 * libc: to qsort, which calls back into the program (compare_keys), and
 * to snprintf. Frame pointers alone lose every caller of such code; the
 * unwind tables must find main from each sample.
 *
 * Call paths (the program's own functions):
 *   main > sort_round > qsort ... > compare_keys > mix_key
 *   main > format_round > format_numbers > snprintf ...
 *   main > format_round > format_words > snprintf ...
 *   main > parse_round > strtod ...
 *   main > hash_round
 *
 * Prints "ready", then works until SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_KEYS 4096

static volatile sig_atomic_t stop;
static volatile unsigned long sink;

static void on_signal(int sig __attribute__((unused)))
{
	stop = 1;
}

/* Some arithmetic per comparison, so that the callback has samples of its own. */
__attribute__((noinline)) static unsigned mix_key(unsigned k)
{
	for (int i = 0; i < 8; i++)
		k = (k ^ (k >> 13)) * 0x5bd1e995u + (unsigned)i;
	return k;
}

static int compare_keys(const void *a, const void *b)
{
	unsigned x = mix_key(*(const unsigned *)a), y = mix_key(*(const unsigned *)b);

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static unsigned sort_round(unsigned *keys, unsigned seed)
{
	for (int i = 0; i < NR_KEYS; i++) {
		seed = seed * 1103515245u + 12345u;
		keys[i] = seed;
	}
	qsort(keys, NR_KEYS, sizeof(*keys), compare_keys);
	/* Used after the call, so that the call is no tail call that would hide this frame. */
	return keys[0] + keys[NR_KEYS - 1];
}

__attribute__((noinline)) static size_t format_numbers(char *buf, size_t size, unsigned seed)
{
	size_t total = 0;

	for (int i = 0; i < 2000; i++)
		total += (size_t)snprintf(buf, size, "%u %08x %.3f %e", seed + (unsigned)i, seed ^ (unsigned)i,
					  (double)i / 7.0, (double)seed * i);
	return total + (unsigned char)buf[0];
}

__attribute__((noinline)) static size_t format_words(char *buf, size_t size, unsigned seed)
{
	static const char *const words[] = { "alpha", "beta", "gamma", "delta" };
	size_t total = 0;

	for (int i = 0; i < 2000; i++)
		total += (size_t)snprintf(buf, size, "%-12s|%12s|%s", words[(seed + (unsigned)i) & 3],
					  words[i & 3], words[(seed >> 3) & 3]);
	return total + (unsigned char)buf[1];
}

__attribute__((noinline)) static size_t format_round(unsigned seed)
{
	char buf[256];

	return format_numbers(buf, sizeof(buf), seed) + format_words(buf, sizeof(buf), seed);
}

__attribute__((noinline)) static double parse_round(unsigned seed)
{
	char text[64];
	double total = 0;

	for (int i = 0; i < 2000; i++) {
		snprintf(text, sizeof(text), "%u.%u", seed + (unsigned)i, (unsigned)i);
		total += strtod(text, NULL);
	}
	return total;
}

/* Time in the program itself, with no library below it. */
__attribute__((noinline)) static unsigned long hash_round(unsigned seed)
{
	unsigned long h = seed;

	for (int i = 0; i < 400000; i++)
		h = (h ^ (h >> 11)) * 0x100000001b3ul + (unsigned long)i;
	return h;
}

int main(void)
{
	unsigned *keys = malloc(NR_KEYS * sizeof(*keys));
	unsigned seed = 1;

	if (!keys)
		return 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		sink += sort_round(keys, seed);
		sink += format_round(seed);
		sink += (unsigned long)parse_round(seed);
		sink += hash_round(seed);
		seed += 7;
	}
	free(keys);
	return 0;
}
