/*
 * perfmap: JIT symbol files (contract in perfmap.h).
 *
 * Entries are added with their line number as priority and the table is
 * sealed with SYMTAB_OVERLAP_NEWEST, which is how "later lines win" holds
 * for exact repeats and for partial overlaps alike.
 */
#include "symbolizer/perfmap.h"
#include "symbolizer/lines.h"
#include "symbolizer/symtab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A hex number, "0x" optional, then one space; 1 on success, as the caller expects. */
static int parse_hex_field(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t value;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (lines__parse_hex(&s, 16, &value) || *s != ' ')
		return 0;
	*p = s + 1;
	*out = value;
	return 1;
}

int perfmap__parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name,
			size_t *name_len)
{
	const char *p = line;
	size_t len;

	if (!parse_hex_field(&p, start) || !parse_hex_field(&p, size))
		return 0;
	len = strcspn(p, "\r\n");
	if (!len || (p[len] && p[len + strspn(p + len, "\r\n")] != '\0'))
		return 0;
	*name = p;
	*name_len = len;
	return 1;
}

int perfmap__read_fd(int fd, struct symtab **out)
{
	struct symtab *st;
	FILE *f;
	/* Longer lines are skipped; names are cut to SYMTAB_MAX_NAME anyway. */
	char line[4096];
	size_t bytes = 0, entries = 0;
	uint32_t seq = 0;
	long n;
	int dup_fd, err = 0;

	*out = NULL;
	/* fdopen takes the fd over; keep the caller's. */
	dup_fd = dup(fd);
	if (dup_fd < 0)
		return -errno;
	f = fdopen(dup_fd, "r");
	if (!f) {
		err = -errno;
		close(dup_fd);
		return err;
	}
	rewind(f);
	st = symtab__new();
	if (!st) {
		fclose(f);
		return -ENOMEM;
	}
	while (entries < PERFMAP_MAX_ENTRIES &&
	       (n = lines__next_bounded(f, line, sizeof(line), &bytes, PERFMAP_MAX_BYTES)) != 0) {
		uint64_t start, size;
		const char *name;
		size_t len;

		seq++;
		if (n < 0 || !perfmap__parse_line(line, &start, &size, &name, &len) || !size ||
		    size > PERFMAP_MAX_SIZE)
			continue;
		err = symtab__add(st, start, size, name, len, seq);
		if (err)
			break;
		entries++;
	}
	fclose(f);
	if (err == -ENOSPC)
		err = 0;
	if (err) {
		symtab__free(st);
		return err;
	}
	symtab__finish(st, SYMTAB_OVERLAP_NEWEST);
	*out = st;
	return 0;
}
