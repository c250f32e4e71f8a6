/*
 * labels: what a fleet profile is filed under, in the form Pyroscope's
 * ingest API takes it.
 *
 * A profile's name is "<service>.<event>{k=v,k=v}" (the `name` query
 * parameter of POST /ingest). Pyroscope's parser (api/model/labelset in
 * grafana/pyroscope) allows [A-Za-z0-9_.-/] in a service name and
 * [A-Za-z0-9_.] in a label name, reserves "__name__", and ends a value at
 * ',' or '}' with surrounding spaces trimmed. So:
 *
 *   --label K=V   is checked here and refused when K or V breaks those
 *                 rules or is one of the labels the profiler sets itself
 *                 (labels__parse);
 *   a service     comes from the target (its command line, its executable)
 *                 and is made to fit where it is found: other bytes become
 *                 '_' (service__sanitize, symbolizer/service.h); a value
 *                 read from a target (a container id) likewise
 *                 (labels__sanitize_value).
 *
 * Pure functions, no I/O, no allocation.
 */
#ifndef JBPF_FLEET_LABELS_H
#define JBPF_FLEET_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#define FLEET_MAX_LABELS 16          /* user labels; a few more are set by the profiler */
#define FLEET_LABEL_KEY_MAX 63       /* bytes, without the NUL */
#define FLEET_LABEL_VALUE_MAX 127

struct fleet_label {
	char key[FLEET_LABEL_KEY_MAX + 1];
	char value[FLEET_LABEL_VALUE_MAX + 1];
};

/* The label names the profiler sets on every profile; --label may not use them. */
#define FLEET_LABEL_HOST "hostname"
#define FLEET_LABEL_CONTAINER "container_id"

/*
 * Parses "K=V" into out. On error writes one line naming --label into err
 * and returns -1.
 */
int labels__parse(const char *arg, struct fleet_label *out, char *err, size_t err_size);

/* Whether key is a label name Pyroscope takes and the profiler does not set. */
bool labels__key_ok(const char *key);

/* in as a label value: printable ASCII but ',', '{', '}', '=', '"', '\\' and space kept; others '_'. */
void labels__sanitize_value(const char *in, char *out, size_t size);

/*
 * "<service>.<event>{k=v,...}" into buf, labels in the order given. The
 * parts must be sanitized already. Returns the length, or -1 when it does
 * not fit.
 */
int labels__app_name(char *buf, size_t size, const char *service, const char *event,
		     const struct fleet_label *labels, size_t nr);

#endif /* JBPF_FLEET_LABELS_H */
