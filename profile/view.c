/*
 * view: a recording's profile seen with a given set of options (contract in
 * view.h).
 *
 * Each source frame is mapped once to the frame the view shows (or to none)
 * and, for the patterns, to whether its shown name matches; a stack is then
 * a walk over ids, with no string work per sample.
 */
#include "view.h"

#include <errno.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/jbpfprof.h"

#define NO_FRAME UINT32_MAX

/* How the view shows one source frame. */
struct shown {
	uint32_t id;       /* frame id in the view's profile, or NO_FRAME */
	int state;         /* enum jbpf_state of a state frame, else -1 */
	bool included;     /* its shown name matches the include pattern */
	bool excluded;     /* ... the exclude pattern */
};

static bool parse_trailing_number(const char *s, size_t len, const char *prefix, size_t *before, uint32_t *value)
{
	size_t plen = strlen(prefix), end = len, digits = 0;
	uint64_t v = 0;

	while (end > 0 && s[end - 1] >= '0' && s[end - 1] <= '9' && digits < 10) {
		end--;
		digits++;
	}
	if (!digits || end < plen || memcmp(s + end - plen, prefix, plen))
		return false;
	for (size_t i = end; i < len; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (v > UINT32_MAX)
		return false;
	*before = end - plen;
	*value = (uint32_t)v;
	return true;
}

bool view__parse_process(const char *frame, size_t *name_len, uint32_t *pid)
{
	size_t len = strlen(frame);

	if (len < 2 || frame[len - 1] != ')')
		return false;
	return parse_trailing_number(frame, len - 1, " (pid ", name_len, pid);
}

bool view__parse_thread(const char *frame, size_t *name_len, uint32_t *tid)
{
	size_t len = strlen(frame);

	if (len < 2 || frame[0] != '[' || frame[len - 1] != ']')
		return false;
	return parse_trailing_number(frame + 1, len - 2, " tid=", name_len, tid);
}

static const char *const java_suffixes[FRAME_KIND_NR] = {
	[FRAME_KIND_JAVA_COMPILED] = "_[j]",
	[FRAME_KIND_JAVA_INLINED] = "_[i]",
	[FRAME_KIND_JAVA_INTERP] = "_[0]",
};

static int state_of(const char *name)
{
	for (int s = 0; s < JBPF_STATE_NR; s++)
		if (!strcmp(name, profile_state_frame((unsigned)s)))
			return s;
	return -1;
}

/*
 * The name the view shows for a source frame, cut in place in buf (a copy of
 * the source name), and its kind; false when the view leaves it out.
 */
static bool show_frame(const struct view_config *config, char *buf, enum frame_kind kind, enum frame_kind *shown_kind)
{
	size_t len = strlen(buf), cut;
	uint32_t number;

	*shown_kind = kind;
	switch (kind) {
	case FRAME_KIND_PROCESS:
		if (config->process_root == VIEW_ROOT_NONE)
			return false;
		if (config->process_root == VIEW_ROOT_NAME && view__parse_process(buf, &cut, &number))
			buf[cut] = '\0';
		return true;
	case FRAME_KIND_THREAD:
		return config->threads;
	case FRAME_KIND_JAVA_COMPILED:
	case FRAME_KIND_JAVA_INLINED:
	case FRAME_KIND_JAVA_INTERP:
		if (config->annotate)
			return true;
		cut = strlen(java_suffixes[kind]);
		if (len >= cut && !strcmp(buf + len - cut, java_suffixes[kind]))
			buf[len - cut] = '\0';
		*shown_kind = FRAME_KIND_JAVA;
		return true;
	default:
		return true;
	}
}

static void copy_module(const struct profile *from, uint32_t frame, struct profile *to, uint32_t to_frame)
{
	uint32_t module = profile__frame_module(from, frame);

	if (module)
		profile__set_frame_module(to, to_frame, profile__module(to, profile__module_path(from, module),
									  profile__module_build_id(from, module)));
}

static int map_frames(const struct profile *from, const struct view_config *config, struct profile *to,
		      struct shown *shown)
{
	size_t nr = profile__frame_count(from);

	for (size_t i = 0; i < nr; i++) {
		enum frame_kind kind = profile__frame_kind(from, (uint32_t)i), shown_kind;
		char *buf = strdup(profile__frame_name(from, (uint32_t)i));
		int64_t id;

		if (!buf)
			return -ENOMEM;
		shown[i].id = NO_FRAME;
		shown[i].state = kind == FRAME_KIND_STATE ? state_of(buf) : -1;
		shown[i].included = shown[i].excluded = false;
		if (show_frame(config, buf, kind, &shown_kind)) {
			id = profile__intern(to, buf, shown_kind);
			if (id < 0) {
				free(buf);
				return (int)id;
			}
			shown[i].id = (uint32_t)id;
			copy_module(from, (uint32_t)i, to, (uint32_t)id);
			shown[i].included = config->include && !regexec(config->include, buf, 0, NULL, 0);
			shown[i].excluded = config->exclude && !regexec(config->exclude, buf, 0, NULL, 0);
		}
		free(buf);
	}
	return 0;
}

int view__apply(const struct profile *from, const struct view_config *config, struct profile *to,
		struct view_stats *stats)
{
	size_t nr_frames = profile__frame_count(from), nr_stacks = profile__stack_count(from), cap = 0;
	struct shown *shown = calloc(nr_frames ? nr_frames : 1, sizeof(*shown));
	uint32_t *ids = NULL;
	int err;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!shown)
		return -ENOMEM;
	err = map_frames(from, config, to, shown);
	for (size_t i = 0; !err && i < nr_stacks; i++) {
		size_t depth, n = 0;
		uint64_t count;
		const uint32_t *frames = profile__stack(from, i, &depth, &count);
		bool included = !config->include, excluded = false, state_kept = true;

		if (!count)
			continue;
		if (depth > cap) {
			uint32_t *grown = realloc(ids, depth * sizeof(*ids));

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			ids = grown;
			cap = depth;
		}
		for (size_t k = 0; k < depth; k++) {
			const struct shown *s = &shown[frames[k]];

			if (s->state >= 0 && config->state_mask && !(config->state_mask & (1u << s->state)))
				state_kept = false;
			if (s->id == NO_FRAME)
				continue;
			included |= s->included;
			excluded |= s->excluded;
			ids[n++] = s->id;
		}
		if (!state_kept || !included || excluded) {
			if (stats) {
				stats->stacks_dropped++;
				stats->count_dropped += count;
			}
			continue;
		}
		if (config->reverse)
			for (size_t a = 0, b = n; a + 1 < b; a++, b--) {
				uint32_t t = ids[a];

				ids[a] = ids[b - 1];
				ids[b - 1] = t;
			}
		err = profile__add(to, ids, n, count);
	}
	free(ids);
	free(shown);
	return err;
}
