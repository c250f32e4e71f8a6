/*
 * runes: a name made safe for a format (contract in runes.h).
 */
#include "common/runes.h"

#include <stdio.h>

void runes__replace(const char *in, char *out, size_t size, bool (*ok)(char c))
{
	size_t n = 0;

	if (!size)
		return;
	for (; in[n] && n + 1 < size; n++)
		out[n] = ok(in[n]) ? in[n] : '_';
	out[n] = '\0';
	if (!n)
		snprintf(out, size, "unknown");
}
