/*
 * table: one ELF file's unwind table (API in unwind.h).
 *
 *   1. The executable PT_LOAD segments give the table's span:
 *      base = lowest p_vaddr, end = highest p_vaddr + p_memsz.
 *   2. The CFI sources, first to last: the file's .eh_frame, the file's
 *      .debug_frame, the debug file's .debug_frame. Each FDE range (fde.c),
 *      clipped to the span, is kept where no earlier source covers it.
 *   3. Each range is stepped through row by row: dwarf_cfi_addrframe at an
 *      address gives the rules and, through dwarf_frame_info, the end of
 *      the range they hold for, where the next row starts. rule.c turns
 *      the rules into a row; rows equal to the one before are dropped.
 *   4. Code between ranges, and before the first or after the last, gets
 *      a JBPF_CFA_NONE row, so every pc in [base, end) has a row and the
 *      walker never takes a neighbour's rule for code without CFI.
 *
 * libelf reads the file in ELF_C_READ mode (pread, not mmap: a file
 * truncated meanwhile gives an error, not SIGBUS), once its header's
 * section and program header counts passed common/elf_limits.h; it checks
 * that every section lies inside the file, and reads at most the section
 * names and the two CFI sections, each at most UNWIND_MAX_CFI_BYTES (a
 * compressed one is skipped, never inflated). fde.c checks every
 * FDE's instructions before libdw may run any (cfa_check.h bounds what
 * libdw allocates for them), and libdw reads each section through a view
 * holding that section alone (view.h), never the file. Rows are bounded
 * by UNWIND_MAX_ROWS while they are made, before each allocation, and
 * libdw's time by the work budget below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "common/clock.h"
#include "common/elf_limits.h"
#include "unwind/cfa_check.h"
#include "unwind/fde.h"
#include "unwind/rule.h"
#include "unwind/unwind.h"
#include "unwind/view.h"

/*
 * Rows in one table: the walker's binary search takes 22 steps for 4M rows,
 * and 4M rows are 48 MiB, most of the default row budget. libjvm, the
 * largest file we have met, needs far fewer (see bench/unwind_tables.sh).
 */
#define UNWIND_MAX_ROWS (4u << 20)

/*
 * libdw's work, in bytes of call frame instructions run. Each
 * dwarf_cfi_addrframe runs the FDE's instructions from their start, so an
 * FDE of n rows costs some n^2 steps: a hostile FDE of 100 KB of
 * remember_state/restore_state pairs and 1000 rows took 19 s to step
 * through under ASan. Each row is counted as its range's program (fde.h:
 * the most libdw may run to reach it, remember_state weighted by
 * cfa_check.h) plus UNWIND_ROW_WORK for the lookup and the frame libdw
 * allocates, against two bounds; past either, the rest of the range is
 * one STOP row, counted:
 *   - one FDE: UNWIND_MAX_FDE_WORK, so that one FDE cannot spend the
 *     table's budget. The costliest real FDE we have met, in JDK 17's
 *     libjvm, has 530 rows of 1884 bytes with 265 remember_states: 3.2M.
 *   - one table: UNWIND_WORK_FLOOR plus UNWIND_WORK_PER_BYTE per byte of
 *     the CFI sections read. Real files use 13 to 17 a byte, about half
 *     (libc 2.5M, libjvm 20 to 23M, libLLVM-14 85M of its 195M; the
 *     "cut" column of bench/unwind_tables.sh is 0 for each); the floor
 *     holds two of the costliest real FDEs. fuzz_unwind's largest input
 *     (256 KiB) gets 16M; its costliest programs, remember_state and
 *     restore_state pairs, for each of which ASan fills and quarantines
 *     the frame libdw allocates, took 0.6 to 2.5 s under fuzz_unwind's
 *     build on this machine at a load of 8 (20 to 60 ms in release builds).
 */
#define UNWIND_ROW_WORK 32u
#define UNWIND_MAX_FDE_WORK (8u << 20)
#define UNWIND_WORK_FLOOR (8u << 20)
#define UNWIND_WORK_PER_BYTE 32u

/* The CFI sources, in the order they are trusted. */
enum {
	SRC_EH_FRAME,
	SRC_DEBUG_FRAME,
	SRC_DEBUG_FILE,
	SRC_NR,
};

struct builder {
	Elf *elf, *debug_elf;
	struct cfi_view view[SRC_NR];
	Dwarf *dwarf[SRC_NR];
	Dwarf_CFI *cfi[SRC_NR];
	uint64_t base, end;
	uint64_t work_left;   /* libdw's budget (UNWIND_WORK_FLOOR and on) */
	struct fde_list ranges;
	struct unwind_table *table;
	size_t cap;
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct builder *b, int ret, const char *fmt, ...)
{
	va_list ap;

	if (b->err_size) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->err_size, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int exec_span(struct builder *b)
{
	size_t phnum;
	GElf_Phdr ph;
	bool found = false;

	if (elf_getphdrnum(b->elf, &phnum) != 0)
		return fail(b, -ENOEXEC, "no program headers: %s", elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return fail(b, -ENOEXEC, "a PT_LOAD segment wraps around");
		if (!found || ph.p_vaddr < b->base)
			b->base = ph.p_vaddr;
		if (!found || ph.p_vaddr + ph.p_memsz > b->end)
			b->end = ph.p_vaddr + ph.p_memsz;
		found = true;
	}
	if (!found)
		return fail(b, -ENOENT, "no executable segment");
	if (b->end - b->base > UINT32_MAX)
		return fail(b, -EFBIG, "executable code spans more than 4 GiB");
	return 0;
}

/* The section named name, if it has contents in the file. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		/* lld types .eh_frame SHT_X86_64_UNWIND, as the psABI says; GNU ld keeps SHT_PROGBITS. */
		if (!gelf_getshdr(scn, shdr) || (shdr->sh_type != SHT_PROGBITS && shdr->sh_type != SHT_X86_64_UNWIND))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/*
 * Keeps the parts of list->ranges[first..] that ranges[0..first) (sorted,
 * disjoint) leave uncovered, clipped to the span. The kept ranges are
 * appended; the originals are removed.
 */
static int keep_uncovered(struct builder *b, size_t first)
{
	struct fde_list *l = &b->ranges;
	size_t nr = l->nr;
	int err = 0;

	for (size_t i = first; i < nr && !err; i++) {
		uint64_t lo = l->ranges[i].lo < b->base ? b->base : l->ranges[i].lo;
		uint64_t hi = l->ranges[i].hi > b->end ? b->end : l->ranges[i].hi;
		int source = l->ranges[i].source;
		size_t lo_idx = 0, hi_idx = first;

		/* Covering ranges that may overlap [lo, hi): from the first
		 * one ending after lo. */
		while (lo_idx < hi_idx) {
			size_t mid = lo_idx + (hi_idx - lo_idx) / 2;

			if (l->ranges[mid].hi <= lo)
				lo_idx = mid + 1;
			else
				hi_idx = mid;
		}
		for (size_t j = lo_idx; j < first && lo < hi && l->ranges[j].lo < hi; j++) {
			if (l->ranges[j].lo > lo)
				err = fde__push(l, lo, l->ranges[j].lo, source, l->ranges[i].program);
			if (l->ranges[j].hi > lo)
				lo = l->ranges[j].hi;
		}
		if (!err && lo < hi)
			err = fde__push(l, lo, hi, source, l->ranges[i].program);
	}
	if (err)
		return fail(b, err, err == -EFBIG ? "more than %u FDEs" : "out of memory", UNWIND_MAX_ROWS);
	if (l->nr > nr)
		memmove(l->ranges + first, l->ranges + nr, (l->nr - nr) * sizeof(*l->ranges));
	l->nr -= nr - first;
	fde__sort_disjoint(l);
	return 0;
}

static bool uses_source(const struct builder *b, int source)
{
	for (size_t i = 0; i < b->ranges.nr; i++)
		if (b->ranges.ranges[i].source == source)
			return true;
	return false;
}

/* Its ranges go: code that stays a gap of JBPF_CFA_NONE rows. */
static void drop_source(struct builder *b, int source)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->ranges.nr; i++)
		if (b->ranges.ranges[i].source != source)
			b->ranges.ranges[kept++] = b->ranges.ranges[i];
	b->ranges.nr = kept;
}

/*
 * libdw's reader of the CFI, over a view holding the section alone
 * (view.h): libdw then runs only the instructions fde.c checked, and
 * reads nothing else of the file. For .debug_frame that takes a Dwarf.
 */
static Dwarf_CFI *open_cfi(struct builder *b, Elf_Data *data, uint64_t sh_addr, int source, const char *name)
{
	if (cfi_view__open(&b->view[source], name, data->d_buf, data->d_size, sh_addr) != 0)
		return NULL;
	if (source == SRC_EH_FRAME)
		return dwarf_getcfi_elf(b->view[source].elf);
	b->dwarf[source] = dwarf_begin_elf(b->view[source].elf, DWARF_C_READ, NULL);
	return b->dwarf[source] ? dwarf_getcfi(b->dwarf[source]) : NULL;
}

static int read_source(struct builder *b, Elf *elf, int source, const char *name)
{
	const unsigned char *ident;
	GElf_Shdr shdr;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t first = b->ranges.nr;
	uint64_t refused = b->ranges.refused;
	int err;

	scn = find_section(elf, name, &shdr);
	/*
	 * A compressed section's bytes are no CFI: inflating it is left out
	 * (its size would be the file's claim), and the code it describes
	 * keeps a gap, walked by frame pointers.
	 */
	if (!scn || (shdr.sh_flags & SHF_COMPRESSED))
		return 0;
	if (shdr.sh_size > UNWIND_MAX_CFI_BYTES)
		return fail(b, -EFBIG, "%s is larger than %u MiB", name, UNWIND_MAX_CFI_BYTES >> 20);
	data = elf_getdata(scn, NULL);
	ident = (const unsigned char *)elf_getident(elf, NULL);
	if (!data || !data->d_buf || !ident)
		return 0;
	err = fde__read_section(ident, data, source == SRC_EH_FRAME, shdr.sh_addr, source, &b->ranges);
	if (err)
		return fail(b, err, err == -EFBIG ? "more than %u FDEs" : "out of memory", UNWIND_MAX_ROWS);
	if (b->ranges.refused > refused)
		return fail(b, -EINVAL,
			    "%s has %llu FDEs past the bounds on call frame instructions (a register number over %u, "
			    "remember_state deeper than %u, or an operand past the end)",
			    name, (unsigned long long)(b->ranges.refused - refused), CFA_MAX_REGISTER, CFA_MAX_DEPTH);
	err = keep_uncovered(b, first);
	if (err || !uses_source(b, source))
		return err;
	b->work_left += (uint64_t)data->d_size * UNWIND_WORK_PER_BYTE;
	b->cfi[source] = open_cfi(b, data, shdr.sh_addr, source, name);
	if (!b->cfi[source])
		drop_source(b, source);
	return 0;
}

static bool same_rules(const struct jbpf_unwind_row *a, const struct jbpf_unwind_row *b)
{
	return a->cfa_rule == b->cfa_rule && a->rbp_rule == b->rbp_rule && a->cfa_offset == b->cfa_offset &&
	       a->rbp_offset == b->rbp_offset;
}

static int push_row(struct builder *b, uint64_t vaddr, const struct jbpf_unwind_row *rules)
{
	struct unwind_table *t = b->table;
	struct jbpf_unwind_row row = *rules;

	row.pc = (__u32)(vaddr - b->base);
	row.unused = 0;
	/* A later rule for the same pc replaces the earlier one. */
	if (t->nr_rows && t->rows[t->nr_rows - 1].pc == row.pc)
		t->nr_rows--;
	if (t->nr_rows && same_rules(&t->rows[t->nr_rows - 1], &row))
		return 0;
	if (t->nr_rows == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct jbpf_unwind_row *rows;

		if (t->nr_rows >= UNWIND_MAX_ROWS)
			return fail(b, -EFBIG, "more than %u unwind rows", UNWIND_MAX_ROWS);
		if (cap > UNWIND_MAX_ROWS)
			cap = UNWIND_MAX_ROWS;
		rows = realloc(t->rows, cap * sizeof(*rows));
		if (!rows)
			return fail(b, -ENOMEM, "out of memory for %zu unwind rows", cap);
		t->rows = rows;
		b->cap = cap;
	}
	t->rows[t->nr_rows++] = row;
	return 0;
}

static int push_stop(struct builder *b, uint64_t vaddr)
{
	struct jbpf_unwind_row row = { 0 };

	rule__stop(&row);
	return push_row(b, vaddr, &row);
}

/* Code from vaddr on that no FDE covers. */
static int push_gap(struct builder *b, uint64_t vaddr)
{
	struct jbpf_unwind_row row = { 0 };

	rule__none(&row);
	return push_row(b, vaddr, &row);
}

/* The rows of [lo, hi), described by cfi, each costing libdw program bytes and more. */
static int step_range(struct builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, uint32_t program)
{
	uint64_t cost = (uint64_t)program + UNWIND_ROW_WORK, fde_work = 0;
	struct jbpf_unwind_row row = { 0 };
	Dwarf_Frame *frame;
	Dwarf_Addr start, end;
	uint64_t pc = lo;
	int err;

	while (pc < hi) {
		if (cost > b->work_left || fde_work + cost > UNWIND_MAX_FDE_WORK) {
			b->table->stats.ranges_over_work++;
			b->table->stats.rows_stop++;
			return push_stop(b, pc);
		}
		b->work_left -= cost;
		fde_work += cost;
		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) {
			/* The FDE was listed but libdw cannot use it. */
			b->table->stats.rows_stop++;
			return push_stop(b, pc);
		}
		if (dwarf_frame_info(frame, &start, &end, NULL) < 0 || end <= pc) {
			free(frame);
			b->table->stats.rows_stop++;
			return push_stop(b, pc);
		}
		switch (rule__from_frame(frame, &row)) {
		case RULE_STOP:
			b->table->stats.rows_stop++;
			break;
		case RULE_PLT:
			b->table->stats.rows_plt++;
			break;
		case RULE_SIMPLE:
			break;
		}
		free(frame);
		err = push_row(b, pc, &row);
		if (err)
			return err;
		pc = end;
	}
	return 0;
}

static int make_rows(struct builder *b)
{
	uint64_t covered = b->base;
	int err;

	for (size_t i = 0; i < b->ranges.nr; i++) {
		const struct fde_range *r = &b->ranges.ranges[i];

		if (r->lo > covered) {
			err = push_gap(b, covered);
			if (err)
				return err;
		}
		err = step_range(b, b->cfi[r->source], r->lo, r->hi, r->program);
		if (err)
			return err;
		covered = r->hi;
	}
	if (covered < b->end)
		return push_gap(b, covered);
	return 0;
}

static int build(struct builder *b, int fd, int debug_fd)
{
	GElf_Ehdr ehdr;
	int err;

	if (elf_limits__check_fd(fd))
		return fail(b, -ENOEXEC, "the ELF header counts more than %u sections or %u program headers, or cannot be read",
			    ELF_MAX_SECTIONS, ELF_MAX_SEGMENTS);
	b->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!b->elf || elf_kind(b->elf) != ELF_K_ELF || !gelf_getehdr(b->elf, &ehdr))
		return fail(b, -ENOEXEC, "not an ELF file");
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != EM_X86_64)
		return fail(b, -ENOEXEC, "not an x86-64 ELF file");
	err = exec_span(b);
	if (err)
		return err;
	/* A debug file past the bounds is no debug file: the file's own CFI still counts. */
	if (debug_fd >= 0 && !elf_limits__check_fd(debug_fd)) {
		b->debug_elf = elf_begin(debug_fd, ELF_C_READ, NULL);
		if (b->debug_elf && elf_kind(b->debug_elf) != ELF_K_ELF) {
			elf_end(b->debug_elf);
			b->debug_elf = NULL;
		}
	}
	b->ranges.max = UNWIND_MAX_ROWS;
	b->work_left = UNWIND_WORK_FLOOR;
	err = read_source(b, b->elf, SRC_EH_FRAME, ".eh_frame");
	if (!err)
		err = read_source(b, b->elf, SRC_DEBUG_FRAME, ".debug_frame");
	if (!err && b->debug_elf)
		err = read_source(b, b->debug_elf, SRC_DEBUG_FILE, ".debug_frame");
	if (err)
		return err;
	b->table->stats.fdes = b->ranges.fdes;
	if (b->ranges.nr == 0)
		return fail(b, -ENOENT, "no call frame information (.eh_frame or .debug_frame)");
	return make_rows(b);
}

int unwind_table__build(int fd, int debug_fd, struct unwind_table **out, char *err, size_t err_size)
{
	uint64_t start_ns = clock__monotonic_ns();
	struct builder b = { .err = err, .err_size = err_size };
	int ret;

	if (err_size)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(&b, -ENOSYS, "libelf: %s", elf_errmsg(-1));
	b.table = calloc(1, sizeof(*b.table));
	if (!b.table)
		return fail(&b, -ENOMEM, "out of memory");
	ret = build(&b, fd, debug_fd);
	if (b.cfi[SRC_EH_FRAME])
		dwarf_cfi_end(b.cfi[SRC_EH_FRAME]);
	for (int i = 0; i < SRC_NR; i++) {
		dwarf_end(b.dwarf[i]);
		cfi_view__close(&b.view[i]);
	}
	elf_end(b.debug_elf);
	elf_end(b.elf);
	fde__list_free(&b.ranges);
	if (ret) {
		unwind_table__free(b.table);
		return ret;
	}
	/* Give back what doubling left unused: the cache counts bytes. */
	if (b.cap > b.table->nr_rows) {
		struct jbpf_unwind_row *rows = realloc(b.table->rows, b.table->nr_rows * sizeof(*rows));

		if (rows)
			b.table->rows = rows;
	}
	b.table->base = b.base;
	b.table->end = b.end;
	b.table->stats.build_ns = clock__monotonic_ns() - start_ns;
	*out = b.table;
	return 0;
}

void unwind_table__free(struct unwind_table *table)
{
	if (!table)
		return;
	free(table->rows);
	free(table);
}

size_t unwind_table__bytes(const struct unwind_table *table)
{
	return sizeof(*table) + table->nr_rows * sizeof(table->rows[0]);
}
