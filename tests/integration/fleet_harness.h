/*
 * fleet_harness: what tests/integration/test_fleet.c runs its tests with:
 * the Pyroscope stand-in server (tests/fleet/ingest_server.py) started,
 * stopped and read back (what it kept, in the order received: push
 * requests, OTLP exports, ingest queries, each decoded into a struct
 * received), the profiler's -v interval lines waited for, cpu_split
 * started, and the checks that every interval arrived once, in order.
 */
#ifndef JBPF_FLEET_HARNESS_H
#define JBPF_FLEET_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "harness.h"

#define SERVICE "cpu_split"

#define MAX_RECEIVED 4096

struct server {
	struct child proc;
	char *tmp;       /* its files, removed by server_free */
	char *dir;       /* what it keeps */
	char *portfile;
	int port;
};

/* One profile the server kept, or one file --dir wrote. */
struct received {
	char name[512];   /* the query's name, decoded: service.event{labels} */
	long long from, until; /* ms since the epoch */
	char file[600];   /* its pprof */
};

/* Removes dir and what it holds, and frees the name. */
void remove_tree(char *dir);

void sleep_ms(long ms);

long long now_ms(void);

/*
 * Starts the server on port (0: a free one) and waits, polling with a
 * deadline, for its port file. A port just freed by an earlier server may
 * take a moment to bind: the server then exits and is started again.
 */
void server_start(struct server *s, int port);

/* SIGTERM: it ends between requests (ingest_server.py). */
void server_stop(struct server *s);

void server_free(struct server *s);

char *server_url(const struct server *s);

/* What the server kept, in the order received. */
size_t server_received(const struct server *s, struct received *r, size_t max);

/* Whether r is a profile of service (the name up to ".event{"). */
int is_service(const struct received *r, const char *service);

/* The N of the last "interval N:" line of the profiler's stderr, 0 if none. */
long last_interval(const struct child *profiler);

/*
 * The profiles of service, in the order received: each interval once and
 * in order (from strictly increasing, until not decreasing). Returns how many.
 */
size_t assert_in_order_once(const struct received *r, size_t n, const char *service);

/* Every service's profiles in order and once. */
void assert_all_in_order_once(const struct received *r, size_t n);

int have_go(void);

/* `go tool pprof -raw FILE` reads it, and its samples have a frame named frame. */
void assert_pprof_reads(const char *file, const char *frame);

struct child *profiler_args_start(struct child *profiler, char *const args[]);

/* Waits for "interval N:" in the profiler's stderr; fails after timeout_s, saying where its threads are. */
void wait_interval(struct child *profiler, long n, int timeout_s);

/* SIGTERM, then its exit (it flushes the spool for up to 10 s). Returns the time it was sent. */
time_t profiler_term(struct child *profiler);

void start_cpu_split(struct child *w);

size_t count_prefix_files(const char *dir, const char *suffix);

/* Reads what the profiler has written so far without waiting: its stderr pipe never fills. */
void drain(struct child *profiler);

/* Fails with the profiler's stderr and where its threads are. */
void fail_stalled(struct child *profiler, const char *what);

/* Profiles of service the server has received so far. */
size_t server_count(const struct server *s, struct received *r, const char *service);

#endif /* JBPF_FLEET_HARNESS_H */
