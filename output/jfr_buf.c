/*
 * jfr_buf: JFR's encodings into a growing buffer (contract in jfr_buf.h).
 */
#include "jfr_buf.h"

#include <stdlib.h>
#include <string.h>

void jfr_buf__bytes(struct jfr_buf *b, const void *data, size_t len)
{
	if (b->failed)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *n;

		while (cap < b->len + len)
			cap *= 2;
		n = realloc(b->data, cap);
		if (!n) {
			b->failed = true;
			return;
		}
		b->data = n;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

void jfr_buf__u8(struct jfr_buf *b, uint8_t v)
{
	jfr_buf__bytes(b, &v, 1);
}

/* A compressed integer: 7 bits a byte, least significant first, the ninth byte whole. */
void jfr_buf__varint(struct jfr_buf *b, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		if (v < 0x80) {
			jfr_buf__u8(b, (uint8_t)v);
			return;
		}
		jfr_buf__u8(b, (uint8_t)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	jfr_buf__u8(b, (uint8_t)v);
}

size_t jfr_buf__varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80 && n < 9) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * A string as JFR encodes one inline: 3 (UTF-8), its length, its bytes; the
 * empty string as 1, its own encoding (the JDK's reader takes a UTF-8
 * string of length 0 for null).
 */
void jfr_buf__string(struct jfr_buf *b, const char *s)
{
	size_t len = strlen(s);

	if (!len) {
		jfr_buf__u8(b, 1);
		return;
	}
	jfr_buf__u8(b, 3);
	jfr_buf__varint(b, len);
	jfr_buf__bytes(b, s, len);
}

void jfr_buf__be(struct jfr_buf *b, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		jfr_buf__u8(b, (uint8_t)(v >> (8 * i)));
}

/*
 * An event whose body (type id and fields) is in body, framed by its size,
 * which counts itself.
 */
void jfr_buf__event(struct jfr_buf *out, const struct jfr_buf *body)
{
	size_t size = body->len + 1;

	while (size != body->len + jfr_buf__varint_len(size))
		size = body->len + jfr_buf__varint_len(size);
	jfr_buf__varint(out, size);
	jfr_buf__bytes(out, body->data, body->len);
	out->failed |= body->failed;
}
