/*
 * lines: bounded line reading (contract in lines.h).
 */
#include "symbolizer/lines.h"

#include <errno.h>
#include <string.h>

long lines__next(FILE *f, char *buf, size_t size, size_t *consumed)
{
	size_t len, total = 0;
	int too_long = 0;

	for (;;) {
		if (size < 2 || !fgets(buf, (int)(size > 1u << 30 ? 1u << 30 : size), f))
			break;
		len = strlen(buf);
		total += len;
		if (len && buf[len - 1] == '\n')
			break;
		if (len < size - 1)
			break; /* the last line, without a newline */
		too_long = 1;
	}
	if (consumed)
		*consumed += total;
	if (too_long)
		return -1;
	return (long)total;
}

int lines__parse_hex(const char **p, size_t max_digits, uint64_t *out)
{
	uint64_t value = 0;
	size_t n = 0;
	const char *s = *p;

	for (;; s++, n++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (n == max_digits)
			return -EINVAL;
		value = value << 4 | (uint64_t)d;
	}
	if (!n)
		return -EINVAL;
	*p = s;
	*out = value;
	return 0;
}
