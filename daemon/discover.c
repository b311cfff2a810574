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

static const struct guests_ctx *ctx;
static const struct discover_ops *ops;
static struct event *xs_ev, *work_ev, *rescan_ev;
static bool full_scan, deep_scan;
static uint8_t dirty[MAX_DOMID / 8];
static bool any_dirty;

static void schedule(void)
{
	static const struct timeval now = { 0, 0 };

	if (!evtimer_pending(work_ev, NULL))
		evtimer_add(work_ev, &now);
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
	struct xenif_xs_watch_event ev;

	(void)fd;
	(void)what;
	(void)arg;
	for (int k = 0; k < WATCH_MAX; k++) {
		long id;

		if (ctx->x->ops->xs_read_watch(ctx->x, &ev) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			if (errno == ENAMETOOLONG || errno == EPROTO) {
				/* an oversized or mangled event: we cannot tell what changed */
				full_scan = true;
				deep_scan = true;
				schedule();
				continue;
			}
			guest_host_lost(ctx->base, "xenstore connection", errno);
			return;
		}
		if (!strcmp(ev.token, TOK_INTRO) || !strcmp(ev.token, TOK_RELEASE)) {
			full_scan = true;
		} else if (!strcmp(ev.token, TOK_DOM)) {
			id = dom_of_path(ev.path);
			if (id < 0)
				continue;
			dirty[id / 8] |= (uint8_t)(1u << (id % 8));
			any_dirty = true;
		} else {
			continue;
		}
		schedule();
	}
}

static void mark_seen(struct guest *g, void *arg)
{
	(void)arg;
	g->seen = false;
}

static void bury_unseen(struct guest *g, void *arg)
{
	(void)arg;
	if (!g->seen)
		ops->death(g, "destroyed");
}

/* The domains of the last scan, running ones only: for state_mark_gone. */
static uint8_t running_map[MAX_DOMID / 8];
static uint8_t crashed_map[MAX_DOMID / 8];

static bool in_map(const uint8_t *m, uint32_t domid)
{
	return domid < MAX_DOMID && (m[domid / 8] & (1u << (domid % 8)));
}

static bool still_running(uint32_t domid, bool *crashed, void *arg)
{
	(void)arg;
	*crashed = in_map(crashed_map, domid);
	return in_map(running_map, domid);
}

void discover_scan_all(bool deep)
{
	static struct xenif_dominfo info[1024];
	uint32_t first = 0;
	int n, total = 0;

	memset(running_map, 0, sizeof(running_map));
	memset(crashed_map, 0, sizeof(crashed_map));
	full_scan = false;
	deep_scan = false;
	guest_foreach(mark_seen, NULL);
	do {
		n = ctx->x->ops->ctrl_domain_list(
		    ctx->x, first, info, sizeof(info) / sizeof(info[0]));
		if (n < 0) {
			log_err("domain list: %s", strerror(errno));
			return; /* without the list no death can be confirmed */
		}
		for (int i = 0; i < n; i++) {
			struct xenif_dominfo *d = &info[i];
			struct guest *g = guest_find(d->domid);

			if (d->domid >= MAX_DOMID)
				continue;
			if (d->crashed)
				crashed_map[d->domid / 8] |= (uint8_t)(1u << (d->domid % 8));
			else if (!d->dying && !d->shutdown)
				running_map[d->domid / 8] |= (uint8_t)(1u << (d->domid % 8));
			if (d->dying || d->shutdown) {
				if (g)
					ops->death(g, d->crashed ? "crashed" : "destroyed");
				continue;
			}
			/* known guests announce changes through the /local/domain watch; a deep
			 * scan re-reads them anyway, in case a watch event was lost */
			if (!g || deep)
				ops->refresh(d->domid);
			g = guest_find(d->domid);
			if (g)
				g->seen = true;
		}
		total += n;
		if (n > 0)
			first = info[n - 1].domid + 1;
	} while (n == (int)(sizeof(info) / sizeof(info[0])));
	/* known guests missing from the list are gone, and so are withdrawn ones */
	guest_foreach(bury_unseen, NULL);
	state_mark_gone(still_running, NULL);
	log_debug("scanned %d domains", total);
}

static void work_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (full_scan) {
		bool deep = deep_scan;
		discover_scan_all(deep);
		if (deep) {
			memset(dirty, 0, sizeof(dirty));
			any_dirty = false;
			return;
		}
	}
	if (!any_dirty)
		return;
	any_dirty = false;
	for (uint32_t i = 0; i < MAX_DOMID / 8; i++) {
		if (!dirty[i])
			continue;
		for (uint32_t b = 0; b < 8; b++)
			if (dirty[i] & (1u << b))
				ops->refresh(i * 8 + b);
		dirty[i] = 0;
	}
}

static void rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	full_scan = true;
	deep_scan = true;
	schedule();
}

int discover_init(
    const struct guests_ctx *c, const struct discover_ops *o, char *err, size_t errlen)
{
	struct timeval slow = { RESCAN_S, 0 };
	struct event_base *base = c->base;
	int fd;

	ctx = c;
	ops = o;
	fd = ctx->x->ops->xs_fileno(ctx->x);

	if (fd < 0) {
		snprintf(err, errlen, "xenstore fd: %s", strerror(errno));
		return -1;
	}
	xs_ev = event_new(base, fd, EV_READ | EV_PERSIST, xs_cb, NULL);
	work_ev = evtimer_new(base, work_cb, NULL);
	rescan_ev = event_new(base, -1, EV_PERSIST, rescan_cb, NULL);
	if (!xs_ev || !work_ev || !rescan_ev || event_add(xs_ev, NULL) < 0 ||
	    event_add(rescan_ev, &slow) < 0) {
		snprintf(err, errlen, "cannot set up the xenstore events");
		return -1;
	}
	if (ctx->x->ops->xs_watch(ctx->x, "@introduceDomain", TOK_INTRO) < 0 ||
	    ctx->x->ops->xs_watch(ctx->x, "@releaseDomain", TOK_RELEASE) < 0 ||
	    ctx->x->ops->xs_watch(ctx->x, "/local/domain", TOK_DOM) < 0) {
		snprintf(err, errlen, "xenstore watch: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void discover_fini(void)
{
	if (ctx) {
		ctx->x->ops->xs_unwatch(ctx->x, "@introduceDomain", TOK_INTRO);
		ctx->x->ops->xs_unwatch(ctx->x, "@releaseDomain", TOK_RELEASE);
		ctx->x->ops->xs_unwatch(ctx->x, "/local/domain", TOK_DOM);
	}
	if (xs_ev)
		event_free(xs_ev);
	if (work_ev)
		event_free(work_ev);
	if (rescan_ev)
		event_free(rescan_ev);
	xs_ev = work_ev = rescan_ev = NULL;
	ctx = NULL;
}
