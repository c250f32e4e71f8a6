/*
 * terminal: text that came from a target, made safe to show on a terminal.
 *
 * A target chooses its comm, its threads' names, what its agent says, its
 * symbols; printed raw, an escape sequence among them could move the
 * cursor, rewrite earlier lines, retitle the window or, on some terminals,
 * answer back into the profiler's input. Everything a target controls
 * passes through here before it reaches stderr or stdout:
 *
 *   - C0 controls (0x00-0x1F: ESC, CR, BEL, ...) and DEL become '?';
 *   - C1 controls encoded in UTF-8 (U+0080-U+009F: CSI is U+009B) become '?';
 *   - a byte that starts no well-formed UTF-8 sequence (a raw 0x9B, which
 *     an 8-bit terminal takes for CSI, among them) becomes U+FFFD;
 *   - every other well-formed UTF-8 character is kept.
 *
 * So the result holds no byte below 0x20, no 0x7F, and no byte 0x80-0x9F
 * but as a continuation of a printable character. Pure functions, no state.
 */
#ifndef JBPF_TERMINAL_H
#define JBPF_TERMINAL_H

#include <stddef.h>

/*
 * Length (1 to 4) of the well-formed UTF-8 sequence at the start of the
 * NUL-terminated s, or 0 when s[0] starts none (a stray continuation byte,
 * an overlong form, a surrogate, a code point past U+10FFFF, a truncated
 * sequence). Never reads past the terminating NUL. s[0] must not be NUL.
 */
size_t terminal__utf8_length(const char *s);

/*
 * One character of s (s[0] not NUL) made safe: *out and *out_len are the
 * bytes to show for it (a static replacement, or s itself). Returns how
 * many bytes of s it stands for (at least 1).
 */
size_t terminal__next(const char *s, const char **out, size_t *out_len);

/*
 * A safe copy of s in buf (size > 0), cut before a character that would
 * not fit, always NUL-terminated; s NULL gives "". Returns buf, for use as
 * a printf argument.
 */
const char *terminal__safe(const char *s, char *buf, size_t size);

#endif /* JBPF_TERMINAL_H */
