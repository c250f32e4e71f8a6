/*
 * spool: the on-disk queue of profiles to push (contract in spool.h).
 *
 * The index in memory is the entries' (seq, size) in order, a ring of
 * SPOOL_MAX_ENTRIES; the directory is the truth, read once at open.
 */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fdio.h"

#define SEQ_DIGITS 20
#define NO_SEQ UINT64_MAX
/* An entry larger than this is not a profile of ours: left alone at open. */
#define ENTRY_MAX_BYTES (256u << 20)

struct entry {
	uint64_t seq, size;
};

struct spool {
	pthread_mutex_t lock;
	int dirfd;
	uint64_t max_bytes;
	struct entry *ring;      /* SPOOL_MAX_ENTRIES */
	size_t head, nr;
	uint64_t next_seq;
	uint64_t in_flight;      /* seq being sent, or NO_SEQ */
	struct spool_stats stats;
};

static void entry_name(uint64_t seq, char *buf, size_t size, bool tmp)
{
	snprintf(buf, size, "%s%0*" PRIu64 "%s", tmp ? "tmp-" : "", SEQ_DIGITS, seq, tmp ? "" : ".prof");
}

/* seq of a name "<20 digits>.prof", or NO_SEQ. */
static uint64_t parse_name(const char *name)
{
	uint64_t seq = 0;

	if (strlen(name) != SEQ_DIGITS + 5 || strcmp(name + SEQ_DIGITS, ".prof"))
		return NO_SEQ;
	for (int i = 0; i < SEQ_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9' || seq > (UINT64_MAX - 9) / 10)
			return NO_SEQ;
		seq = seq * 10 + (uint64_t)(name[i] - '0');
	}
	return seq;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct entry *at(struct spool *s, size_t i)
{
	return &s->ring[(s->head + i) % SPOOL_MAX_ENTRIES];
}

/* Reads the directory: entries in order, tmp- files of a killed writer removed. */
static int scan(struct spool *s)
{
	int fd = dup(s->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		uint64_t seq = parse_name(de->d_name);
		struct stat st;

		if (!strncmp(de->d_name, "tmp-", 4)) {
			unlinkat(s->dirfd, de->d_name, 0);
			continue;
		}
		if (seq == NO_SEQ || fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    (uint64_t)st.st_size > ENTRY_MAX_BYTES || s->nr == SPOOL_MAX_ENTRIES)
			continue;
		s->ring[s->nr++] = (struct entry){ seq, (uint64_t)st.st_size };
		s->stats.bytes += (uint64_t)st.st_size;
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(d);
	qsort(s->ring, s->nr, sizeof(*s->ring), cmp_entry);
	s->stats.entries = s->nr;
	return 0;
}

struct spool *spool__open(const char *dir, uint64_t max_bytes, char *err, size_t err_size)
{
	struct spool *s = calloc(1, sizeof(*s));

	if (!s || !(s->ring = calloc(SPOOL_MAX_ENTRIES, sizeof(*s->ring)))) {
		snprintf(err, err_size, "out of memory");
		if (s)
			free(s);
		return NULL;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, err_size, "cannot create the spool directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	s->dirfd = open(dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dirfd < 0) {
		snprintf(err, err_size, "cannot open the spool directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (scan(s)) {
		snprintf(err, err_size, "cannot read the spool directory %s: %s", dir, strerror(errno));
		close(s->dirfd);
		goto fail;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->max_bytes = max_bytes;
	s->in_flight = NO_SEQ;
	return s;
fail:
	free(s->ring);
	free(s);
	return NULL;
}

void spool__close(struct spool *s)
{
	if (!s)
		return;
	close(s->dirfd);
	pthread_mutex_destroy(&s->lock);
	free(s->ring);
	free(s);
}

/* Writes tmp-<seq>, syncs it, renames it into place and syncs the directory. */
static int write_entry(struct spool *s, uint64_t seq, const char *query, const void *body, size_t len)
{
	char tmp[64], name[64];
	int fd, error;

	entry_name(seq, tmp, sizeof(tmp), true);
	entry_name(seq, name, sizeof(name), false);
	fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	error = fdio__write_all(fd, query, strlen(query));
	if (!error)
		error = fdio__write_all(fd, "\n", 1);
	if (!error)
		error = fdio__write_all(fd, body, len);
	if (!error && fsync(fd))
		error = -errno;
	close(fd);
	if (!error && renameat(s->dirfd, tmp, s->dirfd, name))
		error = -errno;
	if (error) {
		unlinkat(s->dirfd, tmp, 0);
		return error;
	}
	fsync(s->dirfd);
	return 0;
}

/* Removes the oldest entry not in flight; false when there is none. */
static bool drop_oldest(struct spool *s)
{
	char name[64];

	for (size_t i = 0; i < s->nr; i++) {
		struct entry e = *at(s, i);

		if (e.seq == s->in_flight)
			continue;
		entry_name(e.seq, name, sizeof(name), false);
		unlinkat(s->dirfd, name, 0);
		/* Close the gap: entries before i move up one. */
		for (size_t j = i; j > 0; j--)
			*at(s, j) = *at(s, j - 1);
		s->head = (s->head + 1) % SPOOL_MAX_ENTRIES;
		s->nr--;
		s->stats.bytes -= e.size;
		s->stats.dropped++;
		return true;
	}
	return false;
}

int spool__put(struct spool *s, const char *query, const void *body, size_t len, uint64_t *dropped)
{
	uint64_t size = strlen(query) + 1 + len, before;
	int error;

	pthread_mutex_lock(&s->lock);
	before = s->stats.dropped;
	while (s->nr && (s->stats.bytes + size > s->max_bytes || s->nr == SPOOL_MAX_ENTRIES))
		if (!drop_oldest(s))
			break;
	error = s->nr == SPOOL_MAX_ENTRIES ? -ENOSPC : write_entry(s, s->next_seq, query, body, len);
	if (!error) {
		*at(s, s->nr) = (struct entry){ s->next_seq, size };
		s->nr++;
		s->next_seq++;
		s->stats.bytes += size;
		s->stats.put++;
	}
	s->stats.entries = s->nr;
	if (dropped)
		*dropped = s->stats.dropped - before;
	pthread_mutex_unlock(&s->lock);
	return error;
}

int spool__peek(struct spool *s, uint64_t *seq, char **query, const void **body, size_t *len)
{
	char name[64];
	struct entry e;
	char *buf, *nl;
	ssize_t n;
	int fd;

	*query = NULL;
	pthread_mutex_lock(&s->lock);
	if (!s->nr) {
		pthread_mutex_unlock(&s->lock);
		return -ENOENT;
	}
	e = *at(s, 0);
	s->in_flight = e.seq;
	pthread_mutex_unlock(&s->lock);

	entry_name(e.seq, name, sizeof(name), false);
	fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	buf = fd >= 0 ? malloc(e.size + 1) : NULL;
	n = buf ? pread(fd, buf, e.size, 0) : -1;
	if (fd >= 0)
		close(fd);
	nl = n > 0 ? memchr(buf, '\n', (size_t)n) : NULL;
	if (!nl) {
		/* Unreadable or not ours: it would block the queue for ever. */
		free(buf);
		spool__done(s, e.seq);
		return -EIO;
	}
	*nl = '\0';
	*seq = e.seq;
	*query = buf;
	*body = nl + 1;
	*len = (size_t)n - (size_t)(nl + 1 - buf);
	return 0;
}

void spool__done(struct spool *s, uint64_t seq)
{
	char name[64];

	pthread_mutex_lock(&s->lock);
	if (s->nr && at(s, 0)->seq == seq) {
		entry_name(seq, name, sizeof(name), false);
		unlinkat(s->dirfd, name, 0);
		s->stats.bytes -= at(s, 0)->size;
		s->head = (s->head + 1) % SPOOL_MAX_ENTRIES;
		s->nr--;
		s->stats.sent++;
	}
	s->in_flight = NO_SEQ;
	s->stats.entries = s->nr;
	pthread_mutex_unlock(&s->lock);
}

void spool__release(struct spool *s, uint64_t seq)
{
	pthread_mutex_lock(&s->lock);
	if (s->in_flight == seq)
		s->in_flight = NO_SEQ;
	pthread_mutex_unlock(&s->lock);
}

void spool__stats(struct spool *s, struct spool_stats *stats)
{
	pthread_mutex_lock(&s->lock);
	*stats = s->stats;
	pthread_mutex_unlock(&s->lock);
}
