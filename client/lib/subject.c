/*
 * subject.c - escaping host and domain names into NATS subject tokens.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "subject.h"

static int keep(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '-';
}

void subject_token_escape(const char *name, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (outlen < 4) {
		if (outlen)
			*out = 0;
		return;
	}
	if (!*name) {
		/* the empty name: a lone escape of nothing would be ambiguous */
		snprintf(out, outlen, "%%");
		return;
	}
	for (size_t i = 0; name[i] && i < 255 && o + 4 <= outlen; i++) {
		unsigned char c = (unsigned char)name[i];
		if (keep(c)) {
			out[o++] = (char)c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = 0;
}

static int unhex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int subject_token_unescape(const char *tok, char *out, size_t outlen)
{
	size_t o = 0;

	if (!outlen)
		return -1;
	*out = 0;
	if (strcmp(tok, "%") == 0)
		return 0;
	if (!*tok)
		return -1; /* escape never makes the empty token */
	for (size_t i = 0; tok[i]; i++) {
		int c = (unsigned char)tok[i];
		if (o + 1 >= outlen || o == 255) /* escape cuts a name at 255 bytes */
			return -1;
		if (c == '%') {
			int h = unhex(tok[i + 1]), l = h < 0 ? -1 : unhex(tok[i + 2]);
			if (l < 0)
				return -1;
			c = h << 4 | l;
			/* only what escape writes: never NUL (it would cut the name), never a
			 * byte escape keeps (%31 for "1" would alias "h1") */
			if (c == 0 || keep((unsigned char)c))
				return -1;
			i += 2;
		} else if (!keep((unsigned char)c)) {
			return -1;
		}
		out[o++] = (char)c;
	}
	out[o] = 0;
	return 0;
}

bool subject_token_is_numbered(const char *tok, size_t n)
{
	unsigned long long v = 0;

	if (n == 0 || tok[0] != '_')
		return false;
	if (n == 1)
		return true;
	if (n > 11 || (tok[1] == '0' && n > 2))
		return false;
	for (size_t i = 1; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return false;
		v = v * 10 + (unsigned)(tok[i] - '0');
	}
	return v <= UINT32_MAX;
}
