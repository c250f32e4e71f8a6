/*
 * output: the writer of each format, behind one call (contract in
 * output.h).
 */
#include "output.h"

static int write_collapsed(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	return output__collapsed_write(profile, out);
}

static int write_flamegraph(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	return output__flamegraph_write(profile, meta, out);
}

static int write_pprof(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	return output__pprof_write(profile, meta, out);
}

static int write_otlp(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	return output__otlp_write(profile, meta, out);
}

static int write_jfr(const struct profile *profile, const struct output_meta *meta, size_t top, FILE *out)
{
	return output__jfr_write(profile, meta, out);
}

static const struct output__writer writers[] = {
	[OUTPUT_COLLAPSED] = { "collapsed", "collapsed", "collapsed stacks", write_collapsed },
	[OUTPUT_FLAMEGRAPH] = { "flamegraph", "html", "flame graph", write_flamegraph },
	[OUTPUT_TEXT] = { "text", "txt", "text report", output__text_write },
	[OUTPUT_PPROF] = { "pprof", "pb.gz", "pprof profile", write_pprof },
	[OUTPUT_OTLP] = { "otlp", "otlp", "OTLP profile", write_otlp },
	[OUTPUT_JFR] = { "jfr", "jfr", "JFR recording", write_jfr },
};

const struct output__writer *output__writer(enum output_format format)
{
	return (unsigned)format < sizeof(writers) / sizeof(writers[0]) ? &writers[format]
									 : &writers[OUTPUT_FLAMEGRAPH];
}

int output__write(enum output_format format, const struct profile *profile, const struct output_meta *meta,
		 size_t top, FILE *out)
{
	return output__writer(format)->write(profile, meta, top, out);
}
