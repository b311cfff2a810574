/* utf8.c - UTF-8 checks and repair of guest-written strings (utf8.h). */
#include <stdint.h>

#include "utf8.h"

size_t
utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	uint32_t cp;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	/* a NUL stops the loop too: it is not a continuation byte */
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong 3-byte forms, surrogates, and beyond U+10FFFF */
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void
utf8_fix(char *str)
{
	unsigned char *s = (unsigned char *)str;

	while (s && *s) {
		size_t n = utf8_len(s);

		if (n == 0)
			*s++ = '?';
		else
			s += n;
	}
}
