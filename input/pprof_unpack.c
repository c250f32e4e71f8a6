/*
 * pprof_unpack: a pprof file's bytes to its message, within a budget
 * (contract in pprof_unpack.h).
 */
#include "pprof_unpack.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/refuse.h"
#include "input/pprof_read.h"

static int inflate_gzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len, char *err, size_t size)
{
	z_stream z = { 0 };
	size_t cap = len * 4 > 65536 ? len * 4 : 65536, used = 0;
	uint8_t *buf;
	int ret;

	if (cap > PPROF_MAX_CONTENT_BYTES)
		cap = PPROF_MAX_CONTENT_BYTES;
	buf = malloc(cap);
	if (!buf || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		return refuse__say(err, size, "out of memory");
	}
	z.next_in = (uint8_t *)in;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	for (;;) {
		if (used == cap) {
			uint8_t *grown;

			if (cap >= PPROF_MAX_CONTENT_BYTES) {
				ret = Z_MEM_ERROR;
				break;
			}
			cap = cap * 2 > PPROF_MAX_CONTENT_BYTES ? PPROF_MAX_CONTENT_BYTES : cap * 2;
			grown = realloc(buf, cap);
			if (!grown) {
				ret = Z_MEM_ERROR;
				break;
			}
			buf = grown;
		}
		z.next_out = buf + used;
		z.avail_out = (uInt)(cap - used > UINT32_MAX ? UINT32_MAX : cap - used);
		ret = inflate(&z, Z_NO_FLUSH);
		used = (size_t)(z.next_out - buf);
		if (ret == Z_STREAM_END || (ret != Z_OK && ret != Z_BUF_ERROR))
			break;
		if (ret == Z_BUF_ERROR && z.avail_in == 0)
			break; /* input ended before the stream did */
	}
	inflateEnd(&z);
	if (ret == Z_STREAM_END) {
		*out = buf;
		*out_len = used;
		return 0;
	}
	free(buf);
	if (ret == Z_MEM_ERROR && cap >= PPROF_MAX_CONTENT_BYTES)
		return refuse__say(err, size, "the gzip data inflates to more than %u MiB", PPROF_MAX_CONTENT_BYTES >> 20);
	if (ret == Z_MEM_ERROR)
		return refuse__say(err, size, "out of memory");
	if (ret == Z_BUF_ERROR || ret == Z_OK)
		return refuse__say(err, size, "truncated gzip data (the file ends inside the compressed stream)");
	return refuse__say(err, size, "corrupt gzip data (%s)", z.msg ? z.msg : "inflate failed");
}

/*
 * protobuf-c's allocations, counted against a budget. Its free gets no
 * size, so each block carries its own in a header (sized to keep the
 * block's alignment).
 */
union block_header {
	size_t size;
	max_align_t align;
};

static void *budget_alloc(void *data, size_t size)
{
	struct pprof_unpacked *u = data;
	union block_header *h;

	if (size > u->budget.left || sizeof(*h) > u->budget.left - size) {
		u->budget.exceeded = true;
		return NULL;
	}
	h = malloc(sizeof(*h) + size);
	if (!h)
		return NULL;
	h->size = sizeof(*h) + size;
	u->budget.left -= h->size;
	return h + 1;
}

static void budget_free(void *data, void *pointer)
{
	struct pprof_unpacked *u = data;
	union block_header *h = pointer;

	if (!pointer)
		return;
	h--;
	u->budget.left += h->size;
	free(h);
}

static size_t unpack_budget_for(size_t input_len)
{
	size_t bytes = input_len > SIZE_MAX / UNPACK_BYTES_PER_INPUT_BYTE ? SIZE_MAX
									   : input_len * UNPACK_BYTES_PER_INPUT_BYTE;

	return bytes < UNPACK_MIN_BYTES ? UNPACK_MIN_BYTES : bytes;
}

int pprof_unpack__open(struct pprof_unpacked *u, const uint8_t *data, size_t len, char *err, size_t err_size)
{
	size_t budget_bytes = unpack_budget_for(len), input_len = len;
	uint8_t *inflated = NULL;

	memset(u, 0, sizeof(*u));
	u->budget.left = budget_bytes;
	u->allocator = (ProtobufCAllocator){ .alloc = budget_alloc, .free = budget_free, .allocator_data = u };
	if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		if (inflate_gzip(data, len, &inflated, &len, err, err_size))
			return -1;
		data = inflated;
	}
	u->msg = perftools__profiles__profile__unpack(&u->allocator, len, data);
	free(inflated);
	if (!u->msg && u->budget.exceeded)
		return refuse__say(err, err_size,
			      "its records would take more than %zu MiB of memory to read, the limit for a file "
			      "of %zu KiB: not a profile as profilers write them",
			      budget_bytes >> 20, (input_len + 1023) >> 10);
	if (!u->msg)
		return refuse__say(err, err_size, "not a pprof profile (not gzip, and not a protobuf message of that shape)");
	return 0;
}

void pprof_unpack__close(struct pprof_unpacked *u)
{
	if (u->msg)
		perftools__profiles__profile__free_unpacked(u->msg, &u->allocator);
	u->msg = NULL;
}
