/*
 * lines: reading text files line by line with a fixed buffer, so that a
 * file with one endless line costs no more memory than a normal one, and
 * the number parsing the line formats share.
 */
#ifndef JBPF_LINES_H
#define JBPF_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Reads the next line of f into buf (NUL-terminated, newline kept).
 * Returns its length (> 0), 0 at end of file, or -1 for a line that did
 * not fit in size - 1 bytes: it is consumed and skipped, and *consumed
 * still counts its bytes. consumed (may be NULL) accumulates bytes read.
 */
long lines__next(FILE *f, char *buf, size_t size, size_t *consumed);

/*
 * Parses 1 to max_digits hex digits (no prefix) at *p and advances *p past
 * them. Returns 0, or -EINVAL for no digit or more than max_digits, which
 * leaves *p and *out alone.
 */
int lines__parse_hex(const char **p, size_t max_digits, uint64_t *out);

#endif /* JBPF_LINES_H */
