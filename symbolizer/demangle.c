/*
 * demangle: C++ names through libstdc++ (contract in demangle.h).
 *
 * __cxa_demangle is declared here rather than through <cxxabi.h>, which is
 * C++ only. It returns a malloc'd string, or NULL with status -1 (out of
 * memory), -2 (not a valid mangled name) or -3 (bad arguments).
 */
#include "symbolizer/demangle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * __cxa_demangle recurses on the name's structure; a hostile symbol table
 * can hold a name built to exhaust the stack. Real names are far shorter.
 */
#define DEMANGLE_MAX_INPUT 4096

int demangle__cxx(const char *name, char *buf, size_t size)
{
	char *out;
	int status = 0;
	size_t len;

	if (strncmp(name, "_Z", 2) != 0 || strnlen(name, DEMANGLE_MAX_INPUT) >= DEMANGLE_MAX_INPUT)
		return 0;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (!out)
		return status == -1 ? -ENOMEM : 0;
	if (size) {
		len = strlen(out);
		if (len >= size)
			len = size - 1;
		memcpy(buf, out, len);
		buf[len] = '\0';
	}
	free(out);
	return 1;
}
