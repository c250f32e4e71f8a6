/*
 * symtab: lookups, aliases, nesting, unsized symbols, and the two overlap
 * policies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "symbolizer/symtab.h"

static void add(struct symtab *st, uint64_t start, uint64_t size, const char *name, uint32_t prio)
{
	assert_int_equal(symtab__add(st, start, size, name, strlen(name), prio), 0);
}

static const char *name_at(struct symtab *st, uint64_t addr)
{
	long idx = symtab__lookup(st, addr);

	return idx < 0 ? NULL : symtab__name(st, idx);
}

static void sized_symbols_cover_only_their_range(void **state)
{
	struct symtab *st = symtab__new();

	add(st, 0x2000, 0x10, "second", 0);
	add(st, 0x1000, 0x100, "first", 0);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_int_equal(symtab__count(st), 2);
	assert_null(name_at(st, 0xfff));
	assert_string_equal(name_at(st, 0x1000), "first");
	assert_string_equal(name_at(st, 0x10ff), "first");
	assert_null(name_at(st, 0x1100));
	assert_string_equal(name_at(st, 0x200f), "second");
	assert_null(name_at(st, 0x2010));
	symtab__free(st);
}

static void unsized_symbols_extend_to_the_next(void **state)
{
	struct symtab *st = symtab__new();

	add(st, 0x1000, 0, "a", 0);
	add(st, 0x3000, 0, "b", 0);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_string_equal(name_at(st, 0x2fff), "a");
	assert_string_equal(name_at(st, 0x3000), "b");
	assert_string_equal(name_at(st, 0x3000 + SYMTAB_UNSIZED_LAST_SPAN - 1), "b");
	assert_null(name_at(st, 0x3000 + SYMTAB_UNSIZED_LAST_SPAN));
	symtab__free(st);
}

static void aliases_pick_global_then_fewest_underscores(void **state)
{
	struct symtab *st = symtab__new();

	add(st, 0x1000, 0x10, "getpid", symtab__alias_priority(SYMTAB_BIND_WEAK, "getpid"));
	add(st, 0x1000, 0x10, "__getpid", symtab__alias_priority(SYMTAB_BIND_GLOBAL, "__getpid"));
	add(st, 0x1000, 0x10, "__libc_getpid", symtab__alias_priority(SYMTAB_BIND_LOCAL, "__libc_getpid"));
	add(st, 0x2000, 0x10, "__x", symtab__alias_priority(SYMTAB_BIND_GLOBAL, "__x"));
	add(st, 0x2000, 0x10, "y", symtab__alias_priority(SYMTAB_BIND_GLOBAL, "y"));
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_int_equal(symtab__count(st), 2);
	assert_string_equal(name_at(st, 0x1004), "__getpid");
	assert_string_equal(name_at(st, 0x2004), "y");
	symtab__free(st);
}

static void nested_symbol_finds_innermost_then_outer(void **state)
{
	struct symtab *st = symtab__new();

	add(st, 0x1000, 0x1000, "outer", 0);
	add(st, 0x1800, 0x10, "inner", 0);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_string_equal(name_at(st, 0x1805), "inner");
	assert_string_equal(name_at(st, 0x1900), "outer");
	symtab__free(st);
}

static void newest_wins_overlaps(void **state)
{
	struct symtab *st = symtab__new();
	uint32_t seq = 0;

	add(st, 0x1000, 0x100, "old", ++seq);
	add(st, 0x1000, 0x80, "new", ++seq);
	add(st, 0x2000, 0x100, "A", ++seq);
	add(st, 0x2080, 0x100, "B", ++seq);
	add(st, 0x3000, 0x100, "C", ++seq);
	add(st, 0x2f80, 0x100, "D", ++seq);
	add(st, 0x5000, 0, "empty", ++seq);
	symtab__finish(st, SYMTAB_OVERLAP_NEWEST);
	assert_string_equal(name_at(st, 0x1050), "new");
	assert_null(name_at(st, 0x1090));
	assert_string_equal(name_at(st, 0x2010), "A");
	assert_string_equal(name_at(st, 0x2090), "B");
	assert_string_equal(name_at(st, 0x2170), "B");
	assert_string_equal(name_at(st, 0x3010), "D");
	assert_null(name_at(st, 0x3090));
	assert_null(name_at(st, 0x5000));
	symtab__free(st);
}

/*
 * Enough symbols, added out of order, that the sort sees every byte of
 * their starts differ, and two runs of aliases: a short one and one long
 * enough to be ordered apart; the best alias of each is added mid-run.
 */
static void many_symbols_in_any_order_sort_by_start_then_alias(void **state)
{
	enum { COUNT = 5000, ALIASES = 40 };
	static const uint64_t spread = 0x9e3779b97f4a7c15ull; /* odd: i * spread is one to one */
	struct symtab *st = symtab__new();
	uint32_t weak = symtab__alias_priority(SYMTAB_BIND_WEAK, "w");
	uint32_t global = symtab__alias_priority(SYMTAB_BIND_GLOBAL, "g");
	char name[32];

	for (uint64_t k = 0; k < COUNT; k++) {
		uint64_t i = (k * 2039) % COUNT; /* 2039 is prime to COUNT: every i once */

		snprintf(name, sizeof(name), "s%llu", (unsigned long long)i);
		add(st, ((i + 1) * spread) >> 1, 1, name, weak);
	}
	for (int a = 0; a < ALIASES; a++) {
		snprintf(name, sizeof(name), a == ALIASES / 2 ? "best_long" : "alias%d", a);
		add(st, 0x10, 1, name, a == ALIASES / 2 ? global : weak);
		if (a < 3) {
			snprintf(name, sizeof(name), a == 1 ? "best_short" : "short%d", a);
			add(st, 0x20, 1, name, a == 1 ? global : weak);
		}
	}
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_int_equal(symtab__count(st), COUNT + 2);
	for (uint64_t i = 0; i < COUNT; i++) {
		snprintf(name, sizeof(name), "s%llu", (unsigned long long)i);
		assert_string_equal(name_at(st, ((i + 1) * spread) >> 1), name);
	}
	assert_string_equal(name_at(st, 0x10), "best_long");
	assert_string_equal(name_at(st, 0x20), "best_short");
	symtab__free(st);
}

static void long_names_are_cut_and_rename_works(void **state)
{
	char name[SYMTAB_MAX_NAME + 100];
	struct symtab *st = symtab__new();
	long idx;

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	add(st, 0x1000, 0x10, name, 0);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	idx = symtab__lookup(st, 0x1000);
	assert_true(idx >= 0);
	assert_int_equal(strlen(symtab__name(st, idx)), SYMTAB_MAX_NAME);
	assert_false(symtab__renamed(st, idx));
	assert_int_equal(symtab__rename(st, idx, "short"), 0);
	assert_true(symtab__renamed(st, idx));
	assert_string_equal(symtab__name(st, idx), "short");
	assert_int_equal(symtab__add(st, 1, 1, "late", 4, 0), -EBUSY);
	symtab__free(st);
}

static void range_at_top_of_address_space_does_not_wrap(void **state)
{
	struct symtab *st = symtab__new();

	add(st, UINT64_MAX - 0x10, 0x1000, "top", 0);
	add(st, UINT64_MAX - 0x100, 0, "below", 0);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_string_equal(name_at(st, UINT64_MAX - 1), "top");
	assert_string_equal(name_at(st, UINT64_MAX - 0x20), "below");
	assert_null(name_at(st, 0));
	symtab__free(st);
}

static void empty_table_finds_nothing(void **state)
{
	struct symtab *st = symtab__new();

	assert_int_equal(symtab__lookup(st, 0x1000), -1);
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	assert_int_equal(symtab__lookup(st, 0x1000), -1);
	symtab__free(st);
	symtab__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sized_symbols_cover_only_their_range),
		cmocka_unit_test(unsized_symbols_extend_to_the_next),
		cmocka_unit_test(aliases_pick_global_then_fewest_underscores),
		cmocka_unit_test(nested_symbol_finds_innermost_then_outer),
		cmocka_unit_test(newest_wins_overlaps),
		cmocka_unit_test(many_symbols_in_any_order_sort_by_start_then_alias),
		cmocka_unit_test(long_names_are_cut_and_rename_works),
		cmocka_unit_test(range_at_top_of_address_space_does_not_wrap),
		cmocka_unit_test(empty_table_finds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
