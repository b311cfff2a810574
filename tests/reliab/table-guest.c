/*
 * table-guest.c - guests for the reliability tests, on the real guest library and the
 * simulated Xen (tests/reliab):
 *
 *   table-guest tables N LEN    N threads, each given its own label of LEN characters,
 *                               300 counters and 300 failure strings with long names;
 *                               prints {"events": total}, then idles
 *   table-guest relabel K       one thread given labels "a" and "b" in turn K times,
 *                               three more threads labelled "a" once; prints the total
 *   table-guest rename NAME     write NAME into our own xenstore "name" node (as a guest
 *                               that wants to pose as another); prints "written" or
 *                               "refused: <errno>", then writes events until killed
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"
#include "xenif.h"

static uint64_t nev;

static void pace(void)
{
	/* a small ring must not be overwritten before dom0 reads it */
	if (++nev % 64 == 0)
		usleep(300);
}

static void tables(struct mtrace_ring *r, unsigned n, unsigned len)
{
	char s[300];

	if (len > 250)
		len = 250;
	for (unsigned i = 0; i < n; i++) {
		mtrace_creates(r, 1, 1000 + i, MTRACE_TT_TASK);
		pace();
		snprintf(s, sizeof(s), "%0*u", (int)len, i);
		mtrace_label(r, 1000 + i, s);
		pace();
	}
	for (unsigned i = 0; i < 300; i++) {
		snprintf(s, sizeof(s), "counter-%0*u", (int)len - 8, i);
		mtrace_counter(r, 1, s, i);
		pace();
		snprintf(s, sizeof(s), "Failure(\"%0*u\")", (int)len - 11, i);
		mtrace_fails(r, 1, 1000 + i, s);
		pace();
	}
}

static void relabel(struct mtrace_ring *r, unsigned k)
{
	mtrace_creates(r, 1, 10, MTRACE_TT_TASK);
	pace();
	for (unsigned i = 0; i < k; i++) {
		mtrace_label(r, 10, i % 2 ? "b" : "a");
		pace();
	}
	for (unsigned t = 11; t < 14; t++) {
		mtrace_creates(r, 1, t, MTRACE_TT_TASK);
		mtrace_label(r, t, "a");
		nev++;
		pace();
	}
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config c = { .rings = 1, .data_pages = 64 };
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256];

	if (argc < 3) {
		fprintf(stderr, "usage: table-guest tables N LEN | relabel K | rename NAME\n");
		return 2;
	}
	if (!strcmp(argv[1], "rename")) {
		struct xenif *x = xenif_open(NULL, NULL, XENIF_XS, err, sizeof(err));
		if (!x) {
			fprintf(stderr, "table-guest: %s\n", err);
			return 1;
		}
		/* relative: our own /local/domain/<id>/name */
		if (x->ops->xs_write(x, 0, "name", argv[2], strlen(argv[2])) == 0)
			printf("written\n");
		else
			printf("refused: %s\n", strerror(errno));
		fflush(stdout);
		xenif_close(x);
	}
	g = mtrace_guest_open(&c, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "table-guest: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	if (!strcmp(argv[1], "tables") && argc > 3) {
		tables(r, (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	} else if (!strcmp(argv[1], "relabel")) {
		relabel(r, (unsigned)atoi(argv[2]));
	} else if (!strcmp(argv[1], "rename")) {
		for (uint64_t i = 0;; i++) {
			mtrace_switch(r, i & 7);
			if (i % 256 == 255)
				usleep(2000);
		}
	} else {
		fprintf(stderr, "table-guest: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("{\"events\": %llu}\n", (unsigned long long)nev + 1);
	fflush(stdout);
	for (;;)
		pause();
}
