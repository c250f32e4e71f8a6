/*
 * unwind_readelf: what tests/unit/test_unwind_table.c checks tables
 * against: readelf's interpretation of a fixture's frames
 * (--debug-dump=frames-interp, written beside each fixture by the build)
 * read into rows and FDEs, a table built from a fixture (and its debug
 * file), a row looked up and compared, and the fixtures' symbols.
 */
#ifndef JBPF_UNWIND_READELF_H
#define JBPF_UNWIND_READELF_H

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <sys/resource.h>
#include <cmocka.h>
#include "unwind/cfa_check.h"
#include "unwind/unwind.h"
#include "symbolizer_fixture.h"
#include "../shared/sparse_elf.h"

/* A row as readelf states it, in the walker's terms. */
struct expect {
	uint64_t vaddr;
	struct jbpf_unwind_row row; /* pc unused */
};

struct fde {
	uint64_t lo, hi;
};

struct frames {
	struct expect rows[512];
	size_t nr_rows;
	struct fde fdes[64];
	size_t nr_fdes;
};

/* A readelf column value as the rule for the CFA. */
static inline void expect_cfa(const char *v, struct jbpf_unwind_row *row)
{
	if (strncmp(v, "rsp+", 4) == 0) {
		row->cfa_rule = JBPF_CFA_RSP;
		row->cfa_offset = (__s16)atoi(v + 4);
	} else if (strncmp(v, "rbp+", 4) == 0) {
		row->cfa_rule = JBPF_CFA_RBP;
		row->cfa_offset = (__s16)atoi(v + 4);
	} else if (strcmp(v, "exp") == 0) {
		/* In these fixtures, only the .plt has a CFA expression. */
		row->cfa_rule = JBPF_CFA_PLT;
	} else {
		row->cfa_rule = JBPF_CFA_STOP;
	}
}

/* One row of readelf's table: LOC, then one value per column of names. */
static inline struct jbpf_unwind_row parse_row(char *line, char names[][16], size_t nr_names, uint64_t *loc)
{
	struct jbpf_unwind_row row = { 0 };
	char *save, *tok = strtok_r(line, " \t\n", &save);
	const char *cfa = "", *rbp = "u", *ra = "u";

	*loc = strtoull(tok, NULL, 16);
	for (size_t i = 0; i < nr_names && (tok = strtok_r(NULL, " \t\n", &save)); i++) {
		if (strcmp(names[i], "CFA") == 0)
			cfa = tok;
		else if (strcmp(names[i], "rbp") == 0)
			rbp = tok;
		else if (strcmp(names[i], "ra") == 0)
			ra = tok;
	}
	if (strcmp(ra, "u") == 0) {
		row.cfa_rule = JBPF_CFA_END;
		return row;
	}
	assert_string_equal(ra, "c-8");
	expect_cfa(cfa, &row);
	if (row.cfa_rule == JBPF_CFA_RSP || row.cfa_rule == JBPF_CFA_RBP) {
		if (strncmp(rbp, "c", 1) == 0) {
			row.rbp_rule = JBPF_RBP_AT;
			row.rbp_offset = (__s16)atoi(rbp + 1);
		} else if (strcmp(rbp, "u") != 0 && strcmp(rbp, "s") != 0) {
			memset(&row, 0, sizeof(row));
			row.cfa_rule = JBPF_CFA_STOP;
		}
	}
	return row;
}

/*
 * Reads readelf's frames-interp output. An FDE with no rows printed has
 * its CIE's initial row from its first address.
 */
static inline void read_frames(const char *path, struct frames *f)
{
	struct {
		unsigned long offset;
		struct jbpf_unwind_row row;
	} cies[16];
	size_t nr_cies = 0, cie = 0, fde_rows = 0;
	char line[512], names[16][16];
	size_t nr_names = 0;
	bool in_cie = false, in_fde = false;
	FILE *fp = fopen(path, "r");

	assert_non_null(fp);
	memset(f, 0, sizeof(*f));
	for (;;) {
		bool eof = !fgets(line, sizeof(line), fp);
		unsigned long off;
		char *p;

		if (in_fde && (eof || strstr(line, " CIE ") || strstr(line, " FDE ") || strstr(line, "ZERO"))) {
			if (fde_rows == 0) {
				assert_true(f->nr_rows < 512);
				f->rows[f->nr_rows].vaddr = f->fdes[f->nr_fdes - 1].lo;
				f->rows[f->nr_rows++].row = cies[cie].row;
			}
			in_fde = false;
		}
		if (eof)
			break;
		if (strncmp(line, "Contents of the ", 16) == 0) {
			/* CIE offsets are per section. */
			nr_cies = 0;
		} else if ((p = strstr(line, " CIE "))) {
			assert_true(nr_cies < 16);
			cies[nr_cies].offset = strtoul(line, NULL, 16);
			in_cie = true;
		} else if ((p = strstr(line, " FDE "))) {
			assert_int_equal(sscanf(strstr(p, "cie="), "cie=%lx", &off), 1);
			for (cie = 0; cie < nr_cies && cies[cie].offset != off; cie++)
				;
			assert_true(cie < nr_cies);
			assert_true(f->nr_fdes < 64);
			assert_int_equal(sscanf(strstr(p, "pc="), "pc=%lx..%lx", &f->fdes[f->nr_fdes].lo,
						&f->fdes[f->nr_fdes].hi), 2);
			f->nr_fdes++;
			in_fde = true;
			fde_rows = 0;
		} else if (strstr(line, "   LOC ")) {
			char *save, *tok = strtok_r(line, " \t\n", &save);

			for (nr_names = 0; (tok = strtok_r(NULL, " \t\n", &save)) && nr_names < 16; nr_names++)
				snprintf(names[nr_names], sizeof(names[0]), "%s", tok);
		} else if (isxdigit((unsigned char)line[0]) && strlen(line) > 17 && line[16] == ' ') {
			uint64_t loc;
			struct jbpf_unwind_row row = parse_row(line, names, nr_names, &loc);

			if (in_cie) {
				cies[nr_cies++].row = row;
				in_cie = false;
			} else if (in_fde) {
				assert_true(f->nr_rows < 512);
				f->rows[f->nr_rows].vaddr = loc;
				f->rows[f->nr_rows++].row = row;
				fde_rows++;
			}
		}
	}
	fclose(fp);
	assert_true(f->nr_fdes > 0);
}

/* The row the walker would find for vaddr: the last one with pc <= its offset. */
static inline const struct jbpf_unwind_row *lookup(const struct unwind_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nr_rows;

	assert_true(vaddr >= t->base && vaddr < t->end);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= vaddr - t->base)
			lo = mid + 1;
		else
			hi = mid;
	}
	assert_true(lo > 0);
	return &t->rows[lo - 1];
}

static inline void assert_row(const struct jbpf_unwind_row *got, const struct jbpf_unwind_row *want, uint64_t vaddr)
{
	if (got->cfa_rule != want->cfa_rule || got->cfa_offset != want->cfa_offset ||
	    got->rbp_rule != want->rbp_rule || got->rbp_offset != want->rbp_offset)
		fail_msg("at %#lx: cfa %u%+d rbp %u%+d, readelf says cfa %u%+d rbp %u%+d", (unsigned long)vaddr,
			 got->cfa_rule, got->cfa_offset, got->rbp_rule, got->rbp_offset, want->cfa_rule,
			 want->cfa_offset, want->rbp_rule, want->rbp_offset);
}

static inline bool in_fde(const struct frames *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nr_fdes; i++)
		if (vaddr >= f->fdes[i].lo && vaddr < f->fdes[i].hi)
			return true;
	return false;
}

/* The invariants bpf/unwind.h promises the walker. */
static inline void assert_well_formed(const struct unwind_table *t)
{
	assert_true(t->nr_rows > 0);
	assert_int_equal(t->rows[0].pc, 0);
	assert_true(t->end > t->base);
	for (size_t i = 0; i < t->nr_rows; i++) {
		assert_int_equal(t->rows[i].unused, 0);
		assert_true(t->rows[i].cfa_rule <= JBPF_CFA_NONE);
		assert_true(t->rows[i].pc < t->end - t->base);
		if (i == 0)
			continue;
		assert_true(t->rows[i].pc > t->rows[i - 1].pc);
		assert_memory_not_equal(&t->rows[i].cfa_rule, &t->rows[i - 1].cfa_rule,
					sizeof(t->rows[i]) - sizeof(t->rows[i].pc));
	}
}

/* Every row readelf prints is the table's row at that address; code outside the FDEs has none. */
static inline void assert_matches_readelf(const struct unwind_table *t, const struct frames *f)
{
	for (size_t i = 0; i < f->nr_rows; i++)
		assert_row(lookup(t, f->rows[i].vaddr), &f->rows[i].row, f->rows[i].vaddr);
	for (size_t i = 0; i < f->nr_fdes; i++) {
		assert_true(f->fdes[i].lo >= t->base && f->fdes[i].hi <= t->end);
		if (f->fdes[i].lo > t->base && !in_fde(f, f->fdes[i].lo - 1))
			assert_int_equal(lookup(t, f->fdes[i].lo - 1)->cfa_rule, JBPF_CFA_NONE);
		if (f->fdes[i].hi < t->end && !in_fde(f, f->fdes[i].hi))
			assert_int_equal(lookup(t, f->fdes[i].hi)->cfa_rule, JBPF_CFA_NONE);
	}
}

static inline struct unwind_table *build_fixture(const char *name, const char *debug_name)
{
	char path[PATH_MAX], err[256];
	struct unwind_table *t = NULL;
	int fd, debug_fd = -1, ret;

	fd = open(fixture_path(name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	if (debug_name) {
		debug_fd = open(fixture_path(debug_name, path, sizeof(path)), O_RDONLY | O_CLOEXEC);
		assert_true(debug_fd >= 0);
	}
	ret = unwind_table__build(fd, debug_fd, &t, err, sizeof(err));
	if (ret)
		fail_msg("%s: %d: %s", name, ret, err);
	close(fd);
	if (debug_fd >= 0)
		close(debug_fd);
	assert_well_formed(t);
	return t;
}

/* The address of a symbol of a fixture, from nm's listing. */
static inline uint64_t fixture_symbol_in(const char *nm_file, const char *name)
{
	char path[PATH_MAX], line[256], sym[128], type;
	unsigned long addr;
	FILE *fp = fopen(fixture_path(nm_file, path, sizeof(path)), "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%lx %c %127s", &addr, &type, sym) == 3 && strcmp(sym, name) == 0) {
			fclose(fp);
			return addr;
		}
	fclose(fp);
	fail_msg("no symbol %s in %s", name, nm_file);
	return 0;
}

static inline uint64_t fixture_symbol(const char *name)
{
	return fixture_symbol_in("unwind_prog.nm", name);
}

static inline const struct fde *fde_at(const struct frames *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nr_fdes; i++)
		if (vaddr >= f->fdes[i].lo && vaddr < f->fdes[i].hi)
			return &f->fdes[i];
	fail_msg("no FDE covers %#lx", (unsigned long)vaddr);
	return NULL;
}

static inline void read_fixture_frames(const char *name, struct frames *f)
{
	char path[PATH_MAX];

	read_frames(fixture_path(name, path, sizeof(path)), f);
}

#endif /* JBPF_UNWIND_READELF_H */
