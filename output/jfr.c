/*
 * jfr: the profile as a JDK Flight Recorder file, the format JDK Mission
 * Control, IntelliJ's profiler and the JDK's own `jfr` tool read.
 *
 * Chunks (format 2.0, integers compressed) of at most CHUNK_EVENTS
 * events each, every one whole (its own metadata and constant pools) and
 * written before the next is made, so a file is never all in memory:
 *
 *   header       magic, version, the offsets of the metadata and the
 *                constant pools, the recording's start and duration, and
 *                one tick per nanosecond
 *   events       the first chunk's begin with the recording's settings
 *                for the samples (jdk.ActiveSetting: enabled, period,
 *                stackTrace), as the JDK's recordings have theirs;
 *                then jdk.ExecutionSample (startTime, sampledThread,
 *                stackTrace, state), one per sample: a CPU stack counted n
 *                times is n events; a wall-clock or off-CPU stack, whose
 *                count is microseconds, one event per sampling period of
 *                them (rounded, at least one; 10 ms when the recording
 *                does not say its rate). Each event's startTime is when
 *                it happened, to the timeline's tick (profile/timeline.h):
 *                a stack's events are shared among its spans as its
 *                count is, and spread evenly over each span's ticks. A
 *                profile with no time kept (a pprof file of another
 *                tool) has its events spread evenly over the recording,
 *                stack after stack.
 *   metadata     the classes the file uses, declared as the JDK declares
 *                them (field names and types), with @Timestamp on
 *                startTime
 *   constant pools   threads (name, os thread id; Java thread id -1, not
 *                known), stack traces (leaf first), methods, classes,
 *                packages, symbols, frame types and thread states
 *
 * Every code frame is a method: a Java frame "pkg.Class.method" splits at
 * its last dot into class and method; a native, kernel or JIT frame is a
 * method of a class with an empty name. Frame types: Interpreted, JIT
 * compiled, Inlined, Java (how it ran not known), Native, Kernel. The
 * thread state is STATE_RUNNABLE for CPU samples and running or runnable
 * time, STATE_SLEEPING for sleeping time and STATE_BLOCKED for blocked
 * time. A stack without a thread frame belongs to a thread named after its
 * process, or "[unknown]". Memory: proportional to the profile and to one
 * chunk's events.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "common/thread_state.h"
#include "emit.h"
#include "jfr_buf.h"
#include "profile/timeline.h"

/* ---- types ------------------------------------------------------------------ */

enum type_id {
	T_LONG = 20,
	T_INT,
	T_BOOLEAN,
	T_STRING,
	T_THREAD = 30,
	T_CLASS,
	T_METHOD,
	T_SYMBOL,
	T_PACKAGE,
	T_STACK_TRACE,
	T_STACK_FRAME,
	T_FRAME_TYPE,
	T_THREAD_STATE,
	T_TIMESTAMP = 40,
	T_EXECUTION_SAMPLE = 50,
	T_ACTIVE_SETTING,
};

struct field {
	const char *name;
	enum type_id type;
	bool pooled;      /* a reference into the type's constant pool */
	bool array;
	const char *timestamp; /* @Timestamp's value, or NULL */
};

struct type {
	enum type_id id;
	const char *name;
	const char *super;
	struct field fields[6];
	/*
	 * A type of one field that readers take as that field's value (the
	 * JDK's Symbol, FrameType, ThreadState: a method's name is a string).
	 */
	bool simple;
};

/* A field of a type: inline, a constant pool reference, an array, a @Timestamp("TICKS"). */
#define INLINE(n, t) { .name = n, .type = t }
#define POOLED(n, t) { .name = n, .type = t, .pooled = true }
#define ARRAY(n, t) { .name = n, .type = t, .array = true }
#define TICKS(n, t) { .name = n, .type = t, .timestamp = "TICKS" }

static const struct type types[] = {
	{ .id = T_LONG, .name = "long" },
	{ .id = T_INT, .name = "int" },
	{ .id = T_BOOLEAN, .name = "boolean" },
	{ .id = T_STRING, .name = "java.lang.String" },
	{ .id = T_THREAD, .name = "java.lang.Thread",
	  .fields = { INLINE("osName", T_STRING), INLINE("osThreadId", T_LONG), INLINE("javaName", T_STRING),
	    INLINE("javaThreadId", T_LONG) } },
	{ .id = T_CLASS, .name = "java.lang.Class",
	  .fields = { POOLED("name", T_SYMBOL), POOLED("package", T_PACKAGE), INLINE("modifiers", T_INT),
	    INLINE("hidden", T_BOOLEAN) } },
	{ .id = T_METHOD, .name = "jdk.types.Method",
	  .fields = { POOLED("type", T_CLASS), POOLED("name", T_SYMBOL), POOLED("descriptor", T_SYMBOL),
	    INLINE("modifiers", T_INT), INLINE("hidden", T_BOOLEAN) } },
	{ .id = T_SYMBOL, .name = "jdk.types.Symbol",
	  .fields = { INLINE("string", T_STRING) }, .simple = true },
	{ .id = T_PACKAGE, .name = "jdk.types.Package",
	  .fields = { POOLED("name", T_SYMBOL) } },
	{ .id = T_STACK_TRACE, .name = "jdk.types.StackTrace",
	  .fields = { INLINE("truncated", T_BOOLEAN), ARRAY("frames", T_STACK_FRAME) } },
	{ .id = T_STACK_FRAME, .name = "jdk.types.StackFrame",
	  .fields = { POOLED("method", T_METHOD), INLINE("lineNumber", T_INT), INLINE("bytecodeIndex", T_INT),
	    POOLED("type", T_FRAME_TYPE) } },
	{ .id = T_FRAME_TYPE, .name = "jdk.types.FrameType",
	  .fields = { INLINE("description", T_STRING) }, .simple = true },
	{ .id = T_THREAD_STATE, .name = "jdk.types.ThreadState",
	  .fields = { INLINE("name", T_STRING) }, .simple = true },
	{ .id = T_TIMESTAMP, .name = "jdk.jfr.Timestamp", .super = "java.lang.annotation.Annotation",
	  .fields = { INLINE("value", T_STRING) } },
	{ .id = T_EXECUTION_SAMPLE, .name = "jdk.ExecutionSample", .super = "jdk.jfr.Event",
	  .fields = { TICKS("startTime", T_LONG), POOLED("sampledThread", T_THREAD), POOLED("stackTrace", T_STACK_TRACE),
	    POOLED("state", T_THREAD_STATE) } },
	{ .id = T_ACTIVE_SETTING, .name = "jdk.ActiveSetting", .super = "jdk.jfr.Event",
	  .fields = { TICKS("startTime", T_LONG), INLINE("duration", T_LONG), POOLED("eventThread", T_THREAD),
	    INLINE("id", T_LONG), INLINE("name", T_STRING), INLINE("value", T_STRING) } },
};


/* Frame types, by their constant pool keys (1 + index). */
enum frame_type { FT_INTERPRETED = 1, FT_COMPILED, FT_INLINED, FT_JAVA, FT_NATIVE, FT_KERNEL, FT_NR };
static const char *const frame_type_names[FT_NR] = {
	[FT_INTERPRETED] = "Interpreted", [FT_COMPILED] = "JIT compiled", [FT_INLINED] = "Inlined",
	[FT_JAVA] = "Java", [FT_NATIVE] = "Native", [FT_KERNEL] = "Kernel",
};

/* Thread states, by their constant pool keys. */
enum thread_state { TS_RUNNABLE = 1, TS_SLEEPING, TS_BLOCKED, TS_NR };
static const char *const thread_state_names[TS_NR] = {
	[TS_RUNNABLE] = "STATE_RUNNABLE", [TS_SLEEPING] = "STATE_SLEEPING", [TS_BLOCKED] = "STATE_BLOCKED",
};

/* ---- the metadata --------------------------------------------------------------- */

/* The metadata's strings, numbered in the order first used (a profile's frame ids). */
static int64_t meta_string(struct profile *strings, const char *s)
{
	return profile__intern(strings, s, FRAME_KIND_NATIVE);
}

struct element {
	const char *name;
	const char *attrs[10]; /* key, value pairs, NULL-terminated */
};

/* An element with its attributes and child_count children still to come. */
static void put_element(struct jfr_buf *b, struct profile *strings, const struct element *e, size_t child_count)
{
	size_t nr = 0;

	while (nr < 5 && e->attrs[2 * nr])
		nr++;
	jfr_buf__varint(b, (uint64_t)meta_string(strings, e->name));
	jfr_buf__varint(b, nr);
	for (size_t i = 0; i < nr; i++) {
		jfr_buf__varint(b, (uint64_t)meta_string(strings, e->attrs[2 * i]));
		jfr_buf__varint(b, (uint64_t)meta_string(strings, e->attrs[2 * i + 1]));
	}
	jfr_buf__varint(b, child_count);
}

/* The metadata event: its strings, then the element tree (root: metadata, region). */
static void put_metadata(struct jfr_buf *out, int64_t start_ns)
{
	struct profile *strings = profile__new(NULL);
	struct jfr_buf tree = { 0 }, body = { 0 };
	char ids[sizeof(types) / sizeof(types[0])][16], timestamp_id[16];

	if (!strings) {
		out->failed = true;
		return;
	}
	snprintf(timestamp_id, sizeof(timestamp_id), "%d", T_TIMESTAMP);
	put_element(&tree, strings, &(struct element){ .name = "root" }, 2);
	put_element(&tree, strings, &(struct element){ .name = "metadata" }, sizeof(types) / sizeof(types[0]));
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		const struct type *t = &types[i];
		size_t nr_fields = 0;

		while (nr_fields < sizeof(t->fields) / sizeof(t->fields[0]) && t->fields[nr_fields].name)
			nr_fields++;
		snprintf(ids[i], sizeof(ids[i]), "%d", t->id);
		put_element(&tree, strings,
			    &(struct element){ .name = "class",
					       .attrs = { "name", t->name, "id", ids[i],
							  t->simple ? "simpleType" : t->super ? "superType" : NULL,
							  t->simple ? "true" : t->super } },
			    nr_fields);
		for (size_t f = 0; f < nr_fields; f++) {
			const struct field *fd = &t->fields[f];
			char type_id[16];
			struct element e = { .name = "field", .attrs = { "name", fd->name, "class", type_id } };
			size_t a = 4;

			snprintf(type_id, sizeof(type_id), "%d", fd->type);
			if (fd->pooled) {
				e.attrs[a++] = "constantPool";
				e.attrs[a++] = "true";
			}
			if (fd->array) {
				e.attrs[a++] = "dimension";
				e.attrs[a++] = "1";
			}
			put_element(&tree, strings, &e, fd->timestamp ? 1 : 0);
			if (fd->timestamp)
				put_element(&tree, strings,
					    &(struct element){ .name = "annotation",
							       .attrs = { "class", timestamp_id, "value", fd->timestamp } },
					    0);
		}
	}
	put_element(&tree, strings, &(struct element){ .name = "region", .attrs = { "locale", "en_US", "gmtOffset", "0" } },
		    0);

	jfr_buf__varint(&body, 0);                      /* the metadata event's type */
	jfr_buf__varint(&body, (uint64_t)start_ns);     /* start, in ticks: nanoseconds */
	jfr_buf__varint(&body, 0);                      /* duration */
	jfr_buf__varint(&body, 1);                      /* metadata id */
	jfr_buf__varint(&body, profile__frame_count(strings));
	for (size_t i = 0; i < profile__frame_count(strings); i++)
		jfr_buf__string(&body, profile__frame_name(strings, (uint32_t)i));
	jfr_buf__bytes(&body, tree.data, tree.len);
	body.failed |= tree.failed;
	jfr_buf__event(out, &body);
	free(tree.data);
	free(body.data);
	profile__free(strings);
}

/* ---- the samples' pools ------------------------------------------------------- */

struct pools {
	struct profile *symbols, *classes, *packages, *stacks;
	struct profile *methods;    /* "type,name" -> method key: a method's frames (one per line) share it */
	uint32_t *method_of_frame;  /* frame id -> method key, 0 for a frame that is not code */
	uint32_t *class_of_method;  /* method key - 1 -> class key */
	uint32_t *name_of_method;   /* method key - 1 -> symbol key */
	uint8_t *type_of_method;    /* method key - 1 -> frame type */
	uint32_t nr_methods;
	uint32_t *package_of_class; /* class key - 1 -> package key (0: none) */
	uint32_t *stack_of;         /* profile stack -> stack trace key */
	uint32_t *thread_of;        /* profile stack -> thread key */
	uint8_t *state_of;          /* profile stack -> thread state key */
	struct jfr_buf stack_bodies;    /* each stack trace's frames, as its pool entry holds them */
	size_t *stack_offsets;      /* stack trace key - 1 -> offset in stack_bodies; one more at the end */
	uint32_t nr_threads;
	uint32_t *thread_frame;     /* thread key - 1 -> its profile frame (thread or process), UINT32_MAX none */
};

/* The key (1 + index) of s in table, adding it if new; 0 out of memory. */
static uint32_t key_of(struct profile *table, const char *s)
{
	int64_t id = profile__intern(table, s, FRAME_KIND_NATIVE);

	return id < 0 || id >= UINT32_MAX - 1 ? 0 : (uint32_t)id + 1;
}

static enum frame_type frame_type_of(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KIND_JAVA_INTERP:
		return FT_INTERPRETED;
	case FRAME_KIND_JAVA_COMPILED:
		return FT_COMPILED;
	case FRAME_KIND_JAVA_INLINED:
		return FT_INLINED;
	case FRAME_KIND_JAVA:
		return FT_JAVA;
	case FRAME_KIND_KERNEL:
		return FT_KERNEL;
	default:
		return FT_NATIVE;
	}
}

static bool is_java(enum frame_kind kind)
{
	return kind == FRAME_KIND_JAVA || kind == FRAME_KIND_JAVA_INTERP || kind == FRAME_KIND_JAVA_COMPILED ||
	       kind == FRAME_KIND_JAVA_INLINED;
}

/*
 * One method per code frame's name and type: its class (a Java frame's,
 * else the empty one), name and type. A Java method's frames kept per
 * line are one method, each frame its own line and bytecode index.
 */
static int add_methods(struct pools *p, const struct profile *profile)
{
	size_t nr = profile__frame_count(profile);

	p->method_of_frame = calloc(nr ? nr : 1, sizeof(*p->method_of_frame));
	p->class_of_method = calloc(nr ? nr : 1, sizeof(*p->class_of_method));
	p->name_of_method = calloc(nr ? nr : 1, sizeof(*p->name_of_method));
	p->type_of_method = calloc(nr ? nr : 1, sizeof(*p->type_of_method));
	p->package_of_class = calloc(nr + 1, sizeof(*p->package_of_class));
	if (!p->method_of_frame || !p->class_of_method || !p->name_of_method || !p->type_of_method ||
	    !p->package_of_class)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		enum frame_kind kind = profile__frame_kind(profile, i);
		char *name = output__kind_mapping(kind) ? output__plain_name(profile__frame_name(profile, i), kind) : NULL;
		char *dot = name && is_java(kind) ? strrchr(name, '.') : NULL, *pkg_dot, *typed;
		uint32_t class_key, method = p->nr_methods, key;

		if (!output__kind_mapping(kind))
			continue;
		if (!name || asprintf(&typed, "%d,%s", (int)frame_type_of(kind), name) < 0) {
			free(name);
			return -ENOMEM;
		}
		key = key_of(p->methods, typed);
		free(typed);
		if (!key) {
			free(name);
			return -ENOMEM;
		}
		/* Keys are dense in the order added: one not new is a method already written. */
		if (key <= p->nr_methods) {
			p->method_of_frame[i] = key;
			free(name);
			continue;
		}
		if (dot)
			*dot = '\0';
		class_key = key_of(p->classes, dot ? name : "");
		p->name_of_method[method] = key_of(p->symbols, dot ? dot + 1 : name);
		if (!class_key || !p->name_of_method[method]) {
			free(name);
			return -ENOMEM;
		}
		if (!p->package_of_class[class_key - 1] && dot && (pkg_dot = strrchr(name, '.'))) {
			*pkg_dot = '\0';
			p->package_of_class[class_key - 1] = key_of(p->packages, name);
		}
		free(name);
		p->class_of_method[method] = class_key;
		p->type_of_method[method] = (uint8_t)frame_type_of(kind);
		p->method_of_frame[i] = ++p->nr_methods;
	}
	return 0;
}

/* Each profile stack's stack trace (its code frames, leaf first, deduplicated), thread and state. */
static int add_stacks(struct pools *p, const struct profile *profile)
{
	size_t nr = profile__stack_count(profile), nr_frames = profile__frame_count(profile);
	int64_t *thread_key = calloc(nr_frames ? nr_frames : 1, sizeof(*thread_key));
	uint32_t unknown_thread = 0;

	p->stack_of = calloc(nr ? nr : 1, sizeof(*p->stack_of));
	p->thread_of = calloc(nr ? nr : 1, sizeof(*p->thread_of));
	p->state_of = calloc(nr ? nr : 1, sizeof(*p->state_of));
	p->stack_offsets = calloc(nr + 2, sizeof(*p->stack_offsets));
	p->thread_frame = calloc(nr + 1, sizeof(*p->thread_frame));
	if (!thread_key || !p->stack_of || !p->thread_of || !p->state_of || !p->stack_offsets || !p->thread_frame) {
		free(thread_key);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		size_t depth, n = 0, len = 0;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, i, &depth, &count);
		uint32_t owner = UINT32_MAX, *key_frames = malloc((depth ? depth : 1) * sizeof(*key_frames)), index;
		uint32_t *code_frames = malloc((depth ? depth : 1) * sizeof(*code_frames));
		size_t before;
		char *text = NULL;
		FILE *f;
		int state = -1;

		if (!key_frames || !code_frames) {
			free(key_frames);
			free(code_frames);
			free(thread_key);
			return -ENOMEM;
		}
		for (size_t k = 0; k < depth; k++) {
			enum frame_kind kind = profile__frame_kind(profile, frames[k]);

			if (kind == FRAME_KIND_THREAD || (kind == FRAME_KIND_PROCESS && owner == UINT32_MAX))
				owner = frames[k];
			else if (kind == FRAME_KIND_STATE)
				state = profile__frame_state(profile, frames[k]);
			else if (p->method_of_frame[frames[k]]) {
				code_frames[n] = frames[k];
				key_frames[n++] = p->method_of_frame[frames[k]];
			}
		}
		/* The thread: by its frame (or its process's), one key each; the unknown one shared. */
		if (owner == UINT32_MAX) {
			if (!unknown_thread) {
				unknown_thread = ++p->nr_threads;
				p->thread_frame[unknown_thread - 1] = UINT32_MAX;
			}
			p->thread_of[i] = unknown_thread;
		} else {
			if (!thread_key[owner]) {
				thread_key[owner] = ++p->nr_threads;
				p->thread_frame[thread_key[owner] - 1] = owner;
			}
			p->thread_of[i] = (uint32_t)thread_key[owner];
		}
		p->state_of[i] = state == JBPF_STATE_SLEEPING ? TS_SLEEPING
				 : state == JBPF_STATE_BLOCKED ? TS_BLOCKED
								: TS_RUNNABLE;
		/* The stack trace: its methods leaf first, written out as the key that deduplicates it. */
		f = open_memstream(&text, &len);
		if (!f) {
			free(key_frames);
			free(code_frames);
			free(thread_key);
			return -ENOMEM;
		}
		/* A frame's method and its place in it (frames of one method differ by line and bci). */
		for (size_t k = n; k-- > 0;) {
			struct frame_position pos = profile__frame_position(profile, code_frames[k]);

			fprintf(f, "%u:%d:%d,", key_frames[k], pos.line, pos.bci);
		}
		fclose(f);
		before = profile__frame_count(p->stacks);
		index = text ? key_of(p->stacks, text) : 0;
		free(text);
		if (!index) {
			free(key_frames);
			free(code_frames);
			free(thread_key);
			return -ENOMEM;
		}
		if (profile__frame_count(p->stacks) > before) {
			/* New: its entry's fields, frames leaf first; key k's run from offset k - 1 to offset k. */
			p->stack_offsets[index - 1] = p->stack_bodies.len;
			jfr_buf__u8(&p->stack_bodies, 0); /* truncated: no; a stack cut short says so in a frame */
			jfr_buf__varint(&p->stack_bodies, n);
			for (size_t k = n; k-- > 0;) {
				uint32_t m = key_frames[k];
				struct frame_position pos = profile__frame_position(profile, code_frames[k]);

				jfr_buf__varint(&p->stack_bodies, m);
				/* -1 where the profile did not keep them (native frames, a profile without lines) */
				jfr_buf__varint(&p->stack_bodies, (uint64_t)(int64_t)(pos.line > 0 ? pos.line : -1));
				jfr_buf__varint(&p->stack_bodies, (uint64_t)(int64_t)pos.bci);
				jfr_buf__varint(&p->stack_bodies, p->type_of_method[m - 1]);
			}
			p->stack_offsets[index] = p->stack_bodies.len;
		}
		p->stack_of[i] = index;
		free(key_frames);
		free(code_frames);
	}
	free(thread_key);
	return p->stack_bodies.failed ? -ENOMEM : 0;
}

/* ---- the constant pools --------------------------------------------------------- */

/*
 * One pool's header: its type and how many entries follow. An empty pool
 * is not written at all (the JDK's reader refuses one: "Pool
 * jdk.types.Package must contain at least one element", as a profile of
 * classes in the default package alone had): the checkpoint counts only
 * the others.
 */
static void pool_begin(struct jfr_buf *b, enum type_id type, size_t count)
{
	if (!count)
		return;
	jfr_buf__varint(b, type);
	jfr_buf__varint(b, count);
}

/* The name a thread is known by: its thread frame's, else its process's, else "[unknown]". */
static const char *thread_name(const struct profile *profile, uint32_t frame)
{
	const char *name = frame == UINT32_MAX ? NULL : profile__root_name(profile, frame);

	return name ? name : "[unknown]";
}

/* Writes a table's entries: key, then the string (symbols: its text; packages: the symbol of their name). */
static void put_checkpoint(struct jfr_buf *out, const struct pools *p, const struct profile *profile, int64_t start_ns)
{
	struct jfr_buf body = { 0 };
	size_t nr_symbols = profile__frame_count(p->symbols), nr_classes = profile__frame_count(p->classes);
	size_t nr_packages = profile__frame_count(p->packages), nr_stacks = profile__frame_count(p->stacks);
	uint32_t package_symbol_base = (uint32_t)nr_symbols;

	jfr_buf__varint(&body, 1);                  /* the checkpoint event's type */
	jfr_buf__varint(&body, (uint64_t)start_ns); /* start */
	jfr_buf__varint(&body, 0);                  /* duration */
	jfr_buf__varint(&body, 0);                  /* delta to the previous checkpoint: none */
	jfr_buf__u8(&body, 0);                      /* type mask */
	/*
	 * Only the pools with entries: the JDK's reader refuses a pool of none
	 * ("Pool jdk.types.Package must contain at least one element"), which a
	 * recording of native code alone (no package) or of nothing would be.
	 * A reference to an absent pool's type is 0, null, which needs no pool.
	 */
	jfr_buf__varint(&body, (nr_symbols + nr_classes + nr_packages > 0) + (nr_packages > 0) + (nr_classes > 0) +
				  (p->nr_methods > 0) + (nr_stacks > 0) + (p->nr_threads > 0) + 2);

	/* Symbols: the methods' and classes' names, then the packages' names after them. */
	if (nr_symbols + nr_classes + nr_packages)
		pool_begin(&body, T_SYMBOL, nr_symbols + nr_classes + nr_packages);
	for (size_t i = 0; i < nr_symbols; i++) {
		jfr_buf__varint(&body, i + 1);
		jfr_buf__string(&body, profile__frame_name(p->symbols, (uint32_t)i));
	}
	for (size_t i = 0; i < nr_classes; i++) {
		jfr_buf__varint(&body, nr_symbols + nr_packages + i + 1);
		jfr_buf__string(&body, profile__frame_name(p->classes, (uint32_t)i));
	}
	for (size_t i = 0; i < nr_packages; i++) {
		jfr_buf__varint(&body, package_symbol_base + i + 1);
		jfr_buf__string(&body, profile__frame_name(p->packages, (uint32_t)i));
	}
	if (nr_packages)
		pool_begin(&body, T_PACKAGE, nr_packages);
	for (size_t i = 0; i < nr_packages; i++) {
		jfr_buf__varint(&body, i + 1);
		jfr_buf__varint(&body, package_symbol_base + i + 1);
	}
	if (nr_classes)
		pool_begin(&body, T_CLASS, nr_classes);
	for (size_t i = 0; i < nr_classes; i++) {
		jfr_buf__varint(&body, i + 1);
		jfr_buf__varint(&body, nr_symbols + nr_packages + i + 1); /* name */
		jfr_buf__varint(&body, p->package_of_class[i]);          /* package, 0: none */
		jfr_buf__varint(&body, 1);                                /* modifiers: public */
		jfr_buf__u8(&body, 0);                                    /* hidden */
	}
	if (p->nr_methods)
		pool_begin(&body, T_METHOD, p->nr_methods);
	for (uint32_t m = 0; m < p->nr_methods; m++) {
		jfr_buf__varint(&body, m + 1);
		jfr_buf__varint(&body, p->class_of_method[m]);
		jfr_buf__varint(&body, p->name_of_method[m]);
		jfr_buf__varint(&body, 1); /* descriptor: "()", signatures not kept */
		jfr_buf__varint(&body, 1); /* modifiers: public */
		jfr_buf__u8(&body, 0);     /* hidden */
	}
	if (nr_stacks)
		pool_begin(&body, T_STACK_TRACE, nr_stacks);
	for (size_t k = 1; k <= nr_stacks; k++) {
		jfr_buf__varint(&body, k);
		jfr_buf__bytes(&body, p->stack_bodies.data + p->stack_offsets[k - 1], p->stack_offsets[k] - p->stack_offsets[k - 1]);
	}
	if (p->nr_threads)
		pool_begin(&body, T_THREAD, p->nr_threads);
	for (uint32_t t = 0; t < p->nr_threads; t++) {
		uint32_t frame = p->thread_frame[t];
		int64_t tid = frame == UINT32_MAX ? -1 : profile__root_id(profile, frame);

		jfr_buf__varint(&body, t + 1);
		jfr_buf__string(&body, thread_name(profile, frame));
		jfr_buf__varint(&body, (uint64_t)tid);
		jfr_buf__string(&body, thread_name(profile, frame));
		jfr_buf__varint(&body, (uint64_t)(int64_t)-1); /* the Java thread id: not known */
	}
	pool_begin(&body, T_FRAME_TYPE, FT_NR - 1);
	for (int t = 1; t < FT_NR; t++) {
		jfr_buf__varint(&body, (uint64_t)t);
		jfr_buf__string(&body, frame_type_names[t]);
	}
	pool_begin(&body, T_THREAD_STATE, TS_NR - 1);
	for (int t = 1; t < TS_NR; t++) {
		jfr_buf__varint(&body, (uint64_t)t);
		jfr_buf__string(&body, thread_state_names[t]);
	}
	jfr_buf__event(out, &body);
	free(body.data);
}

/* ---- events and the chunks --------------------------------------------------------- */

/* Events of one chunk at most: a chunk, events and pools, is built in memory before it is written. */
#define CHUNK_EVENTS (1u << 20)

/* How many events a stack's count makes: samples, or its microseconds in sampling periods. */
static uint64_t events_of(uint64_t count, bool time_weights, uint64_t period_us)
{
	uint64_t n;

	if (!time_weights || !period_us)
		return count;
	n = (count + period_us / 2) / period_us;
	return n ? n : 1;
}

/* How many events each stack makes (events_of), and in all. NULL out of memory. */
static uint64_t *events_per_stack(const struct profile *profile, bool time_weights, uint64_t period_us,
				  uint64_t *total)
{
	size_t nr = profile__stack_count(profile);
	uint64_t *n = calloc(nr ? nr : 1, sizeof(*n));

	*total = 0;
	for (size_t s = 0; n && s < nr; s++) {
		size_t depth;
		uint64_t count;

		profile__stack(profile, s, &depth, &count);
		n[s] = count ? events_of(count, time_weights, period_us) : 0;
		*total += n[s];
	}
	return n;
}

/* The recording's settings for the samples: jdk.ActiveSetting events, as the JDK writes its own. */
static void put_settings(struct jfr_buf *out, int64_t start_ns, uint64_t period_us)
{
	char period[32];
	const char *const settings[][2] = { { "enabled", "true" }, { "period", period }, { "stackTrace", "true" } };
	struct jfr_buf body = { 0 };

	snprintf(period, sizeof(period), "%" PRIu64 " us", period_us);
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		body.len = 0;
		jfr_buf__varint(&body, T_ACTIVE_SETTING);
		jfr_buf__varint(&body, (uint64_t)start_ns);
		jfr_buf__varint(&body, 0);                  /* duration */
		jfr_buf__varint(&body, 0);                  /* eventThread: none */
		jfr_buf__varint(&body, T_EXECUTION_SAMPLE); /* the event type set */
		jfr_buf__string(&body, settings[i][0]);
		jfr_buf__string(&body, settings[i][1]);
		jfr_buf__event(out, &body);
	}
	free(body.data);
}

/* One sample event of stack s at time (ns since the epoch). */
static void put_sample(struct jfr_buf *out, struct jfr_buf *body, const struct pools *p, size_t s, uint64_t time)
{
	body->len = 0;
	jfr_buf__varint(body, T_EXECUTION_SAMPLE);
	jfr_buf__varint(body, time);
	jfr_buf__varint(body, p->thread_of[s]);
	jfr_buf__varint(body, p->stack_of[s]);
	jfr_buf__varint(body, p->state_of[s]);
	jfr_buf__event(out, body);
}

/*
 * The events numbered [from, to) of the recording's total. With a
 * timeline, span after span: each its part of its stack's events
 * (timeline__span_share), spread evenly over the span's ticks; then the
 * stacks with no time kept. Without one, stack after stack, event i at
 * start + duration * i / total.
 */
static void put_samples(struct jfr_buf *out, const struct pools *p, const struct profile *profile,
			const uint64_t *per_stack, uint64_t total, uint64_t from, uint64_t to, int64_t start_ns,
			uint64_t duration_ns)
{
	const struct timeline *tl = profile__timeline(profile);
	size_t nr_stacks = profile__stack_count(profile);
	uint64_t *weights = tl ? timeline__stack_weights(tl, nr_stacks) : NULL;
	uint64_t *carries = tl ? calloc(nr_stacks + 1, sizeof(*carries)) : NULL;
	struct jfr_buf body = { 0 };
	uint64_t i = 0;

	if (tl && (!weights || !carries)) {
		out->failed = true;
		goto out;
	}
	for (size_t k = 0; tl && k < timeline__count(tl) && i < to; k++) {
		const struct timeline_span *sp = &timeline__spans(tl)[k];
		uint64_t n, span_ns;

		if (sp->stack >= nr_stacks)
			continue;
		n = timeline__span_share(sp, per_stack[sp->stack], weights[sp->stack], &carries[sp->stack]);
		span_ns = ((uint64_t)sp->last + 1 - sp->first) * TIMELINE_TICK_NS;
		for (uint64_t e = 0; e < n && i < to; e++, i++)
			if (i >= from)
				put_sample(out, &body, p, sp->stack,
					   (uint64_t)start_ns + sp->first * TIMELINE_TICK_NS + span_ns * (2 * e + 1) / (2 * n));
	}
	for (size_t s = 0; s < nr_stacks && i < to; s++) {
		uint64_t first = i, last;

		if (weights && weights[s])
			continue;
		last = i + per_stack[s];
		i = last;
		for (uint64_t e = first > from ? first : from; e < last && e < to; e++)
			put_sample(out, &body, p, s, (uint64_t)start_ns + (total ? duration_ns * e / total : 0));
	}
out:
	free(body.data);
	free(weights);
	free(carries);
}

static void pools_free(struct pools *p)
{
	profile__free(p->symbols);
	profile__free(p->classes);
	profile__free(p->packages);
	profile__free(p->stacks);
	profile__free(p->methods);
	free(p->method_of_frame);
	free(p->class_of_method);
	free(p->name_of_method);
	free(p->type_of_method);
	free(p->package_of_class);
	free(p->stack_of);
	free(p->thread_of);
	free(p->state_of);
	free(p->stack_bodies.data);
	free(p->stack_offsets);
	free(p->thread_frame);
}

int output__jfr_write_chunks(const struct profile *profile, const struct output_meta *meta, uint64_t chunk_events,
			    FILE *out)
{
	const struct profile_limits table_limits = { .max_frames = UINT32_MAX - 2, .max_stacks = 1 };
	const char *event = meta && meta->event ? meta->event : "cpu";
	bool time_weights = strcmp(event, "cpu");
	int64_t start_ns = meta && meta->start_unix_ns > 0 ? meta->start_unix_ns : 0;
	uint64_t duration_ns = meta && meta->duration_s > 0 ? (uint64_t)(meta->duration_s * 1e9) : 0;
	/* A recording that does not say its rate (another tool's pprof) is taken as sampled at 100 Hz. */
	uint64_t period_us = meta && meta->frequency_hz ? 1000000 / meta->frequency_hz : 10000;
	struct pools p = { 0 };
	struct jfr_buf chunk = { 0 };
	size_t metadata_at, pools_at;
	uint64_t *per_stack = NULL, total = 0;
	int err;

	/* Allocations would be jdk.ObjectAllocationSample events, which this writer does not make. */
	if (output__event_allocates(event))
		return -EOPNOTSUPP;

	emit__begin(out);
	p.symbols = profile__new(&table_limits);
	p.classes = profile__new(&table_limits);
	p.packages = profile__new(&table_limits);
	p.stacks = profile__new(&table_limits);
	p.methods = profile__new(&table_limits);
	err = !p.symbols || !p.classes || !p.packages || !p.stacks || !p.methods ? -ENOMEM : 0;
	/*
	 * Symbol 1 is every method's descriptor: "()", the shortest that readers
	 * parse as one (names do not keep signatures).
	 */
	if (!err && !key_of(p.symbols, "()"))
		err = -ENOMEM;
	if (!err)
		err = add_methods(&p, profile);
	if (!err)
		err = add_stacks(&p, profile);
	if (!err && !(per_stack = events_per_stack(profile, time_weights, period_us, &total)))
		err = -ENOMEM;
	/* Chunk after chunk of at most chunk_events events, each with its metadata and pools, written as made. */
	if (!chunk_events)
		chunk_events = 1;
	for (uint64_t from = 0; !err && (from < total || !from); from += chunk_events) {
		uint64_t to = total - from > chunk_events ? from + chunk_events : total;
		int64_t chunk_start = start_ns + (int64_t)(total ? duration_ns * from / total : 0);
		uint64_t chunk_ns = total ? duration_ns * to / total - duration_ns * from / total : duration_ns;
		const struct timeline *tl = profile__timeline(profile);

		/* Events in time order span the whole recording in any chunk: each says so. */
		if (tl) {
			uint64_t end_ns = ((uint64_t)timeline__end(tl) + 1) * TIMELINE_TICK_NS;

			chunk_start = start_ns;
			chunk_ns = end_ns > duration_ns ? end_ns : duration_ns;
		}

		chunk.len = 0;
		jfr_buf__bytes(&chunk, "FLR\0", 4);
		jfr_buf__be(&chunk, 2, 2); /* major */
		jfr_buf__be(&chunk, 0, 2); /* minor */
		/* Chunk size, the pools' and the metadata's offsets, start, duration, start ticks, ticks a second: below. */
		for (int i = 0; i < 7; i++)
			jfr_buf__be(&chunk, 0, 8);
		jfr_buf__be(&chunk, 1, 4); /* features: compressed integers */
		if (!from)
			put_settings(&chunk, start_ns, period_us);
		put_samples(&chunk, &p, profile, per_stack, total, from, to, start_ns, duration_ns);
		metadata_at = chunk.len;
		put_metadata(&chunk, chunk_start);
		pools_at = chunk.len;
		put_checkpoint(&chunk, &p, profile, chunk_start);
		if (chunk.failed) {
			err = -ENOMEM;
		} else {
			struct jfr_buf header = { 0 };

			jfr_buf__be(&header, chunk.len, 8);
			jfr_buf__be(&header, pools_at, 8);
			jfr_buf__be(&header, metadata_at, 8);
			jfr_buf__be(&header, (uint64_t)chunk_start, 8);
			jfr_buf__be(&header, chunk_ns, 8);
			jfr_buf__be(&header, (uint64_t)chunk_start, 8); /* start in ticks */
			jfr_buf__be(&header, 1000000000, 8);            /* ticks per second */
			if (header.failed)
				err = -ENOMEM;
			else
				memcpy(chunk.data + 8, header.data, header.len);
			free(header.data);
		}
		if (!err && fwrite(chunk.data, 1, chunk.len, out) != chunk.len)
			err = -EIO;
		if (!total)
			break;
	}
	free(chunk.data);
	free(per_stack);
	pools_free(&p);
	return err ? err : emit__finish(out);
}

int output__jfr_write(const struct profile *profile, const struct output_meta *meta, FILE *out)
{
	return output__jfr_write_chunks(profile, meta, CHUNK_EVENTS, out);
}
