/*
 * outputs: files opened unnamed and named when complete (contract in
 * files.h).
 *
 * The path is the user's, but the directory may not be: root writing into
 * /tmp, or into a directory another user can write, must not open a name
 * someone planted there. So a new file is made unnamed, or under a fresh
 * name with O_EXCL, and only a rename (which replaces a symlink rather than
 * following it) gives it the path.
 *
 * Except where the path is something the user means to write into, not to
 * replace: a device (/dev/null), a pipe, or a symlink to one (/dev/stdout).
 * Those are written in place, and only when they belong to root or to the
 * user who runs the profiler; one of another user's is replaced like a
 * regular file (a symlink) or refused (anything else).
 */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/random.h"

/* Fresh names tried before giving up: a clash means someone guesses them. */
#define TEMP_NAME_TRIES 8

static int open_tmpfile(const char *dir)
{
	return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
}

int (*output_file__open_unnamed)(const char *dir) = open_tmpfile;

/*
 * Without O_TMPFILE: a new file under a random name beside path. O_EXCL
 * with O_CREAT fails on anything that exists, a symlink or a dangling one
 * included, so the descriptor is always of a file created here.
 */
static int open_temp_beside(struct output_file *f)
{
	for (int i = 0; i < TEMP_NAME_TRIES; i++) {
		int fd;

		if ((size_t)snprintf(f->temp, sizeof(f->temp), "%s.%016llx.tmp", f->path,
				     (unsigned long long)random__u64()) >= sizeof(f->temp)) {
			f->temp[0] = '\0';
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(f->temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			break;
	}
	f->temp[0] = '\0';
	return -1;
}

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

/* The user the output is for: the one who ran sudo, else whoever runs this. */
static uid_t invoking_uid(void)
{
	const char *uid = getenv("SUDO_UID");

	return geteuid() == 0 && uid ? (uid_t)strtoul(uid, NULL, 10) : getuid();
}

static bool trusted_owner(uid_t owner)
{
	return owner == 0 || owner == invoking_uid();
}

/*
 * A path to write into rather than replace (see the top of this file):
 * opens it into f and returns 1; 0 when path is to be replaced (nothing
 * there, a regular file, another user's symlink); -1 after one line saying
 * why it cannot be written.
 */
static int open_in_place(struct output_file *f)
{
	struct stat st, opened;
	int fd;

	if (lstat(f->path, &st) || S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid)))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "jbpfprof: cannot write %s: it is a directory\n", f->path);
		return -1;
	}
	if (!S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid)) {
		fprintf(stderr, "jbpfprof: not writing %s: it is not a regular file and belongs to another user "
			"(uid %u)\n", f->path, (unsigned)st.st_uid);
		return -1;
	}
	/* A symlink of the user's or root's is followed; anything else must still be what lstat saw. */
	fd = open(f->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISLNK(st.st_mode) ? 0 : O_NOFOLLOW));
	if (fd >= 0 && fstat(fd, &opened)) {
		close(fd);
		fd = -1;
	} else if (fd >= 0 && !S_ISLNK(st.st_mode) && (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE; /* replaced between the look and the open */
	}
	if (fd < 0 || (S_ISREG(opened.st_mode) && ftruncate(fd, 0)) || !(f->out = fdopen(fd, "w"))) {
		fprintf(stderr, "jbpfprof: cannot write %s: %s\n", f->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->in_place = true;
	return 1;
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
	switch (open_in_place(f)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s", f->path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = output_file__open_unnamed(dir);
	f->unnamed = fd >= 0;
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = open_temp_beside(f);
	if (fd < 0 || !(f->out = fdopen(fd, "w"))) {
		fprintf(stderr, "jbpfprof: cannot write %s: %s\n", f->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		if (f->temp[0])
			unlink(f->temp);
		f->temp[0] = '\0';
		return -1;
	}
	give_to_sudo_user(fd);
	return 0;
}

/*
 * Gives the finished, flushed file its name: an unnamed one is linked
 * under a temporary name beside it first; then the temporary name is
 * renamed over path, so path always holds either the old file or the
 * whole new one.
 */
static int publish(struct output_file *f)
{
	char fd_path[64], temp[sizeof(f->path) + 32];

	if (f->temp[0]) {
		if (rename(f->temp, f->path))
			return -errno;
		f->temp[0] = '\0';
		return 0;
	}
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
	if (!error && !f->to_stdout && !f->in_place)
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
	if (f->temp[0])
		unlink(f->temp);
	f->temp[0] = '\0';
}
