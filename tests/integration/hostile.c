/*
 * hostile: an unprivileged user for the hostile-input tests (contract in
 * hostile.h).
 */
#include "hostile.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Where hostile_workload's copies are, and the process that made it (its
 * forks must not remove it). Not under /tmp: some tests mount a directory
 * of their own over /tmp before they run the copy.
 */
static char staged_dir[] = "/var/tmp/jbpfprof-hostile-XXXXXX";
static pid_t staged_by;

static int lookup(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(HOSTILE_USER);

	if (!pw)
		return -1;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int hostile_user(uid_t *uid, gid_t *gid)
{
	int status;

	if (!lookup(uid, gid))
		return 0;
	status = system("/usr/sbin/useradd --system --no-create-home --shell /usr/sbin/nologin "
			"--user-group " HOSTILE_USER " >/dev/null 2>&1");
	if (lookup(uid, gid)) {
		fprintf(stderr, "hostile: cannot create the user %s (useradd: status %d)\n", HOSTILE_USER, status);
		return -1;
	}
	return 0;
}

int hostile_start(struct child *child, char *const argv[], int fd)
{
	char reuid[32], regid[32];
	char *full[64];
	size_t n = 0;
	uid_t uid;
	gid_t gid;

	if (hostile_user(&uid, &gid))
		return -1;
	snprintf(reuid, sizeof(reuid), "--reuid=%u", (unsigned)uid);
	snprintf(regid, sizeof(regid), "--regid=%u", (unsigned)gid);
	full[n++] = "/usr/bin/setpriv";
	full[n++] = reuid;
	full[n++] = regid;
	full[n++] = "--clear-groups";
	full[n++] = "--inh-caps=-all";
	full[n++] = "--bounding-set=-all";
	for (size_t i = 0; argv[i] && n < 63; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	return harness_start_command(child, full, fd);
}

int hostile_chown(const char *path)
{
	uid_t uid;
	gid_t gid;

	if (hostile_user(&uid, &gid))
		return -1;
	return chown(path, uid, gid);
}

static void remove_staged(void)
{
	if (getpid() == staged_by)
		harness_remove_tree(staged_dir);
}

/* The staging directory, made on first use: readable and searchable by all, writable by root only. */
static const char *staging(void)
{
	if (staged_by)
		return staged_dir;
	if (!mkdtemp(staged_dir) || chmod(staged_dir, 0755)) {
		fprintf(stderr, "hostile: cannot make %s: %s\n", staged_dir, strerror(errno));
		return NULL;
	}
	staged_by = getpid();
	atexit(remove_staged);
	return staged_dir;
}

/* Makes the directories of path below the staging directory, mode 0755. */
static int make_parents(char *path, size_t below)
{
	for (char *slash = strchr(path + below + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "hostile: cannot make %s: %s\n", path, strerror(errno));
			*slash = '/';
			return -1;
		}
		*slash = '/';
	}
	return 0;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		goto done;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0)
		goto done;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			goto done;
	rc = n == 0 && fchmod(out, 0755) == 0 ? 0 : -1;
done:
	if (rc)
		fprintf(stderr, "hostile: cannot copy %s to %s: %s\n", from, to, strerror(errno));
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		rc = -1;
	/* A part copy must not pass for the file at the next call. */
	if (rc && out >= 0)
		unlink(to);
	return rc;
}

char *hostile_copy(const char *path, const char *name)
{
	const char *dir = staging();
	char *copy = NULL;

	if (!dir || asprintf(&copy, "%s/%s", dir, name) < 0)
		return NULL;
	if (access(copy, F_OK) && (make_parents(copy, strlen(dir)) || copy_file(path, copy))) {
		free(copy);
		copy = NULL;
	}
	return copy;
}

char *hostile_workload(const char *name)
{
	char *built = harness_workload(name), *copy = built ? hostile_copy(built, name) : NULL;

	free(built);
	return copy;
}
