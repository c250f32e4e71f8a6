/*
 * offcpu: threads that spend their time off CPU in known ways, for the
 * wall-clock and off-CPU modes (-e wall, -e offcpu) and their benchmarks.
 *
 *   offcpu mix                 named threads, one per way of waiting (below)
 *   offcpu idle N              N threads named "idle", blocked for good
 *   offcpu pingpong SECONDS    two threads bounce a byte through two pipes
 *
 * mix starts these threads, each named with pthread_setname_np so that a
 * profile's "[<name> tid=N]" frame says which one it is:
 *
 *   spin       a busy loop (spin_loop): always running or runnable
 *   nanosleep  nanosleep(20 ms) in a loop (nanosleep_loop)
 *   piperead   read() of one byte from a pipe (pipe_read_loop) that
 *   feeder     writes one byte every 50 ms and sleeps in between (feeder_loop)
 *   futex      FUTEX_WAIT with a 30 ms timeout on a word nobody wakes (futex_loop)
 *   stuck      read() of a pipe nobody writes (stuck_read): blocked from
 *              before "ready" to the end
 *   churn      creates one thread at a time and joins it (churn_loop); each
 *              is named "short" and lives about 100 ms (short_life): half
 *              spinning, half sleeping
 *
 * It prints "tid <tid> <name>" for each of the long-lived threads once every
 * one of them runs under its name, then "ready". For each short thread,
 * once it has been joined, churn prints one line with what that thread
 * measured of itself and what churn measured around it:
 *
 *   life <tid> <ns> <start> <outer ns> <outer start> <on-CPU ns> <runqueue ns> <unseen ns>
 *
 *   ns, start    its lifetime from its first to its last instruction, and
 *                the CLOCK_MONOTONIC time of the first: a lower bound of
 *                its life as the kernel sees it
 *   outer ns, outer start
 *                from just before pthread_create to the moment churn saw
 *                the thread leave /proc/self/task: an upper bound of it,
 *                since the kernel creates the thread inside the first, and
 *                removes it from /proc only at the end of its exit, after
 *                which it only switches away for the last time
 *                (pthread_join returns earlier: the kernel wakes the joiner
 *                as it releases the thread's memory, and the exit goes on
 *                after that, preemptible)
 *   on-CPU ns, runqueue ns
 *                the first two fields of its /proc/thread-self/schedstat,
 *                read just before its last instruction: its time on a CPU
 *                and waiting on a runqueue since the kernel created it
 *   unseen ns    how much of its life, from its first clock reading to its
 *                last, its sleep's requested 50 ms left out, the kernel
 *                counted neither on a CPU nor on a runqueue: on a virtual
 *                machine, time the host stole from it while it was current,
 *                which the on-CPU count leaves out
 *                (CONFIG_PARAVIRT_TIME_ACCOUNTING), interrupt time, which
 *                it leaves out too (CONFIG_IRQ_TIME_ACCOUNTING), and what
 *                the sleep overran (timer slack)
 *
 * so a test can tell which lives fell inside a recording and what they were.
 * Lines are flushed one by one. SIGTERM or SIGINT ends the process (exit
 * status 0).
 *
 * idle prints "ready" once all N threads wait in pthread_cond_wait on a
 * condition nobody signals, and exits on SIGTERM or SIGINT.
 *
 * pingpong prints "ready", then thread "ping" writes a byte to thread
 * "pong", which writes it back, for SECONDS seconds. It then prints
 * "start_realtime_ns <CLOCK_REALTIME at the start of the measurement>", one
 * line "bucket <i> <round trips>" for each whole second i from that start,
 * and "roundtrips_per_s <mean over the whole run>", and exits 0. A benchmark
 * that attaches a profiler part way reads the buckets that fell while it ran.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC 1000000000L
#define NS_PER_MS 1000000L
/* pingpong keeps one bucket per second; a benchmark runs seconds, not hours. */
#define MAX_BUCKETS 3600

static volatile unsigned long sink;

static long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_SEC, .tv_nsec = ns % NS_PER_SEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A line on stdout, written whole and flushed, whichever thread prints it. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	funlockfile(stdout);
}

static void die(const char *what)
{
	fprintf(stderr, "offcpu: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Blocks SIGTERM and SIGINT in the caller, so that the threads it creates
 * inherit the mask and only wait_for_stop() ever takes them.
 */
static sigset_t block_stop_signals(void)
{
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	return stop;
}

static int wait_for_stop(sigset_t stop)
{
	int sig;

	sigwait(&stop, &sig);
	fflush(stdout);
	/* _exit: the other threads are still blocked in their loops. */
	_exit(0);
}

/* ---- mix ---------------------------------------------------------------- */

enum mix_thread { SPIN, NANOSLEEP, PIPEREAD, FEEDER, FUTEX, STUCK, CHURN, NR_MIX };

static const char *const mix_names[NR_MIX] = { "spin", "nanosleep", "piperead", "feeder",
						"futex", "stuck", "churn" };

static pid_t mix_tids[NR_MIX];
/* Each long-lived thread passes it once named; main then prints the tids. */
static pthread_barrier_t mix_started;
static int feed_pipe[2];  /* feeder -> piperead */
static int stuck_pipe[2]; /* written by nobody; the write end stays open */
static _Atomic int futex_word;

static void started(enum mix_thread which)
{
	pthread_setname_np(pthread_self(), mix_names[which]);
	mix_tids[which] = gettid();
	pthread_barrier_wait(&mix_started);
}

static void spin_loop(void)
{
	for (;;)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

static void nanosleep_loop(void)
{
	for (;;)
		sleep_ns(20 * NS_PER_MS);
}

static void pipe_read_loop(void)
{
	char byte;

	for (;;)
		if (read(feed_pipe[0], &byte, 1) < 0 && errno != EINTR)
			die("read");
}

static void feeder_loop(void)
{
	for (;;) {
		sleep_ns(50 * NS_PER_MS);
		if (write(feed_pipe[1], "x", 1) != 1)
			die("write");
	}
}

static void futex_loop(void)
{
	for (;;) {
		struct timespec timeout = { .tv_nsec = 30 * NS_PER_MS };

		/* Relative timeout; the word stays 0 and nobody wakes it. */
		syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
	}
}

static void stuck_read(void)
{
	char byte;

	for (;;)
		if (read(stuck_pipe[0], &byte, 1) < 0 && errno != EINTR)
			die("read");
}

/* What a short thread measured of itself (see the top of the file). */
struct short_report {
	pid_t tid;
	long start_ns, life_ns;
	unsigned long long cpu_ns, runqueue_ns;
	long unseen_ns;
};

/* The first two fields of the calling thread's schedstat; zeros if unreadable. */
static void own_schedstat(unsigned long long *cpu_ns, unsigned long long *runqueue_ns)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	*cpu_ns = *runqueue_ns = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu %llu", cpu_ns, runqueue_ns) != 2)
		*cpu_ns = *runqueue_ns = 0;
	fclose(f);
}

/*
 * Now on CLOCK_MONOTONIC, and the calling thread's time on a CPU and on a
 * runqueue. The CPU time comes from CLOCK_THREAD_CPUTIME_ID, which brings
 * a running thread's count up to date, where schedstat's first field lags
 * by up to a tick; the runqueue time is complete, the caller being on a CPU.
 */
static void own_clocks(long *wall_ns, long *cpu_ns, unsigned long long *runqueue_ns)
{
	unsigned long long ignored;

	own_schedstat(&ignored, runqueue_ns);
	*cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	*wall_ns = clock_ns(CLOCK_MONOTONIC);
}

/* A short thread's whole life: 50 ms of spinning, then 50 ms asleep. */
static void *short_life(void *arg)
{
	struct short_report *report = arg;
	long start = clock_ns(CLOCK_MONOTONIC), spin_end = start + 50 * NS_PER_MS;
	long wall0, cpu0, wall1, cpu1;
	unsigned long long runqueue0, runqueue1;

	pthread_setname_np(pthread_self(), "short");
	own_clocks(&wall0, &cpu0, &runqueue0);
	while (clock_ns(CLOCK_MONOTONIC) < spin_end)
		for (int i = 0; i < 500; i++)
			sink += (unsigned long)i;
	sleep_ns(50 * NS_PER_MS);
	own_clocks(&wall1, &cpu1, &runqueue1);
	report->unseen_ns = (wall1 - wall0) - 50 * NS_PER_MS - (cpu1 - cpu0) - (long)(runqueue1 - runqueue0);
	if (report->unseen_ns < 0)
		report->unseen_ns = 0;
	report->tid = gettid();
	report->start_ns = start;
	own_schedstat(&report->cpu_ns, &report->runqueue_ns);
	report->life_ns = clock_ns(CLOCK_MONOTONIC) - start;
	return NULL;
}

static void churn_loop(void)
{
	for (;;) {
		struct short_report report;
		long outer_start = clock_ns(CLOCK_MONOTONIC), outer_end;
		char task[48];
		pthread_t t;

		if (pthread_create(&t, NULL, short_life, &report))
			die("pthread_create");
		pthread_join(t, NULL);
		snprintf(task, sizeof(task), "/proc/self/task/%d", (int)report.tid);
		while (access(task, F_OK) == 0)
			sleep_ns(20 * 1000);
		outer_end = clock_ns(CLOCK_MONOTONIC);
		say("life %d %ld %ld %ld %ld %llu %llu %ld\n", (int)report.tid, report.life_ns, report.start_ns,
			outer_end - outer_start, outer_start, report.cpu_ns, report.runqueue_ns,
			report.unseen_ns);
	}
}

static void *mix_thread(void *arg)
{
	enum mix_thread which = (enum mix_thread)(long)arg;

	started(which);
	switch (which) {
	case SPIN:
		spin_loop();
		break;
	case NANOSLEEP:
		nanosleep_loop();
		break;
	case PIPEREAD:
		pipe_read_loop();
		break;
	case FEEDER:
		feeder_loop();
		break;
	case FUTEX:
		futex_loop();
		break;
	case STUCK:
		stuck_read();
		break;
	case CHURN:
		churn_loop();
		break;
	case NR_MIX:
		break;
	}
	return NULL;
}

static int run_mix(void)
{
	sigset_t stop = block_stop_signals();

	if (pipe(feed_pipe) || pipe(stuck_pipe))
		die("pipe");
	pthread_barrier_init(&mix_started, NULL, NR_MIX + 1);
	for (long i = 0; i < NR_MIX; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, mix_thread, (void *)i))
			die("pthread_create");
	}
	pthread_barrier_wait(&mix_started);
	for (int i = 0; i < NR_MIX; i++)
		say("tid %d %s\n", (int)mix_tids[i], mix_names[i]);
	say("ready\n");
	return wait_for_stop(stop);
}

/* ---- idle --------------------------------------------------------------- */

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_never = PTHREAD_COND_INITIALIZER; /* never signalled */
static pthread_cond_t idle_counted = PTHREAD_COND_INITIALIZER;
static long idle_waiting;

static void *idle_thread(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "idle");
	pthread_mutex_lock(&idle_lock);
	idle_waiting++;
	pthread_cond_signal(&idle_counted);
	/* The loop only guards against spurious wake-ups. */
	for (;;)
		pthread_cond_wait(&idle_never, &idle_lock);
	return NULL;
}

static int run_idle(long n)
{
	sigset_t stop = block_stop_signals();
	pthread_attr_t attr;

	/* Small stacks: a thousand threads that never call anything deep. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, idle_thread, NULL))
			die("pthread_create");
	}
	/*
	 * A thread counts itself holding the lock, which pthread_cond_wait
	 * releases only as it waits: once main holds it with every thread
	 * counted, each of them has entered its wait.
	 */
	pthread_mutex_lock(&idle_lock);
	while (idle_waiting < n)
		pthread_cond_wait(&idle_counted, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	say("ready\n");
	return wait_for_stop(stop);
}

/* ---- pingpong ----------------------------------------------------------- */

static int ping_pipe[2], pong_pipe[2];
static long pingpong_ns;
static long buckets[MAX_BUCKETS];

static void *pong_thread(void *unused)
{
	(void)unused;
	char byte;

	pthread_setname_np(pthread_self(), "pong");
	/* Echo until ping closes its end. */
	while (read(ping_pipe[0], &byte, 1) == 1)
		if (write(pong_pipe[1], &byte, 1) != 1)
			die("write");
	return NULL;
}

/* Round trips until pingpong_ns have passed, counted per second since start. */
static void ping_loop(long start)
{
	long end = start + pingpong_ns;
	char byte = 'x';

	for (;;) {
		long now = clock_ns(CLOCK_MONOTONIC);

		if (now >= end)
			break;
		if (write(ping_pipe[1], &byte, 1) != 1 || read(pong_pipe[0], &byte, 1) != 1)
			die("ping");
		buckets[(now - start) / NS_PER_SEC]++;
	}
}

static int run_pingpong(long seconds)
{
	long start, realtime_start, total = 0;
	pthread_t pong;

	if (seconds < 1 || seconds > MAX_BUCKETS) {
		fprintf(stderr, "offcpu: pingpong takes 1 to %d seconds\n", MAX_BUCKETS);
		return 2;
	}
	pingpong_ns = seconds * NS_PER_SEC;
	if (pipe(ping_pipe) || pipe(pong_pipe))
		die("pipe");
	pthread_setname_np(pthread_self(), "ping");
	if (pthread_create(&pong, NULL, pong_thread, NULL))
		die("pthread_create");
	say("ready\n");
	realtime_start = clock_ns(CLOCK_REALTIME);
	start = clock_ns(CLOCK_MONOTONIC);
	ping_loop(start);
	close(ping_pipe[1]);
	pthread_join(pong, NULL);
	say("start_realtime_ns %ld\n", realtime_start);
	for (long i = 0; i < seconds; i++) {
		say("bucket %ld %ld\n", i, buckets[i]);
		total += buckets[i];
	}
	say("roundtrips_per_s %.0f\n", (double)total / (double)seconds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "mix"))
		return run_mix();
	if (argc == 3 && !strcmp(argv[1], "idle") && atol(argv[2]) > 0)
		return run_idle(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "pingpong"))
		return run_pingpong(atol(argv[2]));
	fprintf(stderr, "usage: offcpu mix | offcpu idle N | offcpu pingpong SECONDS\n");
	return 2;
}
