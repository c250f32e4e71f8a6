/*
 * code_frames: how the formats that keep frames apart from their text
 * (pprof, OTLP) name code frames (contract in output.h).
 */
#include "output.h"

#include <stdlib.h>
#include <string.h>

/* The mapping that stands for each kind of code frame, and the suffix its names carry. */
static const struct {
	const char *mapping;
	const char *suffix;
} kinds[FRAME_KIND_NR] = {
	[FRAME_KIND_NATIVE] = { "[native]", NULL },
	[FRAME_KIND_KERNEL] = { "[kernel.kallsyms]", "_[k]" },
	[FRAME_KIND_JIT] = { "[jit]", NULL },
	[FRAME_KIND_JAVA] = { "[java]", NULL },
	[FRAME_KIND_JAVA_INLINED] = { "[java inlined]", "_[i]" },
	[FRAME_KIND_JAVA_INTERP] = { "[java interpreted]", "_[0]" },
	[FRAME_KIND_JAVA_COMPILED] = { "[java compiled]", "_[j]" },
	[FRAME_KIND_LOST] = { "[jbpfprof]", NULL },
	[FRAME_KIND_CLASS] = { "[allocated class]", NULL },
	[FRAME_KIND_WAKER] = { "[waker]", NULL },
	[FRAME_KIND_CARRIER] = { "[virtual thread]", NULL },
};

const char *output__kind_mapping(enum frame_kind kind)
{
	return (unsigned)kind < FRAME_KIND_NR ? kinds[kind].mapping : NULL;
}

char *output__plain_name(const char *text, enum frame_kind kind)
{
	const char *suffix = (unsigned)kind < FRAME_KIND_NR ? kinds[kind].suffix : NULL;
	size_t len = strlen(text);
	char *name = strdup(text);

	if (name && suffix && len >= strlen(suffix) && !strcmp(name + len - strlen(suffix), suffix))
		name[len - strlen(suffix)] = '\0';
	return name;
}
