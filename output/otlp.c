/*
 * otlp: the profile as OpenTelemetry's profiles signal, profiles/v1development
 * at release 1.10.0 (proto/otlp/): an ExportProfilesServiceRequest, the
 * body an OTLP/HTTP receiver takes, whose fields are those of ProfilesData,
 * so the same bytes are the signal's file form. Unlike pprof it is not
 * gzipped. Experimental, as the signal is.
 *
 *   dictionary      the tables every profile refers to, each beginning
 *                   with its zero entry, as the format requires:
 *     strings       ""; then every name, key and unit
 *     mappings      one per file native code ran from (its path, its
 *                   build-id as process.executable.build_id.gnu), and one
 *                   per other kind of frame, named as pprof.c names them
 *     functions,    one each per code frame: the name without the kind's
 *     locations     suffix ("_[k]", "_[j]"...), the system name the frame's
 *                   text; each location has profile.frame.type: kernel,
 *                   native or jvm (the kinds OpenTelemetry names)
 *     stacks        one per distinct sequence of code frames, leaf first
 *     attributes    thread.name, thread.id and state (a wall-clock
 *                   stack's: running, sleeping...) of the samples
 *   resource_profiles   one per process the stacks begin with (and one
 *                   for stacks that begin with none, with the attributes
 *                   output_meta gives, none by default):
 *                   service.name (the program, else the name),
 *                   process.executable.name, process.pid, container.id;
 *                   one scope, "jbpfprof", with one profile per sample
 *                   type: cpu as samples/count and cpu/nanoseconds (the
 *                   count times the mean period), wall and off-CPU as
 *                   wall or offcpu/nanoseconds; period cpu or
 *                   wall/nanoseconds; the recording's start and duration
 *
 * A sample is one stack of the profile with its count; its process frame
 * is its resource, its thread and state frames its attributes. Memory is
 * proportional to the profile.
 */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "emit.h"
#include "mappings.h"
#include "profile/timeline.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest ORequest;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary ODictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles OResourceProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles OScopeProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile OProfile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType OValueType;
typedef Opentelemetry__Proto__Profiles__V1development__Sample OSample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping OMapping;
typedef Opentelemetry__Proto__Profiles__V1development__Stack OStack;
typedef Opentelemetry__Proto__Profiles__V1development__Location OLocation;
typedef Opentelemetry__Proto__Profiles__V1development__Line OLine;
typedef Opentelemetry__Proto__Profiles__V1development__Function OFunction;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit OAttribute;
typedef Opentelemetry__Proto__Profiles__V1development__Link OLink;
typedef Opentelemetry__Proto__Common__V1__AnyValue OAnyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue OKeyValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope OScope;
typedef Opentelemetry__Proto__Resource__V1__Resource OResource;

/* A table that numbers distinct strings from 0 in the order first given (a profile's frame ids). */
static int64_t table_id(struct profile *table, const char *s)
{
	return profile__intern(table, s, FRAME_KIND_NATIVE);
}

/* Attributes of a process's resource: service.name, process.executable.name, process.pid, container.id. */
#define PROCESS_ATTRIBUTES 4
/* Attributes of a sample (thread.name, thread.id, state). */
#define SAMPLE_ATTRIBUTES 3
/* Sample types of one recording: cpu has two. */
#define MAX_SAMPLE_TYPES 2

struct resource {
	OResourceProfiles rp;
	OResourceProfiles *rp_ptr;
	OResource resource;
	OKeyValue *kv;          /* room for cap_attributes */
	OKeyValue **kv_ptrs;
	OAnyValue *values;
	size_t cap_attributes;
	OScopeProfiles sp;
	OScopeProfiles *sp_ptr;
	OProfile profiles[MAX_SAMPLE_TYPES];
	OProfile *profile_ptrs[MAX_SAMPLE_TYPES];
	OSample **samples[MAX_SAMPLE_TYPES];
	size_t nr_samples;
};

struct builder {
	ORequest request;
	ODictionary dict;
	struct profile *strings, *attribute_keys, *stack_keys;
	char **string_items;
	OMapping *mappings, **mapping_ptrs;
	struct mappings mapping_of;   /* a code frame's mapping index */
	OFunction *functions, **function_ptrs;
	OLocation *locations, **location_ptrs;
	OLine *lines, **line_ptrs;
	int32_t *location_of_frame;   /* 0: not a code frame */
	OAttribute *attributes, **attribute_ptrs;
	OAnyValue *attribute_values;
	size_t cap_attributes;
	int32_t frame_type_attribute[3];
	OStack *stacks, **stack_ptrs;
	int32_t *stack_locations;
	OLink link0, *link_ptr;
	OScope scope;
	struct resource *resources;   /* [0]: stacks with no process frame; then one per process frame */
	size_t cap_resources;
	OResourceProfiles **resource_ptrs;
	size_t nr_resources;
	int32_t *resource_of_frame;   /* resource index for a process frame */
	OSample *samples;
	int64_t *values;
	int32_t *sample_attributes;
	/* With a timeline: each stack's spans (profile/timeline.h), grouped by stack */
	size_t *span_first;       /* stack -> index of its first in span_order; one more at the end */
	uint32_t *span_order;     /* span indexes, stack by stack */
	int64_t *timed_values;    /* a value per span and sample type */
	uint64_t *timestamps;     /* a time per span and sample type */
	OValueType sample_types[MAX_SAMPLE_TYPES], period_type;
	size_t nr_sample_types;
	bool bytes;               /* an allocation profile: one sample type, alloc_space in bytes */
};

/* OpenTelemetry's profile.frame.type of a kind of code frame; NULL for none it names. */
static const char *frame_type(enum frame_kind kind)
{
	switch (kind) {
	case FRAME_KIND_KERNEL:
		return "kernel";
	case FRAME_KIND_NATIVE:
	case FRAME_KIND_JIT:
		return "native";
	case FRAME_KIND_JAVA:
	case FRAME_KIND_JAVA_INLINED:
	case FRAME_KIND_JAVA_INTERP:
	case FRAME_KIND_JAVA_COMPILED:
		return "jvm";
	default:
		return NULL;
	}
}

static bool is_code(enum frame_kind kind)
{
	return output__kind_mapping(kind) != NULL;
}

static int32_t string_id(struct builder *b, const char *s)
{
	int64_t id = table_id(b->strings, s);

	return id < 0 || id > INT32_MAX ? -1 : (int32_t)id;
}

/* Room for one more attribute; the table starts with its zero entry. 0 or -ENOMEM. */
static int attributes_reserve(struct builder *b)
{
	size_t cap = b->cap_attributes ? b->cap_attributes * 2 : 64;
	OAttribute *attributes, **ptrs;
	OAnyValue *values;

	if (b->dict.n_attribute_table < b->cap_attributes)
		return 0;
	attributes = calloc(cap, sizeof(*attributes));
	values = calloc(cap, sizeof(*values));
	ptrs = calloc(cap, sizeof(*ptrs));
	if (!attributes || !values || !ptrs) {
		free(attributes);
		free(values);
		free(ptrs);
		return -ENOMEM;
	}
	if (b->dict.n_attribute_table) {
		memcpy(attributes, b->attributes, b->dict.n_attribute_table * sizeof(*attributes));
		memcpy(values, b->attribute_values, b->dict.n_attribute_table * sizeof(*values));
	} else {
		opentelemetry__proto__profiles__v1development__key_value_and_unit__init(&attributes[0]);
		b->dict.n_attribute_table = 1;
	}
	for (size_t i = 0; i < b->dict.n_attribute_table; i++) {
		attributes[i].value = i ? &values[i] : NULL;
		ptrs[i] = &attributes[i];
	}
	free(b->attributes);
	free(b->attribute_values);
	free(b->attribute_ptrs);
	b->attributes = attributes;
	b->attribute_values = values;
	b->attribute_ptrs = ptrs;
	b->cap_attributes = cap;
	b->dict.attribute_table = ptrs;
	return 0;
}

/*
 * The index of the attribute key = value (a string, or the number when
 * str is NULL) in the dictionary, adding it if new; -1 out of memory.
 */
static int32_t attribute_id(struct builder *b, const char *key, const char *str, int64_t num)
{
	int32_t key_id = string_id(b, key), value_id = str ? string_id(b, str) : 0;
	OAttribute *a;
	OAnyValue *v;
	int64_t id;
	char *text;

	if (key_id < 0 || value_id < 0 ||
	    (str ? asprintf(&text, "%s\1s\1%s", key, str) : asprintf(&text, "%s\1i\1%" PRId64, key, num)) < 0)
		return -1;
	id = table_id(b->attribute_keys, text);
	free(text);
	/* Table entry n is attribute n + 1: index 0 is the zero attribute. */
	if (id < 0 || id >= INT32_MAX - 1 || attributes_reserve(b))
		return -1;
	if ((size_t)id + 1 < b->dict.n_attribute_table)
		return (int32_t)id + 1;
	a = &b->attributes[id + 1];
	v = &b->attribute_values[id + 1];
	opentelemetry__proto__profiles__v1development__key_value_and_unit__init(a);
	opentelemetry__proto__common__v1__any_value__init(v);
	a->key_strindex = key_id;
	if (str) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX;
		v->string_value_strindex = value_id;
	} else {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = num;
	}
	a->value = v;
	b->attribute_ptrs[id + 1] = a;
	b->dict.n_attribute_table = (size_t)id + 2;
	return (int32_t)id + 1;
}

/* A new mapping named filename, with a build-id attribute unless it is ""; its index, or -1 (mappings_new_fn). */
static int64_t new_mapping(void *ctx, const char *filename, const char *build_id)
{
	struct builder *b = ctx;
	size_t n = b->dict.n_mapping_table;
	OMapping *m = &b->mappings[n];
	int32_t name = string_id(b, filename);

	opentelemetry__proto__profiles__v1development__mapping__init(m);
	if (name < 0)
		return -1;
	m->filename_strindex = name;
	if (build_id && *build_id) {
		int32_t a = attribute_id(b, "process.executable.build_id.gnu", build_id, 0);

		if (a < 0)
			return -1;
		/* Freed with the mappings (builder_free). */
		m->attribute_indices = malloc(sizeof(*m->attribute_indices));
		if (!m->attribute_indices)
			return -1;
		m->attribute_indices[0] = a;
		m->n_attribute_indices = 1;
	}
	b->mapping_ptrs[n] = m;
	b->dict.n_mapping_table = n + 1;
	return (int32_t)n;
}

/* Functions, lines and locations: one each per code frame, after the zero entries. */
static int add_frames(struct builder *b, const struct profile *profile)
{
	size_t nr = profile__frame_count(profile) + 1, nr_modules = profile__module_count(profile);

	b->mappings = calloc(1 + FRAME_KIND_NR + nr_modules, sizeof(*b->mappings));
	b->mapping_ptrs = calloc(1 + FRAME_KIND_NR + nr_modules, sizeof(*b->mapping_ptrs));
	b->functions = calloc(nr, sizeof(*b->functions));
	b->function_ptrs = calloc(nr, sizeof(*b->function_ptrs));
	b->locations = calloc(nr, sizeof(*b->locations));
	b->location_ptrs = calloc(nr, sizeof(*b->location_ptrs));
	b->lines = calloc(nr, sizeof(*b->lines));
	b->line_ptrs = calloc(nr, sizeof(*b->line_ptrs));
	b->location_of_frame = calloc(nr, sizeof(*b->location_of_frame));
	if (mappings__init(&b->mapping_of, profile, new_mapping, b) || !b->mappings || !b->mapping_ptrs ||
	    !b->functions || !b->function_ptrs ||
	    !b->locations || !b->location_ptrs || !b->lines || !b->line_ptrs || !b->location_of_frame)
		return -ENOMEM;
	b->dict.mapping_table = b->mapping_ptrs;
	b->dict.function_table = b->function_ptrs;
	b->dict.location_table = b->location_ptrs;
	opentelemetry__proto__profiles__v1development__mapping__init(&b->mappings[0]);
	b->mapping_ptrs[0] = &b->mappings[0];
	b->dict.n_mapping_table = 1;
	opentelemetry__proto__profiles__v1development__function__init(&b->functions[0]);
	b->function_ptrs[0] = &b->functions[0];
	opentelemetry__proto__profiles__v1development__location__init(&b->locations[0]);
	b->location_ptrs[0] = &b->locations[0];
	b->dict.n_function_table = b->dict.n_location_table = 1;
	for (uint32_t i = 0; i + 1 < nr; i++) {
		enum frame_kind kind = profile__frame_kind(profile, i);
		const char *text = profile__frame_name(profile, i);
		struct frame_position pos = profile__frame_position(profile, i);
		size_t n = b->dict.n_function_table;
		int32_t mapping, plain, exact, type = 0, file = 0;
		char *name;

		if (!is_code(kind))
			continue;
		mapping = (int32_t)mappings__of(&b->mapping_of, profile, i, kind);
		name = output__plain_name(text, kind);
		if (mapping < 0 || !name) {
			free(name);
			return -ENOMEM;
		}
		plain = string_id(b, name);
		free(name);
		exact = string_id(b, text);
		if (pos.file)
			file = string_id(b, pos.file);
		if (frame_type(kind))
			type = attribute_id(b, "profile.frame.type", frame_type(kind), 0);
		if (plain < 0 || exact < 0 || type < 0 || file < 0)
			return -ENOMEM;
		opentelemetry__proto__profiles__v1development__function__init(&b->functions[n]);
		b->functions[n].name_strindex = plain;
		b->functions[n].system_name_strindex = exact;
		/* A Java frame's class's source file and its line, as pprof has them. */
		b->functions[n].filename_strindex = file;
		b->function_ptrs[n] = &b->functions[n];
		opentelemetry__proto__profiles__v1development__line__init(&b->lines[n]);
		b->lines[n].function_index = (int32_t)n;
		b->lines[n].line = pos.line > 0 ? pos.line : 0;
		b->line_ptrs[n] = &b->lines[n];
		opentelemetry__proto__profiles__v1development__location__init(&b->locations[n]);
		b->locations[n].mapping_index = mapping;
		b->locations[n].n_lines = 1;
		b->locations[n].lines = &b->line_ptrs[n];
		if (type) {
			/* Its one attribute, its frame type; freed with the locations (builder_free). */
			b->locations[n].attribute_indices = malloc(sizeof(int32_t));
			if (!b->locations[n].attribute_indices)
				return -ENOMEM;
			b->locations[n].attribute_indices[0] = type;
			b->locations[n].n_attribute_indices = 1;
		}
		b->location_ptrs[n] = &b->locations[n];
		b->location_of_frame[i] = (int32_t)n;
		b->dict.n_function_table = b->dict.n_location_table = n + 1;
	}
	return 0;
}

/* Room for cap attributes in r; 0 or -ENOMEM. */
static int resource_init(struct resource *r, size_t cap)
{
	opentelemetry__proto__resource__v1__resource__init(&r->resource);
	r->kv = calloc(cap ? cap : 1, sizeof(*r->kv));
	r->kv_ptrs = calloc(cap ? cap : 1, sizeof(*r->kv_ptrs));
	r->values = calloc(cap ? cap : 1, sizeof(*r->values));
	r->cap_attributes = cap;
	r->resource.attributes = r->kv_ptrs;
	return r->kv && r->kv_ptrs && r->values ? 0 : -ENOMEM;
}

/* A resource's attribute: a string value, or the number when str is NULL; none past its room. */
static void resource_attribute(struct resource *r, const char *key, const char *str, int64_t num)
{
	size_t n = r->resource.n_attributes;

	if (n == r->cap_attributes)
		return;
	opentelemetry__proto__common__v1__key_value__init(&r->kv[n]);
	opentelemetry__proto__common__v1__any_value__init(&r->values[n]);
	r->kv[n].key = (char *)key;
	if (str) {
		r->values[n].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		r->values[n].string_value = (char *)str;
	} else {
		r->values[n].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		r->values[n].int_value = num;
	}
	r->kv[n].value = &r->values[n];
	r->kv_ptrs[n] = &r->kv[n];
	r->resource.n_attributes = n + 1;
}

/* Resources: [0] for stacks without a process frame (meta's attributes), then one per process frame. */
static int add_resources(struct builder *b, const struct profile *profile, const struct output_meta *meta)
{
	size_t nr_frames = profile__frame_count(profile), n = 1;

	for (uint32_t i = 0; i < nr_frames; i++)
		n += profile__frame_kind(profile, i) == FRAME_KIND_PROCESS;
	b->resources = calloc(n, sizeof(*b->resources));
	b->cap_resources = b->resources ? n : 0;
	b->resource_ptrs = calloc(n, sizeof(*b->resource_ptrs));
	b->resource_of_frame = calloc(nr_frames ? nr_frames : 1, sizeof(*b->resource_of_frame));
	if (!b->resources || !b->resource_ptrs || !b->resource_of_frame)
		return -ENOMEM;
	b->nr_resources = 1;
	for (uint32_t i = 0; i <= nr_frames; i++) {
		struct resource *r;
		struct process_parts parts;

		if (i < nr_frames && profile__frame_kind(profile, i) != FRAME_KIND_PROCESS)
			continue;
		r = i < nr_frames ? &b->resources[b->nr_resources] : &b->resources[0];
		if (resource_init(r, i < nr_frames ? PROCESS_ATTRIBUTES : meta->nr_resource_attributes))
			return -ENOMEM;
		for (size_t a = 0; i == nr_frames && a < meta->nr_resource_attributes; a++)
			resource_attribute(r, meta->resource_attributes[2 * a], meta->resource_attributes[2 * a + 1], 0);
		if (i < nr_frames) {
			profile__process_parts(profile, i, &parts);
			resource_attribute(r, "service.name", parts.program ? parts.program : parts.name, 0);
			resource_attribute(r, "process.executable.name", parts.name, 0);
			if (parts.pid >= 0)
				resource_attribute(r, "process.pid", NULL, parts.pid);
			if (parts.container)
				resource_attribute(r, "container.id", parts.container, 0);
			b->resource_of_frame[i] = (int32_t)b->nr_resources++;
		}
	}
	return 0;
}

/*
 * The stack table's entry for frames' code frames, leaf first, adding it
 * if new: its index, or -1 out of memory. key has room for depth entries.
 */
static int32_t stack_id(struct builder *b, const uint32_t *frames, size_t depth, int32_t *key,
			size_t *next_location)
{
	size_t n = 0, len = 0;
	char *text = NULL;
	FILE *f;
	int64_t index;
	OStack *s;

	for (size_t k = depth; k-- > 0;)
		if (b->location_of_frame[frames[k]])
			key[n++] = b->location_of_frame[frames[k]];
	/* Stacks are told apart by their locations written out, interned as a string. */
	f = open_memstream(&text, &len);
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRId32 ",", key[i]);
	if (fclose(f)) {
		free(text);
		return -1;
	}
	index = table_id(b->stack_keys, text);
	free(text);
	if (index < 0 || index >= INT32_MAX - 1)
		return -1;
	if ((size_t)index + 1 < b->dict.n_stack_table)
		return (int32_t)index + 1;
	s = &b->stacks[index + 1];
	opentelemetry__proto__profiles__v1development__stack__init(s);
	s->location_indices = &b->stack_locations[*next_location];
	s->n_location_indices = n;
	memcpy(s->location_indices, key, n * sizeof(*key));
	*next_location += n;
	b->stack_ptrs[index + 1] = s;
	b->dict.n_stack_table = (size_t)index + 2;
	return (int32_t)index + 1;
}

/*
 * What a stack's root and state frames make of its sample: its resource
 * (*resource, from the process frame; 0 without one) and its attributes
 * (thread.name, thread.id, state). 0 or -ENOMEM.
 */
static int sample_roots(struct builder *b, const struct profile *profile, const uint32_t *frames, size_t depth,
			int32_t *attributes, size_t *nr_attributes, size_t *resource)
{
	for (size_t k = 0; k < depth; k++) {
		enum frame_kind kind = profile__frame_kind(profile, frames[k]);
		int64_t tid = profile__root_id(profile, frames[k]);
		int32_t a = 0, t = 0;

		/* A stack has one frame of each kind at most, so the attributes fit. */
		if (kind == FRAME_KIND_PROCESS) {
			*resource = (size_t)b->resource_of_frame[frames[k]];
		} else if (kind == FRAME_KIND_THREAD && *nr_attributes + 2 <= SAMPLE_ATTRIBUTES) {
			a = attribute_id(b, "thread.name", profile__root_name(profile, frames[k]), 0);
			t = tid >= 0 ? attribute_id(b, "thread.id", NULL, tid) : 0;
			if (a < 0 || t < 0)
				return -ENOMEM;
			attributes[(*nr_attributes)++] = a;
			if (t)
				attributes[(*nr_attributes)++] = t;
		} else if (kind == FRAME_KIND_STATE && *nr_attributes < SAMPLE_ATTRIBUTES) {
			/* -1, an unknown state, is past the states: "unknown state". */
			a = attribute_id(b, "state", profile__state_name((unsigned)profile__frame_state(profile, frames[k])),
					 0);
			if (a < 0)
				return -ENOMEM;
			attributes[(*nr_attributes)++] = a;
		}
	}
	return 0;
}

/* With a timeline, its spans grouped by stack (span_first, span_order); 0, or -ENOMEM. */
static int group_spans(struct builder *b, const struct profile *profile)
{
	const struct timeline *tl = profile__timeline(profile);
	size_t nr = profile__stack_count(profile), nr_spans = timeline__count(tl);
	size_t *next;

	if (!tl)
		return 0;
	b->span_first = calloc(nr + 2, sizeof(*b->span_first));
	b->span_order = calloc(nr_spans + 1, sizeof(*b->span_order));
	b->timed_values = calloc(nr_spans * b->nr_sample_types + 1, sizeof(*b->timed_values));
	b->timestamps = calloc(nr_spans * b->nr_sample_types + 1, sizeof(*b->timestamps));
	next = calloc(nr + 1, sizeof(*next));
	if (!b->span_first || !b->span_order || !b->timed_values || !b->timestamps || !next) {
		free(next);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nr_spans; k++)
		if (timeline__spans(tl)[k].stack < nr)
			b->span_first[timeline__spans(tl)[k].stack + 1]++;
	for (size_t i = 0; i < nr; i++)
		b->span_first[i + 1] += b->span_first[i];
	memcpy(next, b->span_first, nr * sizeof(*next));
	for (size_t k = 0; k < nr_spans; k++)
		if (timeline__spans(tl)[k].stack < nr)
			b->span_order[next[timeline__spans(tl)[k].stack]++] = (uint32_t)k;
	free(next);
	return 0;
}

/*
 * Sample s of stack i, sample type t, as one value per span of the stack
 * with its time (the span's first tick): the span's part of the stack's
 * value (timeline__span_share; the parts sum to it).
 */
static void add_timestamps(struct builder *b, const struct profile *profile, size_t i, size_t t, OSample *s,
			   int64_t start_unix_ns)
{
	const struct timeline_span *spans = timeline__spans(profile__timeline(profile));
	size_t first = b->span_first[i], n = b->span_first[i + 1] - first;
	size_t at = first * b->nr_sample_types + t * n;
	uint64_t weight = 0, carry = 0, value = (uint64_t)s->values[0];

	for (size_t k = 0; k < n; k++)
		weight += spans[b->span_order[first + k]].weight;
	s->values = &b->timed_values[at];
	s->timestamps_unix_nano = &b->timestamps[at];
	s->n_values = s->n_timestamps_unix_nano = n;
	for (size_t k = 0; k < n; k++) {
		const struct timeline_span *sp = &spans[b->span_order[first + k]];

		s->values[k] = (int64_t)timeline__span_share(sp, value, weight, &carry);
		s->timestamps_unix_nano[k] = (uint64_t)start_unix_ns + sp->first * TIMELINE_TICK_NS;
	}
}

/* Samples: each stack of the profile in its resource, one per sample type. */
static int add_samples(struct builder *b, const struct profile *profile, bool time_weights, uint64_t period_ns,
		       int64_t start_unix_ns)
{
	size_t nr = profile__stack_count(profile), ids = 0, next_location = 0, n = 0, deepest = 1;
	int32_t *key;

	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;

		profile__stack(profile, i, &depth, &count);
		ids += depth;
		if (depth > deepest)
			deepest = depth;
	}
	key = malloc(deepest * sizeof(*key));
	if (!key)
		return -ENOMEM;
	b->stacks = calloc(nr + 1, sizeof(*b->stacks));
	b->stack_ptrs = calloc(nr + 1, sizeof(*b->stack_ptrs));
	b->stack_locations = calloc(ids ? ids : 1, sizeof(*b->stack_locations));
	b->samples = calloc((nr ? nr : 1) * MAX_SAMPLE_TYPES, sizeof(*b->samples));
	b->values = calloc((nr ? nr : 1) * MAX_SAMPLE_TYPES, sizeof(*b->values));
	b->sample_attributes = calloc((nr ? nr : 1) * SAMPLE_ATTRIBUTES, sizeof(*b->sample_attributes));
	if (!b->stacks || !b->stack_ptrs || !b->stack_locations || !b->samples || !b->values || !b->sample_attributes) {
		free(key);
		return -ENOMEM;
	}
	for (size_t r = 0; r < b->nr_resources; r++)
		for (size_t t = 0; t < b->nr_sample_types; t++) {
			b->resources[r].samples[t] = calloc(nr ? nr : 1, sizeof(OSample *));
			if (!b->resources[r].samples[t]) {
				free(key);
				return -ENOMEM;
			}
		}
	if (group_spans(b, profile)) {
		free(key);
		return -ENOMEM;
	}
	opentelemetry__proto__profiles__v1development__stack__init(&b->stacks[0]);
	b->stack_ptrs[0] = &b->stacks[0];
	b->dict.stack_table = b->stack_ptrs;
	b->dict.n_stack_table = 1;
	for (size_t i = 0; i < nr; i++) {
		size_t depth;
		uint64_t count;
		const uint32_t *frames = profile__stack(profile, i, &depth, &count);
		int32_t *attributes = &b->sample_attributes[n * SAMPLE_ATTRIBUTES], stack;
		size_t nr_attributes = 0, resource = 0;

		if (!count)
			continue;
		if (sample_roots(b, profile, frames, depth, attributes, &nr_attributes, &resource) ||
		    (stack = stack_id(b, frames, depth, key, &next_location)) < 0) {
			free(key);
			return -ENOMEM;
		}
		for (size_t t = 0; t < b->nr_sample_types; t++) {
			OSample *s = &b->samples[n * MAX_SAMPLE_TYPES + t];
			struct resource *r = &b->resources[resource];

			opentelemetry__proto__profiles__v1development__sample__init(s);
			s->stack_index = stack;
			s->attribute_indices = attributes;
			s->n_attribute_indices = nr_attributes;
			s->values = &b->values[n * MAX_SAMPLE_TYPES + t];
			s->n_values = 1;
			s->values[0] = time_weights ? (int64_t)(count * 1000)          /* microseconds to ns */
				       : t == 0 || b->bytes ? (int64_t)count
						    : (int64_t)(count * period_ns);
			if (b->span_first && b->span_first[i + 1] > b->span_first[i])
				add_timestamps(b, profile, i, t, s, start_unix_ns);
			r->samples[t][r->nr_samples] = s;
		}
		b->resources[resource].nr_samples++;
		n++;
	}
	free(key);
	return 0;
}

/* The resources with samples, each with its scope and one profile per sample type. */
static void add_profiles(struct builder *b, const struct output_meta *meta, uint64_t period_ns)
{
	size_t used = 0;

	for (size_t i = 0; i < b->nr_resources; i++) {
		struct resource *r = &b->resources[i];

		if (!r->nr_samples)
			continue;
		opentelemetry__proto__profiles__v1development__resource_profiles__init(&r->rp);
		opentelemetry__proto__profiles__v1development__scope_profiles__init(&r->sp);
		r->rp.resource = &r->resource;
		r->sp_ptr = &r->sp;
		r->rp.scope_profiles = &r->sp_ptr;
		r->rp.n_scope_profiles = 1;
		r->sp.scope = &b->scope;
		r->sp.profiles = r->profile_ptrs;
		r->sp.n_profiles = b->nr_sample_types;
		for (size_t t = 0; t < b->nr_sample_types; t++) {
			OProfile *p = &r->profiles[t];

			opentelemetry__proto__profiles__v1development__profile__init(p);
			p->sample_type = &b->sample_types[t];
			p->samples = r->samples[t];
			p->n_samples = r->nr_samples;
			p->time_unix_nano = meta->start_unix_ns > 0 ? (uint64_t)meta->start_unix_ns : 0;
			p->duration_nano = meta->duration_s > 0 ? (uint64_t)(meta->duration_s * 1e9) : 0;
			p->period_type = &b->period_type;
			p->period = (int64_t)period_ns;
			r->profile_ptrs[t] = p;
		}
		b->resource_ptrs[used++] = &r->rp;
	}
	b->request.resource_profiles = b->resource_ptrs;
	b->request.n_resource_profiles = used;
}

static int add_types(struct builder *b, bool time_weights, const char *event)
{
	int32_t ids[4] = {
		string_id(b, b->bytes ? output__space_type(event) : time_weights ? event : "samples"),
		string_id(b, b->bytes ? "bytes" : time_weights ? "nanoseconds" : "count"),
		string_id(b, b->bytes ? "space" : time_weights ? "wall" : "cpu"),
		string_id(b, b->bytes ? "bytes" : "nanoseconds"),
	};

	for (int i = 0; i < 4; i++)
		if (ids[i] < 0)
			return -ENOMEM;
	for (int i = 0; i < MAX_SAMPLE_TYPES; i++)
		opentelemetry__proto__profiles__v1development__value_type__init(&b->sample_types[i]);
	opentelemetry__proto__profiles__v1development__value_type__init(&b->period_type);
	b->sample_types[0].type_strindex = ids[0];
	b->sample_types[0].unit_strindex = ids[1];
	b->sample_types[1].type_strindex = ids[2];
	b->sample_types[1].unit_strindex = ids[3];
	b->period_type = b->sample_types[1];
	b->nr_sample_types = time_weights || b->bytes ? 1 : 2;
	return 0;
}

static int pack_strings(struct builder *b)
{
	size_t n = profile__frame_count(b->strings);

	b->string_items = calloc(n ? n : 1, sizeof(*b->string_items));
	if (!b->string_items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		b->string_items[i] = (char *)profile__frame_name(b->strings, (uint32_t)i);
	b->dict.string_table = b->string_items;
	b->dict.n_string_table = n;
	return 0;
}

static void builder_free(struct builder *b)
{
	profile__free(b->strings);
	profile__free(b->attribute_keys);
	profile__free(b->stack_keys);
	free(b->string_items);
	for (size_t i = 0; b->mappings && i < b->dict.n_mapping_table; i++)
		free(b->mappings[i].attribute_indices);
	for (size_t i = 0; b->locations && i < b->dict.n_location_table; i++)
		free(b->locations[i].attribute_indices);
	free(b->mappings);
	free(b->mapping_ptrs);
	mappings__free(&b->mapping_of);
	free(b->functions);
	free(b->function_ptrs);
	free(b->locations);
	free(b->location_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->location_of_frame);
	free(b->attributes);
	free(b->attribute_ptrs);
	free(b->attribute_values);
	free(b->stacks);
	free(b->stack_ptrs);
	free(b->stack_locations);
	for (size_t r = 0; r < b->cap_resources; r++) {
		for (size_t t = 0; t < MAX_SAMPLE_TYPES; t++)
			free(b->resources[r].samples[t]);
		free(b->resources[r].kv);
		free(b->resources[r].kv_ptrs);
		free(b->resources[r].values);
	}
	free(b->resources);
	free(b->resource_ptrs);
	free(b->resource_of_frame);
	free(b->samples);
	free(b->values);
	free(b->sample_attributes);
	free(b->span_first);
	free(b->span_order);
	free(b->timed_values);
	free(b->timestamps);
}

int output__otlp_write(const struct profile *profile, const struct output_meta *meta, FILE *out)
{
	const struct profile_limits table_limits = { .max_frames = INT32_MAX - 2, .max_stacks = 1 };
	const char *event = meta && meta->event ? meta->event : "cpu";
	bool bytes = output__event_allocates(event);
	bool time_weights = strcmp(event, "cpu") && !bytes;
	/* An allocation profile counts bytes, one value: no sampling period in time. */
	uint64_t period_ns = meta && meta->frequency_hz && !bytes ? 1000000000ull / meta->frequency_hz : 0;
	struct output_meta none = { 0 };
	struct builder b = { 0 };
	uint8_t *packed = NULL;
	size_t len = 0;
	int err;

	if (!meta)
		meta = &none;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&b.request);
	opentelemetry__proto__profiles__v1development__profiles_dictionary__init(&b.dict);
	opentelemetry__proto__profiles__v1development__link__init(&b.link0);
	opentelemetry__proto__common__v1__instrumentation_scope__init(&b.scope);
	b.scope.name = "jbpfprof";
	b.scope.version = JBPFPROF_VERSION;
	b.link_ptr = &b.link0;
	b.dict.link_table = &b.link_ptr;
	b.dict.n_link_table = 1;
	b.request.dictionary = &b.dict;
	b.bytes = bytes;
	emit__begin(out);
	b.strings = profile__new(&table_limits);
	b.attribute_keys = profile__new(&table_limits);
	b.stack_keys = profile__new(&table_limits);
	err = !b.strings || !b.attribute_keys || !b.stack_keys || string_id(&b, "") < 0 || attributes_reserve(&b)
		      ? -ENOMEM
		      : 0;
	if (!err)
		err = add_types(&b, time_weights, event);
	if (!err)
		err = add_frames(&b, profile);
	if (!err)
		err = add_resources(&b, profile, meta);
	if (!err)
		err = add_samples(&b, profile, time_weights, period_ns, meta && meta->start_unix_ns > 0 ? meta->start_unix_ns : 0);
	if (!err) {
		add_profiles(&b, meta, period_ns);
		err = pack_strings(&b);
	}
	if (!err) {
		len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
			&b.request);
		packed = malloc(len ? len : 1);
		if (!packed)
			err = -ENOMEM;
	}
	if (!err) {
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&b.request,
														  packed);
		if (len && fwrite(packed, 1, len, out) != len)
			err = -EIO;
	}
	free(packed);
	builder_free(&b);
	if (err)
		return err;
	return emit__finish(out);
}
