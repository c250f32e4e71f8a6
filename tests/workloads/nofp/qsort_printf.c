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
 * Prints "ready", then works until SIGTERM or SIGINT. Built with
 * -DTIME_ROUNDS (bench/timer_bias.sh), it also measures each round's
 * thread CPU time and prints every round's share of it when it stops.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_KEYS 4096
#define NR_WORDS 2048
#define COPY_BYTES (8u << 20)
#define MOST(n) ((n) * 5 / 4) /* the most varied(n) returns, for the buffers */

#ifdef TIME_ROUNDS
#include <time.h>

static const char *const round_names[] = { "sort", "format", "parse", "hash", "words", "copy" };
static double round_ns[6];

static double thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

#define ROUND(i, call)                                   \
	do {                                             \
		double round_start = thread_cpu_ns();    \
		call;                                    \
		round_ns[i] += thread_cpu_ns() - round_start; \
	} while (0)

static void print_round_shares(void)
{
	double all = 0;

	for (int i = 0; i < 6; i++)
		all += round_ns[i];
	for (int i = 0; i < 6; i++)
		fprintf(stderr, "%s_round %.2f\n", round_names[i], all > 0 ? 100.0 * round_ns[i] / all : 0.0);
}
#else
#define ROUND(i, call) call
#endif

static volatile sig_atomic_t stop;
static volatile unsigned long sink;
static unsigned long jitter = 1;

/*
 * n give or take a quarter, differently every call: rounds of a fixed
 * length would repeat on a fixed period, and a sampler with a fixed period
 * (perf's, the reference in test_unwind) would see them at a few phases only.
 */
static unsigned varied(unsigned n)
{
	jitter = jitter * 6364136223846793005ul + 1442695040888963407ul;
	return n * 3 / 4 + (unsigned)((jitter >> 33) % (n / 2));
}

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
	unsigned n = varied(NR_KEYS);

	for (unsigned i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		keys[i] = seed;
	}
	qsort(keys, n, sizeof(*keys), compare_keys);
	/* Used after the call, so that the call is no tail call that would hide this frame. */
	return keys[0] + keys[n - 1];
}

__attribute__((noinline)) static size_t format_numbers(char *buf, size_t size, unsigned seed)
{
	size_t total = 0;
	int n = (int)varied(2000);

	for (int i = 0; i < n; i++)
		total += (size_t)snprintf(buf, size, "%u %08x %.3f %e", seed + (unsigned)i, seed ^ (unsigned)i,
					  (double)i / 7.0, (double)seed * i);
	return total + (unsigned char)buf[0];
}

__attribute__((noinline)) static size_t format_words(char *buf, size_t size, unsigned seed)
{
	static const char *const words[] = { "alpha", "beta", "gamma", "delta" };
	size_t total = 0;
	int n = (int)varied(2000);

	for (int i = 0; i < n; i++)
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
	int n = (int)varied(2000);

	for (int i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%u.%u", seed + (unsigned)i, (unsigned)i);
		total += strtod(text, NULL);
	}
	return total;
}

/* Time in the program itself, with no library below it. */
__attribute__((noinline)) static unsigned long hash_round(unsigned seed)
{
	unsigned long h = seed;
	int n = (int)varied(400000);

	for (int i = 0; i < n; i++)
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
	unsigned n = varied(NR_WORDS);

	for (unsigned i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		snprintf(words[i], sizeof(words[i]), "shared-prefix-of-some-length-%08x", seed);
		order[i] = words[i];
	}
	qsort(order, n, sizeof(*order), compare_words);
	return (unsigned char)order[0][30] + (unsigned char)order[n - 1][31];
}

/* Moves a buffer larger than the caches back and forth. */
__attribute__((noinline)) static unsigned copy_round(unsigned char *buf, unsigned seed)
{
	unsigned bytes = varied(COPY_BYTES);

	for (int i = 0; i < 4; i++)
		memmove(buf + (i & 1) * 64, buf + 64 - (i & 1) * 64, bytes);
	buf[seed % bytes] ^= (unsigned char)seed;
	return buf[0];
}

int main(void)
{
	unsigned *keys = malloc(MOST(NR_KEYS) * sizeof(*keys));
	char (*words)[48] = malloc(MOST(NR_WORDS) * sizeof(*words));
	const char **order = malloc(MOST(NR_WORDS) * sizeof(*order));
	unsigned char *buf = calloc(1, MOST(COPY_BYTES) + 64);
	unsigned seed = 1;

	if (!keys || !words || !order || !buf)
		return 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		ROUND(0, sink += sort_round(keys, seed));
		ROUND(1, sink += format_round(seed));
		ROUND(2, sink += (unsigned long)parse_round(seed));
		ROUND(3, sink += hash_round(seed));
		ROUND(4, sink += words_round(words, order, seed));
		ROUND(5, sink += copy_round(buf, seed));
		seed += 7;
	}
#ifdef TIME_ROUNDS
	print_round_shares();
#endif
	free(buf);
	free(order);
	free(words);
	free(keys);
	return 0;
}
