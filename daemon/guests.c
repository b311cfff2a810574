/*
 * guests.c - a guest's life cycle: read its xenstore announcement (guest-xs.c; announce.c
 * checks every value), admit it under the caps, map its rings (header read-write, data read-only, refs taken from a checked copy of
 * the header), bind its event channel; and the reverse on withdrawal or death.
 *
 * Everything under /local/domain/<id> is written by the guest, so nothing read there
 * is trusted: caps bound what we map (guest_admit, for ring and legacy guests alike), and a
 * refusal is logged once per reason and shown as the domain's "bad: reason" status.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "announce.h"
#include "config.h"
#include "deliver.h"
#include "discover.h"
#include "drain.h"
#include "guest.h"
#include "guests.h"
#include "legacy.h"
#include "log.h"
#include "mprof.h"
#include "state.h"
#include "xalloc.h"
#include "xenif.h"

static struct guest *guest_new(struct guests_ctx *ctx, uint32_t domid)
{
	struct guest *g = xcalloc(1, sizeof(*g));

	g->ctx = ctx;
	g->domid = domid;
	g->lport = -1;
	g->sd_fresh = !state_domain_find(domid);
	g->sd = state_domain_get(domid);
	guest_table_add(g);
	return g;
}

static void guest_free(struct guest *g)
{
	drain_forget(g);
	guest_table_remove(g);
	free(g);
}

/* ---- admission: the one place every cap is checked ---- */

/*
 * Whether g may map pages more (ring headers and data, or a legacy buffer): at most
 * max_guests traced, max_pages_per_guest each, max_pages_total in all.  On success
 * the pages are counted as g's until guest_unadmit; -1 with why otherwise.
 */
static int guest_admit(struct guest *g, unsigned pages, bool legacy, char *why, size_t wl)
{
	struct guests_ctx *ctx = g->ctx;
	const struct mtraced_config *cfg = ctx->cfg;
	const char *noun = legacy ? "legacy pages" : "pages";

	if (guest_count_kind(ctx, GUEST_RING) + guest_count_kind(ctx, GUEST_LEGACY) >=
	    cfg->max_guests) {
		snprintf(why, wl, "max_guests %u reached", cfg->max_guests);
		return -1;
	}
	if (pages > cfg->max_pages_per_guest) {
		snprintf(why, wl, "%u %s, more than max_pages_per_guest %u", pages,
		    legacy ? "legacy pages" : "pages announced", cfg->max_pages_per_guest);
		return -1;
	}
	if (ctx->pages_total + pages > cfg->max_pages_total) {
		snprintf(why, wl, "%u %s would pass max_pages_total %u (%u mapped)", pages, noun,
		    cfg->max_pages_total, ctx->pages_total);
		return -1;
	}
	g->pages_mapped = pages;
	ctx->pages_total += pages;
	return 0;
}

static void guest_unadmit(struct guest *g)
{
	g->ctx->pages_total -= g->pages_mapped;
	g->pages_mapped = 0;
}

/* ---- attach / detach ---- */

static void unmap_rings(struct guest *g)
{
	struct xenif *x = g->ctx->x;

	drain_forget(g);
	for (unsigned i = 0; i < MTRACE_MAX_RINGS; i++) {
		struct gring *r = &g->ring[i];

		if (r->rr)
			ring_reader_free(r->rr);
		if (r->data)
			x->ops->gnttab_unmap(x, r->data, r->pages);
		if (r->hdr)
			x->ops->gnttab_unmap(x, r->hdr, 1);
		memset(r, 0, sizeof(*r));
	}
	if (g->lport >= 0) {
		guest_port_set(g->ctx, (uint32_t)g->lport, NULL);
		if (x->ops->evtchn_unbind(x, (uint32_t)g->lport) < 0)
			log_warn("domain %" PRIu32 ": unbind port %d", g->domid, g->lport);
		g->lport = -1;
	}
}

/* Map the admitted rings of a and bind its event channel: 0, or -1 with why. */
static int map_rings(struct guest *g, const struct announce *a, char *why, size_t wl)
{
	uint32_t refs[MTRACE_RING_MAX_PAGES];
	struct xenif *x = g->ctx->x;
	struct mtrace_ring_hdr hcopy;
	char err[160];
	int port;

	for (uint32_t i = 0; i < a->rings; i++) {
		struct gring *r = &g->ring[i];

		r->hdr = x->ops->gnttab_map(x, g->domid, 1, &a->ref[i], PROT_READ | PROT_WRITE);
		if (!r->hdr) {
			snprintf(why, wl, "ring %u: cannot map header ref %" PRIu32 ": %s", i,
			    a->ref[i], strerror(errno));
			goto fail;
		}
		/* header and refs: one checked private copy, the page is never re-read */
		if (ring_hdr_copy(r->hdr, a->pages[i], &hcopy, refs, err, sizeof(err)) < 0) {
			snprintf(why, wl, "ring %u: bad header: %s", i, err);
			goto fail;
		}
		r->data = x->ops->gnttab_map(x, g->domid, a->pages[i], refs, PROT_READ);
		if (!r->data) {
			snprintf(why, wl, "ring %u: cannot map %u data pages: %s", i, a->pages[i],
			    strerror(errno));
			goto fail;
		}
		r->pages = a->pages[i];
		r->rr =
		    ring_reader_attach_copy(r->hdr, &hcopy, r->data, a->pages[i], err, sizeof(err));
		if (!r->rr) {
			snprintf(why, wl, "ring %u: %s", i, err);
			goto fail;
		}
	}
	port = x->ops->evtchn_bind_interdomain(x, g->domid, a->port);
	if (port < 0) {
		snprintf(why, wl, "event-channel %" PRIu32 ": cannot bind: %s", a->port,
		    strerror(errno));
		goto fail;
	}
	g->lport = port;
	if (guest_port_set(g->ctx, (uint32_t)port, g) < 0) {
		snprintf(why, wl, "local port %d out of range", port);
		goto fail;
	}
	return 0;
fail:
	unmap_rings(g);
	return -1;
}

/* The one owner of "domain up": g is traced now, clients are told. */
static void guest_up(struct guest *g, enum guest_kind kind, uint32_t rings, uint32_t clock)
{
	g->kind = kind;
	g->bad[0] = 0;
	deliver_domain_up(
	    g->ctx->deliver, g->sd, g->domid, g->name, rings, clock, kind == GUEST_LEGACY);
	g->up = true;
	guest_time_up(g); /* its clock maps, before any of its events */
}

/* Stop tracing g (it stays in the table); DomainDown with reason if it was up. */
static void detach(struct guest *g, const char *reason)
{
	if (g->kind == GUEST_RING)
		unmap_rings(g);
	else if (g->kind == GUEST_LEGACY)
		legacy_detach(g);
	guest_unadmit(g);
	if (g->up) {
		deliver_domain_down(g->ctx->deliver, g->domid, reason);
		g->up = false;
		guest_time_down(g);
	}
	g->kind = GUEST_NEW;
	g->bad[0] = 0;
}

/* What is left in g's rings or buffer, before they go. */
static void final_drain(struct guest *g)
{
	if (g->kind == GUEST_RING)
		drain_final(g);
	else if (g->kind == GUEST_LEGACY)
		legacy_poll(g);
}

static void set_bad(struct guest *g, const char *why)
{
	if (g->kind == GUEST_RING || g->kind == GUEST_LEGACY) {
		char reason[200];

		snprintf(reason, sizeof(reason), "bad announcement: %s", why);
		if (g->kind == GUEST_RING)
			drain_final(g);
		detach(g, reason);
	}
	g->kind = GUEST_BAD;
	/* Logged once per reason (reason_same), out of the domain's allowance. */
	if (!guest_reason_same(g->bad, why))
		guest_log(g->ctx, g->domid, LOG_LVL_WARN, "domain %" PRIu32 " (%s): not traced: %s",
		    g->domid, g->name, why);
	snprintf(g->bad, sizeof(g->bad), "%s", why);
	state_domain_bad(g->sd, why);
}

static void attach_rings(struct guest *g, const struct announce *a)
{
	char why[256];

	if (guest_admit(g, announce_pages(a), false, why, sizeof(why)) < 0 ||
	    map_rings(g, a, why, sizeof(why)) < 0) {
		guest_unadmit(g);
		set_bad(g, why);
		return;
	}
	g->ann = *a;
	guest_up(g, GUEST_RING, a->rings, a->clock);
	guest_log(g->ctx, g->domid, LOG_LVL_INFO,
	    "domain %" PRIu32 " (%s): traced: %" PRIu32 " rings, port %" PRIu32 " -> %d, %u pages",
	    g->domid, g->name, a->rings, a->port, g->lport, g->pages_mapped);
	drain_service(g);
}

static void attach_legacy(struct guest *g, const char *refs, size_t rlen)
{
	uint32_t r[MPROF_MAX_PAGES];
	char why[256];
	int n = legacy_parse_refs(refs, rlen, r, why, sizeof(why));

	if (n < 0 || guest_admit(g, (unsigned)n, true, why, sizeof(why)) < 0 ||
	    legacy_attach(g, r, (unsigned)n, why, sizeof(why)) < 0) {
		guest_unadmit(g);
		set_bad(g, why);
		return;
	}
	guest_up(g, GUEST_LEGACY, 1, MTRACE_CLOCK_XEN);
	legacy_poll(g);
}

/* Whether the domain exists and is not shutting down (the domain list, not xenstore,
 * which the guest can write and the toolstack removes before the domain is gone). */
static bool domain_running(const struct guests_ctx *ctx, uint32_t domid, bool *crashed)
{
	struct xenif_dominfo info;
	int n = ctx->x->ops->ctrl_domain_list(ctx->x, domid, &info, 1);

	*crashed = false;
	if (n < 0)
		return true; /* cannot tell: do not declare a death */
	if (n == 0 || info.domid != domid)
		return false;
	*crashed = info.crashed;
	return !info.dying && !info.shutdown;
}

/* The domain is gone (reason "destroyed"/"crashed"): final drain, unmap, unbind, forget. */
static void guest_death(struct guest *g, const char *reason)
{
	final_drain(g);
	log_info("domain %" PRIu32 " (%s): %s", g->domid, g->name, reason);
	detach(g, reason);
	state_domain_detached(g->sd, reason, true);
	guest_free(g);
}

/* Re-read the domain's announcement and attach, remap, detach or mark it bad. */
static void guest_refresh(struct guests_ctx *ctx, uint32_t domid)
{
	struct guest *g = guest_find(ctx, domid);
	struct announce a;
	char why[256];
	char *refs;
	size_t rlen;
	bool crashed;
	int rc;

	if (domid == ctx->self_domid)
		return;
	if (!g) {
		/* cheap check first: most domains announce nothing */
		char *st = guest_xs_get(ctx, 0, domid, MTRACE_XS_DIR "/state", &rlen);
		char *mp = st ? NULL : guest_xs_get(ctx, 0, domid, MPROF_XS_REFS, &rlen);
		bool any = st || mp;

		free(st);
		free(mp);
		if (!any)
			return;
		g = guest_new(ctx, domid);
	}
	guest_read_name(g);
	rc = guest_read_announce(ctx, domid, &a, why, sizeof(why));
	if (rc == -2) {
		/* other writers keep xenstore busy; keep what we have, the rescan retries */
		log_debug("domain %" PRIu32 ": %s", domid, why);
		if (g->kind == GUEST_NEW) {
			if (g->sd_fresh)
				state_domain_forget(domid);
			guest_free(g);
		}
		return;
	}
	if (rc == ANNOUNCE_OK) {
		if (g->kind == GUEST_RING && !memcmp(&g->ann, &a, sizeof(a))) {
			/* the rings are as they were: the watch may be for clock-sync */
			guest_time_announced(g);
			return;
		}
		if (g->kind == GUEST_RING) {
			guest_log(ctx, domid, LOG_LVL_INFO,
			    "domain %" PRIu32 " (%s): re-announced, remapping", domid, g->name);
			drain_final(g);
			detach(g, "reannounced");
		} else if (g->kind == GUEST_LEGACY) {
			detach(g, "withdrawn");
		}
		attach_rings(g, &a);
		return;
	}
	if (rc == ANNOUNCE_BAD) {
		set_bad(g, why);
		return;
	}
	/* data/mtrace withdrawn or absent: a legacy buffer, or nothing */
	refs = guest_xs_get(ctx, 0, domid, MPROF_XS_REFS, &rlen);
	if (refs) {
		if (g->kind == GUEST_RING) {
			drain_final(g);
			detach(g, "withdrawn");
		}
		if (g->kind != GUEST_LEGACY || !legacy_same(g, refs, rlen)) {
			if (g->kind == GUEST_LEGACY)
				detach(g, "reannounced");
			attach_legacy(g, refs, rlen);
		}
		free(refs);
		return;
	}
	/* nothing announced any more: withdrawn, or is the domain going away? */
	if (!domain_running(ctx, domid, &crashed)) {
		guest_death(g, crashed ? "crashed" : "destroyed");
		return;
	}
	if (g->kind == GUEST_RING)
		drain_final(g);
	if (g->kind != GUEST_NEW)
		guest_log(
		    ctx, domid, LOG_LVL_INFO, "domain %" PRIu32 " (%s): withdrawn", domid, g->name);
	detach(g, "withdrawn");
	state_domain_detached(g->sd, "withdrawn", false);
	guest_free(g);
}

/* ---- the entry points main.c uses ---- */

static const struct discover_ops discover_ops = {
	.refresh = guest_refresh,
	.death = guest_death,
};

struct guests_ctx *guests_init(struct event_base *base, struct xenif *x,
    const struct mtraced_config *cfg, struct stream *stream, char *err, size_t errlen)
{
	struct guests_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx || !(ctx->deliver = deliver_new(stream)) || guest_log_init(ctx) < 0) {
		snprintf(err, errlen, "out of memory");
		if (ctx)
			guests_fini(ctx);
		return NULL;
	}
	ctx->base = base;
	ctx->x = x;
	ctx->cfg = cfg;
	if (x->ops->xs_get_domid(x, &ctx->self_domid) < 0)
		ctx->self_domid = 0;
	guest_time_init(ctx);
	if (drain_init(ctx, err, errlen) < 0 ||
	    discover_init(ctx, &discover_ops, err, errlen) < 0) {
		guests_fini(ctx);
		return NULL;
	}
	return ctx;
}

void guests_scan(struct guests_ctx *ctx)
{
	discover_scan_all(ctx, true);
}

void guests_reconfigure(struct guests_ctx *ctx, const struct mtraced_config *cfg)
{
	ctx->cfg = cfg;
	drain_reconfigure(ctx);
	legacy_reconfigure(ctx);
}

static void final_each(struct guest *g, void *arg)
{
	(void)arg;
	final_drain(g);
}

void guests_drain_all(struct guests_ctx *ctx)
{
	guest_foreach(ctx, final_each, NULL);
}

void guests_fini(struct guests_ctx *ctx)
{
	struct guest *g;

	if (!ctx)
		return;
	discover_fini(ctx);
	while ((g = guest_last(ctx)) != NULL) {
		if (g->kind == GUEST_RING)
			unmap_rings(g);
		else if (g->kind == GUEST_LEGACY)
			legacy_detach(g);
		guest_unadmit(g);
		g->kind = GUEST_NEW;
		guest_free(g);
	}
	guest_table_free(ctx);
	drain_fini(ctx);
	guest_log_free(ctx);
	deliver_free(ctx->deliver);
	free(ctx);
}

const char *guests_host_lost(const struct guests_ctx *ctx)
{
	return guest_host_lost_reason(ctx);
}
