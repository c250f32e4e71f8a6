/*
 * lines: bounded line reading (contract in lines.h).
 */
#include "symbolizer/lines.h"

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
