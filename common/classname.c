/*
 * classname: class signature + method name to "package.Class.method"
 * (contract in classname.h).
 */
#include "classname.h"

#include <stdbool.h>
#include <string.h>

struct out {
	char *buf;
	size_t cap, len;
	bool full;
};

static void put(struct out *o, const char *s, size_t n, bool dots)
{
	for (size_t i = 0; i < n && !o->full; i++) {
		if (o->len + 1 >= o->cap) {
			o->full = true;
			break;
		}
		o->buf[o->len++] = dots && s[i] == '/' ? '.' : s[i];
	}
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Length of name without a hidden class's "/0x<hex>" (or ".0x<hex>") suffix and the "$NN" before it. */
static size_t without_hidden_suffix(const char *name, size_t len)
{
	const char *slash = NULL;
	size_t i, cut;

	/* Class.getName() shows "/0x..."; the JVM's own name, which JVMTI returns, has ".0x...". */
	for (i = len; i > 0; i--)
		if (name[i - 1] == '/' || name[i - 1] == '.') {
			slash = name + i - 1;
			break;
		}
	if (!slash || (size_t)(slash - name) + 3 > len || slash[1] != '0' || slash[2] != 'x')
		return len;
	for (i = (size_t)(slash - name) + 3; i < len; i++)
		if (!is_hex(name[i]))
			return len;
	if ((size_t)(slash - name) + 3 == len)
		return len; /* "/0x" with no digits: not an address */
	cut = (size_t)(slash - name);
	for (i = cut; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	if (i < cut && i > 0 && name[i - 1] == '$')
		cut = i - 1;
	return cut;
}

/* Length of buf[0..len) without a UTF-8 character cut short at its end. */
static size_t whole_characters(const char *buf, size_t len)
{
	size_t start = len, need;
	unsigned char lead;

	while (start > 0 && ((unsigned char)buf[start - 1] & 0xc0) == 0x80)
		start--;
	if (start == 0)
		return len;
	lead = (unsigned char)buf[start - 1];
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	return len - (start - 1) < need ? start - 1 : len;
}

/* The class of an "L...;" signature (or a bare internal name), dotted, hidden-class suffix removed. */
static void put_class(struct out *o, const char *name, size_t len)
{
	if (len >= 2 && name[0] == 'L' && name[len - 1] == ';') {
		name++;
		len -= 2;
	}
	put(o, name, without_hidden_suffix(name, len), true);
}

static size_t finish(struct out *o)
{
	if (o->full)
		o->len = whole_characters(o->buf, o->len);
	o->buf[o->len] = '\0';
	return o->len;
}

size_t classname__format(const char *class_sig, const char *method, char *out, size_t cap)
{
	struct out o = { .buf = out, .cap = cap };

	if (!cap)
		return 0;
	if (class_sig)
		put_class(&o, class_sig, strlen(class_sig));
	else
		put(&o, "[unknown class]", 15, false);
	put(&o, ".", 1, false);
	method = method ? method : "[unknown]";
	put(&o, method, strlen(method), false);
	return finish(&o);
}

/* The Java names of the primitive types, by their signature letter. */
static const char *primitive_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'B': return "byte";
	case 'C': return "char";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	case 'F': return "float";
	case 'D': return "double";
	default: return NULL;
	}
}

size_t classname__type(const char *class_sig, char *out, size_t cap)
{
	struct out o = { .buf = out, .cap = cap };
	size_t dims = 0, len;
	const char *prim;

	if (!cap)
		return 0;
	if (!class_sig || !*class_sig) {
		put(&o, "[unknown class]", 15, false);
		return finish(&o);
	}
	while (class_sig[dims] == '[')
		dims++;
	len = strlen(class_sig + dims);
	prim = dims && len == 1 ? primitive_name(class_sig[dims]) : NULL;
	if (prim)
		put(&o, prim, strlen(prim), false);
	else
		put_class(&o, class_sig + dims, len);
	for (size_t i = 0; i < dims; i++)
		put(&o, "[]", 2, false);
	return finish(&o);
}
