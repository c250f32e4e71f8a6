/*
 * digest: what an unwind table is built from, as one SHA-256 (API in
 * unwind.h).
 *
 * A build-id is a claim made by the file, not a property of its bytes: a
 * target may map a file that names libc's build-id and carries other CFI.
 * Tables are therefore shared (in memory, and on disk between runs) only
 * between files whose digest is the same. It covers every byte table.c and
 * libdw read to make the rows, for the file and then its debug file:
 *
 *   the ELF header and every program header (the executable span; libdw
 *   finds .eh_frame_hdr through PT_GNU_EH_FRAME), the bytes of the
 *   PT_GNU_EH_FRAME segment, and every section named .eh_frame_hdr,
 *   .eh_frame, .debug_frame or .zdebug_frame: its name, its header and
 *   its bytes as stored.
 *
 * Each part is preceded by a tag and its length, so no two different
 * inputs give the same stream. SHA-256, not a faster hash: a target can
 * craft a collision of any non-cryptographic one.
 *
 * libelf is given the file only when its header's counts pass
 * common/elf_limits.h; it reads with pread (ELF_C_READ) and refuses
 * sections and segments that do not lie inside the file, and a section or
 * segment over UNWIND_MAX_CFI_BYTES is hashed by its header alone (the
 * build refuses it), so a sparse file costs no more than a real one. The
 * sections read are the ones the build reads anyway; they are a few MB for
 * libjvm, hashed in a few ms.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <gelf.h>
#include <openssl/evp.h>

#include "common/elf_limits.h"
#include "unwind/unwind.h"

enum part_tag {
	TAG_FILE = 1,
	TAG_NOT_ELF,
	TAG_NO_DEBUG_FILE,
	TAG_EHDR,
	TAG_PHDR,
	TAG_SEGMENT,
	TAG_SECTION,
};

static const char *const cfi_sections[] = { ".eh_frame_hdr", ".eh_frame", ".debug_frame", ".zdebug_frame" };

static int put(EVP_MD_CTX *ctx, enum part_tag tag, const void *data, size_t len)
{
	uint64_t head[2] = { tag, len };

	if (!EVP_DigestUpdate(ctx, head, sizeof(head)) || (len && !EVP_DigestUpdate(ctx, data, len)))
		return -ENOMEM;
	return 0;
}

static bool is_cfi_section(const char *name)
{
	for (size_t i = 0; i < sizeof(cfi_sections) / sizeof(cfi_sections[0]); i++)
		if (strcmp(name, cfi_sections[i]) == 0)
			return true;
	return false;
}

static int put_segments(EVP_MD_CTX *ctx, Elf *elf)
{
	size_t nr;
	int err = 0;

	if (elf_getphdrnum(elf, &nr))
		return -ENOEXEC;
	for (size_t i = 0; i < nr && !err; i++) {
		GElf_Phdr phdr;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &phdr))
			return -ENOEXEC;
		err = put(ctx, TAG_PHDR, &phdr, sizeof(phdr));
		if (err || phdr.p_type != PT_GNU_EH_FRAME || phdr.p_filesz > UNWIND_MAX_CFI_BYTES)
			continue;
		/* NULL when it lies outside the file: libdw could not read it either. */
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz, ELF_T_BYTE);
		err = data ? put(ctx, TAG_SEGMENT, data->d_buf, data->d_size) : put(ctx, TAG_SEGMENT, NULL, 0);
	}
	return err;
}

static int put_sections(EVP_MD_CTX *ctx, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = 0;

	/* No section headers: nothing but the segments above is read. */
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(name = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
		    !is_cfi_section(name))
			continue;
		err = put(ctx, TAG_SECTION, name, strlen(name));
		if (!err)
			err = put(ctx, TAG_SECTION, &shdr, sizeof(shdr));
		/* The build refuses a larger one before reading it: so does the digest. */
		if (err || shdr.sh_type == SHT_NOBITS || shdr.sh_size > UNWIND_MAX_CFI_BYTES)
			continue;
		data = elf_rawdata(scn, NULL);
		err = data && data->d_buf ? put(ctx, TAG_SECTION, data->d_buf, data->d_size) : put(ctx, TAG_SECTION, NULL, 0);
	}
	return err;
}

/* One file's part; a debug file that is not ELF is hashed as such (the build ignores it). */
static int put_file(EVP_MD_CTX *ctx, int fd, bool required)
{
	GElf_Ehdr ehdr;
	Elf *elf;
	int err;

	if (fd < 0)
		return put(ctx, TAG_NO_DEBUG_FILE, NULL, 0);
	/* Past the bounds libelf is not given the file; the build refuses it too. */
	elf = elf_limits__check_fd(fd) ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		elf_end(elf);
		return required ? -ENOEXEC : put(ctx, TAG_NOT_ELF, NULL, 0);
	}
	err = put(ctx, TAG_FILE, NULL, 0);
	if (!err)
		err = put(ctx, TAG_EHDR, &ehdr, sizeof(ehdr));
	if (!err)
		err = put_segments(ctx, elf);
	if (!err)
		err = put_sections(ctx, elf);
	elf_end(elf);
	return err;
}

int unwind_digest__file(int fd, int debug_fd, uint8_t digest[UNWIND_DIGEST_LEN])
{
	EVP_MD_CTX *ctx;
	unsigned len = 0;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	err = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ? 0 : -ENOMEM;
	if (!err)
		err = put_file(ctx, fd, true);
	if (!err)
		err = put_file(ctx, debug_fd, false);
	if (!err && (!EVP_DigestFinal_ex(ctx, digest, &len) || len != UNWIND_DIGEST_LEN))
		err = -ENOMEM;
	EVP_MD_CTX_free(ctx);
	return err;
}
