/*
 * push: profiles sent from the spool to a Pyroscope server, in order, by
 * one of its two APIs.
 *
 * The push API (PUSH_API_CONNECT, the default), Pyroscope's stable one and
 * what Grafana's own agents send: push.v1.PusherService/Push called as the
 * Connect protocol does a unary call over HTTP/1.1, POST
 * <URL>/push.v1.PusherService/Push with Content-Type application/proto,
 * Connect-Protocol-Version 1, and a push.v1.PushRequest as the body
 * (push_request.h: the profile, its labels from the entry's query); a
 * Connect error comes back as a non-2xx status, which is read as below.
 *
 * OTLP (PUSH_API_OTLP, --push-otlp): POST <URL>/v1development/profiles,
 * Content-Type application/x-protobuf, an OTLP profiles export request
 * (push_request__otlp), to any OTLP/HTTP receiver of the profiles signal
 * (Pyroscope, the OpenTelemetry Collector); its statuses are read as below.
 *
 * /ingest (PUSH_API_INGEST), for servers older than the push API. The
 * contract, as checked against grafana/pyroscope's source
 * (pkg/ingester/pyroscope/ingest_handler.go, pkg/og/convert/pprof/profile.go,
 * api/model/labelset): POST <URL>/ingest with the query parameters
 *
 *   name=<service>.<cpu|wall>{k=v,...}  from=<unix s>  until=<unix s>
 *   sampleRate=<Hz>  spyName=jbpfprof  units=samples  aggregationType=sum
 *
 * and a multipart/form-data body whose part "profile" is the gzipped
 * pprof. The handler picks the body's format from `format` before it looks
 * at the content type, and `format=pprof` means a bare pprof body; a
 * multipart body is read as one only without `format`, so none is sent.
 *
 * One thread does the sending, so a slow or unreachable server never holds
 * up the recording: the session thread only takes the pusher's lock to set
 * a flag (pusher__kick) and the spool's lock, which this thread holds for
 * no longer than an unlink, never across a request or a message. The oldest entry goes first; a failure (no connection,
 * a 5xx, 408 or 429) keeps it and waits, 1 s doubling to PUSH_MAX_BACKOFF_S,
 * before trying again; the next success resets the wait. A profile the
 * server refuses as such (any other 4xx) would never be taken: it is
 * dropped, counted and said; so is an entry no request can be made of (a
 * name or a profile that does not read, left by a damaged spool). After
 * pusher__stop a request in flight is abandoned once the flush time is
 * out.
 */
#ifndef JBPF_FLEET_PUSH_H
#define JBPF_FLEET_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "user/fleet/spool.h"

#define PUSH_MAX_BACKOFF_S 60
#define PUSH_TIMEOUT_S 30      /* one request, connection included */

/*
 * The query string (without '?') for one profile into buf. app_name as
 * labels__app_name makes it; it is percent-encoded here. Returns the
 * length or -1 when it does not fit.
 */
int push__query(char *buf, size_t size, const char *app_name, int64_t from_s, int64_t until_s, unsigned rate_hz);

/* Percent-encodes s into buf (RFC 3986 unreserved kept). Returns the length or -1 when it does not fit. */
int push__escape(char *buf, size_t size, const char *s);

struct pusher;

enum push_api {
	PUSH_API_CONNECT,  /* push.v1.PusherService/Push */
	PUSH_API_INGEST,   /* /ingest */
	PUSH_API_OTLP,     /* an OTLP/HTTP receiver's /v1development/profiles (--push-otlp) */
};

struct push_stats {
	uint64_t sent;      /* profiles the server took */
	uint64_t failures;  /* attempts that failed and will be retried */
	uint64_t rejected;  /* profiles the server refused for good (4xx), or that no request could be made of, dropped */
};

/* Starts the thread that sends spool's entries to url by api. NULL after one line into err. */
struct pusher *pusher__start(const char *url, enum push_api api, struct spool *spool, int verbose, char *err,
			     size_t err_size);
/* Something new is in the spool. */
void pusher__kick(struct pusher *p);
/*
 * Sends what the spool holds for at most flush_s seconds more (stopping at
 * the first failure), then ends the thread and frees p. What is left stays
 * in the spool for the next start.
 */
void pusher__stop(struct pusher *p, unsigned flush_s);
void pusher__stats(struct pusher *p, struct push_stats *stats);

#endif /* JBPF_FLEET_PUSH_H */
