/*
 * names: the Java frames of a walk named from the JVM's memory.
 *
 * An interpreted frame (Method *, bcp) gives one frame: the method's
 * class, name and signature from its ConstMethod, its ConstantPool's
 * symbols and its holder's name, the bytecode index (bcp minus the
 * bytecodes' start), the line from the compressed line number table and
 * the source file the class names (its pool's SourceFile entry).
 * A compiled frame (nmethod, pc) gives the frames of the scopes at pc,
 * innermost first: the PcDesc for pc, then the scope descriptors (method
 * from the nmethod's metadata, bci) down to the nmethod's own method.
 *
 * Races: the JVM runs on while it is read. A class may be unloaded, its
 * metaspace reused, an nmethod flushed and its space reused. A compiled
 * frame is named only if the nmethod still has the compile id the walker
 * saw; an interpreted one only if the Method still points at the
 * ConstMethod the walker saw and the bcp lies inside its bytecodes. A
 * frame that fails a check is unresolved, with its reason, never named
 * wrongly.
 *
 * Everything read is bounded (symbol lengths, scope chains, table
 * lengths). Names are cached by JVM, address and cookie, in bounded
 * memory; strings returned stay valid until the next call.
 */
#ifndef JBPF_HOTSPOT_NAMES_H
#define JBPF_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/hotspot.h"
#include "hotspot/memory.h"
#include "hotspot/vmstructs.h"

/* Logical frames one compiled frame expands to at most (inlining depth). */
#define HOTSPOT_NAMES_MAX_INLINE 64

/* How a named frame ran. */
enum hotspot_frame_kind {
	HOTSPOT_FRAME_INTERPRETED = 1,
	HOTSPOT_FRAME_C1 = 2,      /* compiled by C1 (tiers 1 to 3) */
	HOTSPOT_FRAME_C2 = 3,      /* compiled by C2 (tier 4) */
	HOTSPOT_FRAME_INLINED = 4, /* inlined into the compiled frame further out */
	HOTSPOT_FRAME_NATIVE = 5,  /* a native method's frame (its wrapper, or the interpreter's) */
	HOTSPOT_FRAME_STUB = 6,    /* a stub of the VM, by the blob's name */
};

/* Why a frame could not be named. */
enum hotspot_unresolved {
	HOTSPOT_UNRESOLVED_READ = 1,     /* its memory could not be read (freed, unmapped) */
	HOTSPOT_UNRESOLVED_MOVED = 2,    /* its cookie no longer matches: unloaded, flushed or reused */
	HOTSPOT_UNRESOLVED_NO_SCOPE = 3, /* a compiled pc with no PcDesc */
	HOTSPOT_UNRESOLVED_INVALID = 4,  /* what was read breaks a bound or makes no sense */
	HOTSPOT_UNRESOLVED_NR = 5,
};

struct hotspot_frame {
	const char *klass;      /* "java.util.HashMap" (dots), or NULL when unresolved */
	const char *method;     /* "put" */
	const char *signature;  /* "(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;" */
	int32_t bci;            /* -1 when none */
	int32_t line;           /* 0 when none */
	const char *file;       /* the class's source file ("HashMap.java"), NULL when it records none */
	uint8_t kind;           /* enum hotspot_frame_kind */
	uint8_t unresolved;     /* enum hotspot_unresolved, 0 when named */
	uint64_t method_ptr;    /* the Method *, for the caller's own keys */
};

struct hotspot_names;

/*
 * What naming needs of one JVM, from its VMStructs: NULL with a one-line
 * reason in err when its layout lacks something. mem is kept (not owned).
 */
struct hotspot_names *hotspot_names__new(const struct hotspot_vm *vm, struct hotspot_memory *mem, char *err,
					size_t err_size);
void hotspot_names__free(struct hotspot_names *names);

/*
 * The logical frames of one walked frame into out (at most max), innermost
 * first: how many (at least 1; an unresolved frame is one frame with
 * `unresolved` set). JBPF_JAVA_STOP frames are not named here.
 */
int hotspot_names__frame(struct hotspot_names *names, const struct jbpf_java_frame *frame, struct hotspot_frame *out,
			int max);

/*
 * The name of the class at klass (a Klass *), as Java writes it
 * ("java.lang.Object"), into out: 0, or an enum hotspot_unresolved. Read
 * each time, not cached.
 */
int hotspot_names__klass(struct hotspot_names *names, uint64_t klass, char *out, size_t size);

/* Frames named and unresolved by reason, since hotspot_names__new. */
struct hotspot_names__stats {
	uint64_t named, cached, unresolved[HOTSPOT_UNRESOLVED_NR];
};
void hotspot_names__stats(const struct hotspot_names *names, struct hotspot_names__stats *out);

/* Entries each of the caches holds at most (methods, nmethods, scope lists). */
#define HOTSPOT_NAMES_MAX_ENTRIES 16384

/*
 * The caches' sizes now and how often they were emptied to stay within
 * their bounds (HOTSPOT_NAMES_MAX_ENTRIES entries each, 16 MiB in all).
 */
struct hotspot_names__cache_stats {
	uint64_t methods, scopes, bytes, clears;
};
void hotspot_names__cache_stats(const struct hotspot_names *names, struct hotspot_names__cache_stats *out);

#endif /* JBPF_HOTSPOT_NAMES_H */
