/*
 * lines: HotSpot's compressed streams, read from outside the JVM.
 *
 * Two things a profiler reads are written by CompressedWriteStream
 * (share/code/compressedStream.hpp): a method's line number table, which
 * HotSpot compresses when it loads the class, and an nmethod's debug
 * information (the scopes, hotspot/scopes.c). Both are runs of UNSIGNED5
 * numbers, the Pack200 coding: a byte below 192 ends a number, a byte from
 * 192 up carries six more bits, and the fifth byte always ends it. JDK 20
 * (utilities/unsigned5.hpp) shifted every byte up by one so that no number
 * holds a zero byte; before that, bytes were taken as they are. The caller
 * says which (excluded: 1 or 0).
 *
 * The line number table (CompressedLineNumberReadStream, share/oops/
 * method.hpp) follows the bytecodes of a ConstMethod and is a list of
 * (bci, line) deltas: one byte (bci delta << 3 | line delta) when the
 * deltas fit in 5 and 3 bits, else 0xFF and two signed UNSIGNED5 numbers
 * (zigzag: (v >> 1) ^ -(v & 1)); a zero byte ends it. A table from the JVM's
 * memory is hostile: every read is bounded by the bytes at hand, and one
 * that does not end within NAMES_MAX_LINE_TABLE bytes is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "hotspot/names_internal.h"

/* UNSIGNED5's numbers: lg_H = 6, and a number has at most five bytes. */
#define U5_HIGH 192
#define U5_MAX_LENGTH 5

bool hotspot_lines__u5(const uint8_t *buf, size_t len, size_t *pos, uint8_t excluded, uint32_t *out)
{
	uint32_t sum = 0;
	size_t p = *pos;

	for (int i = 0; i < U5_MAX_LENGTH; i++, p++) {
		uint8_t b;

		if (p >= len)
			return false;
		b = buf[p];
		if (b < excluded)
			return false;
		/* The fifth byte shifts by 24: only its low 8 bits count, as HotSpot's uint32_t sum wraps. */
		sum += (uint32_t)(b - excluded) << (6 * i);
		if (b < U5_HIGH || i == U5_MAX_LENGTH - 1) {
			*pos = p + 1;
			*out = sum;
			return true;
		}
	}
	return false;
}

static bool u5_signed(const uint8_t *buf, size_t len, size_t *pos, uint8_t excluded, int32_t *out)
{
	uint32_t v;

	if (!hotspot_lines__u5(buf, len, pos, excluded, &v))
		return false;
	*out = (int32_t)((v >> 1) ^ -(v & 1));
	return true;
}

/* Outcomes of reading one (bci, line) pair. */
enum pair_result { PAIR_OK, PAIR_END, PAIR_SHORT };

/* The next pair at *pos into *bci, *line (deltas added), as read_pair does. */
static enum pair_result next_pair(const uint8_t *buf, size_t len, size_t *pos, uint8_t excluded, int32_t *bci,
				  int32_t *line)
{
	size_t p = *pos;
	int32_t dbci, dline;
	uint8_t b;

	if (p >= len)
		return PAIR_SHORT;
	b = buf[p++];
	if (b == 0)
		return PAIR_END;
	if (b == 0xff) {
		if (!u5_signed(buf, len, &p, excluded, &dbci) || !u5_signed(buf, len, &p, excluded, &dline))
			return PAIR_SHORT;
	} else {
		dbci = b >> 3;
		dline = b & 7;
	}
	/* Unsigned sums: hostile deltas wrap instead of overflowing. */
	*bci = (int32_t)((uint32_t)*bci + (uint32_t)dbci);
	*line = (int32_t)((uint32_t)*line + (uint32_t)dline);
	*pos = p;
	return PAIR_OK;
}

int32_t hotspot_lines__of_bci(const uint8_t *table, size_t len, uint8_t excluded, int32_t bci)
{
	int32_t cur_bci = 0, cur_line = 0, best_bci = 0, best_line = 0;
	size_t pos = 0;
	enum pair_result r;

	/* SynchronizationEntryBCI (-1), the entry of a synchronized method, is reported at bci 0. */
	if (bci < 0)
		bci = 0;
	/* Each pair takes at least one byte, so this ends within len steps. */
	while ((r = next_pair(table, len, &pos, excluded, &cur_bci, &cur_line)) == PAIR_OK) {
		if (cur_bci == bci)
			return cur_line > 0 ? cur_line : 0;
		/* Not sorted: the closest start at or before bci wins, the later one on a tie. */
		if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	if (r != PAIR_END)
		return 0;
	return best_line > 0 ? best_line : 0;
}

/* Bytes read at once: line tables are mostly tens of bytes. */
#define LINES_CHUNK 256
#define PAGE 4096

size_t hotspot_lines__first_read(uint64_t addr)
{
	size_t n = PAGE - (addr & (PAGE - 1));

	return n < LINES_CHUNK ? n : LINES_CHUNK;
}

/*
 * Appends the next chunk at addr + *have to buf, never across a page
 * boundary (the table may end just before an unmapped page): false when
 * unreadable.
 */
static bool fetch(struct hotspot_memory *mem, uint64_t addr, uint8_t *buf, size_t *have)
{
	uint64_t at = addr + *have;
	size_t n = hotspot_lines__first_read(at);

	if (n > NAMES_MAX_LINE_TABLE - *have)
		n = NAMES_MAX_LINE_TABLE - *have;
	if (!hotspot_memory__read(mem, at, buf + *have, n))
		return false;
	*have += n;
	return true;
}

int hotspot_lines__read_table(struct hotspot_memory *mem, uint64_t addr, uint8_t excluded, uint8_t **out, size_t *len)
{
	uint8_t *buf = malloc(NAMES_MAX_LINE_TABLE);
	int32_t bci = 0, line = 0;
	size_t have = 0, pos = 0;

	if (!buf)
		return HOTSPOT_UNRESOLVED_READ;
	for (;;) {
		/* Pairs are parsed as they arrive; a pair cut by the chunk's end waits for the next. */
		size_t p = pos;
		enum pair_result r = next_pair(buf, have, &p, excluded, &bci, &line);

		if (r == PAIR_OK) {
			pos = p;
			continue;
		}
		if (r == PAIR_END) {
			*len = pos + 1;
			*out = realloc(buf, *len) ?: buf;
			return 0;
		}
		/* A pair short of bytes: an excluded byte, or the chunk ended. */
		if (have - pos >= 1 + 2 * U5_MAX_LENGTH || have >= NAMES_MAX_LINE_TABLE) {
			free(buf);
			return HOTSPOT_UNRESOLVED_INVALID;
		}
		if (!fetch(mem, addr, buf, &have)) {
			free(buf);
			return HOTSPOT_UNRESOLVED_READ;
		}
	}
}
