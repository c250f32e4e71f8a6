/*
 * Kernel symbols asked of the kernel: the parse of its "%pS" answers, the
 * range cache the symbolizer keeps them in, the symbolizer's use of a
 * kernel lookup (asked once per function, kallsyms when it breaks), and
 * the real programs against /proc/kallsyms.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolizer/ranges.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer_fixture.h"
#include "user/record/kernel_symbols.h"

#define ADDR 0xffffffff81234567ull

static void parse_names_functions_with_their_extent(void **state)
{
	char name[64];
	uint64_t start = 0, end = 0;

	assert_int_equal(kernel_symbols__parse("do_syscall_64+0x67/0x1a0", ADDR, name, sizeof(name), &start, &end), 0);
	assert_string_equal(name, "do_syscall_64");
	assert_true(start == ADDR - 0x67);
	assert_true(end == ADDR - 0x67 + 0x1a0);
	/* A module's: the module is not part of the name. */
	assert_int_equal(kernel_symbols__parse("nft_do_chain+0x0/0x40 [nf_tables]", ADDR, name, sizeof(name), &start,
					       &end),
			 0);
	assert_string_equal(name, "nft_do_chain");
	assert_true(start == ADDR && end == ADDR + 0x40);
	/* Suffixes the compiler adds are part of the name; the offset is after the last '+'. */
	assert_int_equal(kernel_symbols__parse("finish_task_switch.isra.0+0x1/0x2", ADDR, name, sizeof(name), &start,
					       &end),
			 0);
	assert_string_equal(name, "finish_task_switch.isra.0");
	/* Cut to the room given, and no room at all is allowed. */
	assert_int_equal(kernel_symbols__parse("abcdefgh+0x1/0x2", ADDR, name, 4, &start, &end), 0);
	assert_string_equal(name, "abc");
	assert_int_equal(kernel_symbols__parse("abcdefgh+0x1/0x2", ADDR, NULL, 0, &start, &end), 0);
	assert_true(start == ADDR - 1 && end == ADDR + 1);
	/* A label (size 0) still holds its own address. */
	assert_int_equal(kernel_symbols__parse("_etext+0x0/0x0", ADDR, name, sizeof(name), &start, &end), 0);
	assert_true(start == ADDR && end == ADDR + 1);
}

static void parse_refuses_what_is_not_an_answer(void **state)
{
	char name[64];
	uint64_t start, end;

	/* No symbol: the kernel prints the address. */
	assert_int_equal(kernel_symbols__parse("0xffffffff81234567", ADDR, name, sizeof(name), &start, &end), -ENOENT);
	assert_int_equal(kernel_symbols__parse("", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("+0x1/0x2", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x1", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x1/", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+zz/0x2", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x1/0x2x", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x1/0x2 module", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x1/0x11111111111111111", ADDR, name, sizeof(name), &start, &end),
			 -EINVAL);
	/* The offset must lie within the function, and below the address. */
	assert_int_equal(kernel_symbols__parse("f+0x2/0x2", ADDR, name, sizeof(name), &start, &end), -EINVAL);
	assert_int_equal(kernel_symbols__parse("f+0x10/0x20", 0x8, name, sizeof(name), &start, &end), -EINVAL);
	/* A function whose end would wrap past the top of the address space. */
	assert_int_equal(kernel_symbols__parse("f+0x0/0x20", UINT64_MAX - 0x10, name, sizeof(name), &start, &end),
			 -EINVAL);
}

static void ranges_find_what_was_added(void **state)
{
	struct ranges *r = ranges__new(4);
	const char *name = "unset";

	assert_non_null(r);
	assert_false(ranges__find(r, 100, &name));
	assert_int_equal(ranges__add(r, 200, 300, "second"), 0);
	assert_int_equal(ranges__add(r, 100, 150, "first"), 0);
	assert_int_equal(ranges__add(r, 400, 401, NULL), 0);
	assert_true(ranges__find(r, 100, &name));
	assert_string_equal(name, "first");
	assert_true(ranges__find(r, 149, &name));
	assert_string_equal(name, "first");
	assert_false(ranges__find(r, 150, &name));
	assert_false(ranges__find(r, 99, &name));
	assert_true(ranges__find(r, 299, &name));
	assert_string_equal(name, "second");
	assert_true(ranges__find(r, 400, &name));
	assert_null(name);
	/* Overlaps and empty ranges are refused; the cache is unchanged. */
	assert_int_equal(ranges__add(r, 140, 160, "overlap"), -EINVAL);
	assert_int_equal(ranges__add(r, 250, 260, "inside"), -EINVAL);
	assert_int_equal(ranges__add(r, 50, 500, "around"), -EINVAL);
	assert_int_equal(ranges__add(r, 500, 500, "empty"), -EINVAL);
	assert_int_equal(ranges__count(r), 3);
	/* Full: the next one empties the cache first. */
	assert_int_equal(ranges__add(r, 600, 700, "fourth"), 0);
	assert_int_equal(ranges__count(r), 4);
	assert_int_equal(ranges__add(r, 800, 900, "fifth"), 0);
	assert_int_equal(ranges__count(r), 1);
	assert_false(ranges__find(r, 100, &name));
	assert_true(ranges__find(r, 850, &name));
	assert_string_equal(name, "fifth");
	ranges__free(r);
}

/* ---- the symbolizer with a kernel lookup ---- */

/* A kernel of two functions, [0x1000, 0x1100) "alpha" and [0x2000, 0x2080) "beta". */
struct fake_kernel {
	int asked, addressed;
	int fail_with; /* nonzero: every question fails so */
};

static int fake_name(void *ctx, uint64_t addr, char *name, size_t size, uint64_t *start, uint64_t *end)
{
	struct fake_kernel *k = ctx;

	k->asked++;
	if (k->fail_with)
		return k->fail_with;
	if (addr >= 0x1000 && addr < 0x1100) {
		snprintf(name, size, "alpha");
		*start = 0x1000;
		*end = 0x1100;
		return 0;
	}
	if (addr >= 0x2000 && addr < 0x2080) {
		snprintf(name, size, "beta");
		*start = 0x2000;
		*end = 0x2080;
		return 0;
	}
	return -ENOENT;
}

static int fake_address(void *ctx, const char *name, uint64_t *start, uint64_t *end)
{
	struct fake_kernel *k = ctx;

	k->addressed++;
	if (k->fail_with)
		return k->fail_with;
	if (strcmp(name, "beta"))
		return -ENOENT;
	*start = 0x2000;
	*end = 0x2080;
	return 0;
}

struct fixture {
	char kallsyms[64];
	struct symbolizer *sym;
	struct fake_kernel kernel;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct symbolizer_config config = { 0 };
	struct symbolizer_kernel_lookup lookup = { .name = fake_name, .address = fake_address };

	if (!f)
		return -1;
	/* What kallsyms says differs from the lookup, so the answers tell which was used. */
	fixture_temp_file(f->kallsyms, sizeof(f->kallsyms), "test-ksyms",
			  "0000000000001000 T from_kallsyms\n0000000000003000 T end_marker\n");
	config.kallsyms_path = f->kallsyms;
	f->sym = symbolizer__new(&config);
	if (!f->sym)
		return -1;
	lookup.ctx = &f->kernel;
	if (symbolizer__set_kernel_lookup(f->sym, &lookup))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->kallsyms);
	symbolizer__free(f->sym);
	free(f);
	return 0;
}

static void lookup_is_asked_once_per_function(void **state)
{
	struct fixture *f = *state;
	struct symbolizer_stats stats;
	char buf[64];

	assert_int_equal(symbolizer__kernel(f->sym, 0x1010, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "alpha");
	assert_int_equal(symbolizer__kernel(f->sym, 0x10ff, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "alpha");
	assert_int_equal(symbolizer__kernel(f->sym, 0x2000, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "beta");
	assert_int_equal(f->kernel.asked, 2);
	/* No symbol there: unknown, and remembered as such. */
	assert_int_equal(symbolizer__kernel(f->sym, 0x1100, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_string_equal(buf, "[unknown]");
	assert_int_equal(symbolizer__kernel(f->sym, 0x1100, buf, sizeof(buf)), SYM_UNKNOWN);
	assert_int_equal(f->kernel.asked, 3);
	symbolizer__stats(f->sym, &stats);
	assert_int_equal(stats.kernel_asked, 3);
	assert_int_equal(stats.kernel_source, SYMBOLIZER_KERNEL_LOOKUP);
	assert_int_equal(stats.lookups, 5);
	assert_int_equal(stats.unknown, 2);
}

static void lookup_finds_symbols_by_name(void **state)
{
	struct fixture *f = *state;
	uint64_t start = 0, end = 0;

	assert_int_equal(symbolizer__kernel_symbol(f->sym, "beta", &start, &end), 0);
	assert_true(start == 0x2000 && end == 0x2080);
	/* Not there: kallsyms is not read for it. */
	assert_int_equal(symbolizer__kernel_symbol(f->sym, "end_marker", &start, &end), -ENOENT);
	assert_int_equal(f->kernel.addressed, 2);
}

static void broken_lookup_falls_back_to_kallsyms(void **state)
{
	struct fixture *f = *state;
	struct symbolizer_stats stats;
	uint64_t start = 0, end = 0;
	char buf[64];

	f->kernel.fail_with = -EPERM;
	assert_int_equal(symbolizer__kernel(f->sym, 0x1010, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "from_kallsyms");
	/* Not asked again once broken. */
	assert_int_equal(symbolizer__kernel(f->sym, 0x2010, buf, sizeof(buf)), SYM_FOUND);
	assert_string_equal(buf, "from_kallsyms");
	assert_int_equal(symbolizer__kernel_symbol(f->sym, "end_marker", &start, &end), 0);
	assert_true(start == 0x3000);
	assert_int_equal(f->kernel.asked, 1);
	assert_int_equal(f->kernel.addressed, 0);
	symbolizer__stats(f->sym, &stats);
	assert_int_equal(stats.kernel_source, SYMBOLIZER_KERNEL_KALLSYMS);
}

/* ---- the kernel's own answers ---- */

/* The first text symbol called name in /proc/kallsyms, or 0. */
static uint64_t kallsyms_address(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[1024], sym[512], type;
	unsigned long long addr;
	uint64_t found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %511s", &addr, &type, sym) == 3 && (type == 'T' || type == 't') &&
		    !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

static void kernel_answers_agree_with_kallsyms(void **state)
{
	struct kernel_symbols *ks;
	uint64_t start = 0, end = 0, from_kallsyms = kallsyms_address("schedule");
	char name[128];
	int error = kernel_symbols__open(&ks);

	if (error == -EPERM || !from_kallsyms)
		skip(); /* not root, or addresses hidden */
	assert_int_equal(error, 0);
	assert_int_equal(kernel_symbols__address(ks, "schedule", &start, &end), 0);
	assert_true(start == from_kallsyms);
	assert_true(end > start);
	assert_int_equal(kernel_symbols__name(ks, start + 1, name, sizeof(name), &start, &end), 0);
	assert_string_equal(name, "schedule");
	assert_true(start == from_kallsyms);
	assert_int_equal(kernel_symbols__address(ks, "no_such_function_in_any_kernel", &start, &end), -ENOENT);
	/* An address far from any text. */
	assert_int_equal(kernel_symbols__name(ks, 0x1000, name, sizeof(name), &start, &end), -ENOENT);
	kernel_symbols__close(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_names_functions_with_their_extent),
		cmocka_unit_test(parse_refuses_what_is_not_an_answer),
		cmocka_unit_test(ranges_find_what_was_added),
		cmocka_unit_test_setup_teardown(lookup_is_asked_once_per_function, setup, teardown),
		cmocka_unit_test_setup_teardown(lookup_finds_symbols_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(broken_lookup_falls_back_to_kallsyms, setup, teardown),
		cmocka_unit_test(kernel_answers_agree_with_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
