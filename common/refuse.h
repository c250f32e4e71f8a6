/*
 * refuse: a reader's one line saying why it refuses what it read.
 *
 * Readers of what a target controls (HotSpot's tables and memory, above
 * all) refuse a value they cannot trust in one line, which the caller
 * shows as it is. refuse__say() writes that line into err (err_size bytes, cut
 * to fit; NULL or 0: nothing is written) and returns -1, so that
 * `return refuse__say(why, err_size, ...)` both says and fails.
 */
#ifndef JBPF_REFUSE_H
#define JBPF_REFUSE_H

#include <stddef.h>

int refuse__say(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* JBPF_REFUSE_H */
