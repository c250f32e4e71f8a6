/*
 * options: the agent's option string (contract and format in options.h).
 */
#include "options.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Whether item (len bytes) is key, alone or followed by '='. */
static bool is_key(const char *item, size_t len, const char *key)
{
	size_t klen = strlen(key);

	return len >= klen && !memcmp(item, key, klen) && (len == klen || item[klen] == '=');
}

/* "=DIGITS" (len bytes) as a number in [1, INT32_MAX]: 0, or -1. */
static int parse_interval(const char *text, size_t len, unsigned *out)
{
	uint64_t value = 0;

	if (len < 2 || text[0] != '=')
		return -1;
	for (size_t i = 1; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -1;
		value = value * 10 + (uint64_t)(text[i] - '0');
		if (value > INT32_MAX)
			return -1;
	}
	if (!value)
		return -1;
	*out = (unsigned)value;
	return 0;
}

int options__parse(const char *text, struct agent_options *opts, char *err, size_t err_size)
{
	bool seen_socket = false, seen_sigqueue = false, seen_nmethods = false, seen_alloc = false;
	int bad = 0;

	memset(opts, 0, sizeof(*opts));
	if (!text || !*text)
		return 0;
	/* The socket first, whatever its place, so that any error can be reported through it. */
	for (const char *item = text; item; item = strchr(item, ',') ? strchr(item, ',') + 1 : NULL) {
		const char *end = strchr(item, ',');
		size_t len = end ? (size_t)(end - item) : strlen(item);

		if (is_key(item, len, "socket") && len > 7 && len - 7 < sizeof(opts->socket) && !opts->socket[0]) {
			memcpy(opts->socket, item + 7, len - 7);
			opts->socket[len - 7] = '\0';
		}
	}
	for (const char *item = text; item && !bad; item = strchr(item, ',') ? strchr(item, ',') + 1 : NULL) {
		const char *end = strchr(item, ',');
		size_t len = end ? (size_t)(end - item) : strlen(item);
		int shown = len > 64 ? 64 : (int)len;

		if (is_key(item, len, "socket")) {
			if (seen_socket)
				bad = snprintf(err, err_size, "option socket given twice");
			else if (len <= 7 || item[6] != '=')
				bad = snprintf(err, err_size, "option socket needs a path: socket=PATH");
			else if (len - 7 >= sizeof(opts->socket))
				bad = snprintf(err, err_size, "socket path is %zu bytes long, the limit is %zu", len - 7,
					       sizeof(opts->socket) - 1);
			seen_socket = true;
		} else if (is_key(item, len, "sigqueue")) {
			if (seen_sigqueue)
				bad = snprintf(err, err_size, "option sigqueue given twice");
			else if (len != 8)
				bad = snprintf(err, err_size, "option sigqueue takes no value");
			seen_sigqueue = true;
			opts->sigqueue = true;
		} else if (is_key(item, len, "nmethods")) {
			if (seen_nmethods)
				bad = snprintf(err, err_size, "option nmethods given twice");
			else if (len != 8)
				bad = snprintf(err, err_size, "option nmethods takes no value");
			seen_nmethods = true;
			opts->nmethods = true;
		} else if (is_key(item, len, "alloc")) {
			if (seen_alloc)
				bad = snprintf(err, err_size, "option alloc given twice");
			else if (parse_interval(item + 5, len - 5, &opts->alloc_interval))
				bad = snprintf(err, err_size, "option alloc needs a number of bytes from 1 to %d: alloc=BYTES",
					       INT32_MAX);
			seen_alloc = true;
		} else if (!len) {
			bad = snprintf(err, err_size, "empty item in options \"%.64s\"", text);
		} else {
			bad = snprintf(err, err_size, "unknown option \"%.*s\" (known: socket=PATH, nmethods, alloc=BYTES, sigqueue)", shown,
				       item);
		}
	}
	return bad ? -1 : 0;
}
