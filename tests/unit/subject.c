/*
 * subject.c - unit tests of client/lib/subject.c: a subject token names one host (or
 * domain) only; unescape is the exact inverse of escape, so that a publisher cannot make
 * two tokens (mtrace.h%31.…, mtrace.h1%00zz.…) that a reader shows as one name.
 */
#include <stdio.h>
#include <string.h>

#include "subject.h"
#include "unit.h"

static int unesc(const char *tok, char *out)
{
	return subject_token_unescape(tok, out, SUBJECT_TOKEN_MAX);
}

/* Every byte alone, and names of each length up to the cut: escape then unescape gives
 * the name back, and escaping the result gives the token back. */
static void round_trip(void)
{
	char name[300], tok[SUBJECT_TOKEN_MAX], back[SUBJECT_TOKEN_MAX], again[SUBJECT_TOKEN_MAX];

	for (int c = 1; c < 256; c++) {
		name[0] = (char)c;
		name[1] = 0;
		subject_token_escape(name, tok, sizeof(tok));
		CHECK(unesc(tok, back) == 0, "byte %d: %s refused", c, tok);
		CHECK(strcmp(back, name) == 0, "byte %d", c);
	}
	for (size_t n = 0; n < 255; n += 17) {
		for (size_t i = 0; i < n; i++)
			name[i] = (char)(i % 2 ? '.' : 'a' + i % 26);
		name[n] = 0;
		subject_token_escape(name, tok, sizeof(tok));
		CHECK(unesc(tok, back) == 0 && strcmp(back, name) == 0, "length %zu", n);
		subject_token_escape(back, again, sizeof(again));
		CHECK(strcmp(again, tok) == 0, "length %zu", n);
	}
	CHECK(unesc("%", back) == 0 && back[0] == 0, "the empty name");
}

/* What escape never writes is refused, whatever it would decode to. */
static void refused(void)
{
	char out[SUBJECT_TOKEN_MAX], tok[1024];
	static const char *const bad[] = {
		"",         /* escape never makes the empty token */
		"h%31",     /* "1" is kept by escape: an alias of h1 */
		"%68%31",   /* h1 all escaped */
		"h1%00zz",  /* NUL: would cut the name to h1 */
		"%00",      /* NUL alone */
		"h%2e",     /* lower-case hex: escape writes upper case */
		"h%2",      /* short */
		"h%",       /* lone % after a name */
		"%%",       /* % escaped is %25 */
		"h%G1",     /* not hex */
		"h_1",      /* '_' is escaped (%5F) */
		"h.1",      /* a token never holds a dot */
		"h*",       /* nor a wildcard */
		"h\xc3\xa9" /* raw bytes >= 0x80 are escaped */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(unesc(bad[i], out) < 0, "'%s' accepted as '%s'", bad[i], out);
	/* 256 bytes of name: escape cuts at 255 */
	memset(tok, 'a', 256);
	tok[256] = 0;
	CHECK(unesc(tok, out) < 0, "a 256-byte name");
	tok[255] = 0;
	CHECK(unesc(tok, out) == 0, "a 255-byte name");
	/* out too short for the name */
	CHECK(subject_token_unescape("abcd", out, 4) < 0);
	CHECK(subject_token_unescape("abc", out, 4) == 0 && !strcmp(out, "abc"));
}

const struct unit_test unit_subject[] = {
	{ "subject", "round_trip", round_trip },
	{ "subject", "refused", refused },
	{ NULL, NULL, NULL },
};
