/*
 * hostile: an unprivileged user for the hostile-input tests (contract in
 * hostile.h).
 */
#include "hostile.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
