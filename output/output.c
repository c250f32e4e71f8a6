/*
 * output: the writer of each format, behind one call (contract in
 * output.h).
 */
#include "output.h"

int output_write(enum output_format format, const struct profile *profile, const struct output_meta *meta,
		 size_t top, FILE *out)
{
	switch (format) {
	case OUTPUT_COLLAPSED:
		return output_collapsed_write(profile, out);
	case OUTPUT_TEXT:
		return output_text_write(profile, meta, top, out);
	case OUTPUT_PPROF:
		return output_pprof_write(profile, meta, out);
	case OUTPUT_FLAMEGRAPH:
		break;
	}
	return output_flamegraph_write(profile, meta, out);
}
