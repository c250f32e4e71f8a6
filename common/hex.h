/*
 * hex: the value of one hexadecimal digit, either case; -1 for any other
 * character. Every parser of hexadecimal text (kallsyms' addresses, a
 * target's maps, a URL's percent escapes) reads its digits through this.
 */
#ifndef JBPF_HEX_H
#define JBPF_HEX_H

static inline int hex__digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* JBPF_HEX_H */
