/*
 * json: a small reader for the Chrome DevTools Protocol's messages, enough
 * for tests: parse a whole message into a tree, look members up by a
 * dotted path, read strings, numbers and booleans.
 *
 * Strings are decoded to UTF-8 (\u escapes and surrogate pairs included)
 * and NUL-terminated; a string holding U+0000 is cut there. Nesting is
 * bounded (JSON_MAX_DEPTH), so a hostile message cannot exhaust the stack.
 */
#ifndef JBPF_TEST_JSON_H
#define JBPF_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 128

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	bool boolean;
	double number;
	char *string;         /* JSON_STRING */
	struct json **items;  /* JSON_ARRAY and JSON_OBJECT values */
	char **keys;          /* JSON_OBJECT: keys[i] names items[i] */
	size_t nr;
};

/* The tree of text[0..len), or NULL when it is not exactly one JSON value (or out of memory). */
struct json *json_parse(const char *text, size_t len);
void json_free(struct json *value);

/* The member at path ("result.result.value": objects only), or NULL. */
const struct json *json_at(const struct json *value, const char *path);
/* The string at path, or NULL when there is none or it is not a string. */
const char *json_string_at(const struct json *value, const char *path);

/* Appends s as a JSON string literal (also a valid JavaScript literal) to buf; false if it does not fit. */
bool json_quote(char *buf, size_t size, const char *s);

#endif /* JBPF_TEST_JSON_H */
