/*
 * walked: JVMs whose Java frames BPF walks (bpf/hotspot.bpf.h), with
 * nothing loaded into them.
 *
 * For each such JVM it keeps what hotspot/ read of it: the layout handed
 * to BPF, and the naming of its frames from its memory. A sample of one
 * of its threads becomes one stack, root first, in the order the walk
 * found the frames: native frames (named by the symbolizer) and Java
 * frames (named by hotspot/names.c, a compiled frame expanded into its
 * inlined methods) interleaved as they call each other, so Java -> JNI
 * -> Java -> JNI stacks read whole; then the kernel frames. A walk that
 * stopped early ends in a frame naming why ("[unknown Java: ...]").
 * A virtual thread's frames are parted from its carrier's by a marker
 * frame (WALKED_VIRTUAL), which says when the walk left the virtual
 * thread's outer frames frozen in the heap (WALKED_VIRTUAL_FROZEN).
 *
 * Statistics for the summary: samples with Java frames, how many were
 * walked to the stack's root, how many ended early and why, and frames
 * that could not be named and why.
 */
#ifndef JBPF_WALKED_H
#define JBPF_WALKED_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/hotspot.h"
#include "bpf/jbpfprof.h"
#include "hotspot/names.h"
#include "user/record/aggregator.h"

struct walked;

/*
 * The frame between a carrier's frames and the virtual thread's it runs
 * (FRAME_KIND_CARRIER): "[virtual thread #ID NAME]" with the thread's id
 * and name when the walk read them (and the stacks keep their threads
 * apart), and ", outer frames frozen" before the bracket when
 * its outer frames could not be walked in the heap (a stack chunk).
 */
#define WALKED_VIRTUAL "[virtual thread"
#define WALKED_VIRTUAL_FROZEN ", outer frames frozen"
/* The most of a virtual thread's name its marker carries. */
#define WALKED_VIRTUAL_NAME 16

/*
 * The name a virtual thread's marker f carries (its first
 * WALKED_VIRTUAL_NAME bytes) into out, NUL-terminated, each byte outside
 * letters, digits and "._-:/@+=#" made '?' (the name is the target's:
 * no separator, bracket or control byte goes into a frame). Whether it
 * has one.
 */
bool walked__virtual_name(const struct jbpf_java_frame *f, char out[WALKED_VIRTUAL_NAME + 1]);

/* agg stays the caller's; native frames are named through it. NULL when out of memory. */
struct walked *walked__new(struct aggregator *agg);
void walked__free(struct walked *w);

/* What walked__add_jvm found. */
enum walked_result {
	WALKED_OK = 1,         /* a JVM whose frames BPF walks: *jvm is its map entry */
	WALKED_NOT_JVM = 0,    /* no libjvm.so in its maps */
	WALKED_NOT_UNDERSTOOD = -1, /* a JVM whose layout is not understood: err says what */
	WALKED_STARTING = -2,  /* a JVM still starting: err says what is not set yet; try later */
};

/*
 * Process tgid (started at start_ticks, JBPF_CLOCK_TICK_NS) read: its
 * libjvm's tables, the walker's layout (kept), the naming. proc_root:
 * "/proc" or a test's.
 */
enum walked_result walked__add_jvm(struct walked *w, const char *proc_root, uint32_t tgid, uint64_t start_ticks,
				   char *err, size_t err_size);

struct sampler;

/*
 * JVM tgid's layout handed to the BPF walker: 0, or a negative errno (the
 * map full, say) after which the JVM is forgotten here too.
 */
int walked__hand_over(struct walked *w, struct sampler *sampler, uint32_t tgid);

/*
 * Hands every JVM's layout to the BPF walker (walked__hand_over) and has
 * its unwind tables read: 0, or -1 after naming on stderr each JVM it did
 * not take.
 */
int walked__install(struct walked *w, struct sampler *sampler);

/* The summary's part: "Java frames walked by BPF: N samples of JVM threads, ..."; "" with none. */
void walked__describe(const struct walked *w, char *buf, size_t size);
/* -v: what naming the walked frames took (frames remembered, reads of the JVMs' memory). */
void walked__describe_naming(const struct walked *w, char *buf, size_t size);

/*
 * The name the JVM tgid gives its thread tid (user/java/thread_names.h),
 * or NULL: the kernel's name then. Names are read only where stacks begin
 * with their threads (aggregator__has_thread_roots). NULL-safe.
 */
const char *walked__thread_name(const struct walked *w, uint32_t tgid, uint32_t tid);

/* Whether tgid's samples come here. */
bool walked__has(const struct walked *w, uint32_t tgid);
size_t walked__nr_jvms(const struct walked *w);

/*
 * -e lock: each JVM's Java threads (hotspot/threads.h) handed to the
 * sampler with the JVM (walked__hand_over), so that BPF can read the
 * monitor each wait is for, and read again by walked__tick every second
 * (threads start and end). Before the JVMs are handed over.
 */
void walked__follow_threads(struct walked *w);
/* The periodic work: the thread lists read again when due. NULL-safe. */
void walked__tick(struct walked *w, uint64_t now_ns);

/* Process tgid exited or ran another program: what was read of it goes. */
void walked__forget(struct walked *w, uint32_t tgid);

/* The profile was handed over (--continuous): frame ids kept for it are forgotten. */
void walked__forget_frame_ids(struct walked *w);

/* One sample of a followed JVM, decoded and checked (its Java frames too). */
void walked__sample(struct walked *w, const struct jbpf_sample *sample);

/* A Java frame of a walk, named (walked__methods). */
struct walked_method {
	char name[256];      /* "package.Class.method" */
	int32_t bci;         /* -1 when none */
	uint8_t kind;        /* enum hotspot_frame_kind */
};

/*
 * The Java methods of sample, innermost first (stubs left out), at most
 * max into out: how many. *stop: the reason the walk ended early, or 0.
 * For comparing with the agent's stacks (oracle.h).
 */
int walked__methods(struct walked *w, const struct jbpf_sample *s, struct walked_method *out, int max,
		    unsigned *stop);

/* A logical frame's name as every Java frame is named: "package.Class.method". */
void walked__frame_name(const struct hotspot_frame *f, char *out, size_t size);

/* The summary's words for a stop reason ("a pc in no code blob"). */
const char *walked__stop_reason(unsigned reason);

#endif /* JBPF_WALKED_H */
