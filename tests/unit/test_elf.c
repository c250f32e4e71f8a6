/*
 * elf and debuginfo: symbols at their runtime addresses through the bias
 * formula (fixture libraries dlopened here, so the loader decides the
 * addresses), build-id and debuglink reading, separate debug files, and
 * hostile files: truncated, garbage and bit-flipped ELF.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <elf.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/elf.h"
#include "symbolizer/procmaps.h"
#include "symbolizer/symtab.h"
#include "symbolizer_fixture.h"
#include "../shared/sparse_elf.h"

static void *fixture_dlsym(void *handle, const char *name)
{
	void *addr = dlsym(handle, name);

	assert_non_null(addr);
	return addr;
}

/* The symbols of a file, sealed. */
static struct symtab *read_symbols(const char *path, struct elf_image *img)
{
	struct symtab *st = symtab__new();
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(elf__read_fd(fd, img, st), 0);
	close(fd);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	return st;
}

/* Resolves runtime address addr of this process through the file mapped there. */
static void assert_resolves(const char *file, uint64_t addr, const char *expected,
			    uint64_t *vaddr_out)
{
	char path[PATH_MAX];
	struct procmaps_entry m = fixture_own_mapping(addr);
	struct elf_image img;
	struct symtab *st;
	uint64_t vaddr;
	long idx;

	fixture_path(file, path, sizeof(path));
	assert_string_equal(m.path, path);
	st = read_symbols(path, &img);
	assert_int_equal(elf__vaddr(&img, m.start, m.pgoff, addr, &vaddr), 0);
	idx = symtab__lookup(st, vaddr);
	assert_true(idx >= 0);
	assert_string_equal(symtab__name(st, idx), expected);
	if (vaddr_out)
		*vaddr_out = vaddr;
	symtab__free(st);
	free(m.path);
}

static void library_symbols_resolve_at_runtime_addresses(void **state)
{
	void *h = fixture_dlopen("libplain.so");
	uint64_t square = (uint64_t)(uintptr_t)fixture_dlsym(h, "plain_square");

	assert_resolves("libplain.so", square, "plain_square", NULL);
	assert_resolves("libplain.so", square + 1, "plain_square", NULL);
	assert_resolves("libplain.so", (uint64_t)(uintptr_t)fixture_dlsym(h, "plain_cube"),
			"plain_cube", NULL);
	assert_resolves("libplain.so", fixture_call_getter(h, "plain_hidden_address"),
			"plain_hidden_helper", NULL);
	dlclose(h);
}

/* libvaddr.so is linked at 0x10000000: p_vaddr != p_offset, and the bias is not the map start. */
static void segment_vaddr_unlike_file_offset(void **state)
{
	void *h = fixture_dlopen("libvaddr.so");
	uint64_t square = (uint64_t)(uintptr_t)fixture_dlsym(h, "vaddr_square"), vaddr;
	struct procmaps_entry m = fixture_own_mapping(square);

	assert_resolves("libvaddr.so", square, "vaddr_square", &vaddr);
	assert_true(vaddr >= 0x10000000);
	assert_true(vaddr != square - m.start + m.pgoff);
	assert_resolves("libvaddr.so", fixture_call_getter(h, "vaddr_hidden_address"),
			"vaddr_hidden_helper", NULL);
	free(m.path);
	dlclose(h);
}

static void reads_build_id_as_laid_out_in_debug_root(void **state)
{
	char path[PATH_MAX], debug[PATH_MAX + 200], hex[2 * ELF_MAX_BUILD_ID + 1];
	struct elf_image img;
	struct symtab *st;
	size_t i;

	st = read_symbols(fixture_path("libbuildid.so", path, sizeof(path)), &img);
	assert_int_equal(img.build_id_len, 20);
	for (i = 0; i < img.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img.build_id[i]);
	/* The Makefile named the debug file after readelf's view of the build-id. */
	snprintf(debug, sizeof(debug), "%s/.build-id/%.2s/%s.debug",
		 fixture_path("debugroot", path, sizeof(path)), hex, hex + 2);
	assert_int_equal(access(debug, R_OK), 0);
	/* Stripped: .dynsym only, which has the exported functions but not the static one. */
	assert_false(img.has_symtab);
	assert_true(img.nr_symbols > 0);
	assert_true(img.nr_loads >= 2);
	symtab__free(st);
}

static void reads_debuglink_and_its_crc(void **state)
{
	char path[PATH_MAX];
	struct elf_image img;
	struct symtab *st;
	uint32_t crc;
	int fd;

	st = read_symbols(fixture_path("libdebuglink.so", path, sizeof(path)), &img);
	assert_string_equal(img.debuglink, "libdebuglink.so.dbg");
	fd = open(fixture_path("libdebuglink.so.dbg", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(debuginfo__crc32(fd, &crc), 0);
	assert_int_equal(crc, img.debuglink_crc);
	close(fd);
	symtab__free(st);

	st = read_symbols(fixture_path("libbadcrc.so", path, sizeof(path)), &img);
	assert_string_equal(img.debuglink, "libbadcrc.so.dbg");
	fd = open(fixture_path("libbadcrc.so.dbg", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_int_equal(debuginfo__crc32(fd, &crc), 0);
	assert_int_not_equal(crc, img.debuglink_crc);
	close(fd);
	symtab__free(st);

	/* Unstripped files have a .symtab and no debuglink. */
	st = read_symbols(fixture_path("libplain.so", path, sizeof(path)), &img);
	assert_true(img.has_symtab);
	assert_string_equal(img.debuglink, "");
	symtab__free(st);
}

/* Finds the debug file of a fixture, and resolves its static function with it. */
static int debug_file_names_hidden(const char *lib, const char *getter, const char *expected)
{
	char path[PATH_MAX], root[PATH_MAX];
	void *h = fixture_dlopen(lib);
	uint64_t addr = fixture_call_getter(h, getter), vaddr;
	struct procmaps_entry m = fixture_own_mapping(addr);
	struct debuginfo_where where = {
		.proc_root = "/proc",
		.tgid = (uint32_t)getpid(),
		.debug_root = fixture_path("debugroot", root, sizeof(root)),
		.path = fixture_path(lib, path, sizeof(path)),
		.uid = getuid(),
	};
	struct elf_image img, debug_img;
	struct symtab *st = read_symbols(path, &img), *debug_st;
	long idx;
	int fd, found;

	/* The stripped file alone cannot name it. */
	assert_int_equal(elf__vaddr(&img, m.start, m.pgoff, addr, &vaddr), 0);
	idx = symtab__lookup(st, vaddr);
	assert_true(idx < 0 || strcmp(symtab__name(st, idx), expected) != 0);
	symtab__free(st);

	fd = debuginfo__open(&where, &img);
	found = fd >= 0;
	if (found) {
		debug_st = symtab__new();
		assert_int_equal(elf__read_fd(fd, &debug_img, debug_st), 0);
		close(fd);
		symtab__finish(debug_st, SYMTAB_OVERLAP_NEST);
		idx = symtab__lookup(debug_st, vaddr);
		assert_true(idx >= 0);
		assert_string_equal(symtab__name(debug_st, idx), expected);
		symtab__free(debug_st);
	}
	free(m.path);
	dlclose(h);
	return found;
}

static void finds_debug_files_by_build_id_and_debuglink(void **state)
{
	assert_true(debug_file_names_hidden("libbuildid.so", "buildid_hidden_address",
					    "buildid_hidden_helper"));
	assert_true(debug_file_names_hidden("libdebuglink.so", "debuglink_hidden_address",
					    "debuglink_hidden_helper"));
	assert_true(debug_file_names_hidden("libdotdebug.so", "dotdebug_hidden_address",
					    "dotdebug_hidden_helper"));
	/* Its debuglink file has the wrong CRC: refused. */
	assert_false(debug_file_names_hidden("libbadcrc.so", "badcrc_hidden_address",
					     "badcrc_hidden_helper"));
}

static void vaddr_conversion_checks_ranges(void **state)
{
	struct elf_image img = { 0 };
	uint64_t vaddr = 0;

	img.nr_loads = 2;
	img.loads[0] = (struct elf_load){ .offset = 0, .vaddr = 0x400000, .filesz = 0x800 };
	img.loads[1] = (struct elf_load){ .offset = 0x1000, .vaddr = 0x601000, .filesz = 0x2000 };
	/* A mapping at 0x7f0000001000 of file offset 0x1000. */
	assert_int_equal(elf__vaddr(&img, 0x7f0000001000ull, 0x1000, 0x7f0000001234ull, &vaddr), 0);
	assert_true(vaddr == 0x601234);
	assert_int_equal(elf__vaddr(&img, 0x7f0000000000ull, 0, 0x7f0000000010ull, &vaddr), 0);
	assert_true(vaddr == 0x400010);
	/* Between segments, past the end, below the mapping, and wrapping offsets. */
	assert_int_equal(elf__vaddr(&img, 0x7f0000000000ull, 0, 0x7f0000000900ull, &vaddr), -ENOENT);
	assert_int_equal(elf__vaddr(&img, 0x7f0000001000ull, 0x1000, 0x7f0000003000ull, &vaddr), -ENOENT);
	assert_int_equal(elf__vaddr(&img, 0x7f0000001000ull, 0x1000, 0x1000, &vaddr), -ENOENT);
	assert_int_equal(elf__vaddr(&img, 0, UINT64_MAX, 0x10, &vaddr), -ENOENT);
}

/* Reads data as an ELF file; whatever it returns, it must not crash. */
static int read_bytes(const char *dir, const unsigned char *data, size_t len)
{
	char path[PATH_MAX + 16];
	struct elf_image img;
	struct symtab *st = symtab__new();
	int fd, err;

	snprintf(path, sizeof(path), "%s/hostile", dir);
	fixture_write(path, data, len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	err = elf__read_fd(fd, &img, st);
	close(fd);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	/* Exercise the result too: lookups over whatever was read. */
	symtab__lookup(st, 0x1000);
	symtab__free(st);
	assert_true(img.nr_loads <= ELF_MAX_LOADS && img.build_id_len <= ELF_MAX_BUILD_ID);
	assert_true(strlen(img.debuglink) < ELF_MAX_DEBUGLINK);
	return err;
}

static void hostile_files_resolve_nothing_and_never_crash(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX];
	static const size_t cuts[] = { 0, 1, 4, 16, 52, 63, 64, 65, 100, 500, 1000, 4096, 8000 };
	unsigned char *good, *copy;
	size_t len, i;
	uint32_t seed = 12345;
	unsigned char junk[4096];

	fixture_tmpdir(dir, sizeof(dir));
	good = (unsigned char *)fixture_read(fixture_path("libdebuglink.so", path, sizeof(path)), &len);
	copy = malloc(len);

	/* Truncated: the ELF header alone is 64 bytes; anything shorter is no ELF at all. */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		int err = read_bytes(dir, good, cuts[i] < len ? cuts[i] : len - 1);

		if (cuts[i] < 64)
			assert_int_equal(err, -ENOEXEC);
	}
	read_bytes(dir, good, len / 2);
	read_bytes(dir, good, len - 1);

	/* Garbage, with and without the ELF magic. */
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)((i * 2654435761u) >> 13);
	assert_int_equal(read_bytes(dir, junk, sizeof(junk)), -ENOEXEC);
	memcpy(junk, good, 16);
	read_bytes(dir, junk, sizeof(junk));

	/* Bit flips anywhere: headers, section table, symbol and string tables. */
	for (i = 0; i < 300; i++) {
		size_t flips, f;

		memcpy(copy, good, len);
		flips = 1 + i % 8;
		for (f = 0; f < flips; f++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % len] ^= (unsigned char)(1u << (seed % 8));
		}
		read_bytes(dir, copy, len);
	}
	/* In memory too, as for the vDSO. */
	{
		struct elf_image img;
		struct symtab *st = symtab__new();

		assert_int_equal(elf__read_memory(junk + 16, 100, &img, st), -ENOEXEC);
		elf__read_memory(good, len / 3, &img, st);
		symtab__free(st);
	}
	free(copy);
	free(good);
	fixture_rmtree(dir);
}

/* A copy of fixture name at dir/name; the path goes to buf. */
static void copy_fixture(const char *name, const char *dir, char *buf, size_t size)
{
	char from[PATH_MAX], *content;
	size_t len;

	content = fixture_read(fixture_path(name, from, sizeof(from)), &len);
	snprintf(buf, size, "%s/%s", dir, name);
	fixture_write(buf, content, len);
	free(content);
}

/*
 * The debuglink is the target's to name, and so is the directory beside
 * its file: a symlink there, even to the right debug file, is not
 * followed. The same file in its place is found.
 */
static void debuglink_symlink_is_not_followed(void **state)
{
	char dir[PATH_MAX], lib[PATH_MAX + 64], dbg[PATH_MAX + 64], real_dbg[PATH_MAX], root[PATH_MAX];
	struct debuginfo_where where = {
		.proc_root = "/proc",
		.tgid = (uint32_t)getpid(),
		.uid = getuid(),
	};
	struct elf_image img;
	struct symtab *st;
	int fd;

	fixture_tmpdir(dir, sizeof(dir));
	copy_fixture("libdebuglink.so", dir, lib, sizeof(lib));
	where.debug_root = fixture_path("no-debugroot", root, sizeof(root));
	where.path = lib;
	st = read_symbols(lib, &img);
	symtab__free(st);
	assert_string_equal(img.debuglink, "libdebuglink.so.dbg");
	fixture_path("libdebuglink.so.dbg", real_dbg, sizeof(real_dbg));
	snprintf(dbg, sizeof(dbg), "%s/libdebuglink.so.dbg", dir);
	assert_int_equal(symlink(real_dbg, dbg), 0);
	assert_int_equal(debuginfo__open(&where, &img), -ENOENT);

	assert_int_equal(unlink(dbg), 0);
	copy_fixture("libdebuglink.so.dbg", dir, dbg, sizeof(dbg));
	fd = debuginfo__open(&where, &img);
	assert_true(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		/* Root's, but not readable by the process's user: not read for it. */
		where.uid = 4000;
		assert_int_equal(chmod(dbg, 0600), 0);
		assert_int_equal(debuginfo__open(&where, &img), -ENOENT);
		assert_int_equal(chmod(dbg, 0644), 0);
		fd = debuginfo__open(&where, &img);
		assert_true(fd >= 0);
		close(fd);
		/* Another user's. */
		assert_int_equal(chown(dbg, 12345, 12345), 0);
		assert_int_equal(debuginfo__open(&where, &img), -ENOENT);
	}
	fixture_rmtree(dir);
}

/*
 * A .symtab claiming 1 GiB in a sparse file (free for whoever makes it):
 * not read, and so not in memory; the file still counts as unstripped.
 */
static void huge_symtab_in_a_sparse_file_is_not_read(void **state)
{
	char dir[PATH_MAX], lib[PATH_MAX + 64];
	struct rusage before, after;
	struct elf_image img;
	struct symtab *st = symtab__new();
	int fd;

	fixture_tmpdir(dir, sizeof(dir));
	copy_fixture("libplain.so", dir, lib, sizeof(lib));
	fd = open(lib, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	sparse_elf_make_symtab_huge(fd, 1ull << 30);
	assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
	assert_int_equal(elf__read_fd(fd, &img, st), 0);
	assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
	assert_true(img.over_bound);
	assert_true(img.has_symtab);
	/* ru_maxrss is in KiB: the 1 GiB section would have raised it by as much. */
	assert_true(after.ru_maxrss - before.ru_maxrss < 128 * 1024);
	close(fd);
	symtab__free(st);
	fixture_rmtree(dir);
}

/*
 * A header counting 2^20 sections, their table in holes (a few KiB on
 * disk): refused before libelf is given the file, which would allocate a
 * descriptor for each and read the 64 MiB table (2^24 of them took 3.4 GB
 * and 20 s); elf__find_symbols the same.
 */
static void section_count_past_the_bound_is_refused(void **state)
{
	char dir[PATH_MAX], lib[PATH_MAX + 64];
	const char *names[] = { "plain_square" };
	struct rusage before, after;
	struct elf_image img;
	struct symtab *st = symtab__new();
	uint64_t vaddr;
	int fd;

	fixture_tmpdir(dir, sizeof(dir));
	copy_fixture("libplain.so", dir, lib, sizeof(lib));
	fd = open(lib, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	sparse_elf_count_sections(fd, 1u << 20);
	assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
	assert_int_equal(elf__read_fd(fd, &img, st), -ENOEXEC);
	assert_int_equal(elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 1, names, 1, &vaddr, &img), -ENOEXEC);
	assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
	assert_true(after.ru_maxrss - before.ru_maxrss < 32 * 1024);
	close(fd);
	symtab__free(st);
	fixture_rmtree(dir);
}

/*
 * The functions -e nativemem probes are found in .dynsym by name (and
 * a static one in .symtab when asked), and
 * their file offsets hold their code: libvaddr.so (p_vaddr != p_offset)
 * read at the offset found gives the bytes the loader put at the
 * function's runtime address. A static function (in .symtab only) and a
 * name the file lacks are not found.
 */
static void dynamic_functions_and_their_file_offsets(void **state)
{
	static const char *const names[] = { "vaddr_cube", "vaddr_hidden_helper", "no_such_function", "vaddr_square" };
	void *h = fixture_dlopen("libvaddr.so");
	uint64_t vaddrs[4], offset;
	unsigned char in_file[16];
	struct elf_image img;
	char path[4096];
	int fd;

	(void)state;
	fd = open(fixture_path("libvaddr.so", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 0, names, 4, vaddrs, &img), 2);
	assert_true(vaddrs[0] && vaddrs[3]);
	assert_int_equal(vaddrs[1], 0);
	assert_int_equal(vaddrs[2], 0);
	for (int i = 0; i < 4; i += 3) {
		assert_int_equal(elf__file_offset(&img, vaddrs[i], &offset), 0);
		assert_int_equal(pread(fd, in_file, sizeof(in_file), (off_t)offset), (ssize_t)sizeof(in_file));
		assert_memory_equal(in_file, fixture_dlsym(h, names[i]), sizeof(in_file));
	}
	/* Below the first segment, or past the last one's file bytes: no offset. */
	assert_int_equal(elf__file_offset(&img, 0, &offset), -ENOENT);
	assert_int_equal(elf__file_offset(&img, UINT64_MAX, &offset), -ENOENT);
	/* .symtab too: the static function as well, never a name the file lacks, nor a function as a variable. */
	assert_int_equal(elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 1, names, 4, vaddrs, &img), 3);
	assert_true(vaddrs[1]);
	assert_int_equal(vaddrs[2], 0);
	assert_int_equal(elf__find_symbols(fd, ELF_SYMBOL_OBJECT, 1, names, 4, vaddrs, &img), 0);
	close(fd);
	dlclose(h);
}

/* Garbage is no ELF file: no function found, an error. */
static void dynamic_functions_of_garbage(void **state)
{
	static const char *const names[] = { "malloc" };
	char dir[4096], file[4200];
	struct elf_image img;
	uint64_t vaddr = 1;
	int fd;

	(void)state;
	fixture_tmpdir(dir, sizeof(dir));
	snprintf(file, sizeof(file), "%s/garbage", dir);
	fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file at all", 22), 22);
	assert_int_equal(elf__find_symbols(fd, ELF_SYMBOL_FUNCTION, 1, names, 1, &vaddr, &img), -ENOEXEC);
	assert_int_equal(vaddr, 0);
	close(fd);
	fixture_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(library_symbols_resolve_at_runtime_addresses),
		cmocka_unit_test(segment_vaddr_unlike_file_offset),
		cmocka_unit_test(reads_build_id_as_laid_out_in_debug_root),
		cmocka_unit_test(reads_debuglink_and_its_crc),
		cmocka_unit_test(finds_debug_files_by_build_id_and_debuglink),
		cmocka_unit_test(vaddr_conversion_checks_ranges),
		cmocka_unit_test(hostile_files_resolve_nothing_and_never_crash),
		cmocka_unit_test(debuglink_symlink_is_not_followed),
		cmocka_unit_test(huge_symtab_in_a_sparse_file_is_not_read),
		cmocka_unit_test(section_count_past_the_bound_is_refused),
		cmocka_unit_test(dynamic_functions_and_their_file_offsets),
		cmocka_unit_test(dynamic_functions_of_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
