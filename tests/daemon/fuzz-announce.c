/*
 * fuzz-announce.c - the announcement parser (daemon/announce.c) on any xenstore
 * contents a guest could write: it must accept only what is in range, and say why
 * in printable text otherwise (the reason reaches the log and clients).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "announce-table.h"
#include "announce.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct table t;
	struct announce a;
	char why[256];
	enum announce_status st;

	table_parse(&t, (const char *)data, size);
	why[0] = 0;
	st = announce_parse(&a, table_read, &t, why, sizeof(why));
	if (st == ANNOUNCE_OK) {
		if (a.rings < 1 || a.rings > MTRACE_MAX_RINGS || a.port == 0 ||
		    a.port >= ANNOUNCE_MAX_PORT || a.clock < MTRACE_CLOCK_MONOTONIC ||
		    a.clock > MTRACE_CLOCK_TSC)
			abort();
		for (uint32_t i = 0; i < a.rings; i++)
			if (a.pages[i] < MTRACE_RING_MIN_PAGES ||
			    a.pages[i] > MTRACE_RING_MAX_PAGES || (a.pages[i] & (a.pages[i] - 1)))
				abort();
		if (announce_pages(&a) > MTRACE_MAX_RINGS * (MTRACE_RING_MAX_PAGES + 1))
			abort();
	} else if (st == ANNOUNCE_BAD) {
		if (!why[0])
			abort();
		for (const char *p = why; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				abort();
	} else if (st != ANNOUNCE_NONE) {
		abort();
	}
	/* never more reads than keys there can be: state..rings, then two per ring */
	if (t.reads > 5 + 2 * MTRACE_MAX_RINGS)
		abort();
	return 0;
}
