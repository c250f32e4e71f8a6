/*
 * pprof_fixture: a pprof file's bytes as the tests look into them: gzip
 * undone and done, and the message decoded with protobuf-c (the reader
 * under test is input/pprof_read.c; these look at the file as go tool
 * pprof would). Shared by the unit tests and tests/integration/test_fleet.c.
 */
#ifndef JBPF_PPROF_FIXTURE_H
#define JBPF_PPROF_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include <cmocka.h>

#include "proto/profile.pb-c.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

static inline uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 16;
	uint8_t *out = malloc(cap);
	int ret;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)len;
	do {
		if (z.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		z.next_out = out + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		ret = inflate(&z, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
	} while (ret != Z_STREAM_END);
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

static inline uint8_t *gzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap;
	uint8_t *out;

	assert_int_equal(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	cap = deflateBound(&z, len);
	out = malloc(cap);
	assert_non_null(out);
	z.next_in = (uint8_t *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

static inline PProfile *decode(const uint8_t *gz, size_t len)
{
	size_t plain_len;
	uint8_t *plain = gunzip(gz, len, &plain_len);
	PProfile *msg = perftools__profiles__profile__unpack(NULL, plain_len, plain);

	free(plain);
	assert_non_null(msg);
	return msg;
}

/* String index of the message's table. */
static inline const char *string_of(const PProfile *msg, int64_t index)
{
	assert_true(index >= 0 && (uint64_t)index < msg->n_string_table);
	return msg->string_table[index];
}

#endif /* JBPF_PPROF_FIXTURE_H */
