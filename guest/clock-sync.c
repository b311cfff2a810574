/*
 * clock-sync.c - a session's ring clock against Xen system time, announced as
 * data/mtrace/clock-sync = "<seq> <ring_clock_ns> <xen_ns> <width_ns>" so that dom0 can
 * put the guest's records on its own timeline (docs/xen-time.md).
 *
 * The pair is xenif's clock_pair: exact on the simulated Xen (its Xen time is the
 * monotonic clock), measured on real Xen (pvclock, or runstate bounds), absent where
 * no source is open to the guest -- then no key, and dom0 says the mapping is unknown.
 *
 * When: at open and on reannounce (resume, migration: Xen's time is another host's),
 * and when the relation moved.  That check costs a clock_pair, a few clock reads (or,
 * every ten seconds on real Xen without pvclock, a sleep of a few hundred
 * microseconds): never on a producer's path, but on the session's thread once a second.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock-sync.h"
#include "mtrace-ring.h"

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void clock_sync_init(struct clock_sync *cs, struct xenif *x, uint32_t ring_clock)
{
	memset(cs, 0, sizeof(*cs));
	pthread_mutex_init(&cs->lock, NULL);
	cs->x = x;
	/* mtrace_now: realtime rings read CLOCK_REALTIME; monotonic and "xen" rings read
	 * CLOCK_MONOTONIC, and a TSC ring's timeline is CLOCK_MONOTONIC (tsc.c) */
	cs->clk = ring_clock == MTRACE_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	cs->err = ENOTSUP;
}

void clock_sync_destroy(struct clock_sync *cs)
{
	pthread_mutex_destroy(&cs->lock);
}

bool clock_sync_measure(struct clock_sync *cs)
{
	struct xenif_clock_pair p;
	bool ok;

	pthread_mutex_lock(&cs->lock);
	cs->checked = mono_ns();
	ok = cs->x->ops->clock_pair && cs->x->ops->clock_pair(cs->x, cs->clk, &p) == 0 &&
	    p.clk_ns >= 0 && p.xen_ns <= INT64_MAX;
	if (ok) {
		cs->now = p;
		cs->have = true;
	} else {
		cs->err = cs->x->ops->clock_pair ? errno : ENOTSUP;
		cs->have = false;
	}
	pthread_mutex_unlock(&cs->lock);
	return ok;
}

static int64_t relation(const struct xenif_clock_pair *p)
{
	return (int64_t)p->xen_ns - p->clk_ns;
}

bool clock_sync_moved(struct clock_sync *cs)
{
	bool moved;

	pthread_mutex_lock(&cs->lock);
	if (!cs->have)
		moved = false;
	else if (!cs->written)
		moved = true;
	else {
		int64_t d = relation(&cs->now) - relation(&cs->put);
		uint64_t noise = (cs->now.width_ns + cs->put.width_ns + 1) / 2;
		uint64_t by = (uint64_t)(d < 0 ? -d : d);
		moved = by > CLOCK_SYNC_MOVE_NS && by > noise;
	}
	pthread_mutex_unlock(&cs->lock);
	return moved;
}

int clock_sync_put(struct clock_sync *cs, uint32_t tx, const char *base)
{
	char path[160], val[96];
	int n, rc = 0;

	pthread_mutex_lock(&cs->lock);
	if (cs->have) {
		snprintf(path, sizeof(path), "%s/clock-sync", base);
		n = snprintf(val, sizeof(val), "%" PRIu64 " %" PRId64 " %" PRIu64 " %" PRIu64,
		    cs->seq + 1, cs->now.clk_ns, cs->now.xen_ns, cs->now.width_ns);
		rc = cs->x->ops->xs_write(cs->x, tx, path, val, (size_t)n);
		if (rc == 0) {
			cs->seq++;
			cs->put = cs->now;
			cs->written = true;
		}
	}
	int e = errno;
	pthread_mutex_unlock(&cs->lock);
	errno = e;
	return rc;
}

bool clock_sync_due(struct clock_sync *cs)
{
	pthread_mutex_lock(&cs->lock);
	bool due = mono_ns() - cs->checked >= CLOCK_SYNC_PERIOD_NS;
	pthread_mutex_unlock(&cs->lock);
	return due;
}
