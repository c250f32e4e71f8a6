/*
 * unwind_tables: builds the unwind table of each file named, RUNS times
 * (default 5), and prints per file the median and the fastest build time,
 * the FDEs read, the rows kept (merged, gaps included), the rows made
 * JBPF_CFA_STOP and PLT rows, the bytes the table takes, and the median
 * time of the digest that keys the table (unwind_digest__file: what a run
 * pays per file when the table is cached, in memory or on disk), and the
 * FDE ranges cut short because libdw's work budget ran out (cut).
 *
 *   unwind_tables [-n RUNS] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "unwind/unwind.h"

#define MAX_RUNS 101

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median time of the file's digest, in ns; 0 when it cannot be made. */
static uint64_t digest_ns(int fd, int runs)
{
	uint8_t digest[UNWIND_DIGEST_LEN];
	uint64_t ns[MAX_RUNS];

	for (int i = 0; i < runs; i++) {
		uint64_t start = clock__monotonic_ns();

		if (unwind_digest__file(fd, -1, digest))
			return 0;
		ns[i] = clock__monotonic_ns() - start;
	}
	qsort(ns, runs, sizeof(ns[0]), cmp_u64);
	return ns[runs / 2];
}

static int bench_file(const char *path, int runs)
{
	uint64_t ns[MAX_RUNS], digest;
	struct unwind_table *t = NULL;
	char err[256];
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "unwind_tables: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		unwind_table__free(t);
		ret = unwind_table__build(fd, -1, &t, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "unwind_tables: %s: %s\n", path, err);
			close(fd);
			return 1;
		}
		ns[i] = t->stats.build_ns;
	}
	digest = digest_ns(fd, runs);
	close(fd);
	qsort(ns, runs, sizeof(ns[0]), cmp_u64);
	printf("%-60s %9.1f %9.1f %8lu %9zu %6lu %4lu %10zu %9.2f %5lu\n", path, ns[runs / 2] / 1e6, ns[0] / 1e6,
	       (unsigned long)t->stats.fdes, t->nr_rows, (unsigned long)t->stats.rows_stop,
	       (unsigned long)t->stats.rows_plt, unwind_table__bytes(t), digest / 1e6,
	       (unsigned long)t->stats.ranges_over_work);
	unwind_table__free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 5, opt, failed = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (runs = atoi(optarg)) < 1 || runs > MAX_RUNS) {
			fprintf(stderr, "usage: unwind_tables [-n RUNS (1..%d)] FILE...\n", MAX_RUNS);
			return 2;
		}
	}
	printf("%-60s %9s %9s %8s %9s %6s %4s %10s %9s %5s\n", "file", "median_ms", "min_ms", "fdes", "rows", "stop",
	       "plt", "bytes", "digest_ms", "cut");
	for (int i = optind; i < argc; i++)
		failed |= bench_file(argv[i], runs);
	return failed;
}
