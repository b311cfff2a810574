/*
 * discover.c - noticing guests come, change and go.
 *
 * xenstore watches: @introduceDomain and @releaseDomain (re-enumerate the domains and
 * confirm deaths with the domain list, as xenconsoled does) and /local/domain (a guest
 * wrote under its data/mtrace or data/mprof: re-read that one domain).  Watches may
 * fire spuriously or not at all for a path (xenstore.txt), so events only mark work;
 * the work is done from a zero-delay timer that coalesces bursts, and a slow timer
 * re-enumerates anyway.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "discover.h"
#include "guest.h"
#include "log.h"
#include "mprof.h"
#include "mtrace-ring.h"
#include "state.h"
#include "xenif.h"

#define MAX_DOMID 32768u /* DOMID_FIRST_RESERVED: ids above are not guests */
#define WATCH_MAX 1024   /* watch events per fd wake-up before yielding */
#define RESCAN_S  5      /* safety net for lost watch events */

static const char TOK_INTRO[] = "mtraced-intro";
static const char TOK_RELEASE[] = "mtraced-release";
static const char TOK_DOM[] = "mtraced-dom";

/* The discovery of one guests context (ctx->discover). */
struct discover {
	struct guests_ctx *ctx;
	const struct discover_ops *ops;
	struct event *xs_ev, *work_ev, *rescan_ev;
	bool full_scan, deep_scan;
	uint8_t dirty[MAX_DOMID / 8];
	bool any_dirty;
	/* the domains of the last scan, running ones only: for state_mark_gone */
	uint8_t running_map[MAX_DOMID / 8];
	uint8_t crashed_map[MAX_DOMID / 8];
	struct xenif_dominfo info[1024]; /* a scan's page of the domain list */
};

static void schedule(struct discover *dc)
{
	static const struct timeval now = { 0, 0 };

	if (!evtimer_pending(dc->work_ev, NULL))
		evtimer_add(dc->work_ev, &now);
}

/* path is dir or below it ("data/mtrace-test/..." is not under "data/mtrace": a guest's
 * other keys must not cost a re-read of its announcement each) */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

/* "/local/domain/<id>/<rest>": the id if <rest> concerns us, else -1. */
static long dom_of_path(const char *path)
{
	static const char pre[] = "/local/domain/";
	const char *p = path + sizeof(pre) - 1, *rest;
	char *end;
	unsigned long id;

	if (strncmp(path, pre, sizeof(pre) - 1) || *p < '0' || *p > '9')
		return -1;
	id = strtoul(p, &end, 10);
	if (id >= MAX_DOMID || (*end && *end != '/'))
		return -1;
	if (!*end)
		return (long)id; /* the domain's directory itself (removal) */
	rest = end + 1;
	if (under(rest, MTRACE_XS_DIR) || under(rest, "data/mprof") || !strcmp(rest, "name"))
		return (long)id;
	return -1;
}

static void xs_cb(evutil_socket_t fd, short what, void *arg)
{
	struct discover *dc = arg;
	struct xenif_xs_watch_event ev;

	(void)fd;
	(void)what;
	for (int k = 0; k < WATCH_MAX; k++) {
		long id;

		if (dc->ctx->x->ops->xs_read_watch(dc->ctx->x, &ev) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			if (errno == ENAMETOOLONG || errno == EPROTO) {
				/* an oversized or mangled event: we cannot tell what changed */
				dc->full_scan = true;
				dc->deep_scan = true;
				schedule(dc);
				continue;
			}
			guest_host_lost(dc->ctx, "xenstore connection", errno);
			return;
		}
		if (!strcmp(ev.token, TOK_INTRO) || !strcmp(ev.token, TOK_RELEASE)) {
			dc->full_scan = true;
		} else if (!strcmp(ev.token, TOK_DOM)) {
			id = dom_of_path(ev.path);
			if (id < 0)
				continue;
			dc->dirty[id / 8] |= (uint8_t)(1u << (id % 8));
			dc->any_dirty = true;
		} else {
			continue;
		}
		schedule(dc);
	}
}

static void mark_seen(struct guest *g, void *arg)
{
	(void)arg;
	g->seen = false;
}

static void bury_unseen(struct guest *g, void *arg)
{
	struct discover *dc = arg;

	if (!g->seen)
		dc->ops->death(g, "destroyed");
}

static bool in_map(const uint8_t *m, uint32_t domid)
{
	return domid < MAX_DOMID && (m[domid / 8] & (1u << (domid % 8)));
}

static bool still_running(uint32_t domid, bool *crashed, void *arg)
{
	struct discover *dc = arg;

	*crashed = in_map(dc->crashed_map, domid);
	return in_map(dc->running_map, domid);
}

void discover_scan_all(struct guests_ctx *ctx, bool deep)
{
	struct discover *dc = ctx->discover;
	struct xenif_dominfo *info = dc->info;
	const int max = (int)(sizeof(dc->info) / sizeof(dc->info[0]));
	uint32_t first = 0;
	int n, total = 0;

	memset(dc->running_map, 0, sizeof(dc->running_map));
	memset(dc->crashed_map, 0, sizeof(dc->crashed_map));
	dc->full_scan = false;
	dc->deep_scan = false;
	guest_foreach(ctx, mark_seen, NULL);
	do {
		n = ctx->x->ops->ctrl_domain_list(ctx->x, first, info, (unsigned)max);
		if (n < 0) {
			log_err("domain list: %s", strerror(errno));
			return; /* without the list no death can be confirmed */
		}
		for (int i = 0; i < n; i++) {
			struct xenif_dominfo *d = &info[i];
			struct guest *g = guest_find(ctx, d->domid);

			if (d->domid >= MAX_DOMID)
				continue;
			if (d->crashed)
				dc->crashed_map[d->domid / 8] |= (uint8_t)(1u << (d->domid % 8));
			else if (!d->dying && !d->shutdown)
				dc->running_map[d->domid / 8] |= (uint8_t)(1u << (d->domid % 8));
			if (d->dying || d->shutdown) {
				if (g)
					dc->ops->death(g, d->crashed ? "crashed" : "destroyed");
				continue;
			}
			/* known guests announce changes through the /local/domain watch; a deep
			 * scan re-reads them anyway, in case a watch event was lost */
			if (!g || deep)
				dc->ops->refresh(ctx, d->domid);
			g = guest_find(ctx, d->domid);
			if (g)
				g->seen = true;
		}
		total += n;
		if (n > 0)
			first = info[n - 1].domid + 1;
	} while (n == max);
	/* known guests missing from the list are gone, and so are withdrawn ones */
	guest_foreach(ctx, bury_unseen, dc);
	state_mark_gone(still_running, dc);
	log_debug("scanned %d domains", total);
}

static void work_cb(evutil_socket_t fd, short what, void *arg)
{
	struct discover *dc = arg;

	(void)fd;
	(void)what;
	if (dc->full_scan) {
		bool deep = dc->deep_scan;
		discover_scan_all(dc->ctx, deep);
		if (deep) {
			memset(dc->dirty, 0, sizeof(dc->dirty));
			dc->any_dirty = false;
			return;
		}
	}
	if (!dc->any_dirty)
		return;
	dc->any_dirty = false;
	for (uint32_t i = 0; i < MAX_DOMID / 8; i++) {
		if (!dc->dirty[i])
			continue;
		for (uint32_t b = 0; b < 8; b++)
			if (dc->dirty[i] & (1u << b))
				dc->ops->refresh(dc->ctx, i * 8 + b);
		dc->dirty[i] = 0;
	}
}

static void rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct discover *dc = arg;

	(void)fd;
	(void)what;
	dc->full_scan = true;
	dc->deep_scan = true;
	schedule(dc);
}

int discover_init(struct guests_ctx *c, const struct discover_ops *o, char *err, size_t errlen)
{
	struct timeval slow = { RESCAN_S, 0 };
	struct event_base *base = c->base;
	struct discover *dc = calloc(1, sizeof(*dc));
	int fd;

	if (!dc) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->discover = dc;
	dc->ctx = c;
	dc->ops = o;
	fd = c->x->ops->xs_fileno(c->x);

	if (fd < 0) {
		snprintf(err, errlen, "xenstore fd: %s", strerror(errno));
		return -1;
	}
	dc->xs_ev = event_new(base, fd, EV_READ | EV_PERSIST, xs_cb, dc);
	dc->work_ev = evtimer_new(base, work_cb, dc);
	dc->rescan_ev = event_new(base, -1, EV_PERSIST, rescan_cb, dc);
	if (!dc->xs_ev || !dc->work_ev || !dc->rescan_ev || event_add(dc->xs_ev, NULL) < 0 ||
	    event_add(dc->rescan_ev, &slow) < 0) {
		snprintf(err, errlen, "cannot set up the xenstore events");
		return -1;
	}
	if (c->x->ops->xs_watch(c->x, "@introduceDomain", TOK_INTRO) < 0 ||
	    c->x->ops->xs_watch(c->x, "@releaseDomain", TOK_RELEASE) < 0 ||
	    c->x->ops->xs_watch(c->x, "/local/domain", TOK_DOM) < 0) {
		snprintf(err, errlen, "xenstore watch: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void discover_fini(struct guests_ctx *ctx)
{
	struct discover *dc = ctx->discover;

	if (!dc)
		return;
	ctx->x->ops->xs_unwatch(ctx->x, "@introduceDomain", TOK_INTRO);
	ctx->x->ops->xs_unwatch(ctx->x, "@releaseDomain", TOK_RELEASE);
	ctx->x->ops->xs_unwatch(ctx->x, "/local/domain", TOK_DOM);
	if (dc->xs_ev)
		event_free(dc->xs_ev);
	if (dc->work_ev)
		event_free(dc->work_ev);
	if (dc->rescan_ev)
		event_free(dc->rescan_ev);
	free(dc);
	ctx->discover = NULL;
}
