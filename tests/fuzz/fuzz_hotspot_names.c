/*
 * Java frames named from a JVM's memory, which the JVM controls: a memory
 * image from the input, read as JDK 17 or JDK 25 lays out Method,
 * ConstMethod, ConstantPool, Symbol, CodeBlob and nmethod (the layouts the
 * names tests use), and frames pointing into it, each named twice (the
 * second time through the caches). Each call's reads of the memory stay
 * within what naming's bounds allow, and a named frame's strings are
 * within theirs.
 *
 * Input: a byte of flags (bit 0: JDK 25), a byte giving the number of
 * frames (1 to 8), 13 bytes per frame (its kind, then three little-endian
 * u32: where ptr, pc and cookie point in the image; a compiled frame's
 * cookie is its compile id instead), then the image, mapped at IMAGE_BASE.
 */
#include "fuzz.h"

#include "hotspot/names.h"
#include "../unit/hotspot_fixture.h"
#include "../unit/hotspot_jdks.h"

#define IMAGE_BASE 0x10000000ull
#define VERSION_ADDR 0x1000ull
#define FRAME_BYTES 13
/*
 * Reads one call may make: 64 inlined scopes, each method's five gathers
 * and their fallbacks, and a line table of 64 KiB in 256-byte chunks;
 * the nmethod's header, PcDescs and scope chain besides.
 */
#define MAX_READS_PER_CALL (HOTSPOT_NAMES_MAX_INLINE * (64 + 65536 / 256) + 256)
/* A name kept: 1 KiB and "..." when cut. */
#define MAX_NAME_LEN (1024 + 3)

static uint32_t u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* JDK j's description, made once: naming only reads it. */
static struct hotspot_vm *described(const struct jdk *j)
{
	static struct hotspot_vm *vms[2];
	struct hotspot_vm **vm = &vms[j == &jdk25];

	if (!*vm && !(*vm = jdk_describe(j, VERSION_ADDR)))
		abort();
	return *vm;
}

static void check_named(const struct hotspot_frame *f, int nr)
{
	for (int i = 0; i < nr; i++) {
		if (f[i].unresolved >= HOTSPOT_UNRESOLVED_NR)
			abort();
		if (f[i].unresolved)
			continue;
		if (!f[i].method || !f[i].klass || !f[i].signature)
			abort();
		if (strlen(f[i].klass) > MAX_NAME_LEN || strlen(f[i].method) > MAX_NAME_LEN ||
		    strlen(f[i].signature) > MAX_NAME_LEN)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct jdk *j;
	struct fake_memory fm = { 0 };
	struct hotspot_memory mem;
	struct hotspot_vm *vm;
	struct hotspot_names *names;
	struct hotspot_frame out[HOTSPOT_NAMES_MAX_INLINE];
	char err[256];
	size_t nr, image_len;
	const uint8_t *frames;

	if (size < 2)
		return 0;
	j = data[0] & 1 ? &jdk25 : &jdk17;
	nr = (size_t)data[1] % 8 + 1;
	if (size < 2 + nr * FRAME_BYTES)
		return 0;
	frames = data + 2;
	image_len = size - 2 - nr * FRAME_BYTES;
	fake_put32(fake_map(&fm, VERSION_ADDR, 8), (uint32_t)j->major);
	if (image_len)
		memcpy(fake_map(&fm, IMAGE_BASE, image_len), frames + nr * FRAME_BYTES, image_len);
	fake_reader(&mem, &fm);
	vm = described(j);
	names = hotspot_names__new(vm, &mem, err, sizeof(err));
	if (!names)
		abort();
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < nr; i++) {
			const uint8_t *d = frames + i * FRAME_BYTES;
			uint8_t kind = d[0] % 4;
			struct jbpf_java_frame jf = {
				.kind = kind == 0 ? 5 : kind, /* 5: no kind naming knows */
				.ptr = IMAGE_BASE + u32_at(d + 1),
				.pc = IMAGE_BASE + u32_at(d + 5),
				.cookie = kind == JBPF_JAVA_COMPILED ? (uint64_t)(int32_t)u32_at(d + 9)
								      : IMAGE_BASE + u32_at(d + 9),
			};
			uint64_t before = mem.reads;
			int got = hotspot_names__frame(names, &jf, out, HOTSPOT_NAMES_MAX_INLINE);

			if (got < 1 || got > HOTSPOT_NAMES_MAX_INLINE || mem.reads - before > MAX_READS_PER_CALL)
				abort();
			check_named(out, got);
		}
	}
	hotspot_names__free(names);
	fake_memory_free(&fm);
	return 0;
}
