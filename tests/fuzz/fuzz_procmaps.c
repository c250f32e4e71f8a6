/*
 * /proc/PID/maps, as a target's memory maps give it: procmaps__read over a
 * memory file, all mappings and executable ones only.
 */
#include "fuzz.h"

#include "symbolizer/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int exec_only = 0; exec_only < 2; exec_only++) {
		struct procmaps_entry *entries;
		size_t nr;

		if (procmaps__read(path, exec_only, &entries, &nr) == 0) {
			if (nr > PROCMAPS_MAX_ENTRIES)
				abort();
			procmaps__free(entries, nr);
		}
	}
	close(fd);
	return 0;
}
