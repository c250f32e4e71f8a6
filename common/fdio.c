/* fdio: whole writes to a file descriptor (contract in fdio.h). */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

int fdio__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
