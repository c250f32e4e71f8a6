/*
 * emit: escaping untrusted names for JSON, HTML and terminals (contract in
 * emit.h).
 *
 * The UTF-8 check and the terminal's rules are common/terminal.c's, which
 * the profiler's own messages use too: one definition of what is safe.
 */
#include "emit.h"

#include <errno.h>

#include "common/terminal.h"

/* U+FFFD REPLACEMENT CHARACTER, encoded. */
#define REPLACEMENT "\xEF\xBF\xBD"

size_t emit__utf8_length(const char *s)
{
	return terminal__utf8_length(s);
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
		const char *piece;
		size_t len;

		s += terminal__next(s, &piece, &len);
		fwrite(piece, 1, len, out);
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
