/*
 * test-ring.c - the ring ABI end to end in one process: the producer library writes,
 * the checked decoder reads.  Data pages sit between PROT_NONE guard pages, so a
 * decoder read outside the ring faults instead of passing silently.
 *
 * usage: test-ring CASE   (roundtrip, wrap, overwrite, budget, sites, concurrent
 *                          [seconds]: ring-flow.c; corrupt, header, truncated, strings,
 *                          seq: ring-hostile.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ring-test.h"

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (strcmp(what, "roundtrip") == 0)
		t_roundtrip();
	else if (strcmp(what, "wrap") == 0)
		t_wrap();
	else if (strcmp(what, "overwrite") == 0)
		t_overwrite();
	else if (strcmp(what, "budget") == 0)
		t_budget();
	else if (strcmp(what, "corrupt") == 0)
		t_corrupt();
	else if (strcmp(what, "header") == 0)
		t_header();
	else if (strcmp(what, "truncated") == 0)
		t_truncated();
	else if (strcmp(what, "sites") == 0)
		t_sites();
	else if (strcmp(what, "strings") == 0)
		t_strings();
	else if (strcmp(what, "seq") == 0)
		t_seq();
	else if (strcmp(what, "concurrent") == 0) {
		double s = argc > 2 ? atof(argv[2]) : 3;
		t_concurrent(s, 1);
		t_concurrent(s, 16);
	} else {
		fprintf(stderr,
		    "usage: %s roundtrip|wrap|overwrite|budget|corrupt|header|"
		    "truncated|sites|strings|seq|concurrent [seconds]\n",
		    argv[0]);
		return 2;
	}
	return check_status(what);
}
