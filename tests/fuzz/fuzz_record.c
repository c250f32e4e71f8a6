/*
 * A record from the BPF ring buffer, decoded as the pipeline decodes it:
 * BPF writes them, but a decoder that trusted their sizes would turn a
 * kernel-side bug into a userspace overflow.
 */
#include "fuzz.h"

#include "user/record/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The ring buffer gives 8-byte aligned records. */
	uint64_t *copy = malloc(size ? (size + 7) & ~(size_t)7 : 8);
	struct record r;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	decode__record(copy, size, &r);
	if (decode__sample_is_valid(copy, size)) {
		const struct jbpf_sample *s = (const void *)copy;

		if (decode__sample_used_size(s) > size)
			abort();
		decode__sample_java_frames(s);
	}
	free(copy);
	return 0;
}
