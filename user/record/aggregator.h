/*
 * aggregator: turns the sampler's records into stacks in a profile.
 *
 * For each record it resolves the frames through the symbolizer and adds one
 * stack, root first:
 *
 *   [event]         in a recording of several events: what the stack counts
 *                   (config.event_frames)
 *   [process root]  with -a or several -p: the process, grouped as
 *                   process_root says (user/record/process_roots.h)
 *   [thread root]   with --threads: "[<thread name> tid=<tid>]"
 *   user frames     outermost first; return addresses are looked up one byte
 *                   back, so a call that ends its function names the caller
 *   kernel frames   suffixed "_[k]"
 *
 * A stack part that could not be read is replaced by one frame naming the
 * reason, so the sample still counts where it is known to belong. Records
 * come decoded and checked (user/record/decode.h).
 *
 * With time_weights (wall-clock and off-CPU profiles) counts are
 * microseconds and each stack ends in its state's frame ("[sleeping]"). A
 * wait (JBPF_RECORD_WAIT) counts its own length; a CPU sample, or a wait
 * recorded by chance (JBPF_WAIT_SAMPLED), is a share of its thread's exact
 * time in that state, which aggregator__settle spreads at the end (see
 * profile/shares.h).
 *
 * Two more jobs end a stack, each in a file of its own: --wakers joins a
 * wait with the stack of the thread that woke it, kept until the wait
 * comes (user/record/wakers.h); -e lock keeps only stacks that acquire a
 * lock, ended by the lock's class (user/record/lock_class.h), and holds a
 * monitor wait its own timer ended until its releaser is known (below).
 */
#ifndef JBPF_AGGREGATOR_H
#define JBPF_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "symbolizer/symbolizer.h"
#include "profile/profile.h"
#include "profile/view.h"


/*
 * What a stack counts: time (a CPU sample or a wait), a Java heap
 * allocation (user/java/java_alloc.c), a native one (JBPF_RECORD_NATIVE_ALLOC).
 */
enum aggregator_event {
	AGGREGATOR_TIME,
	AGGREGATOR_HEAP,
	AGGREGATOR_NATIVE,
	AGGREGATOR_EVENT_NR,
};

struct aggregator_config {
	enum view_process_root process_root; /* the process frame (user/record/process_roots.h) */
	bool thread_root;
	bool annotate;           /* suffix Java frames _[j] _[i] _[0] by how they ran */
	/*
	 * Java frames walked by BPF keep their source line, bytecode index and
	 * file (profile__intern_at): only when an output or --lines needs them,
	 * as each line of a method is a frame of its own.
	 */
	bool positions;
	bool time_weights;       /* wall-clock or off-CPU profile, see above */
	unsigned state_mask;     /* with time_weights: 1 << state for each state kept */
	bool modules;            /* note each native frame's file and build-id (profile__module) */
	/*
	 * With time_weights, nonzero: a CPU sample or sampled wait weighs this
	 * (the mean sampling period) instead of a share settled at the end,
	 * so the profile can be handed over at any moment (--continuous).
	 */
	uint64_t sample_weight_ns;
	/*
	 * A sampled allocation (JBPF_RECORD_NATIVE_ALLOC) weighs the bytes
	 * and allocations it stands for, sampled one per this many bytes
	 * (common/sampled_bytes.h).
	 */
	uint64_t alloc_interval;
	/*
	 * A recording of several events: each event's stacks begin with a
	 * frame of this name (FRAME_KIND_EVENT, its -e word: "cpu", "alloc",
	 * "leaks"), before the process frame, and an allocation weighs its
	 * bytes while time weighs time. All NULL for one event: no event frame.
	 */
	const char *event_frames[AGGREGATOR_EVENT_NR];
	/*
	 * -e lock: of the time, only the stacks that acquire a lock (a
	 * monitor's enter, or an AbstractQueuedSynchronizer's acquire), each
	 * ending, before its state, in the lock's class (FRAME_KIND_CLASS):
	 * a monitor's as aggregator__set_lock_class gave it, a
	 * java.util.concurrent lock's the class of the frame that called
	 * into the synchronizer. The others are left out (not_locks).
	 */
	bool lock_view;
};

struct aggregator_stats {
	uint64_t received;        /* samples handed to aggregator__add or __begin */
	uint64_t written;         /* samples now counted in the profile */
	uint64_t profile_full;    /* dropped: the profile reached its bounds */
	uint64_t no_user_stack;   /* kept, user part replaced by a reason frame */
	uint64_t no_kernel_stack; /* kept, kernel part replaced by a reason frame */
	uint64_t execs;           /* exec records: the process's maps were forgotten */
	uint64_t state_filtered;  /* left out: their state is not among those kept */
	uint64_t shares_lost;     /* CPU samples or short waits the share table had no room for */
	uint64_t times_lost;      /* samples or waits whose time the timeline had no room for */
	uint64_t native_remembered; /* native frames pushed by the id their address had, not looked up */
	uint64_t not_locks;       /* -e lock: waits that acquire no lock, left out */
	uint64_t wakers;          /* --wakers: wakers captured */
	uint64_t wakers_replaced; /* of those, replaced by a later one before their wait came */
	uint64_t wakers_missing;  /* waits sent with a waker that was not there: lost, replaced */
	uint64_t received_by[AGGREGATOR_EVENT_NR]; /* received, by what they count */
	uint64_t written_by[AGGREGATOR_EVENT_NR];  /* written, by what they count */
};

struct aggregator;

/* sym and profile stay owned by the caller and must outlive the aggregator. */
struct aggregator *aggregator__new(const struct aggregator_config *config, struct symbolizer *sym,
				   struct profile *profile);
void aggregator__free(struct aggregator *agg);

/* One CPU sample, wait or sampled allocation, decoded and checked (user/record/decode.h). */
void aggregator__add(struct aggregator *agg, const struct jbpf_sample *sample);

/*
 * --wakers. A waker (JBPF_RECORD_WAKER) is not a stack of its own but the
 * end of its wait's: between aggregator__capture_waker and
 * aggregator__keep_waker, the stack a stage builds for it (aggregator__add,
 * or begin, push and end) is kept aside, not added. A waker from an
 * interrupt (JBPF_WAKER_INTERRUPT) has its kernel frames under
 * "[timed out]" (a timer woke it) or "[interrupt]", and no task's frames.
 * The wait it woke (flagged JBPF_WAIT_WAKER, with the waker's wait_id),
 * when it is added, gets after its state's frame a
 * "[woken by]" frame and the waker's frames innermost first, all of kind
 * FRAME_KIND_WAKER, in its sleeping part (its runnable part after the
 * wakeup is not the waker's doing); "[waker not recorded]" when none was
 * kept. Wakers wait for their waits in a bounded table, one per thread.
 */
void aggregator__capture_waker(struct aggregator *agg);
/*
 * -e lock: the class of the monitor the sample being built waits for
 * (begin to end), named by the stage that knows it; NULL for none.
 */
void aggregator__set_lock_class(struct aggregator *agg, const char *name);
/*
 * -e lock --wakers: a monitor wait that its thread's own timer ended (a
 * "responsible" thread's timed re-check, JDK 17) is held until the
 * thread's next lock wait a thread ended, and joined with that waker, the
 * holder's release; this adds those still held, each with its timer.
 * Before the profile is read.
 */
void aggregator__flush_waits(struct aggregator *agg);
void aggregator__keep_waker(struct aggregator *agg, const struct jbpf_sample *waker);

/*
 * Process tgid ran another program: the symbolizer forgets it, so samples
 * after it are looked up in the new program, and it is named again.
 */
void aggregator__exec(struct aggregator *agg, uint32_t tgid);

/*
 * One sample's stack built frame by frame, by a stage that names some
 * frames itself (the Java merge, user/java/merge.c):
 *
 *   aggregator__begin  counts the sample and its damage, and pushes its
 *                      root frames; false when the state filter leaves it
 *                      out (nothing more to do);
 *   aggregator__push*  append frames, outermost first;
 *   aggregator__end    appends the kernel frames and adds the stack with
 *                      the sample's weight.
 *
 * A push that finds the profile full makes the later ones do nothing, and
 * aggregator__end counts the sample as lost (profile_full).
 */
bool aggregator__begin(struct aggregator *agg, const struct jbpf_sample *sample, const char *thread_name);
/* The same for a sample that counts event (aggregator__begin: by its record type). */
bool aggregator__begin_event(struct aggregator *agg, const struct jbpf_sample *sample, const char *thread_name,
			     enum aggregator_event event);
void aggregator__push(struct aggregator *agg, const char *name, enum frame_kind kind);
/* A native frame at addr in process tgid: noted with its file (config.modules). */
void aggregator__push_user(struct aggregator *agg, const char *name, enum frame_kind kind, uint32_t tgid,
			   uint64_t addr);
/*
 * The native frame of process tgid at addr (a return address already one
 * byte back), named by the symbolizer: an address named before is pushed
 * by its id, with no lookup, while the symbolizer's answer lasts.
 */
void aggregator__push_native(struct aggregator *agg, uint32_t tgid, uint64_t addr);
/* The frame naming why sample's user stack could not be read. */
void aggregator__push_user_error(struct aggregator *agg, const struct jbpf_sample *sample);
/* A frame's id, interned once and pushed many times with aggregator__push_id; < 0 when full. */
int64_t aggregator__intern(struct aggregator *agg, const char *name, enum frame_kind kind);
/* The same with a position, kept only with config.positions (else as aggregator__intern). */
int64_t aggregator__intern_at(struct aggregator *agg, const char *name, enum frame_kind kind,
			      const struct frame_position *pos);
/* Whether Java frames keep their positions (config.positions). */
bool aggregator__keeps_positions(const struct aggregator *agg);
void aggregator__push_id(struct aggregator *agg, int64_t id);
void aggregator__end(struct aggregator *agg, const struct jbpf_sample *sample);
/*
 * aggregator__end counting weight instead of one sample, and objects
 * beside it: an allocation's estimated bytes and objects
 * (profile__add_objects). A profile with time weights ignores both.
 */
void aggregator__end_weighted(struct aggregator *agg, const struct jbpf_sample *sample, uint64_t weight,
			      uint64_t objects);
/* Whether Java frames are told apart by how they ran (config.annotate). */
bool aggregator__annotates(const struct aggregator *agg);
/* Whether stacks begin with their thread's frame: only then is a virtual thread named by its id. */
bool aggregator__has_thread_roots(const struct aggregator *agg);

void aggregator__stats(const struct aggregator *agg, struct aggregator_stats *stats);

/*
 * Stacks go to profile from now on (the caller keeps the old one): the
 * interval cut of --continuous. Ids interned before (aggregator__intern)
 * name nothing in the new profile; the caller forgets them. -EBUSY when
 * shares settled at the end point into the old profile (time_weights
 * without sample_weight_ns).
 */
int aggregator__set_profile(struct aggregator *agg, struct profile *profile);
/* Whether shares wait for aggregator__settle (time_weights without sample_weight_ns). */
bool aggregator__settles(const struct aggregator *agg);

/*
 * With time_weights, at the end: thread tid spent total_ns in state; the
 * stacks that share it get their parts. False, adding nothing, when none
 * does (the caller then adds a placeholder).
 */
bool aggregator__settle(struct aggregator *agg, uint32_t tid, enum jbpf_state state, uint64_t total_ns);

/*
 * Adds time with no stack known: the thread's root frames, then reason,
 * then the state's frame. thread_name NULL for comm.
 */
void aggregator__add_placeholder(struct aggregator *agg, uint32_t tgid, uint32_t tid, const char comm[JBPF_COMM_LEN],
				 const char *thread_name, enum jbpf_state state, const char *reason, uint64_t ns);

#endif /* JBPF_AGGREGATOR_H */
