/*
 * oracle: the BPF walk against the agent (contract in oracle.h).
 */
#include "oracle.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti-stub/stream.h"
#include "user/record/decode.h"

/* Java frames compared per sample: the agent sends at most this many. */
#define ORACLE_MAX_FRAMES JBPF_STREAM_MAX_FRAMES

struct oracle {
	struct walked *walked;
	struct oracle_stats stats;
	FILE *log;
	struct walked_method bpf[ORACLE_MAX_FRAMES];
};

struct oracle *oracle__new(struct walked *walked)
{
	struct oracle *o = calloc(1, sizeof(*o));
	const char *path = getenv("JBPFPROF_ORACLE_LOG");

	if (!o)
		return NULL;
	o->walked = walked;
	if (path && *path)
		o->log = fopen(path, "we");
	return o;
}

void oracle__free(struct oracle *o)
{
	if (!o)
		return;
	if (o->log)
		fclose(o->log);
	free(o);
}

/* The kind the agent's walk gave (jvmti-stub/codewalk.h); ORACLE_KINDS when it did not know. */
static enum oracle_kind agent_kind(uint32_t kind)
{
	switch (kind & JBPF_FRAME_KIND_MASK) {
	case JBPF_FRAME_INTERPRETED:
		return ORACLE_INTERPRETED;
	case JBPF_FRAME_INLINED:
		return ORACLE_INLINED;
	case JBPF_FRAME_COMPILED:
		return ORACLE_COMPILED; /* C1 or C2 */
	default:
		return ORACLE_KINDS;
	}
}

/* The walk's kind (hotspot/names.h); ORACLE_KINDS for a native method's frame or none. */
static enum oracle_kind bpf_kind(uint8_t kind)
{
	switch (kind) {
	case HOTSPOT_FRAME_INTERPRETED:
		return ORACLE_INTERPRETED;
	case HOTSPOT_FRAME_C1:
	case HOTSPOT_FRAME_C2:
		return ORACLE_COMPILED;
	case HOTSPOT_FRAME_INLINED:
		return ORACLE_INLINED;
	default:
		return ORACLE_KINDS;
	}
}

static const char *agent_name(const struct javamap *map, uint64_t method_id)
{
	const char *name = javamap__method(map, method_id, NULL);

	return name ? name : "[unknown Java method]";
}

static void log_difference(struct oracle *o, const struct jbpf_sample *s, const struct join_trace *t,
			   const struct javamap *map, int n, unsigned stop)
{
	if (!o->log)
		return;
	const struct jbpf_java_frame *java = decode__sample_java_frames(s);

	fprintf(o->log, "sample tid %u at %llu ns, the agent's %lld ns later\nagent:", s->tid,
		(unsigned long long)s->time_ns, (long long)(t->time_ns - s->time_ns));
	for (uint32_t k = 0; k < t->frame_count; k++)
		fprintf(o->log, " %s@%d/%u", agent_name(map, t->frames[k].method_id), t->frames[k].bci,
			t->frames[k].kind & JBPF_FRAME_KIND_MASK);
	fprintf(o->log, "\nbpf:  ");
	for (int k = 0; k < n; k++)
		fprintf(o->log, " %s@%d/%u", o->bpf[k].name, o->bpf[k].bci, o->bpf[k].kind);
	if (stop)
		fprintf(o->log, " [stopped: %s]", walked__stop_reason(stop));
	fprintf(o->log, "\nwalk: ");
	for (unsigned k = 0; k < s->java_len; k++)
		fprintf(o->log, " %c", "?ICSX"[java[k].kind <= JBPF_JAVA_STOP ? java[k].kind : 0]);
	fprintf(o->log, "\n\n");
}

/*
 * Whether the sample's innermost Java frame is interpreted and runs at the
 * sampled pc (no native frame inside it): the one whose bcp the walk takes
 * from r13 (bpf/hotspot.bpf.h, hotspot_live_bcp).
 */
static bool running_interpreted(const struct jbpf_sample *s)
{
	const struct jbpf_java_frame *java = decode__sample_java_frames(s);

	return s->java_len && java[0].kind == JBPF_JAVA_INTERPRETED && java[0].native_before == 0 && java[0].pc;
}

void oracle__compare(void *ctx, const struct jbpf_sample *s, const struct join_trace *t, const struct javamap *map)
{
	struct oracle *o = ctx;
	unsigned stop;
	int n = walked__methods(o->walked, s, o->bpf, ORACLE_MAX_FRAMES, &stop);
	bool same = (uint32_t)n == t->frame_count;

	o->stats.samples++;
	if (!n)
		o->stats.bpf_none++;
	if (stop)
		o->stats.bpf_stopped++;
	for (int k = 0; same && k < n; k++)
		same = !strcmp(o->bpf[k].name, agent_name(map, t->frames[k].method_id));
	if (!same) {
		log_difference(o, s, t, map, n, stop);
		return;
	}
	o->stats.same_methods++;
	for (int k = 0; k < n; k++) {
		enum oracle_kind a = agent_kind(t->frames[k].kind), b = bpf_kind(o->bpf[k].kind);

		if (k == 0 && running_interpreted(s) && t->frames[k].bci >= 0 && o->bpf[k].bci >= 0) {
			o->stats.live_bcis++;
			o->stats.live_differ += t->frames[k].bci != o->bpf[k].bci;
		} else if (t->frames[k].bci >= 0 && o->bpf[k].bci >= 0) {
			o->stats.bci_pairs++;
			o->stats.same_bci += t->frames[k].bci == o->bpf[k].bci;
			same &= t->frames[k].bci == o->bpf[k].bci;
		}
		if (a < ORACLE_KINDS && b < ORACLE_KINDS) {
			o->stats.kind_pairs++;
			o->stats.same_kind += a == b;
			o->stats.kinds[b][a]++;
			same &= a == b;
		}
	}
	if (!same)
		log_difference(o, s, t, map, n, stop);
}

void oracle__stats(const struct oracle *o, struct oracle_stats *out)
{
	*out = o->stats;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 100.0;
}

static const char *const kind_names[ORACLE_KINDS] = {
	[ORACLE_INTERPRETED] = "interpreted",
	[ORACLE_COMPILED] = "compiled",
	[ORACLE_INLINED] = "inlined",
};

/* "; kinds that differ, the walk's/the agent's: compiled/inlined N, ..." into buf at *len, or nothing. */
static void describe_differences(const struct oracle_stats *st, char *buf, size_t size, size_t *len)
{
	const char *sep = "; kinds that differ, the walk's/the agent's: ";

	for (int b = 0; b < ORACLE_KINDS; b++)
		for (int a = 0; a < ORACLE_KINDS; a++) {
			int w;

			if (a == b || !st->kinds[b][a] || *len >= size)
				continue;
			w = snprintf(buf + *len, size - *len, "%s%s/%s %llu", sep, kind_names[b], kind_names[a],
				     (unsigned long long)st->kinds[b][a]);
			*len += w > 0 ? (size_t)w : 0;
			sep = ", ";
		}
}

void oracle__describe(const struct oracle *o, char *buf, size_t size)
{
	const struct oracle_stats *st = &o->stats;
	size_t len;
	int w;

	buf[0] = '\0';
	if (!st->samples || !size)
		return;
	w = snprintf(buf, size,
		     "BPF walk against the agent: %llu samples, %.1f%% the same methods (%llu without Java frames, "
		     "%llu ended early), %.1f%% of %llu bytecode indexes and %.1f%% of %llu kinds the same (%llu "
		     "running interpreted frames' bytecode indexes not compared, the agent's stale in %llu)",
		     (unsigned long long)st->samples, share(st->same_methods, st->samples),
		     (unsigned long long)st->bpf_none, (unsigned long long)st->bpf_stopped,
		     share(st->same_bci, st->bci_pairs), (unsigned long long)st->bci_pairs,
		     share(st->same_kind, st->kind_pairs), (unsigned long long)st->kind_pairs,
		     (unsigned long long)st->live_bcis, (unsigned long long)st->live_differ);
	len = w > 0 ? (size_t)w : 0;
	describe_differences(st, buf, size, &len);
}
