/*
 * unwind tables: rows built from fixture files compiled at test time
 * (tests/fixtures/fixtures.mk), checked against what readelf makes of the
 * same files (--debug-dump=frames-interp, written next to each fixture by
 * the build): every row readelf prints must be the row the table gives
 * for its address. Then what the rows mean (frame-pointer code is rbp
 * based after its prologue, code without is rsp based with changing
 * offsets, the .plt follows the PLT pattern, code between FDEs stops the
 * walk), rules the walker cannot follow (hand-written CFI), the separate
 * debug file, a file with no CFI, and hostile files: the inputs the
 * fuzzer found (tests/fuzz/regressions/fuzz_unwind), replayed under a
 * bound on the largest allocation, and call frame programs past the
 * bounds libdw is held to.
 */
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
#include "unwind_readelf.h"

static void test_rows_match_readelf(void **state)
{
	struct frames *f = malloc(sizeof(*f));
	struct unwind_table *t = build_fixture("unwind_prog", NULL);

	read_fixture_frames("unwind_prog.frames", f);
	assert_matches_readelf(t, f);
	assert_int_equal(t->stats.fdes, f->nr_fdes);
	assert_int_equal(t->stats.rows_stop, 0);
	unwind_table__free(t);
	free(f);
}

/* After push %rbp; mov %rsp,%rbp the CFA is rbp + 16 and the caller's rbp at CFA - 16. */
static void test_frame_pointer_function(void **state)
{
	struct frames *f = malloc(sizeof(*f));
	struct unwind_table *t = build_fixture("unwind_prog", NULL);
	uint64_t start = fixture_symbol("fp_work");
	const struct fde *fde;
	bool rbp_based = false;

	read_fixture_frames("unwind_prog.frames", f);
	fde = fde_at(f, start);
	assert_int_equal(lookup(t, start)->cfa_rule, JBPF_CFA_RSP);
	assert_int_equal(lookup(t, start)->cfa_offset, 8);
	for (uint64_t pc = start; pc < fde->hi; pc++) {
		const struct jbpf_unwind_row *row = lookup(t, pc);

		if (row->cfa_rule == JBPF_CFA_RBP) {
			assert_int_equal(row->cfa_offset, 16);
			assert_int_equal(row->rbp_rule, JBPF_RBP_AT);
			assert_int_equal(row->rbp_offset, -16);
			rbp_based = true;
		}
	}
	assert_true(rbp_based);
	unwind_table__free(t);
	free(f);
}

/* Without frame pointers: rsp based all through, the offset rising with each push and falling back. */
static void test_no_frame_pointer_function(void **state)
{
	struct frames *f = malloc(sizeof(*f));
	struct unwind_table *t = build_fixture("unwind_prog", NULL);
	uint64_t start = fixture_symbol("nofp_work");
	const struct fde *fde;
	int offsets = 0, max = 0, last = 0;

	read_fixture_frames("unwind_prog.frames", f);
	fde = fde_at(f, start);
	for (uint64_t pc = fde->lo; pc < fde->hi; pc++) {
		const struct jbpf_unwind_row *row = lookup(t, pc);

		assert_int_equal(row->cfa_rule, JBPF_CFA_RSP);
		if (row->cfa_offset != last)
			offsets++;
		last = row->cfa_offset;
		if (row->cfa_offset > max)
			max = row->cfa_offset;
	}
	assert_int_equal(lookup(t, fde->lo)->cfa_offset, 8);
	assert_int_equal(lookup(t, fde->hi - 1)->cfa_offset, 8); /* at its ret */
	assert_true(offsets >= 6);
	assert_true(max >= 200); /* its 200-byte buffer */
	unwind_table__free(t);
	free(f);
}

/* printf is called through the lazy .plt, whose CFA is the PLT expression. */
static void test_plt(void **state)
{
	struct unwind_table *t = build_fixture("unwind_prog", NULL);
	bool plt = false;

	assert_true(t->stats.rows_plt >= 1);
	for (size_t i = 0; i < t->nr_rows; i++)
		if (t->rows[i].cfa_rule == JBPF_CFA_PLT) {
			assert_int_equal(t->rows[i].cfa_offset, 0);
			assert_int_equal(t->rows[i].rbp_rule, JBPF_RBP_SAME);
			plt = true;
		}
	assert_true(plt);
	unwind_table__free(t);
}

/* _start's return address is undefined: the walk ends there, complete. */
static void test_outermost_frame(void **state)
{
	struct unwind_table *t = build_fixture("unwind_prog", NULL);

	assert_int_equal(lookup(t, fixture_symbol("_start"))->cfa_rule, JBPF_CFA_END);
	unwind_table__free(t);
}

static void test_no_cfi(void **state)
{
	char path[PATH_MAX], err[256] = "";
	struct unwind_table *t = NULL;
	int fd = open(fixture_path("libunwind_nocfi.so", path, sizeof(path)), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(unwind_table__build(fd, -1, &t, err, sizeof(err)), -ENOENT);
	assert_null(t);
	assert_non_null(strstr(err, "no call frame information"));
	close(fd);
}

/* The stripped library's rows come from its debug file's .debug_frame. */
static void test_debug_file(void **state)
{
	struct frames *f = malloc(sizeof(*f));
	struct unwind_table *t = build_fixture("libunwind_nocfi.so", "libunwind_nocfi.so.dbg");

	read_fixture_frames("libunwind_nocfi.so.frames", f);
	assert_matches_readelf(t, f);
	assert_int_equal(t->stats.fdes, 2);
	unwind_table__free(t);
	free(f);
}

/* Half the code described by .eh_frame, half only by the debug file's .debug_frame: both halves unwind. */
static void test_eh_frame_and_debug_file(void **state)
{
	struct frames *f = malloc(sizeof(*f));
	struct unwind_table *t = build_fixture("libunwind_mixed.so", "libunwind_mixed.so.dbg");

	read_fixture_frames("libunwind_mixed.so.frames", f);
	assert_matches_readelf(t, f);
	assert_int_equal(t->stats.fdes, f->nr_fdes);
	assert_true(f->nr_fdes >= 4);
	assert_true(t->stats.rows_plt >= 1);
	unwind_table__free(t);
	free(f);
}

static void test_free_null(void **state)
{
	unwind_table__free(NULL);
}

static uint64_t edge(const char *name)
{
	return fixture_symbol_in("libunwind_edge.so.nm", name);
}

static void assert_rule_at(const struct unwind_table *t, uint64_t vaddr, enum jbpf_cfa_rule rule, int offset)
{
	const struct jbpf_unwind_row *row = lookup(t, vaddr);

	if (row->cfa_rule != rule || row->cfa_offset != offset)
		fail_msg("at %#lx: cfa %u%+d, expected %u%+d", (unsigned long)vaddr, row->cfa_rule, row->cfa_offset,
			 rule, offset);
}

/* Rules the walker cannot follow stop it there, counted; the code after them unwinds again. */
static void test_rules_that_stop(void **state)
{
	struct unwind_table *t = build_fixture("libunwind_edge.so", NULL);
	uint64_t f;

	/* One nop and one more byte of CFA offset per row, 5000 rows in
	 * 20 KB of instructions: the first rows are kept, and the FDE stops
	 * where stepping it would cost libdw more than an FDE may (some 400
	 * rows of 20 KB each). */
	f = edge("edge_long_fde");
	assert_rule_at(t, f, JBPF_CFA_RSP, 8);
	assert_rule_at(t, f + 100, JBPF_CFA_RSP, 8 + 100);
	assert_rule_at(t, f + 4095, JBPF_CFA_STOP, 0);
	assert_rule_at(t, f + 5000, JBPF_CFA_STOP, 0);
	assert_int_equal(t->stats.ranges_over_work, 1);
	/* sub $40000, %rsp is 7 bytes; 40008 does not fit in 16 bits. */
	f = edge("edge_big_frame");
	assert_rule_at(t, f, JBPF_CFA_RSP, 8);
	assert_rule_at(t, f + 7, JBPF_CFA_STOP, 0);
	assert_rule_at(t, f + 14, JBPF_CFA_RSP, 8);
	/* Each mov is 3 bytes. */
	f = edge("edge_cfa_rbx");
	assert_rule_at(t, f + 3, JBPF_CFA_STOP, 0);
	assert_rule_at(t, f + 6, JBPF_CFA_RSP, 8);
	f = edge("edge_rbp_in_register");
	assert_rule_at(t, f + 3, JBPF_CFA_STOP, 0);
	assert_rule_at(t, f + 6, JBPF_CFA_RSP, 8);
	/* An expression that is not the PLT's. */
	f = edge("edge_expression");
	assert_rule_at(t, f + 1, JBPF_CFA_STOP, 0);
	assert_rule_at(t, f + 2, JBPF_CFA_RSP, 8);
	assert_int_equal(t->stats.rows_plt, 0);
	assert_rule_at(t, edge("edge_outermost"), JBPF_CFA_END, 0);
	/* The long FDE's cut, the big frame, rbx, rbp, the expression. */
	assert_int_equal(t->stats.rows_stop, 5);
	assert_int_equal(t->stats.fdes, 6);
	unwind_table__free(t);
}

/* The fixture program's bytes, and where its .eh_frame lies in them. */
static uint8_t *fixture_bytes(size_t *len, size_t *eh_off, size_t *eh_size)
{
	char path[PATH_MAX];
	int fd = open(fixture_path("unwind_prog", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	assert_int_equal(pread(fd, buf, st.st_size, 0), st.st_size);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	*eh_size = 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".eh_frame") == 0) {
			*eh_off = sh.sh_offset;
			*eh_size = sh.sh_size;
		}
	elf_end(elf);
	close(fd);
	assert_true(*eh_size > 0);
	*len = st.st_size;
	return buf;
}

static int build_bytes(const uint8_t *buf, size_t len, char *err, size_t err_size, struct unwind_table **t)
{
	char path[] = "/tmp/unwind-hostile-XXXXXX";
	int fd = mkstemp(path), ret;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	*t = NULL;
	ret = unwind_table__build(fd, -1, t, err, err_size);
	close(fd);
	return ret;
}

/*
 * Truncated, garbage and bit-flipped files: an error or a well-formed
 * table, never a crash or a read out of bounds (ASan watches).
 */
static void test_hostile_files(void **state)
{
	size_t len, eh_off, eh_size;
	uint8_t *orig = fixture_bytes(&len, &eh_off, &eh_size);
	uint8_t *buf = malloc(len);
	struct unwind_table *t;
	char err[256];
	unsigned seed = 13, built = 0;

	for (size_t cut = 0; cut < len; cut += len / 16 + 1) {
		if (build_bytes(orig, cut, err, sizeof(err), &t) == 0) {
			assert_well_formed(t);
			unwind_table__free(t);
		}
	}
	memset(buf, 0x5a, len);
	assert_int_equal(build_bytes(buf, len, err, sizeof(err), &t), -ENOEXEC);
	assert_true(err[0] != '\0');
	for (int round = 0; round < 300; round++) {
		memcpy(buf, orig, len);
		for (int flips = 0; flips < 4; flips++)
			buf[eh_off + rand_r(&seed) % eh_size] ^= (uint8_t)(1u << (rand_r(&seed) % 8));
		if (build_bytes(buf, len, err, sizeof(err), &t) == 0) {
			assert_well_formed(t);
			unwind_table__free(t);
			built++;
		}
	}
	/* The flips reached the row making, not only the checks before it. */
	assert_true(built > 0);
	free(buf);
	free(orig);
}

/* ASan's allocator hooks (the unit tests run under ASan): each allocation's size. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));
static size_t largest_alloc;

static void note_alloc(const volatile void *p, size_t size)
{
	(void)p;
	if (size > largest_alloc)
		largest_alloc = size;
}

static void note_free(const volatile void *p)
{
	(void)p;
}

/*
 * Every input fuzz_unwind found a bug with: an error or a well-formed
 * table, and no single allocation larger than the build's own (rows for
 * a file this small, copies of its sections) and libdw's, which
 * cfa_check.h holds to some 140 KiB: 1 MiB and 16 bytes per byte of the
 * file. cie-register-35535632 names register 35,535,632 in a CIE's
 * initial instructions, for which libdw asked for 284 MB: it is refused.
 * no-fde-range-null-ranges has CFI but no FDE whose range could be
 * decoded: the work budget's charge of overlapping FDEs added an offset to
 * a NULL array, found by fuzz_unwind on the budget's first day. Clang's
 * UBSan reports that (the fuzz smoke run's replay fails on it); GCC's,
 * which builds these tests, does not check it.
 */
static void test_fuzz_regressions(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], err[256];
	const char *source = __FILE__, *slash = strrchr(source, '/');
	struct dirent *de;
	unsigned replayed = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.*s/../fuzz/regressions/fuzz_unwind", slash ? (int)(slash - source) : 1,
		 slash ? source : ".");
	d = opendir(dir);
	assert_non_null(d);
	assert_int_equal(__sanitizer_install_malloc_and_free_hooks(note_alloc, note_free) != 0, 1);
	while ((de = readdir(d)) != NULL) {
		struct unwind_table *t = NULL;
		struct stat st;
		int fd, ret;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		largest_alloc = 0;
		ret = unwind_table__build(fd, -1, &t, err, sizeof(err));
		close(fd);
		if (largest_alloc > (1u << 20) + 16 * (size_t)st.st_size)
			fail_msg("%s: an allocation of %zu bytes for a file of %lld", de->d_name, largest_alloc,
				 (long long)st.st_size);
		if (ret == 0) {
			assert_well_formed(t);
			unwind_table__free(t);
		} else {
			assert_true(err[0] != '\0');
		}
		if (strcmp(de->d_name, "cie-register-35535632") == 0) {
			assert_int_equal(ret, -EINVAL);
			assert_non_null(strstr(err, "register number over 255"));
		}
		replayed++;
	}
	closedir(d);
	assert_true(replayed > 0);
}

/* ---- crafted files: one CFI section of one FDE ---- */

#define CRAFT_CODE 0x1000ull /* the FDE's first address */

static size_t put_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return 4;
}

static size_t put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return 8;
}

/*
 * A CIE (CFA rsp+8, return address at CFA-8) and one FDE from CRAFT_CODE
 * whose instructions are pairs remember_state/restore_state pairs, then
 * rows advance_loc by 1: rows + 1 rows, each rsp+8. In .eh_frame's format
 * (udata4 pointers), else .debug_frame's. Returns the section's size.
 */
static size_t craft_cfi(uint8_t *out, bool eh_frame, size_t pairs, size_t rows)
{
	static const uint8_t eh_cie[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x03,
					  0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0 };
	static const uint8_t debug_cie[] = { 0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16,
					     0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0 };
	const uint8_t *cie = eh_frame ? eh_cie : debug_cie;
	size_t cie_len = eh_frame ? sizeof(eh_cie) : sizeof(debug_cie), n = 0, fde;

	n += put_u32(out + n, (uint32_t)cie_len);
	memcpy(out + n, cie, cie_len);
	n += cie_len;
	fde = n;
	n += 4; /* its length, below */
	if (eh_frame) {
		n += put_u32(out + n, (uint32_t)n); /* back to the CIE at 0 */
		n += put_u32(out + n, (uint32_t)CRAFT_CODE);
		n += put_u32(out + n, (uint32_t)(rows + 16));
		out[n++] = 0; /* no augmentation data */
	} else {
		n += put_u32(out + n, 0);
		n += put_u64(out + n, CRAFT_CODE);
		n += put_u64(out + n, rows + 16);
	}
	for (size_t i = 0; i < pairs; i++) {
		out[n++] = 0x0a;
		out[n++] = 0x0b;
	}
	memset(out + n, 0x41, rows);
	n += rows;
	while ((n - fde) % 4)
		out[n++] = 0;
	put_u32(out + fde, (uint32_t)(n - fde - 4));
	n += put_u32(out + n, 0); /* the terminator */
	return n;
}

/*
 * An x86-64 ELF file (in a temporary file, unlinked) whose one executable
 * segment spans [0, 1 MiB) and whose one other section, name with flags,
 * holds cfi. Returns its descriptor, read-write.
 */
static int craft_file(const char *name, uint64_t flags, const uint8_t *cfi, size_t len)
{
	char path[] = "/tmp/unwind-craft-XXXXXX";
	size_t names_off = 0x1000 + len, names_size = 1 + strlen(name) + 1 + sizeof(".shstrtab");
	size_t sh_off = (names_off + names_size + 7) & ~(size_t)7;
	Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			  .e_phoff = sizeof(Elf64_Ehdr), .e_shoff = sh_off, .e_ehsize = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1, .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = 3, .e_shstrndx = 2 };
	Elf64_Phdr ph = { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = 0x1000, .p_memsz = 1u << 20,
			  .p_align = 0x1000 };
	Elf64_Shdr sh[3] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = flags, .sh_addr = 0x1000, .sh_offset = 0x1000,
		  .sh_size = len, .sh_addralign = 8 },
		{ .sh_name = (Elf64_Word)(2 + strlen(name)), .sh_type = SHT_STRTAB, .sh_offset = names_off,
		  .sh_size = names_size, .sh_addralign = 1 },
	};
	char names[128] = { 0 };
	int fd = mkstemp(path);

	assert_true(fd >= 0 && names_size <= sizeof(names));
	unlink(path);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(names + 1, name, strlen(name));
	memcpy(names + 2 + strlen(name), ".shstrtab", sizeof(".shstrtab"));
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	assert_int_equal(pwrite(fd, &ph, sizeof(ph), sizeof(eh)), (ssize_t)sizeof(ph));
	assert_int_equal(pwrite(fd, cfi, len, 0x1000), (ssize_t)len);
	assert_int_equal(pwrite(fd, names, names_size, (off_t)names_off), (ssize_t)names_size);
	assert_int_equal(pwrite(fd, sh, sizeof(sh), (off_t)sh_off), (ssize_t)sizeof(sh));
	return fd;
}

static int craft_build(int fd, struct unwind_table **t, char *err, size_t err_size)
{
	*t = NULL;
	return unwind_table__build(fd, -1, t, err, err_size);
}

/* The crafted FDE's rows as readelf would give them: rsp+8 throughout. */
static void test_crafted_file(void **state)
{
	uint8_t cfi[256];
	struct unwind_table *t;
	char err[256];
	int fd;

	for (int eh = 0; eh < 2; eh++) {
		fd = craft_file(eh ? ".eh_frame" : ".debug_frame", 0, cfi, craft_cfi(cfi, eh, 2, 8));
		assert_int_equal(craft_build(fd, &t, err, sizeof(err)), 0);
		assert_rule_at(t, CRAFT_CODE, JBPF_CFA_RSP, 8);
		assert_rule_at(t, CRAFT_CODE + 8, JBPF_CFA_RSP, 8);
		assert_int_equal(t->stats.fdes, 1);
		assert_int_equal(t->stats.rows_stop, 0);
		unwind_table__free(t);
		close(fd);
	}
}

/* lld types .eh_frame SHT_X86_64_UNWIND (libLLVM's is so): read like GNU ld's SHT_PROGBITS. */
static void test_eh_frame_typed_x86_64_unwind(void **state)
{
	uint8_t cfi[256];
	struct unwind_table *t;
	Elf64_Ehdr eh;
	Elf64_Word type = SHT_X86_64_UNWIND;
	char err[256];
	int fd = craft_file(".eh_frame", 0, cfi, craft_cfi(cfi, true, 2, 8));

	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	assert_int_equal(pwrite(fd, &type, sizeof(type), (off_t)(eh.e_shoff + sizeof(Elf64_Shdr) +
								   offsetof(Elf64_Shdr, sh_type))),
			 (ssize_t)sizeof(type));
	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), 0);
	assert_rule_at(t, CRAFT_CODE + 8, JBPF_CFA_RSP, 8);
	unwind_table__free(t);
	close(fd);
}

/*
 * A .debug_frame marked compressed (SHF_COMPRESSED) is not read, nor
 * inflated: its bytes are no CFI. Here they are plain CFI behind the flag,
 * which a reader ignoring the flag would take.
 */
static void test_compressed_debug_frame_is_not_read(void **state)
{
	uint8_t cfi[256];
	struct unwind_table *t;
	char err[256];
	int fd = craft_file(".debug_frame", SHF_COMPRESSED, cfi, craft_cfi(cfi, false, 2, 8));

	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), -ENOENT);
	assert_null(t);
	close(fd);
}

/*
 * A CFI section claiming 1 GiB in holes is refused before libelf reads
 * it; the digest hashes its header alone. Today's libelf reads any
 * section that lies inside the file, whatever its size.
 */
static void test_huge_cfi_section_is_not_read(void **state)
{
	uint8_t cfi[256], digest[UNWIND_DIGEST_LEN];
	struct rusage before, after;
	struct unwind_table *t;
	char err[256];
	int fd = craft_file(".eh_frame", 0, cfi, craft_cfi(cfi, true, 2, 8));

	sparse_elf_make_section_huge(fd, ".eh_frame", 1ull << 30);
	assert_int_equal(getrusage(RUSAGE_SELF, &before), 0);
	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, ".eh_frame is larger than"));
	assert_int_equal(unwind_digest__file(fd, -1, digest), 0);
	assert_int_equal(getrusage(RUSAGE_SELF, &after), 0);
	assert_true(after.ru_maxrss - before.ru_maxrss < 64 * 1024);
	close(fd);
}

/* A header counting 2^20 sections in holes: refused before libelf allocates for them. */
static void test_section_count_past_the_bound(void **state)
{
	uint8_t cfi[256], digest[UNWIND_DIGEST_LEN];
	struct unwind_table *t;
	char err[256];
	int fd = craft_file(".eh_frame", 0, cfi, craft_cfi(cfi, true, 2, 8));

	sparse_elf_count_sections(fd, 1u << 20);
	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "sections"));
	assert_int_equal(unwind_digest__file(fd, -1, digest), -ENOEXEC);
	close(fd);
}

/*
 * libdw runs an FDE's instructions from their start for every row: an FDE
 * of 100,000 remember_state/restore_state pairs and 1000 rows asks for 100
 * million pairs (19 s under ASan). The work bounds cut it after a few rows
 * with a STOP row, counted; the same FDE with 2 rows, within them, is
 * stepped to its end.
 */
static void test_libdw_work_is_bounded(void **state)
{
	size_t pairs = 100000, size = 2 * pairs + 4096;
	uint8_t *cfi = malloc(size);
	struct unwind_table *t;
	char err[256];
	int fd;

	assert_non_null(cfi);
	fd = craft_file(".eh_frame", 0, cfi, craft_cfi(cfi, true, pairs, 1000));
	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), 0);
	assert_rule_at(t, CRAFT_CODE, JBPF_CFA_RSP, 8);
	assert_rule_at(t, CRAFT_CODE + 999, JBPF_CFA_STOP, 0);
	assert_int_equal(t->stats.ranges_over_work, 1);
	unwind_table__free(t);
	close(fd);

	fd = craft_file(".eh_frame", 0, cfi, craft_cfi(cfi, true, pairs, 2));
	assert_int_equal(craft_build(fd, &t, err, sizeof(err)), 0);
	assert_rule_at(t, CRAFT_CODE + 2, JBPF_CFA_RSP, 8);
	assert_int_equal(t->stats.rows_stop, 0);
	unwind_table__free(t);
	close(fd);
	free(cfi);
}

/* Programs past the bounds are refused; what compilers write is not. */
static void test_cfa_programs(void **state)
{
	/* push %rbp; mov %rsp,%rbp; ... as GCC writes it. */
	static const uint8_t gcc[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x4c, 0x0c, 0x07, 0x08 };
	static const uint8_t reg_255[] = { 0x08, 0xff, 0x01 };        /* same_value r255 */
	static const uint8_t reg_256[] = { 0x08, 0x80, 0x02 };        /* same_value r256 */
	static const uint8_t reg_huge[] = { 0x07, 0x90, 0xf6, 0xf8, 0x10 }; /* undefined r35535632 */
	static const uint8_t cut_operand[] = { 0x0c, 0x07 };          /* def_cfa r7, no offset */
	static const uint8_t cut_block[] = { 0x0f, 0x05, 0x77, 0x08 }; /* a 5-byte expression, 2 there */
	static const uint8_t unknown_then_huge[] = { 0x3f, 0x08, 0x80, 0x80, 0x80, 0x10 };
	static const uint8_t set_loc[] = { 0x01, 0x00, 0x10, 0x00, 0x00 };
	uint8_t deep[2 * (CFA_MAX_DEPTH + 1)];

	assert_true(cfa_check__is_bounded(gcc, gcc + sizeof(gcc), 0x1b));
	assert_true(cfa_check__is_bounded(reg_255, reg_255 + sizeof(reg_255), 0x1b));
	assert_false(cfa_check__is_bounded(reg_256, reg_256 + sizeof(reg_256), 0x1b));
	assert_false(cfa_check__is_bounded(reg_huge, reg_huge + sizeof(reg_huge), 0x1b));
	assert_false(cfa_check__is_bounded(cut_operand, cut_operand + sizeof(cut_operand), 0x1b));
	assert_false(cfa_check__is_bounded(cut_block, cut_block + sizeof(cut_block), 0x1b));
	/* libdw stops at an opcode it does not know: nothing after it runs. */
	assert_true(cfa_check__is_bounded(unknown_then_huge, unknown_then_huge + sizeof(unknown_then_huge), 0x1b));
	/* remember_state nested CFA_MAX_DEPTH deep, then once more. */
	memset(deep, 0x0a, sizeof(deep));
	assert_true(cfa_check__is_bounded(deep, deep + CFA_MAX_DEPTH, 0x1b));
	assert_false(cfa_check__is_bounded(deep, deep + CFA_MAX_DEPTH + 1, 0x1b));
	/* Remembered and restored, any number of times. */
	for (size_t i = 0; i < sizeof(deep); i += 2) {
		deep[i] = 0x0a;
		deep[i + 1] = 0x0b;
	}
	assert_true(cfa_check__is_bounded(deep, deep + sizeof(deep), 0x1b));
	/* set_loc: 4 bytes under sdata4, an aligned address refused. */
	assert_true(cfa_check__is_bounded(set_loc, set_loc + sizeof(set_loc), 0x1b));
	assert_false(cfa_check__is_bounded(set_loc, set_loc + 4, 0x1b));
	assert_false(cfa_check__is_bounded(set_loc, set_loc + sizeof(set_loc), 0x50));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_match_readelf),
		cmocka_unit_test(test_frame_pointer_function),
		cmocka_unit_test(test_no_frame_pointer_function),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_outermost_frame),
		cmocka_unit_test(test_no_cfi),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_eh_frame_and_debug_file),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_rules_that_stop),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_fuzz_regressions),
		cmocka_unit_test(test_cfa_programs),
		cmocka_unit_test(test_crafted_file),
		cmocka_unit_test(test_eh_frame_typed_x86_64_unwind),
		cmocka_unit_test(test_compressed_debug_frame_is_not_read),
		cmocka_unit_test(test_huge_cfi_section_is_not_read),
		cmocka_unit_test(test_section_count_past_the_bound),
		cmocka_unit_test(test_libdw_work_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
