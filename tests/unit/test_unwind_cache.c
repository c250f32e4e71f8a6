/*
 * unwind cache: a table built once per file identity (build-id, else
 * device and inode), the byte budget enforced by dropping the least
 * recently used, a table held across its eviction still valid (ASan would
 * see a use after free), failures remembered, and the counters.
 * Tables come from the fixtures of tests/fixtures/fixtures.mk.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "unwind/unwind.h"
#include "symbolizer_fixture.h"

/* The fixtures: two files with tables, one without CFI. */
#define FILE_A "unwind_prog"
#define FILE_B "libunwind_nocfi.so.full"
#define FILE_NONE "libunwind_nocfi.so"

static int open_fixture(const char *name)
{
	char path[PATH_MAX];
	int fd = open(fixture_path(name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static struct unwind_cache_key inode_key(uint64_t ino)
{
	struct unwind_cache_key key = { .dev = 8, .ino = ino };

	return key;
}

static const struct unwind_table *get(struct unwind_cache *cache, const struct unwind_cache_key *key,
				      const char *name)
{
	int fd = open_fixture(name);
	const struct unwind_table *t = unwind_cache__get(cache, key, fd, -1);

	close(fd);
	return t;
}

static struct unwind_cache_stats stats_of(const struct unwind_cache *cache)
{
	struct unwind_cache_stats s;

	unwind_cache__stats(cache, &s);
	return s;
}

/* Bytes the cache charges for the table of name. */
static uint64_t charged_bytes(const char *name)
{
	struct unwind_cache *cache = unwind_cache__new(SIZE_MAX);
	struct unwind_cache_key key = inode_key(1);
	const struct unwind_table *t = get(cache, &key, name);
	uint64_t bytes;

	assert_non_null(t);
	bytes = stats_of(cache).bytes;
	assert_true(bytes >= unwind_table__bytes(t));
	unwind_cache__put(cache, t);
	unwind_cache__free(cache);
	return bytes;
}

static void test_built_once(void **state)
{
	struct unwind_cache *cache = unwind_cache__new(1 << 20);
	struct unwind_cache_key key = inode_key(1);
	const struct unwind_table *t1 = get(cache, &key, FILE_A), *t2;
	struct unwind_cache_stats s;

	assert_non_null(t1);
	/* Found by key: the fd is not even read. */
	t2 = unwind_cache__get(cache, &key, -1, -1);
	assert_ptr_equal(t1, t2);
	s = stats_of(cache);
	assert_int_equal(s.built, 1);
	assert_int_equal(s.tables, 1);
	assert_int_equal(s.rows, t1->nr_rows);
	assert_true(s.build_ns > 0);
	assert_true(s.bytes >= unwind_table__bytes(t1));
	unwind_cache__put(cache, t1);
	unwind_cache__put(cache, t2);
	unwind_cache__free(cache);
}

/* Same build-id: one table, whatever file it is found in; no build-id: device and inode. */
static void test_identity(void **state)
{
	struct unwind_cache *cache = unwind_cache__new(1 << 20);
	struct unwind_cache_key a = { .build_id = { 1, 2, 3 }, .build_id_len = 20, .dev = 1, .ino = 1 };
	struct unwind_cache_key b = a, c = a, d = inode_key(1), e = inode_key(2);
	const struct unwind_table *ta, *tb, *tc, *td, *te;

	b.dev = 2;
	b.ino = 99;
	c.build_id[0] = 9;
	ta = get(cache, &a, FILE_A);
	tb = unwind_cache__get(cache, &b, -1, -1);
	assert_ptr_equal(ta, tb);
	tc = get(cache, &c, FILE_A);
	td = get(cache, &d, FILE_A);
	te = get(cache, &e, FILE_A);
	assert_true(tc != ta && td != ta && td != tc && te != td);
	assert_int_equal(stats_of(cache).built, 4);
	for (const struct unwind_table **t = (const struct unwind_table *[]){ ta, tb, tc, td, te, NULL }; *t; t++)
		unwind_cache__put(cache, *t);
	unwind_cache__free(cache);
}

/* A budget for A or B but not both: each new one drops the other, least recently used first. */
static void test_evicted_by_bytes(void **state)
{
	uint64_t a_bytes = charged_bytes(FILE_A), b_bytes = charged_bytes(FILE_B);
	struct unwind_cache *cache = unwind_cache__new(a_bytes + b_bytes - 1);
	struct unwind_cache_key a = inode_key(1), b = inode_key(2);
	struct unwind_cache_stats s;

	unwind_cache__put(cache, get(cache, &a, FILE_A));
	unwind_cache__put(cache, get(cache, &b, FILE_B));
	s = stats_of(cache);
	assert_int_equal(s.evicted, 1);
	assert_int_equal(s.tables, 1);
	assert_int_equal(s.bytes, b_bytes);
	unwind_cache__put(cache, get(cache, &a, FILE_A));
	s = stats_of(cache);
	assert_int_equal(s.built, 3);
	assert_int_equal(s.evicted, 2);
	assert_int_equal(s.bytes, a_bytes);
	assert_true(s.bytes <= a_bytes + b_bytes - 1);
	unwind_cache__free(cache);
}

/* A use refreshes: with room for two small entries, the one used last stays. */
static void test_least_recently_used(void **state)
{
	uint64_t b_bytes = charged_bytes(FILE_B);
	struct unwind_cache *cache = unwind_cache__new(2 * b_bytes);
	struct unwind_cache_key k1 = inode_key(1), k2 = inode_key(2), k3 = inode_key(3);

	unwind_cache__put(cache, get(cache, &k1, FILE_B));
	unwind_cache__put(cache, get(cache, &k2, FILE_B));
	unwind_cache__put(cache, unwind_cache__get(cache, &k1, -1, -1)); /* k1 now the newest */
	unwind_cache__put(cache, get(cache, &k3, FILE_B));               /* drops k2 */
	assert_int_equal(stats_of(cache).evicted, 1);
	assert_null(unwind_cache__get(cache, &k2, -1, -1));
	unwind_cache__put(cache, unwind_cache__get(cache, &k1, -1, -1));
	assert_int_equal(stats_of(cache).built, 3);
	unwind_cache__free(cache);
}

/* A table held when it is evicted stays whole until put back. */
static void test_held_across_eviction(void **state)
{
	uint64_t a_bytes = charged_bytes(FILE_A), b_bytes = charged_bytes(FILE_B);
	struct unwind_cache *cache = unwind_cache__new(a_bytes + b_bytes - 1);
	struct unwind_cache_key a = inode_key(1), b = inode_key(2);
	const struct unwind_table *held = get(cache, &a, FILE_A), *other;
	struct jbpf_unwind_row *copy;
	size_t nr_rows;

	assert_non_null(held);
	nr_rows = held->nr_rows;
	copy = malloc(nr_rows * sizeof(*copy));
	memcpy(copy, held->rows, nr_rows * sizeof(*copy));
	other = get(cache, &b, FILE_B);
	assert_non_null(other);
	assert_int_equal(stats_of(cache).evicted, 1);
	assert_int_equal(stats_of(cache).tables, 1);
	assert_int_equal(held->nr_rows, nr_rows);
	assert_memory_equal(held->rows, copy, nr_rows * sizeof(*copy));
	unwind_cache__put(cache, held);
	unwind_cache__put(cache, other);
	unwind_cache__free(cache);
	free(copy);
}

/* A file without CFI is tried once, then known. */
static void test_failure_remembered(void **state)
{
	struct unwind_cache *cache = unwind_cache__new(1 << 20);
	struct unwind_cache_key key = inode_key(5), unknown = inode_key(6);
	struct unwind_cache_stats s;

	assert_null(get(cache, &key, FILE_NONE));
	assert_null(get(cache, &key, FILE_NONE));
	/* The same key with a file that has CFI: still the remembered failure. */
	assert_null(get(cache, &key, FILE_A));
	s = stats_of(cache);
	assert_int_equal(s.failed, 1);
	assert_int_equal(s.built, 0);
	assert_int_equal(s.tables, 0);
	assert_true(s.bytes > 0);
	/* No file to read is no failure of a file. */
	assert_null(unwind_cache__get(cache, &unknown, -1, -1));
	assert_int_equal(stats_of(cache).failed, 1);
	unwind_cache__put(cache, NULL);
	unwind_cache__free(cache);
}

/* A table larger than the whole budget is refused, and remembered as such. */
static void test_table_over_budget(void **state)
{
	struct unwind_cache *cache = unwind_cache__new(256);
	struct unwind_cache_key key = inode_key(1);
	struct unwind_cache_stats s;

	assert_null(get(cache, &key, FILE_A));
	assert_null(get(cache, &key, FILE_A));
	s = stats_of(cache);
	assert_int_equal(s.failed, 1);
	assert_int_equal(s.tables, 0);
	assert_true(s.bytes <= 256);
	unwind_cache__free(cache);
}

static void test_free_null(void **state)
{
	unwind_cache__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built_once),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_evicted_by_bytes),
		cmocka_unit_test(test_least_recently_used),
		cmocka_unit_test(test_held_across_eviction),
		cmocka_unit_test(test_failure_remembered),
		cmocka_unit_test(test_table_over_budget),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
