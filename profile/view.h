/*
 * view: one way of looking at a recording, made from the profile that keeps
 * everything.
 *
 * A recording meant to be viewed later (a pprof file) is aggregated in full:
 * every stack starts with its process frame, "name (pid N)", and its thread
 * frame, "[name tid=N]"; Java frames keep how they ran (compiled, inlined,
 * interpreted, with their _[j] _[i] _[0] suffixes); a wall-clock stack ends
 * in its state frame. view__apply derives from such a profile exactly the
 * profile a recording made with the view's options would have aggregated
 * directly, and then filters it:
 *
 *   process_root  how stacks begin: with no process frame, or with one
 *                 per executable ("java"), per service ("org.example.Main
 *                 (java)": the program, instances merged) or per process
 *                 ("org.example.Main (java, pid 12)", its container too)
 *   threads       keep the thread frames
 *   annotate      keep how Java frames ran; otherwise they become plain
 *                 Java frames without suffix
 *   lines         a Java frame's position (profile__frame_position):
 *                 dropped, so a method is one frame; shown in its name,
 *                 "pkg.Class.method:LINE" (before any suffix), a frame
 *                 per line; or kept as it is, for pprof and JFR
 *   state_mask    keep only stacks whose state frame is among these
 *                 (stacks with no state frame are kept)
 *   include       keep only stacks with a frame whose name matches
 *   exclude       drop stacks with a frame whose name matches
 *   reverse       frames leaf first
 *   no_wakers     leave out the waker joined to each wait (--wakers):
 *                 its frames, and its process and thread frames, which
 *                 are otherwise shown as the stack's own are
 *   carrier_frames  keep a virtual thread's carrier's frames, those
 *                 between the roots and the virtual thread's marker frame
 *                 (FRAME_KIND_CARRIER); otherwise the stack goes from its
 *                 roots to the marker, and with threads the marker, which
 *                 names the virtual thread, comes before the thread frame,
 *                 which names its carrier
 *   virtual_thread_ids  keep the virtual thread's id in its marker
 *                 ("[virtual thread #12]"); without, "[virtual thread]"
 *   event         a recording of several events: keep only the stacks
 *                 of this one (those whose event frame has this name),
 *                 without their event frame; stacks with no event frame
 *                 (a recording of one event) are kept
 *   time_range    keep only what was counted in ticks [from_tick,
 *                 to_tick) of the timeline (profile/timeline.h): each
 *                 stack's count becomes the part of it its spans place
 *                 there, and its spans are cut to the range; a stack with
 *                 no time kept is dropped (stats: untimed)
 *
 * The view keeps the timeline: each span goes with its stack.
 *
 * Frames the view leaves out of the source are left out of the stack, and
 * stacks that become equal are merged. The patterns are matched against the
 * frames as the view shows them, before reversing.
 *
 * A profile that was not aggregated in full (no process or thread frames)
 * is viewed as it is: what is not there is not added.
 */
#ifndef JBPF_VIEW_H
#define JBPF_VIEW_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

enum view_process_root {
	VIEW_ROOT_NONE,
	VIEW_ROOT_EXECUTABLE, /* "name" */
	VIEW_ROOT_SERVICE,    /* "program (name)" */
	VIEW_ROOT_PROCESS,    /* "program (name, pid N, container C)" */
	VIEW_ROOT_NR,
};

/* As --group-by takes them: "none", "executable", "service", "process". */
const char *view__root_word(enum view_process_root root);
/* The grouping a word names (also "name" and "pid", as older pprof files say); -1 for none. */
int view__root_of_word(const char *word);

/*
 * The frame process parts are shown as under root, interned in to: its
 * id, or a negative errno (-EINVAL for VIEW_ROOT_NONE, which shows none).
 */
int64_t view__process_frame(struct profile *to, const struct process_parts *parts, enum view_process_root root);

enum view_lines {
	VIEW_LINES_DROP,
	VIEW_LINES_SHOW,
	VIEW_LINES_KEEP,
};

struct view_config {
	enum view_process_root process_root;
	bool threads;
	bool annotate;
	enum view_lines lines;
	unsigned state_mask;      /* 1 << enum jbpf_state per state kept; 0 keeps all */
	const regex_t *include;   /* NULL: keep all */
	const regex_t *exclude;   /* NULL: drop none */
	bool reverse;
	const char *event;        /* NULL: every event, their frames kept */
	bool no_wakers;           /* drop the wakers' frames (--wakers): each wait's own stack alone */
	bool carrier_frames;      /* keep virtual threads' carriers' frames (--carrier-frames) */
	bool virtual_thread_ids;  /* keep the virtual thread's id in its marker (--threads) */
	bool time_range;          /* keep only ticks [from_tick, to_tick) */
	uint64_t from_tick, to_tick;
};

struct view_stats {
	uint64_t stacks_dropped;  /* stacks the state and pattern filters left out */
	uint64_t count_dropped;   /* their counts */
	uint64_t untimed;         /* with a time range: stacks left out for having no time kept */
	uint64_t count_outside;   /* with a time range: the counts that fell outside it */
};

/*
 * Adds the view of every stack of from to to (a new profile, limits as
 * wanted). Returns 0, or a negative errno from profile__add (-ENOSPC when
 * to is full: the stacks added so far stay). stats may be NULL.
 */
int view__apply(const struct profile *from, const struct view_config *config, struct profile *to,
		struct view_stats *stats);

#endif /* JBPF_VIEW_H */
