/*
 * perfmap: line format, later-wins, garbage and huge sizes, bounds, and
 * resolution of JIT addresses through a fake process whose perf map lives
 * in its own root under its namespace pid, and not through a symlink or a
 * file of another user. Bytes are counted as read, NUL padding included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolizer/lines.h"
#include "symbolizer/perfmap.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/symtab.h"
#include "symbolizer_fixture.h"

static const char *name_at(struct symtab *st, uint64_t addr)
{
	long idx = symtab__lookup(st, addr);

	return idx < 0 ? NULL : symtab__name(st, idx);
}

/* Parses text as a perf map file. */
static struct symtab *load_text(const char *text, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct symtab *st = NULL;
	int fd;

	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/perf.map", dir);
	fixture_write(path, text, len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(perfmap__read_fd(fd, &st), 0);
	close(fd);
	fixture_rmtree(dir);
	return st;
}

static void parses_hex_with_or_without_prefix_and_spaced_names(void **state)
{
	uint64_t start, size;
	const char *name;
	size_t len;

	assert_int_equal(perfmap__parse_line("7f3c1d2e4a80 1c0 Ljava/lang/String;::hashCode\n", &start,
					     &size, &name, &len), 1);
	assert_true(start == 0x7f3c1d2e4a80ull && size == 0x1c0);
	assert_int_equal(len, strlen("Ljava/lang/String;::hashCode"));
	assert_int_equal(perfmap__parse_line("0x1000 0X20 LazyCompile:*fib /app/x.js:3\r\n", &start,
					     &size, &name, &len), 1);
	assert_true(start == 0x1000 && size == 0x20);
	assert_memory_equal(name, "LazyCompile:*fib /app/x.js:3", len);
	assert_int_equal(len, strlen("LazyCompile:*fib /app/x.js:3"));

	assert_int_equal(perfmap__parse_line("1000 20\n", &start, &size, &name, &len), 0);
	assert_int_equal(perfmap__parse_line("1000 20 \n", &start, &size, &name, &len), 0);
	assert_int_equal(perfmap__parse_line("xyz 20 name\n", &start, &size, &name, &len), 0);
	assert_int_equal(perfmap__parse_line("1000 20name\n", &start, &size, &name, &len), 0);
	assert_int_equal(perfmap__parse_line("10000000000000000 20 n\n", &start, &size, &name, &len), 0);
	assert_int_equal(perfmap__parse_line("0x 20 n\n", &start, &size, &name, &len), 0);
}

static void later_entries_win(void **state)
{
	static const char text[] = "1000 100 old_code\n"
				   "2000 40 stub\n"
				   "1000 80 new_code\n"
				   "3000 100 first\n"
				   "2f80 100 replaces_first\n";
	struct symtab *st = load_text(text, strlen(text));

	assert_string_equal(name_at(st, 0x1010), "new_code");
	assert_null(name_at(st, 0x10a0)); /* old_code's tail was freed with it */
	assert_string_equal(name_at(st, 0x2010), "stub");
	assert_string_equal(name_at(st, 0x3010), "replaces_first");
	assert_null(name_at(st, 0x3090));
	symtab__free(st);
}

static void garbage_and_huge_sizes_are_skipped(void **state)
{
	char text[16384];
	size_t len = 0, i;
	struct symtab *st;

	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"0 ffffffffffffffff covers_everything\n"
				"5000 0 empty\n"
				"6000 40000001 over_a_gigabyte\n"
				"7000 10 good\n"
				"\x01\x02\x03 binary junk\n"
				"8000 -10 negative\n");
	/* One line longer than any reader buffer. */
	text[len++] = '9';
	text[len++] = ' ';
	text[len++] = '1';
	text[len++] = ' ';
	for (i = 0; i < 9000; i++)
		text[len++] = 'n';
	text[len++] = '\n';
	len += (size_t)snprintf(text + len, sizeof(text) - len, "a000 10 after_long_line\nb000 10 no_newline");
	st = load_text(text, len);
	assert_null(name_at(st, 0x10));
	assert_null(name_at(st, 0x5000));
	assert_null(name_at(st, 0x6000));
	assert_string_equal(name_at(st, 0x7008), "good");
	assert_null(name_at(st, 0x8000));
	assert_null(name_at(st, 0x9));
	assert_string_equal(name_at(st, 0xa000), "after_long_line");
	assert_string_equal(name_at(st, 0xb00f), "no_newline");
	symtab__free(st);
}

static void empty_file_gives_empty_table(void **state)
{
	struct symtab *st = load_text("", 0);

	assert_int_equal(symtab__count(st), 0);
	assert_null(name_at(st, 0));
	symtab__free(st);
}

/*
 * A process in its own pid namespace (NSpid 7) with anonymous executable
 * memory, whose runtime wrote /tmp/perf-7.map inside its root.
 */
static void resolves_jit_frames_of_a_namespaced_process(void **state)
{
	char tree[PATH_MAX], path[PATH_MAX + 64], buf[128];
	bool lasting;
	struct symbolizer_config config = { 0 };
	struct symbolizer *sym;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 4242, "java", 1000, 7,
		     "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n"
		     "7f1000000000-7f1000001000 r-xp 00000000 00:00 0 [anon:stubs]\n",
		     NULL);
	snprintf(path, sizeof(path), "%s/4242/root/tmp", tree);
	fixture_mkdirs(path);
	snprintf(path, sizeof(path), "%s/4242/root/tmp/perf-7.map", tree);
	fixture_write_str(path, "7f0000001000 100 Interpreter\n"
				"0x7f0000002000 0x80 LFoo;::bar (compiled)\n"
				"7f2000000000 10 outside_every_mapping\n");
	/* The host-side pid's file must not be read. */
	snprintf(path, sizeof(path), "%s/4242/root/tmp/perf-4242.map", tree);
	fixture_write_str(path, "7f0000003000 100 wrong_namespace\n");

	config.proc_root = tree;
	sym = symbolizer__new(&config);
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf)), SYM_JIT);
	assert_string_equal(buf, "Interpreter");
	/* A perf map's name, or anonymous memory's, can change with the map: neither is said to last. */
	lasting = true;
	assert_int_equal(symbolizer__user_lasting(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf), &lasting), SYM_JIT);
	assert_false(lasting);
	lasting = true;
	assert_int_equal(symbolizer__user_lasting(sym, 4242, 0x7f0000003000ull, buf, sizeof(buf), &lasting),
			 SYM_OFFSET);
	assert_false(lasting);
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f000000207full, buf, sizeof(buf)), SYM_JIT);
	assert_string_equal(buf, "LFoo;::bar (compiled)");
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000003000ull, buf, sizeof(buf)), SYM_OFFSET);
	assert_string_equal(buf, "[anon]");
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f1000000010ull, buf, sizeof(buf)), SYM_OFFSET);
	assert_string_equal(buf, "[anon]");
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f2000000004ull, buf, sizeof(buf)), SYM_JIT);
	assert_string_equal(buf, "outside_every_mapping");
	assert_int_equal(symbolizer__user(sym, 4242, 0x10, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_string_equal(buf, "[unknown]");
	symbolizer__free(sym);
	fixture_rmtree(tree);
}

/* One perf map line padded with NULs to PAD bytes before its newline. */
#define PAD 4096

static size_t padded_line(char *buf, const char *line)
{
	size_t len = strlen(line);

	memset(buf, 0, PAD);
	memcpy(buf, line, len);
	buf[PAD - 1] = '\n';
	return PAD;
}

/* lines counts every byte it reads: a NUL is not the end of what was read. */
static void nul_padded_lines_count_every_byte(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], buf[3 * PAD], line[256];
	size_t consumed = 0, len = 0;
	FILE *f;

	len += padded_line(buf, "1000 10 padded");
	len += padded_line(buf + len, "2000 10 padded");
	memcpy(buf + len, "3000 10 plain\n", 14);
	len += 14;
	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/perf.map", dir);
	fixture_write(path, buf, len);
	f = fopen(path, "r");
	assert_non_null(f);
	/* A line holding a NUL is no text line: skipped, every byte counted. */
	assert_int_equal(lines__next(f, line, sizeof(line), &consumed), -1);
	assert_int_equal(consumed, PAD);
	assert_int_equal(lines__next(f, line, sizeof(line), &consumed), -1);
	assert_int_equal(lines__next(f, line, sizeof(line), &consumed), 14);
	assert_string_equal(line, "3000 10 plain\n");
	assert_int_equal(lines__next(f, line, sizeof(line), &consumed), 0);
	assert_int_equal(consumed, len);
	/* A bound stops the reading inside a line too. */
	rewind(f);
	consumed = 0;
	assert_int_equal(lines__next_bounded(f, line, sizeof(line), &consumed, 100), -1);
	assert_int_equal(consumed, 100);
	assert_int_equal(lines__next_bounded(f, line, sizeof(line), &consumed, 100), 0);
	fclose(f);
	fixture_rmtree(dir);
}

/*
 * A perf map of NUL-padded lines, past PERFMAP_MAX_BYTES: the reading
 * stops at the bound (plus one stdio buffer), whatever strlen says.
 */
static void nul_padded_perf_map_reads_at_most_the_bound(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	size_t chunk = 1u << 20, written = 0;
	char *buf = malloc(chunk);
	struct symtab *st = NULL;
	off_t pos;
	int fd;

	assert_non_null(buf);
	for (size_t off = 0; off < chunk; off += PAD)
		padded_line(buf + off, "7f0000001000 100 padded");
	fixture_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/perf.map", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	while (written < PERFMAP_MAX_BYTES + 4 * chunk) {
		assert_int_equal(write(fd, buf, chunk), (ssize_t)chunk);
		written += chunk;
	}
	assert_int_equal(perfmap__read_fd(fd, &st), 0);
	/* The perf map's reader shares this file offset through its dup. */
	pos = lseek(fd, 0, SEEK_CUR);
	assert_true(pos > 0);
	assert_true((size_t)pos <= PERFMAP_MAX_BYTES + 2 * (size_t)PAD + BUFSIZ);
	assert_int_equal(symtab__count(st), 0);
	symtab__free(st);
	close(fd);
	free(buf);
	fixture_rmtree(dir);
}

/*
 * The perf map is the target's file: a symlink there (to a file the
 * target could not read) is not followed, and a file of another user is
 * not read. The same content as a plain file of the process's user is.
 */
static void perf_map_symlink_or_foreign_owner_is_not_read(void **state)
{
	char tree[PATH_MAX], path[PATH_MAX + 64], elsewhere[PATH_MAX + 64], buf[128];
	struct symbolizer_config config = { 0 };
	struct symbolizer *sym;

	fixture_tmpdir(tree, sizeof(tree));
	fake_process(tree, 4242, "jit", 1000, 4242, "7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n", NULL);
	snprintf(path, sizeof(path), "%s/4242/root/tmp", tree);
	fixture_mkdirs(path);
	snprintf(elsewhere, sizeof(elsewhere), "%s/4242/root/secret", tree);
	fixture_write_str(elsewhere, "7f0000001000 100 SECRET_LINE\n");
	snprintf(path, sizeof(path), "%s/4242/root/tmp/perf-4242.map", tree);
	assert_int_equal(symlink("/secret", path), 0);
	config.proc_root = tree;
	sym = symbolizer__new(&config);
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf)), SYM_OFFSET);
	assert_string_equal(buf, "[anon]");
	symbolizer__free(sym);

	assert_int_equal(unlink(path), 0);
	fixture_write_str(path, "7f0000001000 100 OWN_LINE\n");
	if (geteuid() == 0) {
		/* Another user's file, or root's that not everyone may read. */
		assert_int_equal(chown(path, 12345, 12345), 0);
		fake_process_file(tree, 4242, "status", "Name:\tjit\nUid:\t4000\t4000\t4000\t4000\nGid:\t4000\t4000\t4000\t4000\n");
		sym = symbolizer__new(&config);
		assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf)), SYM_OFFSET);
		symbolizer__free(sym);
		assert_int_equal(chown(path, 0, 0), 0);
		assert_int_equal(chmod(path, 0600), 0);
		sym = symbolizer__new(&config);
		assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf)), SYM_OFFSET);
		symbolizer__free(sym);
		/* The process's own file. */
		assert_int_equal(chown(path, 4000, 4000), 0);
	}
	sym = symbolizer__new(&config);
	assert_int_equal(symbolizer__user(sym, 4242, 0x7f0000001010ull, buf, sizeof(buf)), SYM_JIT);
	assert_string_equal(buf, "OWN_LINE");
	symbolizer__free(sym);
	fixture_rmtree(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_hex_with_or_without_prefix_and_spaced_names),
		cmocka_unit_test(later_entries_win),
		cmocka_unit_test(garbage_and_huge_sizes_are_skipped),
		cmocka_unit_test(empty_file_gives_empty_table),
		cmocka_unit_test(resolves_jit_frames_of_a_namespaced_process),
		cmocka_unit_test(nul_padded_lines_count_every_byte),
		cmocka_unit_test(nul_padded_perf_map_reads_at_most_the_bound),
		cmocka_unit_test(perf_map_symlink_or_foreign_owner_is_not_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
