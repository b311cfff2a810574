/*
 * guest-time.c - each traced guest's clocks on the host timeline (dom0's
 * CLOCK_REALTIME), and the other ends of its event channels (issue 37; the tables and
 * their rules are clockmap.c's, the stream's messages ClockMap and EvtchnLink).
 *
 * A map comes from what can be measured here or what the guest announces:
 *  - on the simulated Xen, a realtime ring: dom0's CLOCK_REALTIME itself (offset 0,
 *    exact, source same-kernel), whatever the guest announces;
 *  - the guest's clock-sync (data/mtrace/clock-sync: its ring clock and Xen system time
 *    read together), with Xen system time against dom0's wall clock from xenif's
 *    clock_sample: source xen-system-time, the two uncertainties added;
 *  - else, on the simulated Xen, where every guest is a process on this kernel:
 *    realtime rings are dom0's CLOCK_REALTIME itself (offset 0, exact), monotonic and
 *    "xen" rings (the sim's Xen system time is dom0's CLOCK_MONOTONIC) are mapped by
 *    a CLOCK_MONOTONIC read between two CLOCK_REALTIME reads: source same-kernel;
 *  - else (real Xen, nothing announced): unknown.
 * Maps are measured when a guest comes up, when its data/mtrace changes (the xenstore
 * watch), and once a second from the drain's timer; clockmap_offer decides whether the
 * measure is a new map (an NTP step, a new announcement) and then clients are told.
 *
 * A clock-sync that is not four bounded decimal numbers is refused, counted
 * (DomainStats.clock_sync_bad, once per distinct value) and logged out of the guest's
 * allowance; the last good one stays.
 *
 * Links: the first time a guest's event-channel send or receive names a port, Xen is
 * asked what is at its other end (evtchn_status): an interdomain channel becomes an
 * EvtchnLink, sent before the event.  A port is asked again at most once a second
 * while its events come: one not (yet) bound to a domain, and one linked, since a
 * port closed and bound again to another domain is another channel (a new EvtchnLink;
 * the events read before the question are the old link's).  At most GUEST_PORTS_MAX
 * ports a guest, so a guest that writes random ports costs a bounded number of
 * questions.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "clockmap.h"
#include "deliver.h"
#include "guest.h"
#include "log.h"
#include "mtrace-ring.h"
#include "state.h"
#include "vcpu.h"
#include "xenif.h"

#define TICK_NS     1000000000u  /* re-measure every guest once a second */
#define RETRY_NS    1000000000u  /* a port not bound yet: asked again after this */
#define BAD_LOG_NS  60000000000u /* a refused clock-sync is logged at most this often */
#define BRACKET_TRY 7            /* the narrowest of this many brackets */
#define CLOCK_KINDS 4            /* enum mtrace_clock 1..3 are what batches carry */

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* dom0's CLOCK_MONOTONIC -> CLOCK_REALTIME: the midpoint of the narrowest bracket. */
static bool same_kernel(int64_t *offset, uint64_t *unc)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < BRACKET_TRY; i++) {
		int64_t a = realtime_ns();
		int64_t m = (int64_t)clock_ns(CLOCK_MONOTONIC);
		int64_t b = realtime_ns();
		if (b < a || (uint64_t)(b - a) >= best)
			continue; /* a step between the reads is no bracket */
		best = (uint64_t)(b - a);
		*offset = a + (b - a) / 2 - m;
		*unc = (best + 1) / 2;
	}
	return best != UINT64_MAX;
}

/* dom0's Xen time against its wall clock, read once for all the guests measured
 * together (a tick): on real Xen a read is a dozen system calls and may sleep. */
struct dom0_time {
	bool tried, ok;
	struct xenif_clock_sample s;
};

static const struct xenif_clock_sample *dom0_time(struct xenif *x, struct dom0_time *d)
{
	if (!d->tried) {
		d->tried = true;
		d->ok = x->ops->clock_sample && x->ops->clock_sample(x, &d->s) == 0;
	}
	return d->ok ? &d->s : NULL;
}

/* The guest's announcement and dom0's Xen time: guest clock -> host timeline. */
static bool announced(struct guest *g, struct dom0_time *d0, int64_t *offset, uint64_t *unc)
{
	const struct clock_sync *cs = &g->time.sync;
	const struct xenif_clock_sample *sp;

	if (!g->time.have_sync || !(sp = dom0_time(g->ctx->x, d0)))
		return false;
	const struct xenif_clock_sample s = *sp;
	/* ring -> Xen system time, then Xen system time -> dom0's wall clock; every
	 * value is below 2^63, so the differences fit */
	*offset =
	    ((int64_t)cs->xen_ns - (int64_t)cs->ring_ns) + (s.realtime_ns - (int64_t)s.xen_ns);
	*unc = (cs->width_ns + 1) / 2 + (s.width_ns + 1) / 2;
	return true;
}

/* The clocks g's events come in (a TSC ring's timeline, not "tsc"). */
static unsigned clocks_of(const struct guest *g, bool has[CLOCK_KINDS])
{
	unsigned n = 0;

	memset(has, 0, CLOCK_KINDS * sizeof(bool));
	if (g->kind == GUEST_LEGACY) {
		has[MTRACE_CLOCK_XEN] = true;
		return 1;
	}
	if (g->kind != GUEST_RING)
		return 0;
	for (uint32_t i = 0; i < g->ann.rings; i++) {
		uint32_t c = g->ring[i].rr ? ring_reader_info(g->ring[i].rr)->clock : 0;
		if (c > 0 && c < CLOCK_KINDS && !has[c]) {
			has[c] = true;
			n++;
		}
	}
	return n;
}

static const char *source_name(enum clockmap_source s)
{
	return s == CLOCKMAP_SAME_KERNEL    ? "same-kernel"
	    : s == CLOCKMAP_XEN_SYSTEM_TIME ? "xen-system-time"
	                                    : "unknown";
}

/* Measure every clock of g; what clockmap_offer takes as new goes to clients. */
static void measure(struct guest *g, struct dom0_time *d0)
{
	bool has[CLOCK_KINDS], sim = !strcmp(g->ctx->x->ops->name, "sim");
	int64_t mono_off = 0, now = realtime_ns();
	uint64_t mono_unc = 0;
	bool mono_ok = sim && same_kernel(&mono_off, &mono_unc);

	if (!g->up || !clocks_of(g, has))
		return;
	for (uint32_t c = 1; c < CLOCK_KINDS; c++) {
		enum clockmap_source src = CLOCKMAP_UNKNOWN;
		int64_t off = 0;
		uint64_t unc = CLOCKMAP_UNKNOWN_NS;
		struct clockmap_rec r;

		if (!has[c])
			continue;
		if (sim && c == MTRACE_CLOCK_REALTIME) {
			/* a process on dom0's kernel: its realtime IS the host timeline, exactly
			 * (an announcement through Xen time could only add uncertainty) */
			src = CLOCKMAP_SAME_KERNEL;
			off = 0;
			unc = 0;
		} else if (announced(g, d0, &off, &unc)) {
			src = CLOCKMAP_XEN_SYSTEM_TIME;
		} else if (mono_ok) {
			src = CLOCKMAP_SAME_KERNEL;
			off = mono_off;
			unc = mono_unc;
		} else {
			off = 0;
			unc = CLOCKMAP_UNKNOWN_NS;
		}
		if (!clockmap_offer(g->domid, c, off, unc, src, now, &r))
			continue;
		if (r.seq == 1 || r.source == CLOCKMAP_UNKNOWN)
			log_debug("domain %" PRIu32 ": clock %" PRIu32 " -> host %+" PRId64
			          " ns, +-%" PRIu64 " (%s)",
			    g->domid, c, r.offset_ns, r.uncertainty_ns, source_name(r.source));
		else
			guest_log(g->ctx, g->domid, LOG_LVL_INFO,
			    "domain %" PRIu32 " (%s): clock %" PRIu32 " now maps to the host "
			    "timeline with offset %+" PRId64 " ns +-%" PRIu64 " (%s, map %" PRIu64
			    ")",
			    g->domid, g->name, c, r.offset_ns, r.uncertainty_ns,
			    source_name(r.source), r.seq);
		deliver_clock_map(g->ctx->deliver, &r);
		/* the vCPU waits (state-vcpu.c) put the domain's thread times on the host
		 * timeline with the same map: one timeline for both pictures */
		if (g->sd)
			state_vcpu_clock_map(g->sd, r.offset_ns, r.source != CLOCKMAP_UNKNOWN);
	}
}

/* Read data/mtrace/clock-sync again: absent (the fallback), good (taken) or refused. */
static void read_sync(struct guest *g)
{
	struct guest_time *t = &g->time;
	struct clock_sync cs;
	size_t len;
	char *v = guest_xs_get(g->ctx, 0, g->domid, MTRACE_XS_DIR "/clock-sync", &len);
	uint64_t h = 1469598103934665603ull;

	if (!v) {
		t->have_sync = false;
		t->bad_hash = 0;
		return;
	}
	if (clock_sync_parse(v, len, &cs) == 0) {
		t->sync = cs;
		t->have_sync = true;
		t->bad_hash = 0;
		free(v);
		return;
	}
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)v[i]) * 1099511628211ull;
	free(v);
	if (h == t->bad_hash)
		return; /* the same refused value, read again */
	t->bad_hash = h;
	t->bad++;
	state_domain_add_clock_sync_bad(g->sd);
	if (!t->bad_logged_ns || clock_mono_ns() - t->bad_logged_ns >= BAD_LOG_NS) {
		t->bad_logged_ns = clock_mono_ns();
		guest_log(g->ctx, g->domid, LOG_LVL_WARN,
		    "domain %" PRIu32 " (%s): clock-sync refused (not four bounded decimal "
		    "numbers; %" PRIu64 " so far); %s",
		    g->domid, g->name, t->bad,
		    t->have_sync ? "keeping the last good one" : "not used");
	}
}

void guest_time_up(struct guest *g)
{
	memset(&g->time, 0, sizeof(g->time));
	read_sync(g);
	measure(g, &(struct dom0_time){ 0 });
}

void guest_time_announced(struct guest *g)
{
	if (!g->up)
		return;
	read_sync(g);
	measure(g, &(struct dom0_time){ 0 });
}

void guest_time_down(struct guest *g)
{
	clockmap_forget(g->domid);
	g->time.nports = 0;
}

static void tick_one(struct guest *g, void *arg)
{
	measure(g, arg);
}

void guest_time_tick(struct guests_ctx *ctx)
{
	uint64_t now = clock_mono_ns();

	if (ctx->time_tick_ns && now - ctx->time_tick_ns < TICK_NS)
		return;
	ctx->time_tick_ns = now;
	guest_foreach(ctx, tick_one, &(struct dom0_time){ 0 });
}

/* deliver.c's port hook, once a batch for each port its sends and receives name
 * (state_batch_ports): owner is the guest whose events these are. */
static void port_seen(void *owner, uint32_t port)
{
	struct guest *g = owner;
	struct guest_time *t = &g->time;
	struct xenif *x = g->ctx->x;
	struct xenif_evtchn_status st;
	struct guest_port *p = NULL;
	uint64_t now;

	for (unsigned i = 0; i < t->nports; i++)
		if (t->ports[i].port == port) {
			p = &t->ports[i];
			break;
		}
	if (!p) {
		if (t->nports == GUEST_PORTS_MAX)
			return;
		p = &t->ports[t->nports++];
		*p = (struct guest_port){ .port = port };
	}
	/* the coarse clock (the vDSO's last tick, no counter read) is all a
	 * once-a-second question needs */
	now = clock_ns(CLOCK_MONOTONIC_COARSE);
	if (p->tried_ns && now - p->tried_ns < RETRY_NS)
		return;
	p->tried_ns = now;
	if (!x->ops->evtchn_status || x->ops->evtchn_status(x, g->domid, port, &st) < 0 ||
	    !st.interdomain)
		return; /* not bound (yet, or any more): a link told stays */
	struct evlink l = { g->domid, port, st.remote_domid, st.remote_port };
	if (evlink_note(&l)) /* new, or the port bound again elsewhere */
		deliver_evtchn_link(g->ctx->deliver, &l);
}

void guest_time_init(struct guests_ctx *ctx)
{
	deliver_port_hook(ctx->deliver, port_seen);
}
