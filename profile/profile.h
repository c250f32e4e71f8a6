/*
 * profile: the aggregate every output is written from.
 *
 * A profile is a set of distinct stacks, each a sequence of frames read root
 * first, with a count (samples for a CPU profile). Frames are interned: each
 * distinct (name, kind) pair (with a Java frame's position, when it has one)
 * gets a small id, so a stack is an array of ids
 * and comparing stacks is comparing integers.
 *
 * Names are stored as they are printed in the collapsed format, suffix
 * included (kernel frames end in "_[k]"); the kind is kept beside the name
 * so that a writer can colour or group frames without parsing names.
 *
 * Whose a stack is and how it ended are frames too: the process and thread
 * frames at its root, the state frame at its leaf, so that every writer
 * shows them without code of its own. A recording of several events keeps
 * them apart in one profile: each stack begins with its event's frame
 * (profile/view.h takes one event's stacks out, without it). They are made from their parts
 * (profile__intern_process, _thread, _state), which the profile keeps: the
 * pid, the tid, the names alone and the state are read from the frame
 * (profile__root_name, profile__root_id, profile__frame_state), never
 * parsed back from its text.
 *
 * Memory is bounded by the limits given to profile__new; an add past them
 * fails with -ENOSPC and changes nothing, so the caller can count the loss.
 * Not thread-safe: one profile belongs to one thread.
 */
#ifndef JBPF_PROFILE_H
#define JBPF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_KIND_NATIVE,       /* user-space code of an ELF file */
	FRAME_KIND_KERNEL,       /* kernel code, name ends in "_[k]" */
	FRAME_KIND_JIT,          /* code generated at run time: named by a perf map, or a JVM stub */
	FRAME_KIND_JAVA,         /* Java method, how it ran not told (no --annotate) */
	FRAME_KIND_JAVA_INLINED, /* Java method inlined into a compiled one */
	FRAME_KIND_JAVA_INTERP,  /* Java method run by the interpreter */
	FRAME_KIND_JAVA_COMPILED, /* Java method compiled by the JIT */
	FRAME_KIND_THREAD,       /* the root added by --threads: "[name tid=N]" (profile__intern_thread) */
	FRAME_KIND_PROCESS,      /* a process root: "program (name, pid N)" (profile__intern_process_parts) */
	FRAME_KIND_LOST,         /* a placeholder naming why frames are missing */
	FRAME_KIND_STATE,        /* a wall or off-CPU stack's last frame: "[sleeping]" (profile__intern_state) */
	FRAME_KIND_CLASS,        /* an allocation profile's last frame: the class allocated, "byte[]" */
	FRAME_KIND_EVENT,        /* in a recording of several events, each stack's first: its event, "cpu" */
	FRAME_KIND_WAKER,        /* with --wakers, after a wait's state: "[woken by]", then its waker's frames */
	FRAME_KIND_WAKER_THREAD, /* the waker's thread frame, last but its process's: as FRAME_KIND_THREAD's */
	FRAME_KIND_WAKER_PROCESS, /* the waker's process frame, the last of all: as FRAME_KIND_PROCESS's */
	FRAME_KIND_CARRIER,      /* where a virtual thread's frames meet its carrier's: "[virtual thread #ID]" */
	FRAME_KIND_NR,
};

/*
 * "[sleeping]" and the like: the frame that ends a wall-clock or off-CPU
 * stack in that state (enum jbpf_state); "[unknown state]" past them.
 */
const char *profile__state_frame(unsigned state);
/* The state alone, as in "sleeping"; "unknown state" past them. */
const char *profile__state_name(unsigned state);

/* A short lowercase word for a kind ("kernel", "native", ...), never NULL. */
const char *profile__frame_kind_name(enum frame_kind kind);

struct profile;

struct profile_limits {
	size_t max_frames;  /* distinct frames kept, 0 for the default */
	size_t max_stacks;  /* distinct stacks kept, 0 for the default */
	size_t max_depth;   /* frames in one stack; longer ones are cut at the root end */
	size_t max_spans;   /* spans of the timeline kept (profile/timeline.h), 0 for its default */
};

/* An empty profile; NULL when out of memory. limits may be NULL for defaults. */
struct profile *profile__new(const struct profile_limits *limits);
void profile__free(struct profile *profile);

/*
 * The id of the frame (name, kind), adding it if new. name is copied.
 * Returns the id (>= 0), or -ENOSPC past max_frames, -ENOMEM; -EINVAL for
 * the kinds made from parts below.
 */
int64_t profile__intern(struct profile *profile, const char *name, enum frame_kind kind);

/*
 * Where in its method a Java frame was: its source line and bytecode index,
 * and the source file its class names. A frame interned with a position is
 * one per (name, kind, line, bci), its name the method's as without one
 * ("pkg.Class.method", suffix included): the view (profile/view.h) decides
 * whether the line shows in the text, pprof and JFR carry it in fields of
 * their own. The file is kept from the frame's first intern (it is its
 * class's). A line of 0 and a bci of -1 are no position.
 */
struct frame_position {
	int32_t line;     /* 0: none */
	int32_t bci;      /* -1: none */
	const char *file; /* NULL or "": none */
};
/* profile__intern with a position (NULL: none); the kinds made from parts are refused as there. */
int64_t profile__intern_at(struct profile *profile, const char *name, enum frame_kind kind,
			   const struct frame_position *pos);
/* A frame's position: line 0, bci -1, file NULL for a frame interned without one. */
struct frame_position profile__frame_position(const struct profile *profile, uint32_t frame);
/* Whether any frame has a position. */
bool profile__has_positions(const struct profile *profile);

/* How many characters of a container's id a process frame shows, as docker ps does. */
#define PROCESS_CONTAINER_SHOWN 12

/* What a process frame is made of. */
struct process_parts {
	const char *name;      /* what the process calls itself (its comm): "java", "python3" */
	const char *program;   /* what it runs, where that says more than name: a JVM's main
				  class or jar, an interpreter's script; NULL or "" for none */
	const char *container; /* the id of the container it runs in; NULL or "" for none */
	int64_t pid;           /* below 0: none */
};

/*
 * The frames made from parts, and their ids as profile__intern's. A pid
 * or tid below 0 means none is known:
 *
 *   process  "program (name, pid N, container C)", each part only when
 *            given (C: the id's first PROCESS_CONTAINER_SHOWN characters),
 *            or without a program "name (pid N, container C)", or "name"
 *   thread   "[name tid=N]", or "[name]" without a tid
 *   state    profile__state_frame(state)
 *
 * A frame is still one per (text, kind): should two sets of parts give the
 * same text (a process named "a (pid 1)" with no pid, and "a" with pid 1),
 * the parts first given are kept. A program equal to the name is none.
 */
int64_t profile__intern_process_parts(struct profile *profile, const struct process_parts *parts);
/* The same as a waker's (FRAME_KIND_WAKER_PROCESS). */
int64_t profile__intern_waker_process_parts(struct profile *profile, const struct process_parts *parts);
/* The same, with a name and a pid only. */
int64_t profile__intern_process(struct profile *profile, const char *name, int64_t pid);
int64_t profile__intern_thread(struct profile *profile, const char *name, int64_t tid);
/* The same as a waker's (FRAME_KIND_WAKER_THREAD). */
int64_t profile__intern_waker_thread(struct profile *profile, const char *name, int64_t tid);
int64_t profile__intern_state(struct profile *profile, unsigned state);

/*
 * Adds count to the stack frames[0..depth), root first. An existing stack's
 * count grows; a new one is stored. Returns 0, -EINVAL for a frame id that
 * was not interned, -ENOSPC past max_stacks, or -ENOMEM.
 */
int profile__add(struct profile *profile, const uint32_t *frames, size_t depth, uint64_t count);
/*
 * The same, and *index is the stack's number (see profile__stack), for
 * profile__add_to. A count of 0 makes the stack exist with nothing in it
 * yet; writers leave out stacks whose count is still 0.
 */
int profile__add_indexed(struct profile *profile, const uint32_t *frames, size_t depth, uint64_t count,
			 uint32_t *index);
/* Adds count to stack index; an index not in the profile is ignored. */
void profile__add_to(struct profile *profile, uint32_t index, uint64_t count);
/*
 * An allocation profile's stacks count bytes and, beside them, the objects
 * those bytes are: profile__add with objects added to the stack's own.
 * profile__has_objects says whether any add gave some.
 */
int profile__add_objects(struct profile *profile, const uint32_t *frames, size_t depth, uint64_t count,
			 uint64_t objects);
bool profile__has_objects(const struct profile *profile);
/* The same, and *index is the stack's number (index may be NULL). */
int profile__add_objects_indexed(struct profile *profile, const uint32_t *frames, size_t depth, uint64_t count,
				 uint64_t objects, uint32_t *index);

/*
 * Time: when each stack was counted, as spans of a timeline
 * (profile/timeline.h) whose tick 0 is the recording's start. The time
 * origin is that start on the clock of the times given to
 * profile__add_time (CLOCK_MONOTONIC, the clock BPF stamps records with);
 * times before it are taken as the start itself. Adding time before an
 * origin is set, or to a stack that does not exist, does nothing.
 * profile__add_span takes ticks, as a file read back gives them.
 * 0, or timeline__add's error.
 */
void profile__set_time_origin(struct profile *profile, uint64_t origin_ns);
int profile__add_time(struct profile *profile, uint32_t index, uint64_t from_ns, uint64_t to_ns, uint64_t weight);
int profile__add_span(struct profile *profile, uint32_t index, uint32_t first, uint32_t last, uint64_t weight);
/* The timeline; NULL while it has no span (a profile with no time kept). */
const struct timeline *profile__timeline(const struct profile *profile);
/* The objects of stack i; 0 for a stack not in the profile. */
uint64_t profile__stack_objects(const struct profile *profile, size_t i);

size_t profile__frame_count(const struct profile *profile);
const char *profile__frame_name(const struct profile *profile, uint32_t frame);
enum frame_kind profile__frame_kind(const struct profile *profile, uint32_t frame);
/* A process or thread frame's name alone ("java", "main"); NULL for any other frame. */
const char *profile__root_name(const struct profile *profile, uint32_t frame);
/* A process frame's parts, or a waker's (the strings the profile's); all NULL and pid -1 for any other frame. */
void profile__process_parts(const struct profile *profile, uint32_t frame, struct process_parts *parts);
/* A process frame's pid, a thread frame's tid; -1 when it has none, or for any other frame. */
int64_t profile__root_id(const struct profile *profile, uint32_t frame);
/* A state frame's enum jbpf_state; -1 for an unknown state, or for any other frame. */
int profile__frame_state(const struct profile *profile, uint32_t frame);

/* Stacks are numbered 0..profile__stack_count()-1 in the order first added. */
size_t profile__stack_count(const struct profile *profile);
/* The frames (root first, valid until the next add) and count of stack i. */
const uint32_t *profile__stack(const struct profile *profile, size_t i, size_t *depth, uint64_t *count);

/* Sum of all stack counts. */
uint64_t profile__total(const struct profile *profile);

/*
 * Modules: the files native frames come from, kept for formats that name
 * them (pprof's mappings). A module is (path, build-id as lowercase hex, ""
 * when unknown), numbered from 1; a frame names at most one (the first
 * given: a function name is interned once, whatever file it was seen in).
 * profile__module returns the number of (path, build_id), adding it if
 * new, or 0 when out of memory or past 65536 modules.
 */
uint32_t profile__module(struct profile *profile, const char *path, const char *build_id);
/* Sets frame's module, once: 0 means none. */
void profile__set_frame_module(struct profile *profile, uint32_t frame, uint32_t module);
uint32_t profile__frame_module(const struct profile *profile, uint32_t frame);
size_t profile__module_count(const struct profile *profile);
/* NULL for a module that does not exist (0 included). */
const char *profile__module_path(const struct profile *profile, uint32_t module);
const char *profile__module_build_id(const struct profile *profile, uint32_t module);

#endif /* JBPF_PROFILE_H */
