/*
 * jfr_internal: what the two halves of the JFR reader share (input/jfr_read.c
 * reads the file: its chunks, metadata, constant pools and values;
 * input/jfr_samples.c turns sample events into stacks).
 */
#ifndef JBPF_JFR_INTERNAL_H
#define JBPF_JFR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "input/pprof_read.h"

/* Nesting of metadata elements, and of objects inside objects (a field of a class's own type is refused by
 * it). */
#define MAX_DEPTH 16
/* Frames of one stack trace kept, leaf first; a longer one is cut at its root end. */
#define MAX_FRAMES 4096
/* A string read for a name: longer ones are cut. */
#define MAX_NAME 1024

/* A map from 64-bit keys to 64-bit values (open addressing). */
struct map {
	uint64_t *keys, *values;
	uint8_t *used;
	size_t cap, nr;
};

enum prim { P_OBJECT, P_BOOLEAN, P_BYTE, P_CHAR, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE, P_STRING };

/*
 * The names the reader looks for in the metadata, as words: each string of
 * the metadata's table is compared with them once (jfr_read.c), and the
 * elements, attributes and fields that name it carry its word, so that
 * reading a file of many samples compares numbers, not strings.
 */
enum jfr_word {
	W_OTHER,
	/* elements and attributes */
	W_CLASS, W_FIELD, W_NAME, W_ID, W_CONSTANT_POOL, W_DIMENSION, W_SIMPLE_TYPE,
	/* fields */
	W_METHOD, W_TYPE, W_SAMPLED_THREAD, W_EVENT_THREAD, W_STACK_TRACE, W_STATE,
	W_NR,
};

struct jfield {
	const char *name;
	enum jfr_word word; /* its name's */
	uint64_t type_id;
	size_t type; /* index in classes, resolved after the metadata is read */
	bool pooled, array;
};

struct jclass {
	uint64_t id;
	const char *name;
	bool simple;
	enum prim prim;
	struct jfield *fields;
	size_t nr_fields, cap_fields;
	struct map pool; /* key -> offset of the entry's value in the file */
};

#define NO_CLASS SIZE_MAX

/* A method's frames, by kind: profile frame ids, -1 until named (jfr_samples.c). */
struct method_frames {
	int64_t id[FRAME_KIND_NR]; /* its frame of each kind without a position, -1 until interned */
	char *base;                /* "pkg.Class.method", NULL until read */
	int8_t has_class;          /* its class has a name: -1 until read */
};

struct reader {
	const uint8_t *base;
	size_t len;
	bool compressed;
	char *err;
	size_t err_size;
	struct pprof_recording *rec;
	/* this chunk's */
	size_t chunk_start, chunk_end;
	char **strings;
	uint8_t *words; /* each string's meaning to the metadata's reader (jfr_read.c), found once */
	size_t nr_strings;
	struct jclass *classes;
	size_t nr_classes, cap_classes;
	struct map class_ids; /* a class's id -> its index (the first class of that id) */
	size_t c_string, c_thread, c_stack_trace, c_frame, c_method, c_class, c_frame_type, c_state;
	size_t c_execution, c_native, c_cpu_time, c_lost;
	/* what was read of this chunk, by key: profile frame ids and stacks */
	struct map threads, stacks;
	/* methods named, by key: an index in method_frames (jfr_samples.c) */
	struct map methods;
	struct method_frames *method_frames;
	size_t nr_method_frames, cap_method_frames;
	uint32_t *stack_ids; /* the stacks' frame ids end to end, leaf first */
	size_t nr_stack_ids, cap_stack_ids;
	uint64_t samples, lost;
};

/* A position in the file, within [p, end); bad once a read went past end or met what is not JFR. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

bool jfr_read__map_get(const struct map *m, uint64_t key, uint64_t *value);
/* Sets key to value (a key given twice keeps its last value). 0 or -ENOMEM. */
int jfr_read__map_put(struct map *m, uint64_t key, uint64_t value);

/* An integer: compressed (7 bits a byte, the ninth whole), or big-endian of its size. */
uint64_t jfr_read__get_int(struct cur *c, bool compressed, int bytes);
uint64_t jfr_read__get_long(struct reader *r, struct cur *c);
/* Skips one value of field f (its array, if it is one), or the fields of an object of class cl. */
void jfr_read__skip_value(struct reader *r, struct cur *c, const struct jfield *f, int depth);
void jfr_read__skip_object(struct reader *r, struct cur *c, const struct jclass *cl, int depth);
/* The index of cl's field named name, or -1. */
int jfr_read__field_index(const struct jclass *cl, const char *name);
/* A cursor at the value of key in class cl's pool; bad when there is none. */
struct cur jfr_read__pool_entry(struct reader *r, size_t cl, uint64_t key);
/* A string-like value of field f at c (a String, or a simple class of one), pooled or inline, into out. */
bool jfr_read__text(struct reader *r, struct cur *c, const struct jfield *f, char *out, size_t size, int depth);

/* One sample event of class cl at c, added to the profile: 0, -ENOMEM, -ENOSPC, or -EINVAL when it does not read. */
int jfr_samples__add(struct reader *r, struct cur *c, const struct jclass *cl);

#endif /* JBPF_JFR_INTERNAL_H */
