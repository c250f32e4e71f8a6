/*
 * outputs: files opened unnamed and named when complete (contract in
 * outputs.h).
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Under sudo the file would belong to root in the user's own directory; hand
 * it to the user who asked for it.
 */
static void give_to_sudo_user(int fd)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");

	if (geteuid() != 0 || !uid || !gid)
		return;
	if (fchown(fd, (uid_t)strtoul(uid, NULL, 10), (gid_t)strtoul(gid, NULL, 10)))
		return; /* the file is still usable by root; not worth failing over */
}

int output_file__open(struct output_file *f, const char *path, enum output_format format)
{
	char dir[sizeof(f->path)], *slash;
	int fd;

	memset(f, 0, sizeof(*f));
	f->format = format;
	if (!strcmp(path, "-")) {
		f->out = stdout;
		f->to_stdout = true;
		snprintf(f->path, sizeof(f->path), "standard output");
		return 0;
	}
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", f->path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	f->unnamed = fd >= 0;
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(f->out = fdopen(fd, "w"))) {
		fprintf(stderr, "jbpfprof: cannot write %s: %s\n", f->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	give_to_sudo_user(fd);
	return 0;
}

/*
 * Gives the finished, flushed unnamed file its name: linked under a
 * temporary name beside it, then renamed over path, so path always holds
 * either the old file or the whole new one.
 */
static int publish(struct output_file *f)
{
	char fd_path[64], temp[sizeof(f->path) + 32];

	if (!f->unnamed)
		return 0;
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fileno(f->out));
	snprintf(temp, sizeof(temp), "%s.%d.tmp", f->path, (int)getpid());
	if (linkat(AT_FDCWD, fd_path, AT_FDCWD, temp, AT_SYMLINK_FOLLOW))
		return -errno;
	if (rename(temp, f->path)) {
		int error = -errno;

		unlink(temp);
		return error;
	}
	return 0;
}

int output_file__finish(struct output_file *f, int error)
{
	if (!error && fflush(f->out))
		error = -errno;
	if (!error && !f->to_stdout)
		error = publish(f);
	if (error) {
		fprintf(stderr, "jbpfprof: writing %s failed: %s\n", f->path, strerror(-error));
		output_file__discard(f);
		return -1;
	}
	if (!f->to_stdout && fclose(f->out)) {
		f->out = NULL;
		fprintf(stderr, "jbpfprof: writing %s failed: %s\n", f->path, strerror(errno));
		return -1;
	}
	f->out = NULL;
	return 0;
}

void output_file__discard(struct output_file *f)
{
	if (!f->out || f->to_stdout) {
		f->out = NULL;
		return;
	}
	fclose(f->out);
	f->out = NULL;
	if (!f->unnamed)
		unlink(f->path);
}
