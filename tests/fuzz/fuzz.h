/*
 * fuzz: what the libFuzzer targets share. Each target feeds one parser of
 * untrusted input through its real entry point; a parser that reads a
 * file is given the input as a memory file (memfd), by descriptor or by
 * its /proc/self/fd path, never through a copy of its parsing code.
 */
#ifndef JBPF_FUZZ_H
#define JBPF_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memory file holding data[0..size), its offset at 0: the descriptor, or abort (the harness failed, not the parser). */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		abort();
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	return fd;
}

/* data[0..size) with a NUL after it, for parsers of text: freed by the caller. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif /* JBPF_FUZZ_H */
