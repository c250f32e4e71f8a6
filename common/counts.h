/*
 * counts: the lists of causes in the summary line, "what N, what N", each
 * cause named only when its count is not zero.
 */
#ifndef JBPF_COUNTS_H
#define JBPF_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct named_count {
	const char *what;
	uint64_t n;
};

/*
 * Appends "<first_sep>what N" for the first non-zero count and ", what N"
 * for each later one to buf, which holds used bytes of size. Returns the
 * new length, never past size - 1 (the text is cut, always terminated).
 * Nothing is appended when every count is zero.
 */
size_t counts__append(char *buf, size_t size, size_t used, const char *first_sep, const struct named_count *counts,
		      size_t nr);

#endif /* JBPF_COUNTS_H */
