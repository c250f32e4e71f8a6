/*
 * Option parsing: values, ranges, conflicts, and formats implied by file
 * names. Every mistake must be OPTIONS_USAGE, never a silent default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/types.h>

#include "bpf/jbpfprof.h"
#include "user/options.h"

#define ARGC(argv) ((int)(sizeof(argv) / sizeof((argv)[0])) - 1)

/* options__parse_args reports mistakes on stderr; keep the test output readable. */
static enum options_result parse_quietly(int argc, char **argv, struct options *opts)
{
	FILE *saved = stderr;
	enum options_result r;

	stderr = fopen("/dev/null", "w");
	r = options__parse_args(argc, argv, opts);
	fclose(stderr);
	stderr = saved;
	return r;
}

static void parse_u64_accepts_whole_numbers_in_range(void **state)
{
	char err[128];
	uint64_t v = 0;

	assert_int_equal(options__parse_u64("-F", "997", 1, 10000, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 997);
	assert_int_equal(options__parse_u64("-F", "1", 1, 10000, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(options__parse_u64("-F", "10000", 1, 10000, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 10000);
}

static void parse_u64_rejects_junk_and_range(void **state)
{
	const char *bad[] = { "", "abc", "99x", " 5", "-5", "+5", "1e3", "5 " };
	char err[128];
	uint64_t v = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(options__parse_u64("-F", bad[i], 1, 100, &v, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "-F"));
	}
	assert_int_equal(options__parse_u64("-F", "0", 1, 100, &v, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range (1 to 100)"));
	assert_int_equal(options__parse_u64("-F", "101", 1, 100, &v, err, sizeof(err)), -1);
	assert_int_equal(options__parse_u64("-F", "99999999999999999999999", 1, UINT64_MAX, &v, err, sizeof(err)), -1);
	assert_int_equal(v, 42);
}

static void parse_duration_units(void **state)
{
	const uint64_t s = 1000000000ull;
	char err[128];
	uint64_t ns;

	assert_int_equal(options__parse_duration("-d", "30", s, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 30 * s);
	assert_int_equal(options__parse_duration("-d", "1.5s", s, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 1500000000ull);
	assert_int_equal(options__parse_duration("-d", "200ms", s, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 200000000ull);
	assert_int_equal(options__parse_duration("-d", "2m", s, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 120 * s);
	assert_int_equal(options__parse_duration("-d", "1h", s, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 3600 * s);
	assert_int_equal(options__parse_duration("-d", "250us", 1, 1, UINT64_MAX / 2, &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 250000);
}

static void parse_duration_rejects(void **state)
{
	const char *bad[] = { "", "-1", "s", "10parsecs", "1.5.5", "ten", "nan", "inf" };
	char err[128];
	uint64_t ns = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(options__parse_duration("-d", bad[i], 1000000000ull, 1000000, 1000000000000ull, &ns, err,
						sizeof(err)),
				 -1);
	/* Below the minimum and above the maximum. */
	assert_int_equal(options__parse_duration("-d", "0", 1000000000ull, 1000000, 1000000000000ull, &ns, err, sizeof(err)), -1);
	assert_int_equal(options__parse_duration("-d", "2000s", 1000000000ull, 1, 1000000000000ull, &ns, err, sizeof(err)), -1);
	assert_int_equal(ns, 7);
}

static void defaults(void **state)
{
	char *argv[] = { "jbpfprof", "-p", "1234", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(argv), argv, &o), OPTIONS_RUN);
	assert_int_equal(o.nr_pids, 1);
	assert_int_equal(o.pids[0], 1234);
	assert_int_equal(o.frequency_hz, DEFAULT_FREQUENCY_HZ);
	assert_int_equal(o.duration_ns, 0);
	assert_int_equal(o.format, OUTPUT_FLAMEGRAPH);
	assert_int_equal(o.nr_outputs, 0);
	assert_false(o.threads);
	assert_false(o.all);
}

/* -e wall: one recorded wait per 50 ms of waiting unless --wait-interval says; a bare number is us. */
static void wait_interval(void **state)
{
	char *wall[] = { "jbpfprof", "-p", "1234", "-e", "wall", NULL };
	char *given[] = { "jbpfprof", "-p", "1234", "-e", "offcpu", "--wait-interval", "2500", NULL };
	char *too_short[] = { "jbpfprof", "-p", "1234", "-e", "wall", "--wait-interval", "50us", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(wall), wall, &o), OPTIONS_RUN);
	assert_int_equal(o.wait_interval_ns, 50000000ull);
	assert_int_equal(options__parse_args(ARGC(given), given, &o), OPTIONS_RUN);
	assert_int_equal(o.wait_interval_ns, 2500000ull);
	assert_int_equal(options__parse_args(ARGC(too_short), too_short, &o), OPTIONS_USAGE);
}

static void every_option(void **state)
{
	char *argv[] = { "jbpfprof", "-p", "1,2,3", "-d", "10", "-F", "997", "-o", "text",
			 "-f", "out.report", "--threads", "--top", "5", "-v", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(argv), argv, &o), OPTIONS_RUN);
	assert_int_equal(o.nr_pids, 3);
	assert_int_equal(o.pids[2], 3);
	assert_int_equal(o.duration_ns, 10000000000ull);
	assert_int_equal(o.frequency_hz, 997);
	assert_int_equal(o.format, OUTPUT_TEXT);
	assert_int_equal(o.nr_outputs, 1);
	assert_string_equal(o.output_paths[0], "out.report");
	assert_int_equal(o.output_formats[0], OUTPUT_TEXT);
	assert_true(o.threads);
	assert_int_equal(o.text_top, 5);
	assert_int_equal(o.verbose, 1);
}

static void format_from_file_name(void **state)
{
	char *html[] = { "jbpfprof", "-a", "-f", "x.html", NULL };
	char *collapsed[] = { "jbpfprof", "-a", "-f", "dir.d/x.collapsed", NULL };
	char *txt[] = { "jbpfprof", "-a", "-f", "x.txt", NULL };
	char *explicit[] = { "jbpfprof", "-a", "-o", "flamegraph", "-f", "x.txt", NULL };
	char *dash[] = { "jbpfprof", "-a", "-f", "-", NULL };
	char *unknown[] = { "jbpfprof", "-a", "-f", "x.pdf", NULL };
	char *dot_in_dir[] = { "jbpfprof", "-a", "-f", "out.d/profile", NULL };
	char *pprof[] = { "jbpfprof", "-a", "-f", "rec.pb.gz", NULL };
	char *otlp[] = { "jbpfprof", "-a", "-f", "rec.otlp", NULL };
	char *otlp_asked[] = { "jbpfprof", "-a", "-o", "otlp", "-f", "rec.data", NULL };
	char *several[] = { "jbpfprof", "-a", "-o", "text", "-f", "rec.pprof", "-f", "x.collapsed", "-f", "report",
			    NULL };
	char *twice[] = { "jbpfprof", "-a", "-f", "x.html", "-f", "x.html", NULL };
	char *bad_regex[] = { "jbpfprof", "-a", "--include", "(unclosed", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(html), html, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_FLAMEGRAPH);
	assert_int_equal(options__parse_args(ARGC(collapsed), collapsed, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_COLLAPSED);
	assert_int_equal(options__parse_args(ARGC(txt), txt, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_COLLAPSED);
	assert_int_equal(options__parse_args(ARGC(explicit), explicit, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_FLAMEGRAPH);
	assert_int_equal(options__parse_args(ARGC(dash), dash, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_COLLAPSED);
	assert_int_equal(options__parse_args(ARGC(pprof), pprof, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_PPROF);
	assert_int_equal(options__parse_args(ARGC(otlp), otlp, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_OTLP);
	assert_int_equal(options__parse_args(ARGC(otlp_asked), otlp_asked, &o), OPTIONS_RUN);
	assert_int_equal(o.output_formats[0], OUTPUT_OTLP);
	assert_int_equal(options__parse_args(ARGC(several), several, &o), OPTIONS_RUN);
	assert_int_equal(o.nr_outputs, 3);
	assert_int_equal(o.output_formats[0], OUTPUT_PPROF);
	assert_int_equal(o.output_formats[1], OUTPUT_COLLAPSED);
	assert_int_equal(o.output_formats[2], OUTPUT_TEXT); /* -o for the name that implies nothing */
	assert_int_equal(parse_quietly(ARGC(twice), twice, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(bad_regex), bad_regex, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(unknown), unknown, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(dot_in_dir), dot_in_dir, &o), OPTIONS_USAGE);
	assert_string_equal(output__writer(OUTPUT_FLAMEGRAPH)->extension, "html");
	assert_string_equal(output__writer(OUTPUT_COLLAPSED)->extension, "collapsed");
	assert_string_equal(output__writer(OUTPUT_TEXT)->extension, "txt");
	assert_string_equal(output__writer(OUTPUT_PPROF)->extension, "pb.gz");
}

static void usage_mistakes(void **state)
{
	char *none[] = { "jbpfprof", NULL };
	char *both[] = { "jbpfprof", "-a", "-p", "1", NULL };
	char *dup[] = { "jbpfprof", "-p", "5,5", NULL };
	char *empty_item[] = { "jbpfprof", "-p", "5,", NULL };
	char *zero_pid[] = { "jbpfprof", "-p", "0", NULL };
	char *freq_high[] = { "jbpfprof", "-a", "-F", "10001", NULL };
	char *bad_format[] = { "jbpfprof", "-a", "-o", "svg", NULL };
	char *stray[] = { "jbpfprof", "-a", "extra", NULL };
	char *missing[] = { "jbpfprof", "-a", "-F", NULL };
	char *unknown[] = { "jbpfprof", "-a", "--frobnicate", NULL };
	char *empty_file[] = { "jbpfprof", "-a", "-f", "", NULL };
	struct options o;

	assert_int_equal(parse_quietly(ARGC(none), none, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(both), both, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(dup), dup, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(empty_item), empty_item, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(zero_pid), zero_pid, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(freq_high), freq_high, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(bad_format), bad_format, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(stray), stray, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(missing), missing, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(unknown), unknown, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(empty_file), empty_file, &o), OPTIONS_USAGE);
}

/* --unwind: tables by default, fp on request, anything else a mistake. */
static void unwind_method(void **state)
{
	char *plain[] = { "jbpfprof", "-a", NULL };
	char *tables[] = { "jbpfprof", "-a", "--unwind", "tables", NULL };
	char *fp[] = { "jbpfprof", "-a", "--unwind", "fp", NULL };
	char *bad[] = { "jbpfprof", "-a", "--unwind", "dwarf", NULL };
	char *missing[] = { "jbpfprof", "-a", "--unwind", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_int_equal(o.unwind, UNWIND_TABLES);
	assert_int_equal(options__parse_args(ARGC(fp), fp, &o), OPTIONS_RUN);
	assert_int_equal(o.unwind, UNWIND_FP);
	assert_int_equal(options__parse_args(ARGC(tables), tables, &o), OPTIONS_RUN);
	assert_int_equal(o.unwind, UNWIND_TABLES);
	assert_int_equal(parse_quietly(ARGC(bad), bad, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(missing), missing, &o), OPTIONS_USAGE);
}

/*
 * -e nativemem, with its interval and --leaks; and what it refuses: -a
 * (each process's allocator is probed), --leaks without it, a JFR file,
 * --continuous, the agent's Java stacks.
 */
static void native_memory(void **state)
{
	char *plain[] = { "jbpfprof", "-p", "1", "-e", "nativemem", NULL };
	char *leaks[] = { "jbpfprof", "-p", "1", "-e", "nativemem", "--leaks", "--alloc-interval", "64k", NULL };
	char *all[] = { "jbpfprof", "-a", "-e", "nativemem", NULL };
	char *leaks_alone[] = { "jbpfprof", "-p", "1", "--leaks", NULL };
	char *interval_cpu[] = { "jbpfprof", "-p", "1", "--alloc-interval", "64k", NULL };
	char *jfr[] = { "jbpfprof", "-p", "1", "-e", "nativemem", "-f", "x.jfr", NULL };
	char *continuous[] = { "jbpfprof", "-a", "-e", "nativemem", "--continuous", NULL };
	char *agent[] = { "jbpfprof", "-p", "1", "-e", "nativemem", "--java-stacks", "agent", NULL };
	struct options o;

	(void)state;
	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_int_equal(o.events, 1u << EVENT_NATIVEMEM);
	assert_false(o.leaks);
	assert_int_equal(o.alloc_interval, DEFAULT_ALLOC_INTERVAL);
	assert_int_equal(options__parse_args(ARGC(leaks), leaks, &o), OPTIONS_RUN);
	assert_true(o.leaks);
	assert_int_equal(o.alloc_interval, 64 << 10);
	assert_int_equal(parse_quietly(ARGC(all), all, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(leaks_alone), leaks_alone, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(interval_cpu), interval_cpu, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(jfr), jfr, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(continuous), continuous, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(agent), agent, &o), OPTIONS_USAGE);
}

/*
 * -e lock: off-CPU states only, --wakers and --min-block with it; not
 * without Java, not with the agent's stacks, not beside another event of
 * time, and no --wait-interval (every wait is recorded).
 */
static void lock_contention(void **state)
{
	char *plain[] = { "jbpfprof", "-p", "1", "-e", "lock", "--wakers", "--min-block", "1ms", NULL };
	char *no_java[] = { "jbpfprof", "-p", "1", "-e", "lock", "--no-java", NULL };
	char *agent[] = { "jbpfprof", "-p", "1", "-e", "lock", "--java-stacks", "agent", NULL };
	char *with_wall[] = { "jbpfprof", "-p", "1", "-e", "lock,wall", NULL };
	char *interval[] = { "jbpfprof", "-p", "1", "-e", "lock", "--wait-interval", "10ms", NULL };
	char *running[] = { "jbpfprof", "-p", "1", "-e", "lock", "--state", "running", NULL };
	struct options o;

	(void)state;
	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_int_equal(o.events, 1u << EVENT_LOCK);
	assert_true(o.wakers);
	assert_false(o.state_mask & (1u << JBPF_STATE_RUNNING));
	assert_int_equal(parse_quietly(ARGC(no_java), no_java, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(agent), agent, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(with_wall), with_wall, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(interval), interval, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(running), running, &o), OPTIONS_USAGE);
}

/* --no-unmounted: with an event of waits only; off unless given. */
static void no_unmounted_needs_waits(void **state)
{
	char *wall[] = { "jbpfprof", "-p", "1", "-e", "wall", "--no-unmounted", NULL };
	char *plain_wall[] = { "jbpfprof", "-p", "1", "-e", "wall", NULL };
	char *cpu[] = { "jbpfprof", "-p", "1", "--no-unmounted", NULL };
	struct options o;

	(void)state;
	assert_int_equal(options__parse_args(ARGC(wall), wall, &o), OPTIONS_RUN);
	assert_true(o.no_unmounted);
	assert_int_equal(options__parse_args(ARGC(plain_wall), plain_wall, &o), OPTIONS_RUN);
	assert_false(o.no_unmounted);
	assert_int_equal(parse_quietly(ARGC(cpu), cpu, &o), OPTIONS_USAGE);
}

/*
 * -e with several events: a list, or -e given again (the first replaces
 * the default cpu); one event of time at most, not both allocations, no
 * format that holds one event, a word that is no event named.
 */
static void several_events(void **state)
{
	char *plain[] = { "jbpfprof", "-p", "1", NULL };
	char *list[] = { "jbpfprof", "-p", "1", "-e", "cpu,alloc", NULL };
	char *twice[] = { "jbpfprof", "-p", "1", "-e", "wall", "-e", "nativemem", "--leaks", "-f", "x.pb.gz", NULL };
	char *two_times[] = { "jbpfprof", "-p", "1", "-e", "cpu,wall", NULL };
	char *both_heaps[] = { "jbpfprof", "-p", "1", "-e", "alloc,nativemem", NULL };
	char *collapsed[] = { "jbpfprof", "-p", "1", "-e", "cpu,nativemem", "-o", "collapsed", NULL };
	char *jfr_file[] = { "jbpfprof", "-p", "1", "-e", "cpu,alloc", "-f", "x.html", "-f", "x.jfr", NULL };
	char *text_and_html[] = { "jbpfprof", "-p", "1", "-e", "offcpu,nativemem", "-o", "text", "-f", "x", "-f", "x.html", NULL };
	char *unknown[] = { "jbpfprof", "-p", "1", "-e", "cpu,heap", NULL };
	char *empty_word[] = { "jbpfprof", "-p", "1", "-e", "cpu,", NULL };
	struct options o;

	(void)state;
	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_int_equal(o.events, 1u << EVENT_CPU);
	assert_false(options__several_events(&o));
	assert_int_equal(options__parse_args(ARGC(list), list, &o), OPTIONS_RUN);
	assert_int_equal(o.events, (1u << EVENT_CPU) | (1u << EVENT_ALLOC));
	assert_true(options__several_events(&o));
	assert_int_equal(options__parse_args(ARGC(twice), twice, &o), OPTIONS_RUN);
	assert_int_equal(o.events, (1u << EVENT_WALL) | (1u << EVENT_NATIVEMEM));
	assert_true(o.leaks);
	assert_int_equal(options__parse_args(ARGC(text_and_html), text_and_html, &o), OPTIONS_RUN);
	assert_true(options__records(&o, EVENT_OFFCPU) && options__records(&o, EVENT_NATIVEMEM));
	assert_int_equal(parse_quietly(ARGC(two_times), two_times, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(both_heaps), both_heaps, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(collapsed), collapsed, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(jfr_file), jfr_file, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(unknown), unknown, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(empty_word), empty_word, &o), OPTIONS_USAGE);
}

/* options__parse_events names the word that is no event, and the list of those that are. */
static void events_error(void **state)
{
	unsigned events = 0;
	char err[256];

	(void)state;
	assert_int_equal(options__parse_events("cpu,nativemem", &events, err, sizeof(err)), 0);
	assert_int_equal(events, (1u << EVENT_CPU) | (1u << EVENT_NATIVEMEM));
	assert_int_equal(options__parse_events("alloc,malloc", &events, err, sizeof(err)), -1);
	assert_string_equal(err, "-e: 'malloc' is not an event (cpu, wall, offcpu, alloc, nativemem or lock)");
}

/* --group-by: each grouping by its word; not given by default; older files' words are no options. */
static void group_by(void **state)
{
	char *plain[] = { "jbpfprof", "-a", NULL };
	char *service[] = { "jbpfprof", "-a", "--group-by", "service", NULL };
	char *none[] = { "jbpfprof", "-p", "1,2", "--group-by", "none", NULL };
	char *old_word[] = { "jbpfprof", "-a", "--group-by", "pid", NULL };
	char *bad[] = { "jbpfprof", "-a", "--group-by", "host", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_false(o.group_by_given);
	assert_int_equal(options__parse_args(ARGC(service), service, &o), OPTIONS_RUN);
	assert_true(o.group_by_given);
	assert_int_equal(o.group_by, VIEW_ROOT_SERVICE);
	assert_int_equal(options__parse_args(ARGC(none), none, &o), OPTIONS_RUN);
	assert_int_equal(o.group_by, VIEW_ROOT_NONE);
	assert_int_equal(parse_quietly(ARGC(old_word), old_word, &o), OPTIONS_USAGE);
	assert_int_equal(parse_quietly(ARGC(bad), bad, &o), OPTIONS_USAGE);
}

/* --push-api: the push API unless ingest is asked for; anything else a mistake. */
static void push_api(void **state)
{
	char *plain[] = { "jbpfprof", "-a", "--continuous", "--push", "http://h:4040", NULL };
	char *ingest[] = { "jbpfprof", "-a", "--continuous", "--push", "http://h:4040", "--push-api", "ingest", NULL };
	char *push[] = { "jbpfprof", "-a", "--continuous", "--push", "http://h:4040", "--push-api", "push", NULL };
	char *bad[] = { "jbpfprof", "-a", "--continuous", "--push", "http://h:4040", "--push-api", "otlp", NULL };
	char *alone[] = { "jbpfprof", "-a", "--push-api", "ingest", NULL };
	struct options o;

	assert_int_equal(options__parse_args(ARGC(plain), plain, &o), OPTIONS_RUN);
	assert_false(o.push_ingest);
	assert_int_equal(options__parse_args(ARGC(ingest), ingest, &o), OPTIONS_RUN);
	assert_true(o.push_ingest);
	assert_int_equal(options__parse_args(ARGC(push), push, &o), OPTIONS_RUN);
	assert_false(o.push_ingest);
	assert_int_equal(parse_quietly(ARGC(bad), bad, &o), OPTIONS_USAGE);
	/* A fleet option without --continuous. */
	assert_int_equal(parse_quietly(ARGC(alone), alone, &o), OPTIONS_USAGE);
}

static void too_many_pids(void **state)
{
	char list[OPTIONS_MAX_PIDS * 8 + 16];
	char *argv[] = { "jbpfprof", "-p", list, NULL };
	size_t used = 0;
	struct options o;

	for (int i = 1; i <= OPTIONS_MAX_PIDS + 1; i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d", i > 1 ? "," : "", i);
	assert_int_equal(parse_quietly(ARGC(argv), argv, &o), OPTIONS_USAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_u64_accepts_whole_numbers_in_range),
		cmocka_unit_test(parse_u64_rejects_junk_and_range),
		cmocka_unit_test(parse_duration_units),
		cmocka_unit_test(parse_duration_rejects),
		cmocka_unit_test(defaults),
		cmocka_unit_test(wait_interval),
		cmocka_unit_test(every_option),
		cmocka_unit_test(format_from_file_name),
		cmocka_unit_test(usage_mistakes),
		cmocka_unit_test(group_by),
		cmocka_unit_test(push_api),
		cmocka_unit_test(unwind_method),
		cmocka_unit_test(native_memory),
		cmocka_unit_test(lock_contention),
		cmocka_unit_test(no_unmounted_needs_waits),
		cmocka_unit_test(several_events),
		cmocka_unit_test(events_error),
		cmocka_unit_test(too_many_pids),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
