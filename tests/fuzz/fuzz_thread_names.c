/*
 * What hotspot/thread_names.c reads of a JVM's memory for a thread's name:
 * JavaThread::_threadObj, the handle's slot, Thread.name, the String's
 * class, value and coder, the byte[]'s length and bytes, all over a memory
 * image that is the input; and the decoder over the input's bytes.
 *
 * Input: a byte choosing the coder the decoder is given (its low two
 * bits) and whether references are compressed oops (bit 2), then the
 * image, mapped at NAMES_IMAGE, which is also the compressed oops' base
 * (shift 3) and the compressed class pointers' (shift 0). The JavaThread
 * is at the image's start; the layout is fixed (as
 * tests/unit/test_hotspot_thread_names.c lays it out); every pointer,
 * length and byte comes from the input.
 */
#include "fuzz.h"

#include "hotspot/thread_names.h"
#include "../unit/hotspot_fixture.h"

#define NAMES_IMAGE 0x10000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_thread_names__layout l = {
		.thread_obj = 0x18,
		.thread_name = 0x50,
		.string_value = 12,
		.string_coder = 16,
		.klass = 8,
		.array_length = 12,
		.array_data = 16,
		.shift = 3,
		.base = NAMES_IMAGE,
		.klass_base = NAMES_IMAGE,
		.string_klass = NAMES_IMAGE + 0x40,
	};
	char out[HOTSPOT_THREAD_NAME_MAX];
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	unsigned char *image;
	uint64_t string;

	if (size < 2)
		return 0;
	l.narrow = data[0] & 4;
	image = fake_map(&fm, NAMES_IMAGE, size - 1);
	memcpy(image, data + 1, size - 1);
	fake_reader(&mem, &fm);
	if (hotspot_thread_names__string(&mem, &l, NAMES_IMAGE, &string) == HOTSPOT_THREAD_NAME_OK &&
	    hotspot_thread_names__read(&mem, &l, string, out) == HOTSPOT_THREAD_NAME_OK && strlen(out) >= sizeof(out))
		abort();
	if (hotspot_thread_names__decode(data + 1, size - 1, data[0] & 3, out) == HOTSPOT_THREAD_NAME_OK &&
	    strlen(out) >= sizeof(out))
		abort();
	fake_memory_free(&fm);
	return 0;
}
