/*
 * agent_loaded: finding and waking the agent loaded at start-up (contract
 * in agent_loaded.h; the agent's side in jvmti-stub/wake.h).
 */
#include "user/java/agent_loaded.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvmti-stub/wake.h"
#include "symbolizer/proc.h"
#include "symbolizer/procmaps.h"
#include "user/java/attach_internal.h"

#define CHUNK 65536

static bool is_agent_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && !strcmp(base + 1, AGENT_LOADED_NAME);
}

/*
 * Whether the file open at fd holds WAKE_MARKER: read in chunks that
 * overlap by the marker's length less one, so that no occurrence falls
 * between two. 1, 0, or -1 with errno.
 */
static int holds_marker(int fd)
{
	static const char marker[] = WAKE_MARKER;
	const size_t mlen = sizeof(marker) - 1;
	char *buf = malloc(CHUNK + mlen);
	size_t have = 0, total = 0;
	int found = 0;

	if (!buf)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + have, CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			found = -1;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		have += (size_t)n;
		if (memmem(buf, have, marker, mlen)) {
			found = 1;
			break;
		}
		if (total > AGENT_LOADED_MAX_SIZE)
			break;
		if (have >= mlen) {
			memmove(buf, buf + have - (mlen - 1), mlen - 1);
			have = mlen - 1;
		}
	}
	free(buf);
	return found;
}

int agent_loaded__find(struct jvm_target *t, char *path, size_t pathlen, char *err, size_t err_size)
{
	struct procmaps_entry *maps = NULL, *agent = NULL;
	char maps_path[64];
	size_t nr = 0;
	int rc, fd, found = 0;

	snprintf(maps_path, sizeof(maps_path), "/proc/self/fd/%d/maps", t->proc_fd);
	rc = procmaps__read(maps_path, 1, &maps, &nr);
	if (rc) {
		snprintf(err, err_size, "cannot read /proc/%d/maps: %s", (int)t->pid, strerror(-rc));
		return -1;
	}
	for (size_t i = 0; i < nr && !agent; i++)
		if (maps[i].kind == PROCMAPS_FILE && maps[i].path && is_agent_name(maps[i].path))
			agent = &maps[i];
	if (!agent)
		goto out;
	snprintf(path, pathlen, "%s", agent->path);
	fd = proc__open_map_file_at(t->proc_fd, agent->start, agent->end);
	if (fd < 0) {
		snprintf(err, err_size, "JVM pid %d maps %.200s, but it cannot be opened through map_files: %s",
			 (int)t->pid, agent->path, strerror(-fd));
		found = -1;
		goto out;
	}
	rc = holds_marker(fd);
	close(fd);
	if (rc == 1) {
		found = 1;
	} else {
		snprintf(err, err_size,
			 "JVM pid %d loaded %.200s at start-up, but it is not an agent this jbpfprof can wake "
			 "(another version?): start the JVM with -agentpath naming the agent jbpfprof --agent-path "
			 "prints",
			 (int)t->pid, agent->path);
		found = -1;
	}
out:
	procmaps__free(maps, nr);
	return found;
}

/*
 * Creates the request file name in the target's /tmp, holding options, as
 * the target's user. 0, or -1 with err set. *st describes what was created.
 */
static int write_request(struct jvm_target *t, const char *name, const char *options, struct stat *st, char *err,
			 size_t err_size)
{
	struct attach_saved_ids ids;
	size_t len = strlen(options);
	struct stat old;
	int fd, saved = 0;
	ssize_t n = -1;

	memset(st, 0, sizeof(*st));
	/* A request left by a profiler that died: the JVM's user's own, so replaceable; anyone else's is not. */
	if (!fstatat(t->tmp_fd, name, &old, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISREG(old.st_mode) || old.st_uid != t->uid) {
			snprintf(err, err_size, "/tmp/%s in JVM pid %d is not a file of its user %u: not waking its agent",
				 name, (int)t->pid, (unsigned)t->uid);
			return -1;
		}
		attach__unlink_if_same(t->tmp_fd, name, &old);
	}
	if (attach__enter_ids(t, &ids, err, err_size))
		return -1;
	fd = openat(t->tmp_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* The mode is exact whatever the umask; one write of < 1 KiB to a new file is whole or fails. */
		if (!fstat(fd, st) && !fchmod(fd, 0600))
			n = write(fd, options, len);
		saved = errno;
		close(fd);
	} else {
		saved = errno;
	}
	attach__leave_ids(&ids);
	if (fd >= 0 && n != (ssize_t)len) {
		attach__unlink_if_same(t->tmp_fd, name, st);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(err, err_size, "cannot create /tmp/%s in JVM pid %d as its user %u: %s", name, (int)t->pid,
			 (unsigned)t->uid, strerror(saved ? saved : EIO));
		return -1;
	}
	return 0;
}

int agent_loaded__wake(struct jvm_target *t, const char *options, int timeout_ms, char *err, size_t err_size)
{
	char name[64];
	struct stat st;
	int rc;

	if (strlen(options) > WAKE_REQUEST_MAX) {
		snprintf(err, err_size, "internal error: agent options longer than %d bytes", WAKE_REQUEST_MAX);
		return -1;
	}
	snprintf(name, sizeof(name), WAKE_REQUEST_PREFIX "%d", (int)t->nspid);
	if (write_request(t, name, options, &st, err, err_size))
		return -1;
	rc = attach__jcmd(t, "JVMTI.data_dump", timeout_ms, err, err_size);
	attach__unlink_if_same(t->tmp_fd, name, &st);
	return rc;
}
