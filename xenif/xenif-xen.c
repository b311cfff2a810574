/*
 * xenif-xen.c - the real backend of the Xen seam: a thin pass-through to
 * libxengnttab (gnttab + gntshr), libxenevtchn, libxenstore and libxenctrl.
 *
 * Only the parts a process asks for are opened: a domU has no privcmd, so
 * opening libxenctrl there would fail the whole open for nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xenif-xen-clock.h"
#include "xenif-xen-int.h"
#include "xenif.h"

static void *xen_gnttab_map(
    struct xenif *x, xenif_domid_t domid, uint32_t count, const xenif_gref_t *refs, int prot)
{
	NEED(P(x)->gt, NULL);
	if (count == 0) {
		errno = EINVAL;
		return NULL;
	}
	/* the library takes a non-const array but does not write it */
	return xengnttab_map_domain_grant_refs(P(x)->gt, count, domid, (uint32_t *)refs, prot);
}

static int xen_gnttab_unmap(struct xenif *x, void *addr, uint32_t count)
{
	NEED(P(x)->gt, -1);
	return xengnttab_unmap(P(x)->gt, addr, count) ? -1 : 0;
}

static void *xen_gntshr_share(
    struct xenif *x, xenif_domid_t domid, uint32_t count, xenif_gref_t *refs, bool writable)
{
	NEED(P(x)->gs, NULL);
	if (count == 0 || count > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	/* gntalloc hands out zeroed pages (__GFP_ZERO), as the seam promises */
	return xengntshr_share_pages(P(x)->gs, domid, (int)count, refs, writable ? 1 : 0);
}

static int xen_gntshr_unshare(struct xenif *x, void *addr, uint32_t count)
{
	NEED(P(x)->gs, -1);
	return xengntshr_unshare(P(x)->gs, addr, count) ? -1 : 0;
}

static int xen_evtchn_fd(struct xenif *x)
{
	NEED(P(x)->eh, -1);
	return xenevtchn_fd(P(x)->eh);
}

static int xen_evtchn_bind_unbound(struct xenif *x, xenif_domid_t remote)
{
	NEED(P(x)->eh, -1);
	xenevtchn_port_or_error_t p = xenevtchn_bind_unbound_port(P(x)->eh, remote);
	return p < 0 ? -1 : (int)p;
}

static int xen_evtchn_bind_interdomain(struct xenif *x, xenif_domid_t remote, xenif_port_t rport)
{
	NEED(P(x)->eh, -1);
	xenevtchn_port_or_error_t p = xenevtchn_bind_interdomain(P(x)->eh, remote, rport);
	return p < 0 ? -1 : (int)p;
}

static int xen_evtchn_notify(struct xenif *x, xenif_port_t port)
{
	NEED(P(x)->eh, -1);
	return xenevtchn_notify(P(x)->eh, port) ? -1 : 0;
}

static int xen_evtchn_pending(struct xenif *x)
{
	NEED(P(x)->eh, -1);
	/* the fd is non-blocking (set at open), so this is read() -> EAGAIN when idle */
	xenevtchn_port_or_error_t p = xenevtchn_pending(P(x)->eh);
	return p < 0 ? -1 : (int)p;
}

static int xen_evtchn_unmask(struct xenif *x, xenif_port_t port)
{
	NEED(P(x)->eh, -1);
	return xenevtchn_unmask(P(x)->eh, port) ? -1 : 0;
}

static int xen_evtchn_unbind(struct xenif *x, xenif_port_t port)
{
	NEED(P(x)->eh, -1);
	return xenevtchn_unbind(P(x)->eh, port) ? -1 : 0;
}

static char *xen_xs_read(struct xenif *x, uint32_t tx, const char *path, size_t *len)
{
	NEED(P(x)->xs, NULL);
	unsigned int l = 0;
	char *v = xs_read(P(x)->xs, tx, path, &l);
	if (v && len)
		*len = l;
	return v;
}

static int xen_xs_write(struct xenif *x, uint32_t tx, const char *path, const void *val, size_t len)
{
	NEED(P(x)->xs, -1);
	if (len > UINT32_MAX) {
		errno = E2BIG;
		return -1;
	}
	return xs_write(P(x)->xs, tx, path, val, (unsigned int)len) ? 0 : -1;
}

static int xen_xs_rm(struct xenif *x, uint32_t tx, const char *path)
{
	NEED(P(x)->xs, -1);
	return xs_rm(P(x)->xs, tx, path) ? 0 : -1;
}

static char **xen_xs_directory(struct xenif *x, uint32_t tx, const char *path, unsigned *num)
{
	NEED(P(x)->xs, NULL);
	unsigned int n = 0;
	char **d = xs_directory(P(x)->xs, tx, path, &n);
	if (num)
		*num = d ? n : 0;
	return d;
}

static uint32_t xen_xs_transaction_start(struct xenif *x)
{
	NEED(P(x)->xs, 0);
	return xs_transaction_start(P(x)->xs); /* XBT_NULL (0) on error */
}

static int xen_xs_transaction_end(struct xenif *x, uint32_t tx, bool abort)
{
	NEED(P(x)->xs, -1);
	/* false with errno EAGAIN means the transaction conflicted: the caller retries */
	return xs_transaction_end(P(x)->xs, tx, abort) ? 0 : -1;
}

static int xen_xs_watch(struct xenif *x, const char *path, const char *token)
{
	NEED(P(x)->xs, -1);
	return xs_watch(P(x)->xs, path, token) ? 0 : -1;
}

static int xen_xs_unwatch(struct xenif *x, const char *path, const char *token)
{
	NEED(P(x)->xs, -1);
	return xs_unwatch(P(x)->xs, path, token) ? 0 : -1;
}

static int xen_xs_fileno(struct xenif *x)
{
	NEED(P(x)->xs, -1);
	return xs_fileno(P(x)->xs);
}

static int xen_xs_read_watch(struct xenif *x, struct xenif_xs_watch_event *ev)
{
	NEED(P(x)->xs, -1);
	/* xs_check_watch never blocks; xs_read_watch would wait for the next event */
	char **w = xs_check_watch(P(x)->xs);
	if (!w)
		return -1; /* errno EAGAIN: nothing queued */
	int rc = 0;
	if (strlen(w[XS_WATCH_PATH]) >= sizeof ev->path ||
	    strlen(w[XS_WATCH_TOKEN]) >= sizeof ev->token) {
		/* too long for the event: never truncate silently into a wrong path */
		errno = ENAMETOOLONG;
		rc = -1;
	} else {
		strcpy(ev->path, w[XS_WATCH_PATH]);
		strcpy(ev->token, w[XS_WATCH_TOKEN]);
	}
	free(w);
	return rc;
}

static struct xenif_xs_perm *xen_xs_get_perms(
    struct xenif *x, uint32_t tx, const char *path, unsigned *num)
{
	NEED(P(x)->xs, NULL);
	unsigned int n = 0;
	struct xs_permissions *p = xs_get_permissions(P(x)->xs, tx, path, &n);
	if (!p)
		return NULL;
	struct xenif_xs_perm *out = calloc(n ? n : 1, sizeof(*out));
	if (out) {
		for (unsigned i = 0; i < n; i++) {
			out[i].domid = p[i].id;
			out[i].perms = ((p[i].perms & XS_PERM_READ) ? XENIF_XS_PERM_READ : 0) |
			    ((p[i].perms & XS_PERM_WRITE) ? XENIF_XS_PERM_WRITE : 0);
		}
		*num = n;
	}
	free(p);
	return out;
}

static int xen_xs_get_domid(struct xenif *x, xenif_domid_t *domid)
{
	NEED(P(x)->xs, -1);
	/* a relative path resolves to /local/domain/<own domid>/ */
	unsigned int len = 0;
	char *v = xs_read(P(x)->xs, XBT_NULL, "domid", &len);
	if (!v)
		return -1;
	char *end;
	errno = 0;
	unsigned long d = strtoul(v, &end, 10);
	int bad = errno || end == v || *end || d >= 0x7ff0; /* DOMID_FIRST_RESERVED */
	free(v);
	if (bad) {
		errno = EPROTO;
		return -1;
	}
	*domid = (xenif_domid_t)d;
	return 0;
}

static int xen_ctrl_domain_list(
    struct xenif *x, xenif_domid_t first, struct xenif_dominfo *info, unsigned max)
{
	NEED(P(x)->xc, -1);
	if (max == 0)
		return 0;
	if (max > 1024)
		max = 1024;
	xc_domaininfo_t *di = calloc(max, sizeof *di);
	if (!di)
		return -1;
	int n = xc_domain_getinfolist(P(x)->xc, first, max, di);
	for (int i = 0; i < n; i++) {
		uint32_t f = di[i].flags;
		unsigned reason = (f >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
		info[i].domid = di[i].domain;
		info[i].dying = f & XEN_DOMINF_dying;
		info[i].shutdown = f & XEN_DOMINF_shutdown;
		info[i].crashed = (f & XEN_DOMINF_shutdown) && reason == SHUTDOWN_crash;
	}
	int saved = errno;
	free(di);
	errno = saved;
	return n < 0 ? -1 : n;
}

/* Xen system time against CLOCK_REALTIME: xenif-xen-clock.c's pair. */
static int xen_clock_sample(struct xenif *x, struct xenif_clock_sample *s)
{
	struct xenif_clock_pair p;

	NEED(P(x)->clock, -1);
	if (xenif_xen_clock_pair(P(x)->clock, CLOCK_REALTIME, &p) < 0)
		return -1;
	s->xen_ns = p.xen_ns;
	s->realtime_ns = p.clk_ns;
	s->width_ns = p.width_ns;
	return 0;
}

static int xen_clock_pair(struct xenif *x, clockid_t clk, struct xenif_clock_pair *p)
{
	NEED(P(x)->clock, -1);
	return xenif_xen_clock_pair(P(x)->clock, clk, p);
}

static int xen_evtchn_status(
    struct xenif *x, xenif_domid_t domid, xenif_port_t port, struct xenif_evtchn_status *st)
{
	xc_evtchn_status_t es = { .dom = (domid_t)domid, .port = port };

	NEED(P(x)->xc, -1);
	if (xc_evtchn_status(P(x)->xc, &es) < 0)
		return -1;
	st->interdomain = es.status == EVTCHNSTAT_interdomain;
	st->remote_domid = st->interdomain ? es.u.interdomain.dom : 0;
	st->remote_port = st->interdomain ? es.u.interdomain.port : 0;
	return 0;
}

static void xen_close(struct xenif *x)
{
	struct xen_priv *p = P(x);
	xenif_xen_clock_close(p->clock);
	xenif_xen_tbuf_close(x);
	if (p->fm)
		xenforeignmemory_close(p->fm);
	if (p->xc)
		xc_interface_close(p->xc);
	if (p->xs)
		xs_close(p->xs);
	if (p->eh)
		xenevtchn_close(p->eh);
	if (p->gs)
		xengntshr_close(p->gs);
	if (p->gt)
		xengnttab_close(p->gt);
	free(p);
}

static const struct xenif_ops xen_ops = {
	.name = "xen",
	.gnttab_map = xen_gnttab_map,
	.gnttab_unmap = xen_gnttab_unmap,
	.gntshr_share = xen_gntshr_share,
	.gntshr_unshare = xen_gntshr_unshare,
	.evtchn_fd = xen_evtchn_fd,
	.evtchn_bind_unbound = xen_evtchn_bind_unbound,
	.evtchn_bind_interdomain = xen_evtchn_bind_interdomain,
	.evtchn_notify = xen_evtchn_notify,
	.evtchn_pending = xen_evtchn_pending,
	.evtchn_unmask = xen_evtchn_unmask,
	.evtchn_unbind = xen_evtchn_unbind,
	.xs_read = xen_xs_read,
	.xs_write = xen_xs_write,
	.xs_rm = xen_xs_rm,
	.xs_directory = xen_xs_directory,
	.xs_transaction_start = xen_xs_transaction_start,
	.xs_transaction_end = xen_xs_transaction_end,
	.xs_watch = xen_xs_watch,
	.xs_unwatch = xen_xs_unwatch,
	.xs_fileno = xen_xs_fileno,
	.xs_read_watch = xen_xs_read_watch,
	.xs_get_domid = xen_xs_get_domid,
	.xs_get_perms = xen_xs_get_perms,
	.ctrl_domain_list = xen_ctrl_domain_list,
	.clock_sample = xen_clock_sample,
	.clock_pair = xen_clock_pair,
	.evtchn_status = xen_evtchn_status,
	.tbuf_open = xenif_xen_tbuf_open,
	.tbuf_read = xenif_xen_tbuf_read,
	.tbuf_close = xenif_xen_tbuf_close,
	.sched_sample = xenif_xen_sched_sample,
	.close = xen_close,
};

static struct xenif *fail(struct xen_priv *p, const char *what, char *err, size_t errlen)
{
	int e = errno ? errno : ENODEV;
	if (err && errlen)
		snprintf(err, errlen, "xen: %s: %s", what, strerror(e));
	xen_close(&p->x);
	errno = e;
	return NULL;
}

struct xenif *xenif_xen_open(unsigned parts, char *err, size_t errlen)
{
	struct xen_priv *p = calloc(1, sizeof *p);
	if (!p) {
		if (err && errlen)
			snprintf(err, errlen, "xen: out of memory");
		return NULL;
	}
	p->x.ops = &xen_ops;
	p->x.priv = p;
	errno = 0;
	if ((parts & XENIF_GNTTAB) && !(p->gt = xengnttab_open(NULL, 0)))
		return fail(p, "xengnttab_open (/dev/xen/gntdev)", err, errlen);
	if ((parts & XENIF_GNTSHR) && !(p->gs = xengntshr_open(NULL, 0)))
		return fail(p, "xengntshr_open (/dev/xen/gntalloc)", err, errlen);
	if (parts & XENIF_EVTCHN) {
		if (!(p->eh = xenevtchn_open(NULL, 0)))
			return fail(p, "xenevtchn_open (/dev/xen/evtchn)", err, errlen);
		/* callers poll the fd and drain with pending() until EAGAIN */
		int fd = xenevtchn_fd(p->eh);
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
			return fail(p, "evtchn fd O_NONBLOCK", err, errlen);
	}
	if ((parts & XENIF_XS) && !(p->xs = xs_open(0)))
		return fail(p, "xs_open (xenstored socket or /dev/xen/xenbus)", err, errlen);
	if ((parts & (XENIF_CTRL | XENIF_TBUF)) && !(p->xc = xc_interface_open(NULL, NULL, 0)))
		return fail(p, "xc_interface_open (/dev/xen/privcmd)", err, errlen);
	/* never fails for want of a source (clock_sample says ENOTSUP then) */
	if ((parts & XENIF_CLOCK) &&
	    !(p->clock = xenif_xen_clock_open((parts & XENIF_CLOCK_KEEP) != 0)))
		return fail(p, "out of memory", err, errlen);
	if ((parts & XENIF_TBUF) && !(p->fm = xenforeignmemory_open(NULL, 0)))
		return fail(p, "xenforeignmemory_open (/dev/xen/privcmd)", err, errlen);
	return &p->x;
}
