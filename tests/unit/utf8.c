/*
 * utf8.c - unit tests of common/utf8.c: which guest-written byte sequences are valid
 * UTF-8 (the stream's string fields and JSON output must be), and their repair.
 */
#include <string.h>

#include "unit.h"
#include "utf8.h"

#define LEN(s) utf8_len((const unsigned char *)(s))

static void valid(void)
{
	CHECK(LEN("a") == 1);
	CHECK(LEN("\x7f") == 1);
	CHECK(LEN("\xc2\x80") == 2); /* U+0080, the first 2-byte form */
	CHECK(LEN("\xdf\xbf") == 2);
	CHECK(LEN("\xe0\xa0\x80") == 3); /* U+0800 */
	CHECK(LEN("\xe2\x82\xac") == 3); /* the euro sign */
	CHECK(LEN("\xed\x9f\xbf") == 3); /* U+D7FF, just below the surrogates */
	CHECK(LEN("\xee\x80\x80") == 3); /* U+E000, just above */
	CHECK(LEN("\xef\xbf\xbf") == 3);
	CHECK(LEN("\xf0\x90\x80\x80") == 4); /* U+10000 */
	CHECK(LEN("\xf4\x8f\xbf\xbf") == 4); /* U+10FFFF, the last code point */
	/* only the sequence at s counts, not what follows it */
	CHECK(LEN("\xc3\xa9\xff") == 2);
}

static void invalid(void)
{
	CHECK(LEN("\x80") == 0); /* a lone continuation byte */
	CHECK(LEN("\xbf") == 0);
	CHECK(LEN("\xc0\x80") == 0);     /* overlong NUL */
	CHECK(LEN("\xc1\xbf") == 0);     /* overlong 2-byte */
	CHECK(LEN("\xe0\x80\x80") == 0); /* overlong 3-byte */
	CHECK(LEN("\xe0\x9f\xbf") == 0);
	CHECK(LEN("\xed\xa0\x80") == 0);     /* U+D800, a surrogate */
	CHECK(LEN("\xed\xbf\xbf") == 0);     /* U+DFFF */
	CHECK(LEN("\xf0\x80\x80\x80") == 0); /* overlong 4-byte */
	CHECK(LEN("\xf0\x8f\xbf\xbf") == 0);
	CHECK(LEN("\xf4\x90\x80\x80") == 0); /* U+110000 */
	CHECK(LEN("\xf5\x80\x80\x80") == 0);
	CHECK(LEN("\xff") == 0);
	CHECK(LEN("\xfe") == 0);
}

static void truncated(void)
{
	/* a NUL (the string's end) is never a continuation byte */
	CHECK(LEN("\xc3") == 0);
	CHECK(LEN("\xe2\x82") == 0);
	CHECK(LEN("\xf0\x90\x80") == 0);
	/* nor is an ASCII byte */
	CHECK(LEN("\xc3"
	          "a") == 0);
	CHECK(LEN("\xe2\x82"
	          "a") == 0);
}

/* utf8_fix: every byte not part of valid UTF-8 becomes '?', the rest stays */
static void fix(void)
{
	char s[] = "ok \xc3\xa9 \xff bad \xed\xa0\x80 end \xc3";
	char clean[] = "label \xe2\x82\xac";

	utf8_fix(s);
	CHECK(strcmp(s, "ok \xc3\xa9 ? bad ??? end ?") == 0, "\"%s\"", s);
	utf8_fix(clean);
	CHECK(strcmp(clean, "label \xe2\x82\xac") == 0);
	utf8_fix(NULL); /* allowed: nothing to do */
}

const struct unit_test unit_utf8[] = {
	{ "utf8", "valid", valid },
	{ "utf8", "invalid", invalid },
	{ "utf8", "truncated", truncated },
	{ "utf8", "fix", fix },
	{ "utf8", NULL, NULL },
};
