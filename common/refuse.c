/*
 * refuse: one line of why, and -1 (contract in refuse.h).
 */
#include "refuse.h"

#include <stdarg.h>
#include <stdio.h>

int refuse__say(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err && err_size) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -1;
}
