/*
 * kallsyms: line parsing, text-only filtering, module symbols, aliases,
 * kptr_restrict (all-zero addresses), garbage, and the real /proc/kallsyms.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbolizer/kallsyms.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/symtab.h"
#include "symbolizer_fixture.h"

struct fixture {
	char dir[PATH_MAX];
	char path[PATH_MAX + 32];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	fixture_tmpdir(f->dir, sizeof(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/kallsyms", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	fixture_rmtree(f->dir);
	free(f);
	return 0;
}

static const char *name_at(struct symtab *st, uint64_t addr)
{
	long idx = symtab__lookup(st, addr);

	return idx < 0 ? NULL : symtab__name(st, idx);
}

static void parses_plain_and_module_lines(void **state)
{
	uint64_t addr;
	char type;
	const char *name;
	size_t len;

	assert_int_equal(kallsyms__parse_line("ffffffff81000000 T _stext\n", &addr, &type, &name, &len), 1);
	assert_true(addr == 0xffffffff81000000ull);
	assert_int_equal(type, 'T');
	assert_int_equal(len, 6);
	assert_memory_equal(name, "_stext", 6);

	assert_int_equal(kallsyms__parse_line("ffffffffc0a01000 t nft_do_chain\t[nf_tables]\n", &addr,
					      &type, &name, &len), 1);
	assert_true(addr == 0xffffffffc0a01000ull);
	assert_int_equal(type, 't');
	assert_int_equal(len, strlen("nft_do_chain"));
	assert_memory_equal(name, "nft_do_chain", len);
}

static void rejects_malformed_lines(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"zzzz T foo\n",
		"ffffffff81000000 T\n",
		"ffffffff81000000  T foo\n",
		"ffffffff81000000 TT foo\n",
		"1ffffffff81000000 T foo\n",
		"ffffffff81000000 T foo bar\n",
		"ffffffff81000000 t foo\t[unterminated\n",
		"ffffffff81000000 1 foo\n",
	};
	uint64_t addr;
	char type, longline[KALLSYMS_MAX_NAME + 64];
	const char *name;
	size_t i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(kallsyms__parse_line(bad[i], &addr, &type, &name, &len), 0);
	snprintf(longline, sizeof(longline), "ffffffff81000000 T %0*d\n", KALLSYMS_MAX_NAME + 1, 0);
	assert_int_equal(kallsyms__parse_line(longline, &addr, &type, &name, &len), 0);
}

static void keeps_text_symbols_and_modules(void **state)
{
	struct fixture *f = *state;
	struct symtab *st;

	fixture_write_str(f->path,
			  "ffffffff81000000 T _stext\n"
			  "ffffffff81000000 T __startup_64\n"
			  "ffffffff81000100 t do_one_thing\n"
			  "ffffffff81000200 D some_data\n"
			  "ffffffff81000300 W weak_thing\n"
			  "this line is garbage\n"
			  "ffffffff81000400 T schedule\n"
			  "ffffffffc0001000 t mod_func\t[mymod]\n"
			  "ffffffffc0001100 T mod_export\t[mymod]\n");
	assert_int_equal(kallsyms__load(f->path, &st), 0);
	/* Same address: equally global, fewer underscores wins. */
	assert_string_equal(name_at(st, 0xffffffff81000010ull), "_stext");
	assert_string_equal(name_at(st, 0xffffffff81000100ull), "do_one_thing");
	/* Data symbols are not kept: do_one_thing runs up to the next text symbol. */
	assert_string_equal(name_at(st, 0xffffffff81000250ull), "do_one_thing");
	assert_string_equal(name_at(st, 0xffffffff81000300ull), "weak_thing");
	assert_string_equal(name_at(st, 0xffffffff81000401ull), "schedule");
	assert_string_equal(name_at(st, 0xffffffffc0001050ull), "mod_func");
	assert_string_equal(name_at(st, 0xffffffffc0001100ull), "mod_export");
	assert_null(name_at(st, 0xffffffff80000000ull));
	symtab__free(st);
}

static void zero_addresses_mean_no_symbols(void **state)
{
	struct fixture *f = *state;
	struct symbolizer_config config = { .kallsyms_path = f->path };
	struct symbolizer *sym;
	struct symtab *st;
	char buf[64];

	fixture_write_str(f->path,
			  "0000000000000000 T _stext\n"
			  "0000000000000000 t do_one_thing\n"
			  "0000000000000000 T schedule\n");
	assert_int_equal(kallsyms__load(f->path, &st), -EPERM);
	assert_null(st);

	sym = symbolizer__new(&config);
	assert_non_null(sym);
	assert_int_equal(symbolizer__kernel(sym, 0, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_string_equal(buf, "[unknown]");
	assert_int_equal(symbolizer__kernel(sym, 0xffffffff81000000ull, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_string_equal(buf, "[unknown]");
	symbolizer__free(sym);
}

static void garbage_and_missing_files_resolve_nothing(void **state)
{
	struct fixture *f = *state;
	unsigned char junk[8192];
	struct symtab *st;
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 131 + 7);
	fixture_write(f->path, junk, sizeof(junk));
	assert_int_equal(kallsyms__load(f->path, &st), -ENODATA);
	assert_int_equal(kallsyms__load("/nonexistent/kallsyms", &st), -ENOENT);
}

static void symbolizer_resolves_and_truncates(void **state)
{
	struct fixture *f = *state;
	struct symbolizer_config config = { .kallsyms_path = f->path };
	struct symbolizer *sym;
	struct symbolizer_stats stats;
	char buf[64], tiny[5];

	fixture_write_str(f->path, "ffffffff81000000 T first_function\n"
				   "ffffffff81000400 T second_function\n");
	sym = symbolizer__new(&config);
	assert_int_equal(symbolizer__kernel(sym, 0xffffffff81000010ull, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "first_function");
	assert_int_equal(symbolizer__kernel(sym, 0xffffffff81000410ull, tiny, sizeof(tiny)), SYM_FOUND);
	assert_string_equal(tiny, "seco");
	assert_int_equal(symbolizer__kernel(sym, 0x1000, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_string_equal(buf, "[unknown]");
	symbolizer__stats(sym, &stats);
	assert_int_equal(stats.lookups, 3);
	assert_int_equal(stats.unknown, 1);
	symbolizer__free(sym);
}

/* The live kernel: look up a symbol's own address, found by reading the file here. */
static void real_kallsyms_names_schedule(void **state)
{
	FILE *file = fopen("/proc/kallsyms", "re");
	struct symbolizer *sym;
	unsigned long long addr = 0;
	char line[1024], name[600], buf[128], type;

	if (!file)
		skip();
	while (fgets(line, sizeof(line), file)) {
		unsigned long long a;

		if (sscanf(line, "%llx %c %599s", &a, &type, name) == 3 && type == 'T' &&
		    !strcmp(name, "schedule")) {
			addr = a;
			break;
		}
	}
	fclose(file);
	if (!addr)
		skip(); /* addresses hidden (kptr_restrict) or no such symbol */
	sym = symbolizer__new(NULL);
	assert_int_equal(symbolizer__kernel(sym, addr + 1, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "schedule");
	symbolizer__free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_plain_and_module_lines),
		cmocka_unit_test(rejects_malformed_lines),
		cmocka_unit_test_setup_teardown(keeps_text_symbols_and_modules, setup, teardown),
		cmocka_unit_test_setup_teardown(zero_addresses_mean_no_symbols, setup, teardown),
		cmocka_unit_test_setup_teardown(garbage_and_missing_files_resolve_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(symbolizer_resolves_and_truncates, setup, teardown),
		cmocka_unit_test(real_kallsyms_names_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
