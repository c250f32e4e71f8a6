/*
 * wake: the request file of a profiler waking a dormant agent (contract
 * in wake.h).
 */
#include "wake.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Kept in the library's read-only data for the profiler to find (WAKE_MARKER). */
__attribute__((used)) static const char marker[] = WAKE_MARKER;

int wake__read_request(char *opts, size_t size, char *err, size_t err_size)
{
	char path[64];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/tmp/" WAKE_REQUEST_PREFIX "%d", (int)getpid());
	/* O_NONBLOCK: a FIFO planted there must not block the attach listener. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0) {
		snprintf(err, err_size, "cannot open the request %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size < 0 || (size_t)st.st_size >= size ||
	    st.st_size > WAKE_REQUEST_MAX) {
		snprintf(err, err_size, "the request %s is not a small regular file of this JVM's user", path);
		close(fd);
		return -1;
	}
	n = read(fd, opts, size - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, err_size, "cannot read the request %s: %s", path, strerror(errno));
		return -1;
	}
	opts[n] = '\0';
	if (n > 0 && opts[n - 1] == '\n')
		opts[n - 1] = '\0';
	return 0;
}
