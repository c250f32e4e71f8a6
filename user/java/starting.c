/*
 * starting: JVMs unwalked while starting (contract in starting.h).
 *
 * A few JVMs at most start during one recording, and a sample of a process
 * not walked looks here only while one of them is still open, so a plain
 * array searched from the start is enough.
 */
#include "starting.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct starting_jvm {
	uint32_t tgid;
	bool open;              /* still unwalked: its samples count */
	uint64_t since_ns;      /* the first "still starting" */
	uint64_t until_ns;      /* walked or gone; 0 while open */
	uint64_t samples;       /* samples while open */
	uint64_t native;        /* of those, with user frames (no Java frame: the walk did not take them) */
};

struct starting {
	struct starting_jvm jvms[STARTING_MAX];
	size_t nr, nr_open;
	uint64_t untracked;     /* JVMs seen starting past STARTING_MAX */
};

struct starting *starting__new(void)
{
	return calloc(1, sizeof(struct starting));
}

void starting__free(struct starting *s)
{
	free(s);
}

/* The open entry of tgid, or NULL. */
static struct starting_jvm *find_open(struct starting *s, uint32_t tgid)
{
	for (size_t i = 0; s && s->nr_open && i < s->nr; i++)
		if (s->jvms[i].open && s->jvms[i].tgid == tgid)
			return &s->jvms[i];
	return NULL;
}

void starting__seen(struct starting *s, uint32_t tgid, uint64_t now_ns)
{
	if (!s || find_open(s, tgid))
		return;
	if (s->nr == STARTING_MAX) {
		s->untracked++;
		return;
	}
	s->jvms[s->nr++] = (struct starting_jvm){ .tgid = tgid, .open = true, .since_ns = now_ns };
	s->nr_open++;
}

void starting__gone(struct starting *s, uint32_t tgid, uint64_t now_ns)
{
	struct starting_jvm *j = find_open(s, tgid);

	if (!j)
		return;
	j->open = false;
	j->until_ns = now_ns;
	s->nr_open--;
}

void starting__walked(struct starting *s, uint32_t tgid, uint64_t now_ns)
{
	starting__gone(s, tgid, now_ns);
}

void starting__sample(struct starting *s, const struct jbpf_sample *sample)
{
	struct starting_jvm *j = find_open(s, sample->tgid);

	if (!j)
		return;
	j->samples++;
	j->native += sample->ustack_len > 0;
}

void starting__describe(const struct starting *s, uint64_t from_ns, uint64_t end_ns, char *buf, size_t size)
{
	uint64_t longest = 0, samples = 0, native = 0;
	uint32_t longest_tgid = 0;
	int used;

	buf[0] = '\0';
	if (!s || !s->nr)
		return;
	for (size_t i = 0; i < s->nr; i++) {
		const struct starting_jvm *j = &s->jvms[i];
		uint64_t since = j->since_ns > from_ns ? j->since_ns : from_ns;
		uint64_t until = j->open ? end_ns : j->until_ns, ns = until > since ? until - since : 0;

		if (ns >= longest) {
			longest = ns;
			longest_tgid = j->tgid;
		}
		samples += j->samples;
		native += j->native;
	}
	if (s->nr == 1)
		used = snprintf(buf, size, "JVM pid %u unwalked while starting for %.2f s", longest_tgid,
				(double)longest / 1e9);
	else
		used = snprintf(buf, size, "%zu JVMs unwalked while starting, %.2f s at most (pid %u)", s->nr,
				(double)longest / 1e9, longest_tgid);
	if (used < 0 || (size_t)used >= size)
		return;
	used += snprintf(buf + used, size - (size_t)used,
			 ", %s %llu samples then without Java frames (%llu in native code, %llu in the kernel only)",
			 s->nr == 1 ? "its" : "their", (unsigned long long)samples, (unsigned long long)native,
			 (unsigned long long)(samples - native));
	if (s->untracked && used > 0 && (size_t)used < size)
		snprintf(buf + used, size - (size_t)used, ", %llu more not followed", (unsigned long long)s->untracked);
}
