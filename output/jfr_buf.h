/*
 * jfr_buf: a JDK Flight Recorder file's bytes as output/jfr.c builds them:
 * a growing buffer, and the encodings the format uses (compressed
 * integers, inline strings, big-endian header fields, an event framed by
 * its size). A failed allocation marks the buffer failed; later writes do
 * nothing, and the writer checks once at the end.
 */
#ifndef JBPF_JFR_BUF_H
#define JBPF_JFR_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jfr_buf {
	uint8_t *data;
	size_t len, cap;
	bool failed;
};

/* len bytes of data, then one byte. */
void jfr_buf__bytes(struct jfr_buf *b, const void *data, size_t len);
void jfr_buf__u8(struct jfr_buf *b, uint8_t v);

/* A compressed integer: 7 bits a byte, least significant first, the ninth byte whole. */
void jfr_buf__varint(struct jfr_buf *b, uint64_t v);

/* How many bytes jfr_buf__varint writes for v. */
size_t jfr_buf__varint_len(uint64_t v);

/*
 * A string as JFR encodes one inline: 3 (UTF-8), its length, its bytes; the
 * empty string as 1, its own encoding (the JDK's reader takes a UTF-8
 * string of length 0 for null).
 */
void jfr_buf__string(struct jfr_buf *b, const char *s);

/* The low bytes of v, most significant first (the chunk header's fields). */
void jfr_buf__be(struct jfr_buf *b, uint64_t v, int bytes);

/*
 * An event whose body (type id and fields) is in body, framed by its size,
 * which counts itself.
 */
void jfr_buf__event(struct jfr_buf *out, const struct jfr_buf *body);

#endif /* JBPF_JFR_BUF_H */
