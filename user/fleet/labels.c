/*
 * labels: --label, label values and the ingest name (contract in labels.h).
 */
#include "labels.h"

#include <stdio.h>
#include <string.h>

#include "common/runes.h"

static bool label_rune_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* A value survives Pyroscope's parser unchanged: no separator, no space to trim, nothing to quote. */
static bool value_rune_ok(char c)
{
	return c > ' ' && c < 0x7f && !strchr(",{}=\"\\", c);
}

bool labels__key_ok(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > FLEET_LABEL_KEY_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!label_rune_ok(key[i]))
			return false;
	return strcmp(key, "__name__") && strcmp(key, "service_name") && strcmp(key, FLEET_LABEL_HOST) &&
	       strcmp(key, FLEET_LABEL_CONTAINER);
}

int labels__parse(const char *arg, struct fleet_label *out, char *err, size_t err_size)
{
	const char *eq = strchr(arg, '=');
	size_t klen, vlen;

	if (!eq) {
		snprintf(err, err_size, "--label: '%.64s' is not KEY=VALUE", arg);
		return -1;
	}
	klen = (size_t)(eq - arg);
	vlen = strlen(eq + 1);
	if (!klen || klen > FLEET_LABEL_KEY_MAX) {
		snprintf(err, err_size, "--label: the name must have 1 to %d characters", FLEET_LABEL_KEY_MAX);
		return -1;
	}
	memcpy(out->key, arg, klen);
	out->key[klen] = '\0';
	if (!labels__key_ok(out->key)) {
		snprintf(err, err_size,
			 "--label: '%.64s' is not a label name to use (letters, digits, '_' and '.'; not __name__, "
			 "service_name, " FLEET_LABEL_HOST " or " FLEET_LABEL_CONTAINER ", which are set)",
			 out->key);
		return -1;
	}
	if (!vlen || vlen > FLEET_LABEL_VALUE_MAX) {
		snprintf(err, err_size, "--label %s: the value must have 1 to %d characters", out->key,
			 FLEET_LABEL_VALUE_MAX);
		return -1;
	}
	for (size_t i = 0; i < vlen; i++) {
		if (!value_rune_ok(eq[1 + i])) {
			snprintf(err, err_size,
				 "--label %s: the value may not hold spaces, controls or any of , { } = \" \\", out->key);
			return -1;
		}
	}
	memcpy(out->value, eq + 1, vlen + 1);
	return 0;
}

void labels__sanitize_value(const char *in, char *out, size_t size)
{
	runes__replace(in, out, size, value_rune_ok);
}

int labels__app_name(char *buf, size_t size, const char *service, const char *event,
		     const struct fleet_label *labels, size_t nr)
{
	size_t used;
	int n = snprintf(buf, size, "%s.%s{", service, event);

	if (n < 0 || (size_t)n >= size)
		return -1;
	used = (size_t)n;
	for (size_t i = 0; i < nr; i++) {
		n = snprintf(buf + used, size - used, "%s%s=%s", i ? "," : "", labels[i].key, labels[i].value);
		if (n < 0 || (size_t)n >= size - used)
			return -1;
		used += (size_t)n;
	}
	if (used + 2 > size)
		return -1;
	buf[used++] = '}';
	buf[used] = '\0';
	return (int)used;
}
