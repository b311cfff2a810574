/*
 * label-guest - a guest whose strings are hostile to a web page: HTML and script,
 * quotes, control bytes, U+2028/2029, invalid UTF-8 and 4 KiB labels, in thread labels, an
 * exception and a counter name.  The browser test checks that the page shows them
 * as text and that nothing runs; it learns the strings from mtrace-cat, not from here.
 * Usage: label-guest [SECONDS to stay up after writing, default 3]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"

#define N_HOSTILE 8

static char big[MTRACE_STR_MAX + 1];

static const char *hostile(int i)
{
	static const char *const s[] = {
		"<img src=x onerror=\"window.__pwned=1\">",
		"<script>window.__pwned=2</script>",
		"\"'`;--</dd><b>bold</b>&amp;&lt;",
		"ctl\x01\x1b[31mred\x7f\ttab\nnewline\xe2\x80\xa8ls\xe2\x80\xa9ps",
		"bad-utf8-\xff\xfe-\xc3(",
		"javascript:window.__pwned=3",
		"<svg onload=window.__pwned=4>",
	};
	if (i < 7)
		return s[i];
	/* The longest string a record holds, with markup inside. */
	memset(big, 'A', sizeof(big) - 1);
	memcpy(big, "<iframe src=javascript:window.__pwned=5>", 40);
	big[sizeof(big) - 1] = 0;
	return big;
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg = { .rings = 1, .data_pages = 16 };
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256];
	unsigned linger = argc > 1 ? (unsigned)atoi(argv[1]) : 3;

	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "label-guest: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	mtrace_switch(r, 1);
	for (int i = 0; i < N_HOSTILE; i++) {
		uint64_t th = 100 + (uint64_t)i;
		mtrace_creates(r, 1, th, MTRACE_TT_TASK);
		mtrace_label(r, th, hostile(i));
	}
	/* An exception and a counter name with markup. */
	mtrace_creates(r, 1, 200, MTRACE_TT_TASK);
	mtrace_label(r, 200, "failing");
	mtrace_fails(r, 1, 200, "<img src=x onerror=window.__pwned=6>");
	mtrace_counter(r, 1, "<b onmouseover=window.__pwned=7>ctr</b>", 42);
	mtrace_fulfills(r, 1, 100);
	mtrace_ring_kick(r);
	printf("label-guest: %d hostile labels written\n", N_HOSTILE);
	fflush(stdout);
	sleep(linger);
	mtrace_guest_close(g);
	return 0;
}
