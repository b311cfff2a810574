/*
 * drain.c - when rings are read: on an event-channel wake-up, from a periodic timer
 * (which bounds how long any event waits when a wake-up was lost or held off), and in
 * round-robin rounds for guests that had more than one budget of data.
 *
 * Fairness: a guest is drained for at most drain_budget events at a time, and a loop
 * turn drains at most about that many in all; data left waits in the busy queue,
 * served from a zero-delay timer so that the loop writes to clients and polls its fds
 * (other guests' wake-ups) between rounds.
 *
 * Wake-ups cost a context switch each (tens of microseconds on a virtualised dom0).
 * A guest is woken while that is cheap: with the ring's hold-off it notifies at most
 * once per drain.  Once guests wake the daemon more often than a poll timer would
 * (ratelimit_period_ms / poll_interval_us times a period, one guest or all together),
 * the busy ones are not re-armed but drained on one shared tick every
 * poll_interval_us until a drain finds nothing - NAPI's interrupt coalescing - so
 * any number of busy guests costs one wake-up per tick.
 * Idle: the periodic drain doubles its period each time a whole period had nothing to
 * read (no tick, wake-up or poll found data, no site waits to be resolved), up to
 * TICK_IDLE_MS, so that an idle daemon with any number of idle guests wakes about once
 * a second rather than 50 times (under an emulated CPU each wake-up of a PV dom0 costs
 * a millisecond).  The first data read on any path brings drain_interval_ms back:
 * the lost wake-up the tick covers can only happen while data flows.
 * Storms: xenconsoled's limiter, on wake-ups that find nothing new (a guest that
 * notifies without writing) - past ratelimit_wakeups of those in a period the port
 * stays masked until the period ends, and the guest is polled meanwhile.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "deliver.h"
#include "drain.h"
#include "guest.h"
#include "log.h"
#include "state.h"
#include "xalloc.h"
#include "xenif.h"

#define PENDING_MAX 4096 /* ports taken per fd wake-up before yielding to the loop */
/* Empty polls in a row before a polled guest is woken again: a guest that writes in
 * bursts (every millisecond, say) must not flip back and forth. */
#define POLL_IDLE_MAX 16
#define TICK_IDLE_MS  1000 /* the periodic drain's longest period, when idle */

/* A ring guest's scheduling state: drain.c's alone (struct guest only points at it),
 * made on the first wake-up or drain and freed by drain_forget. */
struct drain_sched {
	struct guest *g;
	/* wake-ups in the current period: all, and those that found nothing new (the
	 * storm limiter's count, as xenconsoled's) */
	uint64_t period_start_ns;
	unsigned period_wakeups, period_spurious;
	bool held; /* port left masked until the period ends */
	struct event *unhold_ev;
	bool polling;       /* busy: drained on the poll tick, no wake-ups */
	unsigned poll_idle; /* empty polls in a row */
	/* round-robin service of guests with more data than one budget */
	bool busy;
	TAILQ_ENTRY(drain_sched) busy_entry;
	unsigned next_ring;
};

static struct drain_sched *sched_of(struct guest *g)
{
	if (!g->sched) {
		g->sched = xcalloc(1, sizeof(*g->sched));
		g->sched->g = g;
	}
	return g->sched;
}

/* The drain of one guests context (ctx->drain). */
struct drain {
	struct guests_ctx *ctx;
	struct event *evtchn_ev, *tick_ev, *busy_ev, *poll_ev;
	TAILQ_HEAD(sched_list, drain_sched) busy; /* the round-robin round */
	unsigned npolling;                        /* guests drained by poll_ev */
	uint64_t period_start_ns;                 /* all guests' wake-ups in the current period */
	unsigned period_wakeups;
	unsigned tick_ms; /* the periodic drain's current period */
	bool tick_found;  /* data read since the last periodic drain */
	/* Events read since the current callback began, and the most any one read:
	 * logged at exit, so that a test can tell that no path of a turn runs far past
	 * drain_budget. */
	size_t cb_read, cb_most;
};

static void tick_arm(struct drain *dr);

/* ---- draining ---- */

static void pass_stats(struct guest *g, unsigned i)
{
	struct gring *r = &g->ring[i];
	const struct ring_reader_stats *st = ring_reader_stats(r->rr);
	uint64_t lost = st->lost - r->seen.lost;

	deliver_counts(g->ctx->deliver, g->sd, g->domid, i, lost, st->corrupt - r->seen.corrupt,
	    st->unknown - r->seen.unknown);
	if (st->corrupt != r->seen.corrupt)
		log_debug("domain %" PRIu32 " ring %u: %" PRIu64 " corrupt so far", g->domid, i,
		    st->corrupt);
	r->seen = *st;
}

/* Drain up to budget events of g's rings; returns the count, *more if data is left. */
static size_t drain_guest(struct guest *g, size_t budget, bool *more)
{
	struct drain *dr = g->ctx->drain;
	struct deliver *dl = g->ctx->deliver;
	struct drain_sched *s = sched_of(g);
	unsigned n = g->ann.rings;
	size_t total = 0;

	*more = false;
	if (g->kind != GUEST_RING || !n)
		return 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (s->next_ring + k) % n;
		struct gring *r = &g->ring[i];
		bool m = false;

		if (total >= budget) {
			*more = true;
			break;
		}
		do {
			size_t want =
			    budget - total < DELIVER_BATCH_MAX ? budget - total : DELIVER_BATCH_MAX;
			size_t got;

			/* the decoded clock: a TSC ring's ticks arrive as ns on its timeline */
			deliver_begin(dl, g->sd, g->domid, i, ring_reader_info(r->rr)->clock, g);
			got = deliver_ring(dl, r->rr, want, &m);
			deliver_end(dl);
			total += got;
			if (!got)
				break;
		} while (m && total < budget);
		pass_stats(g, i);
		if (m)
			*more = true;
	}
	/* the next round starts at another ring, so rings of one guest share too */
	s->next_ring = (s->next_ring + 1) % n;
	dr->cb_read += total;
	if (dr->cb_read > dr->cb_most)
		dr->cb_most = dr->cb_read;
	return total;
}

static void busy_add(struct guest *g)
{
	static const struct timeval now = { 0, 0 };
	struct drain *dr = g->ctx->drain;
	struct drain_sched *s = sched_of(g);

	if (s->busy)
		return;
	s->busy = true;
	TAILQ_INSERT_TAIL(&dr->busy, s, busy_entry);
	if (!evtimer_pending(dr->busy_ev, NULL))
		evtimer_add(dr->busy_ev, &now);
}

static void poll_each(struct guest *g, void *arg)
{
	size_t *got = arg;

	if (g->kind != GUEST_RING || !sched_of(g)->polling || sched_of(g)->busy)
		return;
	if (*got >= g->ctx->cfg->drain_budget)
		busy_add(g); /* this turn has had its budget: the busy round takes it */
	else
		*got += drain_service(g);
}

static void poll_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	size_t got = 0;

	(void)fd;
	(void)what;
	dr->cb_read = 0;
	guest_foreach(dr->ctx, poll_each, &got);
}

static void polling_set(struct guest *g, bool on)
{
	struct drain *dr = g->ctx->drain;
	struct drain_sched *s = sched_of(g);

	if (s->polling == on)
		return;
	s->polling = on;
	s->poll_idle = 0;
	if (on && dr->npolling++ == 0) {
		struct timeval tv = tv_from_us(dr->ctx->cfg->poll_interval_us);

		event_add(dr->poll_ev, &tv);
	} else if (!on && --dr->npolling == 0) {
		event_del(dr->poll_ev);
	}
}

/* Wake-ups in a period past which a poll timer wakes the daemon less often. */
static unsigned poll_threshold(const struct drain *dr)
{
	uint64_t t =
	    (uint64_t)dr->ctx->cfg->ratelimit_period_ms * 1000u / dr->ctx->cfg->poll_interval_us;

	return t ? (unsigned)(t < UINT_MAX ? t : UINT_MAX) : 1;
}

/* Whether g stays (or goes) in polling mode instead of asking for a wake-up. */
static bool poll_instead(struct guest *g, size_t got)
{
	const struct drain *dr = g->ctx->drain;
	struct drain_sched *s = sched_of(g);

	if (s->polling) {
		s->poll_idle = got ? 0 : s->poll_idle + 1;
		if (s->poll_idle < POLL_IDLE_MAX)
			return true;
		polling_set(g, false);
		return false;
	}
	if (s->period_wakeups < poll_threshold(dr) && dr->period_wakeups < poll_threshold(dr))
		return false;
	polling_set(g, true);
	return true;
}

/* Data was read: the periodic drain is back to its full rate if it had backed off. */
static void tick_busy(struct drain *dr)
{
	dr->tick_found = true;
	if (dr->tick_ms != dr->ctx->cfg->drain_interval_ms) {
		dr->tick_ms = dr->ctx->cfg->drain_interval_ms;
		tick_arm(dr);
	}
}

size_t drain_service(struct guest *g)
{
	struct drain *dr = g->ctx->drain;
	bool more, waiting;
	size_t got = 0;

	if (g->kind != GUEST_RING)
		return 0;
	for (int pass = 0;; pass++) {
		got += drain_guest(g, dr->ctx->cfg->drain_budget, &more);
		if (got && !dr->tick_found)
			tick_busy(dr);
		if (more) {
			/* a full budget: the others get their turn first */
			busy_add(g);
			return got;
		}
		if (pass == 0 && poll_instead(g, got))
			return got;
		/* arm the wake-up, then look again: what came meanwhile raised no event */
		waiting = false;
		for (unsigned i = 0; i < g->ann.rings; i++)
			if (ring_reader_request_wakeup(g->ring[i].rr, 0))
				waiting = true;
		/* a guest trickling events as fast as we read them would keep us here: after a
		 * few passes the periodic drain picks the rest up */
		if (!waiting || pass == 3)
			return got;
	}
}

void drain_final(struct guest *g)
{
	struct drain *dr = g->ctx->drain;
	size_t limit = 0;
	bool more;

	if (g->kind != GUEST_RING)
		return;
	/* a ring holds at most size/32 records; the guest may still write, so stop there */
	for (unsigned i = 0; i < g->ann.rings; i++)
		limit += (size_t)g->ring[i].pages * (MTRACE_PAGE_SIZE / MTRACE_REC_FIXED) + 1;
	/* what is left of a guest that goes is read whatever the budget: not a turn's
	 * work for the count of the most read in one callback */
	size_t read = dr->cb_read, most = dr->cb_most;
	drain_guest(g, limit, &more);
	dr->cb_read = read;
	dr->cb_most = most;
}

void drain_forget(struct guest *g)
{
	struct drain *dr = g->ctx->drain;
	struct drain_sched *sc = g->sched;

	if (!sc)
		return;
	if (sc->busy)
		TAILQ_REMOVE(&dr->busy, sc, busy_entry);
	if (sc->unhold_ev)
		event_free(sc->unhold_ev);
	polling_set(g, false);
	free(sc);
	g->sched = NULL;
}

static void busy_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct drain *dr = arg;
	struct drain_sched *stop = TAILQ_LAST(&dr->busy, sched_list), *sc;
	size_t got = 0;

	(void)fd;
	(void)what;
	dr->cb_read = 0;
	/* One round: every guest queued now gets one budget; re-queued ones wait a turn.
	 * Clients are written to only at the end of a loop turn, and a socket takes a few
	 * hundred KiB at a time: past one budget in this turn, the rest of the round
	 * waits for the next one, or the stream falls behind the rings. */
	while ((sc = TAILQ_FIRST(&dr->busy)) != NULL) {
		struct guest *g = sc->g;

		if (got >= dr->ctx->cfg->drain_budget) {
			if (!evtimer_pending(dr->busy_ev, NULL))
				evtimer_add(dr->busy_ev, &now);
			break;
		}
		TAILQ_REMOVE(&dr->busy, sc, busy_entry);
		sc->busy = false;
		got += drain_service(g);
		if (sc == stop)
			break;
	}
}

/* ---- wake-ups and the storm limiter ---- */

static void unhold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct guest *g = arg;
	struct drain *dr = g->ctx->drain;
	struct drain_sched *s = sched_of(g);

	(void)fd;
	(void)what;
	dr->cb_read = 0;
	s->held = false;
	s->period_start_ns = state_now_ns();
	s->period_wakeups = 0;
	s->period_spurious = 0;
	if (g->lport >= 0)
		dr->ctx->x->ops->evtchn_unmask(dr->ctx->x, (uint32_t)g->lport);
	drain_service(g);
}

/* A guest's notification; returns how many events its drain read. */
static size_t wakeup(struct guest *g)
{
	struct drain *dr = g->ctx->drain;
	struct drain_sched *s = sched_of(g);
	size_t got;

	uint64_t now = state_now_ns();
	uint64_t period = (uint64_t)dr->ctx->cfg->ratelimit_period_ms * 1000000u;

	if (now - dr->period_start_ns >= period) {
		dr->period_start_ns = now;
		dr->period_wakeups = 0;
	}
	if (now - s->period_start_ns >= period) {
		s->period_start_ns = now;
		s->period_wakeups = 0;
		s->period_spurious = 0;
	}
	if (s->period_spurious >= dr->ctx->cfg->ratelimit_wakeups) {
		uint64_t left = s->period_start_ns + period - now;
		struct timeval tv = tv_from_ns(left);

		state_domain_add_wakeup(g->sd, true);
		if (s->held)
			return 0;
		if (!s->unhold_ev)
			s->unhold_ev = evtimer_new(dr->ctx->base, unhold_cb, g);
		if (!s->unhold_ev) {
			/* cannot hold it off: serve it rather than lose it */
			dr->ctx->x->ops->evtchn_unmask(dr->ctx->x, (uint32_t)g->lport);
			return drain_service(g);
		}
		s->held = true;
		evtimer_add(s->unhold_ev, &tv);
		/* Held, not ignored: a guest with two rings may well find one drained by the
		 * other's wake-up, and its data must not wait for the periodic drain. */
		polling_set(g, true);
		log_debug("domain %" PRIu32 ": wake-up storm, port held for %" PRIu64 " us",
		    g->domid, left / 1000);
		return 0;
	}
	s->period_wakeups++;
	dr->period_wakeups++;
	state_domain_add_wakeup(g->sd, false);
	dr->ctx->x->ops->evtchn_unmask(dr->ctx->x, (uint32_t)g->lport);
	got = drain_service(g);
	if (got == 0)
		s->period_spurious++;
	return got;
}

/*
 * The ports that are pending, each guest drained as it comes, until this turn of the
 * loop has had its budget: then the rest wait in the device (it stays readable, and
 * the loop comes back to it) while clients are written to.  Taking every pending port
 * in one go, with busy guests notifying again as soon as they are drained, kept one
 * call here for seconds (100 guests of bench/daemon/growth.sh: 3.7 s in which no
 * client was written to and all of it was dropped for them).
 */
static void evtchn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	size_t got = 0;

	(void)fd;
	(void)what;
	dr->cb_read = 0;
	for (int k = 0; k < PENDING_MAX && got < dr->ctx->cfg->drain_budget; k++) {
		int port = dr->ctx->x->ops->evtchn_pending(dr->ctx->x);
		struct guest *g;

		if (port < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				guest_host_lost(dr->ctx, "event channel device", errno);
			return;
		}
		g = guest_by_port(dr->ctx, (uint32_t)port);
		if (!g || g->kind != GUEST_RING || g->lport != port) {
			/* a port we already unbound raced its last notification */
			dr->ctx->x->ops->evtchn_unmask(dr->ctx->x, (uint32_t)port);
			continue;
		}
		got += wakeup(g);
	}
}

/* As poll_each: past the turn's budget the busy round takes the others. */
static void tick_each(struct guest *g, void *arg)
{
	size_t *got = arg;

	if (g->kind != GUEST_RING || sched_of(g)->busy)
		return;
	if (*got >= g->ctx->cfg->drain_budget)
		busy_add(g);
	else
		*got += drain_service(g);
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	unsigned base = dr->ctx->cfg->drain_interval_ms;
	size_t got = 0;
	bool more;

	(void)fd;
	(void)what;
	dr->cb_read = 0;
	more = state_tick(state_now_ns());
	guest_time_tick(dr->ctx);
	guest_foreach(dr->ctx, tick_each, &got);
	if (dr->tick_found || more)
		dr->tick_ms = base;
	else if (dr->tick_ms < TICK_IDLE_MS)
		dr->tick_ms = dr->tick_ms * 2 < TICK_IDLE_MS ? dr->tick_ms * 2 : TICK_IDLE_MS;
	if (dr->tick_ms < base)
		dr->tick_ms = base;
	dr->tick_found = false;
	tick_arm(dr);
}

static void tick_arm(struct drain *dr)
{
	struct timeval tv = tv_from_ms(dr->tick_ms);

	evtimer_del(dr->tick_ev);
	evtimer_add(dr->tick_ev, &tv);
}

int drain_init(struct guests_ctx *c, char *err, size_t errlen)
{
	struct event_base *base = c->base;
	struct drain *dr = calloc(1, sizeof(*dr));
	int fd;

	if (!dr) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->drain = dr;
	dr->ctx = c;
	TAILQ_INIT(&dr->busy);
	fd = c->x->ops->evtchn_fd(c->x);
	if (fd < 0) {
		snprintf(err, errlen, "event channel fd: %s", strerror(errno));
		return -1;
	}
	dr->evtchn_ev = event_new(base, fd, EV_READ | EV_PERSIST, evtchn_cb, dr);
	dr->tick_ev = evtimer_new(base, tick_cb, dr);
	dr->busy_ev = evtimer_new(base, busy_cb, dr);
	dr->poll_ev = event_new(base, -1, EV_PERSIST, poll_tick_cb, dr);
	if (!dr->evtchn_ev || !dr->tick_ev || !dr->busy_ev || !dr->poll_ev ||
	    event_add(dr->evtchn_ev, NULL) < 0) {
		snprintf(err, errlen, "cannot set up the drain events");
		return -1;
	}
	dr->tick_ms = c->cfg->drain_interval_ms;
	tick_arm(dr);
	return 0;
}

void drain_reconfigure(struct guests_ctx *ctx)
{
	struct drain *dr = ctx->drain;

	if (dr->tick_ev) {
		dr->tick_ms = ctx->cfg->drain_interval_ms;
		tick_arm(dr);
	}
	if (dr->poll_ev && dr->npolling) { /* poll_interval_us may have changed */
		struct timeval tv = tv_from_us(dr->ctx->cfg->poll_interval_us);

		event_del(dr->poll_ev);
		event_add(dr->poll_ev, &tv);
	}
}

void drain_fini(struct guests_ctx *ctx)
{
	struct drain *dr = ctx->drain;

	if (!dr)
		return;
	log_info("at most %zu events read in one callback", dr->cb_most);
	if (dr->evtchn_ev)
		event_free(dr->evtchn_ev);
	if (dr->tick_ev)
		event_free(dr->tick_ev);
	if (dr->busy_ev)
		event_free(dr->busy_ev);
	if (dr->poll_ev)
		event_free(dr->poll_ev);
	free(dr);
	ctx->drain = NULL;
}
