/*
 * options: the command line, parsed and checked once.
 *
 * options__parse_args fills struct options from argv, reporting any mistake as one
 * line on stderr. Value parsers are exposed for the unit tests and for later
 * options; they check the whole argument and its range, never clamp quietly.
 */
#ifndef JBPF_OPTIONS_H
#define JBPF_OPTIONS_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "output/output.h"
#include "profile/view.h"
#include "user/fleet/labels.h"

#define OPTIONS_MAX_PIDS 64 /* the BPF filter's size, JBPF_MAX_TARGETS (checked in options.c) */
#define DEFAULT_FREQUENCY_HZ 99
/*
 * -e wall and offcpu: one recorded wait per this much of a thread's waiting
 * (--wait-interval). Each recorded wait costs a kernel stack, task work for
 * its user stack and, in a JVM, a Java stack: at 1/F (10 ms) a busy server's
 * waits cost more than its context switches (docs/benchmarks.md,
 * bench/server.sh). 50 ms is async-profiler's wall-clock interval too.
 */
#define DEFAULT_WAIT_INTERVAL_NS (50ull * 1000000ull)
/*
 * -e alloc and -e nativemem: one sampled allocation per this many bytes
 * allocated, on average (--alloc-interval). async-profiler's and JFR's default too.
 */
#define DEFAULT_ALLOC_INTERVAL (512u << 10)
#define MAX_ALLOC_INTERVAL 0x7fffffffu /* JVMTI SetHeapSamplingInterval takes a jint */
#define CONTINUOUS_FREQUENCY_HZ 19 /* always on: a fleet's cost, not a session's */
#define DEFAULT_INTERVAL_NS (60ull * 1000000000ull)
#define DEFAULT_SPOOL_DIR "/var/spool/jbpfprof"
#define DEFAULT_SPOOL_BYTES (64ull << 20)
#define MAX_FREQUENCY_HZ 10000
#define DEFAULT_TEXT_TOP 30
#define OPTIONS_MAX_OUTPUTS 4

enum event_mode {
	EVENT_CPU,      /* CPU samples (the default) */
	EVENT_WALL,     /* every thread, on and off CPU, in microseconds */
	EVENT_OFFCPU,   /* only the time off CPU */
	EVENT_ALLOC,    /* Java heap allocations, in bytes, sampled by the JVMs' agents */
	EVENT_NATIVEMEM, /* native memory (malloc and its kin), in bytes, sampled by uprobes */
	EVENT_LOCK,     /* Java threads' time off CPU waiting to acquire a lock */
	EVENT_NR,
};

/* The events that weigh time; a recording has at most one of them. */
#define EVENTS_OF_TIME ((1u << EVENT_CPU) | (1u << EVENT_WALL) | (1u << EVENT_OFFCPU) | (1u << EVENT_LOCK))
/* The events made of waits: off-CPU time from the scheduler. */
#define EVENTS_OF_WAITS ((1u << EVENT_WALL) | (1u << EVENT_OFFCPU) | (1u << EVENT_LOCK))

enum java_mode {
	JAVA_AUTO,      /* load the agent into every JVM among -p; fall back if it fails */
	JAVA_REQUIRED,  /* --java: every -p must be a JVM that takes the agent */
	JAVA_OFF,       /* --no-java: never attach; frame pointers and perf maps only */
};

enum java_stacks_mode {
	JAVA_STACKS_BPF,   /* walked by BPF from HotSpot's frames (the agent where not understood) */
	JAVA_STACKS_AGENT, /* --java-stacks agent: AsyncGetCallTrace in the agent, through a signal */
	JAVA_STACKS_BOTH,  /* --java-stacks both: the agent's, checked against the BPF walk */
};

enum unwind_mode {
	UNWIND_TABLES,  /* user stacks by .eh_frame unwind tables, frame pointers where there are none */
	UNWIND_FP,      /* --unwind fp: by frame pointers only */
};

struct options {
	uint32_t pids[OPTIONS_MAX_PIDS]; /* as typed; main resolves threads to processes */
	size_t nr_pids;
	bool all;                        /* -a: every process */
	uint64_t duration_ns;            /* 0: until Ctrl-C or the targets exit */
	unsigned frequency_hz;
	enum output_format format;       /* of the default file, and of files whose name implies none */
	/* -f, each once; none: one file named from pid and time; "-": stdout */
	const char *output_paths[OPTIONS_MAX_OUTPUTS];
	enum output_format output_formats[OPTIONS_MAX_OUTPUTS];
	size_t nr_outputs;
	bool threads;                    /* root frame per thread */
	bool group_by_given;             /* --group-by; else a frame per process with -a or several -p */
	enum view_process_root group_by;
	bool fixed_interval;             /* sample at exactly 1/F (aliases; for comparison) */
	size_t text_top;
	int verbose;
	enum java_mode java;             /* whether to load the agent into JVMs */
	enum unwind_mode unwind;         /* how user stacks are walked */
	enum java_stacks_mode java_stacks; /* where Java frames come from */
	bool annotate;                   /* suffix Java frames by how they ran */
	bool lines;                      /* Java frames named with their source line, "Class.method:LINE" */
	bool carrier_frames;             /* keep virtual threads' carriers' frames */
	bool no_unmounted;               /* waits: not the time virtual threads spend unmounted (no probes) */
	unsigned events;                 /* 1 << enum event_mode for each event recorded (-e), at least one */
	unsigned state_mask;             /* 1 << enum jbpf_state for each state kept (wall, offcpu) */
	uint64_t min_block_ns;           /* waits shorter than this are dropped; 0 keeps all */
	uint64_t max_block_ns;           /* waits longer than this are dropped; 0: no limit */
	uint64_t wait_interval_ns;       /* one recorded wait per this much waiting (wall, offcpu) */
	uint32_t alloc_interval;         /* one sampled allocation per this many bytes (alloc, nativemem) */
	bool leaks;                      /* nativemem: only what is still allocated at the end */
	bool wakers;                     /* wall, offcpu: each wait's stack joined with its waker's */
	bool include_given, exclude_given;
	regex_t include, exclude;        /* --include, --exclude, compiled when given */
	/* --continuous and where its profiles go (user/fleet/) */
	bool continuous;
	uint64_t interval_ns;
	const char *dir;                 /* --dir */
	uint64_t keep_bytes;             /* --keep; 0: no bound */
	const char *push_url;            /* --push */
	bool push_ingest;                /* --push-api ingest: Pyroscope's /ingest, not its push API */
	bool push_otlp;                  /* --push-otlp: push_url is an OTLP receiver */
	const char *spool_dir;           /* --spool */
	uint64_t spool_bytes;            /* --spool-size */
	struct fleet_label labels[FLEET_MAX_LABELS];
	size_t nr_labels;
};

/* Whether the recording has event e (-e). */
static inline bool options__records(const struct options *opts, enum event_mode e)
{
	return opts->events & (1u << e);
}

/* Whether it has several: each is kept apart in the profile and in the files (output/output.h). */
static inline bool options__several_events(const struct options *opts)
{
	return opts->events & (opts->events - 1);
}

/*
 * Parses "cpu", "alloc" or a comma-separated list of events ("cpu,alloc")
 * into *events, a mask of 1 << enum event_mode added to; on error as
 * options__parse_u64.
 */
int options__parse_events(const char *arg, unsigned *events, char *err, size_t err_size);

/* Frees what options__parse_args compiled. */
void options__free(struct options *opts);

/*
 * Parses "sleeping,blocked" into a mask of 1 << enum jbpf_state; on error as
 * options__parse_u64.
 */
int options__parse_states(const char *arg, unsigned *mask, char *err, size_t err_size);

enum options_result {
	OPTIONS_RUN,        /* go on and record */
	OPTIONS_DONE,       /* --help or --version was printed: exit 0 */
	OPTIONS_USAGE,      /* a mistake was reported: exit 2 */
	OPTIONS_FAILED,     /* --agent-path found no agent, and said so: exit 1 */
};

enum options_result options__parse_args(int argc, char **argv, struct options *opts);
void help__print(FILE *out);

/* Parses --group-by's word (process, service, executable, none); on error as options__parse_u64. */
int options__parse_group_by(const char *arg, enum view_process_root *out, char *err, size_t err_size);

/*
 * Parses a whole decimal integer in [min, max]. On error writes a one-line
 * reason naming option into err and returns -1.
 */
int options__parse_u64(const char *option, const char *arg, uint64_t min, uint64_t max, uint64_t *out,
	      char *err, size_t err_size);

/*
 * Parses a duration: a decimal number with an optional unit, ns, us, ms, s, m
 * or h; a bare number is in default_unit_ns. Result in nanoseconds, in
 * [min_ns, max_ns]. On error as options__parse_u64.
 */
int options__parse_duration(const char *option, const char *arg, uint64_t default_unit_ns, uint64_t min_ns,
		   uint64_t max_ns, uint64_t *out_ns, char *err, size_t err_size);

/*
 * Parses a size: a decimal number with an optional K, M or G (powers of
 * 1024), in [min, max]. On error as options__parse_u64.
 */
int options__parse_size(const char *option, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
	       size_t err_size);

/* The output format a file name implies, or -1 if its extension says nothing. */
int options__format_from_path(const char *path);
/* Parses "flamegraph", "collapsed", "text" or "pprof"; -1 for anything else. */
int options__parse_format(const char *arg, enum output_format *format);
/*
 * Compiles a --include or --exclude pattern (POSIX extended regular
 * expression); on error as options__parse_u64.
 */
int options__parse_pattern(const char *option, const char *arg, regex_t *re, char *err, size_t err_size);

#endif /* JBPF_OPTIONS_H */
