/*
 * kallsyms: /proc/kallsyms to a symbol table (contract in kallsyms.h).
 *
 * Each line is "ffffffff81000000 T _stext", or for a module
 * "ffffffffc0a01000 t nf_hook\t[nf_tables]". Unprivileged readers, and
 * root under kptr_restrict=2, see every address as zero: then there is
 * nothing to resolve with, which the caller must report rather than
 * attribute every kernel frame to the first symbol.
 */
#include "symbolizer/kallsyms.h"
#include "symbolizer/lines.h"
#include "symbolizer/symtab.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kallsyms__parse_line(const char *line, uint64_t *addr, char *type, const char **name,
			 size_t *name_len)
{
	const char *p = line;
	uint64_t value;
	size_t len = 0;

	if (lines__parse_hex(&p, 16, &value) || *p++ != ' ')
		return 0;
	if (!isalpha((unsigned char)*p) || p[1] != ' ')
		return 0;
	*type = *p;
	p += 2;
	while (p[len] && !isspace((unsigned char)p[len]))
		len++;
	if (!len || len > KALLSYMS_MAX_NAME)
		return 0;
	*addr = value;
	*name = p;
	*name_len = len;
	/* What may follow: "\t[module]" and the newline. */
	p += len;
	if (*p == '\t' && p[1] == '[') {
		const char *close = strchr(p, ']');

		if (!close)
			return 0;
		p = close + 1;
	}
	if (*p == '\n')
		p++;
	return *p == '\0';
}

static int is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static enum symtab_binding binding_of(char type)
{
	if (type == 'w' || type == 'W')
		return SYMTAB_BIND_WEAK;
	return type == 'T' ? SYMTAB_BIND_GLOBAL : SYMTAB_BIND_LOCAL;
}

int kallsyms__load(const char *path, struct symtab **out)
{
	struct symtab *st;
	FILE *f;
	char line[KALLSYMS_MAX_NAME + 128];
	size_t text = 0, nonzero = 0;
	long n;
	int err = 0;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	st = symtab__new();
	if (!st) {
		fclose(f);
		return -ENOMEM;
	}
	while ((n = lines__next(f, line, sizeof(line), NULL)) != 0) {
		uint64_t addr;
		char type;
		const char *name;
		size_t len;

		if (n < 0 || !kallsyms__parse_line(line, &addr, &type, &name, &len) || !is_text_type(type))
			continue;
		text++;
		if (!addr)
			continue;
		nonzero++;
		/* symtab copies len bytes and terminates; name need not be. */
		err = symtab__add(st, addr, 0, name, len,
				  symtab__alias_priority(binding_of(type), name));
		if (err)
			break;
	}
	fclose(f);
	if (!err && text && !nonzero)
		err = -EPERM;
	else if (!err && !nonzero)
		err = -ENODATA;
	if (err) {
		symtab__free(st);
		return err;
	}
	symtab__finish(st, SYMTAB_OVERLAP_NEST);
	*out = st;
	return 0;
}
