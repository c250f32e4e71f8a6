/*
 * emit: writing names that came from the target into an output stream.
 *
 * Every frame name was read from the profiled process (symbol tables, perf
 * maps, Java method names), so it may hold any byte: markup, quotes, control
 * characters, invalid UTF-8. Each function here writes a name so that it
 * cannot change the structure of the document around it:
 *
 *   emit__json_string  a complete JSON string literal that is also safe
 *                      inside an HTML <script> element
 *   emit__html_text    text for an HTML element body or a quoted attribute
 *   emit__terminal     text for a terminal, with no escape sequences left
 *                      (the rules of common/terminal.h)
 *
 * All three write valid UTF-8: a byte that does not start a valid sequence
 * is written as U+FFFD, one replacement per byte.
 *
 * They do not report write errors one by one; a writer brackets its output
 * with emit__begin and emit__finish, which turns the stream's error state
 * into a negative errno.
 */
#ifndef JBPF_OUTPUT_EMIT_H
#define JBPF_OUTPUT_EMIT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Length (1 to 4) of the well-formed UTF-8 sequence at the start of the
 * NUL-terminated s, or 0 when s[0] starts none (a stray continuation byte,
 * an overlong form, a surrogate, a code point past U+10FFFF, a truncated
 * sequence). Never reads past the terminating NUL. s[0] must not be NUL.
 */
size_t emit__utf8_length(const char *s);

void emit__json_string(FILE *out, const char *s);
void emit__html_text(FILE *out, const char *s);
void emit__terminal(FILE *out, const char *s);

/*
 * emit__begin is called before a writer's first write (it clears errno);
 * emit__finish after
 * its last: it flushes, and returns 0, or a negative errno when any write
 * since emit__begin failed (-EIO when the cause is unknown).
 */
void emit__begin(FILE *out);
int emit__finish(FILE *out);

#endif /* JBPF_OUTPUT_EMIT_H */
