/*
 * emit: escaping untrusted names for JSON, HTML and terminals (contract in
 * emit.h).
 *
 * The UTF-8 check follows the table of well-formed byte sequences in
 * RFC 3629 section 4, so overlong forms (C0 80 for NUL, which some decoders
 * turn back into a real NUL) and encoded surrogates are rejected too.
 */
#include "emit.h"

#include <errno.h>

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
#define REPLACEMENT "\xEF\xBF\xBD"

static int in_range(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

size_t emit__utf8_length(const char *str)
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

void emit__json_string(FILE *out, const char *s)
{
	fputc('"', out);
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t len;

		if (c < 0x80) {
			/*
			 * '<' and '>' are escaped so that no name can form
			 * "</script" or "<!--" inside the page's script
			 * element; '&' so the text means the same if it is
			 * ever parsed as HTML.
			 */
			if (c == '"' || c == '\\')
				fprintf(out, "\\%c", c);
			else if (c < 0x20 || c == 0x7F || c == '<' || c == '>' || c == '&')
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
			s++;
			continue;
		}
		len = emit__utf8_length(s);
		if (!len) {
			fputs("\\ufffd", out);
			s++;
		} else if (len == 3 && c == 0xE2 && (unsigned char)s[1] == 0x80 &&
			   ((unsigned char)s[2] == 0xA8 || (unsigned char)s[2] == 0xA9)) {
			/* U+2028 and U+2029 end a line in older JavaScript. */
			fprintf(out, "\\u%s", (unsigned char)s[2] == 0xA8 ? "2028" : "2029");
			s += 3;
		} else {
			fwrite(s, 1, len, out);
			s += len;
		}
	}
	fputc('"', out);
}

/* Writes the UTF-8 sequence at s, or U+FFFD for a byte that starts none; returns what follows. */
static const char *copy_utf8(FILE *out, const char *s)
{
	size_t len = emit__utf8_length(s);

	if (!len) {
		fputs(REPLACEMENT, out);
		return s + 1;
	}
	fwrite(s, 1, len, out);
	return s + len;
}

void emit__html_text(FILE *out, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", out); s++; continue;
		case '<': fputs("&lt;", out); s++; continue;
		case '>': fputs("&gt;", out); s++; continue;
		case '"': fputs("&quot;", out); s++; continue;
		case '\'': fputs("&#39;", out); s++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7F) {
			fputs(REPLACEMENT, out);
			s++;
			continue;
		}
		s = copy_utf8(out, s);
	}
}

void emit__terminal(FILE *out, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s, next = (unsigned char)s[1];

		if (c < 0x20 || c == 0x7F) {
			fputc('?', out);
			s++;
		} else if (c == 0xC2 && next >= 0x80 && next < 0xA0) {
			/* U+0080..U+009F: C1 controls, CSI among them. */
			fputc('?', out);
			s += 2;
		} else {
			s = copy_utf8(out, s);
		}
	}
}

void emit__begin(FILE *out)
{
	(void)out;
	errno = 0;
}

int emit__finish(FILE *out)
{
	/*
	 * A write that fails inside a long fputs or fwrite sets the stream's
	 * error flag and errno, and may leave nothing buffered, so fflush can
	 * succeed afterwards. errno was cleared by emit__begin and stdio does
	 * not clear it on success, so it still names the first failure.
	 */
	int earlier = errno;

	errno = 0;
	if (fflush(out) == EOF)
		return errno ? -errno : earlier ? -earlier : -EIO;
	if (ferror(out))
		return earlier ? -earlier : -EIO;
	return 0;
}
