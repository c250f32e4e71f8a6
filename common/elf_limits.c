/*
 * elf_limits: the section and program header counts of an ELF file (see
 * elf_limits.h), read as libelf reads them: e_shnum, or section 0's
 * sh_size when e_shnum is 0 (SHN_UNDEF) and the file has section headers;
 * e_phnum, or section 0's sh_info when e_phnum is PN_XNUM. Both byte orders
 * and both classes, since libelf takes them all.
 */
#include "common/elf_limits.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

struct counts {
	uint64_t shoff, shnum, phnum;
};

static uint64_t value(const unsigned char *p, size_t n, bool big)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
	return v;
}

/* Reads exactly len bytes at off: 1, 0 when the file is shorter, -EIO on an error. */
static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (n == 0)
			return 0;
		done += (size_t)n;
	}
	return 1;
}

int elf_limits__check_fd(int fd)
{
	unsigned char h[sizeof(Elf64_Ehdr)], s0[sizeof(Elf64_Shdr)];
	bool is64, big;
	struct counts c;
	int ret;

	ret = read_at(fd, h, EI_NIDENT, 0);
	if (ret <= 0 || memcmp(h, ELFMAG, SELFMAG) != 0)
		return ret < 0 ? ret : 0;
	if ((h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
	    (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
		return 0;
	is64 = h[EI_CLASS] == ELFCLASS64;
	big = h[EI_DATA] == ELFDATA2MSB;
	ret = read_at(fd, h, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr), 0);
	if (ret <= 0)
		return ret;
	if (is64) {
		c.shoff = value(h + offsetof(Elf64_Ehdr, e_shoff), 8, big);
		c.phnum = value(h + offsetof(Elf64_Ehdr, e_phnum), 2, big);
		c.shnum = value(h + offsetof(Elf64_Ehdr, e_shnum), 2, big);
	} else {
		c.shoff = value(h + offsetof(Elf32_Ehdr, e_shoff), 4, big);
		c.phnum = value(h + offsetof(Elf32_Ehdr, e_phnum), 2, big);
		c.shnum = value(h + offsetof(Elf32_Ehdr, e_shnum), 2, big);
	}
	if ((c.shnum == 0 || c.phnum == PN_XNUM) && c.shoff != 0) {
		/* The true counts are in section 0; a file too short for it has none. */
		ret = read_at(fd, s0, is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr), c.shoff);
		if (ret < 0)
			return ret;
		if (ret > 0 && c.shnum == 0)
			c.shnum = is64 ? value(s0 + offsetof(Elf64_Shdr, sh_size), 8, big)
				       : value(s0 + offsetof(Elf32_Shdr, sh_size), 4, big);
		if (ret > 0 && c.phnum == PN_XNUM)
			c.phnum = is64 ? value(s0 + offsetof(Elf64_Shdr, sh_info), 4, big)
				       : value(s0 + offsetof(Elf32_Shdr, sh_info), 4, big);
	}
	return c.shnum > ELF_MAX_SECTIONS || c.phnum > ELF_MAX_SEGMENTS ? -EFBIG : 0;
}
