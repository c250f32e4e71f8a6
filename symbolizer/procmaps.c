/*
 * procmaps: parsing /proc/PID/maps (contract in procmaps.h).
 *
 * The kernel writes each line with "%08lx-%08lx %c%c%c%c %08llx %02x:%02x
 * %lu", then pads with spaces and appends the path. Everything after that
 * padding, up to the newline, is the path: file names may hold spaces.
 */
#include "symbolizer/procmaps.h"
#include "symbolizer/lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETED_SUFFIX " (deleted)"

static int parse_dec(const char **p, uint64_t *out)
{
	uint64_t value = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (value > (UINT64_MAX - d) / 10)
			return -EINVAL;
		value = value * 10 + d;
	}
	*p = s;
	*out = value;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static enum procmaps_kind path_kind(const char *path)
{
	if (!path)
		return PROCMAPS_ANON;
	if (path[0] == '/')
		return PROCMAPS_FILE;
	if (!strcmp(path, "[vdso]"))
		return PROCMAPS_VDSO;
	if (!strncmp(path, "[anon:", 6))
		return PROCMAPS_ANON;
	/* [heap], [stack], [vsyscall], anon_inode:..., and anything new. */
	return PROCMAPS_SPECIAL;
}

int procmaps__parse_line(const char *line, struct procmaps_entry *entry)
{
	const char *p = line, *path;
	uint64_t major, minor;
	size_t len;

	memset(entry, 0, sizeof(*entry));
	if (lines__parse_hex(&p, 16, &entry->start) || expect(&p, '-') ||
	    lines__parse_hex(&p, 16, &entry->end) || expect(&p, ' '))
		return -EINVAL;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's') || p[4] != ' ')
		return -EINVAL;
	entry->executable = p[2] == 'x';
	p += 5;
	if (lines__parse_hex(&p, 16, &entry->pgoff) || expect(&p, ' ') ||
	    lines__parse_hex(&p, 8, &major) || expect(&p, ':') || lines__parse_hex(&p, 8, &minor) ||
	    expect(&p, ' ') || parse_dec(&p, &entry->inode))
		return -EINVAL;
	if (entry->end <= entry->start || entry->pgoff > UINT64_MAX - (entry->end - entry->start))
		return -EINVAL;
	entry->dev_major = (uint32_t)major;
	entry->dev_minor = (uint32_t)minor;

	/* No path: the line ends right after the inode. */
	if (*p == '\n')
		p++;
	if (*p == '\0') {
		entry->kind = PROCMAPS_ANON;
		return 0;
	}
	if (*p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	path = p;
	len = strcspn(path, "\n");
	if (path[len] == '\n' && path[len + 1] != '\0')
		return -EINVAL;
	if (!len) {
		entry->kind = PROCMAPS_ANON;
		return 0;
	}
	if (len > PROCMAPS_MAX_PATH)
		return -EINVAL;
	if (len > strlen(DELETED_SUFFIX) &&
	    !memcmp(path + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		entry->deleted = 1;
		len -= strlen(DELETED_SUFFIX);
	}
	entry->path = strndup(path, len);
	if (!entry->path)
		return -ENOMEM;
	entry->kind = path_kind(entry->path);
	return 0;
}

void procmaps__free(struct procmaps_entry *entries, size_t nr)
{
	size_t i;

	if (!entries)
		return;
	for (i = 0; i < nr; i++)
		free(entries[i].path);
	free(entries);
}

int procmaps__read(const char *path, int exec_only, struct procmaps_entry **entries, size_t *nr)
{
	struct procmaps_entry *list = NULL, entry;
	size_t n = 0, cap = 0;
	/* The fixed fields take at most 16+1+16+1+4+1+16+1+8+1+8+1+20 bytes, then padding. */
	char line[PROCMAPS_MAX_PATH + 256];
	long len;
	FILE *f;
	int err = 0;

	*entries = NULL;
	*nr = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (n < PROCMAPS_MAX_ENTRIES && (len = lines__next(f, line, sizeof(line), NULL)) != 0) {
		int rc = len < 0 ? -EINVAL : procmaps__parse_line(line, &entry);

		if (rc == -ENOMEM) {
			err = rc;
			break;
		}
		if (rc)
			continue;
		if (exec_only && !entry.executable) {
			free(entry.path);
			continue;
		}
		if (n == cap) {
			size_t new_cap = cap ? cap * 2 : 64;
			struct procmaps_entry *grown = realloc(list, new_cap * sizeof(*grown));

			if (!grown) {
				free(entry.path);
				err = -ENOMEM;
				break;
			}
			list = grown;
			cap = new_cap;
		}
		list[n++] = entry;
	}
	fclose(f);
	if (err) {
		procmaps__free(list, n);
		return err;
	}
	*entries = list;
	*nr = n;
	return 0;
}
