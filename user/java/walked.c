/*
 * walked: JVMs whose Java frames BPF walks (contract in walked.h).
 */
#include "walked.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot/find.h"
#include "hotspot/layout.h"
#include "hotspot/memory.h"
#include "hotspot/thread_names.h"
#include "hotspot/threads.h"
#include "hotspot/vmstructs.h"
#include "common/classname.h"
#include "common/clock.h"
#include "common/counts.h"
#include "symbolizer/proc.h"
#include "user/java/frame_ids.h"
#include "user/java/thread_names.h"
#include "user/record/decode.h"
#include "user/record/sampler.h"
#include "user/record/unwinder.h"

#define NAME_MAX_LEN 512
/*
 * Frames whose profile ids each JVM remembers (about 100 bytes each): a
 * table that starts small and grows to 6.5 MiB, room for a JVM's whole
 * JIT-compiled working set; every sampled pc in compiled code is a frame.
 */
#define WALKED_FRAME_IDS 4096
#define WALKED_FRAME_IDS_MAX 65536

/* The summary's figures (walked__describe). */
struct walked_stats {
	uint64_t samples;         /* samples of followed JVMs */
	uint64_t with_java;       /* of those, with at least one Java frame */
	uint64_t complete;        /* of those, walked to the stack's root */
	uint64_t stopped[JBPF_JAVA_STOP_NR]; /* ended early, by reason */
	uint64_t carried[JBPF_JAVA_CARRIER_NR]; /* on a virtual thread, by what its frames' walk says */
	uint64_t frames;          /* Java frames named */
	uint64_t unresolved[HOTSPOT_UNRESOLVED_NR]; /* frames not named, by reason */
	uint64_t physical;        /* physical Java frames met (stops not counted) */
	uint64_t remembered;      /* of those, whose profile ids were remembered */
	/* Of JVMs forgotten (walked__describe_naming adds the live ones'). */
	uint64_t names_cached, reads, read_bytes, clears;
	struct thread_names_stats thread_names; /* of JVMs forgotten (walked__describe adds the live ones') */
	uint64_t names_moving;    /* samples of Java threads left with the kernel's name: theirs was being moved */
};

struct walked_jvm {
	uint32_t tgid;
	/* With walked__follow_threads: where its thread list is, and the tids handed to BPF, sorted. */
	struct hotspot_threads__layout threads;
	bool has_threads;
	uint32_t *tids;
	size_t nr_tids;
	uint64_t threads_read_ns;  /* when its list was last read */
	/* Its threads' Java names, when stacks begin with their thread (NULL otherwise, or where unreadable). */
	bool own_pidns;            /* its tids are ours: names by tid mean our threads */
	struct hotspot_thread_names__layout name_layout;
	struct thread_names *thread_names;
	struct jbpf_hotspot_jvm layout; /* with the process's start_ticks */
	struct hotspot_memory mem;
	struct hotspot_vm *vm;
	struct hotspot_names *names;
	struct frame_ids *ids;   /* its frames' profile ids, NULL when there was no memory */
};

/* How often the JVMs' thread lists are read again (walked__tick). */
#define WALKED_THREADS_EVERY_NS 1000000000ull
/*
 * The soonest a sample of a thread its JVM's last list did not have reads
 * the list again: a thread started since gets its name at its first
 * samples, and the VM's own threads, never listed, cost one read a second.
 */
#define WALKED_THREADS_MISS_NS 10000000ull

struct walked {
	struct aggregator *agg;
	/* walked__follow_threads: each JVM's threads handed to the sampler, read again every second. */
	bool follow_threads;
	struct sampler *sampler;
	uint64_t threads_read_ns;
	struct hotspot_java_thread *threads; /* HOTSPOT_THREADS_MAX, made at the first read */
	uint64_t threads_lost;               /* lists that could not be read */
	uint64_t names_refused;              /* JVMs whose thread names are not read, the last one's why: */
	char names_why[300];
	struct walked_jvm **jvms; /* each on its own: its names point at its memory reader */
	size_t nr, cap;
	struct walked_stats stats;
	struct hotspot_frame logical[HOTSPOT_NAMES_MAX_INLINE];
};

struct walked *walked__new(struct aggregator *agg)
{
	struct walked *w = calloc(1, sizeof(*w));

	if (w)
		w->agg = agg;
	return w;
}

static void jvm_free(struct walked_jvm *j)
{
	thread_names__free(j->thread_names);
	free(j->tids);
	frame_ids__free(j->ids);
	hotspot_names__free(j->names);
	hotspot_vm__free(j->vm);
	free(j);
}

void walked__free(struct walked *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nr; i++)
		jvm_free(w->jvms[i]);
	free(w->jvms);
	free(w->threads);
	free(w);
}

/* The index of tgid's JVM, or -1. */
static long find_index(const struct walked *w, uint32_t tgid)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->jvms[i]->tgid == tgid)
			return (long)i;
	return -1;
}

static struct walked_jvm *find_jvm(const struct walked *w, uint32_t tgid)
{
	long i = find_index(w, tgid);

	return i < 0 ? NULL : w->jvms[i];
}

bool walked__has(const struct walked *w, uint32_t tgid)
{
	return w && find_jvm(w, tgid);
}

size_t walked__nr_jvms(const struct walked *w)
{
	return w ? w->nr : 0;
}

/* What naming j's frames took, added to *st. */
static void add_naming(const struct walked_jvm *j, struct walked_stats *st)
{
	struct hotspot_names__cache_stats cs;
	struct hotspot_names__stats ns;

	if (!j->names)
		return;
	hotspot_names__stats(j->names, &ns);
	hotspot_names__cache_stats(j->names, &cs);
	st->names_cached += ns.cached;
	st->clears += cs.clears;
	st->reads += j->mem.reads;
	st->read_bytes += j->mem.bytes;
}

void walked__forget(struct walked *w, uint32_t tgid)
{
	long i = w ? find_index(w, tgid) : -1;

	if (i < 0)
		return;
	for (size_t t = 0; w->sampler && t < w->jvms[i]->nr_tids; t++)
		sampler__set_java_thread(w->sampler, w->jvms[i]->tids[t], 0);
	add_naming(w->jvms[i], &w->stats);
	thread_names__stats(w->jvms[i]->thread_names, &w->stats.thread_names);
	jvm_free(w->jvms[i]);
	w->jvms[i] = w->jvms[--w->nr];
}

/* Room for one more JVM: 0, or -1 out of memory. */
static int make_room(struct walked *w)
{
	size_t cap = w->cap ? 2 * w->cap : 8;
	struct walked_jvm **more;

	if (w->nr < w->cap)
		return 0;
	more = realloc(w->jvms, cap * sizeof(*more));
	if (!more)
		return -1;
	w->jvms = more;
	w->cap = cap;
	return 0;
}

enum walked_result walked__add_jvm(struct walked *w, const char *proc_root, uint32_t tgid, uint64_t start_ticks,
				   char *err, size_t err_size)
{
	struct hotspot_vm_symbols syms;
	struct walked_jvm *j;
	uint64_t base;
	int rc;

	walked__forget(w, tgid);
	rc = hotspot_find__jvm(proc_root, tgid, &syms, &base, err, err_size);
	if (rc <= 0)
		return rc == 0 ? WALKED_NOT_JVM : WALKED_NOT_UNDERSTOOD;
	if (make_room(w) || !(j = calloc(1, sizeof(*j)))) {
		snprintf(err, err_size, "out of memory");
		return WALKED_NOT_UNDERSTOOD;
	}
	j->tgid = tgid;
	j->own_pidns = proc__nspid(proc_root, tgid) == tgid;
	hotspot_memory__of_process(&j->mem, (pid_t)tgid);
	rc = hotspot_vm__read(&j->mem, &syms, &j->vm, err, err_size);
	if (rc) {
		jvm_free(j);
		return rc == HOTSPOT_VM_STARTING ? WALKED_STARTING : WALKED_NOT_UNDERSTOOD;
	}
	rc = hotspot_layout__read(j->vm, &j->mem, &j->layout, err, err_size);
	if (rc || !(j->names = hotspot_names__new(j->vm, &j->mem, err, err_size))) {
		jvm_free(j);
		return rc == HOTSPOT_LAYOUT_STARTING ? WALKED_STARTING : WALKED_NOT_UNDERSTOOD;
	}
	j->layout.start_ticks = start_ticks;
	/* JBPFPROF_VTHREAD_CHUNKS=0: virtual threads' frozen frames not walked, for bench/vthread_walk_cost.sh. */
	if (getenv("JBPFPROF_VTHREAD_CHUNKS") && !strcmp(getenv("JBPFPROF_VTHREAD_CHUNKS"), "0"))
		j->layout.flags &= ~JBPF_HOTSPOT_CHUNKS;
	j->ids = frame_ids__new(WALKED_FRAME_IDS, WALKED_FRAME_IDS_MAX);
	w->jvms[w->nr++] = j;
	return WALKED_OK;
}

static int by_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Whether j's threads are handed to BPF: for -e lock (walked__follow_threads),
 * or for its virtual threads (JDK 21 and later: the walk reads whether a
 * carrier has one mounted through its JavaThread).
 */
static bool follows(const struct walked *w, const struct walked_jvm *j)
{
	return w->follow_threads || (j->layout.flags & JBPF_HOTSPOT_CONTINUATIONS);
}

/*
 * JVM j's Java threads read again: their names brought up to date, and
 * when it is followed, handed to the sampler (the new ones set, the gone
 * ones taken out). A list that cannot be read now leaves what was read
 * before as it is.
 */
static void read_threads(struct walked *w, struct walked_jvm *j, uint64_t now_ns)
{
	uint32_t *tids;
	size_t nr;
	char err[256];

	if (!j->has_threads)
		return;
	if (!w->threads && !(w->threads = malloc(HOTSPOT_THREADS_MAX * sizeof(*w->threads))))
		return;
	j->threads_read_ns = now_ns;
	if (hotspot_threads__read(&j->mem, &j->threads, w->threads, HOTSPOT_THREADS_MAX, &nr, err, sizeof(err))) {
		w->threads_lost++;
		return;
	}
	if (j->thread_names)
		thread_names__update(j->thread_names, &j->mem, w->threads, nr);
	if (!follows(w, j) || !w->sampler)
		return;
	tids = malloc((nr ? nr : 1) * sizeof(*tids));
	if (!tids)
		return;
	for (size_t i = 0; i < nr; i++) {
		tids[i] = w->threads[i].tid;
		sampler__set_java_thread(w->sampler, tids[i], w->threads[i].java_thread);
	}
	qsort(tids, nr, sizeof(*tids), by_tid);
	for (size_t i = 0; i < j->nr_tids; i++)
		if (!bsearch(&j->tids[i], tids, nr, sizeof(*tids), by_tid))
			sampler__set_java_thread(w->sampler, j->tids[i], 0);
	free(j->tids);
	j->tids = tids;
	j->nr_tids = nr;
}

/*
 * The Java name of tid, a thread of j sampled at now_ns, or NULL (the
 * kernel's name then). A thread the last list did not have has the list
 * read again, once until the next periodic reading
 * (thread_names__mark_unlisted), and no sooner than
 * WALKED_THREADS_MISS_NS after the last reading. So has a listed thread
 * without a name while the names last read were not believed (read during
 * a collection's pause), at most once each WALKED_THREADS_MISS_NS.
 */
static const char *thread_name(struct walked *w, struct walked_jvm *j, uint32_t tid, uint64_t now_ns)
{
	if (!j->thread_names)
		return NULL;
	if (!thread_names__known(j->thread_names, tid)) {
		if (now_ns - j->threads_read_ns >= WALKED_THREADS_MISS_NS)
			read_threads(w, j, now_ns);
		if (!thread_names__known(j->thread_names, tid))
			thread_names__mark_unlisted(j->thread_names, tid);
	} else if (!thread_names__settled(j->thread_names) && !thread_names__get(j->thread_names, tid)) {
		if (now_ns - j->threads_read_ns >= WALKED_THREADS_MISS_NS)
			read_threads(w, j, now_ns);
		if (!thread_names__settled(j->thread_names) && !thread_names__get(j->thread_names, tid))
			w->stats.names_moving++;
	}
	return thread_names__get(j->thread_names, tid);
}

void walked__follow_threads(struct walked *w)
{
	if (w)
		w->follow_threads = true;
}

void walked__tick(struct walked *w, uint64_t now_ns)
{
	if (!w || now_ns - w->threads_read_ns < WALKED_THREADS_EVERY_NS)
		return;
	w->threads_read_ns = now_ns;
	for (size_t i = 0; i < w->nr; i++) {
		thread_names__forget_unlisted(w->jvms[i]->thread_names);
		read_threads(w, w->jvms[i], now_ns);
	}
}

/* Whether JBPFPROF_THREAD_NAMES=0 asks for the kernel's thread names only. */
static bool names_turned_off(void)
{
	const char *v = getenv("JBPFPROF_THREAD_NAMES");

	return v && !strcmp(v, "0");
}

int walked__hand_over(struct walked *w, struct sampler *sampler, uint32_t tgid)
{
	struct walked_jvm *j = find_jvm(w, tgid);
	int err = j ? sampler__set_hotspot(sampler, tgid, &j->layout) : -ESRCH;
	char reason[256];

	if (err) {
		walked__forget(w, tgid);
		return err;
	}
	/*
	 * Names where stacks begin with their threads, and the JVM's tids are
	 * ours; a JVM whose names cannot be read keeps the kernel's, said with -v.
	 * JBPFPROF_THREAD_NAMES=0: the kernel's names, for bench/thread_names.sh.
	 */
	if (aggregator__has_thread_roots(w->agg) && j->own_pidns && !names_turned_off()) {
		if (hotspot_thread_names__layout(j->vm, &j->mem, &j->name_layout, reason, sizeof(reason))) {
			w->names_refused++;
			snprintf(w->names_why, sizeof(w->names_why), "JVM pid %u: %s", tgid, reason);
		} else {
			j->thread_names = thread_names__new(&j->name_layout);
		}
	}
	if (follows(w, j))
		w->sampler = sampler;
	if (follows(w, j) || j->thread_names) {
		j->has_threads = !hotspot_threads__layout(j->vm, &j->threads, reason, sizeof(reason));
		read_threads(w, j, clock__monotonic_ns());
	}
	/* A wall-clock or off-CPU recording's virtual threads: their time unmounted (bpf/vthreads.bpf.c). */
	if ((j->layout.flags & JBPF_HOTSPOT_UNMOUNTS) &&
	    sampler__probe_vthreads(sampler, "/proc", tgid, j->layout.start_ticks, reason, sizeof(reason)) && reason[0])
		fprintf(stderr, "jbpfprof: JVM pid %u: its virtual threads' time unmounted is not recorded: %s\n", tgid,
			reason);
	return 0;
}

int walked__install(struct walked *w, struct sampler *sampler)
{
	struct unwinder *unwinder = sampler__unwinder(sampler);
	int status = 0;

	for (size_t i = 0; w && i < w->nr;) {
		struct walked_jvm *j = w->jvms[i];
		uint32_t tgid = j->tgid;
		int err = walked__hand_over(w, sampler, tgid);

		if (!err) {
			/*
			 * Its unwind tables now, not at its first sample (-a):
			 * the walk reaches its Java frames through its native ones.
			 */
			if (unwinder)
				unwinder__add_process(unwinder, tgid);
			i++;
			continue;
		}
		/* walked__hand_over forgot it: slot i holds the next one now. */
		fprintf(stderr, "jbpfprof: pid %u: cannot hand its Java frames to BPF: %s; profiled without them\n",
			tgid, strerror(-err));
		status = -1;
	}
	return status;
}

/* The thread names' counts of every JVM, forgotten or not. */
static struct thread_names_stats all_thread_names(const struct walked *w)
{
	struct thread_names_stats ts = w->stats.thread_names;

	for (size_t i = 0; i < w->nr; i++)
		thread_names__stats(w->jvms[i]->thread_names, &ts);
	return ts;
}

const char *walked__thread_name(const struct walked *w, uint32_t tgid, uint32_t tid)
{
	const struct walked_jvm *j = w ? find_jvm(w, tgid) : NULL;

	return j ? thread_names__get(j->thread_names, tid) : NULL;
}

void walked__describe(const struct walked *w, char *buf, size_t size)
{
	const struct walked_stats *st;
	struct thread_names_stats ts;
	struct named_count stops[JBPF_JAVA_STOP_NR];
	size_t used, before, nr_stops = 0;

	buf[0] = '\0';
	/* No samples went through the walk (--java-stacks both compares them elsewhere): nothing to say. */
	if (!w || !w->nr || !w->stats.samples)
		return;
	st = &w->stats;
	struct named_count unnamed[] = {
		{ "unreadable", st->unresolved[HOTSPOT_UNRESOLVED_READ] },
		{ "unloaded or recompiled", st->unresolved[HOTSPOT_UNRESOLVED_MOVED] },
		{ "no debug info at the pc", st->unresolved[HOTSPOT_UNRESOLVED_NO_SCOPE] },
		{ "invalid", st->unresolved[HOTSPOT_UNRESOLVED_INVALID] },
	};
	for (unsigned r = 1; r < JBPF_JAVA_STOP_NR; r++)
		stops[nr_stops++] = (struct named_count){ walked__stop_reason(r), st->stopped[r] };
	used = (size_t)snprintf(buf, size,
				"%llu of %llu JVM thread samples with Java frames, %.1f%% of them walked to the root",
				(unsigned long long)st->with_java, (unsigned long long)st->samples,
				st->with_java ? 100.0 * (double)st->complete / (double)st->with_java : 100.0);
	if (used >= size)
		return;
	before = used;
	used = counts__append(buf, size, used, " (ended early: ", stops, nr_stops);
	if (used != before && used + 1 < size)
		used += (size_t)snprintf(buf + used, size - used, ")");
	used = counts__append(buf, size, used, "; Java frames not named: ", unnamed,
			      sizeof(unnamed) / sizeof(unnamed[0]));
	if (used + 1 < size && (st->carried[JBPF_JAVA_CARRIER_WHOLE] || st->carried[JBPF_JAVA_CARRIER_FROZEN]))
		used += (size_t)snprintf(buf + used, size - used,
					 "; %llu on virtual threads, %llu of them with outer frames frozen",
					 (unsigned long long)(st->carried[JBPF_JAVA_CARRIER_WHOLE] +
							      st->carried[JBPF_JAVA_CARRIER_FROZEN]),
					 (unsigned long long)st->carried[JBPF_JAVA_CARRIER_FROZEN]);
	ts = all_thread_names(w);
	if (used + 1 < size && (ts.unreadable || ts.invalid))
		used += (size_t)snprintf(buf + used, size - used,
					 "; Java thread names not read, the kernel's kept: %llu unreadable, %llu invalid",
					 (unsigned long long)ts.unreadable, (unsigned long long)ts.invalid);
	if (used + 1 < size && st->names_moving)
		snprintf(buf + used, size - used,
			 "; %llu samples named by the kernel while the collector moved their Java thread names",
			 (unsigned long long)st->names_moving);
}

void walked__describe_naming(const struct walked *w, char *buf, size_t size)
{
	struct walked_stats st = w->stats;
	struct thread_names_stats ts = all_thread_names(w);
	int used;

	for (size_t i = 0; i < w->nr; i++)
		add_naming(w->jvms[i], &st);
	used = snprintf(buf, size,
			"%llu physical Java frames, %llu with their ids remembered, %llu of the rest named from the "
			"cache; %llu reads of the JVMs' memory (%.1f MiB), names caches emptied %llu times; "
			"Java thread names: %llu read, %llu found unchanged",
			(unsigned long long)st.physical, (unsigned long long)st.remembered,
			(unsigned long long)st.names_cached, (unsigned long long)st.reads,
			(double)st.read_bytes / (1 << 20), (unsigned long long)st.clears, (unsigned long long)ts.read,
			(unsigned long long)ts.kept);
	if (used > 0 && (size_t)used + 1 < size && w->names_refused)
		snprintf(buf + used, size - (size_t)used, ", not read in %llu JVMs (%s)",
			 (unsigned long long)w->names_refused, w->names_why);
}

bool walked__virtual_name(const struct jbpf_java_frame *f, char out[WALKED_VIRTUAL_NAME + 1])
{
	uint64_t words[2] = { f->pc, f->cookie };
	size_t n = 0;

	memcpy(out, words, WALKED_VIRTUAL_NAME);
	out[WALKED_VIRTUAL_NAME] = '\0';
	for (; n < WALKED_VIRTUAL_NAME && out[n]; n++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/@+=#", out[n]))
			out[n] = '?';
	out[n] = '\0';
	return n > 0;
}

_Static_assert(JBPF_MAX_JAVA_FRAMES == 256, "the stop reason below names the bound");

const char *walked__stop_reason(unsigned reason)
{
	static const char *const reasons[JBPF_JAVA_STOP_NR] = {
		[JBPF_JAVA_STOP_DEPTH] = "deeper than 256 frames",
		[JBPF_JAVA_STOP_NO_BLOB] = "a pc in no code blob",
		[JBPF_JAVA_STOP_READ] = "a read failed",
		[JBPF_JAVA_STOP_FRAME] = "a frame that makes no sense",
		[JBPF_JAVA_STOP_PROLOGUE] = "compiled code setting up its frame",
		[JBPF_JAVA_STOP_INTERPRETER] = "the interpreter setting up a frame",
		[JBPF_JAVA_STOP_STUB] = "a stub with no frame",
	};

	return reason < JBPF_JAVA_STOP_NR && reasons[reason] ? reasons[reason] : "unknown";
}

/* The profile's kind of a logical frame; a native method's is how its frame was made (physical: JBPF_JAVA_*). */
static enum frame_kind profile_kind(uint8_t kind, uint8_t physical)
{
	switch (kind) {
	case HOTSPOT_FRAME_INTERPRETED:
		return FRAME_KIND_JAVA_INTERP;
	case HOTSPOT_FRAME_NATIVE:
		return physical == JBPF_JAVA_INTERPRETED ? FRAME_KIND_JAVA_INTERP : FRAME_KIND_JAVA_COMPILED;
	case HOTSPOT_FRAME_C1:
	case HOTSPOT_FRAME_C2:
		return FRAME_KIND_JAVA_COMPILED;
	case HOTSPOT_FRAME_INLINED:
		return FRAME_KIND_JAVA_INLINED;
	default:
		return FRAME_KIND_JIT;
	}
}

static const char *const annotations[FRAME_KIND_NR] = {
	[FRAME_KIND_JAVA_COMPILED] = "_[j]",
	[FRAME_KIND_JAVA_INLINED] = "_[i]",
	[FRAME_KIND_JAVA_INTERP] = "_[0]",
};

void walked__frame_name(const struct hotspot_frame *f, char *out, size_t size)
{
	char sig[NAME_MAX_LEN];

	/* As the agent names frames: a hidden class's address and counter removed. */
	snprintf(sig, sizeof(sig), "L%s;", f->klass ? f->klass : "?");
	classname__format(sig, f->method, out, size);
}

/*
 * The profile's id of one logical frame of a physical frame of kind
 * physical (JBPF_JAVA_*), named as the agent's path names it:
 * "package.Class.method"; < 0 when the profile is full. *named: false
 * for a frame that could not be named (its id is not to be remembered).
 */
static int64_t logical_id(struct walked *w, const struct hotspot_frame *f, uint8_t physical, bool *named)
{
	char name[NAME_MAX_LEN], method[NAME_MAX_LEN];
	enum frame_kind kind = profile_kind(f->kind, physical);
	bool annotate = aggregator__annotates(w->agg);

	*named = !f->unresolved;
	if (f->unresolved) {
		w->stats.unresolved[f->unresolved < HOTSPOT_UNRESOLVED_NR ? f->unresolved : 0]++;
		return aggregator__intern(w->agg, "[unknown Java method]", FRAME_KIND_LOST);
	}
	if (f->kind == HOTSPOT_FRAME_STUB)
		return aggregator__intern(w->agg, f->method ? f->method : "[stub]", FRAME_KIND_JIT);
	walked__frame_name(f, method, sizeof(method));
	snprintf(name, sizeof(name), "%s%s", method, annotate && annotations[kind] ? annotations[kind] : "");
	return aggregator__intern_at(w->agg, name, annotate ? kind : FRAME_KIND_JAVA,
				     &(struct frame_position){ .line = f->line, .bci = f->bci, .file = f->file });
}

/* One walked Java frame, outermost logical frame first: its ids remembered, or named. */
static void push_java(struct walked *w, struct walked_jvm *j, const struct jbpf_java_frame *f)
{
	/*
	 * An interpreted frame's name does not depend on its bcp, but its line
	 * does; a compiled one's inlining and lines do on its pc.
	 */
	bool by_pc = f->kind == JBPF_JAVA_COMPILED || aggregator__keeps_positions(w->agg);
	struct frame_ids_key key = { .ptr = f->ptr, .pc = by_pc ? f->pc : 0, .cookie = f->cookie, .kind = f->kind };
	int64_t ids[FRAME_IDS_INLINE];
	char name[NAME_MAX_LEN];
	bool all_named = true;
	unsigned known;
	int n;

	if (f->kind == JBPF_JAVA_STOP) {
		snprintf(name, sizeof(name), "[unknown Java: %s]", walked__stop_reason(f->reason));
		aggregator__push(w->agg, name, FRAME_KIND_LOST);
		return;
	}
	if (f->kind == JBPF_JAVA_CARRIER) {
		int at = snprintf(name, sizeof(name), WALKED_VIRTUAL);
		char vname[WALKED_VIRTUAL_NAME + 1];

		/* A virtual thread's id and name part its stacks from others' only where threads are told apart. */
		if (f->ptr && aggregator__has_thread_roots(w->agg)) {
			at += snprintf(name + at, sizeof(name) - (size_t)at, " #%llu", (unsigned long long)f->ptr);
			if (walked__virtual_name(f, vname))
				at += snprintf(name + at, sizeof(name) - (size_t)at, " %s", vname);
		}
		snprintf(name + at, sizeof(name) - (size_t)at, "%s]",
			 f->reason == JBPF_JAVA_CARRIER_FROZEN ? WALKED_VIRTUAL_FROZEN : "");
		aggregator__push(w->agg, name, FRAME_KIND_CARRIER);
		return;
	}
	w->stats.physical++;
	known = j->ids ? frame_ids__get(j->ids, &key, ids) : 0;
	w->stats.remembered += known > 0;
	if (known) {
		for (unsigned i = 0; i < known; i++)
			aggregator__push_id(w->agg, ids[i]);
		w->stats.frames += known;
		return;
	}
	n = hotspot_names__frame(j->names, f, w->logical, HOTSPOT_NAMES_MAX_INLINE);
	if (n > HOTSPOT_NAMES_MAX_INLINE)
		n = HOTSPOT_NAMES_MAX_INLINE;
	for (int k = n - 1; k >= 0; k--) {
		bool named;
		int64_t id = logical_id(w, &w->logical[k], f->kind, &named);

		all_named &= named && id >= 0;
		w->stats.frames += named;
		if (id < 0)
			continue;
		aggregator__push_id(w->agg, id);
		if (n - 1 - k < FRAME_IDS_INLINE)
			ids[n - 1 - k] = id;
	}
	if (all_named && n > 0 && n <= FRAME_IDS_INLINE && j->ids)
		frame_ids__put(j->ids, &key, ids, (unsigned)n);
}

/* Native user frame i (0 the innermost); exact: its pc is the sampled one, not a return address. */
static void push_native(struct walked *w, const struct jbpf_sample *s, size_t i, bool exact)
{
	const __u64 *ips = s->ips + s->kstack_len;

	aggregator__push_native(w->agg, s->tgid, exact ? ips[i] : ips[i] - 1);
}

static void count_walk(struct walked *w, const struct jbpf_sample *s, const struct jbpf_java_frame *java)
{
	const struct jbpf_java_frame *last = s->java_len ? &java[s->java_len - 1] : NULL;

	w->stats.samples++;
	if (!last)
		return;
	for (unsigned i = 0; i < s->java_len; i++)
		if (java[i].kind == JBPF_JAVA_CARRIER)
			w->stats.carried[java[i].reason < JBPF_JAVA_CARRIER_NR ? java[i].reason : 0]++;
	w->stats.with_java++;
	if (last->kind == JBPF_JAVA_STOP)
		w->stats.stopped[last->reason < JBPF_JAVA_STOP_NR ? last->reason : 0]++;
	else
		w->stats.complete++;
}

void walked__sample(struct walked *w, const struct jbpf_sample *s)
{
	struct walked_jvm *j = find_jvm(w, s->tgid);
	const struct jbpf_java_frame *java = decode__sample_java_frames(s);
	int k = (int)s->java_len - 1;
	bool java_innermost = s->java_len && java[0].native_before == 0, marker_only;

	if (!j)
		return;
	/* A waker is part of its wait's sample (--wakers): not a walk of its own. */
	if (s->type != JBPF_RECORD_WAKER)
		count_walk(w, s, java);
	if (!aggregator__begin(w->agg, s, thread_name(w, j, s->tid, s->time_ns)))
		return;
	/* -e lock: the class of the monitor the wait is for, read by BPF at its switch-out. */
	if (w->follow_threads && s->lock_klass) {
		char name[NAME_MAX_LEN];

		if (!hotspot_names__klass(j->names, s->lock_klass, name, sizeof(name)))
			aggregator__set_lock_class(w->agg, name);
	}
	if (s->ustack_err && !s->ustack_len && !s->java_len)
		aggregator__push_user_error(w->agg, s);
	/* A virtual thread's marker alone: why its frames are missing comes after it, where they would be. */
	marker_only = s->ustack_err && !s->ustack_len && s->java_len == 1 && java[0].kind == JBPF_JAVA_CARRIER;
	/* Root first: the Java frames outermost of native frame pos - 1, then that frame. */
	for (size_t pos = s->ustack_len + 1; pos-- > 0;) {
		for (; k >= 0 && java[k].native_before == pos; k--)
			push_java(w, j, &java[k]);
		if (pos > 0)
			push_native(w, s, pos - 1, pos == 1 && !java_innermost);
	}
	if (marker_only)
		aggregator__push_user_error(w->agg, s);
	aggregator__end(w->agg, s);
}

int walked__methods(struct walked *w, const struct jbpf_sample *s, struct walked_method *out, int max,
		    unsigned *stop)
{
	struct walked_jvm *j = find_jvm(w, s->tgid);
	const struct jbpf_java_frame *java = decode__sample_java_frames(s);
	int n = 0;

	*stop = 0;
	for (unsigned i = 0; j && i < s->java_len && n < max; i++) {
		int got;

		if (java[i].kind == JBPF_JAVA_STOP) {
			*stop = java[i].reason;
			break;
		}
		got = hotspot_names__frame(j->names, &java[i], w->logical, HOTSPOT_NAMES_MAX_INLINE);
		for (int k = 0; k < got && k < HOTSPOT_NAMES_MAX_INLINE && n < max; k++) {
			const struct hotspot_frame *f = &w->logical[k];

			if (f->kind == HOTSPOT_FRAME_STUB)
				continue;
			if (f->unresolved)
				snprintf(out[n].name, sizeof(out[n].name), "[unknown Java method]");
			else
				walked__frame_name(f, out[n].name, sizeof(out[n].name));
			out[n].bci = f->bci;
			out[n++].kind = f->kind;
		}
	}
	return n;
}

void walked__forget_frame_ids(struct walked *w)
{
	for (size_t i = 0; w && i < w->nr; i++)
		if (w->jvms[i]->ids)
			frame_ids__clear(w->jvms[i]->ids);
}

