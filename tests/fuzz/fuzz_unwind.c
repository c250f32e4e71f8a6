/*
 * An ELF file's call frame information (.eh_frame, .debug_frame), built
 * into an unwind table through libdw as for a target's mapping.
 */
#include "fuzz.h"

#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table *table;
	char err[256];
	int fd = fuzz_memfd(data, size);

	if (unwind_table__build(fd, -1, &table, err, sizeof(err)) == 0)
		unwind_table__free(table);
	close(fd);
	return 0;
}
