/*
 * hostile-guest.c - guest programs for the daemon's hostile-guest tests, on the real
 * guest library and the simulated Xen:
 *
 *   hostile-guest count N      write exactly N events (plus one RING_START per ring),
 *                              print {"events": total}, then idle until killed
 *   hostile-guest storm N      write N events, then notify the event channel forever
 *   hostile-guest flood        write events, about a million a second, forever
 *   hostile-guest scribble     announce a ring, then write random bytes over the data
 *                              pages and random head/tail values, forever
 *   hostile-guest reopen N M   write N events, withdraw (close the session), open a new
 *                              one (fresh rings and refs), write M, print the total
 *
 * Options before the mode: --rings R --pages P (defaults 1 and 16).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrace-guest.h"

static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	/* xorshift64: fast, and the values only need to be arbitrary */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void write_events(struct mtrace_guest *g, unsigned rings, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct mtrace_ring *r = mtrace_guest_ring(g, (unsigned)(i % rings));
		mtrace_creates(r, 1, 100 + i, MTRACE_TT_TASK);
		/* pace a little so that a small ring is not overwritten before dom0 reads */
		if (i % 256 == 255)
			usleep(200);
	}
}

int main(int argc, char **argv)
{
	struct mtrace_guest_config c = { .rings = 1, .data_pages = 16 };
	struct mtrace_guest *g;
	char err[256];
	int a = 1;

	while (a + 1 < argc && argv[a][0] == '-') {
		if (!strcmp(argv[a], "--rings"))
			c.rings = (unsigned)atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "--pages"))
			c.data_pages = (unsigned)atoi(argv[a + 1]);
		else
			break;
		a += 2;
	}
	if (a >= argc) {
		fprintf(stderr,
		    "usage: hostile-guest [--rings R] [--pages P] "
		    "count N | storm N | flood | scribble | reopen N M\n");
		return 2;
	}
	g = mtrace_guest_open(&c, err, sizeof(err));
	if (!g) {
		fprintf(stderr, "hostile-guest: %s\n", err);
		return 1;
	}
	if (!strcmp(argv[a], "count") && a + 1 < argc) {
		uint64_t n = strtoull(argv[a + 1], NULL, 10);
		write_events(g, c.rings, n);
		printf("{\"events\": %llu}\n", (unsigned long long)(n + c.rings));
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(argv[a], "storm") && a + 1 < argc) {
		struct mtrace_ring *r = mtrace_guest_ring(g, 0);
		write_events(g, c.rings, strtoull(argv[a + 1], NULL, 10));
		printf("{\"events\": %llu}\n",
		    (unsigned long long)(strtoull(argv[a + 1], NULL, 10) + c.rings));
		fflush(stdout);
		/* thousands of notifications a second, far above the limiter's 150, with a
		 * breath now and then so that the test machine stays usable */
		for (unsigned k = 0;; k++) {
			mtrace_ring_kick(r);
			if (k % 64 == 63)
				usleep(1000);
		}
	}
	if (!strcmp(argv[a], "reopen") && a + 2 < argc) {
		uint64_t n = strtoull(argv[a + 1], NULL, 10), m = strtoull(argv[a + 2], NULL, 10);
		write_events(g, c.rings, n);
		/* let dom0 see the first session before it goes */
		sleep(1);
		mtrace_guest_close(g);
		usleep(300000);
		g = mtrace_guest_open(&c, err, sizeof(err));
		if (!g) {
			fprintf(stderr, "hostile-guest: reopen: %s\n", err);
			return 1;
		}
		write_events(g, c.rings, m);
		printf("{\"events\": %llu}\n", (unsigned long long)(n + m + 2 * c.rings));
		fflush(stdout);
		for (;;)
			pause();
	}
	if (!strcmp(argv[a], "flood")) {
		/* never stops; a pause per 4096 events keeps it near a million events a second
		 * (above dom0's budget per round, so fairness is exercised) without hogging a
		 * shared test machine */
		for (uint64_t i = 0;; i++) {
			struct mtrace_ring *r = mtrace_guest_ring(g, (unsigned)(i % c.rings));
			mtrace_switch(r, i & 1023);
			if ((i & 4095) == 4095)
				usleep(2000);
		}
	}
	if (!strcmp(argv[a], "scribble")) {
		for (;;) {
			for (unsigned k = 0; k < c.rings; k++) {
				struct mtrace_ring *r = mtrace_guest_ring(g, k);
				size_t size = (size_t)c.data_pages * MTRACE_PAGE_SIZE;
				for (size_t o = 0; o + 8 <= size; o += 8) {
					uint64_t v = rnd();
					memcpy(r->data + o, &v, 8);
				}
				__atomic_store_n(
				    &r->hdr->head, rnd() % (4 * size), __ATOMIC_RELEASE);
				__atomic_store_n(
				    &r->hdr->tail, rnd() % (4 * size), __ATOMIC_RELEASE);
				mtrace_ring_kick(r);
			}
			usleep(1000);
		}
	}
	fprintf(stderr, "hostile-guest: unknown mode %s\n", argv[a]);
	return 2;
}
