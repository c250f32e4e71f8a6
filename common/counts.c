/*
 * counts: lists of named counts for the summary line (contract in counts.h).
 */
#include "counts.h"

#include <stdio.h>

size_t counts__append(char *buf, size_t size, size_t used, const char *first_sep, const struct named_count *counts,
		      size_t nr)
{
	const char *sep = first_sep;

	for (size_t i = 0; i < nr && used + 1 < size; i++) {
		int n;

		if (!counts[i].n)
			continue;
		n = snprintf(buf + used, size - used, "%s%s %llu", sep, counts[i].what,
			     (unsigned long long)counts[i].n);
		if (n < 0)
			break;
		used = used + (size_t)n < size ? used + (size_t)n : size - 1;
		sep = ", ";
	}
	return used;
}
