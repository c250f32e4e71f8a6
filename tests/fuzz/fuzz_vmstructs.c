/*
 * A libjvm's VMStructs tables, which the JVM's memory holds: read from a
 * fake process whose tables (structs, types, int and long constants) and
 * strings come from the input, and, when they read, the walker's layout
 * and naming's layout derived from them, each over the same memory.
 *
 * Input: a byte of flags (bit 0: the next 21 little-endian u64 replace the
 * exported variables, addresses and strides alike), four little-endian u16
 * giving the bytes of the structs, types, ints and longs tables, those
 * tables, then the strings region (its first 16 bytes left zero, as the
 * fixture keeps them).
 */
#include "fuzz.h"

#include "hotspot/layout.h"
#include "hotspot/names.h"
#include "hotspot/vmstructs.h"
#include "../unit/hotspot_fixture.h"

/* Takes up to room bytes of the input for dst: how many. */
static size_t take(unsigned char *dst, size_t room, const uint8_t **data, size_t *size, size_t want)
{
	size_t n = want < room ? want : room;

	if (n > *size)
		n = *size;
	memcpy(dst, *data, n);
	*data += n;
	*size -= n;
	return n;
}

/*
 * The fake libjvm, mapped once: each input writes over the start of its
 * regions, and what it wrote is zeroed again after it (the tables' ends
 * are their first zeroed entries).
 */
static struct fake_jvm fj;
static unsigned char default_symbols[8 * FS_NR];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_memory mem;
	struct hotspot_vm *vm = NULL;
	struct hotspot_names *names;
	struct jbpf_hotspot_jvm jvm;
	unsigned char *tables[4];
	const size_t rooms[4] = { 48 * FAKE_TABLE_ROOM, 40 * FAKE_TABLE_ROOM, 16 * FAKE_TABLE_ROOM,
				  16 * FAKE_TABLE_ROOM };
	size_t lens[4], strings;
	char err[256] = "";
	uint8_t flags;

	if (size < 9)
		return 0;
	if (!fj.symbols) {
		fake_jvm_init(&fj);
		memcpy(default_symbols, fj.symbols, sizeof(default_symbols));
	}
	tables[0] = fj.structs;
	tables[1] = fj.types;
	tables[2] = fj.ints;
	tables[3] = fj.longs;
	flags = data[0];
	for (int i = 0; i < 4; i++)
		lens[i] = (size_t)data[1 + 2 * i] | (size_t)data[2 + 2 * i] << 8;
	data += 9;
	size -= 9;
	if (flags & 1)
		take(fj.symbols, 8 * FS_NR, &data, &size, 8 * FS_NR);
	for (int i = 0; i < 4; i++)
		lens[i] = take(tables[i], rooms[i], &data, &size, lens[i]);
	strings = take(fj.strings + 16, FAKE_STRINGS_ROOM - 16, &data, &size, size);
	fake_reader(&mem, &fj.fm);
	if (!hotspot_vm__read(&mem, &fj.syms, &vm, err, sizeof(err))) {
		if (!vm)
			abort();
		/* Whatever the tables say, both layouts are bounded reads of the same memory. */
		hotspot_layout__read(vm, &mem, &jvm, err, sizeof(err));
		names = hotspot_names__new(vm, &mem, err, sizeof(err));
		hotspot_names__free(names);
		hotspot_vm__free(vm);
	}
	if (strnlen(err, sizeof(err)) == sizeof(err))
		abort();
	for (int i = 0; i < 4; i++)
		memset(tables[i], 0, lens[i]);
	memset(fj.strings + 16, 0, strings);
	memcpy(fj.symbols, default_symbols, sizeof(default_symbols));
	return 0;
}
