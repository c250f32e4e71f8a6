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
 * not fit in size - 1 bytes or that holds a NUL byte (no text file does):
 * it is consumed and skipped. consumed (may be NULL) accumulates every
 * byte read from f, skipped lines and NUL bytes included, so that a bound
 * on it bounds the reading.
 */
long lines__next(FILE *f, char *buf, size_t size, size_t *consumed);

/*
 * lines__next that also stops once *consumed reaches limit, even inside a
 * line (which is then returned as -1): one endless line costs no more
 * reading than the limit allows. consumed must not be NULL.
 */
long lines__next_bounded(FILE *f, char *buf, size_t size, size_t *consumed, size_t limit);

/*
 * Parses 1 to max_digits hex digits (no prefix) at *p and advances *p past
 * them. Returns 0, or -EINVAL for no digit or more than max_digits, which
 * leaves *p and *out alone.
 */
int lines__parse_hex(const char **p, size_t max_digits, uint64_t *out);

#endif /* JBPF_LINES_H */
