/*
 * A pprof file handed to jbpfprof convert or diff (gzipped or plain
 * protobuf), read whole and, as convert --event does, for one of the
 * events a file of several may hold. The samples' times it gives (the
 * "timestamp" and "duration" labels, as spans) are then used as convert
 * uses them: a view of the recording's first half, which may hold no more
 * than the whole, and the flame graph page's buckets, whose cells and
 * untimed count sum to the drawn stacks' counts exactly.
 */
#include "fuzz.h"

#include "output/flametime.h"
#include "output/flametree.h"
#include "profile/timeline.h"
#include "profile/view.h"
#include "input/pprof_read.h"

static void use_times(const struct pprof_recording *rec)
{
	const struct timeline *tl = profile__timeline(rec->profile);
	struct view_config half = { .time_range = true, .from_tick = 0, .to_tick = (uint64_t)timeline__end(tl) / 2 + 1 };
	struct profile *cut = profile__new(NULL);
	struct flame_tree tree = { 0 };
	struct flame_time ft = { 0 };
	struct view_stats stats;
	uint64_t drawn = 0, placed = 0;

	if (cut && view__apply(rec->profile, &half, cut, &stats) == 0 && profile__total(cut) > profile__total(rec->profile))
		abort(); /* a range holds more than the whole */
	profile__free(cut);
	if (flame_tree__build(rec->profile, &tree) == 0 && flame_time__build(rec->profile, &tree, rec->duration_s, &ft) == 0 &&
	    ft.bucket_ms) {
		for (size_t i = 0; i < ft.nr; i++) {
			if (ft.cells[i].node >= tree.nr || ft.cells[i].bucket >= ft.buckets)
				abort(); /* a cell outside the tree or the timeline */
			placed += ft.cells[i].count;
		}
		for (size_t s = 0; s < tree.nr_stacks; s++) {
			size_t depth;
			uint64_t count;

			profile__stack(rec->profile, s, &depth, &count);
			drawn += tree.stack_node[s] == FLAME_NO_NODE ? 0 : count;
		}
		if (placed + ft.untimed != drawn)
			abort(); /* the page's timeline would not add up to its flame graph */
	}
	flame_time__free(&ft);
	flame_tree__free(&tree);
}

static void read_one(const uint8_t *data, size_t size, const char *event)
{
	struct pprof_recording rec;
	char err[256];

	if (pprof_read__buffer_event(data, size, event, &rec, err, sizeof(err)) == 0) {
		if (profile__timeline(rec.profile))
			use_times(&rec);
		pprof_recording__free(&rec);
	} else if (!memchr(err, '\0', sizeof(err)) || strchr(err, '\n')) {
		abort(); /* the reason is one line */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_one(data, size, NULL);
	read_one(data, size, "alloc");
	return 0;
}
