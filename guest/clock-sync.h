/*
 * clock-sync.h - a session's announcement of its ring clock against Xen system time
 * (clock-sync.c; the key is in proto/mtrace-ring.h, its use in docs/xen-time.md).
 * Internal to the guest library: guest.c measures at open and on reannounce, and its
 * session thread checks once a second.
 */
#ifndef MTRACE_GUEST_CLOCK_SYNC_H
#define MTRACE_GUEST_CLOCK_SYNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "xenif.h"

#define CLOCK_SYNC_PERIOD_NS 1000000000 /* checked at most this often */
#define CLOCK_SYNC_MOVE_NS   50000      /* rewritten when the relation moved more */

struct clock_sync {
	pthread_mutex_t lock;
	struct xenif *x;
	clockid_t clk;               /* what the rings' timestamps are (or, TSC, their timeline) */
	bool have;                   /* a measure is in hand (the source answered) */
	struct xenif_clock_pair now; /* the last measure */
	struct xenif_clock_pair put; /* the one announced */
	bool written;                /* put is in xenstore */
	uint64_t seq;                /* of put; increments on every rewrite */
	int64_t checked;             /* CLOCK_MONOTONIC of the last measure */
	int err;                     /* errno of the last failed measure (ENOTSUP: no source) */
};

/* ring_clock is the session's enum mtrace_clock. */
void clock_sync_init(struct clock_sync *cs, struct xenif *x, uint32_t ring_clock);
void clock_sync_destroy(struct clock_sync *cs);

/* Read the ring clock and Xen system time together; false (cs->err) when there is no
 * source here or it failed this time. */
bool clock_sync_measure(struct clock_sync *cs);

/* Whether the last measure moved from the announced relation by more than
 * CLOCK_SYNC_MOVE_NS, and by more than the two measures' uncertainties (noise is no move). */
bool clock_sync_moved(struct clock_sync *cs);

/* Write the last measure as base/clock-sync (in transaction tx, 0 for none), with the
 * next seq.  Nothing to write (no measure) is 0 too; -1 with errno on a xenstore error. */
int clock_sync_put(struct clock_sync *cs, uint32_t tx, const char *base);

/* A measure is due (CLOCK_SYNC_PERIOD_NS since the last). */
bool clock_sync_due(struct clock_sync *cs);

#endif
