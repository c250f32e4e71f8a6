/*
 * terminal: text from a target made safe for a terminal (contract in
 * terminal.h).
 *
 * The UTF-8 check follows the table of well-formed byte sequences in
 * RFC 3629 section 4, so overlong forms (C0 80 for NUL, which some decoders
 * turn back into a real NUL, or C1 9B for CSI) and encoded surrogates are
 * rejected too.
 */
#include "terminal.h"

#include <string.h>

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
#define REPLACEMENT "\xEF\xBF\xBD"

static int in_range(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

size_t terminal__utf8_length(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (in_range(s[0], 0xC2, 0xDF)) {
		len = 2;
	} else if (in_range(s[0], 0xE0, 0xEF)) {
		len = 3;
		if (s[0] == 0xE0)
			lo = 0xA0; /* shorter forms are overlong */
		else if (s[0] == 0xED)
			hi = 0x9F; /* ED A0..BF encode surrogates */
	} else if (in_range(s[0], 0xF0, 0xF4)) {
		len = 4;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F; /* past U+10FFFF */
	} else {
		return 0;
	}
	/* A NUL fails the range check, so a truncated sequence stops there. */
	if (!in_range(s[1], lo, hi))
		return 0;
	for (size_t i = 2; i < len; i++)
		if (!in_range(s[i], 0x80, 0xBF))
			return 0;
	return len;
}

size_t terminal__next(const char *s, const char **out, size_t *out_len)
{
	unsigned char c = (unsigned char)s[0];
	size_t len;

	if (c < 0x20 || c == 0x7F) {
		*out = "?";
		*out_len = 1;
		return 1;
	}
	len = terminal__utf8_length(s);
	if (!len) {
		*out = REPLACEMENT;
		*out_len = sizeof(REPLACEMENT) - 1;
		return 1;
	}
	if (len == 2 && c == 0xC2 && (unsigned char)s[1] < 0xA0) {
		/* U+0080..U+009F: the C1 controls, CSI among them. */
		*out = "?";
		*out_len = 1;
		return 2;
	}
	*out = s;
	*out_len = len;
	return len;
}

const char *terminal__safe(const char *s, char *buf, size_t size)
{
	size_t used = 0;

	while (s && *s) {
		const char *piece;
		size_t len, step = terminal__next(s, &piece, &len);

		if (used + len >= size)
			break;
		memcpy(buf + used, piece, len);
		used += len;
		s += step;
	}
	buf[used] = '\0';
	return buf;
}
