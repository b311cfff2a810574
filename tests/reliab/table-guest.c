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
 *                               that wants to pose as another) every 200 ms, writing
 *                               events meanwhile; prints "written" or "refused: <errno>"
 *                               whenever the answer changes
 *   table-guest xsflood S       rewrite our announcement (ring/0/pages) for S seconds,
 *                               thousands of times a second: a new bad value each time,
 *                               the good one every tenth; prints the number of writes
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"
#include "xenif.h"

static uint64_t nev;
static struct mtrace_ring *ring;

/* Never more than half the ring ahead of dom0 (reader_pos), however slow it is (a
 * sanitizer build): the tests count what was written, so nothing may be overwritten. */
static void pace(void)
{
	uint64_t size = ring->mask + 1;

	if (++nev % 32)
		return;
	mtrace_ring_kick(ring);
	for (int i = 0; i < 20000; i++) {
		uint64_t rp = __atomic_load_n(&ring->hdr->reader_pos, __ATOMIC_ACQUIRE);
		uint64_t head = __atomic_load_n(&ring->hdr->head, __ATOMIC_RELAXED);
		if (head - rp < size / 2)
			return;
		usleep(500);
	}
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
		fprintf(stderr,
		    "usage: table-guest tables N LEN | relabel K | rename NAME | "
		    "xsflood S\n");
		return 2;
	}
	g = mtrace_guest_open(&c, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "table-guest: %s\n", err);
		return 1;
	}
	r = ring = mtrace_guest_ring(g, 0);
	if (!strcmp(argv[1], "tables") && argc > 3) {
		tables(r, (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	} else if (!strcmp(argv[1], "relabel")) {
		relabel(r, (unsigned)atoi(argv[2]));
	} else if (!strcmp(argv[1], "rename")) {
		struct xenif *x = xenif_open(NULL, NULL, XENIF_XS, err, sizeof(err));
		int last = -2;
		if (!x) {
			fprintf(stderr, "table-guest: %s\n", err);
			return 1;
		}
		for (uint64_t i = 0;; i++) {
			mtrace_switch(r, i & 7);
			if (i % 256 != 255)
				continue;
			usleep(2000);
			if (i % (256 * 100) != 255)
				continue;
			/* relative: our own /local/domain/<id>/name */
			int rc = x->ops->xs_write(x, 0, "name", argv[2], strlen(argv[2])) == 0
			    ? 0
			    : errno;
			if (rc != last)
				printf(rc ? "refused: %s\n" : "written\n", strerror(rc));
			fflush(stdout);
			last = rc;
		}
	} else if (!strcmp(argv[1], "xsflood")) {
		struct xenif *x = xenif_open(NULL, NULL, XENIF_XS, err, sizeof(err));
		const char *key = MTRACE_XS_DIR "/ring/0/pages";
		char v[32];
		size_t len;
		if (!x) {
			fprintf(stderr, "table-guest: %s\n", err);
			return 1;
		}
		char *good = x->ops->xs_read(x, 0, key, &len);
		if (!good) {
			fprintf(stderr, "table-guest: no %s\n", key);
			return 1;
		}
		unsigned long writes = 0;
		for (unsigned long i = 0; i < (unsigned long)atoi(argv[2]) * 5000; i++) {
			if (i % 10 == 9)
				snprintf(v, sizeof(v), "%s", good);
			else
				snprintf(v, sizeof(v), "%lu", 3 + 2 * i); /* never a power of two */
			writes += x->ops->xs_write(x, 0, key, v, strlen(v)) == 0;
			if (i % 50 == 49)
				usleep(10000);
		}
		printf("{\"writes\": %lu}\n", writes);
		fflush(stdout);
		free(good);
		xenif_close(x);
		for (;;)
			pause();
	} else {
		fprintf(stderr, "table-guest: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("{\"events\": %llu}\n", (unsigned long long)nev + 1);
	fflush(stdout);
	for (;;)
		pause();
}
