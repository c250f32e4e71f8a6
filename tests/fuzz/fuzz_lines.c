/*
 * A method's compressed line number table (hotspot/lines.c), which the JVM
 * writes and the profiler reads from its memory: the decoder over the
 * input's bytes, and the reader over a memory image that is the input,
 * ending where the input ends (a table with no end there runs into
 * unmapped memory).
 *
 * Input: a byte of flags (bit 0: UNSIGNED5 with an excluded byte, JDK 20
 * and later), two bytes of a bytecode index (little-endian), then the
 * table. What is checked: no line is negative; a table the reader takes is
 * no longer than the image nor than NAMES_MAX_LINE_TABLE, ends in its end
 * byte, and gives every bci the line the decoder gives over the whole
 * input (the bytes after its end are never looked at).
 */
#include "fuzz.h"

#include "hotspot/names_internal.h"
#include "../unit/hotspot_fixture.h"

#define IMAGE_BASE 0x10000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const int32_t bcis[] = { -1, 0, 1, 7, 255, 65535 };
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	uint8_t excluded, *table = NULL, *image;
	const uint8_t *in;
	size_t len, in_len;
	int32_t bci;

	if (size < 4)
		return 0;
	excluded = data[0] & 1;
	bci = (int32_t)(data[1] | data[2] << 8);
	in = data + 3;
	in_len = size - 3;
	if (hotspot_lines__of_bci(in, in_len, excluded, bci) < 0)
		abort();
	image = fake_map(&fm, IMAGE_BASE, in_len);
	memcpy(image, in, in_len);
	fake_reader(&mem, &fm);
	if (!hotspot_lines__read_table(&mem, IMAGE_BASE, excluded, &table, &len)) {
		if (!len || len > in_len || len > NAMES_MAX_LINE_TABLE || table[len - 1] != 0)
			abort();
		for (size_t i = 0; i < sizeof(bcis) / sizeof(bcis[0]); i++)
			if (hotspot_lines__of_bci(table, len, excluded, bcis[i]) != hotspot_lines__of_bci(in, in_len, excluded, bcis[i]))
				abort();
		if (hotspot_lines__of_bci(table, len, excluded, bci) != hotspot_lines__of_bci(in, in_len, excluded, bci))
			abort();
		free(table);
	}
	fake_memory_free(&fm);
	return 0;
}
