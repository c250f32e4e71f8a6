/*
 * A seed for fuzz_vmstructs: the VMStructs tables a JDK 17 libjvm gives for
 * what naming and the walker read (the names tests' fields, types and
 * constants, tests/unit/hotspot_jdks.h), written as the fake libjvm's
 * tables hold them (tests/unit/hotspot_fixture.h) in the target's input
 * format: flags, the four tables' lengths, the tables, the strings.
 *
 *   seed_vmstructs FILE
 */
#include <stdio.h>

#include "../unit/hotspot_fixture.h"
#include "../unit/hotspot_jdks.h"

static void put_fields(struct fake_jvm *fj, const struct field_def *f)
{
	for (; f->type; f++)
		fake_struct(fj, f->type, f->field, f->type_string, 0, f->offset, 0);
}

static void put_u16(FILE *out, size_t v)
{
	fputc((int)(v & 0xff), out);
	fputc((int)(v >> 8 & 0xff), out);
}

int main(int argc, char **argv)
{
	static struct fake_jvm fj;
	static const char *const sized[] = { "int", "jint", "u1", "u2", "u4", "address" };
	static const uint64_t sizes[] = { 4, 4, 1, 2, 4, 8 };
	const struct jdk *j = &jdk17;
	size_t lens[4];
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: seed_vmstructs FILE\n");
		return 2;
	}
	fake_jvm_init(&fj);
	put_fields(&fj, common_fields);
	put_fields(&fj, fields17);
	/*
	 * The major version is a static the names layout reads: the harness maps
	 * no memory of its own, so it is kept as the value of an int constant
	 * nobody else asks for, which lies in the ints table.
	 */
	fake_struct(&fj, "Abstract_VM_Version", "_vm_major_version", "int", 1, 0,
		    FAKE_INTS + 16 * fj.nr_ints + 8);
	fake_int(&fj, "seed_vm_major_version", j->major);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		fake_type(&fj, sized[i], sizes[i]);
	fake_type(&fj, "Method", j->method_size);
	fake_type(&fj, "ConstMethod", j->cm_size);
	fake_type(&fj, "ConstantPool", 72);
	fake_type(&fj, "Klass", j->klass_size);
	fake_type(&fj, "Symbol", 8);
	fake_type(&fj, "PcDesc", 16);
	fake_type(&fj, "AccessFlags", j->access_size);
	fake_type(&fj, "nmethod", j->nm_header);
	fake_type(&fj, "CodeBlob", 104);
	fake_type(&fj, "CompiledMethod", 192);
	fake_int(&fj, "ConstMethod::_has_linenumber_table", 1);
	fake_int(&fj, "InvocationEntryBci", -1);
	fake_int(&fj, "CompLevel_simple", 1);
	fake_int(&fj, "CompLevel_full_profile", 3);
	fake_int(&fj, "CompLevel_full_optimization", 4);
	/* Each table with its zeroed end entry. */
	lens[0] = 48 * (fj.nr_structs + 1);
	lens[1] = 40 * (fj.nr_types + 1);
	lens[2] = 16 * (fj.nr_ints + 1);
	lens[3] = 16 * (fj.nr_longs + 1);
	out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fputc(0, out);
	for (int i = 0; i < 4; i++)
		put_u16(out, lens[i]);
	fwrite(fj.structs, 1, lens[0], out);
	fwrite(fj.types, 1, lens[1], out);
	fwrite(fj.ints, 1, lens[2], out);
	fwrite(fj.longs, 1, lens[3], out);
	fwrite(fj.strings + 16, 1, fj.strings_len - 16, out);
	fake_memory_free(&fj.fm);
	return fclose(out) ? 1 : 0;
}
