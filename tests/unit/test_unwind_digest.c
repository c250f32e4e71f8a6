/*
 * unwind digest: two files that claim the same build-id with different CFI
 * (as a hostile target's file may claim libc's) get different digests,
 * and so different tables in the cache and on disk; the same bytes give
 * the same digest wherever the file is; a debug file's .debug_frame is
 * part of it. Fixtures: libunwind_twin_fp.so and libunwind_twin_nofp.so
 * of tests/fixtures/fixtures.mk (built with one given build-id).
 */
#include <dirent.h>
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

#define TWIN_FP "libunwind_twin_fp.so"
#define TWIN_NOFP "libunwind_twin_nofp.so"
/* The build-id both twins are linked with (UNWIND_TWIN_ID in fixtures.mk). */
static const uint8_t twin_id[20] = { 0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed,
				     0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed, 0x5e, 0xed };

static int open_fixture(const char *name)
{
	char path[PATH_MAX];
	int fd = open(fixture_path(name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void digest_of(const char *name, const char *debug_name, uint8_t digest[UNWIND_DIGEST_LEN])
{
	int fd = open_fixture(name), debug_fd = debug_name ? open_fixture(debug_name) : -1;

	assert_int_equal(unwind_digest__file(fd, debug_fd, digest), 0);
	close(fd);
	if (debug_fd >= 0)
		close(debug_fd);
}

/* The key the unwinder makes for a twin: the claimed build-id and the digest. */
static struct unwind_cache_key twin_key(const char *name, uint64_t ino)
{
	struct unwind_cache_key key = { .build_id_len = sizeof(twin_id), .dev = 8, .ino = ino };

	memcpy(key.build_id, twin_id, sizeof(twin_id));
	digest_of(name, NULL, key.digest);
	return key;
}

static struct unwind_table *built(const char *name)
{
	struct unwind_table *t = NULL;
	char err[160];
	int fd = open_fixture(name);

	assert_int_equal(unwind_table__build(fd, -1, &t, err, sizeof(err)), 0);
	close(fd);
	return t;
}

static bool same_rows(const struct unwind_table *a, const struct unwind_table *b)
{
	return a->base == b->base && a->end == b->end && a->nr_rows == b->nr_rows &&
	       memcmp(a->rows, b->rows, a->nr_rows * sizeof(a->rows[0])) == 0;
}

static void test_same_build_id_other_cfi(void **state)
{
	uint8_t fp[UNWIND_DIGEST_LEN], nofp[UNWIND_DIGEST_LEN], again[UNWIND_DIGEST_LEN];
	struct unwind_table *t_fp = built(TWIN_FP), *t_nofp = built(TWIN_NOFP);

	/* The fixtures are what the test needs: same claim, other rows. */
	assert_false(same_rows(t_fp, t_nofp));
	digest_of(TWIN_FP, NULL, fp);
	digest_of(TWIN_NOFP, NULL, nofp);
	digest_of(TWIN_FP, NULL, again);
	assert_memory_not_equal(fp, nofp, UNWIND_DIGEST_LEN);
	assert_memory_equal(fp, again, UNWIND_DIGEST_LEN);
	unwind_table__free(t_fp);
	unwind_table__free(t_nofp);
}

/* The same bytes under another name and inode: the same digest (a copied JDK is built once). */
static void test_copy_same_digest(void **state)
{
	uint8_t a[UNWIND_DIGEST_LEN], b[UNWIND_DIGEST_LEN];
	char dir[PATH_MAX], copy[PATH_MAX + 16], path[PATH_MAX];
	size_t len;
	char *bytes = fixture_read(fixture_path(TWIN_FP, path, sizeof(path)), &len);
	int fd;

	fixture_tmpdir(dir, sizeof(dir));
	snprintf(copy, sizeof(copy), "%s/copy.so", dir);
	fixture_write(copy, bytes, len);
	digest_of(TWIN_FP, NULL, a);
	fd = open(copy, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unwind_digest__file(fd, -1, b), 0);
	close(fd);
	assert_memory_equal(a, b, UNWIND_DIGEST_LEN);
	free(bytes);
	fixture_rmtree(dir);
}

/* The debug file's .debug_frame feeds the table: it is in the digest; a non-ELF file is not a digest. */
static void test_debug_file_in_digest(void **state)
{
	uint8_t without[UNWIND_DIGEST_LEN], with[UNWIND_DIGEST_LEN], other[UNWIND_DIGEST_LEN];
	char path[PATH_MAX];
	int fd;

	digest_of("libunwind_mixed.so", NULL, without);
	digest_of("libunwind_mixed.so", "libunwind_mixed.so.dbg", with);
	digest_of("libunwind_mixed.so", "libunwind_nocfi.so.dbg", other);
	assert_memory_not_equal(without, with, UNWIND_DIGEST_LEN);
	assert_memory_not_equal(with, other, UNWIND_DIGEST_LEN);
	fd = open(fixture_path("unwind_prog.frames", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unwind_digest__file(fd, -1, with), -ENOEXEC);
	close(fd);
}

/* The poisoning the digest prevents: the second twin must not get the first one's table. */
static void test_cache_keeps_twins_apart(void **state)
{
	struct unwind_cache *cache = unwind_cache__new(16 << 20);
	struct unwind_cache_key k_fp = twin_key(TWIN_FP, 1), k_nofp = twin_key(TWIN_NOFP, 2), k_fp2 = twin_key(TWIN_FP, 3);
	struct unwind_table *t_fp = built(TWIN_FP), *t_nofp = built(TWIN_NOFP);
	const struct unwind_table *c_fp, *c_nofp, *c_fp2;
	int fd;

	fd = open_fixture(TWIN_FP);
	c_fp = unwind_cache__get(cache, &k_fp, fd, -1);
	close(fd);
	fd = open_fixture(TWIN_NOFP);
	c_nofp = unwind_cache__get(cache, &k_nofp, fd, -1);
	close(fd);
	/* Another file with the fp twin's bytes shares its table without a build. */
	c_fp2 = unwind_cache__get(cache, &k_fp2, -1, -1);
	assert_non_null(c_fp);
	assert_non_null(c_nofp);
	assert_ptr_equal(c_fp, c_fp2);
	assert_true(c_fp != c_nofp);
	assert_true(same_rows(c_fp, t_fp));
	assert_true(same_rows(c_nofp, t_nofp));
	unwind_cache__put(cache, c_fp);
	unwind_cache__put(cache, c_fp2);
	unwind_cache__put(cache, c_nofp);
	unwind_cache__free(cache);
	unwind_table__free(t_fp);
	unwind_table__free(t_nofp);
}

/* On disk: the twin's table is not found under the other's digest, nor read when renamed to its name. */
static void test_disk_keeps_twins_apart(void **state)
{
	struct unwind_cache_key k_fp = twin_key(TWIN_FP, 1), k_nofp = twin_key(TWIN_NOFP, 2);
	struct unwind_table *t_fp = built(TWIN_FP), *t = NULL;
	char dir[PATH_MAX], from[PATH_MAX + 512], to[PATH_MAX + 512];
	struct unwind_disk *disk;
	struct dirent *d;
	DIR *dh;

	fixture_tmpdir(dir, sizeof(dir));
	assert_int_equal(chmod(dir, 0700), 0);
	disk = unwind_disk__open(dir, 64 << 20);
	assert_non_null(disk);
	assert_int_equal(unwind_disk__store(disk, twin_id, 20, k_fp.digest, 0, t_fp), 0);
	assert_int_equal(unwind_disk__load(disk, twin_id, 20, k_nofp.digest, 0, &t), -ENOENT);
	assert_null(t);
	/* The one file kept, renamed to the name the nofp twin's table would have. */
	dh = opendir(dir);
	assert_non_null(dh);
	while ((d = readdir(dh)) && d->d_name[0] == '.')
		;
	assert_non_null(d);
	assert_true((size_t)snprintf(from, sizeof(from), "%s/%s", dir, d->d_name) < sizeof(from));
	closedir(dh);
	snprintf(to, sizeof(to), "%s/", dir);
	for (size_t i = 0; i < UNWIND_DIGEST_LEN; i++)
		snprintf(to + strlen(to), sizeof(to) - strlen(to), "%02x", k_nofp.digest[i]);
	snprintf(to + strlen(to), sizeof(to) - strlen(to), "-n.unw");
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(unwind_disk__load(disk, twin_id, 20, k_nofp.digest, 0, &t), -EBADMSG);
	assert_null(t);
	assert_int_not_equal(access(to, F_OK), 0);
	unwind_disk__close(disk);
	unwind_table__free(t_fp);
	fixture_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_build_id_other_cfi),
		cmocka_unit_test(test_copy_same_digest),
		cmocka_unit_test(test_debug_file_in_digest),
		cmocka_unit_test(test_cache_keeps_twins_apart),
		cmocka_unit_test(test_disk_keeps_twins_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
