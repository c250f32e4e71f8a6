/*
 * wakers: --wakers' slots (contract in wakers.h).
 */
#include "wakers.h"

#include <stdlib.h>
#include <string.h>

struct wakers {
	struct waker slot[WAKER_SLOTS];
};

struct wakers *wakers__new(void)
{
	return calloc(1, sizeof(struct wakers));
}

void wakers__free(struct wakers *w)
{
	for (size_t i = 0; w && i < WAKER_SLOTS; i++)
		free(w->slot[i].frames);
	free(w);
}

void wakers__clear(struct wakers *w)
{
	for (size_t i = 0; w && i < WAKER_SLOTS; i++)
		w->slot[i].depth = 0;
}

/* The slot of the waker numbered seq. */
static struct waker *slot_of(struct wakers *w, uint64_t seq)
{
	return &w->slot[(seq * 0x9e3779b97f4a7c15ull >> 40) & (WAKER_SLOTS - 1)];
}

/* Frame f of a waker's captured stack as the waker's: its roots as the waker's roots, the rest FRAME_KIND_WAKER. */
static int64_t waker_frame(struct profile *profile, uint32_t f)
{
	struct process_parts parts;

	switch (profile__frame_kind(profile, f)) {
	case FRAME_KIND_PROCESS:
		profile__process_parts(profile, f, &parts);
		return profile__intern_waker_process_parts(profile, &parts);
	case FRAME_KIND_THREAD:
		return profile__intern_waker_thread(profile, profile__root_name(profile, f), profile__root_id(profile, f));
	default:
		return profile__intern(profile, profile__frame_name(profile, f), FRAME_KIND_WAKER);
	}
}

int wakers__keep(struct wakers *w, struct profile *profile, uint64_t seq, const uint32_t *captured,
		 size_t depth, bool *replaced)
{
	struct waker *k = slot_of(w, seq);
	uint32_t *frames;
	int64_t id;

	*replaced = k->depth != 0;
	k->depth = 0;
	frames = realloc(k->frames, (1 + depth) * sizeof(*frames));
	if (!frames)
		return -1;
	k->frames = frames;
	id = profile__intern(profile, "[woken by]", FRAME_KIND_WAKER);
	if (id < 0)
		return -1;
	frames[0] = (uint32_t)id;
	/* Innermost first, so that the two stacks meet at the separator; kinds of their own. */
	for (size_t i = 0; i < depth; i++) {
		id = waker_frame(profile, captured[depth - 1 - i]);
		if (id < 0)
			return -1;
		frames[1 + i] = (uint32_t)id;
	}
	k->seq = seq;
	k->depth = (uint32_t)(1 + depth);
	return 0;
}

const struct waker *wakers__of(struct wakers *w, struct profile *profile, uint64_t seq, bool *missing)
{
	static uint32_t lost_frames[2];
	static struct waker lost = { .frames = lost_frames };
	struct waker *k = w ? slot_of(w, seq) : NULL;
	int64_t sep, reason;

	*missing = false;
	if (k && k->depth && k->seq == seq)
		return k;
	*missing = true;
	sep = profile__intern(profile, "[woken by]", FRAME_KIND_WAKER);
	reason = profile__intern(profile, "[waker not recorded]", FRAME_KIND_WAKER);
	if (sep < 0 || reason < 0)
		return NULL;
	lost_frames[0] = (uint32_t)sep;
	lost_frames[1] = (uint32_t)reason;
	lost.depth = 2;
	return &lost;
}

void wakers__release(struct wakers *w, const struct waker *k, uint64_t seq)
{
	if (k && w && k == slot_of(w, seq))
		slot_of(w, seq)->depth = 0;
}

bool wakers__is_timer(const struct profile *profile, const struct waker *k)
{
	return k->depth && !strcmp(profile__frame_name(profile, k->frames[k->depth - 1]), "[timed out]");
}
