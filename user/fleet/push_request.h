/*
 * push_request: one spool entry as a push API takes it.
 *
 * Pyroscope's (push_request__encode): a
 * push.v1.PushRequest (proto/pyroscope/push/v1/push.proto) of one series
 * with one sample: the entry's gzipped pprof, labelled from the entry's
 * ingest query (push.h), whose name is "<service>.<event>{k=v,...}":
 *
 *   service_name   <service>
 *   __name__       the profile's kind, as Pyroscope's own agents name it:
 *                  process_cpu for cpu; wall; offcpu
 *   k              v, for each pair of the braces, in their order
 *
 * labels.c made those names and values, and its rules leave no ',', '{',
 * '}' or '=' in a value nor a '{' in a service, so the split is exact. The
 * spool keeps the ingest query (entries written by an older profiler
 * included), so either API sends any entry.
 */
#ifndef JBPF_FLEET_PUSH_REQUEST_H
#define JBPF_FLEET_PUSH_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* Labels of one request at most: service_name, __name__ and the name's pairs. */
#define PUSH_REQUEST_MAX_LABELS 64

/*
 * The request for the entry (query: its first line; profile, len: the
 * pprof), id naming the sample (a UUID), packed into *out (malloc'd, the
 * caller frees). 0; -EINVAL when the query names no profile as above (the
 * entry is then one no server would take); -ENOMEM.
 */
int push_request__encode(const char *query, const void *profile, size_t len, const char *id, uint8_t **out,
			 size_t *out_len);

/*
 * The entry as an OTLP profiles export request (output/otlp.c), for an
 * OTLP/HTTP receiver: the pprof read back and written again, its resource
 * labelled from the query: service.name <service>, host.name <hostname>,
 * container.id <container_id>, and each other pair as it is. *out
 * malloc'd, the caller frees. 0; -EINVAL when the query names no profile
 * or the pprof does not read (said in err); -ENOMEM.
 */
int push_request__otlp(const char *query, const void *profile, size_t len, uint8_t **out, size_t *out_len,
		       char *err, size_t err_size);

/* A random version 4 UUID, lowercase, into buf (at least 37 bytes). */
void push_request__uuid(char *buf, size_t size);

#endif /* JBPF_FLEET_PUSH_REQUEST_H */
