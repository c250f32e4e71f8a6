/*
 * json: a recursive-descent reader (contract in json.h). RFC 8259 grammar;
 * numbers go through strtod after the grammar has been checked.
 */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
	const char *p, *end;
};

static void skip_space(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static bool literal(struct reader *r, const char *word)
{
	size_t len = strlen(word);

	if ((size_t)(r->end - r->p) < len || memcmp(r->p, word, len))
		return false;
	r->p += len;
	return true;
}

static int hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string literal at r->p (the opening quote); a decoded copy, or NULL. */
static char *read_string(struct reader *r)
{
	/* Decoded text is never longer than the literal. */
	char *out = malloc((size_t)(r->end - r->p) + 1);
	size_t n = 0;

	if (!out)
		return NULL;
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p;

		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			out[n++] = (char)c;
			r->p++;
			continue;
		}
		if (r->end - r->p < 2)
			goto bad;
		c = (unsigned char)r->p[1];
		r->p += 2;
		switch (c) {
		case '"': case '\\': case '/': out[n++] = (char)c; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u': {
			int hi, lo;
			uint32_t cp;

			if (r->end - r->p < 4 || (hi = hex4(r->p)) < 0)
				goto bad;
			r->p += 4;
			cp = (uint32_t)hi;
			if (hi >= 0xD800 && hi < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' &&
			    (lo = hex4(r->p + 2)) >= 0xDC00 && lo < 0xE000) {
				cp = 0x10000 + ((uint32_t)(hi - 0xD800) << 10) + (uint32_t)(lo - 0xDC00);
				r->p += 6;
			} else if (hi >= 0xD800 && hi < 0xE000) {
				cp = 0xFFFD; /* a lone surrogate */
			}
			n += put_utf8(out + n, cp);
			break;
		}
		default:
			goto bad;
		}
	}
	if (r->p >= r->end)
		goto bad;
	r->p++;
	out[n] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

static bool read_number(struct reader *r, double *v)
{
	const char *s = r->p;
	char tmp[64], *end;
	size_t len;

	if (s < r->end && *s == '-')
		s++;
	if (s >= r->end || *s < '0' || *s > '9')
		return false;
	while (s < r->end && ((*s >= '0' && *s <= '9') || *s == '.' || *s == 'e' || *s == 'E' || *s == '+' ||
			      *s == '-'))
		s++;
	len = (size_t)(s - r->p);
	if (len >= sizeof(tmp))
		return false;
	memcpy(tmp, r->p, len);
	tmp[len] = '\0';
	*v = strtod(tmp, &end);
	if (end != tmp + len)
		return false;
	r->p = s;
	return true;
}

static bool append(struct json *v, struct json *item, char *key)
{
	struct json **items = realloc(v->items, (v->nr + 1) * sizeof(*items));

	if (!items)
		return false;
	v->items = items;
	if (v->type == JSON_OBJECT) {
		char **keys = realloc(v->keys, (v->nr + 1) * sizeof(*keys));

		if (!keys)
			return false;
		v->keys = keys;
		v->keys[v->nr] = key;
	}
	v->items[v->nr++] = item;
	return true;
}

static struct json *read_value(struct reader *r, int depth)
{
	struct json *v = calloc(1, sizeof(*v));
	char close;

	if (!v)
		return NULL;
	skip_space(r);
	if (r->p >= r->end || depth > JSON_MAX_DEPTH)
		goto bad;
	switch (*r->p) {
	case 'n':
		if (!literal(r, "null"))
			goto bad;
		return v;
	case 't':
	case 'f':
		v->type = JSON_BOOL;
		v->boolean = *r->p == 't';
		if (!literal(r, v->boolean ? "true" : "false"))
			goto bad;
		return v;
	case '"':
		v->type = JSON_STRING;
		v->string = read_string(r);
		if (!v->string)
			goto bad;
		return v;
	case '[':
	case '{':
		v->type = *r->p == '[' ? JSON_ARRAY : JSON_OBJECT;
		close = *r->p == '[' ? ']' : '}';
		r->p++;
		skip_space(r);
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return v;
		}
		for (;;) {
			char *key = NULL;
			struct json *item;

			if (v->type == JSON_OBJECT) {
				skip_space(r);
				if (r->p >= r->end || *r->p != '"' || !(key = read_string(r)))
					goto bad;
				skip_space(r);
				if (r->p >= r->end || *r->p != ':') {
					free(key);
					goto bad;
				}
				r->p++;
			}
			item = read_value(r, depth + 1);
			if (!item || !append(v, item, key)) {
				json_free(item);
				free(key);
				goto bad;
			}
			skip_space(r);
			if (r->p < r->end && *r->p == ',') {
				r->p++;
				continue;
			}
			if (r->p < r->end && *r->p == close) {
				r->p++;
				return v;
			}
			goto bad;
		}
	default:
		v->type = JSON_NUMBER;
		if (!read_number(r, &v->number))
			goto bad;
		return v;
	}
bad:
	json_free(v);
	return NULL;
}

struct json *json_parse(const char *text, size_t len)
{
	struct reader r = { text, text + len };
	struct json *v = read_value(&r, 0);

	skip_space(&r);
	if (v && r.p != r.end) {
		json_free(v);
		return NULL;
	}
	return v;
}

void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nr; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	free(v);
}

const struct json *json_at(const struct json *v, const char *path)
{
	while (v && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);
		const struct json *next = NULL;

		if (v->type != JSON_OBJECT)
			return NULL;
		for (size_t i = 0; i < v->nr && !next; i++)
			if (strlen(v->keys[i]) == len && !memcmp(v->keys[i], path, len))
				next = v->items[i];
		v = next;
		path += len + (dot != NULL);
	}
	return v;
}

const char *json_string_at(const struct json *v, const char *path)
{
	v = json_at(v, path);
	return v && v->type == JSON_STRING ? v->string : NULL;
}

bool json_quote(char *buf, size_t size, const char *s)
{
	size_t n = strlen(buf);

	if (n >= size)
		return false;
	buf[n++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		int w;

		if (c == '"' || c == '\\')
			w = snprintf(buf + n, size - n, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>')
			w = snprintf(buf + n, size - n, "\\u%04x", c);
		else
			w = snprintf(buf + n, size - n, "%c", c);
		if (w < 0 || (size_t)w >= size - n)
			return false;
		n += (size_t)w;
	}
	if (n + 2 > size)
		return false;
	buf[n++] = '"';
	buf[n] = '\0';
	return true;
}
