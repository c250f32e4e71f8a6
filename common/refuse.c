/*
 * refuse: one line of why, and -1 (contract in refuse.h).
 */
#include "refuse.h"

#include <stdarg.h>
#include <stdio.h>

int refuse__say(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	if (why && why_size) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return -1;
}
