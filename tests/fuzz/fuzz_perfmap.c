/*
 * A perf map (/tmp/perf-PID.map), which the target writes: each line, and
 * the whole file read into a symbol table.
 */
#include "fuzz.h"

#include "symbolizer/perfmap.h"
#include "symbolizer/symtab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	int fd = fuzz_memfd(data, size);
	struct symtab *table;

	for (char *line = text, *next; line; line = next) {
		uint64_t start, len;
		const char *name;
		size_t name_len;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (perfmap__parse_line(line, &start, &len, &name, &name_len) &&
		    (name < line || name + name_len > line + strlen(line)))
			abort();
	}
	if (perfmap__read_fd(fd, &table) == 0)
		symtab__free(table);
	close(fd);
	free(text);
	return 0;
}
