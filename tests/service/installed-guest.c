/*
 * installed-guest.c - a guest program built by install-layout.sh from the INSTALLED
 * <mtrace-guest.h> and mtrace-guest.pc only (never from the source tree), then run in
 * a simulated domain: the daemon must see its label and counter.
 *
 * usage: installed-guest LABEL SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mtrace-guest.h>

int main(int argc, char **argv)
{
	struct mtrace_guest_config cfg = { .rings = 1, .data_pages = 4 };
	struct mtrace_guest *g;
	struct mtrace_ring *r;
	char err[256];
	int secs;

	if (argc != 3) {
		fprintf(stderr, "usage: installed-guest LABEL SECONDS\n");
		return 2;
	}
	secs = atoi(argv[2]);
	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (g == NULL) {
		fprintf(stderr, "installed-guest: %s\n", err);
		return 1;
	}
	r = mtrace_guest_ring(g, 0);
	/* Keep emitting for a while so a client attaching late still sees events. */
	for (int i = 0; i < secs * 20; i++) {
		uint64_t t = 100 + (uint64_t)i;
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		mtrace_creates(r, 1, t, MTRACE_TT_TASK);
		mtrace_label(r, t, argv[1]);
		mtrace_counter(r, t, "installed-counter", i);
		mtrace_fulfills(r, 1, t);
		nanosleep(&ts, NULL);
	}
	mtrace_guest_close(g);
	return 0;
}
