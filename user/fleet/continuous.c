/*
 * continuous: each interval's profile, per service, to files and the spool
 * (contract in continuous.h).
 */
#include "continuous.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/thread_state.h"
#include "output/output.h"
#include "profile/timeline.h"
#include "symbolizer/service.h"
#include "user/fleet/push.h"
#include "user/fleet/spool.h"

/* Processes remembered: a host's worth; past it a process is named afresh each interval. */
#define MAX_KNOWN 8192
/* Groups (service, container) in one interval. */
#define MAX_GROUPS 4096
/* How long SIGTERM waits for the spool to empty before leaving the rest for the next start. */
#define FLUSH_S 10

struct known {
	uint32_t tgid;
	uint64_t interval;            /* the last interval it was seen in */
	struct service_info info;
};

struct group {
	const struct service_info *info;
	struct profile *profile;
};

struct fleet {
	struct fleet_config config;
	char host[256];
	struct spool *spool;
	struct pusher *pusher;
	struct known *known;
	size_t nr_known;
	uint64_t interval;            /* intervals handed over so far */
	int64_t from_s, until_s;      /* the interval being delivered, in whole seconds (interval_seconds) */
	uint64_t file_seq;
	uint64_t profiles, spool_dropped, dir_removed, failures;
};

struct fleet *fleet__new(const struct fleet_config *config)
{
	struct fleet *f = calloc(1, sizeof(*f));
	char err[512];

	if (!f || !(f->known = calloc(MAX_KNOWN, sizeof(*f->known)))) {
		free(f);
		fprintf(stderr, "jbpfprof: out of memory\n");
		return NULL;
	}
	f->config = *config;
	if (gethostname(f->host, sizeof(f->host) - 1))
		snprintf(f->host, sizeof(f->host), "unknown");
	labels__sanitize_value(f->host, f->host, sizeof(f->host));
	if (config->push_url) {
		f->spool = spool__open(config->spool_dir, config->spool_bytes, err, sizeof(err));
		if (f->spool)
			f->pusher = pusher__start(config->push_url, config->push_api, f->spool, config->verbose, err,
						  sizeof(err));
		if (!f->pusher) {
			fprintf(stderr, "jbpfprof: %s: %s\n", config->push_api == PUSH_API_OTLP ? "--push-otlp" : "--push",
				err);
			fleet__free(f);
			return NULL;
		}
	}
	return f;
}

void fleet__free(struct fleet *f)
{
	if (!f)
		return;
	if (f->pusher) {
		struct spool_stats ss;

		pusher__stop(f->pusher, FLUSH_S);
		spool__stats(f->spool, &ss);
		if (ss.entries)
			fprintf(stderr, "jbpfprof: %llu profiles wait in the spool %s for the next start\n",
				(unsigned long long)ss.entries, f->config.spool_dir);
	}
	spool__close(f->spool);
	free(f->known);
	free(f);
}

/* The service of process tgid (named now if new); NULL when the table is full and no slot is free. */
static const struct service_info *service_of(struct fleet *f, uint32_t tgid, const char *comm)
{
	size_t free_slot = MAX_KNOWN;

	for (size_t i = 0; i < f->nr_known; i++) {
		if (f->known[i].tgid == tgid) {
			f->known[i].interval = f->interval;
			return &f->known[i].info;
		}
		/* Gone since before the last interval: its slot is reused. */
		if (free_slot == MAX_KNOWN && f->known[i].interval + 1 < f->interval)
			free_slot = i;
	}
	if (free_slot == MAX_KNOWN) {
		if (f->nr_known == MAX_KNOWN)
			return NULL;
		free_slot = f->nr_known++;
	}
	f->known[free_slot].tgid = tgid;
	f->known[free_slot].interval = f->interval;
	service__of_process("/proc", tgid, comm, &f->known[free_slot].info);
	return &f->known[free_slot].info;
}

static int find_group(struct group *groups, size_t *nr, const struct service_info *info)
{
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp(groups[i].info->name, info->name) &&
		    !strcmp(groups[i].info->container_id, info->container_id))
			return (int)i;
	if (*nr == MAX_GROUPS)
		return -1;
	groups[*nr] = (struct group){ .info = info, .profile = profile__new(NULL) };
	if (!groups[*nr].profile)
		return -1;
	return (int)(*nr)++;
}

/* One frame of from in to, as it was; -1 when to is full. */
static int64_t copy_frame(struct profile *to, const struct profile *from, uint32_t frame)
{
	enum frame_kind kind = profile__frame_kind(from, frame);
	int64_t id;
	int state;

	if (kind == FRAME_KIND_STATE) {
		state = profile__frame_state(from, frame);
		return profile__intern_state(to, state < 0 ? JBPF_STATE_NR : (unsigned)state);
	}
	/* A waker's roots (--wakers) as plain frames of its part, by the names they have. */
	if (kind == FRAME_KIND_WAKER_THREAD || kind == FRAME_KIND_WAKER_PROCESS)
		kind = FRAME_KIND_WAKER;
	id = profile__intern(to, profile__frame_name(from, frame), kind);
	if (id >= 0 && kind == FRAME_KIND_NATIVE) {
		uint32_t m = profile__frame_module(from, frame);

		if (m && profile__module_path(from, m))
			profile__set_frame_module(to, (uint32_t)id,
						  profile__module(to, profile__module_path(from, m),
								  profile__module_build_id(from, m)));
	}
	return id;
}

/* Stack i of from, without its process and thread roots, into to, as stack *index. */
static int copy_stack(struct profile *to, const struct profile *from, size_t i, uint32_t *index)
{
	uint32_t frames[1024];
	size_t depth, n = 0;
	uint64_t count;
	const uint32_t *s = profile__stack(from, i, &depth, &count);

	for (size_t d = 0; d < depth && n < sizeof(frames) / sizeof(frames[0]); d++) {
		enum frame_kind kind = profile__frame_kind(from, s[d]);
		int64_t id;

		if (kind == FRAME_KIND_PROCESS || kind == FRAME_KIND_THREAD)
			continue;
		id = copy_frame(to, from, s[d]);
		if (id < 0)
			return (int)id;
		frames[n++] = (uint32_t)id;
	}
	*index = UINT32_MAX;
	return n ? profile__add_indexed(to, frames, n, count, index) : 0;
}

/*
 * The times of from's stacks, into the services' profiles they were copied
 * to (to_group[i], to_index[i]; UINT32_MAX for none): each span weighing
 * its part of its stack's count, since stacks that differed only in their
 * thread merge, and their spans' weights must then compare.
 */
static void copy_times(struct group *groups, const struct profile *from, const uint32_t *to_group,
		       const uint32_t *to_index)
{
	const struct timeline *tl = profile__timeline(from);
	const struct timeline_span *spans = timeline__spans(tl);
	size_t nr = profile__stack_count(from);
	uint64_t *weights = timeline__stack_weights(tl, nr), *carry = calloc(nr ? nr : 1, sizeof(*carry));

	for (size_t k = 0; weights && carry && k < timeline__count(tl); k++) {
		const struct timeline_span *sp = &spans[k];
		size_t depth;
		uint64_t count;

		if (sp->stack >= nr || to_group[sp->stack] == UINT32_MAX || to_index[sp->stack] == UINT32_MAX)
			continue;
		profile__stack(from, sp->stack, &depth, &count);
		/* A span that finds no room is counted by the timeline; the stack's count stays. */
		(void)profile__add_span(groups[to_group[sp->stack]].profile, to_index[sp->stack], sp->first, sp->last,
					timeline__span_share(sp, count, weights[sp->stack], &carry[sp->stack]));
	}
	free(weights);
	free(carry);
}

static void utc_stamp(int64_t unix_ns, char *buf, size_t size)
{
	time_t t = (time_t)(unix_ns / 1000000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y%m%dT%H%M%SZ", &tm);
}

/* The group's profile as gzipped pprof bytes (caller frees *out). 0 or a negative errno. */
static int encode(const struct fleet *f, const struct group *g, const struct recording_interval *iv, char **out,
		  size_t *len)
{
	const bool cpu = !strcmp(f->config.event, "cpu");
	char title[512];
	struct output_meta meta = {
		.title = title,
		.unit = cpu ? "samples" : "microseconds",
		.duration_s = (double)(iv->until_unix_ns - iv->from_unix_ns) / 1e9,
		.frequency_hz = f->config.frequency_hz,
		.summary = iv->summary,
		.event = f->config.event,
		.start_unix_ns = iv->from_unix_ns,
		.process_roots = "none",
	};
	FILE *mem;
	int error;

	snprintf(title, sizeof(title), "%s profile of %s%s%s on %s", cpu ? "CPU" : "Wall-clock", g->info->name,
		 g->info->container_id[0] ? " in container " : "", g->info->container_id, f->host);
	*out = NULL;
	mem = open_memstream(out, len);
	if (!mem)
		return -errno;
	error = output__write(OUTPUT_PPROF, g->profile, &meta, 0, mem);
	if (fclose(mem) && !error)
		error = -EIO;
	if (error) {
		free(*out);
		*out = NULL;
	}
	return error;
}

/* Whether name is one of the files --dir writes: "<digit>...pb.gz", not a dot file. */
static bool our_file(const char *name)
{
	size_t n = strlen(name);

	return name[0] >= '0' && name[0] <= '9' && n > 6 && !strcmp(name + n - 6, ".pb.gz");
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --keep: the oldest of our files removed until they fit. */
static void keep_dir(struct fleet *f, int dirfd)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	uint64_t total = 0;
	size_t nr = 0, cap = 0;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!our_file(de->d_name) || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof(*nn));

			if (!nn)
				break;
			names = nn;
			cap = ncap;
		}
		if (!(names[nr] = strdup(de->d_name)))
			break;
		nr++;
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), cmp_names);
	for (size_t i = 0; i < nr; i++) {
		struct stat st;

		if (total > f->config.keep_bytes && !fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) &&
		    !unlinkat(dirfd, names[i], 0)) {
			total -= (uint64_t)st.st_size;
			f->dir_removed++;
		}
		free(names[i]);
	}
	free(names);
}

static int write_file(struct fleet *f, const struct group *g, const struct recording_interval *iv, const char *data,
		      size_t len)
{
	char stamp[32], name[512], tmp[520];
	int dirfd = open(f->config.dir, O_DIRECTORY | O_CLOEXEC), fd, error = 0;
	const char *p = data;
	size_t left = len;

	if (dirfd < 0)
		return -errno;
	utc_stamp(iv->until_unix_ns, stamp, sizeof(stamp));
	snprintf(name, sizeof(name), "%s-%06llu-%s%s%.12s.%s.pb.gz", stamp, (unsigned long long)f->file_seq++,
		 g->info->name, g->info->container_id[0] ? "-" : "", g->info->container_id, f->config.event);
	for (char *c = name; *c; c++)
		if (*c == '/')
			*c = '_';
	snprintf(tmp, sizeof(tmp), ".%s", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		error = -errno;
		goto out;
	}
	while (left && !error) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			error = n < 0 ? -errno : -EIO;
		else {
			p += n;
			left -= (size_t)n;
		}
	}
	if (close(fd) && !error)
		error = -errno;
	if (!error && renameat(dirfd, tmp, dirfd, name))
		error = -errno;
	if (error)
		unlinkat(dirfd, tmp, 0);
	else if (f->config.keep_bytes)
		keep_dir(f, dirfd);
out:
	close(dirfd);
	return error;
}

static int spool_profile(struct fleet *f, const struct group *g, const struct recording_interval *iv,
			 const char *data, size_t len)
{
	struct fleet_label labels[FLEET_MAX_LABELS + 2];
	char app[2048], query[4096];
	size_t nr = 0;
	uint64_t dropped = 0;
	int error;

	snprintf(labels[nr].key, sizeof(labels[nr].key), FLEET_LABEL_HOST);
	labels__sanitize_value(f->host, labels[nr++].value, sizeof(labels[0].value));
	if (g->info->container_id[0]) {
		snprintf(labels[nr].key, sizeof(labels[nr].key), FLEET_LABEL_CONTAINER);
		snprintf(labels[nr++].value, sizeof(labels[0].value), "%s", g->info->container_id);
	}
	for (size_t i = 0; i < f->config.nr_labels && nr < sizeof(labels) / sizeof(labels[0]); i++)
		labels[nr++] = f->config.labels[i];
	if (labels__app_name(app, sizeof(app), g->info->name, f->config.event, labels, nr) < 0 ||
	    push__query(query, sizeof(query), app, f->from_s, f->until_s, f->config.frequency_hz) < 0)
		return -ENAMETOOLONG;
	error = spool__put(f->spool, query, data, len, &dropped);
	if (dropped) {
		struct spool_stats ss;

		spool__stats(f->spool, &ss);
		f->spool_dropped += dropped;
		fprintf(stderr, "jbpfprof: the spool is full (%llu bytes): dropped the %llu oldest profiles, %llu in all\n",
			(unsigned long long)f->config.spool_bytes, (unsigned long long)dropped,
			(unsigned long long)ss.dropped);
	}
	if (!error)
		pusher__kick(f->pusher);
	return error;
}

static void deliver(struct fleet *f, const struct group *g, const struct recording_interval *iv)
{
	char *data;
	size_t len;
	int error = encode(f, g, iv, &data, &len);

	if (!error && f->config.dir && (error = write_file(f, g, iv, data, len)))
		fprintf(stderr, "jbpfprof: --dir %s: cannot write the profile of %s: %s\n", f->config.dir,
			g->info->name, strerror(-error));
	if (!error && f->spool && (error = spool_profile(f, g, iv, data, len)))
		fprintf(stderr, "jbpfprof: cannot spool the profile of %s: %s\n", g->info->name, strerror(-error));
	if (error)
		f->failures++;
	else
		f->profiles++;
	free(data);
}

/*
 * The interval's from and until in whole seconds, as the store takes them:
 * rounded to the nearest second, so that one interval's until is the
 * next's from; an interval shorter than a second (one cut late on a loaded
 * host, the next on the grid) still gets a from after the last one's and
 * an until after its from. The store keys a series' profiles by from: two
 * with one from would be one profile sent twice.
 */
static void interval_seconds(struct fleet *f, const struct recording_interval *iv)
{
	int64_t from = (iv->from_unix_ns + 500000000) / 1000000000, until = (iv->until_unix_ns + 500000000) / 1000000000;

	if (f->interval > 1 && from <= f->from_s)
		from = f->from_s + 1;
	if (until <= from)
		until = from + 1;
	f->from_s = from;
	f->until_s = until;
}

void fleet__interval(void *ctx, const struct profile *profile, const struct recording_interval *iv)
{
	struct fleet *f = ctx;
	struct group *groups = calloc(MAX_GROUPS, sizeof(*groups));
	size_t nr = 0, unplaced = 0, nr_stacks;
	uint32_t *to_group, *to_index;

	f->interval++;
	interval_seconds(f, iv);
	if (!groups) {
		fprintf(stderr, "jbpfprof: out of memory: an interval's profiles are lost\n");
		return;
	}
	nr_stacks = profile__stack_count(profile);
	to_group = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*to_group));
	to_index = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*to_index));
	for (size_t i = 0; to_group && to_index && i < nr_stacks; i++)
		to_group[i] = to_index[i] = UINT32_MAX;
	for (size_t i = 0; i < nr_stacks; i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *s = profile__stack(profile, i, &depth, &count);
		const struct service_info *info;
		int64_t pid;
		uint32_t index;
		int g;

		if (!depth || profile__frame_kind(profile, s[0]) != FRAME_KIND_PROCESS ||
		    (pid = profile__root_id(profile, s[0])) < 0) {
			unplaced++;
			continue;
		}
		info = service_of(f, (uint32_t)pid, profile__root_name(profile, s[0]));
		g = info ? find_group(groups, &nr, info) : -1;
		if (g < 0 || copy_stack(groups[g].profile, profile, i, &index))
			unplaced++;
		else if (to_group && to_index)
			to_group[i] = (uint32_t)g, to_index[i] = index;
	}
	if (to_group && to_index)
		copy_times(groups, profile, to_group, to_index);
	free(to_group);
	free(to_index);
	for (size_t g = 0; g < nr; g++) {
		deliver(f, &groups[g], iv);
		profile__free(groups[g].profile);
	}
	free(groups);
	/*
	 * The interval's profiles are freed: give the heap's free pages back,
	 * so that RSS follows what the next interval holds, not the largest
	 * interval seen (glibc keeps freed memory below the heap's top).
	 */
	malloc_trim(0);
	if (f->config.verbose)
		fprintf(stderr, "jbpfprof: interval %llu: %zu services, %s%s\n", (unsigned long long)f->interval, nr,
			iv->summary, unplaced ? "; some stacks not placed in a service" : "");
}
