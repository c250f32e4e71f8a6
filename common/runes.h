/*
 * runes: a name made safe for a format that allows only some characters.
 *
 * runes__replace() copies in to out (size bytes with its NUL, cut to fit)
 * with every character that ok() refuses replaced by '_', and writes
 * "unknown" for an empty name. in and out may be the same buffer. Used
 * for services' names (symbolizer/service.c) and labels' values
 * (user/fleet/labels.c), which allow different characters.
 */
#ifndef JBPF_RUNES_H
#define JBPF_RUNES_H

#include <stdbool.h>
#include <stddef.h>

void runes__replace(const char *in, char *out, size_t size, bool (*ok)(char c));

#endif /* JBPF_RUNES_H */
