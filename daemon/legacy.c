/*
 * legacy.c - guests that only have mirage-profile's trace buffer (data/mprof/ring-ref):
 * read-only pages, no index, no event channel.  Every mprof_poll_ms the whole buffer
 * is copied once into a private buffer and the copy handed to the mprof parser, whose
 * events go through the same state/stream path as ring events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "deliver.h"
#include "guest.h"
#include "legacy.h"
#include "log.h"
#include "mprof.h"
#include "xenif.h"
#include "xalloc.h"

struct legacy {
	uint32_t refs[MPROF_MAX_PAGES];
	unsigned npages;
	void *map;
	uint8_t *copy;
	size_t len;
	struct mprof_reader *mr;
	struct mprof_stats seen;
	struct event *poll_ev;
	struct guest *g;
};

bool legacy_same(const struct guest *g, const char *refs, size_t len)
{
	uint32_t r[MPROF_MAX_PAGES];
	char err[128];
	int n;

	if (!g->lg)
		return false;
	n = mprof_parse_refs(refs, len, r, MPROF_MAX_PAGES, err, sizeof(err));
	return n == (int)g->lg->npages && !memcmp(r, g->lg->refs, (size_t)n * sizeof(r[0]));
}

void legacy_poll(struct guest *g)
{
	struct legacy *lg = g->lg;
	const struct mprof_stats *st;
	uint64_t lost, bad;

	if (!lg)
		return;
	/* one copy per poll; the parser only ever sees the private copy */
	memcpy(lg->copy, lg->map, lg->len);
	deliver_begin(g->ctx->deliver, g->sd, g->domid, 0, MTRACE_CLOCK_XEN, g);
	mprof_reader_poll(lg->mr, lg->copy, lg->len, deliver_event, g->ctx->deliver);
	deliver_end(g->ctx->deliver);
	st = mprof_reader_stats(lg->mr);
	/* snapshot semantics: events overwritten between polls and events caught half
	 * written (torn, dropped) are both events the guest wrote that we could not
	 * deliver, i.e. lost; corrupt is kept for what no writer could have produced */
	lost = (st->lost + st->torn) - (lg->seen.lost + lg->seen.torn);
	bad = st->corrupt - lg->seen.corrupt;
	deliver_counts(
	    g->ctx->deliver, g->sd, g->domid, 0, lost, bad, st->unknown - lg->seen.unknown);
	if (bad)
		log_debug(
		    "domain %" PRIu32 ": legacy buffer: %s", g->domid, mprof_reader_error(lg->mr));
	lg->seen = *st;
}

static void poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct legacy *lg = arg;

	(void)fd;
	(void)what;
	legacy_poll(lg->g);
}

static void poll_arm(struct legacy *lg)
{
	struct timeval tv = tv_from_ms(lg->g->ctx->cfg->mprof_poll_ms);

	evtimer_del(lg->poll_ev);
	event_add(lg->poll_ev, &tv);
}

void legacy_detach(struct guest *g)
{
	struct guests_ctx *ctx = g->ctx;
	struct legacy *lg = g->lg;

	if (!lg)
		return;
	if (lg->poll_ev)
		event_free(lg->poll_ev);
	if (lg->mr)
		mprof_reader_free(lg->mr);
	if (lg->map)
		ctx->x->ops->gnttab_unmap(ctx->x, lg->map, lg->npages);
	free(lg->copy);
	free(lg);
	g->lg = NULL;
}

int legacy_parse_refs(
    const char *refs, size_t len, uint32_t r[MPROF_MAX_PAGES], char *why, size_t wl)
{
	char err[160];
	int n = mprof_parse_refs(refs, len, r, MPROF_MAX_PAGES, err, sizeof(err));

	if (n <= 0) {
		snprintf(why, wl, "%s: %s", MPROF_XS_REFS, n < 0 ? err : "no refs");
		return -1;
	}
	return n;
}

int legacy_attach(struct guest *g, const uint32_t *r, unsigned n, char *why, size_t wl)
{
	struct guests_ctx *ctx = g->ctx;
	struct legacy *lg = xcalloc(1, sizeof(*lg));

	memcpy(lg->refs, r, n * sizeof(r[0]));
	lg->npages = n;
	lg->len = (size_t)n * MPROF_PAGE_SIZE;
	lg->g = g;
	g->lg = lg;
	lg->map = ctx->x->ops->gnttab_map(ctx->x, g->domid, lg->npages, lg->refs, PROT_READ);
	if (!lg->map) {
		snprintf(
		    why, wl, "legacy buffer: cannot map %u pages: %s", lg->npages, strerror(errno));
		goto fail;
	}
	lg->copy = malloc(lg->len);
	lg->mr = mprof_reader_new(lg->len);
	if (!lg->copy || !lg->mr) {
		snprintf(why, wl, "legacy buffer of %zu bytes refused: %s", lg->len,
		    strerror(errno ? errno : EINVAL));
		goto fail;
	}
	lg->poll_ev = event_new(ctx->base, -1, EV_PERSIST, poll_cb, lg);
	if (!lg->poll_ev) {
		snprintf(why, wl, "cannot create the poll timer");
		goto fail;
	}
	poll_arm(lg);
	log_info("domain %" PRIu32 " (%s): traced (legacy mirage-profile buffer, %u pages)",
	    g->domid, g->name, lg->npages);
	return 0;
fail:
	legacy_detach(g);
	return -1;
}

static void rearm_each(struct guest *g, void *arg)
{
	(void)arg;
	if (g->kind == GUEST_LEGACY && g->lg && g->lg->poll_ev)
		poll_arm(g->lg);
}

void legacy_reconfigure(struct guests_ctx *ctx)
{
	guest_foreach(ctx, rearm_each, NULL);
}
