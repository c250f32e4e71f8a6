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
 *   main > words_round > qsort ... > compare_words > strcmp ...
 *   main > copy_round > memmove ...
 * (ten or more distinct call paths with a share each, for comparing the
 * walk with another unwinder's path by path).
 *
 * Prints "ready", then works until SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_KEYS 4096
#define NR_WORDS 2048
#define COPY_BYTES (8u << 20)

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

/* strcmp's result is folded here so that the call to it is no tail call: the frame stays. */
static int compare_words(const void *a, const void *b)
{
	int order = strcmp(*(const char *const *)a, *(const char *const *)b);

	return order < 0 ? -1 : order > 0;
}

/* Sorts strings that share long prefixes: the time is in strcmp, below the callback. */
__attribute__((noinline)) static unsigned words_round(char (*words)[48], const char **order, unsigned seed)
{
	for (int i = 0; i < NR_WORDS; i++) {
		seed = seed * 1103515245u + 12345u;
		snprintf(words[i], sizeof(words[i]), "shared-prefix-of-some-length-%08x", seed);
		order[i] = words[i];
	}
	qsort(order, NR_WORDS, sizeof(*order), compare_words);
	return (unsigned char)order[0][30] + (unsigned char)order[NR_WORDS - 1][31];
}

/* Moves a buffer larger than the caches back and forth. */
__attribute__((noinline)) static unsigned copy_round(unsigned char *buf, unsigned seed)
{
	for (int i = 0; i < 4; i++)
		memmove(buf + (i & 1) * 64, buf + 64 - (i & 1) * 64, COPY_BYTES);
	buf[seed % COPY_BYTES] ^= (unsigned char)seed;
	return buf[0];
}

int main(void)
{
	unsigned *keys = malloc(NR_KEYS * sizeof(*keys));
	char (*words)[48] = malloc(NR_WORDS * sizeof(*words));
	const char **order = malloc(NR_WORDS * sizeof(*order));
	unsigned char *buf = calloc(1, COPY_BYTES + 64);
	unsigned seed = 1;

	if (!keys || !words || !order || !buf)
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
		sink += words_round(words, order, seed);
		sink += copy_round(buf, seed);
		seed += 7;
	}
	free(buf);
	free(order);
	free(words);
	free(keys);
	return 0;
}
