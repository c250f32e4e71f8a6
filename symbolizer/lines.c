/*
 * lines: bounded line reading (contract in lines.h).
 *
 * A line that does not fit is read to its end and dropped, never split:
 * its tail would otherwise parse as a line of its own.
 */
#include "symbolizer/lines.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/hex.h"

long lines__next_bounded(FILE *f, char *buf, size_t size, size_t *consumed, size_t limit)
{
	size_t len = 0, total = 0;
	int c, skip = 0;

	/* Byte by byte: fgets cannot tell a NUL it read from the end of what it read. */
	while (*consumed + total < limit && (c = getc_unlocked(f)) != EOF) {
		total++;
		if (c == '\0' || len + 1 >= size)
			skip = 1;
		else
			buf[len++] = (char)c;
		if (c == '\n')
			break;
		if (*consumed + total >= limit)
			skip = 1; /* cut short: not a whole line */
	}
	*consumed += total;
	if (size)
		buf[len] = '\0';
	if (!total)
		return 0;
	return skip ? -1 : (long)len;
}

long lines__next(FILE *f, char *buf, size_t size, size_t *consumed)
{
	size_t ignored = 0;

	return lines__next_bounded(f, buf, size, consumed ? consumed : &ignored, SIZE_MAX);
}

int lines__parse_hex(const char **p, size_t max_digits, uint64_t *out)
{
	uint64_t value = 0;
	size_t n = 0;
	const char *s = *p;

	for (;; s++, n++) {
		int d = hex__digit(*s);

		if (d < 0)
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
