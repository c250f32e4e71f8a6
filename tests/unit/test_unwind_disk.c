/*
 * unwind disk store: a table kept and read back row for row, and every
 * file that is not exactly what was kept refused and removed (a flipped
 * byte, a table of another build or digest under this one's name, a cut
 * file, rows made by another build of the table builder, a file others
 * may write), the debug-file variant kept apart, the
 * directory's byte budget (oldest dropped), a directory others may write
 * refused, and the cache reading from disk instead of building.
 * The table comes from the fixture of tests/fixtures/fixtures.mk.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "unwind/disk.h"
#include "unwind/unwind.h"
#include "symbolizer_fixture.h"

#define FIXTURE "unwind_prog"

static const uint8_t id_a[20] = { 0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
static const uint8_t id_b[20] = { 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
/* Digests of the bytes a table is built from (any 32 bytes will do here); a file is named by its digest. */
static const uint8_t dg_a[UNWIND_DIGEST_LEN] = { 0xa1, [31] = 0xa2 };
static const uint8_t dg_b[UNWIND_DIGEST_LEN] = { 0xb1, [31] = 0xb2 };
#define NAME_A "a1" "000000000000000000000000000000000000000000000000000000000000" "a2-n.unw"
#define NAME_B "b1" "000000000000000000000000000000000000000000000000000000000000" "b2-n.unw"

struct fx {
	char dir[PATH_MAX];
	struct unwind_table *table;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[PATH_MAX], err[160];
	int fd;

	FIXTURE_CHECK(f);
	fixture_tmpdir(f->dir, sizeof(f->dir));
	FIXTURE_CHECK(chmod(f->dir, 0700) == 0);
	fd = open(fixture_path(FIXTURE, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	FIXTURE_CHECK(fd >= 0);
	FIXTURE_CHECK(unwind_table__build(fd, -1, &f->table, err, sizeof(err)) == 0);
	close(fd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	fixture_rmtree(f->dir);
	unwind_table__free(f->table);
	free(f);
	return 0;
}

static char *in_dir(const struct fx *f, const char *name, char *buf, size_t size)
{
	assert_true((size_t)snprintf(buf, size, "%s/%s", f->dir, name) < size);
	return buf;
}

static bool exists(const struct fx *f, const char *name)
{
	char path[PATH_MAX];

	return access(in_dir(f, name, path, sizeof(path)), F_OK) == 0;
}

static void assert_same_table(const struct unwind_table *a, const struct unwind_table *b)
{
	assert_int_equal(a->base, b->base);
	assert_int_equal(a->end, b->end);
	assert_int_equal(a->nr_rows, b->nr_rows);
	assert_memory_equal(a->rows, b->rows, a->nr_rows * sizeof(a->rows[0]));
}

static struct unwind_disk *open_disk(const struct fx *f, size_t max_bytes)
{
	struct unwind_disk *disk = unwind_disk__open(f->dir, max_bytes);

	assert_non_null(disk);
	return disk;
}

static void test_kept_and_read_back(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;

	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -ENOENT);
	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), 0);
	assert_same_table(f->table, t);
	unwind_table__free(t);
	/* Built with a debug file is another table. */
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 1, &t), -ENOENT);
	assert_null(t);
	unwind_disk__close(disk);
}

/* Flips one byte at offset from the end (1: the last row byte) of the file for id_a. */
static void flip_byte(const struct fx *f, off_t from_end)
{
	char path[PATH_MAX];
	int fd = open(in_dir(f, NAME_A, path, sizeof(path)), O_RDWR);
	off_t at;
	uint8_t b;

	assert_true(fd >= 0);
	at = lseek(fd, -from_end, SEEK_END);
	assert_true(at > 0);
	assert_int_equal(pread(fd, &b, 1, at), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, at), 1);
	close(fd);
}

static void test_corrupted_refused(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;

	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	flip_byte(f, 1);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EBADMSG);
	assert_null(t);
	assert_false(exists(f, NAME_A));
	unwind_disk__close(disk);
}

static void test_foreign_refused(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;
	char a[PATH_MAX], b[PATH_MAX];

	/* Build b's table, renamed to a's name: its header names b. */
	assert_int_equal(unwind_disk__store(disk, id_b, 20, dg_b, 0, f->table), 0);
	assert_int_equal(rename(in_dir(f, NAME_B, b, sizeof(b)), in_dir(f, NAME_A, a, sizeof(a))), 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EBADMSG);
	assert_null(t);
	assert_false(exists(f, NAME_A));
	/* The same digest claimed by another build-id: refused as well. */
	assert_int_equal(unwind_disk__store(disk, id_b, 20, dg_a, 0, f->table), 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EBADMSG);
	assert_null(t);
	unwind_disk__close(disk);
}

static void test_cut_short_refused(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;
	char path[PATH_MAX];
	struct stat st;

	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	assert_int_equal(stat(in_dir(f, NAME_A, path, sizeof(path)), &st), 0);
	assert_int_equal(truncate(path, st.st_size - 1), 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EBADMSG);
	assert_false(exists(f, NAME_A));
	unwind_disk__close(disk);
}

/* FNV-1a, as the format says (disk.c): the file's checksum. */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * Rewrites the file for id_a with its builder field (bytes 16..23 of the
 * 112-byte header; the checksum is its last 8) xor-ed with flip, and the
 * checksum made right again: only the builder then tells the file apart.
 */
static void rewrite_builder(const struct fx *f, uint64_t flip)
{
	char path[PATH_MAX];
	size_t len;
	uint8_t *bytes = (uint8_t *)fixture_read(in_dir(f, NAME_A, path, sizeof(path)), &len);
	uint64_t builder, sum;
	int fd;

	assert_true(len > 112);
	memcpy(&builder, bytes + 16, 8);
	builder ^= flip;
	memcpy(bytes + 16, &builder, 8);
	memset(bytes + 104, 0, 8);
	sum = fnv1a(fnv1a(0xcbf29ce484222325ull, bytes, 112), bytes + 112, len - 112);
	memcpy(bytes + 104, &sum, 8);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	close(fd);
	free(bytes);
}

/* Rows made by another build of the table builder are never read. */
static void test_other_builder_refused(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;

	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	/* The rewrite itself keeps a file good: the same builder reads it. */
	rewrite_builder(f, 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), 0);
	unwind_table__free(t);
	t = NULL;
	rewrite_builder(f, 1);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EBADMSG);
	assert_null(t);
	assert_false(exists(f, NAME_A));
	unwind_disk__close(disk);
}

static void test_writable_by_others_refused(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_table *t = NULL;
	char path[PATH_MAX];

	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	assert_int_equal(chmod(in_dir(f, NAME_A, path, sizeof(path)), 0666), 0);
	assert_int_equal(unwind_disk__load(disk, id_a, 20, dg_a, 0, &t), -EPERM);
	assert_null(t);
	unwind_disk__close(disk);
	/* A directory others may write is not used at all. */
	assert_int_equal(chmod(f->dir, 0777), 0);
	assert_null(unwind_disk__open(f->dir, 64 << 20));
	assert_int_equal(chmod(f->dir, 0700), 0);
}

static void test_budget_drops_oldest(void **state)
{
	struct fx *f = *state;
	size_t one = 128 + f->table->nr_rows * sizeof(f->table->rows[0]);
	struct unwind_disk *disk = open_disk(f, one + one / 2);
	struct timespec old[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
	char path[PATH_MAX];

	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), 0);
	assert_int_equal(utimensat(AT_FDCWD, in_dir(f, NAME_A, path, sizeof(path)), old, 0), 0);
	assert_int_equal(unwind_disk__store(disk, id_b, 20, dg_b, 0, f->table), 0);
	assert_false(exists(f, NAME_A));
	assert_true(exists(f, NAME_B));
	unwind_disk__close(disk);
	/* A table larger than the whole budget is not kept. */
	disk = open_disk(f, 64);
	assert_int_equal(unwind_disk__store(disk, id_a, 20, dg_a, 0, f->table), -EFBIG);
	unwind_disk__close(disk);
}

static void test_cache_reads_from_disk(void **state)
{
	struct fx *f = *state;
	struct unwind_disk *disk = open_disk(f, 64 << 20);
	struct unwind_cache_key key = { .build_id_len = 20 };
	struct unwind_cache_stats s;
	char path[PATH_MAX];
	int fd;

	memcpy(key.build_id, id_a, 20);
	memcpy(key.digest, dg_a, sizeof(key.digest));
	fd = open(fixture_path(FIXTURE, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	for (int run = 0; run < 2; run++) {
		struct unwind_cache *cache = unwind_cache__new(64 << 20);
		const struct unwind_table *t;

		unwind_cache__set_disk(cache, disk);
		t = unwind_cache__get(cache, &key, fd, -1);
		assert_non_null(t);
		assert_same_table(f->table, t);
		unwind_cache__stats(cache, &s);
		assert_int_equal(s.disk_read, run);
		assert_int_equal(s.disk_written, !run);
		unwind_cache__put(cache, t);
		unwind_cache__free(cache);
	}
	close(fd);
	unwind_disk__close(disk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_kept_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupted_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_short_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_builder_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writable_by_others_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_budget_drops_oldest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_reads_from_disk, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
